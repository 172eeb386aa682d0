"""Shape and stride arithmetic (pure Python, no GPU)."""

from __future__ import annotations

from ._errors import ShapeError


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides, in elements."""
    strides = []
    s = 1
    for n in reversed(shape):
        strides.append(s)
        s *= n
    return tuple(reversed(strides))


def prod(shape: tuple[int, ...]) -> int:
    """Product of a shape (1 for ``()``)."""
    p = 1
    for n in shape:
        p *= n
    return p


def broadcast_shapes(*shapes: tuple[int, ...], op: str = "broadcast") -> tuple[int, ...]:
    """The NumPy broadcast of several shapes, or a ShapeError naming them."""
    if len(shapes) == 1:
        return tuple(shapes[0])
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(-ndim, 0):
        n = 1
        for s in shapes:
            if len(s) >= -i:
                m = s[i]
                if m != 1:
                    if n not in (1, m):
                        raise ShapeError(f"{op}: shapes {', '.join(map(str, shapes))} cannot "
                                         f"be broadcast together")
                    n = m
        out.append(n)
    return tuple(out)


def broadcast_strides(shape: tuple[int, ...], strides: tuple[int, ...],
                      to: tuple[int, ...]) -> tuple[int, ...]:
    """Strides that view an array of ``shape``/``strides`` as shape ``to`` (0 on new dims)."""
    pad = len(to) - len(shape)
    out = [0] * pad
    for n, s, t in zip(shape, strides, to[pad:]):
        out.append(0 if n == 1 and t != 1 else s)
    return tuple(out)


def collapse(shape: tuple[int, ...], strides_list: list[tuple[int, ...]]
             ) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """Merge adjacent dims that every operand walks contiguously; drop size-1 dims.

    Returns the new shape and the new strides of each operand; fewer dims mean a
    cheaper index computation and fewer pipelines (most ops end up 1-D).
    """
    dims = [i for i, n in enumerate(shape) if n != 1]
    if not dims:
        return (), [() for _ in strides_list]
    new_shape = [shape[dims[0]]]
    new_strides = [[s[dims[0]]] for s in strides_list]
    for i in dims[1:]:
        n = shape[i]
        if all(ns[-1] == s[i] * n for ns, s in zip(new_strides, strides_list)):
            new_shape[-1] *= n
            for ns, s in zip(new_strides, strides_list):
                ns[-1] = s[i]
        else:
            new_shape.append(n)
            for ns, s in zip(new_strides, strides_list):
                ns.append(s[i])
    return tuple(new_shape), [tuple(s) for s in new_strides]


def normalize_axis(axis: int, ndim: int, op: str = "op") -> int:
    """A non-negative axis, or an IndexError-style ShapeError naming the op."""
    if not -ndim <= axis < max(ndim, 1) or (ndim == 0 and axis not in (0, -1)):
        from ._errors import IndexOutOfRangeError
        raise IndexOutOfRangeError(f"{op}: axis {axis} is out of range for an array of "
                                   f"{ndim} dimensions")
    return axis % ndim if ndim else 0


def normalize_axes(axis, ndim: int, op: str = "op") -> tuple[int, ...]:
    """Axes as a sorted tuple of non-negative ints (``None`` means all)."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    out = tuple(sorted(normalize_axis(a, ndim, op) for a in axis))
    if len(set(out)) != len(out):
        raise ShapeError(f"{op}: repeated axis in {axis}")
    return out
