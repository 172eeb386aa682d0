"""``einsum``: Einstein summation built from diagonal, sum, permute, reshape and matmul.

Every step is a differentiable Volta op, so einsum needs no backward of its own. The
plan: take the diagonal of labels repeated within one operand, sum away labels that no
other operand and not the output use, then contract operands left to right with one
batched matmul each (shared labels still needed become batch dims, the others are
contracted), and finally permute to the output order.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..autograd.function import Function
from ..dtypes import promote_types
from ..errors import ShapeError
from ..tensor import Tensor
from .elementwise import cast
from .linalg import matmul
from .movement import expand, permute, reshape
from .reduce import sum as _sum


class Diagonal(Function):
    """The diagonal of the last two (equal) dims: ``(..., n, n) -> (..., n)``."""

    def forward(ctx, x):
        n = x.shape[-1]
        flat = ctx.xp.reshape(x, tuple(x.shape[:-2]) + (n * n,))
        return flat[..., ::n + 1]

    def backward(ctx, g):
        from ..creation import eye

        n = g.shape[-1]
        return g.unsqueeze(-1) * eye(n, dtype=g.dtype, device=g.device)


def diagonal_last(x: Tensor, d1: int, d2: int) -> Tensor:
    """Diagonal over dims ``d1`` and ``d2`` of ``x``, appended as its last dim."""
    rest = [i for i in range(x.ndim) if i not in (d1, d2)]
    return Diagonal.apply(permute(x, tuple(rest + [d1, d2])))


def _label_error(equation: str, why: str) -> ShapeError:
    return ShapeError(f"einsum: invalid equation {equation!r}: {why}")


@lru_cache(maxsize=256)
def _parse(equation: str, ndims: tuple[int, ...]) -> tuple[tuple, tuple]:
    """Labels (ints; ellipsis dims are negative) of each operand and of the output."""
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ndims):
        raise _label_error(equation, f"it has {len(terms)} operand term(s) but "
                           f"{len(ndims)} operand(s) were given")
    n_ell = 0
    parsed = []
    for k, (term, nd) in enumerate(zip(terms, ndims)):
        head, dots, tail = term.partition("...")
        if "." in head + tail:
            raise _label_error(equation, f"term {term!r} has a '.' outside one '...'")
        letters = head + tail
        if not all(c.isascii() and c.isalpha() for c in letters):
            raise _label_error(equation, f"term {term!r} may use only letters a-z, A-Z "
                               "and one '...'")
        extra = nd - len(letters)
        if extra < 0 or (extra and not dots):
            raise ShapeError(f"einsum: operand {k} has {nd} dims but its term {term!r} "
                             f"names {len(letters)}; the counts must match")
        n_ell = max(n_ell, extra)
        parsed.append((head, extra if dots else 0, tail))
    labels = []
    for head, extra, tail in parsed:  # ellipsis dims are right-aligned: -n_ell .. -1
        labels.append(tuple(ord(c) for c in head) + tuple(range(-extra, 0))
                      + tuple(ord(c) for c in tail))
    ell = tuple(range(-n_ell, 0))
    if arrow:
        head, dots, tail = out.partition("...")
        if "." in head + tail or not all(c.isascii() and c.isalpha() for c in head + tail):
            raise _label_error(equation, f"output {out!r} may use only letters and one '...'")
        output = tuple(ord(c) for c in head) + (ell if dots else ()) + tuple(
            ord(c) for c in tail)
        seen = {lab for ls in labels for lab in ls}
        for lab in output:
            if lab >= 0 and lab not in seen:
                raise _label_error(equation, f"output label {chr(lab)!r} is in no operand")
        if len(set(output)) != len(output):
            raise _label_error(equation, "the output repeats a label")
    else:
        counts: dict[int, int] = {}
        for ls in labels:
            for lab in ls:
                if lab >= 0:
                    counts[lab] = counts.get(lab, 0) + 1
        output = ell + tuple(sorted(lab for lab, c in counts.items() if c == 1))
    return tuple(labels), output


def _drop_repeats(x: Tensor, labels: list) -> tuple[Tensor, list]:
    while len(set(labels)) != len(labels):
        for p, lab in enumerate(labels):
            if lab in labels[p + 1:]:
                q = labels.index(lab, p + 1)
                if x.shape[p] != x.shape[q]:
                    raise ShapeError(f"einsum: label {chr(lab)!r} is repeated in one operand "
                                     f"over dims of sizes {x.shape[p]} and {x.shape[q]}")
                x = diagonal_last(x, p, q)
                labels = [v for i, v in enumerate(labels) if i not in (p, q)] + [lab]
                break
    return x, labels


def _prod(sizes: Any) -> int:
    n = 1
    for s in sizes:
        n *= s
    return n


def _contract(a: Tensor, la: list, b: Tensor, lb: list, keep: set) -> tuple[Tensor, list]:
    """Contract two operands with one matmul; labels in ``keep`` survive."""
    sa = dict(zip(la, a.shape))
    sb = dict(zip(lb, b.shape))
    shared = [lab for lab in la if lab in sb]
    for lab in shared:  # broadcast size-1 dims against the other operand's
        if sa[lab] != sb[lab]:
            if sa[lab] != 1 and sb[lab] != 1:
                raise ShapeError(f"einsum: label {_name(lab)} has size {sa[lab]} in one "
                                 f"operand and {sb[lab]} in another")
            sa[lab] = sb[lab] = max(sa[lab], sb[lab])
    batch = [lab for lab in shared if lab in keep]
    summed = [lab for lab in shared if lab not in keep]
    left = [lab for lab in la if lab not in sb]
    right = [lab for lab in lb if lab not in sa]
    a = permute(a, tuple(la.index(lab) for lab in batch + left + summed))
    a = expand(a, tuple(sa[lab] for lab in batch + left + summed))
    b = permute(b, tuple(lb.index(lab) for lab in batch + summed + right))
    b = expand(b, tuple(sb[lab] for lab in batch + summed + right))
    bs = tuple(sa[lab] for lab in batch)
    ls, ss, rs = ([sa[lab] for lab in left], [sa[lab] for lab in summed],
                  [sb[lab] for lab in right])
    a = reshape(a, bs + (_prod(ls), _prod(ss)))
    b = reshape(b, bs + (_prod(ss), _prod(rs)))
    out = reshape(matmul(a, b), bs + tuple(ls) + tuple(rs))
    return out, batch + left + right


def _name(lab: int) -> str:
    return repr(chr(lab)) if lab >= 0 else "'...'"


def einsum(equation: str, *operands: Tensor) -> Tensor:
    """Sum of products of the operands' elements over the labels of ``equation``.

    Args:
        equation: subscripts such as ``'bij,bjk->bik'``; one letter per dim, ``...`` for
            broadcast dims, ``->`` then the output's labels (when omitted, the output has
            the ellipsis dims then the labels used once, sorted).
        operands: the tensors, one per term (or a single list of them).

    Examples: ``einsum('ij,jk->ik', a, b)`` is ``a @ b``; ``einsum('ii', a)`` the trace.
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands or any(type(t) is not Tensor for t in operands):
        raise TypeError("einsum: expected one or more Tensor operands after the equation")
    labels, output = _parse(equation, tuple(t.ndim for t in operands))
    dt = operands[0].dtype
    for t in operands[1:]:
        dt = promote_types(dt, t.dtype)
    ops = [cast(t, dt) for t in operands]
    counts: dict[int, int] = {}
    work = []
    for x, ls in zip(ops, labels):
        x, ls = _drop_repeats(x, list(ls))
        work.append((x, ls))
        for lab in ls:
            counts[lab] = counts.get(lab, 0) + 1
    out_set = set(output)
    for i, (x, ls) in enumerate(work):  # labels nobody else needs are summed right away
        lonely = [d for d, lab in enumerate(ls) if counts[lab] == 1 and lab not in out_set]
        if lonely:
            x = _sum(x, tuple(lonely))
            work[i] = (x, [lab for d, lab in enumerate(ls) if d not in lonely])
    x, ls = work[0]
    for k in range(1, len(work)):
        keep = set(out_set)
        for _, later in work[k + 1:]:
            keep.update(later)
        x, ls = _contract(x, ls, work[k][0], work[k][1], keep)
    return permute(x, tuple(ls.index(lab) for lab in output))


__all__ = ["einsum"]
