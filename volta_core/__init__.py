"""Volta: PyTorch's ergonomics on any accelerator.

``import volta_core as vt`` gives tensors, autograd and ops; ``vt.nn``, ``vt.optim``,
``vt.data`` and ``vt.io`` hold the rest. Backends are plugins loaded on first device use.
"""

from . import autograd, backends, func, ops
from .amp import autocast, get_autocast_dtype, is_autocast_enabled
from .autograd import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .backend import Device, device, get_default_device, set_default_device
from .backends.cuda import get_float32_matmul_precision, set_float32_matmul_precision
from .compiler import compile  # noqa: A004 - ``vt.compile`` as ``torch.compile``
from .creation import *  # noqa: F401,F403
from .determinism import *  # noqa: F401,F403
from .dtypes import (
    DType,
    bfloat16,
    bool_,
    float16,
    float32,
    float64,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    set_default_dtype,
    uint8,
    uint32,
)
from .errors import *  # noqa: F401,F403
from .io import load, save
from .limits import finfo, iinfo
from .ops import *  # noqa: F401,F403
from .printing import set_printoptions
from .random import Generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from .tensor import Tensor
from .threads import get_num_threads, set_num_threads
from .typed_tensors import *  # noqa: F401,F403

__version__ = "0.1.0"

# ``vt.special`` is PyTorch's ``torch.special`` namespace (``from .ops import *`` brought
# the ops module of that name, which ``from . import special`` would return)
special = __import__("importlib").import_module(f"{__name__}.special")

bool = bool_  # noqa: A001 - ``vt.bool`` as in ``torch.bool``
dtype = DType  # ``isinstance(x, vt.dtype)`` as ``torch.dtype``
half, double, long, short = float16, float64, int64, int16
float, int = float32, int32  # noqa: A001

# names resolved on first use, so ``import volta_core`` stays cheap
_LAZY = {"nn", "optim", "data", "io", "distributed", "cuda", "wgpu", "utils", "distributions",
         "accelerator", "compiler", "onnx", "amp", "cpu", "testing"}

# the ATen spellings of the nn.functional ops (``vt.conv2d``, ``vt.layer_norm``,
# ``vt.kl_div``...), from ``volta_core.nn.aten_forms`` (its ``__all__``): resolved on first
# use, so that ``import volta_core`` does not import ``volta_core.nn``
_ATEN_FORMS = frozenset({
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "convolution", "conv_tbc", "layer_norm", "group_norm", "batch_norm", "instance_norm",
    "rms_norm", "embedding", "embedding_renorm_", "dropout", "dropout_", "alpha_dropout",
    "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_", "feature_dropout",
    "feature_dropout_", "selu", "selu_", "celu", "celu_", "rrelu", "rrelu_", "prelu",
    "hardshrink", "threshold_", "max_pool1d", "max_pool1d_with_indices", "max_pool2d",
    "max_pool3d", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d", "pixel_shuffle",
    "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle", "cosine_similarity",
    "pairwise_distance", "bilinear", "constant_pad_nd", "grid_sampler", "grid_sampler_2d",
    "grid_sampler_3d", "affine_grid_generator", "lstm_cell", "gru_cell", "rnn_tanh_cell",
    "rnn_relu_cell", "kl_div", "binary_cross_entropy_with_logits", "cosine_embedding_loss",
    "hinge_embedding_loss", "margin_ranking_loss", "triplet_margin_loss", "poisson_nll_loss",
    "ctc_loss",
})


def __getattr__(name: str):
    if name == "default_generator":
        from .random import default_generator

        return default_generator()
    if name in _LAZY:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    if name in _ATEN_FORMS:
        from .nn import aten_forms

        value = globals()[name] = getattr(aten_forms, name)
        return value
    raise AttributeError(f"module 'volta_core' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_ATEN_FORMS})


def synchronize(on=None) -> None:
    """Wait for all queued work on device ``on``.

    Args:
        on: a device or device string. When None, waits for every device used so far in
            this process (the default device included), so timings and host reads after it
            see finished work whichever device the tensors live on.
    """
    if on is not None:
        Device(on).synchronize()
        return
    for dev in {get_default_device(), *Device._interned.values()}:
        dev.synchronize()


def _install_out() -> None:
    from .out_arg import install

    prefixes = ("volta_core.ops", "volta_core.creation", "volta_core.special")
    install(globals(), prefixes)
    install(vars(special), prefixes)  # torch.special's functions take out= too


_install_out()
