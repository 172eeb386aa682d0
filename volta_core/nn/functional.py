"""``volta_core.nn.functional``: the functional form of every layer and loss.

Each layer module holds its functional form next to its module class; this module gathers
them so users find them in one place (``import volta_core.nn.functional as F``).
"""

from typing import Any

from ..ops.activation import gelu, softplus
from ..ops.elementwise import sigmoid, tanh
from ..ops.movement import pad
from ..ops.softmax import log_softmax, softmax
from ..ops.threshold import threshold, threshold_
from ..tensor import Tensor
from .activation import (
    celu,
    celu_,
    elu,
    elu_,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    hardtanh_,
    leaky_relu,
    leaky_relu_,
    logsigmoid,
    mish,
    prelu,
    relu,
    relu6,
    relu_,
    rrelu,
    rrelu_,
    selu,
    selu_,
    silu,
    softshrink,
    softsign,
    tanhshrink,
)
from .adaptive_pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool3d,
)
from .attention import scaled_dot_product_attention
from .conv import conv1d, conv2d, conv_transpose1d, conv_transpose2d
from .conv3d import conv3d, conv_transpose3d
from .ctc import ctc_loss
from .distance import cosine_similarity, normalize, pairwise_distance, pdist
from .dropout import (
    alpha_dropout,
    dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)
from .embedding import embedding, one_hot
from .embedding_bag import embedding_bag
from .fold import fold, unfold
from .grid_sample import affine_grid, grid_sample
from .instancenorm import instance_norm
from .linear import bilinear, linear
from .loss import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    kl_div,
    nll_loss,
)
from .lp_pool import lp_pool1d, lp_pool2d, lp_pool3d
from .margin_loss import (
    cosine_embedding_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from .max_unpool import max_unpool1d, max_unpool2d, max_unpool3d
from .normalization import batch_norm, group_norm, layer_norm, local_response_norm, rms_norm
from .pooling import (
    adaptive_avg_pool2d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)
from .pooling3d import avg_pool3d, max_pool3d
from .regression_loss import (
    gaussian_nll_loss,
    huber_loss,
    l1_loss,
    mse_loss,
    poisson_nll_loss,
    smooth_l1_loss,
)
from .shape import channel_shuffle
from .softmax import glu, gumbel_softmax, softmin
from .upsampling import interpolate, pixel_shuffle, pixel_unshuffle


def max_pool2d_with_indices(input: Tensor, *args: Any, **kwargs: Any) -> Any:
    """``max_pool2d(..., return_indices=True)``."""
    kwargs["return_indices"] = True
    return max_pool2d(input, *args, **kwargs)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any) -> Any:
    """``adaptive_max_pool1d(..., return_indices=True)``."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any) -> Any:
    """``adaptive_max_pool2d(..., return_indices=True)``."""
    return adaptive_max_pool2d(input, output_size, True)


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None,
             mode: str = "nearest", align_corners: bool | None = None) -> Tensor:
    """Deprecated alias of :func:`interpolate` (as in PyTorch)."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(..., mode="nearest")``."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(..., mode="bilinear", align_corners=True)``."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


__all__ = [
    "linear", "bilinear", "conv1d", "conv2d", "conv_transpose2d", "max_pool1d", "max_pool2d",
    "avg_pool2d", "adaptive_avg_pool2d", "batch_norm", "layer_norm", "group_norm", "rms_norm",
    "dropout", "dropout2d", "embedding", "one_hot", "relu", "sigmoid", "tanh", "gelu", "silu",
    "leaky_relu", "elu", "softplus", "hardtanh", "softmax", "log_softmax", "pad",
    "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
    "cosine_embedding_loss", "threshold", "threshold_", "cosine_similarity", "normalize",
    "relu6", "hardsigmoid", "hardswish", "mish", "selu", "celu", "softsign", "logsigmoid",
    "tanhshrink", "softshrink", "hardshrink", "glu", "prelu", "softmin", "dropout1d",
    "alpha_dropout", "embedding_bag", "instance_norm", "local_response_norm",
    "adaptive_max_pool2d", "avg_pool1d", "soft_margin_loss", "hinge_embedding_loss",
    "gaussian_nll_loss", "poisson_nll_loss", "multi_margin_loss",
    "multilabel_soft_margin_loss", "margin_ranking_loss", "triplet_margin_loss",
    "scaled_dot_product_attention", "pixel_shuffle", "pixel_unshuffle", "interpolate",
    "conv3d", "conv_transpose1d", "conv_transpose3d", "adaptive_avg_pool1d",
    "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool3d", "avg_pool3d",
    "max_pool3d", "fold", "unfold", "pairwise_distance", "dropout3d", "lp_pool1d",
    "lp_pool2d", "lp_pool3d", "multilabel_margin_loss", "triplet_margin_with_distance_loss",
    "channel_shuffle", "max_pool2d_with_indices", "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices", "upsample", "upsample_nearest", "upsample_bilinear",
    "affine_grid", "grid_sample", "ctc_loss",
    "pdist", "rrelu", "feature_alpha_dropout", "max_unpool1d", "max_unpool2d", "max_unpool3d",
    "relu_", "elu_", "leaky_relu_", "hardtanh_", "rrelu_", "selu_", "celu_", "gumbel_softmax",
]
