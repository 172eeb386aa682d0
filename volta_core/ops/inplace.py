"""In-place ops: ``add_``, ``mul_``, ``copy_``, ``x += y``, ``x[key] = v``, ...

Every in-place op computes its result out of place with the ordinary differentiable op,
then makes it the tensor's new value (:func:`volta_core.views.assign`) and bumps the
version counter it shares with its views (so autograd detects a changed tensor that a
backward still needs). Backend arrays are never written into: a tensor takes a new
array, and an in-place op on a view writes into its base, where every other view of the
base sees it. When autograd records the op, the tensor (or the view's base) takes the
result's history, as PyTorch's CopySlices does.

As in PyTorch, an in-place op on a leaf that requires grad, or on a view of one, raises
while grad mode is on; under ``vt.no_grad()`` it is allowed (optimizers update
parameters that way). Writing to an expanded tensor whose elements overlap raises.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..autograd.function import Function, rebind_output
from ..autograd.grad_mode import state as _grad_state
from ..dtypes import checked_scalar
from ..errors import AutogradError, DeviceError, DTypeError, ShapeError
from ..tensor import Tensor, tensor_method
from ..views import (
    _overlaps,
    assign,
    check_no_partial_overlap,
    check_writable,
    layout,
    layout_overlap,
    memory_overlap,
    storage,
    view_strides,
)
from ._util import broadcast_shapes
from .elementwise import add, sub
from .indexing import _as_python, getitem
from .movement import clone, expand, expand_strides, reshape, squeeze, sum_to, transpose, unsqueeze

_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2}


def _records(self: Tensor, others: tuple) -> bool:
    if not _grad_state.enabled:
        return False
    return self.requires_grad or any(type(o) is Tensor and o.requires_grad for o in others)


def _conform(op: str, self: Tensor, out: Tensor) -> Tensor:
    if out.shape != self.shape:
        raise ShapeError(f"{op}: the result's shape {out.shape} doesn't match the shape "
                         f"{self.shape} of the tensor written in place")
    if out.dtype is not self.dtype:
        if _ORDER[out.dtype.kind] > _ORDER[self.dtype.kind]:
            raise DTypeError(f"{op}: result type {out.dtype.name} can't be cast to the "
                             f"in-place tensor's dtype {self.dtype.name}; use the "
                             "out-of-place op or convert the tensor first")
        out = out.to(self.dtype)
    return out


class _Overwrite(Function):
    """``new``, as the value that replaced ``old``: no gradient reaches ``old``."""

    def forward(ctx, old, new):
        return new

    def backward(ctx, g):
        return (g.new_zeros(g.shape) if ctx.needs_input_grad[0] else None), g


def inplace(self: Tensor, op: str, fn: Callable[[Tensor], Tensor], *others: Any,
            shares: bool = False) -> Tensor:
    """Run ``fn(self)`` out of place and make the result ``self``'s value; returns ``self``.

    Args:
        self: the tensor modified in place (a view writes into its base).
        op: the op's name, for errors.
        fn: computes the new value from (a snapshot of) ``self``.
        others: the op's other operands, to tell whether autograd records it.
        shares: ``fn``'s result may be an operand's array (or a broadcast view of one):
            copy it, so that ``self`` owns its values (kernels such as fused optimizer
            steps update a parameter's array in place). Such an op (``copy_``, ``fill_``
            of a tensor) overwrites all of ``self``: the old value's graph stays in
            self's, with a zero gradient, as PyTorch's CopyBackwards keeps it.
    """
    records = _records(self, others)
    check_writable(op, self, records)
    if others and op != "__setitem__":  # setitem writes self[key], not self: see its copy_
        check_no_partial_overlap(op, self, others)
    old = Tensor._make(self.array, self.device, self.requires_grad, self.grad_fn)
    out = _conform(op, self, fn(old))
    if shares:
        out = clone(out)
    if records and (out.grad_fn is None or shares and old.requires_grad):
        # a constant or a leaf (fill_, copy_(w)): self still takes a node of the graph; an
        # overwritten graph still runs its backward (with zeros: its leaves get zero
        # gradients, and a saved tensor changed since refuses, as in PyTorch)
        out = _Overwrite.apply(old, out)
    assign(self, out, records)
    self._version[0] += 1
    if records and not any(out is o for o in others):
        # the op's output is now self: a later in-place change of self is seen by the
        # backward of the op that made it (PyTorch's exp_ saves its result, self)
        rebind_output(out.grad_fn, out._version, self._version)
    return self


def _method(name: str, fn: Callable) -> Callable:
    fn.__name__ = name
    setattr(Tensor, name, fn)
    return fn


# -- arithmetic ---------------------------------------------------------------------------

def add_(self: Tensor, other: Any, *, alpha: float = 1) -> Tensor:
    """``self += alpha * other`` in place (``alpha * other`` in the result dtype)."""
    if alpha == 1:
        return inplace(self, "add_", lambda s: s + other, other)
    return inplace(self, "add_", lambda s: add(s, other, alpha=alpha), other)


def sub_(self: Tensor, other: Any, *, alpha: float = 1) -> Tensor:
    """``self -= alpha * other`` in place (``alpha * other`` in the result dtype)."""
    if alpha == 1:
        return inplace(self, "sub_", lambda s: s - other, other)
    return inplace(self, "sub_", lambda s: sub(s, other, alpha=alpha), other)


def mul_(self: Tensor, other: Any) -> Tensor:
    """``self *= other`` in place."""
    return inplace(self, "mul_", lambda s: s * other, other)


def div_(self: Tensor, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """``self /= other`` in place (a floating tensor is needed unless ``rounding_mode`` is
    ``"trunc"`` or ``"floor"``, which keep integer dtypes, as :func:`div`)."""
    if rounding_mode is None:
        return inplace(self, "div_", lambda s: s / other, other)
    from .division import rounded_div

    return inplace(self, "div_", lambda s: rounded_div("div", s, other, rounding_mode), other)


def pow_(self: Tensor, exponent: Any) -> Tensor:
    """``self **= exponent`` in place."""
    return inplace(self, "pow_", lambda s: s ** exponent, exponent)


def remainder_(self: Tensor, other: Any) -> Tensor:
    """``self %= other`` in place."""
    return inplace(self, "remainder_", lambda s: s % other, other)


def fmod_(self: Tensor, other: Any) -> Tensor:
    """``self = fmod(self, other)`` in place (C's fmod: the sign of ``self``)."""
    return inplace(self, "fmod_", lambda s: s.fmod(other), other)


def method_form(name: str) -> Callable:
    """Attach ``Tensor.{name}_``: the method ``name`` (same arguments) written in place."""
    def op(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        others = tuple(a for a in args if type(a) is Tensor)
        return inplace(self, f"{name}_", lambda s: getattr(s, name)(*args, **kwargs),
                       *others)

    op.__doc__ = f"In-place :meth:`Tensor.{name}`."
    return _method(f"{name}_", op)


for _f in (add_, sub_, mul_, div_, pow_, remainder_, fmod_):
    _method(_f.__name__, _f)
bitwise_and_, bitwise_or_, bitwise_xor_, bitwise_left_shift_, bitwise_right_shift_ = (
    method_form(f"bitwise_{n}") for n in ("and", "or", "xor", "left_shift", "right_shift"))
Tensor.subtract_, Tensor.multiply_, Tensor.divide_ = sub_, mul_, div_
Tensor.__iadd__ = lambda self, other: add_(self, other)
Tensor.__isub__ = lambda self, other: sub_(self, other)
Tensor.__imul__ = lambda self, other: mul_(self, other)
Tensor.__itruediv__ = lambda self, other: div_(self, other)
Tensor.__ipow__ = lambda self, other: pow_(self, other)
Tensor.__imod__ = lambda self, other: remainder_(self, other)
Tensor.__iand__ = lambda self, other: bitwise_and_(self, other)
Tensor.__ior__ = lambda self, other: bitwise_or_(self, other)
Tensor.__ixor__ = lambda self, other: bitwise_xor_(self, other)
Tensor.__ilshift__ = lambda self, other: bitwise_left_shift_(self, other)
Tensor.__irshift__ = lambda self, other: bitwise_right_shift_(self, other)


for _name in ("neg", "exp", "log", "log2", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu",
              "abs", "reciprocal", "exp2", "floor", "ceil", "round", "trunc", "sign",
              "square", "log1p", "expm1", "rsqrt", "tan", "frac", "bitwise_not", "logical_not"):
    method_form(_name)
Tensor.negative_ = Tensor.neg_
Tensor.absolute_ = Tensor.abs_


# -- filling and copying ------------------------------------------------------------------

class _Constant(Function):
    """A constant of ``self``'s shape whose gradient w.r.t. ``self`` is zero."""

    def forward(ctx, x, value=0):
        ctx.in_shape = x.shape
        return ctx.xp.full(x.shape, value, dtype=x.dtype, device=ctx.device.native)

    def backward(ctx, g):
        return g.new_zeros(ctx.in_shape)


def fill_(self: Tensor, value: Any) -> Tensor:
    """Set every entry of ``self`` to ``value`` (a number or a 0-d tensor)."""
    if type(value) is Tensor:
        if value.ndim:
            raise ShapeError(f"fill_: value must be a number or a 0-d tensor, got shape "
                             f"{value.shape}")
        return inplace(self, "fill_", lambda s: expand(value.to(self.dtype), s.shape), value,
                       shares=True)
    one = self.numel() == 1  # PyTorch's one-element fill checks float16 less
    v = _as_python(self, checked_scalar("fill_", self.dtype, value, floats=not one, fill=one))
    return inplace(self, "fill_", lambda s: _Constant.apply(s, value=v))


def zero_(self: Tensor) -> Tensor:
    """Set every entry of ``self`` to zero."""
    return fill_(self, 0)


def copy_(self: Tensor, src: Any, non_blocking: bool = False) -> Tensor:
    """Copy the values of ``src`` (broadcast, cast, from any device) into ``self``."""
    if src is self and not self.requires_grad:
        # nothing to copy: PyTorch returns at once (even for an expanded self), yet counts a
        # write (a backward that saved self refuses); with requires_grad the checks run below
        self._version[0] += 1
        return self
    if type(src) is not Tensor:
        src = Tensor(src, dtype=self.dtype, device=self.device)
    if broadcast_shapes("copy_", self.shape, src.shape) != self.shape:
        raise ShapeError(f"copy_: source of shape {src.shape} does not broadcast to the "
                         f"destination's shape {self.shape}")

    def fn(s: Tensor) -> Tensor:
        v = src.to(device=self.device, dtype=self.dtype)
        return expand(v, self.shape) if v.shape != self.shape else v

    if (self._owner is None and getattr(self.device.backend, "copy_in_place", False)
            and not _records(self, (src,))):
        # write into self's own memory: a CUDA graph captured with ``self`` as a static
        # input reads that address on every replay (PyTorch's ``static.copy_(batch)``)
        check_writable("copy_", self, False)
        check_no_partial_overlap("copy_", self, (src,))
        v = fn(self).array
        if v is not self._data:
            self._data[...] = v
        self._gen += 1
        self._version[0] += 1
        return self
    return inplace(self, "copy_", fn, src, shares=True)


def clamp_(self: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """Clamp every entry of ``self`` into ``[min, max]`` in place."""
    def fn(s: Tensor) -> Tensor:
        if hasattr(Tensor, "clamp"):
            return s.clamp(min, max)
        if min is not None:
            s = s.maximum(min if type(min) is Tensor else s.new_full((), min))
        if max is not None:
            s = s.minimum(max if type(max) is Tensor else s.new_full((), max))
        return s

    return inplace(self, "clamp_", fn, min, max)


def masked_fill_(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    """Set the entries of ``self`` where ``mask`` is True to ``value``."""
    return inplace(self, "masked_fill_", lambda s: s.masked_fill(mask, value), value)


def masked_scatter_(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """In-place :meth:`Tensor.masked_scatter` (``mask`` broadcasts to ``self``)."""
    return inplace(self, "masked_scatter_", lambda s: s.masked_scatter(mask, source), source)


def index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, *,
               alpha: float = 1) -> Tensor:
    """In-place :meth:`Tensor.index_add`."""
    return inplace(self, "index_add_", lambda s: s.index_add(dim, index, source, alpha=alpha),
                   source)


def scatter_(self: Tensor, dim: int, index: Tensor, src: Any = None, *,
             value: Any = None, reduce: str | None = None) -> Tensor:
    """In-place :meth:`Tensor.scatter`."""
    return inplace(self, "scatter_", lambda s: s.scatter(dim, index, src, value=value,
                                                         reduce=reduce), src)


def scatter_add_(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """In-place :meth:`Tensor.scatter_add`."""
    return inplace(self, "scatter_add_", lambda s: s.scatter_add(dim, index, src), src)


def uniform_(self: Tensor, a: float = 0.0, b: float = 1.0, *, generator: Any = None
             ) -> Tensor:
    """Fill ``self`` with samples from U[a, b) (drawn from ``generator`` if given)."""
    from ..creation import rand

    return inplace(self, "uniform_", lambda s: rand(
        *s.shape, dtype=s.dtype, device=s.device, generator=generator) * (b - a) + a)


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator: Any = None
            ) -> Tensor:
    """Fill ``self`` with samples from N(mean, std^2) (drawn from ``generator`` if given)."""
    from ..creation import randn

    return inplace(self, "normal_", lambda s: randn(
        *s.shape, dtype=s.dtype, device=s.device, generator=generator) * std + mean)


for _f in (fill_, zero_, copy_, clamp_, masked_fill_, masked_scatter_, index_add_, scatter_,
           scatter_add_, uniform_, normal_):
    _method(_f.__name__, _f)
Tensor.clip_ = clamp_


# -- x[key] = value -----------------------------------------------------------------------

class IndexPut(Function):
    """``x`` with ``v`` (broadcast to ``pos``) written at the flat positions ``pos``."""

    def forward(ctx, x, v, pos):
        xp = ctx.xp
        from ..backend.kernels import get_kernel

        ctx.v_shape = v.shape
        ctx.save_for_backward(pos)
        vals = xp.reshape(xp.broadcast_to(v, pos.shape), (-1,))
        flat = get_kernel(ctx.device.backend, "scatter")(
            xp, xp.reshape(x, (-1,)), 0, xp.reshape(pos, (-1,)), vals)
        return xp.reshape(flat, x.shape)

    def backward(ctx, g):
        (pos,) = ctx.saved_tensors
        nx, nv, _ = ctx.needs_input_grad
        gx = IndexPut.apply(g, g.new_zeros(()), pos) if nx else None
        gv = None
        if nv:
            from .elementwise import where
            from .indexing import IndexSelect, last_writes

            flat = reshape(pos, (-1,))
            picked = IndexSelect.apply(reshape(g, (-1,)), flat, dim=0)
            won = last_writes(g.device.backend, (g.numel(),), 0, flat)
            picked = where(won, picked, 0.0)  # a duplicated position: the last write wins
            gv = sum_to(reshape(picked, pos.shape), ctx.v_shape)
        return gx, gv, None


def _value(op: str, x: Tensor, value: Any, shape: tuple) -> Tensor:
    """``value`` as a tensor of ``x``'s dtype whose shape broadcasts to ``shape``."""
    if type(value) is not Tensor:
        if isinstance(value, (int, float, bool)):
            if x.dtype.kind in "iu" and not isinstance(value, bool):
                value = _checked_int_value(op, x, value)
            value = checked_scalar(op, x.dtype, value, fill=True)
            return x.new_full((), _as_python(x, value))
        kind = type(value)
        if kind.__module__ == "numpy" and kind.__name__ != "ndarray" and not hasattr(
                value, "__index__"):  # np.float32, np.float16, np.bool_: PyTorch refuses
            raise TypeError(f"{op}: can't assign a numpy.{kind.__name__} to a "
                            f"{x.dtype.name} tensor, as in PyTorch; pass float(value)")
        value = Tensor(value, dtype=x.dtype, device=x.device)
    if value.device is not x.device:
        raise DeviceError(f"{op}: value on {value.device} assigned into a tensor on "
                          f"{x.device}; move it with .to('{x.device}')")
    vs = value.shape
    while len(vs) > len(shape) and vs[0] == 1:
        vs = vs[1:]
    if len(vs) > len(shape) or broadcast_shapes(op, vs, shape) != shape:
        raise ShapeError(f"{op}: value of shape {value.shape} cannot be broadcast to the "
                         f"indexed shape {shape}")
    value = reshape(value, vs)
    return value if value.dtype is x.dtype else value.to(x.dtype)


def _checked_int_value(op: str, x: Tensor, value: Any) -> Any:
    """A number written into an integer tensor, checked as PyTorch does: ints wrap as far
    as ``checked_scalar`` allows; floats must lie in the dtype's range (0 up for uint8)."""
    if isinstance(value, int):
        return checked_scalar(op, x.dtype, value)
    bits = 8 * x.dtype.itemsize
    lo, hi = (0, 2 ** bits - 1) if x.dtype.kind == "u" else (-2 ** (bits - 1), 2 ** (bits - 1) - 1)
    if not lo <= value <= hi:  # NaN fails too
        raise DTypeError(f"{op}: value {value!r} cannot be converted to {x.dtype.name} without "
                         "overflow")
    return value


def _index_put(x: Tensor, key: Any, value: Any) -> Tensor:
    """Out of place ``x[key] = value``, differentiable w.r.t. ``x`` and ``value``."""
    from ..creation import arange

    positions = getitem(reshape(arange(x.numel(), device=x.device), x.shape), key)
    return IndexPut.apply(x, _value("__setitem__", x, value, positions.shape), positions)


def setitem(self: Tensor, key: Any, value: Any) -> None:
    """``self[key] = value``: ints, slices, None, ..., int tensors/lists, bool masks.

    An in-place op like the others: views of ``self`` see the new values, and autograd
    records it (differentiable w.r.t. ``self`` and ``value``).
    """
    parts = key if isinstance(key, tuple) else (key,)
    if any(type(k) is Tensor and k.ndim == 0 and k.dtype.kind in "iu" for k in parts):
        # a 0-d integer tensor indexes as an int, as in PyTorch (x[i] += 1 writes x[i]
        # through the view it read, then copies that view onto itself: allowed)
        parts = tuple(int(k.item()) if type(k) is Tensor and k.ndim == 0
                      and k.dtype.kind in "iu" else k for k in parts)
        key = parts if isinstance(key, tuple) else parts[0]
    if type(value) is Tensor:
        overlap = memory_overlap(self, value)
        if value.dtype is not self.dtype or overlap is not None:
            _check_index_put_dtype(self, key, value, overlap)
    if type(value) is Tensor and not any(type(k) is Tensor or isinstance(k, list)
                                         for k in parts):
        _check_copy_overlap(getitem(self, key), value)
    if self._owner is not None and _overlaps(tuple(self._data.shape), self._view.strides):
        region = getitem(self, key)
        if region.numel() == 0:  # nothing written into the expanded tensor: no error
            _value("__setitem__", self, value, region.shape)
            # ... but a view of a leaf that requires grad is refused all the same
            check_writable("__setitem__", self, _grad_state.enabled, overlapping=True)
            return
        if not any(type(k) is Tensor or isinstance(k, list) for k in parts):
            # PyTorch's self[key].copy_(value): only the region written must not overlap
            # itself (x.expand(3, 4)[1, 0] = 2 writes the one shared element)
            if type(value) is Tensor:
                region.copy_(value)
            else:
                region.copy_(_value("__setitem__", self, value, region.shape))
            return
        # PyTorch takes the ints and slices first (a view), then indexes that view with the
        # tensors: only that view must not overlap itself (x.expand(3, 3)[0, idx] = v)
        split = _basic_first(parts)
        if split is not None:
            view = getitem(self, split[0])
            if view._owner is None or not _overlaps(tuple(view._data.shape),
                                                    view._view.strides):
                setitem(view, split[1], value)
                return
    inplace(self, "__setitem__", lambda s: _index_put(s, key, value), value)


def _check_copy_overlap(region: Tensor, value: Tensor) -> None:
    """PyTorch's overlap check of basic-indexing ``x[key] = value`` (its ``copy_to``): a
    value of the region's shape is copied as it is; a 0-d value on the CPU fills; any
    other is viewed without its leading size-1 dims, then expanded to the region's shape.
    The copy refuses a source sharing part of the region's memory: in the same range but
    laid out with other strides (size-1 dims included), or in an overlapping range
    (``v[1:] = v[:2]``, ``v[None] = v`` for one element). A source broadcast over a
    longer dim is not dense, which its check does not judge (passes)."""
    if storage(value) is not storage(region):
        return
    if region.shape == value.shape:
        check_no_partial_overlap("__setitem__", region, (value,))
        return
    if value.ndim == 0 and value.device.type == "cpu":
        return
    strides, offset = layout(value)
    lead = next((i for i, n in enumerate(value.shape) if n != 1), value.ndim)
    shape = tuple(value.shape[lead:])
    strides = view_strides(tuple(value.shape), strides, shape)
    target = tuple(region.shape)
    if strides is None or len(target) < len(shape):
        return  # the copy refuses it for its shape
    src = (target, expand_strides(shape, strides, target), offset)
    if layout_overlap((target, *layout(region)), src) == "partial":
        raise ShapeError(
            f"__setitem__: some elements of the value (shape {value.shape}) and the "
            f"written-to region (shape {region.shape}) refer to a single memory location; "
            "clone() the value first")


def _basic_first(parts: tuple) -> tuple | None:
    """``(basic, advanced)``: the key's ints, slices, None and ``...`` with each tensor
    index left whole (``:`` per dim it covers), and the key that indexes that view with
    the tensors; None for a key this does not cover (a list, a bool)."""
    basic, advanced = [], []
    for k in parts:
        if type(k) is Tensor:
            n = k.ndim if k.dtype.kind == "b" else 1
            basic += [slice(None)] * n
            advanced.append(k)
        elif isinstance(k, bool) or isinstance(k, list):
            return None
        elif isinstance(k, int):
            basic.append(k)
        elif k is Ellipsis:
            basic.append(k)
            advanced.append(k)
        else:  # a slice or None: a dim of the view
            basic.append(k)
            advanced.append(slice(None))
    return tuple(basic), tuple(advanced)


def _check_index_put_dtype(x: Tensor, key: Any, value: Tensor, overlap: str | None) -> None:
    """PyTorch's index_put (a key with a tensor or list) takes no value of another dtype;
    a lone bool mask with a one-element value is a masked fill, which casts."""
    parts = key if isinstance(key, tuple) else (key,)
    if not any(type(k) is Tensor or isinstance(k, list) for k in parts):
        return  # basic indexing copies with a cast
    if value is x and x.numel() == 0 and x.ndim and x.shape[0] == 1:
        # PyTorch first views the value without its leading size-1 dims: no longer the
        # same tensor, and an empty one shares no element (x of shape (1, 0): x[m] = x)
        return
    if overlap is not None:  # index_put refuses a source in its memory
        # ... unless it is a masked fill: a mask of x's shape and a one-element value
        fill = (len(parts) == 1 and type(parts[0]) is Tensor and parts[0].dtype.kind == "b"
                and parts[0].ndim and parts[0].shape == x.shape and x.numel() == 1)
        if not fill:  # even when nothing is written, as PyTorch
            raise ShapeError("__setitem__: the value shares memory with the tensor written to "
                             "(some elements of both refer to a single memory location), "
                             "which PyTorch refuses; clone() the value first")
        return
    tensors = [k for k in parts if type(k) is Tensor or isinstance(k, list)]
    if len(tensors) == 1 and type(tensors[0]) is Tensor and tensors[0].dtype.kind == "b" and (
            tensors[0].ndim and value.numel() == 1):  # beside slices and ...: still a fill
        # whose value PyTorch converts with a check (a host read: only for another dtype)
        checked_scalar("__setitem__", x.dtype, value.item(), floats=True)
        return
    raise DTypeError(f"__setitem__: index put requires the source and destination dtypes to "
                     f"match, got {x.dtype.name} for the destination and {value.dtype.name} "
                     f"for the source; convert the value with .to({x.dtype.name})")


Tensor.__setitem__ = setitem

def _reshape_in_place(self: Tensor, op: str, new: Tensor) -> Tensor:
    """Make ``self`` the tensor ``new`` (``self`` reshaped, its elements in the same order):
    PyTorch's in-place view ops. A view takes ``new``'s layout in its base; a tensor that
    is no view takes its values, so views made of it earlier stay right (the order of
    the elements is unchanged)."""
    if self.requires_grad and self.grad_fn is None and _grad_state.enabled:
        raise AutogradError(f"{op}: a leaf Variable that requires grad is being used in an "
                            "in-place operation")
    if self._owner is not None:
        self._owner, self._view, self._seen = new._owner, new._view, new._seen
    self._data = new.array
    self.grad_fn, self.requires_grad = new.grad_fn, new.requires_grad
    return self


@tensor_method()
def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    """In-place :func:`unsqueeze`: ``self`` gets a dim of size 1 at ``dim``."""
    return _reshape_in_place(self, "unsqueeze_", unsqueeze(self, dim))


@tensor_method()
def squeeze_(self: Tensor, dim: Any = None) -> Tensor:
    """In-place :func:`squeeze`: ``self`` loses its dims of size 1 (or those of ``dim``)."""
    new = squeeze(self) if dim is None else squeeze(self, dim)
    return self if new is self else _reshape_in_place(self, "squeeze_", new)


def _transpose_in_place(self: Tensor, op: str, dims: tuple[int, int]) -> Tensor:
    """Make ``self`` its transpose over ``dims`` (``t_``, ``transpose_``), its elements in
    another order in one storage, as PyTorch does: a view takes ``new``'s
    layout in its base; a tensor that is no view moves its values to a storage tensor
    that the views made of it earlier follow (as after ``.data =``) and becomes a view of
    it, so writes through either side reach the other."""
    if self.requires_grad and self.grad_fn is None and _grad_state.enabled:
        raise AutogradError(f"{op}: a leaf Variable that requires grad is being used in an "
                            "in-place operation")
    new = transpose(self, *dims)
    if self._owner is None:
        old = Tensor._make(self._data, self.device)
        self._gen += 1
        self._moved = [*(getattr(self, "_moved", None) or []), (self._gen, old)]
        layout_of = transpose(old, *dims)
    else:
        layout_of = new
    self._owner, self._view, self._seen = layout_of._owner, layout_of._view, layout_of._seen
    self._data = new.array
    self.grad_fn, self.requires_grad = new.grad_fn, new.requires_grad
    return self


@tensor_method("transpose_", "swapaxes_", "swapdims_")
def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """In-place :func:`transpose` (also ``swapaxes_``, ``swapdims_``): ``self`` becomes
    its transpose, sharing its memory with the views made of it before."""
    if dim0 == dim1 or self.ndim < 2:
        transpose(self, dim0, dim1)  # checks the dims as PyTorch
        return self
    return _transpose_in_place(self, "transpose_", (dim0, dim1))


@tensor_method()
def t_(self: Tensor) -> Tensor:
    """In-place :func:`t`: ``self`` (at most 2 dims) becomes its transpose."""
    if self.ndim > 2:
        raise ShapeError(f"t_: expected a tensor with <= 2 dims, got {self.ndim}")
    return _transpose_in_place(self, "t_", (0, 1)) if self.ndim == 2 else self


__all__ = ["setitem"]
