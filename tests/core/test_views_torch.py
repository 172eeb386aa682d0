"""Random chains of view ops and in-place ops, run on Volta and PyTorch CPU side by side.

Hypothesis draws a base shape (sizes 0 and 1 included), then a program: views of any live
tensor (slicing with steps, select, transpose, permute, unsqueeze, squeeze, view, reshape,
expand, diagonal, narrow, unfold, split/unbind pieces, detach) and in-place ops on any live
tensor (arithmetic, fill, zero, copy, clamp, setitem), with or without autograd. After every
step, both sides must agree on which step raises and every live non-empty tensor's
strides; at the end every live tensor's values and, under autograd, every gradient must
match.
"""

from functools import partial

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import volta_core as vt

torch = pytest.importorskip("torch")


def _pick(data, n: int, label: str) -> int:
    return data.draw(st.integers(0, n - 1), label=label)


def _view_op(data, shape: tuple):
    """A view op that applies to a tensor of ``shape``: (name, fn(t) for both libraries)."""
    nd = len(shape)
    choices = ["unsqueeze", "view_flat", "detach"]
    if nd:
        choices += ["slice", "select", "narrow", "split", "unfold", "reshape", "squeeze"]
    if nd >= 2:
        choices += ["transpose", "permute", "diagonal", "t"]
    if nd and 1 in shape:
        choices.append("expand")
    name = data.draw(st.sampled_from(choices), label="view")
    d = _pick(data, max(nd, 1), "dim")
    n = shape[d] if nd else 1
    if name == "slice":
        start = data.draw(st.integers(0, n), label="start")
        step = data.draw(st.integers(1, 3), label="step")
        key = (slice(None),) * d + (slice(start, None, step),)
        return name, lambda t: t[key]
    if name == "select":
        if not n:
            return "detach", lambda t: t.detach()
        i = data.draw(st.integers(-n, n - 1), label="index")
        return name, lambda t: t.select(d, i)
    if name == "narrow":
        start = data.draw(st.integers(0, n), label="start")
        length = data.draw(st.integers(0, n - start), label="length")
        return name, lambda t: t.narrow(d, start, length)
    if name == "split":
        size = data.draw(st.integers(1, max(n, 1)), label="size")
        piece = data.draw(st.integers(0, 3), label="piece")
        return name, lambda t: t.split(size, d)[min(piece, len(t.split(size, d)) - 1)]
    if name == "unfold":
        size = data.draw(st.integers(0, n), label="size")
        step = data.draw(st.integers(1, 2), label="step")
        return name, lambda t: t.unfold(d, size, step)
    if name == "reshape":
        return name, lambda t: t.reshape(-1) if t.numel() else t.reshape(0)
    if name == "view_flat":
        return name, lambda t: t.view(-1)
    if name == "squeeze":
        return name, lambda t: t.squeeze(d)
    if name == "unsqueeze":
        return name, lambda t: t.unsqueeze(data_dim(nd + 1, d))
    if name == "transpose":
        e = _pick(data, nd, "dim2")
        return name, lambda t: t.transpose(d, e)
    if name == "t":
        return name, lambda t: t.transpose(0, 1) if t.ndim == 2 else t.transpose(-1, -2)
    if name == "permute":
        perm = data.draw(st.permutations(range(nd)), label="perm")
        return name, lambda t: t.permute(*perm)
    if name == "diagonal":
        e = (d + 1) % nd
        off = data.draw(st.integers(-2, 2), label="offset")
        return name, lambda t: t.diagonal(off, d, e)
    if name == "expand":
        target = tuple(3 if s == 1 else s for s in shape)
        return name, lambda t: t.expand(*target)
    return "detach", lambda t: t.detach()


def data_dim(n: int, d: int) -> int:
    return min(d, n - 1)


def _inplace_op(data, shape: tuple):
    """An in-place op: (name, fn(t, lib)) writing into ``t`` of ``shape``."""
    name = data.draw(st.sampled_from(["add_", "mul_", "fill_", "zero_", "copy_", "clamp_",
                                      "setitem", "sub_scalar", "div_"]), label="inplace")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    other = rng.uniform(-2, 2, size=shape).round(2)
    value = round(float(rng.uniform(-2, 2)), 2)

    def fn(t, lib, leaf_other):
        o = leaf_other if leaf_other is not None else lib.tensor(other, dtype=t.dtype)
        if name == "add_":
            return t.add_(o)
        if name == "mul_":
            return t.mul_(o)
        if name == "div_":
            return t.div_(o.abs() + 1)
        if name == "fill_":
            return t.fill_(value)
        if name == "zero_":
            return t.zero_()
        if name == "copy_":
            return t.copy_(o)
        if name == "clamp_":
            return t.clamp_(-0.5, 0.5)
        if name == "sub_scalar":
            return t.sub_(value)
        if t.ndim:
            t[..., :1] = value
        else:
            t[...] = value
        return t

    return name, fn, other


def _values(t) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        return t.detach().numpy().astype(np.float64)
    return np.asarray(t.detach().numpy(), dtype=np.float64)


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_random_view_and_inplace_programs_match_pytorch(data):
    shape = tuple(data.draw(st.lists(st.integers(0, 4), min_size=0, max_size=3), label="shape"))
    autograd = data.draw(st.booleans(), label="autograd")
    init = np.random.default_rng(0).uniform(-1, 1, size=shape).round(2)
    tl = torch.tensor(init, dtype=torch.float64, requires_grad=autograd)
    vl = vt.tensor(init, dtype=vt.float64, requires_grad=autograd)
    # non-leaf bases, so in-place ops are allowed under autograd
    live = [(tl * 1 if autograd else tl.clone(), vl * 1 if autograd else vl.clone())]
    others = []  # leaves fed into in-place ops (their gradients are compared too)
    for _ in range(data.draw(st.integers(1, 6), label="steps")):
        k = _pick(data, len(live), "target")
        ta, va = live[k]
        if data.draw(st.booleans(), label="is_view"):
            name, fn = _view_op(data, tuple(ta.shape))
            if _stale_piece(ta) and _is_noop(fn, va):
                continue  # a no-op view is the tensor itself in Volta (documented)
            outcome = _run(partial(fn, ta), partial(fn, va))
            if outcome is not None:
                live.append(outcome)
        else:
            name, fn, other = _inplace_op(data, tuple(ta.shape))
            # PyTorch's result depends on its loop order, so Volta refuses; writing one value
            # everywhere (fill_, zero_) is the same in any order, and both allow it, as
            # both do a write into a region that doesn't overlap itself (setitem: compared)
            if _overlaps(ta) and name not in ("fill_", "zero_", "setitem"):
                with pytest.raises((vt.ShapeError, vt.AutogradError)):
                    fn(va, vt, None)
                continue
            to = vo = None
            if autograd and data.draw(st.booleans(), label="grad_other"):
                to = torch.tensor(other, dtype=torch.float64, requires_grad=True)
                vo = vt.tensor(other, dtype=vt.float64, requires_grad=True)
                others.append((to, vo))
            _run(partial(fn, ta, torch, to), partial(fn, va, vt, vo))
        _compare_live(live, name)
    if not autograd:
        return
    loss_t, loss_v = 0, 0
    for i, (a, b) in enumerate(live):
        if not a.requires_grad:
            continue
        w = np.random.default_rng(i).uniform(-1, 1, size=tuple(a.shape))
        try:
            term = (a * torch.tensor(w)).sum()
        except RuntimeError:  # a split piece PyTorch won't use after its base changed
            with pytest.raises(vt.AutogradError):
                b * vt.tensor(w, dtype=vt.float64)
            continue
        loss_t = loss_t + term
        loss_v = loss_v + (b * vt.tensor(w, dtype=vt.float64)).sum()
    if not isinstance(loss_t, torch.Tensor):
        return
    try:
        loss_t.backward()
    except RuntimeError as exc:
        # PyTorch's backward of fill_/zero_ through an expanded view refuses (its forward
        # allowed the write); Volta gives the gradient (0 there): nothing to compare
        assert "single memory location" in str(exc), exc
        assume(False)
    loss_v.backward()
    for a, b in [(tl, vl), *others]:
        expected = np.zeros(a.shape) if a.grad is None else a.grad.numpy()
        got = np.zeros(b.shape) if b.grad is None else b.grad.numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def _stale_piece(t) -> bool:
    """Whether PyTorch refuses to use ``t`` (a split piece whose base changed)."""
    try:
        t * 1
    except RuntimeError:
        return True
    return False


def _is_noop(fn, v) -> bool:
    """Whether the view op ``fn`` returns ``v`` itself in Volta (an identity view)."""
    try:
        return fn(v) is v
    except Exception:  # noqa: BLE001 - it raised: not a no-op
        return False


def _overlaps(t) -> bool:
    """Whether two elements of the torch tensor ``t`` share memory (expand, unfold)."""
    if not t.numel():
        return False
    dims = sorted((s, n) for s, n in zip(t.stride(), t.shape) if n > 1)
    extent = 1
    for s, n in dims:
        if s < extent:
            return True
        extent = s * (n - 1) + extent
    return False


def _compare_live(live: list, step: str) -> None:
    """Every live pair holds the same values; a tensor PyTorch can't read any more (a
    split piece whose base changed under autograd) must be unreadable in Volta too."""
    for i, (a, b) in enumerate(list(live)):
        assert tuple(a.shape) == b.shape, f"tensor {i}: shape {b.shape} != {tuple(a.shape)}"
        if b.numel():  # strides too (size-1 dims included: overlap checks compare them)
            assert tuple(a.stride()) == tuple(b.stride()), \
                f"tensor {i} after {step}: strides {b.stride()} != {tuple(a.stride())}"
        try:
            # PyTorch regenerates a view's grad_fn (after its base changed) when it is
            # read, and until then its in-place check may see a leaf: read it, so that
            # what PyTorch does next does not depend on what the test looked at
            a.grad_fn  # noqa: B018
        except RuntimeError:
            pass  # a split piece whose base changed: PyTorch refuses it where it is used
        try:
            expected = _values(a)
        except RuntimeError:
            with pytest.raises(vt.AutogradError):
                _values(b)
            live.remove((a, b))
            continue
        np.testing.assert_allclose(_values(b), expected, rtol=1e-12, atol=1e-12,
                                   err_msg=f"tensor {i} after {step}")


def _run(torch_fn, volta_fn):
    """Run one step on both sides: both raise (None), or both give a result."""
    try:
        a = torch_fn()
    except (RuntimeError, IndexError, ValueError, TypeError):
        with pytest.raises(Exception):  # noqa: B017 - PyTorch refused it: so must Volta
            volta_fn()
        return None
    return a, volta_fn()


# views whose size-1 dims PyTorch strides by its own rules: None and unsqueeze take the
# stride of the dim they precede (in key order), expand's new dims likewise unless grown
_STRIDED = {
    "none_before_slice": lambda m: m.arange(4.)[None, 2:3],
    "none_after_slice": lambda m: m.arange(4.)[2:3, None],
    "none_after_step": lambda m: m.tensor([[True, True]])[::2, None],
    "none_mid": lambda m: m.arange(6.).reshape(2, 3)[:, None, 1:2],
    "none_after_int": lambda m: m.arange(6.).reshape(2, 3)[0, None],
    "none_before_int": lambda m: m.arange(6.).reshape(2, 3)[None, 0],
    "none_ellipsis": lambda m: m.arange(6.).reshape(2, 3)[None, ..., None],
    "none_of_0d": lambda m: m.tensor(2.)[None, None],
    "unsqueeze_step": lambda m: m.arange(4.)[::2].unsqueeze(1),
    "unsqueeze_one": lambda m: m.arange(4.)[2:3].unsqueeze(0),
    "expand_new_one": lambda m: m.arange(3.).expand(1, 1, 3),
    "expand_new_grown": lambda m: m.arange(3.).expand(2, 1, 3),
    "expand_inner": lambda m: m.arange(3.).reshape(3, 1).expand(2, 3, 4),
    "expand_0d": lambda m: m.tensor(1.).expand(1, 1),
    "expand_then_none": lambda m: m.arange(4.)[None].expand(3, 4)[:, None],
}


@pytest.mark.parametrize("name", list(_STRIDED))
def test_size_one_dims_are_strided_as_pytorch(name):
    t, v = _STRIDED[name](torch), _STRIDED[name](vt)
    assert (tuple(v.shape), tuple(v.stride())) == (tuple(t.shape), t.stride())


def _setitem(case):
    def run(m):
        v = {"bool": m.tensor([[True, True]]), "one": m.arange(1.), "three": m.arange(3.),
             "row": m.arange(3.).reshape(1, 3), "four": m.arange(4.),
             "mat": m.arange(6.).reshape(2, 3), "cube": m.arange(6.).reshape(1, 2, 3),
             "tall": m.arange(6.).reshape(3, 2)}[case[0]]
        if case[0] == "one":
            v = v.to(m.bfloat16).exp()
        case[1](v)
        return v.float().tolist() if v.dtype != m.bool else v.tolist()
    return run


_SETITEMS = {  # x[key] = (a view of x): PyTorch's copy_to overlap check, each way
    "stepped_none": ("bool", lambda v: v.__setitem__((slice(None, None, 2), None), v)),
    "one_into_0d": ("one", lambda v: v.__setitem__(0, v)),
    "one_under_none": ("one", lambda v: v.__setitem__(None, v)),
    "three_under_none": ("three", lambda v: v.__setitem__(None, v)),
    "row_under_none": ("row", lambda v: v.__setitem__(None, v)),
    "broadcast_row": ("mat", lambda v: v.__setitem__((slice(None), None), v[0])),
    "row_to_row": ("mat", lambda v: v.__setitem__(0, v[1])),
    "row_to_slice": ("mat", lambda v: v.__setitem__(slice(0, 1), v[0])),
    "leading_one": ("cube", lambda v: v.__setitem__(0, v)),
    "same_start": ("four", lambda v: v.__setitem__(slice(0, 2), v[None, :2])),
    "shifted": ("four", lambda v: v.__setitem__(slice(1, 3), v[None, None, :2])),
    "shifted_same_shape": ("four", lambda v: v.__setitem__(slice(1, 3), v[:2])),
    "column_from_row": ("tall", lambda v: v.__setitem__(slice(0, 1), v[None, 0])),
}


@pytest.mark.parametrize("name", list(_SETITEMS))
def test_setitem_of_its_own_view_raises_as_pytorch(name):
    """Basic-indexing ``x[key] = view of x``: PyTorch strips the value's leading size-1
    dims, expands it to the region and refuses a partial overlap (same range, other
    strides; or overlapping ranges); both must agree, and on the values when allowed."""
    run = _setitem(_SETITEMS[name])
    try:
        run(torch)
    except RuntimeError as exc:
        assert "single memory location" in str(exc)
        with pytest.raises(vt.ShapeError, match="single memory location"):
            run(vt)
        return
    assert run(vt) == run(torch)
