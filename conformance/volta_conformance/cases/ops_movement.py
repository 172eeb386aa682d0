"""Cases of movement, indexing and in-place ops (views, joins, gathers, ``x.add_``)."""

from __future__ import annotations

import volta_core as vt

from ..case import ALL_FLOAT, FLOAT, INT, Arg, OpCase

ANY = FLOAT + INT + ("bool",)
M = FLOAT + INT


def _a(*shape: int, view: str | None = None) -> Arg:
    return Arg(tuple(shape), view=view)


def case(name: str, op: str, *args: Arg, fn=None, dtypes: tuple = M, **kwargs) -> OpCase:
    """A movement case: forward in every dtype given, backward in the floating ones."""
    extra = {k: kwargs.pop(k) for k in ("covers", "needs", "tol", "grad") if k in kwargs}
    return OpCase(f"{op}/{name}", op, dtypes, args=args, fn=fn, kwargs=kwargs, **extra)


CASES: list = [
    # -- reshapes and dimension moves ------------------------------------------------------
    case("basic", "reshape", _a(3, 4), fn=lambda x: x.reshape(2, 6), covers=("Tensor.view",)),
    case("infer", "reshape", _a(2, 3, 4), fn=lambda x: x.reshape(-1, 4)),
    case("permuted", "reshape", _a(3, 4, view="T"), fn=lambda x: x.reshape(12)),
    case("to_0d", "reshape", _a(1, 1), fn=lambda x: x.reshape(())),
    case("empty", "reshape", _a(0, 4), fn=lambda x: x.reshape(2, 0, 2)),
    case("basic", "permute", _a(2, 3, 4), fn=lambda x: x.permute(2, 0, 1)),
    case("neg", "permute", _a(2, 3, 4), fn=lambda x: x.permute(-1, -3, -2)),
    case("basic", "transpose", _a(2, 3, 4), fn=lambda x: x.transpose(0, 2),
         covers=("Tensor.swapaxes",)),
    case("mT", "transpose", _a(2, 3, 4), fn=lambda x: x.mT, covers=("Tensor.mT",)),
    case("T", "transpose", _a(3, 4), fn=lambda x: x.T, covers=("Tensor.T",)),
    case("basic", "t", _a(3, 4)),
    case("vector", "t", _a(3)),
    case("basic", "expand", _a(3, 1), fn=lambda x: x.expand(3, 4)),
    case("new_dims", "expand", _a(1, 4), fn=lambda x: x.expand(2, -1, 4),
         covers=("Tensor.broadcast_to", "broadcast_to")),
    case("basic", "sum_to", _a(2, 3, 4), fn=lambda x: vt.sum_to(x, (3, 1))),
    case("basic", "unsqueeze", _a(3, 4), fn=lambda x: x.unsqueeze(1)),
    case("neg", "unsqueeze", _a(3, 4), fn=lambda x: x.unsqueeze(-1)),
    case("0d", "unsqueeze", _a(), fn=lambda x: x.unsqueeze(0)),
    case("all", "squeeze", _a(1, 3, 1, 4)),
    case("dim", "squeeze", _a(1, 3, 1), fn=lambda x: x.squeeze(2)),
    case("all", "flatten", _a(2, 3, 4)),
    case("range", "flatten", _a(2, 3, 4, 5), fn=lambda x: x.flatten(1, 2)),
    case("0d", "flatten", _a()),
    case("basic", "unflatten", _a(2, 12), fn=lambda x: vt.unflatten(x, 1, (3, 4))),
    case("basic", "movedim", _a(2, 3, 4), fn=lambda x: vt.movedim(x, 0, -1)),
    case("multi", "movedim", _a(2, 3, 4, 5), fn=lambda x: vt.movedim(x, (0, 1), (3, 2))),
    case("basic", "broadcast_tensors", _a(3, 1), _a(1, 4), _a(4)),
    case("basic", "Tensor.contiguous", _a(3, 4, view="T"), fn=lambda x: x.contiguous()),
    case("basic", "clone", _a(3, 4), dtypes=ANY),
    case("permuted", "clone", _a(3, 4, view="T")),
    # -- slicing views ---------------------------------------------------------------------
    case("basic", "narrow", _a(4, 5), fn=lambda x: vt.narrow(x, 1, 1, 3)),
    case("neg_start", "narrow", _a(4, 5), fn=lambda x: vt.narrow(x, 0, -2, 2)),
    case("basic", "narrow_copy", _a(4, 5), fn=lambda x: vt.narrow_copy(x, 1, 1, 3),
         covers=("Tensor.narrow_copy",)),
    case("basic", "select", _a(4, 5), fn=lambda x: vt.select(x, 1, 2)),
    case("neg", "select", _a(4, 5, 2), fn=lambda x: vt.select(x, 0, -1)),
    case("basic", "slice_view", _a(4, 5),
         fn=lambda x: vt.slice_view(x, (slice(1, 3, 1), slice(0, 5, 2)))),
    case("int", "slice_view", _a(4, 5), fn=lambda x: vt.slice_view(x, (2, slice(1, 4, 1)))),
    case("basic", "shrink", _a(4, 5, 3), fn=lambda x: vt.shrink(x, ((1, 3), None, (0, 2)))),
    case("basic", "stride", _a(5, 6), fn=lambda x: vt.stride(x, (2, 3))),
    # -- padding, flips, rolls, repeats ----------------------------------------------------
    case("constant", "pad", _a(2, 3, 4), fn=lambda x: vt.pad(x, (1, 2, 0, 1))),
    case("value", "pad", _a(3, 4), fn=lambda x: vt.pad(x, (2, 1), value=0.5), dtypes=FLOAT),
    case("crop", "pad", _a(3, 6), fn=lambda x: vt.pad(x, (-1, -2))),
    case("reflect", "pad", _a(2, 3, 5), fn=lambda x: vt.pad(x, (2, 2), mode="reflect")),
    case("replicate", "pad", _a(2, 3, 4), fn=lambda x: vt.pad(x, (1, 2, 2, 1), mode="replicate")),
    case("circular", "pad", _a(2, 3, 4), fn=lambda x: vt.pad(x, (1, 2), mode="circular")),
    case("basic", "flip", _a(3, 4), fn=lambda x: vt.flip(x, 0)),
    case("dims", "flip", _a(2, 3, 4), fn=lambda x: vt.flip(x, (0, 2))),
    case("basic", "roll", _a(3, 4), fn=lambda x: vt.roll(x, 1, 1)),
    case("flat", "roll", _a(3, 4), fn=lambda x: vt.roll(x, -5)),
    case("dims", "roll", _a(3, 4, 2), fn=lambda x: vt.roll(x, (2, -1), (0, 1))),
    case("basic", "repeat", _a(2, 3), fn=lambda x: x.repeat(2, 1, 3)),
    case("basic", "tile", _a(2, 3), fn=lambda x: vt.tile(x, (2,))),
    # -- joins and splits ------------------------------------------------------------------
    case("basic", "cat", _a(2, 3), _a(4, 3), fn=lambda a, b: vt.cat([a, b]),
         covers=("concat", "concatenate")),
    case("dim1", "cat", _a(2, 3), _a(2, 1), _a(2, 2), fn=lambda *xs: vt.cat(xs, dim=1)),
    case("empty", "cat", _a(0, 3), _a(2, 3), fn=lambda a, b: vt.cat([a, b])),
    case("permuted", "cat", _a(3, 2, view="T"), _a(3, 2), fn=lambda a, b: vt.cat([a, b], -1)),
    case("basic", "stack", _a(2, 3), _a(2, 3), fn=lambda a, b: vt.stack([a, b])),
    case("last", "stack", _a(2, 3), _a(2, 3), _a(2, 3), fn=lambda *xs: vt.stack(xs, dim=-1)),
    case("size", "split", _a(5, 3), fn=lambda x: vt.split(x, 2)),
    case("sections", "split", _a(3, 6), fn=lambda x: vt.split(x, [1, 3, 2], dim=1)),
    case("basic", "chunk", _a(7, 2), fn=lambda x: vt.chunk(x, 3)),
    case("basic", "unbind", _a(3, 4), fn=lambda x: vt.unbind(x, 1)),
    # -- indexing --------------------------------------------------------------------------
    case("slices", "Tensor.__getitem__", _a(4, 5, 6), fn=lambda x: x[1:3, ::2, -3:]),
    case("int", "Tensor.__getitem__", _a(4, 5), fn=lambda x: x[2]),
    case("neg_int", "Tensor.__getitem__", _a(4, 5), fn=lambda x: x[-1, 1:]),
    case("ellipsis_none", "Tensor.__getitem__", _a(2, 3, 4), fn=lambda x: x[..., None, 1]),
    case("int_tensor", "Tensor.__getitem__", _a(5, 3), Arg((4,), 0, 5, kind="index"),
         fn=lambda x, i: x[i]),
    case("repeated_index", "Tensor.__getitem__", _a(3, 2), Arg((6,), 0, 3, kind="index"),
         fn=lambda x, i: x[i]),
    case("bool_mask", "Tensor.__getitem__", _a(3, 4), Arg((3, 4), kind="bool"),
         fn=lambda x, m: x[m]),
    case("basic", "gather", _a(3, 4), Arg((3, 5), 0, 4, kind="index"),
         fn=lambda x, i: vt.gather(x, 1, i)),
    case("basic", "take_along_dim", _a(3, 4), Arg((3, 2), 0, 4, kind="index"),
         fn=lambda x, i: vt.take_along_dim(x, i, 1)),
    case("basic", "index_select", _a(4, 3), Arg((5,), 0, 4, kind="index"),
         fn=lambda x, i: vt.index_select(x, 0, i)),
    case("basic", "scatter", _a(3, 5), Arg((3, 2), 0, 5, kind="index"), _a(3, 2),
         fn=lambda x, i, s: vt.scatter(x, 1, i, s), grad=False),
    case("basic", "scatter_add", _a(3, 5), Arg((3, 4), 0, 5, kind="index"), _a(3, 4),
         fn=lambda x, i, s: vt.scatter_add(x, 1, i, s)),
    case("basic", "index_add", _a(5, 3), Arg((4,), 0, 5, kind="index"), _a(4, 3),
         fn=lambda x, i, s: vt.index_add(x, 0, i, s)),
    case("basic", "masked_fill", _a(3, 4), Arg((3, 4), kind="bool"),
         fn=lambda x, m: vt.masked_fill(x, m, 0.5), dtypes=FLOAT),
    case("basic", "masked_scatter", _a(3, 4), Arg((3, 4), kind="bool"), _a(12),
         fn=lambda x, m, s: x.masked_scatter(m, s), dtypes=FLOAT,
         covers=("Tensor.masked_scatter", "Tensor.masked_scatter_")),
    case("basic", "select_scatter", _a(3, 4), _a(3), fn=lambda x, s: vt.select_scatter(
        x, s, 1, 2), dtypes=FLOAT, covers=("Tensor.select_scatter",)),
    case("basic", "slice_scatter", _a(4, 3), _a(2, 3), fn=lambda x, s: vt.slice_scatter(
        x, s, 0, 1, None, 2), dtypes=FLOAT, covers=("Tensor.slice_scatter",)),
    case("basic", "diagonal_scatter", _a(3, 4), _a(3), fn=lambda x, s: vt.diagonal_scatter(
        x, s, 1), dtypes=FLOAT, covers=("Tensor.diagonal_scatter",)),
    case("basic", "masked_select", _a(3, 4), Arg((3, 4), kind="bool"),
         fn=lambda x, m: vt.masked_select(x, m)),
    case("broadcast", "masked_select", _a(3, 4), Arg((4,), kind="bool"),
         fn=lambda x, m: vt.masked_select(x, m)),
    case("basic", "nonzero", _a(3, 4), fn=lambda x: vt.nonzero(vt.relu(x)), grad=False),
    case("as_tuple", "nonzero", _a(3, 4), fn=lambda x: vt.nonzero(x > 0, as_tuple=True),
         grad=False),
    case("basic", "one_hot", Arg((5,), 0, 4, kind="index"), fn=lambda i: vt.one_hot(i, 4),
         dtypes=("int64",)),
    case("basic", "tril", _a(4, 5), fn=lambda x: vt.tril(x)),
    case("offset", "triu", _a(4, 5), fn=lambda x: vt.triu(x, 1)),
    case("basic", "nn.functional.one_hot", Arg((5,), 0, 4, kind="index"),
         fn=lambda i: vt.nn.functional.one_hot(i, 4), dtypes=("int64",)),
]

# -- in-place ops (on a copy, so autograd sees an ordinary graph) --------------------------


def _inplace(method: str, *consts):
    def fn(x, *others):
        y = x * 1 if x.dtype.name != "bool" else x.clone()
        out = getattr(y, method)(*others, *consts)
        if out is not y:
            raise AssertionError(f"Tensor.{method} must return the tensor itself")
        return y

    return fn


for _m, _args in (("add_", 2), ("sub_", 2), ("mul_", 2), ("div_", 2), ("neg_", 1),
                  ("exp_", 1), ("relu_", 1), ("sigmoid_", 1), ("tanh_", 1), ("sqrt_", 1),
                  ("abs_", 1), ("copy_", 2), ("maximum_", 2), ("clamp_", 1), ("pow_", 1),
                  ("zero_", 1), ("fill_", 1), ("masked_fill_", 1), ("sin_", 1), ("cos_", 1),
                  ("log_", 1)):
    _low = 0.2 if _m in ("sqrt_", "log_", "div_", "pow_") else -1.0
    _consts = {"clamp_": (-0.5, 0.5), "pow_": (2.0,), "fill_": (0.25,)}.get(_m, ())
    _ins = tuple(Arg((3, 4), _low, 2.0) for _ in range(_args))
    if _m == "masked_fill_":
        _ins, _consts = (Arg((3, 4)), Arg((3, 4), kind="bool")), (0.5,)
    CASES.append(OpCase(f"inplace/{_m}", f"Tensor.{_m}", FLOAT, args=_ins,
                        fn=_inplace(_m, *_consts)))
CASES.append(OpCase("inplace/add_broadcast", "Tensor.add_", FLOAT,
                    args=(Arg((3, 4)), Arg((4,))), fn=_inplace("add_")))
CASES.append(OpCase("inplace/setitem", "Tensor.__setitem__", FLOAT,
                    args=(Arg((4, 5)), Arg((2, 5))),
                    fn=lambda x, v: _setitem(x, (slice(1, 3),), v)))
CASES.append(OpCase("inplace/add_half", "Tensor.add_", ALL_FLOAT[2:],
                    args=(Arg((3, 4)), Arg((3, 4))), fn=_inplace("add_")))


def _setitem(x, key, value):
    y = x * 1
    y[key] = value
    return y
