"""``detach()`` and ``.data``: PyTorch's semantics, and no reference to the graph.

Each program runs on PyTorch 2.x CPU and on Volta (cpu, and wgpu where it runs) side by
side and must give the same values, view relations, version checks and gradients. The
last tests check that a detached tensor kept after a training step (``losses.append(
loss.detach())``) lets the step's autograd graph die.
"""

import gc
import weakref

import numpy as np
import pytest

import volta_core as vt

torch = pytest.importorskip("torch")

_AVAILABLE = {r.name for r in vt.backends() if r.available}
DEVICES = [pytest.param(d, marks=pytest.mark.skipif(
    b not in _AVAILABLE, reason=f"the {b} backend is not available here"))
    for d, b in (("cpu", "numpy"), ("wgpu", "wgpu"))]

BASE = np.arange(12, dtype=np.float32).reshape(4, 3) / 4 - 1


class Lib:
    """What a program needs from a library: torch, or Volta on one device."""

    def __init__(self, mod, dev: str = "cpu") -> None:
        self.mod, self.dev = mod, dev
        self.refuses = RuntimeError if mod is torch else vt.AutogradError

    def t(self, values, requires_grad: bool = False):
        return self.mod.tensor(np.asarray(values, dtype=np.float32), device=self.dev,
                               requires_grad=requires_grad)


def values(t) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        return t.detach().numpy().astype(np.float64)
    return np.asarray(t.detach().cpu().tolist(), dtype=np.float64)


def both(program, dev: str) -> None:
    """Run ``program(lib)`` on torch and Volta; it returns a dict of results to compare:
    tensors (values), and bools / ints / tuples (as they are)."""
    expected, got = program(Lib(torch)), program(Lib(vt, dev))
    assert expected.keys() == got.keys()
    for k, e in expected.items():
        g = got[k]
        if isinstance(e, torch.Tensor):
            assert tuple(g.shape) == tuple(e.shape), k
            np.testing.assert_allclose(values(g), values(e), rtol=1e-6, atol=1e-6,
                                       err_msg=k)
        elif e is None:
            assert g is None, k
        else:
            assert g == e, f"{k}: {g!r} != {e!r}"


def describe(t, base=None) -> dict:
    """What PyTorch reports about a tensor's relation to its memory and graph."""
    return {"is_view": t._is_view(), "base_is_none": t._base is None,
            "base_is": t._base is base if base is not None else None,
            "requires_grad": t.requires_grad, "is_leaf": t.is_leaf,
            "stride": tuple(t.stride()), "offset": t.storage_offset(),
            "contiguous": t.is_contiguous(), "has_grad_fn": t.grad_fn is not None}


def prefixed(prefix: str, d: dict) -> dict:
    return {f"{prefix}.{k}": v for k, v in d.items()}


@pytest.mark.parametrize("dev", DEVICES)
def test_detached_tensor_is_a_leaf_and_no_view(dev):
    def program(lib):
        x = lib.t(BASE, requires_grad=True)
        y = x * 2  # a tensor with a history
        out = {}
        for name, t in (("root", y), ("slice", y[1:]), ("column", y[:, 1]),
                        ("transposed", y.t()), ("leaf", x)):
            for how, d in (("detach", t.detach()), ("data", t.data)):
                out.update(prefixed(f"{name}.{how}", describe(d)))
                w = d[1:]  # a view of the detached tensor: its base is the detached one
                out.update(prefixed(f"{name}.{how}.view", describe(w, d)))
                out[f"{name}.{how}.version"] = d._version if lib.mod is torch else \
                    d._version[0]
        return out

    both(program, dev)


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("source", ["root", "slice", "column", "transposed"])
def test_values_are_shared_both_ways(dev, source):
    pick = {"root": lambda t: t, "slice": lambda t: t[1:], "column": lambda t: t[:, 1],
            "transposed": lambda t: t.t()}[source]

    def program(lib):
        x = lib.t(BASE, requires_grad=True)
        b = x * 2
        s = pick(b)
        old = b[2:]  # a view made before any detach
        d = s.detach()
        w = d[:1]  # a view of the detached tensor
        with lib.mod.no_grad():
            d.add_(1)  # through the detached tensor: seen by b, s, old and w
            out = {"b1": b * 1, "s1": s * 1, "old1": old * 1, "w1": w * 1}
            s.mul_(3)  # through the original: seen by d and w
            out.update({"d2": d * 1, "w2": w * 1, "b2": b * 1})
            w.sub_(0.5)  # through a view of the detached tensor
            out.update({"d3": d * 1, "s3": s * 1, "b3": b * 1, "old3": old * 1})
            old.fill_(7)  # through an old view of the base
            out.update({"d4": d * 1, "w4": w * 1})
            b.div_(2)
        out.update({"d5": d * 1, "w5": w * 1, "data": s.data * 1})
        dd = d.detach()  # a detached tensor of a detached tensor
        dd.add_(1)
        out.update({"b6": b * 1, "d6": d * 1, "b_has_grad_fn": b.grad_fn is not None})
        return out

    both(program, dev)


@pytest.mark.parametrize("dev", DEVICES)
def test_version_counter_is_shared_by_detach_and_not_by_data(dev):
    def program(lib):
        out = {}
        for how in ("detach", "data", "view_of_detach"):
            x = lib.t(BASE, requires_grad=True)
            y = x * 2
            z = y.exp()  # saves its output
            d = z.detach() if how != "data" else z.data
            if how == "view_of_detach":
                d = d[1:]
            d.add_(1)
            try:
                z.sum().backward()
                out[how] = "ran"
                # (not compared: PyTorch's backward reads the saved output as changed
                # through .data; Volta's saves the values, as they were)
            except lib.refuses:
                out[how] = "refused"
        return out

    both(program, dev)


@pytest.mark.parametrize("dev", DEVICES)
def test_in_place_on_the_original_refuses_backward_through_a_detached_save(dev):
    def program(lib):
        x = lib.t(BASE, requires_grad=True)
        y = x * 2
        d = y.detach()
        z = (d * x).exp()  # saves x and d's product (its output)
        s = (d * x).sum()  # saves d
        with lib.mod.no_grad():
            y.add_(1)  # bumps d's version too
        out = {}
        for name, t in (("exp", z.sum()), ("mul", s)):
            try:
                t.backward()
                out[name] = "ran"
            except lib.refuses:
                out[name] = "refused"
        return out

    both(program, dev)


@pytest.mark.parametrize("dev", DEVICES)
def test_detached_tensor_takes_a_history_of_its_own(dev):
    def program(lib):
        x = lib.t(BASE, requires_grad=True)
        o = lib.t(BASE[::-1].copy(), requires_grad=True)
        y = x * 2
        d = y.detach()
        v = d[1:]  # made before d gets a history: follows it, as a view of d
        d.mul_(o)  # d is no leaf any more; y's values change, not its history
        out = {"d": d * 1, "y": y * 1, "d_leaf": d.is_leaf, "y_fn": type(y.grad_fn).__name__
               .replace("Backward0", "").replace("Backward", "")}
        (d.sum() + (v * v).sum() + y.sum()).backward()
        out.update({"o.grad": o.grad, "x.grad": x.grad})
        p = lib.t(BASE, requires_grad=True)
        q = p.detach()
        q.requires_grad_(True)  # a leaf of its own: an in-place op on it refuses
        try:
            q.add_(1)
            out["leaf_inplace"] = "ran"
        except lib.refuses:
            out["leaf_inplace"] = "refused"
        return out

    both(program, dev)


@pytest.mark.parametrize("dev", DEVICES)
def test_views_of_a_detached_part_follow_its_history(dev):
    """A detached column (part of its memory): its views follow its own history."""
    def program(lib):
        x = lib.t(BASE, requires_grad=True)
        o = lib.t(np.full(2, 3.0), requires_grad=True)
        p = lib.t(np.full(4, 0.5), requires_grad=True)
        b = x * 2
        d = b[:, 1].detach()
        w = d[1:3]
        u = d[::2]  # made before d has a history
        d.mul_(p)
        w.grad_fn  # noqa: B018 - PyTorch's in-place check sees a leaf until this is read
        w.mul_(o)  # recorded into d's history
        out = {"b": b * 1, "d": d * 1, "u": u * 1, "u_grad_fn": u.grad_fn is not None,
               "d_leaf": d.is_leaf, "w_base": w._base is d, "u_stride": tuple(u.stride()),
               "u_offset": u.storage_offset()}
        ((d * d).sum() + (u * 3).sum()).backward()
        out.update({"o.grad": o.grad, "p.grad": p.grad, "x.grad": x.grad})
        return out

    both(program, dev)


@pytest.mark.parametrize("dev", DEVICES)
def test_old_views_of_a_detached_tensor_with_a_history_keep_working(dev):
    def program(lib):
        x = lib.t(BASE, requires_grad=True)
        b = x * 2
        v = b[1:]  # made before b is detached
        d = b.detach()
        v.mul_(x[1:])  # under autograd: b takes the history, d sees the values
        u = b[:, 0]  # made after
        u.add_(x[:, 1])
        out = {"d": d * 1, "v": v * 1, "b": b * 1}
        (b * b).sum().backward()
        out["x.grad"] = x.grad
        return out

    both(program, dev)


@pytest.mark.parametrize("dev", DEVICES)
def test_data_assignment_and_detach_(dev):
    def program(lib):
        x = lib.t(BASE, requires_grad=True)
        y = x * 2
        d = y.detach()
        y.data = lib.t(np.ones(5))  # y takes new memory (of another shape); d keeps its own
        out = {"y": y * 1, "d": d * 1, "y_shape": tuple(y.shape)}
        d.data = lib.t(np.zeros(2))
        out["d2"] = d * 1
        z = x * 3
        e = z.detach()
        z.detach_()
        out.update(prefixed("z", describe(z)))
        z.add_(1)  # no history now: allowed, and shared with e
        out["e"] = e * 1
        for name, v in (("view", (x * 1)[1:]), ("view_of_detached", e[1:])):
            try:
                v.detach_()
                out[name] = "ran"
            except lib.refuses:
                out[name] = "refused"
        return out

    both(program, dev)


@pytest.mark.parametrize("dev", DEVICES)
def test_data_assignment_leaves_earlier_views_and_aliases_alone(dev):
    """``x.data = y``: x shares y's memory from then on; what was made of x before keeps
    x's old memory (a view of x, x.detach(), x.data), also across a second assignment."""
    def program(lib):
        x = lib.t(BASE[0], requires_grad=True)
        d, v, old_data = x.detach(), x[1:], x.data
        y = lib.t(np.ones(3))
        x.data = y
        out = {"x": x * 1, "d": d * 1, "v": v * 1, "old_data": old_data * 1}
        with lib.mod.no_grad():
            x.add_(1)  # reaches y, not d or v
        d.add_(5)  # reaches v, not x
        out.update({"y": y * 1, "v2": v * 1, "x2": x * 1})
        w = x[1:]  # a view of the new memory, then x moves again
        x.data = lib.t(np.full(3, 7.0))
        out.update({"w": w * 1, "y2": y * 1, "x3": x * 1, "shape": tuple(x.shape)})
        b = lib.t(np.zeros(4))
        piece = b[:2]
        piece.data = lib.t(np.ones(5))  # a view takes new memory; its base is untouched
        piece.add_(1)
        out.update({"b": b * 1, "piece": piece * 1})
        z = lib.t(np.arange(6.0))
        tail = z[2:]
        z.data = z[:3]  # memory of its own view
        z.add_(10)
        out.update({"z": z * 1, "tail": tail * 1})
        x.sum().backward()  # x keeps its place in autograd
        out["x.grad"] = x.grad
        return out

    both(program, dev)


@pytest.mark.parametrize("dev", DEVICES)
def test_autograd_grad_returns_grad_outputs_unchanged(dev):
    def program(lib):
        x = lib.t(BASE, requires_grad=True)
        y = x * 2
        g = lib.t(np.ones((4, 3)))
        (r,) = lib.mod.autograd.grad(y, y, g, retain_graph=True)
        out = {"same_object": r is g, "r_requires_grad": r.requires_grad}
        (rx,) = lib.mod.autograd.grad(y, x, g)
        out.update({"x_same_object": rx is g, "rx": rx})
        return out

    both(program, dev)


def _graph_dies(dev: str, keep) -> bool:
    """Run a step of a small MLP, keep ``keep(loss)`` and report whether a node of the
    step's graph is still alive afterwards."""
    vt.manual_seed(0)
    net = vt.nn.Sequential(vt.nn.Linear(4, 8), vt.nn.ReLU(), vt.nn.Linear(8, 1)).to(dev)
    opt = vt.optim.SGD(net.parameters(), lr=0.1)
    x = vt.randn(5, 4, device=dev)
    kept = []
    loss = ((net(x) - 1) ** 2).mean()
    node = weakref.ref(loss.grad_fn)
    hidden = weakref.ref(net[0].weight.grad_fn or loss.grad_fn.parents[0] or loss.grad_fn)
    kept.append(keep(loss))
    opt.zero_grad()
    loss.backward()
    opt.step()
    del loss
    gc.collect()
    assert kept[0].shape in ((), (1,), (5, 1))
    return node() is None and hidden() is None


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("how", ["detach", "data", "detach_of_a_view", "view_of_detach"])
def test_a_kept_detached_loss_lets_the_graph_die(dev, how):
    keep = {"detach": lambda t: t.detach(), "data": lambda t: t.data,
            "detach_of_a_view": lambda t: t.reshape(1).detach(),
            "view_of_detach": lambda t: t.detach().reshape(1)}[how]
    assert _graph_dies(dev, keep)


@pytest.mark.parametrize("dev", DEVICES)
def test_the_graph_dies_when_the_loss_was_detached_before_backward(dev):
    """A detached loss kept in a list still shares values with the (dead) loss."""
    vt.manual_seed(0)
    lin = vt.nn.Linear(3, 1).to(dev)
    losses, nodes = [], []
    for _ in range(3):
        loss = lin(vt.randn(2, 3, device=dev)).pow(2).mean()
        nodes.append(weakref.ref(loss.grad_fn))
        losses.append(loss.detach())
        loss.backward()
        expected = loss.item()
        del loss
        assert losses[-1].item() == expected
    gc.collect()
    assert all(n() is None for n in nodes)
    losses[0].add_(1)  # still a tensor of its own values
    assert vt.stack(losses).shape == (3,)


@pytest.mark.parametrize("dev", DEVICES)
def test_a_plain_tensor_detached_then_given_a_history_then_detached_again(dev):
    def program(lib):
        x = lib.t(np.arange(6.0), requires_grad=True)
        o = lib.t(np.full(6, 2.0), requires_grad=True)
        p = lib.mod.zeros(6, device=lib.dev)
        d = p.detach()  # p has no history yet
        w = d[1:4]
        p.add_(o * x)  # now it has one
        e = p.detach()
        w.mul_(3)  # through a view of the first detached tensor: seen by p, d and e
        e.add_(100)
        out = {"p": p * 1, "d": d * 1, "w": w * 1, "e": e * 1}
        (p * p).sum().backward()
        out.update({"x.grad": x.grad, "o.grad": o.grad})
        return out

    both(program, dev)
