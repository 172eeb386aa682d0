"""Weight initialisation (``nn.init``), in place and seeded through ``vt.manual_seed``.

Each function draws on the tensor's own device with ``vt.rand``/``vt.randn`` under
``no_grad`` and writes the values into the tensor, which keeps its identity (so it stays
registered as a parameter). All return the tensor.
"""

from __future__ import annotations

import math
from typing import Any

from ..autograd.grad_mode import no_grad
from ..creation import eye, full, rand, randn
from ..errors import ShapeError
from ..tensor import Tensor


def _write(tensor: Tensor, values: Tensor) -> Tensor:
    """Store ``values`` (same shape, any dtype) into ``tensor`` in place."""
    if values.device is not tensor.device:
        values = values.to(tensor.device)
    if values.dtype is not tensor.dtype:
        values = values.to(tensor.dtype)
    tensor.array = values.array
    tensor._version[0] += 1
    return tensor


def _check(op: str, tensor: Any) -> Tensor:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"init.{op}: expected a Tensor, got {type(tensor).__name__}")
    if not tensor.dtype.is_floating_point:
        raise TypeError(f"init.{op}: expected a floating tensor, got {tensor.dtype.name}")
    return tensor


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a non-linearity (as in PyTorch).

    Args:
        nonlinearity: ``'linear'``, ``'conv2d'``, ``'sigmoid'``, ``'tanh'``, ``'relu'``,
            ``'leaky_relu'``, ``'selu'``, ...
        param: the negative slope of ``leaky_relu`` (default 0.01).
    """
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, (int, float)):
            raise ValueError(f"calculate_gain: negative_slope {param!r} is not a number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    if tensor.ndim < 2:
        raise ShapeError(f"init: fan in and fan out can not be computed for a tensor with "
                         f"fewer than 2 dimensions (shape {tensor.shape})")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"init: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    """Fill with samples of U(a, b)."""
    _check("uniform_", tensor)
    with no_grad():
        u = rand(*tensor.shape, dtype=tensor.dtype, device=tensor.device)
        return _write(tensor, u * (b - a) + a)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    """Fill with samples of N(mean, std^2)."""
    _check("normal_", tensor)
    with no_grad():
        n = randn(*tensor.shape, dtype=tensor.dtype, device=tensor.device)
        return _write(tensor, n * std + mean)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0) -> Tensor:
    """Fill with N(mean, std^2) samples, redrawing those outside ``[a, b]``."""
    _check("trunc_normal_", tensor)
    from ..ops.elementwise import where
    from ..ops.math import clamp, logical_or

    with no_grad():
        v = randn(*tensor.shape, dtype=tensor.dtype, device=tensor.device) * std + mean
        for _ in range(64):  # each round keeps ~all samples; the loop ends in a few rounds
            bad = logical_or(v < a, v > b)
            if not bool(bad.any()):
                break
            v = where(bad, randn(*tensor.shape, dtype=tensor.dtype, device=tensor.device)
                      * std + mean, v)
        return _write(tensor, clamp(v, a, b))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    with no_grad():
        return _write(tensor, full(tensor.shape, val, dtype=tensor.dtype, device=tensor.device))


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros."""
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones."""
    return constant_(tensor, 1.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity matrix."""
    if tensor.ndim != 2:
        raise ShapeError(f"init.eye_: only 2-D tensors are supported, got shape {tensor.shape}")
    with no_grad():
        return _write(tensor, eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """Glorot uniform: U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(_check("xavier_uniform_", tensor))
    a = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a)


def xavier_normal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """Glorot normal: N(0, std^2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(_check("xavier_normal_", tensor))
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu") -> Tensor:
    """He uniform: U(-b, b) with ``b = gain * sqrt(3 / fan)``.

    Args:
        a: negative slope of the following leaky ReLU.
        mode: ``'fan_in'`` (preserves forward variance) or ``'fan_out'``.
        nonlinearity: the non-linearity after this layer.
    """
    _check("kaiming_uniform_", tensor)
    if 0 in tensor.shape:
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu") -> Tensor:
    """He normal: N(0, std^2) with ``std = gain / sqrt(fan)``."""
    _check("kaiming_normal_", tensor)
    if 0 in tensor.shape:
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std)


def orthogonal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """Fill with a (semi-)orthogonal matrix (of the tensor flattened to 2-D), times ``gain``.

    Uses Gram-Schmidt-free QR through ``xp.linalg.qr`` where the backend has it.
    """
    _check("orthogonal_", tensor)
    if tensor.ndim < 2:
        raise ShapeError(f"init.orthogonal_: only tensors with 2 or more dimensions are "
                         f"supported, got shape {tensor.shape}")
    rows = tensor.shape[0]
    cols = tensor.numel() // rows if rows else 0
    if rows == 0 or cols == 0:
        return tensor
    with no_grad():
        flat = randn(rows, cols, dtype=tensor.dtype, device=tensor.device)
        if rows < cols:
            flat = flat.T
        xp = tensor.device.xp
        linalg = getattr(xp, "linalg", None)
        if linalg is None or not hasattr(linalg, "qr"):
            raise NotImplementedError(f"init.orthogonal_: backend {tensor.device.backend.name!r}"
                                      " has no linalg.qr")
        q, r = linalg.qr(flat.array)
        d = xp.sign(xp.linalg.diagonal(r) if hasattr(xp.linalg, "diagonal")
                    else xp.stack([r[i, i] for i in range(r.shape[0])]))
        q = q * d
        qt = Tensor._make(q, tensor.device)
        if rows < cols:
            qt = qt.T
        return _write(tensor, qt.reshape(tensor.shape) * gain)


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-D conv weight with the Dirac delta: each of the first
    ``min(out/groups, in)`` output channels of a group passes its input channel through
    (the kernel's centre is 1, all else 0), so the conv is an identity."""
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    out_channels = tensor.shape[0]
    if out_channels % groups:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = out_channels // groups
    keep = min(per_group, tensor.shape[1])
    from ..creation import zeros

    values = zeros(*tensor.shape, dtype=tensor.dtype, device=tensor.device)
    centre = tuple(s // 2 for s in tensor.shape[2:])
    with no_grad():
        for g in range(groups):
            for d in range(keep):
                values[(g * per_group + d, d) + centre] = 1
        return _write(tensor, values)


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: Any = None
            ) -> Tensor:
    """Fill a 2-D tensor from N(0, std^2) with ``ceil(sparsity * rows)`` zeros in each
    column, at random rows (Martens, 2010)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from ..creation import randperm

    rows, cols = tensor.shape
    zeros_per_col = int(math.ceil(sparsity * rows))
    with no_grad():
        values = randn(rows, cols, dtype=tensor.dtype, device=tensor.device,
                       generator=generator) * std
        for c in range(cols):
            rows_out = randperm(rows, device=tensor.device, generator=generator)[
                :zeros_per_col]
            values[rows_out, c] = 0
        return _write(tensor, values)


__all__ = [
    "calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "zeros_", "ones_",
    "eye_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
    "orthogonal_", "dirac_", "sparse_",
]
