"""The harness: run a case on the reference and on the target, compare every result.

The reference is the NumPy backend on ``cpu``. Both runs start from the same seeded
host data, go through ``Backend.from_host``, run the case, and come back through
``Backend.to_host`` before comparison; comparing the reference with itself takes the
same path. A case ends ``pass``, ``fail`` (with the largest error) or ``unsupported``
(with the reason): never a silent pass.
"""

from __future__ import annotations

import re
import time
import traceback
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .case import Case, CaseFailure, NotInCore, host_dtype
from .tolerances import tolerance

REFERENCE_DEVICE = "cpu"


@dataclass
class Result:
    """The outcome of one case in one dtype.

    Attributes:
        case: the case's name.
        op: the public path the case covers.
        dtype: the dtype it ran in.
        status: ``"pass"``, ``"fail"`` or ``"unsupported"``.
        detail: why it failed or is unsupported ("" for a pass).
        max_error: the largest error relative to the tolerance bound, for failures.
        seconds: wall time of both runs.
    """

    case: str
    op: str
    dtype: str
    status: str
    detail: str = ""
    max_error: float | None = None
    seconds: float = 0.0

    @property
    def id(self) -> str:
        return f"{self.case}[{self.dtype}]"


class Runtime:
    """What a case sees while it runs: the device, the dtype and seeded host data."""

    def __init__(self, device: Any, dtype: str, seed: int) -> None:
        self.device = device
        self.dtype = dtype
        self.rng = np.random.default_rng(seed)

    def tensor(self, host: np.ndarray, dtype: str | None = None, requires_grad: bool = False):
        """Move host values to the device (through the backend's ``from_host``)."""
        import volta_core as vt

        host = np.asarray(host)
        name = dtype or ("bool" if host.dtype == np.bool_ else str(host.dtype))
        return vt.tensor(host, dtype=name, device=self.device, requires_grad=requires_grad)

    def host(self, t: Any) -> np.ndarray:
        """A tensor's values on the host (through the backend's ``to_host``)."""
        return np.asarray(t.device.backend.to_host(t.detach().array))

    def host_dtype(self, t: Any) -> np.dtype:
        return host_dtype(t.dtype.name)


def _collect(results: dict[str, Any], rt: Runtime) -> dict[str, tuple]:
    """Named results as ``(host array, dtype name, device string)`` or None."""
    from volta_core import Tensor

    out: dict[str, tuple] = {}
    for key, value in results.items():
        if value is None:
            out[key] = None
        elif isinstance(value, Tensor):
            out[key] = (rt.host(value), value.dtype.name, str(value.device))
        else:
            arr = np.asarray(value)
            out[key] = (arr, str(arr.dtype), None)
    return out


def compare(key: str, ref: tuple | None, got: tuple | None, backend: Any, scale: float,
            target_device: str) -> tuple[str | None, float]:
    """Compare one named result; return (problem or None, error relative to the bound)."""
    if ref is None or got is None:
        if ref is None and got is None:
            return None, 0.0
        return (f"{key}: expected {'no value' if ref is None else 'a value'}, got "
                f"{'None' if got is None else 'a value'}"), float("inf")
    (exp, edt, _), (act, adt, adev) = ref, got
    if adev is not None and adev != target_device:
        return f"{key}: on device {adev}, expected {target_device}", float("inf")
    if adt != edt:
        return f"{key}: dtype {adt}, expected {edt}", float("inf")
    if act.shape != exp.shape:
        return f"{key}: shape {act.shape}, expected {exp.shape}", float("inf")
    if exp.size == 0:
        return None, 0.0
    if exp.dtype.kind not in "fc" and exp.dtype.name != "bfloat16":  # ml_dtypes' kind is V
        bad = int(np.count_nonzero(act != exp))
        if bad:
            return f"{key}: {bad} of {exp.size} values differ", float("inf")
        return None, 0.0
    e, a = exp.astype(np.float64), act.astype(np.float64)
    nan_e, nan_a = np.isnan(e), np.isnan(a)
    if not np.array_equal(nan_e, nan_a):
        return f"{key}: NaN in different places", float("inf")
    inf_e = np.isinf(e)
    if not np.array_equal(e[inf_e], a[inf_e]) or np.isinf(a[~inf_e]).any():
        return f"{key}: infinities differ", float("inf")
    finite = ~(nan_e | inf_e)
    if not finite.any():
        return None, 0.0
    e, a = e[finite], a[finite]
    rtol, atol = tolerance(edt, backend, scale, grad=key.startswith("grad"))
    err = np.abs(a - e)
    bound = atol * max(1.0, float(np.abs(e).max())) + rtol * np.abs(e)
    ratio = float((err / np.maximum(bound, 1e-300)).max())
    if (err > bound).any():
        i = int(np.argmax(err - bound))
        return (f"{key}: max error {float(err.max()):.3g} (at {e[i]:.6g} vs {a[i]:.6g}; "
                f"rtol={rtol:g}, atol={atol:g})"), float(err.max())
    return None, ratio


def glob_match(name: str, pattern: str) -> bool:
    """Shell-style match where only ``*`` and ``?`` are wildcards (ids contain ``[]``)."""
    regex = re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".")
    return re.fullmatch(regex, name) is not None


def _unsupported_pattern(backend: Any, case: Case, dtype: str) -> str | None:
    """The reason a backend's ``unsupported`` patterns give for this case, if any.

    A pattern matches the id ``name[dtype]``, the case name or its op path.
    """
    for pattern, reason in (getattr(backend, "unsupported", None) or {}).items():
        for name in (f"{case.name}[{dtype}]", case.name, case.op):
            if glob_match(name, pattern):
                return f"declared by the backend ({pattern}): {reason}"
    return None


def _execute(case: Case, device: Any, dtype: str) -> dict[str, tuple]:
    import volta_core as vt

    rt = Runtime(device, dtype, case.seed(dtype))
    with vt.enable_grad(), np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return _collect(case.run(rt), rt)


def _error_text(exc: BaseException) -> str:
    """The error and where it happened: the innermost frame, and the innermost Volta one."""
    frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ else []
    where = [f for f in frames[-1:]]
    ours = [f for f in frames if "volta" in f.filename and "volta_conformance" not in f.filename]
    if ours and ours[-1] not in where:
        where.insert(0, ours[-1])
    text = " < ".join(f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno}" for f in reversed(where))
    return f"{type(exc).__name__}: {exc}" + (f" ({text})" if text else "")


def run_case(case: Case, dtype: str, device: Any) -> Result:
    """Run ``case`` in ``dtype`` on the reference and on ``device``; compare."""
    from volta_core import Device, DTypeError

    start = time.perf_counter()
    device = Device(device)
    backend = device.backend

    def result(status: str, detail: str = "", err: float | None = None) -> Result:
        return Result(case.name, case.op, dtype, status, detail, err,
                      time.perf_counter() - start)

    try:
        case.check_available()
    except NotInCore as exc:
        return result("unsupported", str(exc))
    reason = _unsupported_pattern(backend, case, dtype)
    if reason:
        return result("unsupported", reason)
    if dtype not in backend.dtype_names(device.index):
        return result("unsupported", f"dtype {dtype} is not supported by backend "
                                     f"{backend.name!r}")
    ref_device = Device(REFERENCE_DEVICE)
    if dtype not in ref_device.backend.dtype_names(ref_device.index):
        return result("unsupported", f"the NumPy reference lacks dtype {dtype}")
    try:
        ref = _execute(case, ref_device, dtype)
    except NotInCore as exc:
        return result("unsupported", str(exc))
    except NotImplementedError as exc:
        return result("unsupported", f"not implemented in volta_core yet: {_error_text(exc)}")
    except Exception as exc:
        return result("fail", f"the reference run failed (a core or case bug): "
                              f"{_error_text(exc)}")
    try:
        got = _execute(case, device, dtype)
    except NotInCore as exc:
        return result("unsupported", str(exc))
    except NotImplementedError as exc:
        return result("unsupported", f"backend raised {_error_text(exc)}")
    except DTypeError as exc:  # the reference ran it: a dtype this device lacks
        return result("unsupported", f"backend lacks a dtype: {exc}")
    except CaseFailure as exc:
        return result("fail", str(exc), float("inf"))
    except Exception as exc:
        return result("fail", f"error on {device}: {_error_text(exc)}", float("inf"))
    problems, worst = [], 0.0
    missing = sorted(set(ref) ^ set(got))
    if missing:
        problems.append(f"results differ in names: {missing}")
        worst = float("inf")
    for key in [k for k in ref if k in got]:  # outputs first, in the case's order
        problem, err = compare(key, ref[key], got[key], backend, case.tol, str(device))
        if problem:
            problems.append(problem)
            worst = max(worst, err)
    if problems:
        return result("fail", "; ".join(problems), worst)
    return result("pass")


def select(cases: Iterable[Case], dtypes: Iterable[str] | None = None,
           pattern: str | None = None, large: bool = False) -> list[tuple[Case, str]]:
    """The ``(case, dtype)`` pairs a run covers.

    Args:
        cases: the cases.
        dtypes: dtypes to run (each case keeps those it declares); None runs every
            declared dtype except float16/bfloat16.
        pattern: a ``-k``-style filter: case ids containing any of its comma- or
            space-separated words (``not WORD`` excludes).
        large: include large-input cases not in the default subset.
    """
    chosen = set(dtypes) if dtypes else None
    pairs = []
    for case in cases:
        if case.large and not large and not case.default:
            continue
        for dt in case.dtypes:
            if chosen is None and dt in ("float16", "bfloat16"):
                continue
            if chosen is not None and dt not in chosen:
                continue
            if pattern and not matches(f"{case.name}[{dt}]", pattern):
                continue
            pairs.append((case, dt))
    return pairs


def matches(case_id: str, pattern: str) -> bool:
    """Whether ``case_id`` matches a ``-k`` expression.

    The expression is words joined by ``or`` (or commas) and ``and``, each optionally
    preceded by ``not``; a word matches when the id contains it (``"add and not large"``).
    """
    for alternative in pattern.replace(",", " or ").split(" or "):
        terms = [t.strip() for t in alternative.split(" and ") if t.strip()]
        if terms and all(_term(case_id, t) for t in terms):
            return True
    return False


def _term(case_id: str, term: str) -> bool:
    if term.startswith("not "):
        return term[4:].strip() not in case_id
    return term in case_id


def run_suite(backend: str, device: str | None = None, dtypes: Iterable[str] | None = None,
              pattern: str | None = None, large: bool = False,
              progress: Any = None) -> list[Result]:
    """Run every selected case on ``backend``; return the results in case order.

    Args:
        backend: a backend name (``"numpy"``, ``"strict"``, ...).
        device: a device of that backend; its first device by default.
        dtypes: dtypes to run (see :func:`select`).
        pattern: a ``-k`` filter.
        large: include every large-input case.
        progress: called with each :class:`Result` as it finishes.
    """
    from volta_core.backend import get_backend

    from .cases import all_cases

    b = get_backend(backend)
    reason = b.unavailable_reason()
    if reason is not None:
        raise RuntimeError(f"backend {backend!r} is unavailable: {reason}")
    device = device or b.device_type
    results = []
    import volta_core as vt

    # the suite checks IEEE float32: no TF32 convolutions (cuDNN's default, as in PyTorch)
    tf32, vt.backends.cudnn.allow_tf32 = vt.backends.cudnn.allow_tf32, False
    try:
        for case, dt in select(all_cases(), dtypes, pattern, large):
            r = run_case(case, dt, device)
            results.append(r)
            if progress is not None:
                progress(r)
    finally:
        vt.backends.cudnn.allow_tf32 = tf32
    return results
