"""Pooling: max (1-D, 2-D), average and adaptive average, functional and modules."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, NamedTuple

from ..autograd.function import Function
from ..backend.kernels import get_kernel
from ..creation import arange
from ..creation import tensor as _tensor
from ..errors import ShapeError
from ..ops import nn as _kernels  # noqa: F401 - registers the kernels' fallbacks
from ..ops.elementwise import where
from ..ops.indexing import gather, index_select
from ..ops.joining import cat, stack
from ..ops.movement import narrow
from ..tensor import Tensor
from ._checks import _check_floating, _check_rank, _check_tensor, _ntuple, _pair
from .module import Module


class PoolParams(NamedTuple):
    kernel: tuple[int, int]
    stride: tuple[int, int]
    padding: tuple[int, int]
    dilation: tuple[int, int]
    ceil_mode: bool


def _max_pool_kernel(dev: Any, x: Any, p: PoolParams) -> tuple:
    """The backend's max pool of the array ``x``: (values, flat window taps)."""
    return get_kernel(dev.backend, "max_pool2d")(
        dev.xp, x, kernel=p.kernel, stride=p.stride, padding=p.padding,
        dilation=p.dilation, ceil_mode=p.ceil_mode)


class _MaxPool2d(Function):
    pytorch_saves = ((0,),)  # and its indices, which only this op holds

    def forward(ctx, x, p=None):
        y, idx = _max_pool_kernel(ctx.device, x, p)
        ctx.p, ctx.x_shape = p, x.shape
        ctx.save_for_backward(idx)  # saved: freed after the backward, as saved values are
        return y

    def backward(ctx, g):
        kern = get_kernel(ctx.device.backend, "max_pool2d_backward")
        (idx,) = ctx.saved_tensors
        p = ctx.p
        gx = kern(ctx.xp, g.array, idx.array, x_shape=ctx.x_shape, kernel=p.kernel,
                  stride=p.stride, padding=p.padding, dilation=p.dilation,
                  ceil_mode=p.ceil_mode)
        return Tensor._make(gx, ctx.device)


def _summing_in_float32(ctx: Function, kern: Any, x: Any) -> Any:
    """``kern`` itself, or for a float16/bfloat16 ``x`` on the CPU ``kern`` run on float32
    and rounded once, as PyTorch sums its windows (NumPy's 2-byte sums round each step:
    bfloat16 averages of 4 were off by up to 21% where they cancel)."""
    dt = ctx.device.volta_dtype(x.dtype)
    if dt.itemsize != 2 or dt.kind != "f" or ctx.device.type != "cpu":
        return kern

    def summed(xp: Any, a: Any, **kw: Any) -> Any:
        return xp.astype(kern(xp, xp.astype(a, xp.float32), **kw), a.dtype)
    return summed


class _AvgPool2d(Function):
    pytorch_saves = ((0,),)

    def forward(ctx, x, p=None, opts=()):
        kern = _summing_in_float32(ctx, get_kernel(ctx.device.backend, "avg_pool2d"), x)
        ctx.p, ctx.opts, ctx.x_shape = p, dict(opts), x.shape
        return kern(ctx.xp, x, kernel=p.kernel, stride=p.stride, padding=p.padding,
                    ceil_mode=p.ceil_mode, **ctx.opts)

    def backward(ctx, g):
        # the backward is linear in g; its own gradient is the forward pool again
        return _AvgPool2dBackward.apply(g, p=ctx.p, opts=tuple(ctx.opts.items()),
                                        x_shape=ctx.x_shape)


class _AvgPool2dBackward(Function):
    def forward(ctx, g, p=None, opts=(), x_shape=()):
        kern = _summing_in_float32(ctx, get_kernel(ctx.device.backend, "avg_pool2d_backward"),
                                   g)
        ctx.p, ctx.opts = p, opts
        return kern(ctx.xp, g, x_shape=x_shape, kernel=p.kernel, stride=p.stride,
                    padding=p.padding, ceil_mode=p.ceil_mode, **dict(opts))

    def backward(ctx, h):
        return _AvgPool2d.apply(h, p=ctx.p, opts=ctx.opts)


def _pool_params(op: str, x: Tensor, kernel_size: Any, stride: Any, padding: Any,
                 dilation: Any, ceil_mode: bool) -> PoolParams:
    """The checked window of a pool of ``x``: made once per shape and arguments (a
    network's pools repeat theirs every step), anew where an argument is a list."""
    if (type(kernel_size) in _KEYS and type(stride) in _KEYS and type(padding) in _KEYS
            and type(dilation) in _KEYS):
        try:
            return _cached_pool_params(op, x.shape, kernel_size, stride, padding, dilation,
                                       bool(ceil_mode))
        except TypeError:  # an unhashable element (a 0-d tensor), or the checks' own error
            pass
    return _checked_pool_params(op, x.shape, kernel_size, stride, padding, dilation,
                                ceil_mode)


_KEYS = (int, tuple, type(None))  # argument types a cache key may hold


def _checked_pool_params(op: str, shape: tuple, kernel_size: Any, stride: Any, padding: Any,
                         dilation: Any, ceil_mode: bool) -> PoolParams:
    k = _pair(op, kernel_size, "kernel_size")
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else _pair(op, stride, "stride")
    p, d = _pair(op, padding, "padding"), _pair(op, dilation, "dilation")
    if min(k) < 1 or min(s) < 1 or min(d) < 1:
        raise ValueError(f"{op}: kernel_size, stride and dilation must be >= 1, got "
                         f"{k}, {s}, {d}")
    if p[0] > k[0] // 2 or p[1] > k[1] // 2 or min(p) < 0:
        raise ValueError(f"{op}: padding {p} should be at most half of the kernel size {k}")
    for ax in range(2):
        if shape[2 + ax] + 2 * p[ax] < d[ax] * (k[ax] - 1) + 1:
            raise ShapeError(f"{op}: input of shape {shape} is smaller than the pooling "
                             f"window {k} (padding {p}, dilation {d})")
    return PoolParams(k, s, p, d, bool(ceil_mode))


_cached_pool_params = functools.lru_cache(maxsize=1024)(_checked_pool_params)


def _batched(op: str, input: Tensor) -> tuple[Tensor, bool]:
    _check_tensor(op, input)
    _check_rank(op, input, (3, 4), "(N, C, H, W)")
    return (input.unsqueeze(0), True) if input.ndim == 3 else (input, False)


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """2-D max pooling.

    Args:
        input: ``(N, C, H, W)`` or ``(C, H, W)``.
        kernel_size: window size; stride defaults to it.
        padding: implicit ``-inf`` padding on both sides (at most half the window).
        ceil_mode: use ceil instead of floor for the output size.
        return_indices: also return the flat ``H * W`` index of each maximum.

    Shape:
        Output ``(N, C, H_out, W_out)``.
    """
    x, unbatched = _batched("max_pool2d", input)
    p = _pool_params("max_pool2d", x, kernel_size, stride, padding, dilation, ceil_mode)
    y = _MaxPool2d.apply(x, p=p)
    if not return_indices:
        return y.squeeze(0) if unbatched else y
    node = y.grad_fn
    idx = _flat_indices(node.saved_tensors[0].array if node is not None else None, x, p,
                        y.shape)
    if unbatched:
        return y.squeeze(0), idx.squeeze(0)
    return y, idx


def _flat_indices(tap: Any, x: Tensor, p: PoolParams, out_shape: tuple) -> Tensor:
    """Flat input positions of the maxima, as PyTorch's ``return_indices``."""
    xp, dev = x.device.xp, x.device
    if tap is None:  # no graph was recorded: run the kernel again for its indices
        tap = _max_pool_kernel(dev, x.array, p)[1]
    ho, wo = out_shape[2:]
    kw = p.kernel[1]
    tap = xp.astype(tap, xp.int64)
    rows = xp.reshape(xp.arange(ho, dtype=xp.int64, device=dev.native), (ho, 1))
    cols = xp.reshape(xp.arange(wo, dtype=xp.int64, device=dev.native), (1, wo))
    r = rows * p.stride[0] - p.padding[0] + (tap // kw) * p.dilation[0]
    c = cols * p.stride[1] - p.padding[1] + (tap % kw) * p.dilation[1]
    return Tensor._make(r * x.shape[3] + c, dev)


def max_pool1d(input: Tensor, kernel_size: int, stride: int | None = None, padding: int = 0,
               dilation: int = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """1-D max pooling over ``(N, C, L)`` (or ``(C, L)``) inputs.

    Args:
        return_indices: also return the position of each maximum along ``L``.

    Shape:
        Output ``(N, C, L_out)``.
    """
    _check_tensor("max_pool1d", input)
    _check_rank("max_pool1d", input, (2, 3), "(N, C, L)")
    k = kernel_size if isinstance(kernel_size, int) else kernel_size[0]
    s = k if stride is None else (stride if isinstance(stride, int) else stride[0])
    pd = padding if isinstance(padding, int) else padding[0]
    d = dilation if isinstance(dilation, int) else dilation[0]
    res = max_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, pd), (1, d), ceil_mode,
                     return_indices)
    if return_indices:  # the flat H * W position with H = 1: the position along L
        return res[0].squeeze(-2), res[1].squeeze(-2)
    return res.squeeze(-2)


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """2-D average pooling.

    Args:
        input: ``(N, C, H, W)`` or ``(C, H, W)``.
        kernel_size: window size; stride defaults to it.
        padding: implicit zero padding on both sides.
        count_include_pad: count padded zeros in the divisor.
        divisor_override: divide by this instead of the window size.

    Shape:
        Output ``(N, C, H_out, W_out)``.
    """
    x, unbatched = _batched("avg_pool2d", input)
    _check_floating("avg_pool2d", x)
    p = _pool_params("avg_pool2d", x, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and divisor_override <= 0:
        raise ValueError(f"avg_pool2d: divisor_override must be positive, got "
                         f"{divisor_override}")
    opts = (("count_include_pad", bool(count_include_pad)),
            ("divisor_override", divisor_override))
    y = _AvgPool2d.apply(x, p=p, opts=opts)
    return y.squeeze(0) if unbatched else y


_pool_matrices: dict[tuple, Tensor] = {}


def _adaptive_matrix(n_in: int, n_out: int, like: Tensor) -> Tensor:
    """``(n_out, n_in)`` averaging matrix of PyTorch's adaptive windows."""
    key = (n_in, n_out, like.dtype, like.device)
    m = _pool_matrices.get(key)
    if m is None:
        rows = []
        for i in range(n_out):
            start, end = (i * n_in) // n_out, -(-((i + 1) * n_in) // n_out)
            rows.append([1.0 / (end - start) if start <= j < end else 0.0
                         for j in range(n_in)])
        m = _pool_matrices[key] = _tensor(rows, dtype=like.dtype, device=like.device)
    return m


def adaptive_avg_pool2d(input: Tensor, output_size: int | Sequence[int | None]) -> Tensor:
    """2-D average pooling to a fixed output size, windows chosen as in PyTorch.

    Args:
        input: ``(N, C, H, W)`` or ``(C, H, W)``.
        output_size: ``(H_out, W_out)`` or one int; None keeps that input size.

    Shape:
        Output ``(N, C, H_out, W_out)``.
    """
    x, unbatched = _batched("adaptive_avg_pool2d", input)
    _check_floating("adaptive_avg_pool2d", x)
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    h, w = x.shape[2:]
    oh = h if output_size[0] is None else int(output_size[0])
    ow = w if output_size[1] is None else int(output_size[1])
    if oh < 1 or ow < 1:
        raise ValueError(f"adaptive_avg_pool2d: output_size must be positive, got "
                         f"{output_size}")
    if h % oh == 0 and w % ow == 0:
        y = avg_pool2d(x, (h // oh, w // ow))
    elif x.dtype.itemsize == 2:  # the window sums in float32, rounded once (PyTorch)
        y = adaptive_avg_pool2d(x.float(), (oh, ow)).to(x.dtype)
    else:
        y = _adaptive_matrix(h, oh, x) @ x @ _adaptive_matrix(w, ow, x).mT
    return y.squeeze(0) if unbatched else y


class MaxPool1d(Module):
    """1-D max pooling; see :func:`max_pool1d`.

    Shape:
        Input ``(N, C, L)``, output ``(N, C, L_out)``.
    """

    def __init__(self, kernel_size: int, stride: int | None = None, padding: int = 0,
                 dilation: int = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.dilation, self.ceil_mode = padding, dilation, ceil_mode
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Tensor | tuple[Tensor, Tensor]:
        return max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          self.ceil_mode, self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
                f", dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool2d(Module):
    """2-D max pooling; see :func:`max_pool2d`.

    Args:
        kernel_size, stride (defaults to kernel_size), padding, dilation: ints or pairs.
        return_indices: also return the indices of the maxima.
        ceil_mode: ceil instead of floor for the output size.

    Shape:
        Input ``(N, C, H, W)``, output ``(N, C, H_out, W_out)``.
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Tensor) -> Any:
        return max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          self.ceil_mode, self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
                f", dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """2-D average pooling; see :func:`avg_pool2d`.

    Shape:
        Input ``(N, C, H, W)``, output ``(N, C, H_out, W_out)``.
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """Average pooling to a fixed output size; see :func:`adaptive_avg_pool2d`.

    Shape:
        Input ``(N, C, H, W)``, output ``(N, C, *output_size)``.
    """

    def __init__(self, output_size: int | Sequence[int | None]) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


def _single(op: str, value: int | Sequence[int], name: str) -> int:
    return _ntuple(op, value, 1, name)[0]


def avg_pool1d(input: Tensor, kernel_size: int | Sequence[int],
               stride: int | Sequence[int] | None = None, padding: int | Sequence[int] = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """1-D average pooling over ``(N, C, L)`` (or ``(C, L)``) inputs.

    Args:
        input: ``(N, C, L)`` or ``(C, L)``.
        kernel_size: window size; stride defaults to it.
        padding: implicit zero padding on both sides (at most half the window).
        ceil_mode: use ceil instead of floor for the output size.
        count_include_pad: count padded zeros in the divisor.

    Shape:
        Output ``(N, C, L_out)``.
    """
    _check_tensor("avg_pool1d", input)
    _check_rank("avg_pool1d", input, (2, 3), "(N, C, L)")
    k = _single("avg_pool1d", kernel_size, "kernel_size")
    s = k if stride is None or stride == () else _single("avg_pool1d", stride, "stride")
    p = _single("avg_pool1d", padding, "padding")
    y = avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), ceil_mode, count_include_pad)
    return y.squeeze(-2)


def _windows(n_in: int, n_out: int) -> list[tuple[int, int]]:
    """PyTorch's adaptive windows ``[floor(i n / m), ceil((i + 1) n / m))``."""
    return [((i * n_in) // n_out, -(-((i + 1) * n_in) // n_out)) for i in range(n_out)]


def _adaptive_size(op: str, x: Tensor, output_size: Any) -> tuple[int, int]:
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    h, w = x.shape[2:]
    oh = h if output_size[0] is None else int(output_size[0])
    ow = w if output_size[1] is None else int(output_size[1])
    if oh < 1 or ow < 1:
        raise ValueError(f"{op}: output_size must be positive, got {output_size}")
    if h == 0 or w == 0:
        raise ValueError(f"{op}: input of shape {x.shape} has an empty spatial dim")
    return oh, ow


def _winner(v: Tensor, dim: int) -> Tensor:
    """Index along ``dim`` (kept) of the first maximum of ``v``, or of its last NaN: the
    element PyTorch's max pools pick (``val > max || isnan(val)``)."""
    first = v.argmax(dim, keepdim=True)
    nan = v.isnan()
    last = v.shape[dim] - 1 - nan.flip(dim).to("int32").argmax(dim, keepdim=True)
    return where(nan.any(dim, keepdim=True), last, first)


def _window_max(x: Tensor, dim: int, windows: list[tuple[int, int]],
                positions: bool = False) -> Any:
    """The max of ``x`` over each window of ``dim`` (the windows become that dim), taken
    from each window's :func:`_winner`, so that the gradient goes to it alone (a max
    pool's, where ``amax`` would share it between ties). Separable: a pass over W then
    one over H pick PyTorch's winner of each 2-D window. ``positions``: also return
    each winner's index along ``dim`` of ``x``."""
    parts, where_ = [], []
    for a, b in windows:
        part = narrow(x, dim, a, b - a)
        win = _winner(part.detach(), dim)
        parts.append(gather(part, dim, win))
        where_.append(win + a)
    values = cat(parts, dim)
    return (values, cat(where_, dim)) if positions else values


def _adaptive_indices(x: Tensor, rows: list, cols: list) -> Tensor:
    """Flat ``H * W`` input positions of each window's :func:`_winner`."""
    w = x.shape[3]
    out = []
    for r0, r1 in rows:
        line = []
        for c0, c1 in cols:
            win = narrow(narrow(x, 2, r0, r1 - r0), 3, c0, c1 - c0).detach()
            local = _winner(win.reshape(*x.shape[:2], -1), -1).squeeze(-1)
            pos = (arange(r0, r1, device=x.device).unsqueeze(1) * w
                   + arange(c0, c1, device=x.device)).reshape(-1)
            line.append(index_select(pos, 0, local.reshape(-1)).reshape(local.shape))
        out.append(stack(line, -1))
    return stack(out, -2)


def adaptive_max_pool2d(input: Tensor, output_size: int | Sequence[int | None],
                        return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """2-D max pooling to a fixed output size, windows chosen as in PyTorch.

    Args:
        input: ``(N, C, H, W)`` or ``(C, H, W)``.
        output_size: ``(H_out, W_out)`` or one int; None keeps that input size.
        return_indices: also return the flat ``H * W`` index of each maximum.

    Shape:
        Output ``(N, C, H_out, W_out)``.
    """
    x, unbatched = _batched("adaptive_max_pool2d", input)
    _check_floating("adaptive_max_pool2d", x)
    oh, ow = _adaptive_size("adaptive_max_pool2d", x, output_size)
    h, w = x.shape[2:]
    if h % oh == 0 and w % ow == 0:
        res = max_pool2d(x, (h // oh, w // ow), return_indices=return_indices)
        y, idx = res if return_indices else (res, None)
    else:
        rows, cols = _windows(h, oh), _windows(w, ow)
        y = _window_max(_window_max(x, 3, cols), 2, rows)  # max is separable
        idx = _adaptive_indices(x, rows, cols) if return_indices else None
    if unbatched:
        y = y.squeeze(0)
        idx = None if idx is None else idx.squeeze(0)
    return (y, idx) if return_indices else y


class AvgPool1d(Module):
    """1-D average pooling; see :func:`avg_pool1d`.

    Shape:
        Input ``(N, C, L)``, output ``(N, C, L_out)``.
    """

    def __init__(self, kernel_size: int | Sequence[int],
                 stride: int | Sequence[int] | None = None, padding: int | Sequence[int] = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _ntuple("AvgPool1d", kernel_size, 1, "kernel_size")
        self.stride = self.kernel_size if stride is None else \
            _ntuple("AvgPool1d", stride, 1, "stride")
        self.padding = _ntuple("AvgPool1d", padding, 1, "padding")
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveMaxPool2d(Module):
    """Max pooling to a fixed output size; see :func:`adaptive_max_pool2d`.

    Args:
        output_size: ``(H_out, W_out)`` or one int; None keeps that input size.
        return_indices: also return the indices of the maxima.

    Shape:
        Input ``(N, C, H, W)``, output ``(N, C, *output_size)``.
    """

    def __init__(self, output_size: int | Sequence[int | None],
                 return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input: Tensor) -> Any:
        return adaptive_max_pool2d(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


__all__ = ["MaxPool1d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "AvgPool1d",
           "AdaptiveMaxPool2d"]
