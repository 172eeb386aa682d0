"""L-BFGS: a quasi-Newton method from the last ``history_size`` steps and gradient changes,
with an optional strong-Wolfe line search (as PyTorch's ``optim.LBFGS``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..autograd.grad_mode import enable_grad, no_grad
from ..ops.joining import cat
from ..tensor import Tensor
from .optimizer import Optimizer

Evaluate = Callable[[list[Tensor], float, Tensor], tuple[float, Tensor]]


def _dot(a: Tensor, b: Tensor) -> float:
    return float((a * b).sum().item())


def _absmax(a: Tensor) -> float:
    return float(a.abs().max().item())


def _cubic_minimum(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
                   bounds: tuple[float, float] | None = None) -> float:
    """The minimiser of the cubic through ``(x1, f1, g1)`` and ``(x2, f2, g2)``, clamped to
    ``bounds`` (the interval between the points by default); the midpoint if it has none."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1 * d1 - g1 * g2
    if disc < 0:
        return (lo + hi) / 2.0
    d2 = disc ** 0.5
    if x1 <= x2:
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(x, lo), hi)


def _strong_wolfe(evaluate: Evaluate, x: list[Tensor], t: float, d: Tensor, f: float,
                  g: Tensor, gtd: float, c1: float = 1e-4, c2: float = 0.9,
                  tolerance_change: float = 1e-9, max_ls: int = 25
                  ) -> tuple[float, Tensor, float, int]:
    """A step ``t`` along ``d`` meeting the strong Wolfe conditions (sufficient decrease
    ``c1`` and curvature ``c2``): bracket a good step, then zoom into the bracket by cubic
    interpolation. Returns ``(loss, flat_grad, t, evaluations)``."""
    d_norm = _absmax(d)
    f_new, g_new = evaluate(x, t, d)
    evals, ls_iter = 1, 0
    gtd_new = _dot(g_new, d)
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    bracket: list[float] = []
    bracket_f: list[float] = []
    bracket_g: list[Tensor] = []
    bracket_gtd: list[float] = []
    while ls_iter < max_ls:
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        # extrapolate beyond t
        t_next = _cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new, gtd_new
        t = t_next
        f_new, g_new = evaluate(x, t, d)
        evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0.0, t], [f, f_new], [g, g_new]

    # zoom: shrink the bracket until a step satisfies the conditions
    insufficient = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_minimum(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1],
                           bracket_gtd[1])
        top, bottom = max(bracket), min(bracket)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < eps:  # too close to an end: move it inside
            if insufficient or t >= top or t <= bottom:
                t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = evaluate(x, t, d)
        evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
        if f_new > f + c1 * t * gtd or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high] = t, f_new
            bracket_g[high], bracket_gtd[high] = g_new, gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low] = t, f_new
            bracket_g[low], bracket_gtd[low] = g_new, gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals


class LBFGS(Optimizer):
    """L-BFGS (Nocedal, 1980): each :meth:`step` runs up to ``max_iter`` iterations, each
    moving along the quasi-Newton direction built from the last ``history_size`` steps
    ``s`` and gradient changes ``y`` (two-loop recursion, initial Hessian
    ``(s.y / y.y) I``).

    Every parameter is viewed as one flat vector, so there is a single parameter group.
    ``step`` needs a closure that zeroes the gradients, recomputes the loss, calls
    ``backward()`` and returns the loss; it is called several times per step.

    Args:
        params: the parameters (one group).
        lr: the step size (default: 1).
        max_iter: iterations per :meth:`step` (default: 20).
        max_eval: closure evaluations per step (default: ``max_iter * 5 // 4``).
        tolerance_grad: stop when the largest gradient entry is at most this (1e-7).
        tolerance_change: stop when the loss or the step changes less than this (1e-9).
        history_size: how many past updates to keep (default: 100).
        line_search_fn: None (fixed step ``lr``) or ``"strong_wolfe"``.

    Example:
        >>> opt = vt.optim.LBFGS(model.parameters(), line_search_fn="strong_wolfe")
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = loss_fn(model(x), y)
        ...     loss.backward()
        ...     return loss
        >>> opt.step(closure)
    """

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 1.0,
                 max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9,
                 history_size: int = 100, line_search_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params: list[Tensor] = self.param_groups[0]["params"]

    def add_param_group(self, param_group: dict) -> None:
        if getattr(self, "param_groups", None):
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(param_group)

    # -- flat views of the parameters ----------------------------------------------------
    def _flat_grad(self) -> Tensor:
        views = [p.new_zeros(p.numel()) if p.grad is None else p.grad.reshape(-1)
                 for p in self._params]
        return cat(views, 0)

    def _add(self, step: float, update: Tensor) -> None:
        offset = 0
        for p in self._params:
            n = p.numel()
            self._write(p, (p + update[offset:offset + n].reshape(p.shape) * step).array)
            offset += n

    def _clone_params(self) -> list[Tensor]:
        return [p.detach().clone() for p in self._params]

    def _set_params(self, values: list[Tensor]) -> None:
        for p, v in zip(self._params, values):
            self._write(p, v.array)

    def _evaluate(self, closure: Callable[[], Any]) -> Evaluate:
        def evaluate(x: list[Tensor], t: float, d: Tensor) -> tuple[float, Tensor]:
            self._add(t, d)
            with enable_grad():
                loss = float(closure())
            flat_grad = self._flat_grad()
            self._set_params(x)
            return loss, flat_grad

        return evaluate

    def step(self, closure: Callable[[], Any] | None = None) -> Any:  # type: ignore[override]
        """Run up to ``max_iter`` L-BFGS iterations; returns the closure's first loss.

        Args:
            closure: re-evaluates the model (zero_grad, forward, backward) and returns
                the loss. Required.
        """
        if closure is None:
            raise RuntimeError("LBFGS.step requires a closure that re-evaluates the model "
                               "and returns the loss")
        with no_grad():
            return self._step(closure)

    def _step(self, closure: Callable[[], Any]) -> Any:
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        history_size, line_search = group["history_size"], group["line_search_fn"]
        if line_search is not None and line_search != "strong_wolfe":
            raise RuntimeError(f"LBFGS: only 'strong_wolfe' is supported as line_search_fn, "
                               f"got {line_search!r}")
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if _absmax(flat_grad) <= tol_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag = state.get("H_diag")
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                h_diag = 1.0
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = _dot(y, s)
                if ys > 1e-10:  # keep only updates with positive curvature
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / _dot(y, y)
                # two-loop recursion: d = -H grad
                al = [0.0] * len(old_dirs)
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = _dot(old_stps[i], q) * ro[i]
                    q = q - old_dirs[i] * al[i]
                r = q * h_diag
                for i in range(len(old_dirs)):
                    be_i = _dot(old_dirs[i], r) * ro[i]
                    r = r + old_stps[i] * (al[i] - be_i)
                d = r
            prev_flat_grad = flat_grad.clone()
            prev_loss = loss
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / float(flat_grad.abs().sum().item())) * lr
            else:
                t = lr
            gtd = _dot(flat_grad, d)
            if gtd > -tol_change:  # not a descent direction
                break
            ls_evals = 0
            if line_search is not None:
                loss, flat_grad, t, ls_evals = _strong_wolfe(
                    self._evaluate(closure), self._clone_params(), t, d, loss, flat_grad, gtd)
                self._add(t, d)
                opt_cond = _absmax(flat_grad) <= tol_grad
            else:
                self._add(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    with enable_grad():
                        loss = float(closure())
                    flat_grad = self._flat_grad()
                    opt_cond = _absmax(flat_grad) <= tol_grad
                    ls_evals = 1
            evals += ls_evals
            state["func_evals"] += ls_evals
            if (n_iter == max_iter or evals >= max_eval or opt_cond
                    or _absmax(d) * abs(t) <= tol_change or abs(loss - prev_loss) < tol_change):
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=h_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss


__all__ = ["LBFGS"]
