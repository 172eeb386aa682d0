"""Random programs written against PyTorch's API, as source that runs on both sides.

A :class:`Program` is a few lines that make the inputs and 1-8 statements, each one
op in one of PyTorch's call forms. The source names the library ``vt``: the runner
binds ``vt`` to ``torch`` or to ``volta_core``, so the failing program printed for a
bug report is runnable Volta code as it stands. ``@DEV`` stands for the device.

Generation runs each new statement on PyTorch at once: PyTorch says which shapes and
dtypes the next op sees, and whether a statement is valid (see ``ops.py``).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import torch

from .choices import Choices
from .ops import OPS, Op, available_ops, has

FLOAT_DTYPES = ("float32", "float64", "float16", "bfloat16")
# Most frequent first (choice 0 is float32). uint32 is left out: PyTorch CPU has few
# kernels for it (see docs/reference-net.md).
DTYPES = ("float32", "float64", "int64", "float16", "bool", "bfloat16", "int32", "uint8",
          "int8", "int16")
_DTYPE_WEIGHTS = (8, 3, 3, 1.5, 1.5, 1.5, 1, 1, 0.7, 0.5)

_FLOAT_POOL = (1.0, -1.0, 2.0, 0.5, -2.5, 3.0, 0.0, -0.5, 1.5, 4.0, -3.0, 0.25, -0.0, 7.0,
               -0.75, 10.0, 6.5)
_SPECIALS = ("nan", "inf", "-inf")

HEADER = 'import numpy as np\nnan, inf = float("nan"), float("inf")\n'


def weights_fn(lib):
    """``w(t)``: fixed, non-zero, uneven weights for the loss ``sum((t * w(t)).sum())``."""
    def w(t):
        n = t.numel()
        # small integers and halves: exact in float32, which every device has
        base = lib.arange(n, dtype=lib.float32, device=t.device) % 5 - 1.5
        return base.reshape(tuple(t.shape))
    return w


def namespace(lib) -> dict:
    """Globals a program runs in: ``vt`` is ``torch`` or ``volta_core``."""
    return {"vt": lib, "F": lib.nn.functional, "np": np, "nan": math.nan, "inf": math.inf,
            "w": weights_fn(lib)}


@dataclass
class Ref:
    """An operand: a source expression and what PyTorch says it holds."""

    e: str
    t: torch.Tensor

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.t.shape)

    @property
    def ndim(self) -> int:
        return self.t.ndim

    @property
    def numel(self) -> int:
        return self.t.numel()

    @property
    def dtype(self) -> str:
        return str(self.t.dtype).removeprefix("torch.")


@dataclass
class Program:
    """Inputs and statements; ``ops[i]``/``forms[i]`` name statement ``i``'s op."""

    inputs: list[str]
    stmts: list[str] = field(default_factory=list)
    ops: list[str] = field(default_factory=list)
    forms: list[str] = field(default_factory=list)
    outputs: list[str | None] = field(default_factory=list)
    dtypes: list[str] = field(default_factory=list)
    leaves: list[str] = field(default_factory=list)
    input_dtypes: list[str] = field(default_factory=list)
    # (statement index, input expression, dim) of an op whose index output is
    # unspecified between ties: checked for validity, not equality.
    tie_check: tuple[int, str, int | None] | None = None

    def prefix(self, k: int | None) -> Program:
        """The program cut after statement ``k`` (without the tie check)."""
        return Program(self.inputs, self.stmts[:k], self.ops[:k], self.forms[:k],
                       self.outputs[:k], self.dtypes[:k], self.leaves, self.input_dtypes)

    def select(self, keep: list[int]) -> Program:
        """The program with only statements ``keep`` (no tie check unless kept)."""
        tie = self.tie_check
        if tie is not None:
            tie = (keep.index(tie[0]),) + tie[1:] if tie[0] in keep else None
        return Program(self.inputs, [self.stmts[j] for j in keep], [self.ops[j] for j in keep],
                       [self.forms[j] for j in keep], [self.outputs[j] for j in keep],
                       [self.dtypes[j] for j in keep], self.leaves, self.input_dtypes, tie)

    def with_input(self, i: int, line: str) -> Program:
        """The program with input line ``i`` replaced."""
        inputs = self.inputs[:i] + [line] + self.inputs[i + 1:]
        return Program(inputs, self.stmts, self.ops, self.forms, self.outputs, self.dtypes,
                       self.leaves, self.input_dtypes, self.tie_check)

    def without_input(self, line: str) -> Program | None:
        """The program without input ``line`` (None for a line others need)."""
        name = line.split("=")[0].strip().rstrip("_")
        if name == "a" or line not in self.inputs:
            return None
        inputs = [x for x in self.inputs if not x.startswith((f"{name}_ ", f"{name} "))]
        leaves = [x for x in self.leaves if x != f"{name}_"]
        i = self.inputs.index(line)
        return Program(inputs, self.stmts, self.ops, self.forms, self.outputs, self.dtypes,
                       leaves, self.input_dtypes, self.tie_check) if i else None

    def source(self, device: str = "cpu", upto: int | None = None) -> str:
        """The program's lines for ``device`` (statements up to ``upto``)."""
        lines = self.inputs + self.stmts[:upto]
        dev = "" if device == "cpu" else f", device={device!r}"
        return "\n".join(line.replace(", device=@DEV", dev) for line in lines)


class Gen:
    """The helpers op generators call: operands, dims, scalars, indices, literals."""

    def __init__(self, c: Choices, refs: list[Ref], dtypes: tuple[str, ...]) -> None:
        self.c = c
        self.refs = refs
        self.dtypes = dtypes
        self.last_dim: int | None = None

    # -- forms
    def form(self, name: str, forms, sym: str | None = None) -> str:
        ok = []
        for f in forms:
            if f in ("f", "kw"):
                need = f"vt.{name}"
            elif f == "m":
                need = f"Tensor.{name}"
            elif f == "F":
                need = f"F.{name}"
            else:
                dunder = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "**": "pow",
                          "%": "mod", "//": "floordiv", "&": "and", "|": "or", "^": "xor",
                          "==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt",
                          ">=": "ge"}[sym]
                need = f"Tensor.__{'r' if f == 'rop' else ''}{dunder}__"
                if f == "rop" and dunder in ("eq", "ne", "lt", "le", "gt", "ge"):
                    need = f"Tensor.__{dunder}__"
            if has(need):
                ok.append(f)
        return self.c.pick(ok or list(forms))

    @staticmethod
    def call(form: str, name: str, x: str, args: str = "") -> str:
        sep = ", " if args else ""
        if form == "m":
            return f"{x}.{name}({args})"
        if form == "F":
            return f"F.{name}({x}{sep}{args})"
        return f"vt.{name}({x}{sep}{args})"

    # -- dtypes and literals
    def dtype_name(self) -> str:
        pairs = [(w, d) for w, d in zip(_DTYPE_WEIGHTS, DTYPES) if d in self.dtypes]
        return self.c.weighted(pairs)

    def values(self, n: int, dtype: str) -> list:
        c = self.c
        out = []
        special = c.chance(0.2)
        for _ in range(n):
            if dtype == "bool":
                out.append(bool(c.choice(2)))
            elif dtype in FLOAT_DTYPES:
                if special and c.chance(0.25):
                    out.append(c.pick(_SPECIALS))
                elif c.chance(0.3):
                    out.append((c.choice(257) - 128) / 32)
                else:
                    out.append(c.pick(_FLOAT_POOL))
            elif dtype == "uint8":
                out.append(c.pick([1, 2, 0, 3, 5, 200, 255]))
            elif dtype == "int8":
                out.append(c.pick([1, -1, 2, 0, 3, -5, 127, -128]))
            else:
                out.append(c.pick([1, -1, 2, 0, 3, -3, 5, 4, -7]))
        return out

    def literal(self, shape: tuple[int, ...], dtype: str) -> str:
        flat = self.values(math.prod(shape), dtype)
        nested = np.array(flat, dtype=object).reshape(shape).tolist() if shape else flat[0]
        return repr(nested).replace("'", "")

    def inline(self, shape, dtype: str) -> str:
        return f"vt.tensor({self.literal(tuple(shape), dtype)}, dtype=vt.{dtype}, device=@DEV)"

    def scalar(self, x: Ref | None = None) -> str:
        return self.c.weighted([
            (3, self.c.pick(["2", "-1", "0", "3", "1"])),
            (3, self.c.pick(["0.5", "-1.5", "2.0", "0.25", "-0.0"])),
            (0.6, self.c.pick(["True", "False"])),
            (1, self.c.pick(["np.float32(2.5)", "np.float64(0.5)", "np.int64(3)",
                             "np.float16(1.5)"])),
            (0.6, self.c.pick(["nan", "inf", "-inf"])),
            (0.5, self.c.pick(["300", "-4", "1e10"])),
        ])

    # -- shapes and operands
    def partner_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        c = self.c
        kind = c.pick(["same", "drop", "ones", "other"])
        if kind == "same":
            return shape
        if kind == "drop":
            return shape[c.choice(len(shape) + 1):]
        if kind == "ones":
            return tuple(1 if c.chance(0.5) else s for s in shape)
        return tuple(c.pick([2, 1, 3]) for _ in range(c.choice(3)))

    def partner(self, x: Ref, scalar: bool = True) -> str:
        c = self.c
        kinds = [(4, "inline"), (3, "ref")] + ([(2.5, "scalar")] if scalar else [])
        kind = c.weighted(kinds)
        if kind == "ref" and len(self.refs) > 1:
            return self.refs[c.choice(len(self.refs))].e
        if kind == "scalar":
            return self.scalar(x)
        dtype = x.dtype if c.chance(0.6) else self.dtype_name()
        if dtype not in self.dtypes:
            dtype = "float32"
        return self.inline(self.partner_shape(x.shape), dtype)

    def dim(self, x: Ref, extra: int = 0) -> str:
        n = x.ndim + extra
        if self.c.chance(0.04):
            d = n + 1
        else:
            d = self.c.choice(max(n, 1))
            if self.c.chance(0.3):
                d -= max(n, 1)
        self.last_dim = d
        return str(d)

    @staticmethod
    def axis(x: Ref, d: str) -> int:
        """Dim ``d`` as a non-negative axis (-1 when out of range)."""
        i = int(d)
        return i % x.ndim if -x.ndim <= i < x.ndim else -1

    def size(self, x: Ref, d: str) -> int:
        """Size of dim ``d`` of ``x`` (1 when out of range or 0-d)."""
        i = self.axis(x, d)
        return x.shape[i] if i >= 0 else 1

    def dims(self, x: Ref) -> str:
        n = x.ndim
        picked = sorted({self.c.choice(max(n, 1)) for _ in range(1 + self.c.choice(2))})
        if self.c.chance(0.3) and picked:
            picked[-1] -= max(n, 1)
        return "(" + ", ".join(map(str, picked)) + ("," if len(picked) == 1 else "") + ")"

    def index_tensor(self, size: int, shape, negative: bool = True,
                     out_of_range: bool = True) -> str:
        lo = -size if negative else 0
        flat = []
        for _ in range(math.prod(shape)):
            if self.c.chance(0.03) and out_of_range or size == 0:
                flat.append(size)
            else:
                flat.append(lo + self.c.choice(size - lo))
        nested = np.array(flat, dtype=object).reshape(shape).tolist() if shape else flat[0]
        return f"vt.tensor({nested!r}, device=@DEV)"

    def mask(self, x: Ref) -> str:
        kind = self.c.pick(["gt", "inline", "isnan", "row"])
        if kind == "gt":
            return f"{x.e} > 0"
        if kind == "isnan":
            return f"{x.e} != {x.e}"
        if kind == "row" and x.ndim:
            return self.inline((x.shape[0],), "bool")
        return self.inline(x.shape, "bool")

    def index(self, x: Ref) -> str:
        c = self.c
        items = []
        k = 1 + c.choice(max(x.ndim, 1))
        for i in range(k):
            size = x.shape[i] if i < x.ndim else 1
            kind = c.weighted([(3, "slice"), (2, "int"), (1, "ellipsis"), (0.7, "none"),
                               (1, "tensor"), (0.5, "mask")])
            if kind == "int":
                items.append(str(c.choice(size + 1) - (size if c.chance(0.3) else 0)))
            elif kind == "slice":
                start = c.pick(["", "1", "-1", "0", "-2"])
                stop = c.pick(["", "2", "-1", "5"])
                step = c.pick(["", ":2", ":3"])
                items.append(f"{start}:{stop}{step}")
            elif kind == "ellipsis" and "..." not in items:
                items.append("...")
            elif kind == "none":
                items.append("None")
            elif kind == "tensor":
                items.append(self.index_tensor(size, (c.pick([2, 1, 3]),)))
            else:
                items.append(self.inline((size,), "bool"))
        return ", ".join(items)

    def view_target(self, x: Ref) -> str:
        kind = self.c.weighted([(4, "self"), (1, "int"), (1, "slice"), (0.7, "t"),
                                (0.5, "diagonal"), (0.5, "view"), (0.4, "unsqueeze"),
                                (0.4, "step")])
        if kind == "self" or x.ndim == 0:
            return x.e
        if kind == "int":
            return f"{x.e}[{self.c.choice(max(x.shape[0], 1))}]"
        if kind == "slice":
            return f"{x.e}[:1]"
        if kind == "t" and x.ndim == 2:
            return f"{x.e}.t()"
        if kind == "diagonal" and x.ndim >= 2:
            return f"{x.e}.diagonal()"
        if kind == "view":
            return f"{x.e}.view(-1)"
        if kind == "unsqueeze":
            return f"{x.e}.unsqueeze(0)"
        return f"{x.e}[..., ::2]"


def _torch_dtype_has_ties(t: torch.Tensor) -> bool:
    flat = t.detach().reshape(-1)
    if flat.numel() < 2:
        return False
    return torch.unique(flat).numel() < flat.numel() or bool(torch.isnan(flat).any())


def _run_torch(src: str, ns: dict) -> BaseException | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(src, "<program>", "exec"), ns)
    except Exception as exc:  # PyTorch refusing the statement is information
        exc.__traceback__ = None
        return exc
    return None


def _tensors_of(ns: dict, name: str) -> list[Ref]:
    value = ns[name]
    if isinstance(value, torch.Tensor):
        return [Ref(name, value)]
    if isinstance(value, tuple | list):
        return [Ref(f"{name}[{i}]", v) for i, v in enumerate(value)
                if isinstance(v, torch.Tensor)]
    return []


def generate(c: Choices, dtypes: tuple[str, ...] = DTYPES, max_ops: int = 8,
             ops: list[Op] | None = None) -> Program:
    """Draw one program from ``c`` (PyTorch CPU guides the draw)."""
    table = ops if ops is not None else available_ops()
    weights = [(o.weight, o) for o in table]
    g = Gen(c, [], dtypes)
    ns = namespace(torch)
    grad = c.chance(0.5)
    prog = Program(inputs=[])
    names = ["a", "b", "c"]
    first_shape: tuple[int, ...] | None = None
    first_dtype = None
    for i in range(c.weighted([(3, 1), (2, 2), (1, 3)])):
        if first_shape is None or c.chance(0.4):
            rank = c.weighted([(3, 1), (4, 2), (1.5, 0), (2, 3), (1, 4)])
            shape = tuple(c.weighted([(3, 2), (3, 3), (2, 1), (1.5, 4), (0.5, 0), (0.7, 5)])
                          for _ in range(rank))
        else:
            shape = g.partner_shape(first_shape)
        dtype = first_dtype if first_dtype and c.chance(0.6) else g.dtype_name()
        first_shape = first_shape if first_shape is not None else shape
        first_dtype = first_dtype or dtype
        rg = grad and dtype in FLOAT_DTYPES
        flag = ", requires_grad=True" if rg else ""
        name = names[i]
        layout = c.weighted([(5, "contiguous"), (1.5, "mT"), (1.5, "step"), (0.5, "expand")])
        if layout == "mT" and len(shape) >= 2:
            base = shape[:-2] + (shape[-1], shape[-2])
            prog.inputs.append(f"{name}_ = vt.tensor({g.literal(base, dtype)}, "
                               f"dtype=vt.{dtype}, device=@DEV{flag})")
            prog.inputs.append(f"{name} = {name}_.mT")
        elif layout == "step" and len(shape) >= 1:
            base = (shape[0] * 2,) + shape[1:]
            prog.inputs.append(f"{name}_ = vt.tensor({g.literal(base, dtype)}, "
                               f"dtype=vt.{dtype}, device=@DEV{flag})")
            prog.inputs.append(f"{name} = {name}_[::2]")
        elif layout == "expand" and 1 in shape:
            base = tuple(1 if s == 1 else s for s in shape)
            full = tuple(3 if s == 1 else s for s in shape)
            prog.inputs.append(f"{name}_ = vt.tensor({g.literal(base, dtype)}, "
                               f"dtype=vt.{dtype}, device=@DEV{flag})")
            prog.inputs.append(f"{name} = {name}_.expand({full})")
        else:
            prog.inputs.append(f"{name}_ = {name} = vt.tensor({g.literal(shape, dtype)}, "
                               f"dtype=vt.{dtype}, device=@DEV{flag})")
        if rg:
            prog.leaves.append(f"{name}_")
        prog.input_dtypes.append(dtype)
    exc = _run_torch(prog.source(), ns)
    if exc is not None:  # an input PyTorch cannot make: fall back to the simplest one
        prog = Program(inputs=["a_ = a = vt.tensor([1.0, 2.0], dtype=vt.float32, "
                               "device=@DEV)"], input_dtypes=["float32"])
        ns = namespace(torch)
        _run_torch(prog.source(), ns)
    refs = [r for n in names[:len(prog.inputs)] if n in ns for r in _tensors_of(ns, n)]
    n_ops = 1 + c.choice(max_ops)
    for step in range(n_ops):
        for _attempt in range(12):
            g.refs = refs
            x = refs[-1] if c.chance(0.5) else refs[c.choice(len(refs))]
            the_op = c.weighted(weights)
            g.last_dim = None
            form, src, inplace = the_op.gen(g, x)
            out = None if inplace else f"v{step}"
            stmt = src if inplace else f"{out} = {src}"
            tie = the_op.ties and form != "stable" and _torch_dtype_has_ties(x.t)
            exc = _run_torch(stmt, ns)
            if exc is not None and not c.chance(0.25):
                continue
            prog.stmts.append(stmt)
            prog.ops.append(the_op.name)
            prog.forms.append(form)
            prog.outputs.append(out)
            prog.dtypes.append(x.dtype)
            if exc is not None:
                return prog
            if tie:  # ties: the last statement, checked for validity only
                prog.tie_check = (len(prog.stmts) - 1, x.e, g.last_dim)
                return prog
            if out is not None:
                refs = refs + _tensors_of(ns, out)
            break
    return prog


__all__ = ["DTYPES", "FLOAT_DTYPES", "HEADER", "OPS", "Gen", "Program", "Ref", "generate",
           "namespace"]
