"""The tolerance policy: how close a backend's results must be to the NumPy reference.

Integer and bool results must be equal. Floating results pass when, elementwise,

    |got - expected| <= atol * max(1, max|expected|) + rtol * |expected|

with ``(rtol, atol)`` taken from the backend's ``Backend.tolerances[dtype]`` when it
declares one, else from :data:`DEFAULTS`. The absolute term is scaled by the largest
magnitude of the reference result, so cancellation in a sum of large values is judged
against the values involved. Gradients get :data:`GRAD_FACTOR` times the forward
tolerance (they go through more arithmetic), and a case may multiply both by its
``tol`` (reductions over a million elements, 20-step training curves). NaN must
match NaN and infinities must match exactly.
"""

from __future__ import annotations

from typing import Any

DEFAULTS: dict[str, tuple[float, float]] = {
    "float64": (1e-9, 1e-10),
    "float32": (1e-5, 1e-6),
    "float16": (5e-3, 5e-3),
    "bfloat16": (4e-2, 4e-2),
}
"""Default ``(rtol, atol)`` per floating dtype."""

GRAD_FACTOR = 4.0
"""Multiplier of the forward tolerance applied to gradients."""


def tolerance(dtype: str, backend: Any = None, scale: float = 1.0,
              grad: bool = False) -> tuple[float, float]:
    """Return ``(rtol, atol)`` for results of ``dtype`` on ``backend``.

    Args:
        dtype: a Volta dtype name; integer and bool dtypes get ``(0, 0)``.
        backend: the :class:`~volta_core.backend.Backend` under test, whose declared
            ``tolerances`` override the defaults.
        scale: the case's tolerance multiplier.
        grad: whether the result is a gradient.
    """
    declared = getattr(backend, "tolerances", None) or {}
    base = declared.get(dtype) or DEFAULTS.get(dtype)
    if base is None:
        return (0.0, 0.0)
    factor = scale * (GRAD_FACTOR if grad else 1.0)
    return (base[0] * factor, base[1] * factor)


def policy_markdown() -> str:
    """The policy as a Markdown section (written into ``docs/conformance.md``)."""
    rows = "\n".join(f"| {name} | {r:g} | {a:g} | {r * GRAD_FACTOR:g} | {a * GRAD_FACTOR:g} |"
                     for name, (r, a) in DEFAULTS.items())
    return (
        "## Tolerance policy\n\n"
        "Integer and bool results must equal the reference exactly; shapes and dtypes\n"
        "must always match. A floating result passes when, elementwise,\n"
        "`|got - expected| <= atol * max(1, max|expected|) + rtol * |expected|`.\n"
        "NaN must match NaN and infinities must match exactly.\n\n"
        "| dtype | rtol | atol | gradient rtol | gradient atol |\n"
        "| --- | --- | --- | --- | --- |\n"
        f"{rows}\n\n"
        "A backend overrides these per dtype with `Backend.tolerances = {\"float32\": "
        "(rtol, atol)}`;\nthe gradient factor still applies. A case may multiply both "
        "with its `tol` (large\nreductions, 20-step training curves); the report shows "
        "the largest error of a failure.\n")
