"""The orthogonal polynomial families of ``torch.special``: Chebyshev ``T``, ``U``, ``V``,
``W`` (and their shifted forms on ``[0, 1]``), Hermite ``H`` and ``He``, Laguerre ``L`` and
Legendre ``P``, of degree ``n`` (a tensor or a number, truncated to an integer; 0 for a
negative degree).

Each is its three-term recurrence, run to the largest degree asked for (the results
taken where each element's degree is reached), with PyTorch's closed forms where it uses
them: the values at ``x = +-1``, and for ``|x| < 1`` and degrees above 6 (``T``) or 8
(``U``, ``V``, ``W``) the trigonometric forms ``cos(n t)``, ``sin((n+1) t) / sin t``,
``cos((n+1/2) t) / cos(t/2)``, ``sin((n+1/2) t) / sin(t/2)`` with ``x = cos t``. As in
PyTorch the results have no gradient. NaN in gives NaN out (PyTorch's CPU kernels can
give a neighbouring element's value there).
"""

from __future__ import annotations

from typing import Any

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from ._util import broadcast_shapes
from .elementwise import where


def _operands(x: Any, n: Any) -> tuple[Tensor, Tensor]:
    """``x`` as a floating tensor, ``n`` as whole numbers of its dtype, broadcast."""
    from ..creation import tensor
    from .elementwise import _default_float

    if not isinstance(x, Tensor):
        x = tensor(x, dtype=_default_float(), device=n.device if isinstance(n, Tensor)
                   else None)
    if not x.dtype.is_floating_point:
        x = x.to(_default_float())
    if not isinstance(n, Tensor):
        n = tensor(n, device=x.device)
    n = n.to(x.dtype).trunc()
    shape = broadcast_shapes("orthogonal polynomial", x.shape, n.shape)
    return x.detach().expand(*shape), n.detach().expand(*shape)


def _recurrence(x: Tensor, n: Tensor, p0: Tensor, p1: Tensor, step: Any,
                needed: Tensor) -> Tensor:
    """``p_n`` of a three-term recurrence ``p_{k+1} = step(k, p_k, p_{k-1})`` from ``p0``
    and ``p1``, for the elements in ``needed`` (up to their largest degree)."""
    top = n.where(needed, 0.0).max()
    out = where(n == 0, p0, p1)
    prev, cur = p0, p1
    for k in range(1, int(top.item()) if top.numel() and bool(top >= 2) else 1):
        prev, cur = cur, step(k, cur, prev)
        out = where(n == k + 1, cur, out)
    return out


def _chebyshev(x: Any, n: Any, kind: str, shifted: bool = False) -> Tensor:
    x, n = _operands(x, n)
    if shifted:  # on [0, 1]: the polynomial of 2x - 1
        x = 2 * x - 1
    with no_grad():
        ones = x.new_ones(x.shape)
        first = {"t": x, "u": 2 * x, "v": 2 * x - 1, "w": 2 * x + 1}[kind]
        inside = (x.abs() < 1) & (n > (6 if kind == "t" else 8))
        out = _recurrence(x, n, ones, first, lambda k, c, p: 2 * x * c - p,
                          ~inside & (x.abs() != 1))
        t = where(x.abs() < 1, x, 0.0).acos()
        if kind == "t":
            trig = (n * t).cos()
        elif kind == "u":
            s = t.sin()
            trig = where(s != 0, ((n + 1) * t).sin() / where(s != 0, s, 1.0),
                         (n + 1) * ((n + 1) * t).cos() / x)
        elif kind == "v":
            trig = ((n + 0.5) * t).cos() / (0.5 * t).cos()
        else:
            trig = ((n + 0.5) * t).sin() / (0.5 * t).sin()
        out = where(inside, trig, out)
        even = (n.remainder(2) == 0)
        at_one = {"t": ones, "u": n + 1, "v": ones, "w": 2 * n + 1}[kind]
        at_minus = {"t": where(even, 1.0, -1.0), "u": where(even, n + 1, -(n + 1)),
                    "v": where(even, 2 * n + 1, -(2 * n + 1)), "w": where(even, 1.0, -1.0)}
        out = where(x == 1, at_one, where(x == -1, at_minus[kind], out))
        out = where(x.isnan(), x, out)
        return where(n < 0, 0.0, out)


def chebyshev_polynomial_t(input: Any, n: Any) -> Tensor:
    """Chebyshev polynomials of the first kind ``T_n(input)``."""
    return _chebyshev(input, n, "t")


def chebyshev_polynomial_u(input: Any, n: Any) -> Tensor:
    """Chebyshev polynomials of the second kind ``U_n(input)``."""
    return _chebyshev(input, n, "u")


def chebyshev_polynomial_v(input: Any, n: Any) -> Tensor:
    """Chebyshev polynomials of the third kind ``V_n(input)``."""
    return _chebyshev(input, n, "v")


def chebyshev_polynomial_w(input: Any, n: Any) -> Tensor:
    """Chebyshev polynomials of the fourth kind ``W_n(input)``."""
    return _chebyshev(input, n, "w")


def _shifted(kind: str) -> Any:
    def fn(input: Any, n: Any) -> Tensor:
        return _chebyshev(input, n, kind, shifted=True)
    fn.__name__ = f"shifted_chebyshev_polynomial_{kind}"
    fn.__doc__ = (f"Shifted Chebyshev polynomials ``{kind.upper()}*_n(input) = "
                  f"{kind.upper()}_n(2 input - 1)`` (on ``[0, 1]``).")
    return fn


shifted_chebyshev_polynomial_t = _shifted("t")
shifted_chebyshev_polynomial_u = _shifted("u")
shifted_chebyshev_polynomial_v = _shifted("v")
shifted_chebyshev_polynomial_w = _shifted("w")


def _simple(x: Any, n: Any, first: Any, step: Any, at_pm1: bool = False) -> Tensor:
    """A family from its degree-1 polynomial ``first(x)`` and ``p_{k+1} = step(x, k, p_k,
    p_{k-1})``."""
    x, n = _operands(x, n)
    with no_grad():
        ones = x.new_ones(x.shape)
        out = _recurrence(x, n, ones, first(x), lambda k, c, p: step(x, k, c, p), n >= 2)
        if at_pm1:  # Legendre: 1 at 1, (-1)^n at -1
            out = where(x == 1, 1.0, where(x == -1, where(n.remainder(2) == 0, 1.0, -1.0),
                                            out))
        out = where(x.isnan(), x, out)
        return where(n < 0, 0.0, out)


def hermite_polynomial_h(input: Any, n: Any) -> Tensor:
    """The physicists' Hermite polynomials ``H_n(input)``."""
    return _simple(input, n, lambda x: 2 * x, lambda x, k, c, p: 2 * x * c - 2 * k * p)


def hermite_polynomial_he(input: Any, n: Any) -> Tensor:
    """The probabilists' Hermite polynomials ``He_n(input)``."""
    return _simple(input, n, lambda x: x, lambda x, k, c, p: x * c - k * p)


def laguerre_polynomial_l(input: Any, n: Any) -> Tensor:
    """The Laguerre polynomials ``L_n(input)``."""
    return _simple(input, n, lambda x: 1 - x,
                   lambda x, k, c, p: ((2 * k + 1 - x) * c - k * p) / (k + 1))


def legendre_polynomial_p(input: Any, n: Any) -> Tensor:
    """The Legendre polynomials ``P_n(input)``."""
    return _simple(input, n, lambda x: x,
                   lambda x, k, c, p: ((2 * k + 1) * x * c - k * p) / (k + 1), at_pm1=True)


__all__ = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
           "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
           "laguerre_polynomial_l", "legendre_polynomial_p"]
