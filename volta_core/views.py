"""Views: tensors that share their base's values, as PyTorch's views share its storage.

The Array API standard leaves mutation of views to each library, so Volta never writes
into a backend array: an in-place op computes its result out of place and *rebinds* the
array of the tensor it changes. What makes views work on top of that (PyTorch's
"functionalization"):

* A view records its **owner** (``_owner``: the tensor whose array holds its values) and
  where its elements sit in the owner, as PyTorch strides: ``ViewMeta.strides`` and
  ``offset``, in elements of the owner's contiguous (row-major) layout. The owner is the
  single source of truth; ``_base`` reports the view's base as PyTorch does.
* An in-place op on a view writes its new values into the base at those positions
  (:func:`assign`), as an ``IndexPut`` that autograd records when it records the op
  (PyTorch's CopySlices), and bumps the base's *generation* ``_gen``.
* Reading a view whose base's generation moved on re-derives it (:func:`refresh`): a
  gather of the base at the view's positions, recorded by autograd when the base
  requires grad, so the view's ``grad_fn`` follows the base's new history.
* ``detach()`` and ``.data`` are *aliases* (``ViewMeta.alias``): they share the values
  but not the history, and PyTorch does not count them as views. An alias never
  references a tensor with a history, so ``losses.append(loss.detach())`` does not keep
  the step's graph alive: detaching a tensor whose owner has a ``grad_fn`` first moves
  the owner's values into a history-free *storage* tensor, of which the owner becomes a
  whole alias (:func:`make_alias`). A whole alias lays its elements out as its owner
  does, so its own views are views of it (two levels: reading one syncs the alias
  first, and a write into it is pushed on to its owner).

A fresh tensor made by an op is contiguous and its own owner; nothing here runs on that
path except one ``_owner is None`` check when its array is read.
"""

from __future__ import annotations

import math
from typing import Any

from .autograd.function import Function
from .autograd.grad_mode import state as _grad_state
from .errors import AutogradError, ShapeError
from .tensor import Tensor


class ViewMeta:
    """Where a view's elements sit in its base, and how it relates to the base's history.

    Attributes:
        strides: elements to step in the base's flat layout per step along each dim.
        offset: flat position in the base of the view's first element.
        grad: whether the view is differentiable w.r.t. the base (False for ``detach``).
        records: whether the view was made while autograd recorded (False under no_grad).
        positions: cached flat positions of every element (a backend int array), or None.
        multi: made by an op returning several views (split, chunk, unbind): PyTorch
            forbids writing to it, or using it after its base changed, under autograd.
        alias: made by ``detach()``/``.data``: shares the values, has its own history,
            and is no view for PyTorch (``_base`` is None).
        origin: the base PyTorch reports, where it is not the owner (a view of an alias
            that covers part of its owner), else None. Such a view follows the origin's
            history, gathering from it at ``within`` (its positions in the origin).
    """

    __slots__ = ("strides", "offset", "grad", "records", "positions", "multi", "alias",
                 "origin", "within")

    def __init__(self, strides: tuple, offset: int, grad: bool, records: bool,
                 multi: bool = False, alias: bool = False, origin: Tensor | None = None
                 ) -> None:
        self.strides, self.offset, self.grad, self.records = strides, offset, grad, records
        self.positions = None
        self.multi = multi
        self.alias, self.origin = alias, origin
        self.within = None


def contiguous_strides(shape: tuple) -> tuple:
    """Row-major strides of ``shape``, in elements."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def layout(t: Tensor) -> tuple[tuple, int]:
    """``(strides, offset)`` of ``t`` in its base's flat layout (its own, if not a view)."""
    if t._owner is None:
        return contiguous_strides(t.shape), 0
    return t._view.strides, t._view.offset


def is_contiguous(shape: tuple, strides: tuple) -> bool:
    """PyTorch's rule: strides are row-major, ignoring dims of size 1; empty counts too."""
    if 0 in shape:
        return True
    step = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1:
            if s != step:
                return False
            step *= n
    return True


def view_base(t: Tensor) -> Tensor:
    """The tensor that views of ``t`` are views of: ``t`` itself if it is no view (a whole
    alias counts, its layout being its owner's), else its owner."""
    owner = _follow(t)
    if owner is None or (t._view.alias and _is_whole(t)):
        return t
    return owner


def storage(t: Tensor) -> Tensor:
    """The tensor whose array finally holds ``t``'s values (layouts relative to it agree)."""
    while _follow(t) is not None:
        t = t._owner
    return t


def rebind(t: Tensor, other: Tensor) -> None:
    """``t.data = other``: ``t`` shares ``other``'s values from now on (shape and dtype
    may change), keeping its own history and version counter. Views and aliases made of
    ``t`` before keep the values they had, as in PyTorch: ``t``'s old values move to a new
    tensor, which they follow the next time they are read or written (:func:`_follow`)."""
    if other is t:
        return
    _follow(other)  # a view of t itself takes t's old values, not t's new ones
    if view_base(t) is t:  # views or aliases may point at t
        old = Tensor._make(t._data, t.device)
        old._owner, old._gen = t._owner, t._gen
        if t._owner is not None:
            old._view, old._seen = t._view, t._seen
        t._gen += 1
        moved = getattr(t, "_moved", None) or []
        t._moved = [*moved, (t._gen, old)]
    if other._owner is None and other.grad_fn is None and t.grad_fn is None:
        # the usual case (p.data = fresh values): t holds the values and other becomes a
        # whole alias of it, so that t (a parameter) stays a plain tensor for the fast paths
        t._data, t._owner, t._view = other._data, None, None
        t._gen += 1
        other._owner = t
        other._view = ViewMeta(contiguous_strides(tuple(t._data.shape)), 0, False, True,
                               alias=True)
        other._seen = t._gen
        return
    version = t._version
    t._data = other.array
    make_alias(t, other)
    t._version = version


def _follow(t: Tensor) -> Tensor | None:
    """Point ``t`` at the tensor holding its values, if its owner was rebound (``.data =``)
    since ``t`` last read it; return the owner."""
    owner = t._owner
    moves = getattr(owner, "_moved", None)
    if moves:
        for gen, old in moves:
            if t._seen < gen:
                t._owner = owner = old
                break
    return owner


def make_view(out: Tensor, parent: Tensor, strides: tuple, offset: int,
              grad: bool = True) -> Tensor:
    """Mark ``out`` (the op's result, values already right) as a view of ``parent``'s base."""
    multi, origin = False, None
    base = view_base(parent)
    if base is not parent:
        meta = parent._view
        if meta.alias:  # part of its owner, detached: its views follow it (``origin``)
            origin = parent
        else:
            grad, multi, origin = grad and meta.grad, meta.multi, meta.origin
    out._owner = base
    out._view = ViewMeta(tuple(strides), offset, grad, _grad_state.enabled, multi,
                         origin=origin)
    out._seen = base._gen
    out._version = parent._version  # one counter for base and views (own for .data)
    return out


def make_alias(out: Tensor, src: Tensor) -> Tensor:
    """Mark ``out`` (``src``'s values) as ``src`` detached: sharing its values and version
    counter but not its history, and referencing no tensor that has a history."""
    strides, offset = layout(src)  # relative to storage(src): a whole alias lays out alike
    owner = storage(src)
    if owner.grad_fn is not None:
        owner = _to_storage(owner)
    out._owner = owner
    out._view = ViewMeta(tuple(strides), offset, False, _grad_state.enabled, alias=True)
    out._seen = owner._gen
    out._version = src._version
    return out


def _to_storage(t: Tensor) -> Tensor:
    """Move the values of ``t`` (no view, with a history) into a new history-free tensor,
    of which ``t`` becomes a whole alias; return that tensor."""
    store = Tensor._make(t._data, t.device)
    t._owner = store
    t._view = ViewMeta(contiguous_strides(tuple(t._data.shape)), 0, False, True, alias=True)
    t._seen = store._gen
    return store


def _push(t: Tensor) -> None:
    """Hand the new values of the whole alias ``t`` on to its owner (and on up: an owner
    that is no storage is a whole alias too, of a tensor detached after it)."""
    while t._owner is not None:
        owner = t._owner
        owner._data = t._data
        owner._gen += 1
        t._seen = owner._gen
        t = owner


def view_strides(old_shape: tuple, old_strides: tuple, new_shape: tuple) -> tuple | None:
    """Strides that view ``old`` as ``new_shape`` without a copy, or None if there are none.

    Dims of the old shape are grouped into runs that are contiguous with each other; a
    view is possible when each run of new dims multiplies up to exactly one old run.
    """
    if math.prod(old_shape) == 0 or not old_shape:
        return contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    nd = len(new_shape) - 1
    base_stride = old_strides[-1]
    old_n = new_n = 1
    for d in range(len(old_shape) - 1, -1, -1):
        old_n *= old_shape[d]
        run_ends = d == 0 or (old_shape[d - 1] != 1
                              and old_strides[d - 1] != old_n * base_stride)
        if run_ends:
            while nd >= 0 and (new_n < old_n or new_shape[nd] == 1):
                new_strides[nd] = new_n * base_stride
                new_n *= new_shape[nd]
                nd -= 1
            if new_n != old_n:
                return None
            if d > 0:
                base_stride = old_strides[d - 1]
                old_n = new_n = 1
    return tuple(new_strides) if nd == -1 else None


def strided_positions(dev: Any, shape: tuple, strides: tuple, offset: int) -> Any:
    """Flat positions ``offset + sum(i_d * strides[d])`` of a strided layout (an int array)."""
    xp = dev.xp
    idt = dev.native_dtype("int64")
    pos = xp.full(shape, offset, dtype=idt, device=dev.native)
    for d, (n, s) in enumerate(zip(shape, strides)):
        if n != 1 and s:
            step = xp.arange(0, n * s, s, dtype=idt, device=dev.native)
            pos = pos + xp.reshape(step, (1,) * d + (n,) + (1,) * (len(shape) - d - 1))
    return pos


def positions(t: Tensor) -> Any:
    """Flat positions in the base of each element of the view ``t`` (cached)."""
    meta = t._view
    if meta.positions is None:
        meta.positions = strided_positions(t.device, tuple(t._data.shape), meta.strides,
                                           meta.offset)
    return meta.positions


def within(t: Tensor) -> Any:
    """Flat positions in its origin of each element of the view ``t`` (cached)."""
    from .backend.kernels import get_kernel

    meta = t._view
    if meta.within is None:
        dev = t.device
        xp, idt = dev.xp, dev.native_dtype("int64")
        # the origin's index of each position of the owner it covers, then the view's
        at = xp.reshape(positions(meta.origin), (-1,))
        index = xp.arange(at.shape[0], dtype=idt, device=dev.native)
        inverse = xp.zeros((t._owner.numel(),), dtype=idt, device=dev.native)
        inverse = get_kernel(dev.backend, "scatter")(xp, inverse, 0, at, index)
        meta.within = xp.take(inverse, xp.reshape(positions(t), (-1,)))
    return meta.within


def _source(t: Tensor) -> Tensor:
    """The tensor whose history the view ``t`` follows: its origin, else its owner."""
    origin = t._view.origin
    return t._owner if origin is None else origin


def mark_multi(views: tuple) -> tuple:
    """Mark the views returned together by split/chunk/unbind (see ``ViewMeta.multi``)."""
    for v in views:
        if v._owner is not None:
            v._view.multi = True
    return views


def _assign_through_origin(t: Tensor, out: Tensor) -> None:
    """Write ``out`` into the view ``t`` of a detached part of memory, recorded: the
    origin takes the write into its history, and its values go on to the owner."""
    from .ops.inplace import IndexPut

    origin = t._view.origin
    old = Tensor._make(origin.array, origin.device, origin.requires_grad, origin.grad_fn)
    new = IndexPut.apply(old, out, Tensor._make(_shaped(t, within(t)), t.device))
    assign(origin, new, True)


def _shaped(t: Tensor, flat: Any) -> Any:
    """``flat`` (one entry per element of ``t``) in ``t``'s shape."""
    return t.device.xp.reshape(flat, tuple(t._data.shape))


def _is_whole(t: Tensor) -> bool:
    """Whether the view covers its base exactly, element for element."""
    meta = t._view
    shape = tuple(t._data.shape)
    return (meta.offset == 0 and shape == tuple(t._owner._data.shape)
            and is_contiguous(shape, meta.strides))


class StaleMultiView(Function):
    """The ``grad_fn`` of a split/chunk/unbind piece whose base changed under autograd.

    PyTorch can't regenerate such a view's history and refuses to record any op on it;
    :meth:`Function.apply` raises :meth:`error` when it meets this node as a parent.
    """

    stale = True

    def __init__(self, shape: tuple) -> None:
        self.shape = shape
        self.parents = ()

    def error(self) -> AutogradError:
        return AutogradError(
            f"a view of shape {self.shape} made by split/chunk/unbind is used after its base "
            "or another view of its base was modified in place; such views can't follow the "
            "change under autograd (PyTorch refuses this too). Use the out-of-place op, or "
            "clone() the pieces before modifying the base")


def refresh(t: Tensor) -> None:
    """Re-derive the view ``t`` from its base, whose values changed since ``t`` was made."""
    from .ops.indexing import IndexSelect
    from .ops.movement import Reshape

    base, meta = _follow(t), t._view
    if t._seen == base._gen and base._owner is None:
        return  # it was its owner's, and the owner was rebound (``.data =``)
    if base._owner is not None:  # the view of a whole alias: the alias takes its owner's
        base.array  # noqa: B018 - values first
        if t._seen == base._gen:
            return
    gen = base._gen
    source = _source(t)
    follows = meta.grad and meta.records and source.requires_grad
    # a split/chunk/unbind piece takes the new values but not the history (StaleMultiView)
    record = follows and not meta.multi
    prev = _grad_state.enabled
    _grad_state.enabled = record
    try:
        shape = tuple(t._data.shape)
        if record and source is not base:  # gather from the origin, for its history
            flat = Reshape.apply(source, shape=(source.numel(),))
            fresh = Reshape.apply(IndexSelect.apply(flat, Tensor._make(within(t), t.device),
                                                    dim=0), shape=shape)
        elif _is_whole(t):
            fresh = Reshape.apply(base, shape=shape)
        else:
            flat = Reshape.apply(base, shape=(math.prod(base._data.shape),))
            pos = t.device.xp.reshape(positions(t), (-1,))
            fresh = Reshape.apply(IndexSelect.apply(flat, Tensor._make(pos, t.device), dim=0),
                                  shape=shape)
    finally:
        _grad_state.enabled = prev
    t._data = fresh._data
    if follows:
        t.grad_fn = fresh.grad_fn if record else StaleMultiView(t.shape)
        t.requires_grad = True
    t._seen = gen
    t._gen += 1  # an alias's own views re-derive in turn


def _overlaps(shape: tuple, strides: tuple) -> bool:
    """Whether two elements of a strided layout may share a position (expand, unfold)."""
    if 0 in shape:
        return False
    extent = 1  # positions spanned by the dims taken so far, smallest stride first
    for s, n in sorted((s, n) for s, n in zip(strides, shape) if n > 1):
        if s < extent:
            return True
        extent += s * (n - 1)
    return False


def _dense(shape: tuple, strides: tuple) -> bool:
    """Non-overlapping and dense: some order of the dims is row-major (size-1 dims aside)."""
    step = 1
    for st, n in sorted((st, n) for st, n in zip(strides, shape) if n > 1):
        if st != step:
            return False
        step *= n
    return True


def memory_overlap(t: Tensor, o: Tensor) -> str | None:
    """PyTorch's overlap status of two tensors' memory: ``"full"`` (the same elements in the
    same layout), ``"partial"``, or None (apart, or a layout too hard to tell: as PyTorch,
    only dense layouts are compared)."""
    if o is t:  # PyTorch's check compares tensors first: x[mask] = x is refused when empty
        return "full"
    if storage(o) is not storage(t):
        return None
    return layout_overlap((tuple(t.shape), *layout(t)), (tuple(o.shape), *layout(o)))


def layout_overlap(a: tuple, b: tuple) -> str | None:
    """:func:`memory_overlap` of two ``(shape, strides, offset)`` layouts of one storage."""
    (shape, strides, start), (other_shape, other_strides, other_start) = a, b
    if 0 in shape or 0 in other_shape:
        return None
    if not (_dense(shape, strides) and _dense(other_shape, other_strides)):
        return None
    end, other_end = start + math.prod(shape), other_start + math.prod(other_shape)
    if (start, end) == (other_start, other_end):
        return "full" if tuple(strides) == tuple(other_strides) else "partial"
    return "partial" if start < other_end and other_start < end else None


def check_no_partial_overlap(op: str, t: Tensor, others: tuple) -> None:
    """PyTorch's refusal of an in-place write whose operand shares some, not all, of the
    written-to memory (``v.t().mul_(v)``): the result would depend on the loop order. The
    same elements in the same layout are fine (``x.add_(x)``)."""
    for o in others:
        if type(o) is Tensor and memory_overlap(t, o) == "partial":
            raise ShapeError(
                f"{op}: some elements of the input tensor (shape {o.shape}) and the "
                f"written-to tensor (shape {t.shape}) refer to a single memory location; "
                "clone() the input before the in-place operation")


def check_writable(op: str, t: Tensor, records: bool, overlapping: bool = False) -> None:
    """Raise PyTorch's errors for in-place writes it refuses (``overlapping``: the write
    may meet an overlapping layout, as nothing is written)."""
    if t._owner is None or t._view.alias:
        if records and t.requires_grad and t.grad_fn is None:
            raise AutogradError(
                f"{op}: a leaf Variable that requires grad is being used in an in-place "
                "operation; wrap it in `with vt.no_grad():` (as optimizers do) or use the "
                "out-of-place op")
        if t._owner is None:
            return
    meta, base = t._view, _source(t)
    if records and meta.grad and base.requires_grad and base.grad_fn is None:
        raise AutogradError(
            f"{op}: a view of a leaf Variable that requires grad is being used in an "
            "in-place operation; wrap it in `with vt.no_grad():` or clone() the view first")
    if records and meta.grad and meta.multi:
        raise AutogradError(
            f"{op}: a view made by a function returning several views (split, chunk, "
            "unbind) is being modified in place under autograd, which PyTorch forbids too; "
            "use the out-of-place op, or clone() the piece first")
    # fill_/zero_ write one value everywhere: PyTorch allows them on overlapping views
    if not overlapping and op not in ("fill_", "zero_") and _overlaps(tuple(t._data.shape),
                                                                      meta.strides):
        raise ShapeError(
            f"{op}: more than one element of the written-to tensor (shape {t.shape}, "
            f"strides {meta.strides}) refers to a single memory location, as after "
            "expand() or an overlapping unfold(); clone() the tensor before writing to it")


def write_values(t: Tensor, array: Any) -> None:
    """Make the backend ``array`` the values of ``t``, a tensor that is no view: ``t``
    takes the array, except while ``t``'s device captures a CUDA graph, where the values
    are copied into ``t``'s own memory (same shape and dtype), as PyTorch's in-place
    writes do. A replay must update the memory the next replay reads: a buffer rebound to
    an array of the graph's pool would be recomputed from its value at capture time on
    every replay (a running statistic that never accumulates)."""
    if array is not t._data and t.device.type == "cuda":
        graphs = getattr(t.device.backend, "graphs", None)
        old = t._data
        if (graphs is not None and graphs.is_capturing() and old.shape == array.shape
                and old.dtype == array.dtype):
            old[...] = array
            t._gen += 1
            return
    t._data = array
    t._gen += 1


def assign(t: Tensor, out: Tensor, records: bool) -> None:
    """Make ``out`` (same shape and dtype) the new value of ``t``; writes views into their base.

    With ``records``, the write is part of the autograd graph: ``t`` (or, for a view, its
    base) takes ``out``'s history.
    """
    base = _follow(t)
    if base is None:
        write_values(t, out.array)
        if records:
            t.grad_fn, t.requires_grad = out.grad_fn, out.requires_grad
        return
    meta = t._view
    if base._owner is not None:
        base.array  # noqa: B018 - a whole alias takes its owner's values before the write
    differentiable = records and meta.grad
    if differentiable and meta.origin is not None:
        _assign_through_origin(t, out)
        return
    if _is_whole(t) and not differentiable:
        new = out.array
        if tuple(new.shape) != tuple(base._data.shape):
            new = base.device.xp.reshape(new, base._data.shape)
        write_values(base, new)
    else:
        from .ops.inplace import IndexPut

        old = Tensor._make(base._data, base.device, base.requires_grad, base.grad_fn)
        prev = _grad_state.enabled
        _grad_state.enabled = differentiable
        try:
            new = IndexPut.apply(old, out, Tensor._make(positions(t), t.device))
        finally:
            _grad_state.enabled = prev
        write_values(base, new._data)
        if differentiable:
            base.grad_fn, base.requires_grad = new.grad_fn, new.requires_grad
    if base._owner is not None:
        _push(base)
    if records and not meta.grad:  # detach()/.data: the alias itself takes out's history
        t._data, t._seen = out.array, base._gen
        t._gen += 1
        t.grad_fn, t.requires_grad = out.grad_fn, out.requires_grad


__all__ = ["ViewMeta", "contiguous_strides", "layout", "is_contiguous", "view_base",
           "storage", "rebind", "make_view", "make_alias",
           "view_strides", "strided_positions", "positions", "mark_multi", "refresh",
           "memory_overlap", "check_no_partial_overlap", "check_writable", "assign"]
