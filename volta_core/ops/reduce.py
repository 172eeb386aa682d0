"""Reductions: sum, mean, prod, max/min, amax/amin, all/any, var/std and norms."""

from __future__ import annotations

import builtins
import math
from collections import namedtuple
from collections.abc import Sequence
from typing import Any

from ..amp.dispatch import autocast_call, autocast_op
from ..amp.state import state as _autocast_state
from ..autograd.function import RESULT, Function, saved_by_pytorch
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.grad_mode import state as _grad_state
from ..errors import AutogradError, DTypeError, IndexOutOfRangeError, ShapeError
from ..tensor import Tensor, tensor_method
from ._util import normalize_dim, normalize_dims, require_int_dim

Dims = int | Sequence[int] | None
MaxResult = namedtuple("MaxResult", ["values", "indices"])


def _keep_shape(shape: tuple, dims: tuple) -> tuple:
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


class Sum(Function):
    def forward(ctx, x, dims=(), keepdim=False, keep_dtype=False):
        ctx.in_shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        if keep_dtype:  # sum(dtype=bool/uint8/...): accumulate in that dtype, as PyTorch
            return ctx.xp.sum(x, axis=dims, keepdims=keepdim, dtype=x.dtype)
        return ctx.xp.sum(x, axis=dims, keepdims=keepdim)

    def backward(ctx, g):
        if not _grad_state.enabled:  # a plain backward records nothing: on the arrays
            xp = ctx.xp
            kept = g.array if ctx.keepdim else xp.reshape(
                g.array, _keep_shape(ctx.in_shape, ctx.dims))
            return Tensor._make(xp.broadcast_to(kept, ctx.in_shape), ctx.device)
        if not ctx.keepdim:
            g = g.reshape(_keep_shape(ctx.in_shape, ctx.dims))
        return g.expand(ctx.in_shape)


@tensor_method()
def sum(x: Tensor, dim: Dims = None, keepdim: bool = False, dtype=None) -> Tensor:  # noqa: A001
    """Sum of the elements of ``x``, over all of them or along ``dim``.

    Args:
        x: the tensor.
        dim: a dim or tuple of dims to reduce; None reduces all.
        keepdim: keep reduced dims with size 1.
        dtype: cast ``x`` to this dtype first.
    """
    if _autocast_state.active:  # the autocast hook: one thread-local read when off
        return autocast_call("sum", sum, x, dim, keepdim, dtype)
    if dtype is not None:
        grad = x.requires_grad
        x = x.to(dtype)
        if grad and not x.dtype.is_floating_point and is_grad_enabled():
            raise AutogradError(f"sum: an integer dtype ({x.dtype.name}) for a tensor that "
                                "requires grad has no gradient (PyTorch: autograd does not "
                                "support it); sum under vt.no_grad() or detach() first")
        if x.dtype.kind in "bui" and x.dtype.name != "int64":
            dims = normalize_dims("sum", dim, x.ndim)
            if x.dtype.kind == "b":  # a sum in bool is True where any term is (every device)
                return Any_.apply(x, dims=dims, keepdim=keepdim)
            return Sum.apply(x, dims=dims, keepdim=keepdim, keep_dtype=True)
    elif x.dtype.kind in "bui" and x.dtype.name != "int64":
        x = x.to("int64")  # integer sums accumulate in int64, as in PyTorch
    dims = normalize_dims("sum", dim, x.ndim)
    if x.dtype.itemsize == 2 and x.dtype.is_floating_point:  # float16/bfloat16: in float32
        from .elementwise import in_float32

        return in_float32(Sum.apply, x, dims=dims, keepdim=keepdim)
    return Sum.apply(x, dims=dims, keepdim=keepdim)


@tensor_method()
def mean(x: Tensor, dim: Dims = None, keepdim: bool = False, dtype=None) -> Tensor:
    """Mean of the elements of ``x``, over all of them or along ``dim`` (floating dtypes)."""
    if dtype is not None:
        x = x.to(dtype)
    if not x.dtype.is_floating_point:
        raise DTypeError(f"mean: input dtype must be floating point, got {x.dtype.name}; "
                         "pass dtype= or call .float() first")
    if x.dtype.itemsize == 2:  # float16/bfloat16 accumulate in float32, as in PyTorch
        from .elementwise import in_float32

        return in_float32(mean, x, dim, keepdim)
    dims = normalize_dims("mean", dim, x.ndim)
    n = 1
    for d in dims:
        n *= x.shape[d]
    return sum(x, dims, keepdim) / n if n else sum(x, dims, keepdim) * float("nan")


class _Extremum(Function):
    """Max or min along dims; the gradient is split evenly among tied extrema."""

    pytorch_saves = ((0, RESULT),)

    find = "max"

    def forward(ctx, x, dims=(), keepdim=False, nan_ties=False):
        xp = ctx.xp
        y = getattr(xp, ctx.find)(x, axis=dims, keepdims=True)
        if ctx.device.volta_dtype(x.dtype).is_floating_point:  # integers have no gradient
            hit = x == y
            if nan_ties:  # max()/min() of all elements: NaNs share a NaN result's gradient
                hit = hit | ((x != x) & (y != y))
            mask = xp.astype(hit, x.dtype)
            count = xp.sum(mask, axis=dims, keepdims=True)
            ctx.save_for_backward(mask / count)
        ctx.in_shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        ctx.nan_ties = nan_ties
        return y if keepdim else xp.reshape(y, tuple(s for i, s in enumerate(x.shape)
                                                     if i not in dims))

    def backward(ctx, g):
        (weights,) = ctx.saved_tensors
        if not ctx.keepdim:
            g = g.reshape(_keep_shape(ctx.in_shape, ctx.dims))
        if ctx.nan_ties:  # max()/min(): PyTorch fills the picks only (a NaN g stays there)
            from .elementwise import where

            return where(weights != 0, g * weights, 0.0)
        return g * weights


class Max(_Extremum):
    find = "max"


class Min(_Extremum):
    find = "min"


class _DimExtremum(Function):
    """Max or min along one dim; the gradient goes to the index returned (first of ties)."""

    find = "argmax"

    def forward(ctx, x, dim=0, keepdim=False, box=None):
        xp = ctx.xp
        idx = getattr(xp, ctx.find)(x, axis=dim, keepdims=True)
        if ctx.device.volta_dtype(x.dtype).is_floating_point:  # integers have no gradient
            n = x.shape[dim]
            pos = xp.reshape(xp.arange(n, dtype=idx.dtype, device=ctx.device.native),
                             tuple(n if i == dim else 1 for i in range(x.ndim)))
            ctx.save_for_backward(pos == idx)
        ctx.in_shape, ctx.dim, ctx.keepdim = x.shape, dim, keepdim
        y = xp.take_along_axis(x, idx, axis=dim)
        if not keepdim:
            y, idx = xp.squeeze(y, axis=dim), xp.squeeze(idx, axis=dim)
        box["indices"] = xp.astype(idx, xp.int64)
        return y

    def backward(ctx, g):
        from .elementwise import where

        (mask,) = ctx.saved_tensors
        if not ctx.keepdim:
            g = g.unsqueeze(ctx.dim)
        return where(mask, g, 0.0), None  # PyTorch scatters g: a NaN g stays at its index


class _DimMax(_DimExtremum):
    find = "argmax"


class _DimMin(_DimExtremum):
    find = "argmin"


class _ArgExtremum(Function):
    differentiable = False
    find = "argmax"

    def forward(ctx, x, dim=None, keepdim=False):
        return getattr(ctx.xp, ctx.find)(x, axis=dim, keepdims=keepdim)


class Argmax(_ArgExtremum):
    find = "argmax"


class Argmin(_ArgExtremum):
    find = "argmin"


def _check_nonempty(name: str, x: Tensor, dim: int | None) -> None:
    if x.numel() == 0 and (dim is None or x.ndim == 0 or x.shape[dim] == 0):
        where_ = "the tensor" if dim is None else f"dim {dim}"
        # PyTorch raises IndexError here (RuntimeError for a full max/min)
        err = ShapeError if dim is None and name in ("max", "min") else IndexOutOfRangeError
        raise err(f"{name}: cannot reduce an empty tensor of shape {x.shape} over "
                         f"{where_} (the operation has no identity); pick a non-empty dim")


def _extremum(cls, dimcls, name: str, x: Tensor, dim, keepdim: bool):
    if dim is None:
        _check_nonempty(name, x, None)
        return cls.apply(x, dims=tuple(range(x.ndim)), keepdim=False, nan_ties=True)
    if not isinstance(dim, int):
        raise TypeError(f"{name}: dim must be an int (use amax/amin for several dims)")
    d = normalize_dim(name, dim, x.ndim)
    _check_nonempty(name, x, d)
    if x.ndim == 0:  # a 0-d tensor is its own extremum, at index 0
        values, indices = x.clone(), Tensor._make(x.device.xp.zeros(
            (), dtype=x.device.xp.int64, device=x.device.native), x.device)
    else:
        box: dict = {}
        values = dimcls.apply(x, dim=d, keepdim=keepdim, box=box)
        indices = Tensor._make(box["indices"], x.device)
    saved_by_pytorch(values, indices, op=name)  # PyTorch's backward keeps the indices
    return MaxResult(values, indices)


@tensor_method()
def max(x: Tensor, dim: int | None = None, keepdim: bool = False):  # noqa: A001
    """Largest element of ``x``; with ``dim``, a ``(values, indices)`` pair along it.

    With ``dim`` the gradient goes to the index returned (the first of tied maxima);
    without, it is split evenly among the ties, as in PyTorch.
    ``max(a, b)`` with a tensor ``b`` is the elementwise maximum.
    """
    if isinstance(dim, Tensor):
        from .elementwise import maximum

        return maximum(x, dim)
    return _extremum(Max, _DimMax, "max", x, dim, keepdim)


@tensor_method()
def min(x: Tensor, dim: int | None = None, keepdim: bool = False):  # noqa: A001
    """Smallest element of ``x``; with ``dim``, a ``(values, indices)`` pair along it."""
    if isinstance(dim, Tensor):
        from .elementwise import minimum

        return minimum(x, dim)
    return _extremum(Min, _DimMin, "min", x, dim, keepdim)


def _arg(cls, name: str, x: Tensor, dim: int | None, keepdim: bool) -> Tensor:
    if x.dtype.kind == "b":
        raise DTypeError(f"{name}: bool input is not supported (as in PyTorch); convert with "
                         ".int() first")
    if dim is None:
        _check_nonempty(name, x, None)
        out = cls.apply(x.reshape(-1))
        return out.reshape((1,) * x.ndim) if keepdim else out
    d = normalize_dim(name, dim, x.ndim)
    _check_nonempty(name, x, d)
    if x.ndim == 0:
        return Tensor._make(x.device.xp.zeros((), dtype=x.device.xp.int64,
                                              device=x.device.native), x.device)
    return cls.apply(x, dim=d, keepdim=keepdim)


@tensor_method()
def argmax(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the largest element (of the flattened tensor when ``dim`` is None)."""
    return _arg(Argmax, "argmax", x, dim, keepdim)


@tensor_method()
def argmin(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the smallest element (of the flattened tensor when ``dim`` is None)."""
    return _arg(Argmin, "argmin", x, dim, keepdim)


class Prod(Function):
    pytorch_saves = ((0, RESULT),)

    def forward(ctx, x, dims=(), keepdim=False, full=False):
        ctx.in_shape, ctx.dims, ctx.keepdim, ctx.full = x.shape, dims, keepdim, full
        ctx.save_for_backward(x)
        return ctx.xp.prod(x, axis=dims, keepdims=keepdim)

    def backward(ctx, g):
        # PyTorch's rule, which also fixes where NaN and inf go: result / x without zeros;
        # with zeros, the products of the others from exclusive cumulative products
        (x,) = ctx.saved_tensors
        dims = ctx.dims
        if not dims:
            return g
        keep = _keep_shape(ctx.in_shape, dims)
        if not ctx.keepdim:
            g = g.reshape(keep)
        zeros = int(sum(x == 0).item())
        if zeros == 0:
            return g * (Prod.apply(x, dims=dims, keepdim=True) / x)
        if not ctx.full:
            return g * _prod_of_others(x, dims[0])
        if zeros > 1:  # the product of all: two zeros make every gradient 0, even at NaN
            return x.new_zeros(x.shape)
        return g * _prod_of_others(x.reshape(-1), 0).reshape(x.shape)


def _prod_of_others(x: Tensor, d: int) -> Tensor:
    """For each element, the product of the others along ``d`` (exclusive cumprods)."""
    from .movement import cat, flip, narrow
    from .sorting import cumprod

    n = x.shape[d]
    one = x.new_ones(*_keep_shape(x.shape, (d,)))
    before = cumprod(cat([one, narrow(x, d, 0, n - 1)], d), d)
    after = flip(cumprod(cat([one, flip(narrow(x, d, 1, n - 1), (d,))], d), d), (d,))
    return before * after


@tensor_method()
@autocast_op("prod")
def prod(input: Tensor, dim: int | None = None, keepdim: bool = False, *,
         dtype: Any = None) -> Tensor:
    """Product of the elements of ``input``, over all of them or along ``dim``.

    Args:
        input: the tensor.
        dim: the dim to reduce; None reduces all.
        keepdim: keep the reduced dim with size 1.
        dtype: cast ``input`` to this dtype first (integers default to int64).
    """
    x = input
    if dim is not None and type(dim) is not int:
        require_int_dim("prod", dim)
    if dtype is not None:
        x = x.to(dtype)
    elif x.dtype.kind in "bui" and x.dtype.name != "int64":
        x = x.to("int64")
    dims = normalize_dims("prod", dim, x.ndim)
    if x.dtype.itemsize == 2 and x.dtype.is_floating_point:  # float16/bfloat16: in float32
        from .elementwise import in_float32

        return in_float32(Prod.apply, x, dims=dims, keepdim=keepdim, full=dim is None)
    return Prod.apply(x, dims=dims, keepdim=keepdim, full=dim is None)


def _amax_dims(op: str, x: Tensor, dim: Dims) -> tuple[int, ...]:
    dims = normalize_dims(op, None if dim == () else dim, x.ndim)
    if builtins.any(x.shape[d] == 0 for d in dims) or (not dims and x.numel() == 0):
        # PyTorch raises IndexError for an empty dim it was given, RuntimeError otherwise
        err = ShapeError if dim is None or dim == () else IndexOutOfRangeError
        raise err(f"{op}: cannot reduce over an empty dimension of shape {x.shape} "
                  "(the operation has no identity); pick a non-empty dim")
    return dims


@tensor_method()
def amax(input: Tensor, dim: Dims = (), keepdim: bool = False) -> Tensor:
    """Largest values of ``input`` over ``dim`` (one or several dims; () means all).

    Args:
        input: the tensor.
        dim: dims to reduce.
        keepdim: keep reduced dims with size 1.

    The gradient is split evenly among tied maxima.
    """
    return Max.apply(input, dims=_amax_dims("amax", input, dim), keepdim=keepdim)


@tensor_method()
def amin(input: Tensor, dim: Dims = (), keepdim: bool = False) -> Tensor:
    """Smallest values of ``input`` over ``dim`` (one or several dims; () means all).

    Args:
        input: the tensor.
        dim: dims to reduce.
        keepdim: keep reduced dims with size 1.
    """
    return Min.apply(input, dims=_amax_dims("amin", input, dim), keepdim=keepdim)


class _Truth(Function):
    differentiable = False
    fn = "all"

    def forward(ctx, x, dims=(), keepdim=False):
        return getattr(ctx.xp, ctx.fn)(x, axis=dims, keepdims=keepdim)


class All(_Truth):
    fn = "all"


class Any_(_Truth):
    fn = "any"


@tensor_method()
def all(input: Tensor, dim: Dims = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """Whether all elements (over ``dim``) are nonzero; a bool tensor.

    Args:
        input: the tensor.
        dim: dims to reduce; None reduces all.
        keepdim: keep reduced dims with size 1.
    """
    out = All.apply(input, dims=normalize_dims("all", dim, input.ndim), keepdim=keepdim)
    return out.to("uint8") if input.dtype.name == "uint8" else out  # PyTorch's quirk


@tensor_method()
def any(input: Tensor, dim: Dims = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """Whether any element (over ``dim``) is nonzero; a bool tensor.

    Args:
        input: the tensor.
        dim: dims to reduce; None reduces all.
        keepdim: keep reduced dims with size 1.
    """
    out = Any_.apply(input, dims=normalize_dims("any", dim, input.ndim), keepdim=keepdim)
    return out.to("uint8") if input.dtype.name == "uint8" else out  # PyTorch's quirk


# -- variance ------------------------------------------------------------------------------

class Var(Function):
    """Variance over ``dims``."""

    pytorch_saves = ((0,),)
    root = False

    def forward(ctx, x, dims=(), correction=1, keepdim=False, all_dims=False):
        xp = ctx.xp
        root = ctx.root
        ctx.in_shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        n = 1
        for d in dims:
            n *= x.shape[d]
        # PyTorch's var_backward: 2 / (n - correction), inf at n == correction; without a
        # dim and no degrees of freedom, inf (NaN where x is the mean) whatever the sign
        ctx.scale = 2.0 / (n - correction) if n != correction else math.inf
        ctx.no_dof = all_dims and n <= correction
        # PyTorch's CPU kernels accumulate float32 in float64 (the std of values near 1e30
        # is finite although their variance is not)
        wide = ctx.device.type == "cpu" and x.dtype == xp.float32
        w = xp.astype(x, xp.float64) if wide else x
        if n > 1:
            # shifted by each row's first element: a constant row's variance is exactly 0,
            # as PyTorch's Welford gives it (std's gradient is 0 there, not a finite noise)
            w = w - w[tuple(slice(0, 1) if d in dims else slice(None) for d in range(w.ndim))]
        y = xp.var(w, axis=dims, correction=correction, keepdims=keepdim)
        if root:
            y = xp.sqrt(y)
        if wide:
            y = xp.astype(y, xp.float32)
        ctx.save_for_backward(x, y if root else None)
        return y

    def backward(ctx, g):
        x, y = ctx.saved_tensors
        if not ctx.keepdim:
            g = g.reshape(_keep_shape(ctx.in_shape, ctx.dims))
            y = None if y is None else y.reshape(g.shape)
        from .elementwise import where

        if ctx.root:  # d std = d var / (2 std), 0 where std is 0 (a constant row), as PyTorch
            g = where(y == 0, 0.0, g / (2.0 * y))
        if ctx.no_dof:
            return g * where(x == mean(x, ctx.dims, True), math.nan, math.inf)
        return g * ((x - mean(x, ctx.dims, True)) * ctx.scale)


class Std(Var):
    """Standard deviation over ``dims``: one op with the variance, so that on the CPU
    both come from one float64 computation, rounded once."""

    pytorch_saves = ((0, RESULT),)  # PyTorch's std keeps self and the result
    root = True


def _var_args(op: str, x: Tensor, dim: Any, unbiased: Any, correction: Any) -> tuple:
    if isinstance(dim, bool):  # var(x, True): the old positional ``unbiased``
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise ValueError(f"{op}: pass either unbiased= or correction=, not both")
    if correction is None:
        correction = 0 if unbiased is False else 1
    if not x.dtype.is_floating_point:
        raise DTypeError(f"{op}: expected a floating tensor, got {x.dtype.name}; "
                         "call .float() first")
    return normalize_dims(op, dim, x.ndim), correction


@tensor_method()
def var(input: Tensor, dim: Dims = None, unbiased: bool | None = None, keepdim: bool = False,
        *, correction: float | None = None) -> Tensor:
    """Variance over ``dim``: ``sum((x - mean)^2) / (N - correction)``.

    Args:
        input: a floating tensor.
        dim: dims to reduce; None reduces all.
        unbiased: the old spelling: True is ``correction=1``, False ``correction=0``.
        keepdim: keep reduced dims with size 1.
        correction: the difference between the sample size and the divisor (1 default).
    """
    return _var(input, dim, unbiased, keepdim, correction, root=False)


def _var(input: Tensor, dim: Any, unbiased: Any, keepdim: bool, correction: Any,
         root: bool) -> Tensor:
    dims, c = _var_args("std" if root else "var", input, dim, unbiased, correction)
    every = dim is None or isinstance(dim, bool) or input.ndim == 0
    fn = Std if root else Var
    if input.dtype.itemsize == 2:  # float16/bfloat16 accumulate in float32, as in PyTorch
        from .elementwise import in_float32

        return in_float32(fn.apply, input, dims=dims, correction=c, keepdim=keepdim,
                          all_dims=every)
    return fn.apply(input, dims=dims, correction=c, keepdim=keepdim, all_dims=every)


@tensor_method()
def std(input: Tensor, dim: Dims = None, unbiased: bool | None = None, keepdim: bool = False,
        *, correction: float | None = None) -> Tensor:
    """Standard deviation over ``dim``, the square root of :func:`var` (same arguments).

    Where the standard deviation is 0 its gradient is 0, as in PyTorch (not NaN).
    """
    return _var(input, dim, unbiased, keepdim, correction, root=True)


def var_mean(input: Tensor, dim: Dims = None, unbiased: bool | None = None,
             keepdim: bool = False, *, correction: float | None = None) -> tuple:
    """``(var(input, ...), mean(input, dim, keepdim))``."""
    dims, _ = _var_args("var_mean", input, dim, unbiased, correction)
    return (var(input, dim, unbiased, keepdim, correction=correction),
            mean(input, dims, keepdim))


def std_mean(input: Tensor, dim: Dims = None, unbiased: bool | None = None,
             keepdim: bool = False, *, correction: float | None = None) -> tuple:
    """``(std(input, ...), mean(input, dim, keepdim))``."""
    dims, _ = _var_args("std_mean", input, dim, unbiased, correction)
    return (std(input, dim, unbiased, keepdim, correction=correction),
            mean(input, dims, keepdim))


# -- norms --------------------------------------------------------------------------------

class VectorNorm(Function):
    pytorch_saves = ((0, RESULT),)

    def forward(ctx, x, ord=2.0, dims=(), keepdim=False, rounded=None):
        xp = ctx.xp
        ctx.in_shape, ctx.dims, ctx.keepdim, ctx.ord = x.shape, dims, keepdim, ord
        if ord == 2 and math.prod(x.shape[d] for d in dims) == 1:
            # vectors of one element: |x|, as PyTorch (x * x would overflow past 1.8e19)
            y = xp.abs(x) if keepdim else xp.reshape(
                xp.abs(x), tuple(n for d, n in enumerate(x.shape) if d not in dims))
        elif ord == 2:
            y = xp.sqrt(xp.sum(x * x, axis=dims, keepdims=keepdim))
        elif ord == 1:
            y = xp.sum(xp.abs(x), axis=dims, keepdims=keepdim)
        elif ord == math.inf:
            y = xp.max(xp.abs(x), axis=dims, keepdims=keepdim)
        elif ord == -math.inf:
            y = xp.min(xp.abs(x), axis=dims, keepdims=keepdim)
        elif ord == 0:
            y = xp.sum(xp.astype(x != 0, x.dtype), axis=dims, keepdims=keepdim)
        else:
            y = xp.sum(xp.abs(x) ** ord, axis=dims, keepdims=keepdim) ** (1.0 / ord)
        saved = y
        if rounded is not None:  # a float16/bfloat16 norm's backward uses its rounded
            from .elementwise import _as_rounded  # output, as PyTorch's does

            saved = _as_rounded(ctx, y, rounded)
        ctx.save_for_backward(x, saved)
        return y

    def backward(ctx, g):
        from .elementwise import where

        x, y = ctx.saved_tensors
        if not ctx.keepdim:
            keep = _keep_shape(ctx.in_shape, ctx.dims)
            g, y = g.reshape(keep), y.reshape(keep)
        p = ctx.ord
        if p == 0:  # zeros, even at inf or NaN
            return x.new_zeros(x.shape)
        if p == 1:
            return g * x.sign()
        if p in (math.inf, -math.inf):
            # PyTorch's: split among the ties and the NaNs (a NaN is the max of its row)
            hit = (x.abs() == y).logical_or(x.isnan())
            return x.sign() * ((g / sum(hit, ctx.dims, True)) * hit)
        if p < 1:  # PyTorch's form: 0 where x is 0, times norm^(1 - p) (0 for a 0 norm)
            scaled = where(x == 0, 0.0, x.sign() * x.abs() ** (p - 1))
            return scaled * g * y ** (1 - p)
        empty = y == 0  # the norm's gradient at 0 is taken as 0, as in PyTorch
        if p == 2:  # PyTorch's g * (x / norm) masked: an infinite g at a 0 norm gives NaN
            return g * where(empty, 0.0, x / where(empty, 1.0, y))
        scale = where(empty, 0.0, g / where(empty, 1.0, y) ** (p - 1))
        return x.sign() * x.abs() ** (p - 1) * scale


@autocast_op("vector_norm")
def vector_norm(x: Tensor, ord: float = 2, dim: Dims = None, keepdim: bool = False, *,
                dtype: Any = None) -> Tensor:
    """The ``ord``-norm of ``x`` seen as vectors along ``dim`` (all elements when None).

    Args:
        x: a floating tensor.
        ord: the order: any number, ``inf`` (largest ``|x|``), ``-inf`` or 0 (count of
            nonzeros).
        dim: dims forming the vectors.
        keepdim: keep reduced dims with size 1.
        dtype: cast ``x`` to this dtype first.
    """
    if dtype is not None:
        x = x.to(dtype)
    if not x.dtype.is_floating_point:
        raise DTypeError(f"vector_norm: expected a floating tensor, got {x.dtype.name}; "
                         "pass dtype= or call .float() first")
    if isinstance(ord, str) or isinstance(ord, bool):
        raise ValueError(f"vector_norm: ord must be a number, got {ord!r}")
    dims = normalize_dims("vector_norm", dim, x.ndim)
    if ord < 0 and x.numel() == 0 or (
            abs(ord) == math.inf and builtins.any(x.shape[d] == 0 for d in dims)):
        raise ShapeError(f"vector_norm: ord={ord} of an empty tensor of shape {x.shape} is "
                         "undefined")
    if x.dtype.itemsize == 2:  # float16/bfloat16 accumulate in float32, as in PyTorch
        from .elementwise import in_float32

        return in_float32(VectorNorm.apply, x, ord=float(ord), dims=dims, keepdim=keepdim,
                          rounded=x.device.native_dtype(x.dtype))
    return VectorNorm.apply(x, ord=float(ord), dims=dims, keepdim=keepdim)


@tensor_method()
@autocast_op("norm")
def norm(input: Tensor, p: Any = "fro", dim: Dims = None, keepdim: bool = False,
         dtype: Any = None) -> Tensor:
    """Norm of ``input`` (``torch.norm``): a vector ``p``-norm over ``dim``, or the nuclear
    norm of the matrices in two dims.

    Args:
        input: a floating tensor.
        p: ``'fro'`` (the 2-norm of all elements in ``dim``), a number, ``inf``, ``-inf``,
            or ``'nuc'`` (the sum of singular values over two dims: ``dim``, or all of a
            2-d ``input``).
        dim: dims to reduce; None means all.
        keepdim: keep reduced dims with size 1.
        dtype: cast ``input`` to this dtype first.
    """
    if p == "nuc":
        from .spectral import matrix_norm

        dims = tuple(range(input.ndim)) if dim is None else tuple(dim)
        if len(dims) != 2:
            raise ShapeError(f"norm: the nuclear norm needs two dims, got {dims} for shape "
                             f"{input.shape}")
        return matrix_norm(input, "nuc", dims, keepdim, dtype=dtype)
    if p == "fro" or p is None:
        p = 2
    elif isinstance(p, str):
        raise ValueError(f"norm: p={p!r} is not supported; use 'fro', 'nuc' or a number")
    return vector_norm(input, p, dim, keepdim, dtype=dtype)


from .softmax import log_softmax, logsumexp, softmax  # noqa: E402 - re-exported here

__all__ = ["sum", "mean", "max", "min", "argmax", "argmin", "MaxResult", "prod", "amax",
           "amin", "all", "any", "var", "std", "var_mean", "std_mean", "norm", "softmax",
           "log_softmax", "logsumexp"]
