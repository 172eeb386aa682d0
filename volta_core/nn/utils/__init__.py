"""``volta_core.nn.utils``: gradient clipping, parameter vectors, packed sequences
(:mod:`~volta_core.nn.utils.rnn`), and weight re-parametrizations."""

from . import rnn
from .clip_grad import (
    NonFiniteNormError,
    clip_grad_norm_,
    clip_grad_value_,
    parameters_to_vector,
    vector_to_parameters,
)

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector",
           "vector_to_parameters", "NonFiniteNormError", "rnn"]
