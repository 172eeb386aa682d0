"""PyTorch's other spellings of ops defined elsewhere: the Tensor methods that are plain
forms of existing functions (``x.multiply``, ``x.greater``, ``x.det``, ...), their in-place
forms (``x.gt_``, ``x.cumsum_``, ...), the real-tensor forms of complex ops (``conj``,
``isreal``, ``angle``) and deprecated names real programs still use (``torch.cholesky``,
``torch.range``, ``Tensor.qr``).

Nothing here computes anything new: each name calls the op it stands for, so values,
dtypes, gradients and errors are that op's.
"""

from __future__ import annotations

import math
from typing import Any

from ..tensor import Tensor, tensor_method
from . import elementwise, linalg, logic, pairwise, special
from .inplace import inplace, method_form

# -- methods that are the function of the same name ---------------------------------------

for _name, _fn in {
    "greater": elementwise.gt, "greater_equal": elementwise.ge, "less": elementwise.lt,
    "less_equal": elementwise.le, "not_equal": elementwise.ne,
    "multiply": elementwise.multiply, "negative": elementwise.negative, "vdot": linalg.vdot,
    "det": linalg.det, "logdet": linalg.logdet, "slogdet": linalg.slogdet,
    "inverse": linalg.inverse, "dist": pairwise.dist,
}.items():
    setattr(Tensor, _name, _fn)


@tensor_method()
def ndimension(self: Tensor) -> int:
    """The number of dims (``Tensor.dim``)."""
    return self.ndim


@tensor_method()
def nelement(self: Tensor) -> int:
    """The number of elements (``Tensor.numel``)."""
    return self.numel()


@tensor_method()
def element_size(self: Tensor) -> int:
    """Bytes per element."""
    return self.dtype.itemsize


@tensor_method()
def get_device(self: Tensor) -> int:
    """The device index of a GPU tensor, -1 on the CPU (as PyTorch)."""
    return -1 if self.device.type == "cpu" else (self.device.index or 0)


@tensor_method()
def sum_to_size(self: Tensor, *size: Any) -> Tensor:
    """Sum ``self`` down to ``size`` (which it must broadcast to), as a gradient of a
    broadcast is summed."""
    from ._util import broadcast_shapes
    from .movement import sum_to

    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    if broadcast_shapes("sum_to_size", shape, self.shape) != self.shape:
        from ..errors import ShapeError

        raise ShapeError(f"sum_to_size: size {shape} is not expandable to the tensor's "
                         f"shape {self.shape}")
    return sum_to(self, shape)


@tensor_method()
def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``nn.functional.hardshrink`` as a method."""
    from ..nn.functional import hardshrink as fn

    return fn(input, lambd)


def cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """``torch.cholesky`` (deprecated in PyTorch for ``linalg.cholesky``)."""
    return linalg.cholesky(input, upper=upper)


def _qr(self: Tensor, some: bool = True) -> Any:
    """``Tensor.qr`` (``torch.qr``'s ``some``: the reduced factors, else the complete)."""
    return linalg.qr(self, "reduced" if some else "complete")


Tensor.cholesky = cholesky
Tensor.qr = _qr


# -- in-place forms -----------------------------------------------------------------------

for _name in ("gt", "lt", "ge", "le", "eq", "ne", "greater", "less", "greater_equal",
              "less_equal", "not_equal", "tril", "triu", "cumsum", "cumprod", "nan_to_num",
              "copysign", "ldexp", "true_divide", "logit", "digamma", "erfinv", "lgamma",
              "polygamma", "mvlgamma", "atan2", "arctan2", "hypot", "xlogy", "sinc", "sgn",
              "logical_and", "logical_or", "logical_xor"):
    method_form(_name)


def float_power_(self: Tensor, exponent: Any) -> Tensor:
    """In-place ``float_power``: the result is float64, so ``self`` must be (as PyTorch)."""
    if self.dtype.name != "float64":
        from ..errors import DTypeError

        raise DTypeError(f"float_power_: the base given to float_power_ has dtype "
                         f"{self.dtype.name} but the operation's result requires dtype "
                         "float64")
    others = (exponent,) if type(exponent) is Tensor else ()
    return inplace(self, "float_power_",
                   lambda s: special.float_power(s, exponent), *others)


Tensor.float_power_ = float_power_


# -- real tensors: the complex ops' values ------------------------------------------------

@tensor_method("conj", "resolve_conj", "resolve_neg", "conj_physical")
def conj(input: Tensor) -> Tensor:
    """The complex conjugate: ``input`` itself for the real dtypes Volta has (and so for
    ``resolve_conj``, ``resolve_neg`` and ``conj_physical``)."""
    return input


resolve_conj = resolve_neg = conj_physical = conj


@tensor_method()
def is_complex(input: Tensor) -> bool:
    """False: Volta's dtypes are real."""
    return False


@tensor_method()
def isreal(input: Tensor) -> Tensor:
    """True everywhere for a real tensor (a bool tensor of ``input``'s shape)."""
    return input.new_ones(input.shape, dtype="bool")


@tensor_method()
def angle(input: Tensor) -> Tensor:
    """The argument of a real number: 0 for ``x >= 0``, pi for ``x < 0``, NaN for NaN
    (integers give float32); its gradient is zero, as PyTorch's for real inputs."""
    x = input if input.dtype.is_floating_point else input.float()
    where = elementwise.where
    out = where(logic.isnan(x), x.detach(), where(x < 0, x.new_full((), math.pi), 0.0))
    # input joins the graph with a zero gradient (the value is out's)
    return where(out.new_zeros((), dtype="bool"), x, out) if x.requires_grad else out


# -- creation ------------------------------------------------------------------------------

def range(start: float, end: float, step: float = 1, *, dtype: Any = None,  # noqa: A001
          device: Any = None, requires_grad: bool = False) -> Tensor:
    """``torch.range`` (deprecated in PyTorch for ``arange``): from ``start`` to ``end``
    *inclusive* in steps of ``step``, in the default float dtype."""
    from ..creation import arange
    from ..dtypes import get_default_dtype

    count = int(math.floor((end - start) / step)) + 1
    out = arange(max(count, 0), dtype=dtype or get_default_dtype(), device=device) * step
    out = out + start
    return out.requires_grad_() if requires_grad else out


def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``narrow`` as a new tensor (not a view)."""
    return input.narrow(dim, start, length).clone()


Tensor.narrow_copy = narrow_copy


__all__ = ["cholesky", "conj", "resolve_conj", "resolve_neg", "conj_physical", "isreal",
           "angle", "range", "narrow_copy"]
