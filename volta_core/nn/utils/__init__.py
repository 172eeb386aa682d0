"""``volta_core.nn.utils``: gradient clipping, parameter vectors, packed sequences
(:mod:`~volta_core.nn.utils.rnn`), and weight re-parametrizations
(:mod:`~volta_core.nn.utils.parametrize`, :mod:`~volta_core.nn.utils.parametrizations`,
the hook-based :func:`weight_norm` and :func:`spectral_norm`)."""

from . import parametrizations, parametrize, rnn
from .clip_grad import (
    NonFiniteNormError,
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
    parameters_to_vector,
    vector_to_parameters,
)
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector",
           "vector_to_parameters", "NonFiniteNormError", "rnn", "parametrize",
           "parametrizations", "weight_norm", "remove_weight_norm", "spectral_norm",
           "remove_spectral_norm", "get_total_norm", "clip_grads_with_norm_",
           "clip_grad_norm"]
