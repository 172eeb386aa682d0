"""Convolutions: ``conv1d``/``conv2d``/``conv_transpose2d`` and their modules.

All three run on the ``conv2d`` and ``conv2d_backward`` extension kernels. The three
autograd functions below are each other's adjoints (a convolution's input gradient is a
transposed convolution, and so on), so gradients of any order are available.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

from ..amp.dispatch import autocast_call, autocast_op
from ..amp.state import state as _autocast_state
from ..autograd.function import Function
from ..autograd.grad_mode import state as _grad_state
from ..backend.kernels import get_kernel
from ..creation import empty
from ..dtypes import bfloat16, float16
from ..errors import ShapeError
from ..ops.elementwise import through_float32
from ..tensor import Tensor
from . import init
from ._checks import _check_rank, _check_same, _check_tensor, _ntuple, _pair
from .module import Module
from .parameter import Parameter


class ConvParams(NamedTuple):
    stride: tuple[int, int]
    pads: tuple[int, int, int, int]
    dilation: tuple[int, int]
    groups: int
    algo: str = "auto"


def _kw(p: ConvParams) -> dict:
    return {"stride": p.stride, "pads": p.pads, "dilation": p.dilation, "groups": p.groups}


class _Conv2d(Function):
    cols = None  # a backend's im2col of x, kept by forward (see the numpy conv2d kernel)

    def forward(ctx, x, w, b=None, p=None):
        ctx.p = p
        ctx.save_for_backward(x, w)
        kern = get_kernel(ctx.device.backend, "conv2d")
        if ctx.needs_input_grad[1] and getattr(kern, "keeps_cols", False):
            # the backend keeps its im2col matrix for the weight gradient (no second one)
            keep: list = []
            y = kern(ctx.xp, x, w, b, algo=p.algo, keep=keep, **_kw(p))
            ctx.cols = keep[0] if keep else None
            return y
        return kern(ctx.xp, x, w, b, algo=p.algo, **_kw(p))

    def backward(ctx, g):
        x, w = ctx.saved_tensors
        nx, nw, nb = ctx.needs_input_grad
        p = ctx.p
        gx = gw = None
        if (nx or nw) and not _grad_state.enabled:  # plain backward: one kernel call
            kern = get_kernel(ctx.device.backend, "conv2d_backward")
            kept = {}  # the forward's im2col, for the backend that kept it
            if ctx.cols is not None and getattr(kern, "keeps_cols", False):
                kept["cols"] = ctx.cols
            ax, aw = kern(ctx.xp, g.array, x.array, w.array, x_shape=x.shape, w_shape=w.shape,
                          needs=(nx, nw), **_kw(p), **kept)
            gx = Tensor._make(ax, ctx.device) if nx else None
            gw = Tensor._make(aw, ctx.device) if nw else None
        else:
            if nx:
                gx = _ConvInputGrad.apply(g, w, x_shape=x.shape, p=p)
            if nw:
                gw = _ConvWeightGrad.apply(x, g, w_shape=w.shape, p=p)
        gb = None
        if nb and _grad_state.enabled:
            gb = g.sum((0, 2, 3))
        elif nb:
            kern = get_kernel(ctx.device.backend, "channel_sum")
            gb = Tensor._make(kern(ctx.xp, g.array), ctx.device)
        return gx, gw, gb


class _ConvInputGrad(Function):
    """``g, w -> dL/dx`` of a convolution: the transposed convolution of ``g`` by ``w``."""

    def forward(ctx, g, w, x_shape=(), p=None):
        ctx.p = p
        ctx.save_for_backward(g, w)
        kern = get_kernel(ctx.device.backend, "conv2d_backward")
        return kern(ctx.xp, g, None, w, x_shape=x_shape, w_shape=w.shape, needs=(True, False),
                    **_kw(p))[0]

    def backward(ctx, h):
        g, w = ctx.saved_tensors
        ng, nw = ctx.needs_input_grad
        dg = _Conv2d.apply(h, w, None, p=ctx.p) if ng else None
        dw = _ConvWeightGrad.apply(h, g, w_shape=w.shape, p=ctx.p) if nw else None
        return dg, dw


class _ConvWeightGrad(Function):
    """``x, g -> dL/dw`` of a convolution."""

    def forward(ctx, x, g, w_shape=(), p=None):
        ctx.p = p
        ctx.save_for_backward(x, g)
        kern = get_kernel(ctx.device.backend, "conv2d_backward")
        return kern(ctx.xp, g, x, None, x_shape=x.shape, w_shape=w_shape, needs=(False, True),
                    **_kw(p))[1]

    def backward(ctx, h):
        x, g = ctx.saved_tensors
        nx, ng = ctx.needs_input_grad
        dx = _ConvInputGrad.apply(g, h, x_shape=x.shape, p=ctx.p) if nx else None
        dg = _Conv2d.apply(x, h, None, p=ctx.p) if ng else None
        return dx, dg


def _conv_pads(op: str, padding: Any, kernel: tuple[int, int], dilation: tuple[int, int],
               stride: tuple[int, int]) -> tuple[int, int, int, int]:
    if isinstance(padding, str):
        if padding == "valid":
            return (0, 0, 0, 0)
        if padding != "same":
            raise ValueError(f"{op}: padding must be 'valid', 'same', an int or a tuple, "
                             f"got {padding!r}")
        if stride != (1, 1):
            raise ValueError(f"{op}: padding='same' is not supported for strided "
                             f"convolutions (stride={stride}); pass explicit padding")
        pads = []
        for k, d in zip(kernel, dilation):
            total = d * (k - 1)
            pads += [total // 2, total - total // 2]
        return (pads[0], pads[1], pads[2], pads[3])
    ph, pw = _pair(op, padding, "padding")
    if ph < 0 or pw < 0:
        raise ValueError(f"{op}: padding must be non-negative, got {padding!r}")
    return (ph, ph, pw, pw)


def _check_conv(op: str, x: Tensor, weight: Tensor, bias: Tensor | None, groups: int,
                transposed: bool = False) -> None:
    _check_tensor(op, x)
    _check_same(op, x, weight, bias)
    if groups < 1:
        raise ValueError(f"{op}: groups must be a positive int, got {groups}")
    c = x.shape[1]
    if transposed:
        if weight.shape[0] != c:
            raise ShapeError(f"{op}: expected input with {weight.shape[0]} channels (weight "
                             f"shape {weight.shape}), got {c} channels in input of shape "
                             f"{x.shape}; check in_channels and the NCHW layout")
        out = weight.shape[1] * groups
    else:
        if weight.shape[1] * groups != c:
            raise ShapeError(f"{op}: expected input with {weight.shape[1] * groups} channels "
                             f"(weight shape {weight.shape}, groups={groups}), got {c} "
                             f"channels in input of shape {x.shape}; check in_channels and "
                             "the NCHW layout")
        if weight.shape[0] % groups:
            raise ShapeError(f"{op}: out_channels {weight.shape[0]} is not divisible by "
                             f"groups={groups}")
        out = weight.shape[0]
    if bias is not None and tuple(bias.shape) != (out,):
        raise ShapeError(f"{op}: bias must have shape ({out},), got {bias.shape}")


_checked_conv2d: dict[tuple, ConvParams] = {}


def _conv2d_params(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any,
                   padding: Any, dilation: Any, groups: int, algo: str) -> ConvParams:
    """``conv2d``'s checks of shapes and arguments (raising PyTorch's errors), and the
    geometry they give."""
    _check_rank("conv2d", input, (3, 4), "(N, C, H, W)")
    if weight.ndim != 4:
        raise ShapeError(f"conv2d: weight must be 4-D (C_out, C_in/groups, kH, kW), got "
                         f"shape {weight.shape}")
    if algo not in ("auto", "im2col", "direct"):
        raise ValueError(f"conv2d: algo must be 'auto', 'im2col' or 'direct', got {algo!r}")
    x = input.unsqueeze(0) if input.ndim == 3 else input
    _check_conv("conv2d", x, weight, bias, groups)
    stride_, dilation_ = _pair("conv2d", stride, "stride"), _pair("conv2d", dilation, "dilation")
    if min(stride_) < 1 or min(dilation_) < 1:
        raise ValueError(f"conv2d: stride and dilation must be >= 1, got {stride_}, "
                         f"{dilation_}")
    kernel = tuple(weight.shape[2:])
    pads = _conv_pads("conv2d", padding, kernel, dilation_, stride_)
    for ax, (size, k, d) in enumerate(zip(x.shape[2:], kernel, dilation_)):
        if size + pads[2 * ax] + pads[2 * ax + 1] < d * (k - 1) + 1:
            raise ShapeError(f"conv2d: padded input size {x.shape[2:]} (padding {pads}) is "
                             f"smaller than the dilated kernel {kernel}; use a larger input "
                             "or more padding")
    return ConvParams(stride_, pads, dilation_, groups, algo)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
           stride: int | Sequence[int] = 1, padding: int | Sequence[int] | str = 0,
           dilation: int | Sequence[int] = 1, groups: int = 1, algo: str = "auto") -> Tensor:
    """2-D convolution (cross-correlation) over an ``(N, C, H, W)`` input.

    Args:
        input: ``(N, C_in, H, W)`` or unbatched ``(C_in, H, W)``.
        weight: ``(C_out, C_in / groups, kH, kW)``.
        bias: optional ``(C_out,)``.
        stride, padding, dilation: ints or pairs; padding may be ``'valid'`` or ``'same'``.
        groups: split channels into this many independent groups.
        algo: ``'auto'``, ``'im2col'`` or ``'direct'`` (see the ``conv2d`` kernel).

    Shape:
        Output ``(N, C_out, H_out, W_out)`` with
        ``H_out = (H + 2 * pad - dilation * (kH - 1) - 1) // stride + 1``.
    """
    if _autocast_state.active:  # the autocast hook: one thread-local read when off
        return autocast_call(
            "conv2d", conv2d, input, weight, bias, stride, padding, dilation, groups, algo)
    _check_tensor("conv2d", input)
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    _check_same("conv2d", x, weight, bias)
    # the shape and argument checks run once per signature: a training step repeats them
    try:
        key = (input.shape, weight.shape, None if bias is None else bias.shape, stride,
               padding, dilation, groups, algo)
        params = _checked_conv2d.get(key)
    except TypeError:  # a list argument: not a key
        key = params = None
    if params is None:
        params = _conv2d_params(input, weight, bias, stride, padding, dilation, groups, algo)
        if key is not None:
            if len(_checked_conv2d) > 4096:
                _checked_conv2d.clear()
            _checked_conv2d[key] = params
    if (x.dtype is bfloat16 and not getattr(x.device.backend, "native_bfloat16_conv", False)
            or x.dtype is float16 and x.device.type == "cpu"):
        # NumPy multiplies bfloat16 in float32 (and float16 slowly, rounding each step):
        # so do we, the bias added before the one rounding, as PyTorch's kernels
        y = _Conv2d.apply(x.float(), weight.float(), _float(bias), p=params).to(x.dtype)
    else:
        y = _Conv2d.apply(x, weight, bias, p=params)
    return y.squeeze(0) if unbatched else y


def _float(t: Tensor | None) -> Tensor | None:
    return None if t is None else t.float()


@autocast_op("conv1d")
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int = 1,
           padding: int | str = 0, dilation: int = 1, groups: int = 1) -> Tensor:
    """1-D convolution over an ``(N, C, L)`` input (runs as a 2-D one of height 1).

    Args:
        input: ``(N, C_in, L)`` or unbatched ``(C_in, L)``.
        weight: ``(C_out, C_in / groups, k)``.
        bias: optional ``(C_out,)``.

    Shape:
        Output ``(N, C_out, L_out)``.
    """
    _check_tensor("conv1d", input)
    _check_rank("conv1d", input, (2, 3), "(N, C, L)")
    if weight.ndim != 3:
        raise ShapeError(f"conv1d: weight must be 3-D (C_out, C_in/groups, k), got shape "
                         f"{weight.shape}")
    s, d = _ntuple("conv1d", stride, 1, "stride")[0], _ntuple("conv1d", dilation, 1,
                                                                "dilation")[0]
    pad: Any = padding if isinstance(padding, str) else (0, _ntuple("conv1d", padding, 1,
                                                                    "padding")[0])
    y = conv2d(input.unsqueeze(-2), weight.unsqueeze(-2), bias, (1, s), pad, (1, d), groups)
    return y.squeeze(-2)


@autocast_op("conv_transpose2d")
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: int | Sequence[int] = 1, padding: int | Sequence[int] = 0,
                     output_padding: int | Sequence[int] = 0, groups: int = 1,
                     dilation: int | Sequence[int] = 1) -> Tensor:
    """2-D transposed convolution (the gradient of ``conv2d`` w.r.t. its input).

    Args:
        input: ``(N, C_in, H, W)`` or unbatched ``(C_in, H, W)``.
        weight: ``(C_in, C_out / groups, kH, kW)``.
        bias: optional ``(C_out,)``.
        output_padding: extra size added to one side of the output.

    Shape:
        ``H_out = (H - 1) * stride - 2 * padding + dilation * (kH - 1) + output_padding + 1``.
    """
    op = "conv_transpose2d"
    _check_tensor(op, input)
    _check_rank(op, input, (3, 4), "(N, C, H, W)")
    if weight.ndim != 4:
        raise ShapeError(f"{op}: weight must be 4-D (C_in, C_out/groups, kH, kW), got "
                         f"shape {weight.shape}")
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    _check_conv(op, x, weight, bias, groups, transposed=True)
    s, d = _pair(op, stride, "stride"), _pair(op, dilation, "dilation")
    p, op_ = _pair(op, padding, "padding"), _pair(op, output_padding, "output_padding")
    for ax in range(2):
        if op_[ax] >= max(s[ax], d[ax]):
            raise ValueError(f"{op}: output_padding {op_} must be smaller than stride {s} "
                             f"or dilation {d}")
    out_hw = tuple((x.shape[2 + ax] - 1) * s[ax] - 2 * p[ax] + d[ax] * (weight.shape[2 + ax] - 1)
                   + op_[ax] + 1 for ax in range(2))
    if min(out_hw) < 1:
        raise ShapeError(f"{op}: input of shape {x.shape} gives an empty output {out_hw}; "
                         "reduce padding")
    if any(op_[ax] >= s[ax] for ax in range(2)):
        # an output padding of a stride or more (allowed below the dilation) reaches
        # past the positions the input gradient of a forward conv covers: the whole
        # unpadded result, then cropped by the padding (zeros past its end)
        full = conv_transpose2d(x, weight, None, s, 0, 0, groups, d)
        grow = [max(0, p[ax] + out_hw[ax] - full.shape[2 + ax]) for ax in range(2)]
        if any(grow):
            from .functional import pad

            full = pad(full, (0, grow[1], 0, grow[0]))
        y = full[:, :, p[0]:p[0] + out_hw[0], p[1]:p[1] + out_hw[1]]
        if bias is not None:
            y = y + bias.reshape(1, -1, 1, 1)
        return y.squeeze(0) if unbatched else y
    x_shape = (x.shape[0], weight.shape[1] * groups, out_hw[0], out_hw[1])
    params = ConvParams(s, (p[0], p[0], p[1], p[1]), d, groups)
    if through_float32(x):  # in float32 with the bias, rounded once (as conv2d)
        y = _ConvInputGrad.apply(x.float(), weight.float(), x_shape=x_shape, p=params)
        if bias is not None:
            y = y + bias.float().reshape(1, -1, 1, 1)
        y = y.to(x.dtype)
    else:
        y = _ConvInputGrad.apply(x, weight, x_shape=x_shape, p=params)
        if bias is not None:
            y = y + bias.reshape(1, -1, 1, 1)
    return y.squeeze(0) if unbatched else y


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: int | Sequence[int] = 1, padding: int | Sequence[int] = 0,
                     output_padding: int | Sequence[int] = 0, groups: int = 1,
                     dilation: int | Sequence[int] = 1) -> Tensor:
    """1-D transposed convolution (runs as a 2-D one of height 1).

    Args:
        input: ``(N, C_in, L)`` or unbatched ``(C_in, L)``.
        weight: ``(C_in, C_out / groups, k)``.
        bias: optional ``(C_out,)``.

    Shape:
        ``L_out = (L - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1``.
    """
    op = "conv_transpose1d"
    _check_tensor(op, input)
    _check_rank(op, input, (2, 3), "(N, C, L)")
    if weight.ndim != 3:
        raise ShapeError(f"{op}: weight must be 3-D (C_in, C_out/groups, k), got shape "
                         f"{weight.shape}")
    one = {name: _ntuple(op, v, 1, name)[0] for name, v in
           (("stride", stride), ("padding", padding), ("output_padding", output_padding),
            ("dilation", dilation))}
    y = conv_transpose2d(input.unsqueeze(-2), weight.unsqueeze(-2), bias, (1, one["stride"]),
                         (0, one["padding"]), (0, one["output_padding"]), groups,
                         (1, one["dilation"]))
    return y.squeeze(-2)


_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


class _ConvNd(Module):
    """Shared construction of the conv modules."""

    def __init__(self, nd: int, in_channels: int, out_channels: int, kernel_size: Any,
                 stride: Any, padding: Any, dilation: Any, groups: int, bias: bool,
                 padding_mode: str, transposed: bool, output_padding: Any = 0,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        name = type(self).__name__
        if groups < 1 or in_channels % groups or out_channels % groups:
            raise ValueError(f"{name}: in_channels ({in_channels}) and out_channels "
                             f"({out_channels}) must be divisible by groups ({groups})")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"{name}: padding_mode must be one of {sorted(_PADDING_MODES)}, "
                             f"but got padding_mode='{padding_mode}'")
        if transposed and padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {name}')
        if isinstance(padding, str) and padding not in ("same", "valid"):
            raise ValueError(f"{name}: padding must be 'same', 'valid' or ints, got "
                             f"{padding!r}")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = _ntuple(name, kernel_size, nd, "kernel_size")
        self.stride = _ntuple(name, stride, nd, "stride")
        self.padding = padding if isinstance(padding, str) else _ntuple(name, padding, nd,
                                                                         "padding")
        self.dilation = _ntuple(name, dilation, nd, "dilation")
        self.output_padding = _ntuple(name, output_padding, nd, "output_padding")
        self.padding_mode, self.transposed = padding_mode, transposed
        if padding == "same" and any(s != 1 for s in self.stride):
            raise ValueError(f"{name}: padding='same' is not supported for strided convs")
        shape = ((in_channels, out_channels // groups) if transposed
                 else (out_channels, in_channels // groups)) + self.kernel_size
        self.weight = Parameter(empty(*shape, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _padded(self, input: Tensor) -> tuple[Tensor, Any]:
        """``(input, padding)`` for the convolution: with a ``padding_mode`` other than
        ``'zeros'`` the input padded by ``F.pad`` in that mode (``'same'``: the total
        ``dilation * (k - 1)`` split with the extra element after), and padding 0."""
        if self.padding_mode == "zeros":
            return input, self.padding
        from .functional import pad

        nd = len(self.kernel_size)
        if self.padding == "same":
            pairs = []
            for k, d in zip(self.kernel_size, self.dilation):
                total = d * (k - 1)
                pairs.append((total // 2, total - total // 2))
        elif self.padding == "valid":
            pairs = [(0, 0)] * nd
        else:
            pairs = [(p, p) for p in self.padding]
        flat = [v for pair in reversed(pairs) for v in pair]  # last dim first, as F.pad
        return pad(input, flat, mode=self.padding_mode), (0,) * nd

    def reset_parameters(self) -> None:
        """PyTorch's default: kaiming-uniform weight (a=sqrt(5)), bias U(+-1/sqrt(fan_in))."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
            init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        nd = len(self.kernel_size)
        if self.padding != (0,) * nd:
            s += f", padding={self.padding!r}" if isinstance(self.padding, str) \
                else f", padding={self.padding}"
        if self.dilation != (1,) * nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class Conv1d(_ConvNd):
    """1-D convolution over ``(N, C_in, L)`` inputs.

    Args:
        in_channels, out_channels: channel counts.
        kernel_size, stride, padding, dilation: ints (padding also ``'same'``/``'valid'``).
        groups: independent channel groups.
        bias: add a learnable bias.
        padding_mode: ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``.

    Shape:
        Input ``(N, C_in, L)``, output ``(N, C_out, L_out)``.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1,
                 padding: int | str = 0, dilation: int = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(1, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, False, device=device, dtype=dtype)

    def forward(self, input: Tensor) -> Tensor:
        input, padding = self._padded(input)
        pad = padding if isinstance(padding, str) else padding[0]
        return conv1d(input, self.weight, self.bias, self.stride[0], pad, self.dilation[0],
                      self.groups)


class Conv2d(_ConvNd):
    """2-D convolution over ``(N, C_in, H, W)`` inputs.

    Args:
        in_channels, out_channels: channel counts.
        kernel_size, stride, padding, dilation: ints or pairs (padding also ``'same'``).
        groups: independent channel groups.
        bias: add a learnable bias.
        padding_mode: ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``.
        algo: conv algorithm, ``'auto'``, ``'im2col'`` or ``'direct'``.

    Shape:
        Input ``(N, C_in, H, W)``, output ``(N, C_out, H_out, W_out)``.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None,
                 algo: str = "auto") -> None:
        super().__init__(2, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, False, device=device, dtype=dtype)
        self.algo = algo

    def forward(self, input: Tensor) -> Tensor:
        input, padding = self._padded(input)
        return conv2d(input, self.weight, self.bias, self.stride, padding, self.dilation,
                      self.groups, self.algo)


class ConvTranspose2d(_ConvNd):
    """2-D transposed convolution ("deconvolution"), e.g. for upsampling decoders.

    Args:
        in_channels, out_channels: channel counts.
        kernel_size, stride, padding, output_padding, dilation: ints or pairs.
        groups: independent channel groups.
        bias: add a learnable bias.

    Shape:
        Input ``(N, C_in, H, W)``, output ``(N, C_out, H_out, W_out)`` with
        ``H_out = (H - 1) * stride - 2 * padding + dilation * (kH - 1) + output_padding + 1``.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(2, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, True, output_padding, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        return conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                self.output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvNd):
    """1-D transposed convolution over ``(N, C_in, L)`` inputs.

    Args:
        in_channels, out_channels: channel counts.
        kernel_size, stride, padding, output_padding, dilation: ints.
        groups: independent channel groups.
        bias: add a learnable bias.

    Shape:
        Input ``(N, C_in, L)``, output ``(N, C_out, L_out)`` with
        ``L_out = (L - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1``.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(1, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, True, output_padding, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        return conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding,
                                self.output_padding, self.groups, self.dilation)


__all__ = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d"]
