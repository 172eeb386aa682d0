"""Cases of view semantics: in-place ops through views reach the base and every other view.

Each case writes through a view of a non-leaf copy of its input, then returns the base and
the views, so the harness compares the values every tensor holds afterwards and the
gradients that flow back through the rewritten history (PyTorch's CopySlices).
"""

from __future__ import annotations

import volta_core as vt

from ..case import FLOAT, Arg, OpCase


def _a(*shape: int, low: float = -1.0, high: float = 1.0) -> Arg:
    return Arg(tuple(shape), low, high)


def _slice_mul(x, w):
    y = x * 1
    v = y[:, 1:3]
    other = y[1]  # a second view, made before the write
    v.mul_(w)
    return y, v, other


def _select_fill(x):
    y = x * 1
    y[1].fill_(0.5)
    return y


def _diagonal_copy(x, d):
    y = x * 1
    y.diagonal().copy_(d)
    return y, y.diagonal()


def _transpose_add(x, z):
    y = x * 1
    y.t().add_(z)
    return y


def _view_of_view(x):
    y = x * 1
    y.view(12)[2:5].zero_()
    return y


def _stale_view(x):
    y = x * 1
    v = y[1:]
    y.mul_(2)
    return v


def _setitem_view(x, w):
    y = x * 1
    y[:, 0][1:] = w
    return y


def _split_add(x):
    y = x * 1
    a, b = y.split([2, 3])
    a.add_(1)
    return y, b


def _unbind_mul(x):
    y = x * 1
    rows = y.unbind(0)
    rows[0].mul_(3)
    return y, rows[1]


def _detach_write(x):
    y = x * 1
    y.detach()[0].fill_(3)  # values change, history does not
    return y


def _expand_then_write(x, s):
    y = x * 1
    y.unsqueeze(0).expand(2, 3, 4)[0].add_(s)  # one element each: allowed
    return y


def _unfold_add(x):
    y = x * 1
    y.unfold(0, 2, 2).mul_(2)
    return y


CASES: list = [
    OpCase("views/slice_mul_", "Tensor.mul_", FLOAT, args=(_a(3, 4), _a(3, 2)), fn=_slice_mul),
    OpCase("views/select_fill_", "Tensor.fill_", FLOAT, args=(_a(3, 4),), fn=_select_fill),
    OpCase("views/diagonal_copy_", "diagonal", FLOAT, args=(_a(3, 3), _a(3)),
           fn=_diagonal_copy),
    OpCase("views/transpose_add_", "Tensor.add_", FLOAT, args=(_a(3, 4), _a(4, 3)),
           fn=_transpose_add),
    OpCase("views/view_of_view_zero_", "Tensor.zero_", FLOAT, args=(_a(3, 4),),
           fn=_view_of_view),
    OpCase("views/stale_view", "Tensor.mul_", FLOAT, args=(_a(3, 4),), fn=_stale_view),
    OpCase("views/setitem", "Tensor.__setitem__", FLOAT, args=(_a(3, 4), _a(2)),
           fn=_setitem_view),
    # pieces of split/unbind can't be written under autograd (PyTorch refuses it too)
    OpCase("views/split_add_", "split", FLOAT, args=(_a(5, 3),), fn=_split_add, grad=False),
    OpCase("views/unbind_mul_", "unbind", FLOAT, args=(_a(3, 4),), fn=_unbind_mul,
           grad=False),
    OpCase("views/detach_fill_", "Tensor.detach", FLOAT, args=(_a(3, 4),), fn=_detach_write),
    OpCase("views/expand_select_add_", "Tensor.add_", FLOAT, args=(_a(3, 4), _a(3, 4)),
           fn=_expand_then_write),
    OpCase("views/unfold_mul_", "unfold", FLOAT, args=(_a(5, 2),), fn=_unfold_add),
    OpCase("views/unfold", "unfold", FLOAT, args=(_a(3, 7),),
           fn=lambda x: vt.unfold(x, 1, 3, 2)),
    OpCase("views/as_strided", "as_strided", FLOAT, args=(_a(4, 5),),
           fn=lambda x: vt.as_strided(x, (3, 3), (5, 2), 1)),
    OpCase("views/contiguous_copy", "Tensor.contiguous", FLOAT, args=(_a(3, 4),),
           fn=lambda x: (lambda c: (c.add_(1), x * 1))((x * 1).t().contiguous())),
]
