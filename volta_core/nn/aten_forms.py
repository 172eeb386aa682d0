"""The ATen spellings of the ``nn.functional`` ops: ``torch.conv2d``, ``torch.layer_norm``,
``torch.dropout``, ``torch.kl_div``... as ``vt.conv2d``, ``vt.layer_norm``, ...

PyTorch exposes its ATen operators at the top level, and several differ from the
``nn.functional`` function of the same name:

- argument orders: ``embedding(weight, indices, ...)`` takes the table first;
  ``batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
  cudnn_enabled)`` and ``instance_norm`` take all their arguments, weights first;
- the losses take ``reduction`` as an int (0 ``"none"``, 1 ``"mean"``, 2 ``"sum"``) and
  no ``size_average``/``reduce``; ``binary_cross_entropy_with_logits`` takes
  ``pos_weight`` before ``reduction``;
- the dropouts take ``(input, p, train)``, all required, and have ``_`` in-place forms;
- the poolings take ``stride=()`` (the kernel size) and no ``return_indices``
  (``max_pool1d_with_indices`` and ``adaptive_max_pool1d`` return the indices);
- the ``cudnn_enable(d)`` flags are accepted and ignored (Volta picks its kernels);
- ``grid_sampler`` and ``affine_grid_generator`` take ATen's int modes.

Nothing here computes anything new: each name calls the ``nn.functional`` op it stands
for, so values, dtypes, gradients and errors are that op's. Where the signatures agree
the name *is* the ``nn.functional`` function. ``import volta_core`` does not import this
module (nor ``volta_core.nn``): the top-level names resolve on first use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import ShapeError
from ..tensor import Tensor
from . import functional as F
from ._checks import _REDUCTIONS, _check_tensor
from .dropout import _check_p, _drop
from .embedding import embedding_renorm_ as _embedding_renorm
from .rnn import _rnn_step

# -- the same functions as nn.functional's (PyTorch's signatures agree) -------------------

conv1d = F.conv1d
conv3d = F.conv3d
conv_transpose1d = F.conv_transpose1d
conv_transpose2d = F.conv_transpose2d
conv_transpose3d = F.conv_transpose3d
rms_norm = F.rms_norm
adaptive_avg_pool1d = F.adaptive_avg_pool1d
pixel_shuffle = F.pixel_shuffle
pixel_unshuffle = F.pixel_unshuffle
channel_shuffle = native_channel_shuffle = F.channel_shuffle
prelu = F.prelu
selu_ = F.selu_
celu_ = F.celu_
hardshrink = F.hardshrink
threshold_ = F.threshold_
cosine_similarity = F.cosine_similarity
pairwise_distance = F.pairwise_distance
bilinear = F.bilinear


# -- convolutions ---------------------------------------------------------------------------

def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
           stride: int | Sequence[int] = 1, padding: int | Sequence[int] | str = 0,
           dilation: int | Sequence[int] = 1, groups: int = 1) -> Tensor:
    """2-D convolution (:func:`nn.functional.conv2d` without Volta's ``algo``)."""
    return F.conv2d(input, weight, bias, stride, padding, dilation, groups)


_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Sequence[int],
                padding: Sequence[int], dilation: Sequence[int], transposed: bool,
                output_padding: Sequence[int], groups: int) -> Tensor:
    """ATen's generic convolution: ``conv{1,2,3}d`` or ``conv_transpose{1,2,3}d`` by the
    weight's number of spatial dims (``output_padding`` is used only when ``transposed``).
    """
    _check_tensor("convolution", weight)
    n = weight.ndim - 2
    if n not in _CONV:
        raise ShapeError(f"convolution: expected a weight of 3 to 5 dims (1 to 3 spatial), "
                         f"got shape {weight.shape}")
    if transposed:
        return _CONV_T[n](input, weight, bias, stride, padding, output_padding, groups,
                          dilation)
    return _CONV[n](input, weight, bias, stride, padding, dilation, groups)


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """1-D convolution of a time-batch-channel input: ``input`` ``(T, N, C_in)``,
    ``weight`` ``(k, C_in, C_out)``, ``bias`` ``(C_out,)``; output ``(T_out, N, C_out)``
    (:func:`conv1d` on the permuted tensors)."""
    _check_tensor("conv_tbc", input)
    _check_tensor("conv_tbc", weight)
    if input.ndim != 3 or weight.ndim != 3:
        raise ShapeError(f"conv_tbc: expected a 3-D input (T, N, C_in) and a 3-D weight "
                         f"(k, C_in, C_out), got shapes {input.shape} and {weight.shape}")
    out = F.conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, 1, pad)
    return out.permute(2, 0, 1)


# -- normalization ----------------------------------------------------------------------------

def layer_norm(input: Tensor, normalized_shape: int | Sequence[int],
               weight: Tensor | None = None, bias: Tensor | None = None, eps: float = 1e-05,
               cudnn_enable: bool = True) -> Tensor:
    """:func:`nn.functional.layer_norm` (``cudnn_enable`` is ignored)."""
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-05,
               cudnn_enabled: bool = True) -> Tensor:
    """:func:`nn.functional.group_norm` (``cudnn_enabled`` is ignored)."""
    return F.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
               running_mean: Tensor | None, running_var: Tensor | None, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    """:func:`nn.functional.batch_norm` in ATen's order: weight and bias before the
    running statistics, every argument given (``cudnn_enabled`` is ignored)."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                        eps)


def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                  running_mean: Tensor | None, running_var: Tensor | None,
                  use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:
    """:func:`nn.functional.instance_norm` in ATen's order (as :func:`batch_norm`)."""
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


# -- embedding ----------------------------------------------------------------------------------

def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """:func:`nn.functional.embedding` with the table first; a negative ``padding_idx``
    means none (ATen's convention: ``nn.functional.embedding`` has already turned a
    negative index into a row)."""
    return F.embedding(indices, weight, None if padding_idx < 0 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def embedding_renorm_(input: Tensor, indices: Tensor, max_norm: float,
                      norm_type: float) -> Tensor:
    """Scale, in place and unrecorded, each row of the table ``input`` that ``indices``
    references and whose ``norm_type``-norm exceeds ``max_norm`` (what ``embedding``'s
    ``max_norm`` does first); returns ``input``."""
    return _embedding_renorm(input, indices, max_norm, norm_type)


# -- dropout ------------------------------------------------------------------------------------

def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """:func:`nn.functional.dropout` (``train`` is its ``training``)."""
    return F.dropout(input, p, train)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place :func:`dropout`."""
    return F.dropout(input, p, train, inplace=True)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """:func:`nn.functional.alpha_dropout`."""
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place :func:`alpha_dropout`."""
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """:func:`nn.functional.feature_alpha_dropout`."""
    return F.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place :func:`feature_alpha_dropout`."""
    return F.feature_alpha_dropout(input, p, train, inplace=True)


def _feature_dropout(op: str, input: Tensor, p: float, train: bool, inplace: bool) -> Tensor:
    _check_tensor(op, input)
    _check_p(op, p)
    if not train or p == 0.0:
        return input
    if input.ndim < 2:
        raise ShapeError(f"{op}: Feature dropout requires at least 2 dimensions in the "
                         f"input, got shape {input.shape}")
    mask = (*input.shape[:2], *(1,) * (input.ndim - 2))
    return _drop(op, input, p, train, mask, inplace)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Zero whole channels of ``(N, C, *)`` with probability ``p`` (every ``(n, c)``
    together), scaling the rest by ``1 / (1 - p)``: the dropout of ``dropout1d/2d/3d``
    for any number of dims (whose dim 0 is always the batch)."""
    return _feature_dropout("feature_dropout", input, p, train, False)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place :func:`feature_dropout`."""
    return _feature_dropout("feature_dropout", input, p, train, True)


# -- activations --------------------------------------------------------------------------------

def selu(input: Tensor) -> Tensor:
    """:func:`nn.functional.selu`."""
    return F.selu(input)


def celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    """:func:`nn.functional.celu`."""
    return F.celu(input, alpha)


def _no_generator(op: str, training: bool, generator: Any) -> None:
    if training and generator is not None:
        raise NotImplementedError(f"{op}: generator= is not supported (Volta's rrelu draws "
                                  "from the default generator: seed it with vt.manual_seed)")


def rrelu(input: Tensor, lower: float = 0.125, upper: float = 1.0 / 3.0,
          training: bool = False, generator: Any = None) -> Tensor:
    """:func:`nn.functional.rrelu` (``generator`` must be None when ``training``)."""
    _no_generator("rrelu", training, generator)
    return F.rrelu(input, lower, upper, training)


def rrelu_(input: Tensor, lower: float = 0.125, upper: float = 1.0 / 3.0,
           training: bool = False, generator: Any = None) -> Tensor:
    """In-place :func:`rrelu`."""
    _no_generator("rrelu_", training, generator)
    return F.rrelu_(input, lower, upper, training)


# -- pooling --------------------------------------------------------------------------------------

def _stride(stride: Any) -> Any:
    """ATen's ``stride=[]``: the kernel size (``nn.functional``'s None)."""
    return None if stride is None or (isinstance(stride, (tuple, list)) and not stride) \
        else stride


def max_pool1d(input: Tensor, kernel_size: int | Sequence[int],
               stride: int | Sequence[int] = (), padding: int | Sequence[int] = 0,
               dilation: int | Sequence[int] = 1, ceil_mode: bool = False) -> Tensor:
    """:func:`nn.functional.max_pool1d` (an empty ``stride`` is the kernel size)."""
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input: Tensor, kernel_size: int | Sequence[int],
                            stride: int | Sequence[int] = (),
                            padding: int | Sequence[int] = 0,
                            dilation: int | Sequence[int] = 1,
                            ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    """:func:`max_pool1d` and the position of each maximum along ``L``."""
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode,
                        True)


def max_pool2d(input: Tensor, kernel_size: int | Sequence[int],
               stride: int | Sequence[int] = (), padding: int | Sequence[int] = 0,
               dilation: int | Sequence[int] = 1, ceil_mode: bool = False) -> Tensor:
    """:func:`nn.functional.max_pool2d` (an empty ``stride`` is the kernel size)."""
    return F.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input: Tensor, kernel_size: int | Sequence[int],
               stride: int | Sequence[int] = (), padding: int | Sequence[int] = 0,
               dilation: int | Sequence[int] = 1, ceil_mode: bool = False) -> Tensor:
    """:func:`nn.functional.max_pool3d` (an empty ``stride`` is the kernel size)."""
    return F.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def avg_pool1d(input: Tensor, kernel_size: int | Sequence[int],
               stride: int | Sequence[int] = (), padding: int | Sequence[int] = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """:func:`nn.functional.avg_pool1d` (an empty ``stride`` is the kernel size)."""
    return F.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode,
                        count_include_pad)


def adaptive_max_pool1d(input: Tensor,
                        output_size: int | Sequence[int]) -> tuple[Tensor, Tensor]:
    """:func:`nn.functional.adaptive_max_pool1d` with the indices: ``(values, indices)``."""
    return F.adaptive_max_pool1d(input, output_size, True)


# -- padding and sampling -------------------------------------------------------------------------

def constant_pad_nd(input: Tensor, pad: Sequence[int], value: float = 0) -> Tensor:
    """``nn.functional.pad(input, pad, "constant", value)`` (negative pads crop)."""
    return F.pad(input, pad, "constant", value)


_INTERPOLATION = ("bilinear", "nearest", "bicubic")
_PADDING = ("zeros", "border", "reflection")


def _mode(op: str, what: str, value: Any, names: tuple[str, ...]) -> str:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < len(names):
        accepted = ", ".join(f"{i} ({n})" for i, n in enumerate(names))
        raise ValueError(f"{op}: {what} must be an int, one of {accepted}; got {value!r}")
    return names[value]


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """:func:`nn.functional.grid_sample` with ATen's int modes: ``interpolation_mode`` 0
    bilinear, 1 nearest, 2 bicubic; ``padding_mode`` 0 zeros, 1 border, 2 reflection."""
    return F.grid_sample(
        input, grid, _mode("grid_sampler", "interpolation_mode", interpolation_mode,
                           _INTERPOLATION),
        _mode("grid_sampler", "padding_mode", padding_mode, _PADDING), align_corners)


def _grid_sampler_nd(op: str, nd: int, input: Tensor, grid: Tensor, interpolation_mode: int,
                     padding_mode: int, align_corners: bool) -> Tensor:
    _check_tensor(op, input)
    if input.ndim != nd + 2:
        raise ShapeError(f"{op}: expected a {nd + 2}-D input, got shape {input.shape}")
    return F.grid_sample(input, grid, _mode(op, "interpolation_mode", interpolation_mode,
                                            _INTERPOLATION),
                         _mode(op, "padding_mode", padding_mode, _PADDING), align_corners)


def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """:func:`grid_sampler` of a 4-D ``(N, C, H, W)`` input."""
    return _grid_sampler_nd("grid_sampler_2d", 2, input, grid, interpolation_mode,
                            padding_mode, align_corners)


def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """:func:`grid_sampler` of a 5-D ``(N, C, D, H, W)`` input (bicubic is 2-D only)."""
    return _grid_sampler_nd("grid_sampler_3d", 3, input, grid, interpolation_mode,
                            padding_mode, align_corners)


def affine_grid_generator(theta: Tensor, size: Sequence[int], align_corners: bool) -> Tensor:
    """:func:`nn.functional.affine_grid` (``align_corners`` required)."""
    return F.affine_grid(theta, size, align_corners)


# -- recurrent cells -------------------------------------------------------------------------------

def _cell_input(op: str, input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor) -> None:
    for t in (input, hx, w_ih, w_hh):
        _check_tensor(op, t)
    if input.ndim != 2 or hx.ndim != 2:
        raise ShapeError(f"{op}: expected a 2-D input (N, H_in) and 2-D states (N, H), got "
                         f"shapes {input.shape} and {hx.shape}")


def lstm_cell(input: Tensor, hx: Sequence[Tensor], w_ih: Tensor, w_hh: Tensor,
              b_ih: Tensor | None = None, b_hh: Tensor | None = None
              ) -> tuple[Tensor, Tensor]:
    """One LSTM step (:class:`nn.LSTMCell`'s) on ``hx = (h, c)``; returns ``(h', c')``."""
    h, c = hx
    _cell_input("lstm_cell", input, h, w_ih, w_hh)
    return tuple(_rnn_step("LSTM", input, (h, c), w_ih, w_hh, b_ih, b_hh))


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
             b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One GRU step (:class:`nn.GRUCell`'s); returns ``h'``."""
    _cell_input("gru_cell", input, hx, w_ih, w_hh)
    return _rnn_step("GRU", input, hx, w_ih, w_hh, b_ih, b_hh)


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One Elman RNN step with tanh (:class:`nn.RNNCell`'s); returns ``h'``."""
    _cell_input("rnn_tanh_cell", input, hx, w_ih, w_hh)
    return _rnn_step("RNN_TANH", input, hx, w_ih, w_hh, b_ih, b_hh)


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One Elman RNN step with ReLU (``nn.RNNCell(nonlinearity="relu")``'s)."""
    _cell_input("rnn_relu_cell", input, hx, w_ih, w_hh)
    return _rnn_step("RNN_RELU", input, hx, w_ih, w_hh, b_ih, b_hh)


# -- losses: reduction as an int ---------------------------------------------------------------

def _reduction(op: str, reduction: Any) -> str:
    """ATen's int reduction as ``nn.functional``'s name."""
    if isinstance(reduction, bool) or not isinstance(reduction, int) or not (
            0 <= reduction < len(_REDUCTIONS)):
        raise ValueError(f"{op}: reduction must be an int, 0 (none), 1 (mean) or 2 (sum), as "
                         f"in PyTorch's torch.{op}; got {reduction!r} (nn.functional.{op} "
                         "takes the names)")
    return _REDUCTIONS[reduction]


def kl_div(input: Tensor, target: Tensor, reduction: int = 1, *,
           log_target: bool = False) -> Tensor:
    """:func:`nn.functional.kl_div` with an int ``reduction`` (1 is ``"mean"``: the mean
    over every element, not ``"batchmean"``)."""
    return F.kl_div(input, target, _reduction("kl_div", reduction), log_target)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None,
                                     pos_weight: Tensor | None = None,
                                     reduction: int = 1) -> Tensor:
    """:func:`nn.functional.binary_cross_entropy_with_logits` (``pos_weight`` before an
    int ``reduction``)."""
    op = "binary_cross_entropy_with_logits"
    return F.binary_cross_entropy_with_logits(input, target, weight,
                                              reduction=_reduction(op, reduction),
                                              pos_weight=pos_weight)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor,
                          margin: float = 0.0, reduction: int = 1) -> Tensor:
    """:func:`nn.functional.cosine_embedding_loss` with an int ``reduction``."""
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   _reduction("cosine_embedding_loss", reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction: int = 1) -> Tensor:
    """:func:`nn.functional.hinge_embedding_loss` with an int ``reduction``."""
    return F.hinge_embedding_loss(input, target, margin,
                                  reduction=_reduction("hinge_embedding_loss", reduction))


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 1) -> Tensor:
    """:func:`nn.functional.margin_ranking_loss` with an int ``reduction``."""
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction("margin_ranking_loss", reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2.0, eps: float = 1e-06,
                        swap: bool = False, reduction: int = 1) -> Tensor:
    """:func:`nn.functional.triplet_margin_loss` with an int ``reduction``."""
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction("triplet_margin_loss", reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    """:func:`nn.functional.poisson_nll_loss`, every argument given, ``reduction`` an
    int."""
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction("poisson_nll_loss", reduction))


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: int = 1, zero_infinity: bool = False) -> Tensor:
    """:func:`nn.functional.ctc_loss` with an int ``reduction``."""
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction("ctc_loss", reduction), zero_infinity)


from .. import _ATEN_FORMS  # noqa: E402 - the names, kept where ``vt.<name>`` finds them

__all__ = sorted(_ATEN_FORMS)
