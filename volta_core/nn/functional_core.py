"""The functional form of every layer and loss (``volta_core.nn.functional``).

The helpers at the top check arguments for the layer files; each layer file
(``conv.py``, ``pooling.py``, ...) holds its functional form next to its module, and this
module gathers them (the imports at the bottom) so users find them in one place.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import DeviceError, DTypeError, ShapeError
from ..tensor import Tensor


def _ntuple(op: str, value: int | Sequence[int], n: int, name: str) -> tuple[int, ...]:
    """``value`` as an ``n``-tuple of ints (an int is repeated)."""
    if isinstance(value, int):
        return (value,) * n
    out = tuple(int(v) for v in value)
    if len(out) != n:
        raise ValueError(f"{op}: {name} must be an int or a tuple of {n} ints, got {value!r}")
    return out


def _pair(op: str, value: int | Sequence[int], name: str) -> tuple[int, int]:
    return _ntuple(op, value, 2, name)  # type: ignore[return-value]


def _check_tensor(op: str, x: Any, name: str = "input") -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(x).__name__}")
    return x


def _check_rank(op: str, x: Tensor, ranks: Sequence[int], layout: str) -> None:
    """Raise a ShapeError naming ``op`` unless ``x.ndim`` is one of ``ranks``."""
    if x.ndim not in ranks:
        want = " or ".join(f"{r}-D" for r in ranks)
        raise ShapeError(f"{op}: expected a {want} input {layout}, got a {x.ndim}-D input of "
                         f"shape {x.shape}; reshape it (e.g. unsqueeze(0) for one sample)")


def _check_same(op: str, x: Tensor, *others: Tensor | None) -> None:
    """Raise unless the parameters ``others`` share ``x``'s device and dtype."""
    for w in others:
        if w is None:
            continue
        if w.device is not x.device:
            raise DeviceError(f"{op}: input is on {x.device} but the weights are on "
                              f"{w.device}; move the input with .to('{w.device}') or the "
                              f"module with .to('{x.device}')")
        if w.array.dtype != x.array.dtype:
            raise DTypeError(f"{op}: input dtype {x.dtype.name} does not match weight dtype "
                             f"{w.dtype.name}; convert the input with .to({w.dtype.name}) or "
                             f"the module with .to({x.dtype.name})")


def _check_floating(op: str, x: Tensor) -> None:
    if not x.dtype.is_floating_point:
        raise DTypeError(f"{op}: expected a floating-point input, got {x.dtype.name}; "
                         "call .float() first")


_REDUCTIONS = ("none", "mean", "sum")


def _reduce(op: str, loss: Tensor, reduction: str) -> Tensor:
    """Apply a loss reduction (``none``, ``mean``, ``sum``)."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{op}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")


from ..ops.activation import elu, gelu, hardtanh, leaky_relu, silu, softplus  # noqa: E402
from ..ops.elementwise import relu, sigmoid, tanh  # noqa: E402
from ..ops.movement import pad  # noqa: E402
from ..ops.softmax import log_softmax, softmax  # noqa: E402
from .conv import conv1d, conv2d, conv_transpose2d  # noqa: E402
from .dropout import dropout, dropout2d  # noqa: E402
from .embedding import embedding, one_hot  # noqa: E402
from .linear import bilinear, linear  # noqa: E402
from .loss import (  # noqa: E402
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cosine_embedding_loss,
    cross_entropy,
    huber_loss,
    kl_div,
    l1_loss,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
)
from .normalization import batch_norm, group_norm, layer_norm, rms_norm  # noqa: E402
from .pooling import adaptive_avg_pool2d, avg_pool2d, max_pool1d, max_pool2d  # noqa: E402

__all__ = [
    "linear", "bilinear", "conv1d", "conv2d", "conv_transpose2d", "max_pool1d", "max_pool2d",
    "avg_pool2d", "adaptive_avg_pool2d", "batch_norm", "layer_norm", "group_norm", "rms_norm",
    "dropout", "dropout2d", "embedding", "one_hot", "relu", "sigmoid", "tanh", "gelu", "silu",
    "leaky_relu", "elu", "softplus", "hardtanh", "softmax", "log_softmax", "pad",
    "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
    "cosine_embedding_loss",
]
