"""The op table of the reference net: every op Volta shares with PyTorch, in PyTorch's
call forms.

Each entry is an :class:`Op` whose ``gen(g, x)`` writes one statement of source that
uses ``x`` (a :class:`~reference.program.Ref`, the operand chosen by the generator)
and returns ``(form, source, inplace)``. The source is valid PyTorch and valid Volta:
it is run with ``vt`` bound to ``torch`` on one side and to ``volta_core`` on the
other (``F`` is the ``nn.functional`` module of each). An op whose attribute Volta
lacks is left out of generation and listed by ``missing_in_volta()``.

The generator does not know which dtypes and shapes each op accepts: PyTorch is the
oracle. A statement that PyTorch refuses is kept now and then (the program then
checks that Volta refuses it too) and otherwise drawn again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

import volta_core as vt


@dataclass(frozen=True)
class Op:
    """One op of the table.

    Args:
        name: the name used in failure signatures.
        gen: ``gen(g, x) -> (form, source, inplace)``.
        needs: attributes Volta must have for the op to be generated, as
            ``"vt.name"``, ``"F.name"`` or ``"Tensor.name"``.
        weight: relative frequency.
        ties: the op's index output (or order) is unspecified between equal values;
            the harness checks its validity instead of equality.
    """

    name: str
    gen: Callable
    needs: tuple[str, ...] = ()
    weight: float = 1.0
    ties: bool = False


def _has(path: str) -> bool:
    """Whether both Volta and PyTorch have ``path`` (the net tests shared API only)."""
    owner, _, attr = path.partition(".")
    ours = {"vt": vt, "F": vt.nn.functional, "Tensor": vt.Tensor}[owner]
    theirs = {"vt": torch, "F": torch.nn.functional, "Tensor": torch.Tensor}[owner]
    return hasattr(ours, attr) and hasattr(theirs, attr)


OPS: list[Op] = []


def op(name: str, needs=(), weight: float = 1.0, ties: bool = False):
    """Register ``gen`` in OPS under ``name``."""
    def deco(gen):
        OPS.append(Op(name, gen, tuple(needs), weight, ties))
        return gen
    return deco


# ----------------------------------------------------------------------------- elementwise

UNARY = ["exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "abs", "neg", "floor", "ceil",
         "round", "trunc", "sign", "reciprocal", "rsqrt", "exp2", "expm1", "log1p", "log2",
         "erf", "square", "relu", "tan", "asin", "acos", "atan", "sinh", "cosh", "isnan",
         "isinf", "isfinite", "logical_not", "nan_to_num", "frac", "log10", "sgn", "signbit",
         "erfc", "sinc", "deg2rad", "acosh", "asinh", "atanh", "positive", "isposinf",
         "isneginf", "logit", "fix"]


def _unary(name):
    def gen(g, x):
        form = g.form(name, ("f", "m"))
        operand = x.e
        if name == "signbit" and x.t.is_floating_point() and bool(x.t.isnan().any()):
            # the sign bit of a NaN is not specified (PyTorch's 0/0 on x86 sets it, a NaN
            # constant does not): give signbit the NaNs as zeros
            operand = f"{x.e}.masked_fill({x.e}.isnan(), 0)"
        return form, g.call(form, name, operand), False
    return gen


for _n in UNARY:
    op(_n, needs=(f"vt.{_n}",))(_unary(_n))
    if _has(f"Tensor.{_n}_"):
        op(f"{_n}_", needs=(f"Tensor.{_n}_",), weight=0.3)(
            lambda g, x, n=_n: ("m", f"{g.view_target(x)}.{n}_()", True))

ACTIVATIONS = ["relu", "gelu", "silu", "elu", "leaky_relu", "hardtanh", "softplus", "sigmoid",
               "tanh", "relu6", "mish", "hardswish", "hardsigmoid", "softsign", "logsigmoid",
               "selu", "celu", "tanhshrink", "softshrink", "hardshrink"]


def _activation(name):
    def gen(g, x):
        extra = ""
        if name == "gelu" and g.c.chance(0.5):
            extra = ", approximate='tanh'"
        elif name == "leaky_relu" and g.c.chance(0.5):
            extra = ", negative_slope=0.2"
        elif name == "hardtanh" and g.c.chance(0.5):
            extra = ", min_val=-0.5, max_val=2.0"
        elif name in ("elu", "celu") and g.c.chance(0.5):
            extra = ", alpha=0.5"
        elif name == "softplus" and g.c.chance(0.5):
            extra = ", beta=2.0, threshold=3.0"
        if name in INPLACE_ACTIVATIONS and g.c.chance(0.25):  # written into (a view of) x
            return "F", f"F.{name}({g.view_target(x)}{extra}, inplace=True)", True
        return "F", f"F.{name}({x.e}{extra})", False
    return gen


INPLACE_ACTIVATIONS = {"relu", "elu", "leaky_relu", "hardtanh", "silu", "relu6", "mish",
                       "hardswish", "hardsigmoid", "selu", "celu"}
for _n in ACTIVATIONS:
    op(f"F.{_n}", needs=(f"F.{_n}",), weight=0.5)(_activation(_n))

PAIR_LOSSES = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "soft_margin_loss",
               "binary_cross_entropy_with_logits", "kl_div", "poisson_nll_loss"]


def _pair_loss(name):
    def gen(g, x):
        reduction = g.c.pick(["'mean'", "'sum'", "'none'"])
        return "F", f"F.{name}({x.e}, {g.partner(x, scalar=False)}, reduction={reduction})", False
    return gen


for _n in PAIR_LOSSES:
    op(f"F.{_n}", needs=(f"F.{_n}",), weight=0.1)(_pair_loss(_n))

BINARY = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**", "remainder": "%",
          "floor_divide": "//", "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">",
          "ge": ">=", "bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^",
          "maximum": None, "minimum": None, "atan2": None, "fmod": None,
          "logical_and": None, "logical_or": None, "logical_xor": None, "true_divide": None,
          "hypot": None, "copysign": None, "fmax": None, "fmin": None, "xlogy": None,
          "logaddexp": None, "float_power": None}
_DUNDER = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "**": "pow", "%": "mod",
           "//": "floordiv", "&": "and", "|": "or", "^": "xor", "==": "eq", "!=": "ne",
           "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}


def _binary(name, sym):
    def gen(g, x):
        forms = ["f", "m"] + (["op", "rop"] if sym else []) + ["kw"]
        form = g.form(name, forms, sym=sym)
        if form == "rop":
            return form, f"{g.scalar(x)} {sym} {x.e}", False
        y = g.partner(x)
        if name == "copysign":
            y = _nan_free(g, y)
        if form == "op":
            return form, f"{x.e} {sym} {y}", False
        if form == "kw":
            return form, f"vt.{name}({x.e}, other={y})", False
        extra = ""
        if name in ("add", "sub") and g.c.chance(0.25):
            extra = f", alpha={g.c.pick(['2', '0.5', '-1'])}"
        if name == "div" and g.c.chance(0.3):
            extra = f", rounding_mode={g.c.pick(['None', repr('floor'), repr('trunc')])}"
        return form, g.call(form, name, x.e, y + extra), False
    return gen


def _nan_free(g, y: str) -> str:
    """``y`` with its NaNs as zeros when it is a computed tensor holding NaN: the sign bit
    of a computed NaN is not specified (x86's log10(-1) sets it, PyTorch's vectorized
    kernels do not), and copysign copies it."""
    for r in g.refs:
        if r.e == y and r.t.is_floating_point() and bool(r.t.isnan().any()):
            return f"{y}.masked_fill({y}.isnan(), 0)"
    return y


for _n, _s in BINARY.items():
    op(_n, needs=(f"vt.{_n}",), weight=1.5 if _s else 0.7)(_binary(_n, _s))

INPLACE_BINARY = ["add_", "sub_", "mul_", "div_", "pow_", "remainder_", "fmod_",
                  "floor_divide_", "clamp_min_", "lerp_"]


def _inplace_binary(name):
    def gen(g, x):
        target = g.view_target(x)
        if name == "lerp_":
            return "m", f"{target}.lerp_({g.partner(x, scalar=False)}, 0.5)", True
        y = g.partner(x)
        if name in ("add_", "sub_") and g.c.chance(0.3):
            y += ", alpha=2"
        return "m", f"{target}.{name}({y})", True
    return gen


for _n in INPLACE_BINARY:
    op(_n, needs=(f"Tensor.{_n}",), weight=1.0)(_inplace_binary(_n))


@op("augmented", needs=("Tensor.__iadd__",))
def _augmented(g, x):
    sym = g.c.pick(["+=", "*=", "-=", "/=", "%=", "**="])
    return "op", f"{x.e} {sym} {g.partner(x)}", True


@op("where", needs=("vt.where",))
def _where(g, x):
    cond = g.mask(x)
    form = g.c.pick(["f", "m", "1arg"])
    if form == "m":
        return form, f"{x.e}.where({cond}, {g.partner(x)})", False
    if form == "1arg":
        return form, f"vt.where({cond})", False
    return form, f"vt.where({cond}, {x.e}, {g.partner(x)})", False


@op("clamp", needs=("vt.clamp",))
def _clamp(g, x):
    lo, hi = g.c.pick([("-1", "1"), ("0.5", "None"), ("None", "2"), ("2", "-1"),
                       ("g.partner", "None"), ("-1.5", "g.partner")])
    lo = g.partner(x) if lo == "g.partner" else lo
    hi = g.partner(x) if hi == "g.partner" else hi
    form = g.c.pick(["f", "m", "kw", "clip", "inplace"])
    if form == "f":
        return form, f"vt.clamp({x.e}, {lo}, {hi})", False
    if form == "m":
        return form, f"{x.e}.clamp({lo}, {hi})", False
    if form == "clip":
        return form, f"{x.e}.clip(min={lo}, max={hi})", False
    if form == "inplace":
        return form, f"{g.view_target(x)}.clamp_({lo}, {hi})", True
    return form, f"vt.clamp({x.e}, min={lo}, max={hi})", False


@op("clamp_min/max", needs=("vt.clamp_min",), weight=0.4)
def _clamp_min(g, x):
    name = g.c.pick(["clamp_min", "clamp_max"])
    return name, f"vt.{name}({x.e}, {g.scalar(x)})", False


@op("lerp", needs=("vt.lerp",), weight=0.4)
def _lerp(g, x):
    w = g.c.pick(["0.5", "0.25", "partner"])
    w = g.partner(x, scalar=False) if w == "partner" else w
    return "f", f"vt.lerp({x.e}, {g.partner(x, scalar=False)}, {w})", False


@op("addcmul/addcdiv", needs=("vt.addcmul",), weight=0.4)
def _addcmul(g, x):
    name = g.c.pick(["addcmul", "addcdiv"])
    value = g.c.pick(["", ", value=0.5", ", value=2"])
    return name, f"vt.{name}({x.e}, {g.partner(x)}, {g.partner(x)}{value})", False


@op("masked_fill", needs=("vt.masked_fill",), weight=0.6)
def _masked_fill(g, x):
    value = g.c.pick([g.scalar(x), "0.0", "-inf", "True"])
    if g.c.chance(0.3):
        return "inplace", f"{g.view_target(x)}.masked_fill_({g.mask(x)}, {value})", True
    return "m", f"{x.e}.masked_fill({g.mask(x)}, {value})", False


@op("cast", needs=("Tensor.to",), weight=0.6)
def _cast(g, x):
    form = g.c.pick(["to", "method", "type_as"])
    dt = g.dtype_name()
    if form == "to":
        return form, f"{x.e}.to(vt.{dt})", False
    if form == "type_as":
        return form, f"{x.e}.type_as({g.partner(x, scalar=False)})", False
    return form, f"{x.e}.{g.c.pick(['float', 'double', 'half', 'long', 'int', 'bool'])}()", False


# ----------------------------------------------------------------------------- reductions

REDUCTIONS = ["sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "all",
              "any", "std", "var", "logsumexp", "norm", "nansum", "nanmean", "median",
              "count_nonzero", "aminmax"]


def _reduction(name):
    def gen(g, x):
        form = g.form(name, ("m", "f"))
        args = []
        single = name in ("max", "min", "argmax", "argmin", "median", "all", "any")
        if name == "logsumexp" or g.c.chance(0.7):
            if single or g.c.chance(0.6):
                args.append(f"dim={g.dim(x)}" if g.c.chance(0.5) else g.dim(x))
            else:
                args.append(f"dim={g.dims(x)}")
            if g.c.chance(0.4):
                args.append("keepdim=True")
        if name in ("std", "var") and g.c.chance(0.4):
            args.append(g.c.pick(["correction=0", "unbiased=False", "correction=2"]))
        if name == "sum" and g.c.chance(0.15):
            args.append(f"dtype=vt.{g.dtype_name()}")
        if name == "norm" and g.c.chance(0.4):
            args.insert(0, f"p={g.c.pick(['1', '2', 'float(inf)', '3'])}")
        operand = x.e
        if name == "median" and any(st == 0 and n > 1 for st, n in zip(x.t.stride(), x.shape)):
            # PyTorch's median along a dim reads wrong memory on an expanded (stride-0)
            # tensor (values 0 or garbage): give it the same values densely
            operand = f"{x.e}.contiguous()"
        return form, g.call(form, name, operand, ", ".join(args)), False
    return gen


for _n in REDUCTIONS:
    op(_n, needs=(f"vt.{_n}",), ties=_n in ("median",))(_reduction(_n))


@op("cumulative", needs=("vt.cumsum",), weight=0.6)
def _cumulative(g, x):
    name = g.c.pick(["cumsum", "cumprod", "logcumsumexp", "cummax"])
    return name, f"vt.{name}({x.e}, {g.dim(x)})", False


@op("softmax", needs=("vt.softmax",))
def _softmax(g, x):
    name = g.c.pick(["softmax", "log_softmax", "softmin"])
    form = g.c.pick(["F", "m", "f"])
    d = g.dim(x)
    if form == "F":
        return f"F.{name}", f"F.{name}({x.e}, dim={d})", False
    if form == "m":
        return f"m.{name}", f"{x.e}.{name}({d})", False
    return f"vt.{name}", f"vt.{name}({x.e}, {d})", False


@op("sort", needs=("vt.sort",), ties=True)
def _sort(g, x):
    form = g.c.pick(["sort", "argsort", "sort_desc", "stable"])
    d = g.dim(x)
    if form == "argsort":
        return form, f"vt.argsort({x.e}, dim={d})", False
    if form == "sort_desc":
        return form, f"{x.e}.sort(dim={d}, descending=True)", False
    if form == "stable":
        return form, f"vt.sort({x.e}, dim={d}, stable=True)", False
    return form, f"vt.sort({x.e}, {d})", False


@op("topk", needs=("vt.topk",), ties=True, weight=0.6)
def _topk(g, x):
    k = g.c.pick([1, 2, 0, 3])
    largest = g.c.pick(["", ", largest=False"])
    return "m", f"{x.e}.topk({k}, dim={g.dim(x)}{largest})", False


@op("max_dim", needs=("vt.max",), weight=0.6)
def _max_dim(g, x):
    name = g.c.pick(["max", "min"])
    return name, f"{x.e}.{name}(dim={g.dim(x)}, keepdim={g.c.pick(['False', 'True'])})", False


# ----------------------------------------------------------------------------- linear algebra

@op("matmul", needs=("vt.matmul",))
def _matmul(g, x):
    form = g.c.pick(["@T", "@", "matmul", "mm", "bmm", "mv", "dot", "outer"])
    if form == "@T":
        return form, f"{x.e} @ {x.e}.mT", False
    n = x.shape[-1] if x.ndim else 1
    if form in ("mm", "bmm"):
        return form, f"vt.{form}({x.e}, {g.inline((n, 2), x.dtype)})", False
    if form in ("mv", "dot"):
        return form, f"vt.{form}({x.e}, {g.inline((n,), x.dtype)})", False
    if form == "outer":
        return form, f"vt.outer({x.e}, {g.inline((2,), x.dtype)})", False
    shape = g.c.pick([(n, 3), (n,), (2, n, 1)])
    dtype = x.dtype if g.c.chance(0.8) else g.dtype_name()
    other = g.inline(shape, dtype)
    return form, (f"{x.e} @ {other}" if form == "@" else f"vt.matmul({x.e}, {other})"), False


# ----------------------------------------------------------------------------- movement / views

@op("reshape", needs=("vt.reshape",))
def _reshape(g, x):
    n = x.numel
    shapes = [(-1,), (n,), (1, n), (n, 1), (-1, 1)]
    shapes += [tuple(reversed(x.shape))] if x.ndim else [()]
    shape = g.c.pick(shapes)
    form = g.c.pick(["reshape", "view", "f", "varargs"])
    if form == "f":
        return form, f"vt.reshape({x.e}, {shape})", False
    if form == "varargs" and shape:
        return form, f"{x.e}.reshape({', '.join(map(str, shape))})", False
    return form, f"{x.e}.{'view' if form == 'view' else 'reshape'}({shape})", False


@op("permute", needs=("vt.permute",))
def _permute(g, x):
    perm = list(range(x.ndim))
    for i in range(len(perm) - 1, 0, -1):
        j = g.c.choice(i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    form = g.c.pick(["m", "f", "movedim"])
    if form == "movedim" and x.ndim:
        return form, f"{x.e}.movedim({g.dim(x)}, {g.dim(x)})", False
    if form == "f":
        return form, f"vt.permute({x.e}, {tuple(perm)})", False
    return form, f"{x.e}.permute({', '.join(map(str, perm))})", False


@op("transpose", needs=("vt.transpose",))
def _transpose(g, x):
    form = g.c.pick(["transpose", "t", "mT", "T", "swapaxes"])
    if form == "transpose":
        return form, f"{x.e}.transpose({g.dim(x)}, {g.dim(x)})", False
    if form == "swapaxes":
        return form, f"vt.transpose({x.e}, {g.dim(x)}, {g.dim(x)})", False
    if form == "t":
        return form, f"{x.e}.t()", False
    return form, f"{x.e}.{form}", False


@op("expand", needs=("Tensor.expand",), weight=0.7)
def _expand(g, x):
    shape = tuple(2 if s == 1 and g.c.chance(0.5) else s for s in x.shape)
    if g.c.chance(0.5):
        shape = (2,) + shape
    form = g.c.pick(["expand", "expand_-1", "broadcast_to"])
    if form == "expand_-1" and x.ndim:
        shape = shape[:-1] + (-1,)
    if form == "broadcast_to":
        return form, f"vt.broadcast_to({x.e}, {shape})", False
    return form, f"{x.e}.expand({shape})", False


@op("squeeze", needs=("vt.squeeze",))
def _squeeze(g, x):
    form = g.c.pick(["unsqueeze", "squeeze", "squeeze_dim", "None", "flatten", "unflatten"])
    if form == "unsqueeze":
        return form, f"{x.e}.unsqueeze({g.dim(x, extra=1)})", False
    if form == "squeeze_dim":
        return form, f"vt.squeeze({x.e}, {g.dim(x)})", False
    if form == "None":
        return form, f"{x.e}[None]", False
    if form == "flatten":
        return form, f"{x.e}.flatten({g.dim(x)})", False
    if form == "unflatten" and x.ndim and x.shape[0] % 2 == 0:
        return form, f"{x.e}.unflatten(0, (2, -1))", False
    return form, f"{x.e}.squeeze()", False


@op("narrow/select", needs=("vt.narrow", "vt.select"))
def _narrow(g, x):
    d = g.dim(x)
    size = g.size(x, d)
    start = g.c.choice(size + 1) - (size if g.c.chance(0.2) else 0)
    form = g.c.pick(["narrow", "select", "f_select"])
    if form == "narrow":
        return form, f"{x.e}.narrow({d}, {start}, {g.c.choice(size - start + 1)})", False
    idx = min(start, size - 1) if g.c.chance(0.9) else size
    return form, (f"{x.e}.select({d}, {idx})" if form == "select"
                  else f"vt.select({x.e}, {d}, {idx})"), False


@op("diagonal", needs=("vt.diagonal",), weight=0.5)
def _diagonal(g, x):
    offset = g.c.pick([0, 1, -1, 5])
    form = g.c.pick(["m", "f", "kw"])
    if form == "kw":
        return form, f"{x.e}.diagonal(offset={offset}, dim1={g.dim(x)}, dim2={g.dim(x)})", False
    return form, g.call(form, "diagonal", x.e, str(offset)), False


@op("split", needs=("vt.split", "vt.chunk"))
def _split(g, x):
    d = g.dim(x)
    size = g.size(x, d)
    form = g.c.pick(["split", "chunk", "unbind", "sections", "tensor_split"])
    if form == "chunk":
        return form, f"{x.e}.chunk({g.c.pick([2, 1, 3])}, {d})", False
    if form == "unbind":
        return form, f"{x.e}.unbind({d})", False
    if form == "sections" and size:
        first = g.c.choice(size + 1)
        return form, f"vt.split({x.e}, [{first}, {size - first}], dim={d})", False
    if form == "tensor_split":
        return form, f"vt.tensor_split({x.e}, {g.c.pick([2, 3])}, dim={d})", False
    return form, f"{x.e}.split({g.c.pick([1, 2, 3])}, dim={d})", False


@op("slice", needs=("Tensor.__getitem__",), weight=2.0)
def _slice(g, x):
    return "getitem", f"{x.e}[{g.index(x)}]", False


@op("flip/roll", needs=("vt.flip", "vt.roll"), weight=0.6)
def _flip(g, x):
    form = g.c.pick(["flip", "roll", "roll_flat", "tril", "triu", "repeat", "tile", "rot90"])
    if form == "flip":
        return form, f"vt.flip({x.e}, ({g.dim(x)},))", False
    if form == "roll":
        return form, f"vt.roll({x.e}, {g.c.pick([1, -1, 2])}, {g.dim(x)})", False
    if form == "roll_flat":
        return form, f"{x.e}.roll(1)", False
    if form in ("tril", "triu"):
        return form, f"vt.{form}({x.e}, {g.c.pick([0, 1, -1])})", False
    if form == "repeat":
        reps = tuple(g.c.pick([1, 2]) for _ in range(x.ndim + g.c.choice(2)))
        return form, f"{x.e}.repeat{reps if len(reps) != 1 else '(' + str(reps[0]) + ')'}", False
    if form == "rot90":
        return form, f"vt.rot90({x.e})", False
    return form, f"vt.tile({x.e}, {tuple(g.c.pick([1, 2]) for _ in range(x.ndim))})", False


@op("copy", needs=("Tensor.clone",), weight=0.5)
def _copy(g, x):
    form = g.c.pick(["clone", "contiguous", "detach"])
    return form, f"{x.e}.{form}()", False


@op("gather/index_select", needs=("vt.gather", "vt.index_select"), weight=0.8)
def _gather(g, x):
    d = g.dim(x)
    size = g.size(x, d)
    form = g.c.pick(["index_select", "gather", "take_along_dim"])
    if form == "index_select":
        return form, f"vt.index_select({x.e}, {d}, {g.index_tensor(size, (2,))})", False
    shape = tuple(s if i != g.axis(x, d) else 2 for i, s in enumerate(x.shape))
    # PyTorch's take_along_dim does not check its indices (it reads past the row, or
    # element 0 along a dim of size 1): draw no out-of-range index for it
    idx = g.index_tensor(size, shape, negative=False, out_of_range=form == "gather")
    if form == "gather":
        return form, f"vt.gather({x.e}, {d}, {idx})", False
    return form, f"vt.take_along_dim({x.e}, {idx}, dim={d})", False


@op("cat/stack", needs=("vt.cat", "vt.stack"))
def _cat(g, x):
    other = g.partner(x, scalar=False)
    form = g.c.pick(["cat", "stack", "cat_self", "hstack", "vstack", "concat"])
    d = g.dim(x, extra=1 if form == "stack" else 0)
    if form == "cat_self":
        return form, f"vt.cat([{x.e}, {x.e}], dim={d})", False
    if form in ("hstack", "vstack"):
        return form, f"vt.{form}(({x.e}, {other}))", False
    name = "stack" if form == "stack" else form
    return form, f"vt.{name}([{x.e}, {other}], {d})", False


# ----------------------------------------------------------------------------- in-place

@op("fill_/zero_", needs=("Tensor.fill_", "Tensor.zero_"), weight=1.2)
def _fill(g, x):
    target = g.view_target(x)
    if g.c.chance(0.4):
        return "zero_", f"{target}.zero_()", True
    return "fill_", f"{target}.fill_({g.scalar(x)})", True


@op("copy_", needs=("Tensor.copy_",), weight=1.0)
def _copy_(g, x):
    return "m", f"{g.view_target(x)}.copy_({g.partner(x, scalar=False)})", True


@op("setitem", needs=("Tensor.__setitem__",), weight=2.0)
def _setitem(g, x):
    index = g.index(x) if g.c.chance(0.7) else g.mask(x)
    value = g.scalar(x) if g.c.chance(0.5) else g.partner(x, scalar=False)
    return "setitem", f"{x.e}[{index}] = {value}", True


@op("index_put", needs=("Tensor.index_add_",), weight=0.4)
def _index_put(g, x):
    d = g.dim(x)
    size = g.size(x, d)
    idx = g.index_tensor(size, (2,), negative=False)
    form = g.c.pick(["index_add_", "index_add", "index_fill_", "index_copy_"])
    src_shape = tuple(s if i != g.axis(x, d) else 2 for i, s in enumerate(x.shape))
    src = g.inline(src_shape, x.dtype)
    if form == "index_fill_":
        return form, f"{g.view_target(x)}.index_fill_({d}, {idx}, {g.scalar(x)})", True
    if form == "index_add":
        return form, f"vt.index_add({x.e}, {d}, {idx}, {src})", False
    return form, f"{g.view_target(x)}.{form}({d}, {idx}, {src})", True


def missing_in_volta() -> list[str]:
    """Names of table ops that Volta (or PyTorch) lacks: not generated until both have
    them."""
    return sorted(o.name for o in OPS if not all(_has(n) for n in o.needs))


def available_ops() -> list[Op]:
    """The table ops whose attributes Volta has."""
    return [o for o in OPS if all(_has(n) for n in o.needs)]


def has(path: str) -> bool:
    """Whether Volta has ``path`` (``"vt.name"``, ``"F.name"``, ``"Tensor.name"``)."""
    return _has(path)
