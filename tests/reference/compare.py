"""Run a program on PyTorch CPU and on Volta, and say where they disagree.

The verdict compares, in order: which statement raises (both raising at the same
statement agree); every live tensor after the last statement (inputs and results, so
a write through a view must show in its base and in every other view); dtypes,
shapes and values (per-dtype tolerances, NaN equals NaN); NumPy warnings leaking to
the user; then the gradients of every float leaf, from the backward of a weighted
sum of every float result that requires grad.

A mismatch is attributed to the first statement after which the two sides differ
(found by replaying both step by step). When the inputs of that statement already
differed within tolerance (rounding carried along a chain), the statement is run
again on PyTorch with Volta's inputs; if that agrees, the difference is rounding
drift, not a bug, and the program counts as agreeing.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from functools import cache

import numpy as np
import torch

import volta_core as vt

from .program import HEADER, Program, namespace

# (rtol, atol) per dtype: a few units in the last place of each format.
TOLERANCES = {"float64": (1e-12, 1e-13), "float32": (2e-5, 1e-6), "float16": (5e-3, 1e-3),
              "bfloat16": (4e-2, 1e-2)}
GRAD_SLACK = 10.0  # gradients go through more rounding than forward values


@dataclass
class Mismatch:
    """One disagreement: the statement's op and what differs."""

    op: str
    form: str
    kind: str          # "value", "dtype", "shape", "grad", "silent acceptance", ...
    dtype: str         # dtype of the op's main input, "" when unknown
    stmt: int          # statement index, -1 for the inputs, len(stmts) for backward
    detail: str

    @property
    def signature(self) -> str:
        """``kind: op[form] dtype``, the key the known-open list matches.

        The dtype is coarse (``float`` for float32/float64, ``int`` for the signed
        integers) so one bug is one signature across the dtypes it hits alike.
        """
        return f"{self.kind}: {self.op}[{self.form}] {_DTYPE_CLASS.get(self.dtype, self.dtype)}"


_DTYPE_CLASS = {"float32": "float", "float64": "float", "int8": "int", "int16": "int",
                "int32": "int", "int64": "int"}


@dataclass
class Run:
    """One side's run: its namespace, where it raised, and what it warned."""

    ns: dict
    raised_at: int | None   # statement index (-1: the inputs), None: no exception
    exc: BaseException | None
    warned: list[str]


# While True, PyTorch's fresh results are made contiguous after each statement (the
# layout Volta gives every result): see _layout_only.
_CONTIGUOUS_RESULTS = False


def _exec(prog: Program, lib, device: str, upto: int | None = None,
          after_each=None) -> Run:
    if lib is torch and _CONTIGUOUS_RESULTS and after_each is None:
        def after_each(i, ns):
            _make_contiguous(ns, prog.outputs[i])
    ns = namespace(lib)
    quiet = lib is torch
    with warnings.catch_warnings(record=True) as caught:
        if quiet:
            warnings.simplefilter("ignore")
        else:  # behind the filters in force: a warning Volta silences is not the user's
            warnings.simplefilter("always", append=True)
        try:
            exec(compile(prog.source(device, upto=0), "<inputs>", "exec"), ns)
        except Exception as exc:
            return Run(ns, -1, _bare(exc), [])
        for i, stmt in enumerate(prog.stmts[:upto]):
            try:
                exec(compile(stmt.replace(", device=@DEV", _dev(device)), "<program>",
                             "exec"), ns)
            except Exception as exc:
                return Run(ns, i, _bare(exc), _warnings(caught))
            if after_each is not None:
                after_each(i, ns)
        return Run(ns, None, None, _warnings(caught))


def _make_contiguous(ns: dict, out: str | None) -> None:
    """Replace PyTorch's result ``out`` by a contiguous copy when it is a fresh tensor
    (sharing memory with no other named tensor) that PyTorch laid out with strides."""
    value = ns.get(out) if out else None
    parts = list(value) if isinstance(value, tuple) else [value]
    if not parts or not all(isinstance(p, torch.Tensor) for p in parts):
        return
    if all(p.is_contiguous() for p in parts):
        return
    mine = {p.untyped_storage().data_ptr() for p in parts}
    for name, other in ns.items():
        others = other if isinstance(other, tuple | list) else [other]
        if name != out and any(isinstance(o, torch.Tensor) and o.untyped_storage().data_ptr()
                               in mine for o in others):
            return  # a view of a named tensor: its layout is not a choice
    # in place (.data): the tensor stays the one its op's backward saved, so an in-place
    # change of it is still seen there
    for p in parts:
        if not p.is_contiguous():
            p.data = p.data.contiguous()


def _bare(exc: BaseException) -> BaseException:
    """The exception without its traceback: frames would keep every tensor of the
    program alive in a reference cycle, to be freed later by the cyclic collector."""
    exc.__traceback__ = None
    exc.__context__ = exc.__cause__ = None
    return exc


def _dev(device: str) -> str:
    return "" if device == "cpu" else f", device={device!r}"


def _warnings(caught) -> list[str]:
    return [f"{w.category.__name__}: {w.message}" for w in caught
            if issubclass(w.category, RuntimeWarning)]


# ----------------------------------------------------------------------------- snapshots

def _host(t) -> tuple[str, tuple[int, ...], np.ndarray]:
    """(dtype name, shape, values as float64 or bool) of a torch or Volta tensor."""
    if isinstance(t, torch.Tensor):
        name = str(t.dtype).removeprefix("torch.")
        d = t.detach()
        arr = d.numpy() if name == "bool" else d.to(torch.float64).numpy()
        return name, tuple(t.shape), arr
    name = t.dtype.name
    arr = np.asarray(t.detach().numpy())
    if name != "bool":
        arr = arr.astype(np.float64)
    return name, tuple(t.shape), arr


def _tensors(ns: dict, names) -> dict:
    out = {}
    for n in names:
        v = ns.get(n)
        if isinstance(v, torch.Tensor | vt.Tensor):
            out[n] = v
        elif isinstance(v, tuple | list):
            for i, item in enumerate(v):
                if isinstance(item, torch.Tensor | vt.Tensor):
                    out[f"{n}[{i}]"] = item
            out[f"len({n})"] = len(v)
    return out


def _names(prog: Program) -> list[str]:
    names = []
    for line in prog.inputs:
        names += [p.strip() for p in line.split("=")[:-1]]
    names += [o for o in prog.outputs if o]
    return list(dict.fromkeys(names))


def close(a: np.ndarray, b: np.ndarray, dtype: str, slack: float = 1.0) -> bool:
    """Values equal within ``dtype``'s tolerance; NaN equals NaN; infinities exact."""
    if a.shape != b.shape:
        return False
    if dtype not in TOLERANCES:
        return bool(np.array_equal(a, b))
    rtol, atol = TOLERANCES[dtype]
    with np.errstate(invalid="ignore"):
        return bool(np.allclose(a, b, rtol=rtol * slack, atol=atol * slack, equal_nan=True))


def _diff(name: str, tv, vv, slack: float = 1.0,
          tol: str | None = None) -> tuple[str, str] | None:
    """(kind, detail) where torch value ``tv`` and Volta value ``vv`` differ."""
    if isinstance(tv, int) or isinstance(vv, int):
        return None if tv == vv else ("length", f"{name}: PyTorch {tv}, Volta {vv}")
    if not isinstance(vv, vt.Tensor):
        return "type", f"{name}: PyTorch Tensor, Volta {type(vv).__name__}"
    tdt, tsh, ta = _host(tv)
    try:
        vdt, vsh, va = _host(vv)
    except Exception as exc:  # a result Volta cannot even describe is Volta's failure
        return "broken result", f"{name}: reading it raised {_exc_name(exc)}: {exc}"[:300]
    if tsh != vsh:
        return "shape", f"{name}: PyTorch shape {tsh}, Volta {vsh}"
    if tdt != vdt:
        return "dtype", f"{name}: PyTorch {tdt}, Volta {vdt}"
    if not close(ta, va, tol or tdt, slack):
        return "value", f"{name}: PyTorch {_short(ta)}, Volta {_short(va)}"
    return None


def _short(a: np.ndarray) -> str:
    text = np.array2string(a, precision=6, threshold=12, separator=", ")
    return text.replace("\n", " ")


def _state_diff(prog: Program, t_ns: dict, v_ns: dict, slack: float = 1.0):
    """First (name, kind, detail) that differs between the two namespaces."""
    tt = _tensors(t_ns, _names(prog))
    vv = _tensors(v_ns, _names(prog))
    if prog.tie_check is not None:  # unspecified order: _tie_diff checks validity
        out = prog.outputs[prog.tie_check[0]]
        for name in (out, f"{out}[1]"):
            tt.pop(name, None)
    for name, tv in tt.items():
        if name not in vv:
            base = v_ns.get(name.split("[")[0])
            if "[" in name and isinstance(base, tuple | list):
                return name, "length", f"{name}: Volta's result has {len(base)} parts"
            return name, "type", f"{name}: PyTorch gives a Tensor, Volta a {type(base).__name__}"
        d = _diff(name, tv, vv[name], slack)
        if d is not None:
            return (name,) + d
    return None


# ----------------------------------------------------------------------------- verdict

def _mismatch(prog: Program, i: int, kind: str, detail: str) -> Mismatch:
    if i < 0:
        return Mismatch("inputs", "-", kind, prog.input_dtypes[0], -1, detail)
    if i >= len(prog.stmts):
        return Mismatch("backward", "-", kind, prog.input_dtypes[0], i, detail)
    return Mismatch(prog.ops[i], prog.forms[i], kind, prog.dtypes[i], i, detail)


def _exc_name(exc: BaseException) -> str:
    return type(exc).__name__


def check(prog: Program, device: str = "cpu") -> Mismatch | None:
    """Run ``prog`` on both sides; None when they agree."""
    from .known import classify

    m = _check(prog, device)
    if m is None or classify(m.signature)[0] == "deliberate":
        return m
    if m.kind.startswith("volta raised") and _deprecated_in_torch(prog,
                                                                                  m.stmt):
        m.kind, m.detail = "deprecated in PyTorch", f"{m.kind}: {m.detail}"
    elif m.kind.startswith("volta raised") and _view_is_self(prog, m.stmt, device):
        m.kind, m.detail = "view is self", f"{m.kind}: {m.detail}"
    elif _layout_only(prog, device):
        m.kind, m.detail = "result layout", f"{m.kind}: {m.detail}"
    return m


def _deprecated_in_torch(prog: Program, k: int) -> bool:
    """Whether PyTorch ran statement ``k`` only with a deprecation warning of a write into
    an expanded tensor (index_put_ or masked_fill_: ``t[mask] = value``)."""
    if not 0 <= k < len(prog.stmts):
        return False
    ns = namespace(torch)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(compile(prog.source("cpu", upto=0), "<inputs>", "exec"), ns)
            for stmt in prog.stmts[:k + 1]:
                exec(compile(stmt.replace(", device=@DEV", ""), "<program>", "exec"), ns)
        except Exception:
            return False
    return any("on expanded tensors is deprecated" in str(w.message) for w in caught)


def _view_is_self(prog: Program, k: int, device: str) -> bool:
    """Whether statement ``k`` reads, under two names, one Volta tensor where PyTorch has
    two: a view op that changes nothing (``a.permute(0)`` of a 1-d ``a``) returns the
    tensor itself in Volta, a new view in PyTorch."""
    if not 0 <= k < len(prog.stmts):
        return False
    t, v = _exec(prog, torch, "cpu", upto=k), _exec(prog, vt, device, upto=k)
    names = sorted(set(_WORD.findall(prog.stmts[k])))
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            va, vb, ta, tb = v.ns.get(a), v.ns.get(b), t.ns.get(a), t.ns.get(b)
            if isinstance(va, vt.Tensor) and va is vb and ta is not tb:
                return True
    return False


def _layout_only(prog: Program, device: str) -> bool:
    """Whether PyTorch agrees with Volta once its fresh results are contiguous.

    PyTorch lays an elementwise result (or a clone) out like its input, so a transposed
    input gives a transposed result, on which ``.view()`` refuses and ``.contiguous()``
    or ``.reshape()`` copy; Volta's results are always contiguous, so there they view
    (and a later in-place write reaches the original). The layout also picks PyTorch's
    loops (vectorized or not), whose results can differ in the last place.
    """
    global _CONTIGUOUS_RESULTS
    _CONTIGUOUS_RESULTS = True
    from .known import classify

    try:  # agreeing, or differing only in a deliberate way (saving less, say)
        m = _check(prog, device)
        return m is None or classify(m.signature)[0] == "deliberate"
    except Exception:
        return False
    finally:
        _CONTIGUOUS_RESULTS = False


def _check(prog: Program, device: str = "cpu") -> Mismatch | None:
    t = _exec(prog, torch, "cpu")
    v = _exec(prog, vt, device)
    if t.raised_at != v.raised_at:
        if v.raised_at is not None and (t.raised_at is None or v.raised_at < t.raised_at):
            kind = ("adapter lacks a dtype" if _adapter_gap(v.exc)
                    else f"volta raised {_exc_name(v.exc)}")
            return _mismatch(prog, v.raised_at, kind, f"{_exc_name(v.exc)}: {str(v.exc)[:300]}")
        kind = "beyond PyTorch's kernels" if _kernel_gap(t.exc) else "silent acceptance"
        return _mismatch(prog, t.raised_at, kind,
                         f"PyTorch raised {_exc_name(t.exc)}: {str(t.exc)[:300]}")
    upto = t.raised_at
    if upto is not None:
        # Both refused statement `upto`; what a refused statement leaves behind is not
        # specified (PyTorch's index_add_ may write some rows before it raises), so
        # compare the state before it.
        t, v = _exec(prog, torch, "cpu", upto=upto), _exec(prog, vt, device, upto=upto)
    diff = _state_diff(prog, t.ns, v.ns)
    if diff is not None:
        return _localise(prog, device, upto)
    if v.warned:
        i = _first_warning(prog, device, upto)
        return _mismatch(prog, i, "numpy warning", v.warned[0][:300])
    if upto is None and prog.tie_check is not None:
        bad = _tie_diff(prog, t.ns, v.ns)
        if bad is not None:
            return _mismatch(prog, prog.tie_check[0], "invalid tie order", bad)
    if upto is None and prog.leaves:
        return _check_grads(prog, device, t.ns, v.ns)
    return None


def _adapter_gap(exc: BaseException | None) -> bool:
    """Volta refused a dtype the device lacks (float64 on an OpenGL adapter, say)."""
    return isinstance(exc, vt.DTypeError) and "is not supported on device" in str(exc)


def _kernel_gap(exc: BaseException | None) -> bool:
    """PyTorch refused only because its CPU build has no kernel for the dtype (or failed an
    internal assertion of its own, which is not a refusal of the operation). A missing
    derivative ('derivative for aten::floor_divide is not implemented') is a refusal:
    Volta's backward raises there too."""
    text = str(exc)
    return (isinstance(exc, NotImplementedError) or "not implemented for" in text
            or "INTERNAL ASSERT FAILED" in text)


# derivatives PyTorch 2.13 has and older releases lack (the GPU machine has 2.11)
_NEWER_DERIVATIVES = ("aten::aminmax",)


def _older_pytorch(exc: BaseException | None) -> bool:
    """PyTorch refused a derivative that Volta follows 2.13 in having."""
    version = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
    return version < (2, 13) and any(f"derivative for {op} is not implemented" in str(exc)
                                     for op in _NEWER_DERIVATIVES)


def _first_warning(prog: Program, device: str, upto: int | None) -> int:
    last = len(prog.stmts) if upto is None else upto + 1
    for k in range(last):
        if _exec(prog, vt, device, upto=k + 1).warned:
            return k
    return last - 1


def _localise(prog: Program, device: str, upto: int | None) -> Mismatch | None:
    """The first statement after which the two sides differ, or None for drift.

    Each prefix of the program runs afresh on both sides (reading values between
    statements could hide a stale view).
    """
    t0, v0 = _exec(prog, torch, "cpu", upto=0), _exec(prog, vt, device, upto=0)
    d = _state_diff(prog, t0.ns, v0.ns)
    if d is not None:
        return _mismatch(prog, -1, d[1], d[2])
    exact_before, zero_signs = True, False
    n = len(prog.stmts[:upto])
    for k in range(n):
        tk = _exec(prog, torch, "cpu", upto=k + 1)
        vk = _exec(prog, vt, device, upto=k + 1)
        d = _state_diff(prog, tk.ns, vk.ns)
        if d is None:
            exact_before = exact_before and _state_diff(prog, tk.ns, vk.ns, slack=0.0) is None
            zero_signs = zero_signs or _zero_signs_differ(prog, tk.ns, vk.ns)
            continue
        name, kind, detail = d
        if kind == "value" and not exact_before and _is_drift(prog, k, vk.ns, device):
            return None
        if kind == "value" and zero_signs and _is_drift(prog, k, vk.ns, device):
            return _mismatch(prog, k, "sign of zero", detail)
        out = prog.outputs[k]
        own = out is not None and (name == out or name.startswith(out + "["))
        if kind == "value" and own and _within_input_precision(prog, k, name, tk.ns, vk.ns):
            return None
        if kind == "value" and own and prog.ops[k] == "cast" and _undefined_cast(
                name, tk.ns, vk.ns):
            return _mismatch(prog, k, "undefined cast", detail)
        if kind == "value" and own and prog.ops[k] in _SUMS and _summation_order(
                prog.ops[k], prog.stmts[k], name, tk.ns, vk.ns):
            return _mismatch(prog, k, "summation order", detail)
        if kind == "value" and own and prog.ops[k] in ("remainder", "fmod") and (
                _subnormal_divisor(prog.stmts[k], name, tk.ns, vk.ns)):
            return _mismatch(prog, k, "subnormal divisor", detail)
        return _mismatch(prog, k, kind if own or kind != "value" else "value (aliased)", detail)
    # The whole program differed, yet its last prefix (the same program) did not.
    return _mismatch(prog, max(n - 1, 0), "flaky", "a rerun of the same program agreed")


_FLOAT_NAME = re.compile(r"\b(float16|bfloat16|float32|float64)\b")
_WORD = re.compile(r"[A-Za-z_]\w*")


def _within_input_precision(prog: Program, k: int, name: str, t_ns: dict,
                            v_ns: dict) -> bool:
    """Whether statement k's result ``name`` agrees within the tolerance of the least
    precise float dtype the statement reads (named tensors and dtype literals): a float64
    result of float32 inputs carries float32 rounding, as PyTorch computes parts of mixed
    ops in the narrower dtype (exp of float32 logits before a float64 target joins in
    poisson_nll_loss, log_sigmoid in binary_cross_entropy_with_logits), where NumPy's
    float32 exp and log are a few units in the last place off PyTorch's."""
    stmt = prog.stmts[k]
    dtypes = set(_FLOAT_NAME.findall(stmt))
    for word in set(_WORD.findall(stmt)):
        for value in _tensors(t_ns, [word]).values():
            if isinstance(value, torch.Tensor) and value.is_floating_point():
                dtypes.add(str(value.dtype).removeprefix("torch."))
    loosest = max(dtypes & TOLERANCES.keys(), key=lambda d: TOLERANCES[d][0], default=None)
    tv, vv = _tensors(t_ns, [name.split("[")[0]]).get(name), _tensors(v_ns, [name.split(
        "[")[0]]).get(name)
    if loosest is None or tv is None or vv is None:
        return False
    return _diff(name, tv, vv, tol=loosest) is None


def _undefined_cast(name: str, t_ns: dict, v_ns: dict) -> bool:
    """Whether a float -> integer cast differs only where PyTorch gave the dtype's lowest
    value and Volta its lowest or highest: NaN, inf or a number out of range, which C++
    leaves undefined (x86 gives the lowest value, a GPU saturates)."""
    base = name.split("[")[0]
    tv, vv = _tensors(t_ns, [base]).get(name), _tensors(v_ns, [base]).get(name)
    if not isinstance(tv, torch.Tensor) or tv.dtype.is_floating_point or tv.dtype == torch.bool:
        return False
    info = torch.iinfo(tv.dtype)
    ta = tv.detach().numpy()
    va = np.asarray(vv.detach().numpy())
    if ta.shape != va.shape:
        return False
    differ = ta != va
    return bool(differ.any() and np.all(ta[differ] == info.min)
                and np.all(np.isin(va[differ], (info.min, info.max))))


def _float_results(name: str, t_ns: dict, v_ns: dict) -> tuple:
    """``(PyTorch's tensor, its values, Volta's values)`` of the float result ``name`` as
    float64 arrays of one shape, or ``(None, None, None)``."""
    base = name.split("[")[0]
    tv, vv = _tensors(t_ns, [base]).get(name), _tensors(v_ns, [base]).get(name)
    if not isinstance(tv, torch.Tensor) or not tv.is_floating_point():
        return None, None, None
    ta = tv.detach().double().numpy()
    va = np.asarray(vv.detach().cpu().double().tolist(), dtype=np.float64)
    return (tv, ta, va) if ta.shape == va.shape else (None, None, None)


_SUMS = {"sum": False, "nansum": False, "mean": True, "nanmean": True}  # op: divides


def _summation_order(op: str, stmt: str, name: str, t_ns: dict, v_ns: dict) -> bool:
    """Whether a float sum or mean differs only by what the order of summation may move:
    at most the dtype's tolerance times the largest input magnitude (times the count for a
    sum). PyTorch does not specify its order (its CPU cascade sum keeps small terms apart
    from huge ones that cancel; NumPy's pairwise sum absorbs them)."""
    tv, ta, va = _float_results(name, t_ns, v_ns)
    if ta is None or not (np.isfinite(ta).all() and np.isfinite(va).all()):
        return False
    base = name.split("[")[0]
    tol = TOLERANCES[str(tv.dtype).removeprefix("torch.")][0]
    for word in set(_WORD.findall(stmt)) - {base}:
        x = t_ns.get(word)
        if not (isinstance(x, torch.Tensor) and x.is_floating_point() and x.numel()):
            continue
        xa = np.abs(x.detach().double().numpy())
        top = xa[np.isfinite(xa)].max(initial=0.0)
        count = 1 if _SUMS[op] else max(x.numel() // max(tv.numel(), 1), 1)
        if np.all(np.abs(ta - va) <= tol * top * count):
            return True
    return False


def _subnormal_divisor(stmt: str, name: str, t_ns: dict, v_ns: dict) -> bool:
    """Whether a float remainder/fmod differs only where PyTorch gave NaN and Volta a
    number, each at a subnormal value of a tensor the statement reads: PyTorch's vectorized
    fmod (from 16 float32 elements) returns NaN for a subnormal divisor, its scalar path
    and Volta the exact remainder."""
    _, ta, va = _float_results(name, t_ns, v_ns)
    if ta is None:
        return False
    base = name.split("[")[0]
    differ = ~((ta == va) | (np.isnan(ta) & np.isnan(va)))
    if not (differ.any() and np.isnan(ta[differ]).all() and np.isfinite(va[differ]).all()):
        return False
    for word in set(_WORD.findall(stmt)) - {base}:
        value = t_ns.get(word)
        if not (isinstance(value, torch.Tensor) and value.is_floating_point()):
            continue
        try:
            b = np.broadcast_to(value.detach().double().numpy(), ta.shape)
        except ValueError:
            continue
        if np.all((b[differ] != 0) & (np.abs(b[differ]) < torch.finfo(value.dtype).tiny)):
            return True
    return False


def _zero_signs_differ(prog: Program, t_ns: dict, v_ns: dict) -> bool:
    """Whether some zero is +0.0 on one side and -0.0 on the other (values are compared
    without the sign of zero)."""
    vv = _tensors(v_ns, _names(prog))
    for name, tv in _tensors(t_ns, _names(prog)).items():
        if not isinstance(tv, torch.Tensor) or not tv.is_floating_point() or name not in vv:
            continue
        try:
            ta, va = _host(tv)[2], _host(vv[name])[2]
        except Exception:
            continue
        if ta.shape == va.shape and bool(np.any((ta == 0) & (va == 0)
                                                & (np.signbit(ta) != np.signbit(va)))):
            return True
    return False


def _is_drift(prog: Program, k: int, v_ns: dict, device: str) -> bool:
    """Whether statement k, run by PyTorch on Volta's inputs, gives Volta's output."""
    out = prog.outputs[k]
    if out is None:
        # In place: the rerun loses the aliasing between named tensors, so only a write
        # whose sole visible effect is on its own target (no other named tensor differs)
        # can be excused, and only when the rerun gives Volta's value of that target.
        out = re.match(r"[A-Za-z_]\w*", prog.stmts[k]).group(0)
        tk = _exec(prog, torch, "cpu", upto=k + 1)
        vk = _exec(prog, vt, device, upto=k + 1)
        vv = _tensors(vk.ns, _names(prog))
        target = tk.ns.get(out)
        mem = target.untyped_storage().data_ptr() if isinstance(target, torch.Tensor) else None
        for name, tv in _tensors(tk.ns, _names(prog)).items():
            if name == out or (isinstance(tv, torch.Tensor)  # the target's base or views
                               and tv.untyped_storage().data_ptr() == mem):
                continue
            if name not in vv or _diff(name, tv, vv[name]) is not None:
                return False
    before = _exec(prog, vt, device, upto=k)
    t_ns = namespace(torch)
    for name, value in _tensors(before.ns, _names(prog)).items():
        if "[" in name or "(" in name:
            continue
        dt, _, arr = _host(value)
        t_ns[name] = torch.from_numpy(np.array(arr)).to(getattr(torch, dt))
    for name in _names(prog):
        value = before.ns.get(name)
        if isinstance(value, tuple | list):
            t_ns[name] = tuple(
                torch.from_numpy(np.array(_host(x)[2])).to(getattr(torch, _host(x)[0]))
                for x in value)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(prog.stmts[k].replace(", device=@DEV", ""), "<drift>", "exec"), t_ns)
    except Exception:
        return False
    after = _exec(prog, vt, device, upto=k + 1)
    for name, tv in _tensors(t_ns, [out]).items():
        vv = _tensors(after.ns, [out]).get(name)
        if vv is None or _diff(name, tv, vv) is not None:
            return False
    return True


def _tie_diff(prog: Program, t_ns: dict, v_ns: dict) -> str | None:
    """Check an unstable sort/topk/median: values equal, indices pick those values."""
    k, x_expr, dim = prog.tie_check
    out = prog.outputs[k]
    x = eval(x_expr, dict(t_ns)).detach()
    tv, vv = t_ns[out], v_ns[out]
    if isinstance(tv, torch.Tensor) and prog.ops[k] == "median":  # no dim: a value only
        d = _diff(out, tv, vv)
        return None if d is None else d[1]
    if isinstance(tv, torch.Tensor):  # argsort: gather both and compare
        idx_t, idx_v = tv, torch.from_numpy(np.array(vv.detach().numpy()))
    else:
        idx_t = tv[1]
        idx_v = torch.from_numpy(np.array(vv[1].detach().numpy())).long()
    d = 0 if dim is None else dim
    if x.ndim == 0:
        return None
    if idx_v.shape != idx_t.shape:
        return f"indices: PyTorch shape {tuple(idx_t.shape)}, Volta {tuple(idx_v.shape)}"
    if idx_v.ndim < x.ndim:
        idx_v, idx_t = idx_v.unsqueeze(d), idx_t.unsqueeze(d)
    try:
        got = torch.take_along_dim(x, idx_v.long(), dim=d)
    except Exception as exc:
        return f"indices out of range: {exc}"
    want = torch.take_along_dim(x, idx_t.long(), dim=d)
    got, want = got.double().numpy(), want.double().numpy()
    # at the input's tolerance: a tie in Volta's values may be one within rounding in PyTorch's
    if not close(got, want, str(x.dtype).removeprefix("torch.")):
        return f"indices pick {_short(got)}, PyTorch's {_short(want)}"
    return None


@cache
def _loss_cast(device: str) -> str:
    """The loss sums in float64 where ``device`` has it (an OpenGL adapter has not)."""
    try:
        vt.zeros(1, dtype=vt.float64, device=device)
    except Exception:
        return "float"
    return "double"


def _loss_source(prog: Program, t_ns: dict, device: str = "cpu") -> str | None:
    """``loss = ...``: weighted sum of every float tensor result that requires grad."""
    terms = []
    cast = _loss_cast(device)
    for name, value in _tensors(t_ns, _names(prog)).items():
        if isinstance(value, torch.Tensor) and value.requires_grad and value.is_floating_point():
            terms.append(f"({name}.{cast}() * w({name})).sum()")
    return "loss = " + " + ".join(terms) if terms else None


def _grad_tolerance(t_ns: dict, prog: Program) -> str | None:
    """The float dtype whose tolerance gradients get: the least precise one the graph went
    through (a float64 leaf's gradient through a float32 op has float32 rounding)."""
    widest = None
    for value in _tensors(t_ns, _names(prog)).values():
        if isinstance(value, torch.Tensor) and value.is_floating_point() and (
                value.requires_grad):
            name = str(value.dtype).removeprefix("torch.")
            if name in TOLERANCES and (widest is None
                                       or TOLERANCES[name][0] > TOLERANCES[widest][0]):
                widest = name
    return widest


def _backward(prog: Program, lib, device: str, ns: dict, loss: str) -> BaseException | None:
    try:
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("ignore" if lib is torch else "always")
            exec(compile(loss + "\nloss.backward()", "<backward>", "exec"), ns)
    except Exception as exc:
        return _bare(exc)
    return None


def _check_grads(prog: Program, device: str, t_ns: dict, v_ns: dict) -> Mismatch | None:
    loss = _loss_source(prog, t_ns, device)
    if loss is None or prog.tie_check is not None:
        return None
    te = _backward(prog, torch, "cpu", t_ns, loss)
    ve = _backward(prog, vt, device, v_ns, loss)
    if (te is None) != (ve is None):
        if ve is not None:
            return _grad_blame(prog, device, f"volta raised {_exc_name(ve)}",
                               f"backward: {_exc_name(ve)}: {str(ve)[:300]}")
        if _kernel_gap(te):
            kind = "beyond PyTorch's kernels"
        elif "modified by an inplace operation" in str(te):
            kind = "saves less than PyTorch"  # a Function lacks PyTorch's saves (a bug)
        elif _older_pytorch(te):
            kind = "older PyTorch"
        else:
            kind = "silent acceptance"
        return _grad_blame(prog, device, kind,
                           f"backward: PyTorch raised {_exc_name(te)}: {str(te)[:300]}")
    if te is not None:
        return None
    tol = _grad_tolerance(t_ns, prog)
    for leaf in prog.leaves:
        tg, vg = t_ns[leaf].grad, v_ns[leaf].grad
        if (tg is None) != (vg is None):
            return _grad_blame(prog, device, "grad presence",
                               f"{leaf}.grad: PyTorch {tg is not None and 'a tensor' or None},"
                               f" Volta {vg is not None and 'a tensor' or None}")
        if tg is not None:
            d = _diff(f"{leaf}.grad", tg, vg, slack=GRAD_SLACK, tol=tol)
            if d is not None:
                return _grad_blame(prog, device, "grad " + d[0], d[1])
    return None


def _grad_blame(prog: Program, device: str, kind: str, detail: str) -> Mismatch:
    """Blame the first statement whose prefix program already has the gradient bug."""
    for k in range(1, len(prog.stmts) + 1):
        sub = prog.prefix(k)
        t = _exec(sub, torch, "cpu")
        v = _exec(sub, vt, device)
        if t.raised_at is not None or v.raised_at is not None:
            break
        m = _check_grads_plain(sub, device, t.ns, v.ns)
        if m:
            if (kind == "grad value" and prog.ops[k - 1] in _INTEGER_GRAD_OPS
                    and _reads_integer_tensor(prog.stmts[k - 1], t.ns)):
                kind = "integer gradient arithmetic"
            elif (kind == "grad value" and prog.ops[k - 1] in _ZERO_SIGN_GRAD_OPS
                  and _zero_signs_differ(sub, t.ns, v.ns)):
                kind = "sign of zero"  # a derivative like 1/x of zeros of either sign
            return _mismatch(prog, k - 1, kind, detail)
    return _mismatch(prog, len(prog.stmts) - 1, kind, detail)


# ops whose PyTorch backward multiplies or negates an integer operand in its own dtype
# (atan2: other * other wraps in int8, -self wraps in uint8; pow: exponent - 1 wraps in
# int8 at -128)
_INTEGER_GRAD_OPS = {"atan2", "pow"}
# ops whose derivative turns the sign of a zero into the sign of an infinity (1/x)
_ZERO_SIGN_GRAD_OPS = {"log", "log2", "log10", "reciprocal", "div", "rsqrt", "sqrt", "pow",
                       "float_power", "atan2"}
_INT_NAME = re.compile(r"\bvt\.(u?int(8|16|32|64))\b")


def _reads_integer_tensor(stmt: str, ns: dict) -> bool:
    """Whether statement ``stmt`` reads an integer tensor (named, or a literal)."""
    if _INT_NAME.search(stmt):
        return True
    for word in set(_WORD.findall(stmt)):
        value = ns.get(word)
        if isinstance(value, torch.Tensor) and not value.is_floating_point() and (
                value.dtype != torch.bool):
            return True
    return False


def _check_grads_plain(prog: Program, device: str, t_ns: dict, v_ns: dict) -> bool:
    loss = _loss_source(prog, t_ns, device)
    if loss is None:
        return False
    te = _backward(prog, torch, "cpu", t_ns, loss)
    ve = _backward(prog, vt, device, v_ns, loss)
    if (te is None) != (ve is None):
        return True
    if te is not None:
        return False
    for leaf in prog.leaves:
        tg, vg = t_ns[leaf].grad, v_ns[leaf].grad
        if (tg is None) != (vg is None):
            return True
        if tg is not None and _diff(leaf, tg, vg, slack=GRAD_SLACK,
                                    tol=_grad_tolerance(t_ns, prog)) is not None:
            return True
    return False


def repro(prog: Program, m: Mismatch, device: str = "cpu") -> str:
    """Runnable Volta code for the failing program, with PyTorch's answer."""
    upto = m.stmt + 1 if 0 <= m.stmt < len(prog.stmts) else None
    body = prog.source(device, upto=upto)
    lines = ["import volta_core as vt", "import volta_core.nn.functional as F",
             HEADER.rstrip(), body]
    if m.kind.startswith(("grad", "volta raised", "silent")) and m.stmt >= 0 and (
            "backward" in m.detail or m.kind.startswith("grad")):
        sub = prog.prefix(upto)
        t = _exec(sub, torch, "cpu")
        loss = _loss_source(sub, t.ns, device)
        if loss:
            lines.insert(3, "w = lambda t: (vt.arange(t.numel(), dtype=vt.float32, "
                            "device=t.device) % 5 - 1.5).reshape(t.shape)")
            lines += [loss, "loss.backward()",
                      "print(" + ", ".join(f"{leaf}.grad" for leaf in prog.leaves) + ")"]
    return "\n".join(lines) + f"\n# {m.signature}\n# {m.detail}"

