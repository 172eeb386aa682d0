"""Finite-difference gradient checks (run them in float64)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..errors import AutogradError
from ..tensor import Tensor
from .engine import grad as autograd_grad
from .grad_mode import enable_grad, no_grad


def _as_tuple(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _host(t: Tensor):
    return t.device.backend.to_host(t.array)


def _flat_outputs(fn: Callable, inputs: Sequence[Tensor]) -> list:
    with no_grad():
        outs = [o for o in _as_tuple(fn(*inputs)) if isinstance(o, Tensor)]
    return [v for o in outs for v in _host(o).reshape(-1).tolist()]


def numerical_jacobian(fn: Callable, inputs: Sequence[Tensor], eps: float) -> list[list[list]]:
    """Central-difference Jacobian: ``J[i][k][j]`` = d out_j / d input_i[k]."""
    jac = []
    for i, x in enumerate(inputs):
        if not isinstance(x, Tensor) or not x.requires_grad:
            jac.append(None)
            continue
        base = _host(x).copy()
        flat = base.reshape(-1)
        cols = []
        for k in range(flat.size):
            orig = flat[k].item()
            cols_pm = []
            for delta in (eps, -eps):
                flat[k] = orig + delta
                moved = Tensor._make(x.device.backend.from_host(base, x.device.index), x.device)
                args = list(inputs)
                args[i] = moved
                cols_pm.append(_flat_outputs(fn, args))
            flat[k] = orig
            cols.append([(p - m) / (2 * eps) for p, m in zip(*cols_pm)])
        jac.append(cols)
    return jac


def analytical_jacobian(fn: Callable, inputs: Sequence[Tensor]) -> list[list[list]]:
    """Jacobian from backward passes, one per output element, laid out as above."""
    outs = [o for o in _as_tuple(fn(*inputs)) if isinstance(o, Tensor) and o.requires_grad]
    diff = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    rows: list[list] = [[[] for _ in range(x.numel())] for x in diff]
    for o_idx, out in enumerate(outs):
        for j in range(out.numel()):
            grads_out = []
            for o2_idx, o2 in enumerate(outs):
                g = o2.detach().new_zeros(*o2.shape)
                if o2_idx == o_idx:
                    host = _host(g).copy()
                    host.reshape(-1)[j] = 1.0
                    g = Tensor._make(g.device.backend.from_host(host, g.device.index), g.device)
                grads_out.append(g)
            gs = autograd_grad(outs, diff, grads_out, retain_graph=True, allow_unused=True)
            for i, (x, gi) in enumerate(zip(diff, gs)):
                vals = [0.0] * x.numel() if gi is None else _host(gi).reshape(-1).tolist()
                for k, v in enumerate(vals):
                    rows[i][k].append(v)
    full = []
    it = iter(rows)
    for x in inputs:
        full.append(next(it) if isinstance(x, Tensor) and x.requires_grad else None)
    return full


def gradcheck(fn: Callable, inputs: Tensor | Sequence[Tensor], eps: float = 1e-6,
              atol: float = 1e-5, rtol: float = 1e-3, raise_exception: bool = True) -> bool:
    """Compare analytical gradients of ``fn`` with central finite differences.

    Args:
        fn: a function of ``inputs`` returning a tensor or a tuple of tensors.
        inputs: tensors (float64 recommended); those with ``requires_grad`` are checked.
        eps: finite-difference step.
        atol: absolute tolerance.
        rtol: relative tolerance.
        raise_exception: raise ``AutogradError`` describing the first mismatch instead of
            returning False.
    """
    inputs = _as_tuple(inputs)
    if not any(isinstance(x, Tensor) and x.requires_grad for x in inputs):
        raise AutogradError("gradcheck: no input requires grad")
    for x in inputs:
        if isinstance(x, Tensor) and x.requires_grad and x.dtype.name != "float64":
            import warnings

            warnings.warn(f"gradcheck: input of dtype {x.dtype.name} is not float64; "
                          "finite differences may be inaccurate", stacklevel=2)
    numeric = numerical_jacobian(fn, inputs, eps)
    analytic = analytical_jacobian(fn, inputs)
    for i, (num, ana) in enumerate(zip(numeric, analytic)):
        if num is None:
            continue
        for k, (nrow, arow) in enumerate(zip(num, ana)):
            for j, (n, a) in enumerate(zip(nrow, arow)):
                if abs(n - a) > atol + rtol * abs(n):
                    if raise_exception:
                        raise AutogradError(
                            f"gradcheck: Jacobian mismatch for input {i}, element {k}, output "
                            f"element {j}: numerical {n:.8g} vs analytical {a:.8g}")
                    return False
    return True


def gradgradcheck(fn: Callable, inputs: Tensor | Sequence[Tensor], eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3) -> bool:
    """Check second derivatives: gradcheck of the first gradient (with ``create_graph``)."""
    inputs = _as_tuple(inputs)
    checked = [isinstance(x, Tensor) and x.requires_grad for x in inputs]

    def first_grad(*args):
        with enable_grad():
            # finite differences call this with fresh copies: make them leaves again
            args = [a.requires_grad_() if c and not a.requires_grad else a
                    for a, c in zip(args, checked)]
            outs = [o for o in _as_tuple(fn(*args)) if o.requires_grad]
            total = outs[0].mul(outs[0]).sum()
            for o in outs[1:]:
                total = total + (o * o).sum()
            used = [a for a, c in zip(args, checked) if c]
            gs = autograd_grad(total, used, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_grad, inputs, eps=eps, atol=atol, rtol=rtol)
