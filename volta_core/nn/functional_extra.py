"""The functional forms of the layers and losses in the ``*_extra`` modules.

Gathered here so that ``volta_core.nn.functional`` re-exports them with one import.
"""

from __future__ import annotations

from .activation_extra import (
    celu,
    glu,
    hardshrink,
    hardsigmoid,
    hardswish,
    logsigmoid,
    mish,
    prelu,
    relu6,
    selu,
    softmin,
    softshrink,
    softsign,
    tanhshrink,
)
from .dropout_extra import alpha_dropout, dropout1d
from .embedding_bag import embedding_bag
from .loss_extra import (
    gaussian_nll_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_soft_margin_loss,
    poisson_nll_loss,
    soft_margin_loss,
    triplet_margin_loss,
)
from .normalization_extra import instance_norm, local_response_norm
from .pooling_extra import adaptive_max_pool2d, avg_pool1d

__all__ = [
    "relu6", "hardsigmoid", "hardswish", "mish", "selu", "celu", "softsign", "logsigmoid",
    "tanhshrink", "softshrink", "hardshrink", "glu", "prelu", "softmin", "dropout1d",
    "alpha_dropout", "embedding_bag", "instance_norm", "local_response_norm",
    "adaptive_max_pool2d", "avg_pool1d", "soft_margin_loss", "hinge_embedding_loss",
    "gaussian_nll_loss", "poisson_nll_loss", "multi_margin_loss",
    "multilabel_soft_margin_loss", "margin_ranking_loss", "triplet_margin_loss",
]
