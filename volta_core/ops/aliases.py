"""PyTorch's other spellings of ops defined elsewhere: the Tensor methods that are plain
forms of existing functions (``x.multiply``, ``x.greater``, ``x.det``, ...), their in-place
forms (``x.gt_``, ``x.cumsum_``, ...), the real-tensor forms of complex ops (``conj``,
``isreal``, ``angle``) and deprecated names real programs still use (``torch.cholesky``,
``torch.range``, ``Tensor.qr``).

The top-level names PyTorch keeps for them live here too: the in-place functions
(``torch.sigmoid_(x)`` is ``x.sigmoid_()``), the ``*_copy`` forms of the view ops (the
view's values in new memory), ATen's other names (``rsub``, ``igamma``,
``split_with_sizes``, ``frobenius_norm``...), ``asarray``, eager ``cond`` and the
autocast, anomaly and determinism state functions. (The ATen spellings of the
``nn.functional`` ops, ``torch.conv2d`` or ``torch.layer_norm``, are
``volta_core.nn.aten_forms``.)

Nothing here computes anything new: each name calls the op it stands for, so values,
dtypes, gradients and errors are that op's.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Sequence
from typing import Any

from ..amp.autocast_mode import (
    _ALLOWED,
    _check_device_type,
    get_autocast_dtype,
    is_autocast_cache_enabled,
    is_autocast_enabled,
)
from ..amp.state import state as _amp_state
from ..autograd.anomaly_mode import (
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from ..dtypes import ALL_DTYPES, DType, get_dtype
from ..errors import DTypeError, ShapeError
from ..func import vmap
from ..tensor import Tensor, tensor_method
from . import elementwise, gamma_functions, linalg, logic, pairwise, special
from .inplace import inplace, method_form
from .movement import clone


def _tensor(op: str, input: Any) -> Tensor:
    """``input`` itself when it is a Tensor, else PyTorch's TypeError."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    return input


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
def get_device(input: Tensor) -> int:
    """The device index of a GPU tensor, -1 on the CPU (as PyTorch's method and its
    top-level ``torch.get_device(input)``)."""
    dev = _tensor("get_device", input).device
    return -1 if dev.type == "cpu" else (dev.index or 0)


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


def qr(input: Tensor, some: bool = True) -> Any:
    """``torch.qr`` (deprecated in PyTorch for ``linalg.qr``): ``(Q, R)``, the reduced
    factors when ``some``, else the complete ones."""
    return linalg.qr(input, "reduced" if some else "complete")


Tensor.cholesky = cholesky
Tensor.qr = qr


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


# -- in-place methods of existing ops (x.acos_(), x.gcd_(other), ...) ---------------------

for _name in ("acos", "acosh", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh",
              "asin", "asinh", "atan", "atanh", "cosh", "sinh", "erf", "erfc", "log10",
              "deg2rad", "rad2deg", "i0", "fix", "gcd", "lcm", "addmv"):
    method_form(_name)


@tensor_method()
def igamma(input: Tensor, other: Any) -> Tensor:
    """The regularized lower incomplete gamma function (:func:`vt.special.gammainc`)."""
    return gamma_functions.gammainc(input, other)


@tensor_method()
def igammac(input: Tensor, other: Any) -> Tensor:
    """The regularized upper incomplete gamma function (:func:`vt.special.gammaincc`)."""
    return gamma_functions.gammaincc(input, other)


method_form("igamma")
method_form("igammac")


@tensor_method()
def conj_physical_(input: Tensor) -> Tensor:
    """In-place :func:`conj_physical`: nothing to do for a real tensor (as PyTorch, which
    returns it untouched)."""
    return input


@tensor_method()
def is_conj(input: Tensor) -> bool:
    """False: Volta's tensors are real, so none is a lazily conjugated view."""
    _tensor("is_conj", input)
    return False


@tensor_method()
def is_neg(input: Tensor) -> bool:
    """False: Volta has no lazily negated views (PyTorch's come from complex conjugation)."""
    _tensor("is_neg", input)
    return False


@tensor_method()
def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims: for real tensors the view
    ``input.transpose(-2, -1)`` (``input.mT``)."""
    if input.ndim < 2:
        raise ShapeError("adjoint: tensor.adjoint() is only supported on matrices or "
                         f"batches of matrices. Got {input.ndim}-D tensor.")
    return input.transpose(-2, -1)


def real(input: Tensor) -> Tensor:
    """The real part of ``input``: ``input`` itself for Volta's real dtypes (as PyTorch
    returns a real tensor unchanged)."""
    return _tensor("real", input)


# -- the in-place functions (torch.sigmoid_(x) is x.sigmoid_()) ----------------------------

def _inplace_function(name: str) -> Callable[[Tensor], Tensor]:
    """``torch.{name}(input)``: :meth:`Tensor.{name}`, as a function of one tensor."""
    def fn(input: Tensor) -> Tensor:
        return getattr(_tensor(name, input), name)()

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"In-place ``{name[:-1]}``: ``input.{name}()`` (``input`` is modified and "
                  "returned).")
    return fn


_UNARY_INPLACE = (
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
    "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "cos_", "cosh_", "deg2rad_",
    "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_", "i0_", "log10_",
    "log1p_", "log2_", "log_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_",
    "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_",
    "trunc_", "zero_", "detach_", "conj_physical_")
for _name in _UNARY_INPLACE:
    globals()[_name] = _inplace_function(_name)


def clamp_(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """In-place :func:`clamp`: ``input.clamp_(min, max)``."""
    return _tensor("clamp_", input).clamp_(min, max)


def clip_(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """In-place :func:`clip` (``clamp_``)."""
    return _tensor("clip_", input).clip_(min, max)


def clamp_min_(input: Tensor, min: Any) -> Tensor:  # noqa: A002
    """In-place :func:`clamp_min`: ``input.clamp_min_(min)``."""
    return _tensor("clamp_min_", input).clamp_min_(min)


def clamp_max_(input: Tensor, max: Any) -> Tensor:  # noqa: A002
    """In-place :func:`clamp_max`: ``input.clamp_max_(max)``."""
    return _tensor("clamp_max_", input).clamp_max_(max)


def fill_(input: Tensor, value: Any) -> Tensor:
    """Set every entry of ``input`` to ``value`` (a number or a 0-d tensor), in place."""
    return _tensor("fill_", input).fill_(value)


def fill(input: Tensor, value: Any) -> Tensor:
    """A new tensor of ``input``'s shape, dtype and device filled with ``value`` (a number
    or a 0-d tensor): :func:`fill_` on a copy, so ``input`` gets a zero gradient and a
    tensor ``value`` the sum of the output's."""
    return clone(_tensor("fill", input)).fill_(value)


def round_(input: Tensor, *, decimals: int = 0) -> Tensor:
    """In-place :func:`round` (to ``decimals`` decimal places)."""
    x = _tensor("round_", input)
    return x.round_(decimals=decimals) if decimals else x.round_()


def logit_(input: Tensor, eps: float | None = None) -> Tensor:
    """In-place :func:`logit`."""
    return _tensor("logit_", input).logit_(eps)


def nan_to_num_(input: Tensor, nan: float | None = None, posinf: float | None = None,
                neginf: float | None = None) -> Tensor:
    """In-place :func:`nan_to_num` (``nan=None`` is 0, as PyTorch's)."""
    return _tensor("nan_to_num_", input).nan_to_num_(0.0 if nan is None else nan, posinf,
                                                     neginf)


def xlogy_(input: Tensor, other: Any) -> Tensor:
    """In-place :func:`xlogy`: ``input * log(other)`` (0 where ``input`` is 0)."""
    return _tensor("xlogy_", input).xlogy_(other)


def ldexp_(input: Tensor, other: Any) -> Tensor:
    """In-place :func:`ldexp`: ``input * 2 ** other``."""
    return _tensor("ldexp_", input).ldexp_(other)


def gcd_(input: Tensor, other: Tensor) -> Tensor:
    """In-place :func:`gcd` (integer tensors)."""
    return _tensor("gcd_", input).gcd_(other)


def lcm_(input: Tensor, other: Tensor) -> Tensor:
    """In-place :func:`lcm` (integer tensors)."""
    return _tensor("lcm_", input).lcm_(other)


def addmv_(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1,
           alpha: Any = 1) -> Tensor:
    """In-place :func:`addmv`: ``input = beta * input + alpha * (mat @ vec)``."""
    return _tensor("addmv_", input).addmv_(mat, vec, beta=beta, alpha=alpha)


# -- other names of existing ops ----------------------------------------------------------

def rsub(input: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    """``other - alpha * input`` (:func:`sub` with its operands swapped)."""
    return elementwise.sub(other, _tensor("rsub", input), alpha=alpha)


def detach(input: Tensor) -> Tensor:
    """``input.detach()``: a view of ``input`` outside the autograd graph."""
    return _tensor("detach", input).detach()


def is_signed(input: Tensor) -> bool:
    """Whether ``input``'s dtype is signed (``input.is_signed()``)."""
    return _tensor("is_signed", input).is_signed()


def is_same_size(input: Tensor, other: Tensor) -> bool:
    """Whether ``input`` and ``other`` have the same shape."""
    return _tensor("is_same_size", input).shape == _tensor("is_same_size", other).shape


def is_inference(input: Tensor) -> bool:
    """``input.is_inference()`` (False in Volta: see :meth:`Tensor.is_inference`)."""
    return _tensor("is_inference", input).is_inference()


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """:func:`chunk` (PyTorch's form without its view checks; the values are chunk's)."""
    return _tensor("unsafe_chunk", input).chunk(chunks, dim)


def unsafe_split(input: Tensor, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:
    """:func:`split` into pieces of ``split_size`` (PyTorch's form without view checks)."""
    return _tensor("unsafe_split", input).split(split_size, dim)


def _sizes(op: str, split_sizes: Any) -> list[int]:
    if not isinstance(split_sizes, (tuple, list)):
        raise TypeError(f"{op}(): argument 'split_sizes' must be a tuple of ints, not "
                        f"{type(split_sizes).__name__}")
    return list(split_sizes)


def split_with_sizes(input: Tensor, split_sizes: Sequence[int],
                     dim: int = 0) -> tuple[Tensor, ...]:
    """:func:`split` into pieces of the sizes ``split_sizes`` (which sum to ``dim``'s)."""
    return _tensor("split_with_sizes", input).split(_sizes("split_with_sizes", split_sizes),
                                                    dim)


def unsafe_split_with_sizes(input: Tensor, split_sizes: Sequence[int],
                            dim: int = 0) -> tuple[Tensor, ...]:
    """:func:`split_with_sizes` (PyTorch's form without view checks)."""
    op = "unsafe_split_with_sizes"
    return _tensor(op, input).split(_sizes(op, split_sizes), dim)


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """The indices of the nonzero elements of ``input`` (:func:`nonzero`'s ``(n, ndim)``
    int64 tensor), cut or padded with ``fill_value`` rows to exactly ``size`` rows."""
    from .joining import cat

    found = _tensor("nonzero_static", input).nonzero()
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise ValueError(f"nonzero_static: size must be a non-negative int, got {size!r}")
    n = found.shape[0]
    if n >= size:
        return clone(found[:size])
    pad = found.new_full((size - n, found.shape[1]), fill_value)
    return cat([found, pad], 0)


def frobenius_norm(input: Tensor, dim: int | Sequence[int],
                   keepdim: bool = False) -> Tensor:
    """The 2-norm over the (at most 2) dims ``dim`` (``linalg.vector_norm(input, 2, dim,
    keepdim)``, which PyTorch's deprecated name stands for)."""
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) > 2:
        raise ShapeError(f"frobenius_norm: Expected at most 2 dimensions, but got {len(dims)} "
                         "dimensions instead.")
    return linalg.vector_norm(_tensor("frobenius_norm", input), 2, dims, keepdim)


def nuclear_norm(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """The nuclear norm (sum of singular values) over the matrix dims ``dim`` (the last
    two when not given): ``linalg.matrix_norm(input, "nuc", dim, keepdim)``. As PyTorch,
    ``nuclear_norm(input, keepdim)`` takes ``keepdim`` second."""
    if isinstance(dim, bool):  # PyTorch's nuclear_norm(input, keepdim=False) overload
        dim, keepdim = None, dim
    dims = (-2, -1) if dim is None else tuple(dim)
    return linalg.matrix_norm(_tensor("nuclear_norm", input), "nuc", dims, keepdim)


# -- the *_copy forms of the view ops: the view's values in new memory ---------------------

def _copy_of(view: Tensor) -> Tensor:
    """``view``'s values in new (contiguous) memory; gradients flow as through the view."""
    return clone(view)


def alias_copy(input: Tensor) -> Tensor:
    """A copy of ``input`` (the ``*_copy`` form of ``alias``, ``input`` itself as a view)."""
    return _copy_of(_tensor("alias_copy", input))


def detach_copy(input: Tensor) -> Tensor:
    """A copy of ``input`` outside the autograd graph (``input.detach().clone()``)."""
    return clone(_tensor("detach_copy", input).detach())


def as_strided_copy(input: Tensor, size: Sequence[int], stride: Sequence[int],
                    storage_offset: int | None = None) -> Tensor:
    """:func:`as_strided`'s values as a new tensor."""
    return _copy_of(_tensor("as_strided_copy", input).as_strided(size, stride, storage_offset))


def diagonal_copy(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """:func:`diagonal`'s values as a new tensor."""
    return _copy_of(_tensor("diagonal_copy", input).diagonal(offset, dim1, dim2))


def expand_copy(input: Tensor, size: Sequence[int], *, implicit: bool = False) -> Tensor:
    """:meth:`Tensor.expand`'s values as a new tensor (every element materialized)."""
    return _copy_of(_tensor("expand_copy", input).expand(*size))


def permute_copy(input: Tensor, dims: Sequence[int]) -> Tensor:
    """:func:`permute`'s values as a new tensor."""
    return _copy_of(_tensor("permute_copy", input).permute(*dims))


def select_copy(input: Tensor, dim: int, index: int) -> Tensor:
    """:func:`select`'s values as a new tensor."""
    return _copy_of(_tensor("select_copy", input).select(dim, index))


def slice_copy(input: Tensor, dim: int = 0, start: int | None = None, end: int | None = None,
               step: int = 1) -> Tensor:
    """``input[..., start:end:step, ...]`` (the slice along ``dim``) as a new tensor."""
    x = _tensor("slice_copy", input)
    if step <= 0:
        raise ValueError(f"slice_copy: slice step must be positive, got {step}")
    d = dim + x.ndim if dim < 0 else dim
    if not 0 <= d < max(x.ndim, 1):
        from ..errors import IndexOutOfRangeError

        raise IndexOutOfRangeError(f"slice_copy: dim {dim} is out of range for a tensor of "
                                   f"{x.ndim} dims")
    return _copy_of(x[(slice(None),) * d + (slice(start, end, step),)])


def split_copy(input: Tensor, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:
    """:func:`split`'s pieces of ``split_size``, each a new tensor."""
    return tuple(_copy_of(p) for p in _tensor("split_copy", input).split(split_size, dim))


def split_with_sizes_copy(input: Tensor, split_sizes: Sequence[int],
                          dim: int = 0) -> tuple[Tensor, ...]:
    """:func:`split_with_sizes`'s pieces, each a new tensor."""
    return tuple(_copy_of(p) for p in split_with_sizes(input, split_sizes, dim))


def squeeze_copy(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """:func:`squeeze`'s values as a new tensor."""
    x = _tensor("squeeze_copy", input)
    return _copy_of(x.squeeze() if dim is None else x.squeeze(dim))


def t_copy(input: Tensor) -> Tensor:
    """:func:`t`'s values as a new tensor."""
    return _copy_of(_tensor("t_copy", input).t())


def transpose_copy(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """:func:`transpose`'s values as a new tensor."""
    return _copy_of(_tensor("transpose_copy", input).transpose(dim0, dim1))


def unbind_copy(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """:func:`unbind`'s slices, each a new tensor."""
    return tuple(_copy_of(p) for p in _tensor("unbind_copy", input).unbind(dim))


def unfold_copy(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """:meth:`Tensor.unfold`'s windows as a new tensor."""
    return _copy_of(_tensor("unfold_copy", input).unfold(dimension, size, step))


def unsqueeze_copy(input: Tensor, dim: int) -> Tensor:
    """:func:`unsqueeze`'s values as a new tensor."""
    return _copy_of(_tensor("unsqueeze_copy", input).unsqueeze(dim))


def view_copy(input: Tensor, size: Any) -> Tensor:
    """:meth:`Tensor.view`'s values (a shape, or a dtype to reinterpret as) as a new
    tensor."""
    x = _tensor("view_copy", input)
    return _copy_of(x.view(size) if isinstance(size, (DType, str)) else x.view(*size))


# -- creation -----------------------------------------------------------------------------

def asarray(obj: Any, *, dtype: Any = None, device: Any = None, copy: bool | None = None,
            requires_grad: bool | None = None) -> Tensor:
    """Convert ``obj`` to a tensor, sharing its memory when it can.

    ``obj`` is a tensor, a NumPy array, an object with ``__dlpack__``, an object with the
    buffer protocol (its bytes read as ``dtype``, the default float dtype if not given), a
    number or a sequence of numbers.

    Args:
        dtype: the result's dtype; default: ``obj``'s (inferred for numbers and sequences).
        device: the result's device; default: ``obj``'s (the default device for numbers
            and sequences).
        copy: None shares memory whenever the dtype and device allow it; True always
            copies; False never does, and raises ``ValueError`` when it would have to.
        requires_grad: whether the result requires grad; None keeps ``obj``'s (and its
            autograd history). Where the flag must change, the result is a new alias of
            ``obj`` (detached, or a new leaf); ``obj`` itself is never modified (PyTorch
            flips the flag of a leaf ``obj`` in place).
    """
    from ..backend import Device
    from ..creation import from_dlpack, from_numpy
    from ..dtypes import get_default_dtype
    from ..io import host_buffers

    want = None if dtype is None else get_dtype(dtype)
    src = obj
    if not isinstance(src, Tensor) and not host_buffers.is_array(src):
        if hasattr(src, "__dlpack__") and hasattr(src, "__dlpack_device__"):
            src = from_dlpack(src)
        elif (not host_buffers.is_scalar(src) and not isinstance(src, str)
              and host_buffers.has_buffer(src)):
            dt = want or get_default_dtype()
            src = from_numpy(host_buffers.from_buffer(src, Device("cpu").native_dtype(dt)))
    if host_buffers.is_array(src):
        dev = Device(device) if device is not None else Device("cpu")
        name = str(src.dtype)
        if dev.type == "cpu" and (want is None or want.name == name) and name in _DTYPE_NAMES:
            src = from_numpy(src)
        elif copy is False:
            raise ValueError(f"asarray: can't alias a NumPy array of dtype {name} into a "
                             f"{(want or get_dtype(name)).name} tensor on {dev}")
        else:
            out = Tensor(src, dtype=want, device=dev)
            return _with_grad(out, obj, requires_grad)
    if isinstance(src, Tensor):
        dev = src.device if device is None else Device(device)
        dt = src.dtype if want is None else want
        if copy is False and (dt is not src.dtype or dev is not src.device):
            raise ValueError(f"asarray: can't alias a {src.dtype.name} tensor on {src.device} "
                             f"into a {dt.name} tensor on {dev}")
        out = src.to(device=dev, dtype=dt)
        if copy and out is src:
            out = clone(src)
        return _with_grad(out, obj, requires_grad)
    if copy is False:
        raise ValueError(f"asarray: can't alias a {type(obj).__name__} into a tensor "
                         "(only tensors, arrays and buffers share memory)")
    from ..creation import tensor

    return _with_grad(tensor(obj, dtype=want, device=device), obj, requires_grad)


_DTYPE_NAMES = frozenset(d.name for d in ALL_DTYPES)  # NumPy dtypes Volta has


def _with_grad(out: Tensor, obj: Any, requires_grad: bool | None) -> Tensor:
    """``out`` with ``requires_grad`` applied, never changing ``obj``'s flag."""
    if requires_grad is None or bool(requires_grad) == out.requires_grad:
        return out
    if not requires_grad:
        return out.detach()
    if out is obj or not out.is_leaf:
        out = out.detach()
    return out.requires_grad_(True)


def frombuffer(buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D CPU tensor over the memory of ``buffer`` (an object with the buffer
    protocol), its bytes from ``offset`` read as ``count`` elements of ``dtype`` (all
    that fit when -1); the tensor shares the buffer's memory."""
    from ..backend import Device
    from ..creation import from_numpy
    from ..io.host_buffers import from_buffer

    out = from_numpy(from_buffer(buffer, Device("cpu").native_dtype(get_dtype(dtype)),
                                 count=count, offset=offset))
    return out.requires_grad_(True) if requires_grad else out


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule of ``tensor``'s memory (``tensor.__dlpack__()``)."""
    return _tensor("to_dlpack", tensor).__dlpack__()


def empty_permuted(size: Sequence[int], physical_layout: Sequence[int], *, dtype: Any = None,
                   layout: Any = None, device: Any = None, requires_grad: bool = False,
                   pin_memory: bool = False) -> Tensor:
    """An uninitialized tensor of shape ``size`` whose dims lie in memory in the order
    ``physical_layout`` (outermost first): ``empty`` of the permuted shape, permuted back
    (so its strides are PyTorch's)."""
    from ..creation import empty

    size, order = tuple(size), tuple(physical_layout)
    if len(order) != len(size):
        raise ShapeError(f"empty_permuted: Number of dimensions in size does not match the "
                         f"length of the physical_layout; size {size}, physical_layout "
                         f"{order}")
    if sorted(order) != list(builtins.range(len(size))):
        raise ShapeError(f"empty_permuted: physical_layout {order} is not a permutation of "
                         f"the dims 0..{len(size) - 1} (Duplicate dim not allowed)")
    inverse = [order.index(d) for d in sorted(order)]
    out = empty(*(size[d] for d in order), dtype=dtype, device=device)
    out = out.permute(*inverse) if inverse else out
    return out.requires_grad_(True) if requires_grad else out


# -- control flow -------------------------------------------------------------------------

def cond(pred: Any, true_fn: Callable, false_fn: Callable,
         operands: tuple | list = ()) -> Any:
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``, run eagerly.

    Args:
        pred: a bool, a number or a one-element tensor (read on the host).
        true_fn: the branch taken when ``pred`` is true (a callable of ``operands``).
        false_fn: the branch taken otherwise.
        operands: a tuple or list of the branches' arguments.
    """
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise ShapeError(f"cond: Expected pred to be bool or single-element tensor, but "
                             f"got a tensor of shape {pred.shape}")
        pred = bool(pred.item())
    elif not isinstance(pred, (bool, int, float)):
        raise TypeError(f"cond: Expected pred to be bool or tensor, but got "
                        f"{type(pred).__name__}")
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("cond: Expect both branches to be callable")
    if not isinstance(operands, (tuple, list)):
        raise TypeError(f"cond: Expect operands to be a tuple or a list, got "
                        f"{type(operands).__name__}")
    return (true_fn if pred else false_fn)(*operands)


# -- autocast, anomaly detection and determinism state ------------------------------------

def is_autocast_cpu_enabled() -> bool:
    """Whether autocast is on for the CPU (``is_autocast_enabled("cpu")``)."""
    return is_autocast_enabled("cpu")


def get_autocast_cpu_dtype() -> DType:
    """The CPU autocast dtype (``get_autocast_dtype("cpu")``)."""
    return get_autocast_dtype("cpu")


def get_autocast_gpu_dtype() -> DType:
    """The CUDA autocast dtype (``get_autocast_dtype("cuda")``)."""
    return get_autocast_dtype("cuda")


def set_autocast_enabled(device_type: str | bool, enabled: bool | None = None) -> None:
    """Turn autocast on or off for ``device_type`` in this thread (``set_autocast_enabled
    (enabled)`` alone is CUDA's, PyTorch's deprecated form). An ``autocast`` block
    restores the state it found on exit."""
    if enabled is None and isinstance(device_type, bool):
        device_type, enabled = "cuda", device_type
    dt = _check_device_type("set_autocast_enabled", device_type)
    active = dict(_amp_state.active)
    if enabled:
        active[dt] = get_autocast_dtype(dt)
    else:
        active.pop(dt, None)
    _amp_state.active = active


def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    """Set the dtype autocast uses for ``device_type`` in this thread."""
    dt = _check_device_type("set_autocast_dtype", device_type)
    fast = get_dtype(dtype)
    if fast not in _ALLOWED[dt]:
        names = ", ".join(d.name for d in _ALLOWED[dt])
        raise DTypeError(f"set_autocast_dtype: {dt} autocast supports {names}, got "
                         f"{fast.name}")
    _amp_state.dtypes = {**_amp_state.dtypes, dt: fast}
    if dt in _amp_state.active:
        _amp_state.active = {**_amp_state.active, dt: fast}


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """``set_autocast_enabled("cpu", enabled)``."""
    set_autocast_enabled("cpu", enabled)


def set_autocast_cpu_dtype(dtype: Any) -> None:
    """``set_autocast_dtype("cpu", dtype)``."""
    set_autocast_dtype("cpu", dtype)


def set_autocast_gpu_dtype(dtype: Any) -> None:
    """``set_autocast_dtype("cuda", dtype)``."""
    set_autocast_dtype("cuda", dtype)


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Whether autocast caches the cast copies of parameters (this thread)."""
    _amp_state.cache_enabled = bool(enabled)
    if not enabled:
        _amp_state.cache = None
    elif _amp_state.cache is None and _amp_state.depth > 0:
        _amp_state.cache = {}


def clear_autocast_cache() -> None:
    """Drop the cast copies of parameters autocast cached (this thread)."""
    cached = _amp_state.cache_enabled and _amp_state.depth > 0
    _amp_state.cache = {} if cached else None


def autocast_increment_nesting() -> int:
    """Count one more autocast region (this thread); returns the new depth."""
    _amp_state.depth += 1
    if _amp_state.cache is None and _amp_state.cache_enabled:
        _amp_state.cache = {}
    return _amp_state.depth


def autocast_decrement_nesting() -> int:
    """Count one autocast region less; returns the new depth (at 0, PyTorch's autocast
    calls :func:`clear_autocast_cache`)."""
    _amp_state.depth -= 1
    return _amp_state.depth


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off (``vt.autograd.set_detect_anomaly``)."""
    set_detect_anomaly(enabled, check_nan)


def get_deterministic_debug_mode() -> int:
    """0 (default), 1 (warn) or 2 (error): :func:`use_deterministic_algorithms`'s state."""
    from ..determinism import (
        are_deterministic_algorithms_enabled,
        is_deterministic_algorithms_warn_only_enabled,
    )

    if not are_deterministic_algorithms_enabled():
        return 0
    return 1 if is_deterministic_algorithms_warn_only_enabled() else 2


def set_deterministic_debug_mode(debug_mode: int | str) -> None:
    """``use_deterministic_algorithms`` by level: 0/``"default"`` off, 1/``"warn"`` on with
    ``warn_only``, 2/``"error"`` on."""
    from ..determinism import use_deterministic_algorithms

    if isinstance(debug_mode, bool) or not isinstance(debug_mode, (int, str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        names = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in names:
            raise ValueError("invalid value of debug_mode, expected one of `default`, `warn`, "
                             f"`error`, but got {debug_mode}")
        debug_mode = names[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise ValueError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                         f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


__all__ = ["cholesky", "conj", "resolve_conj", "resolve_neg", "conj_physical", "isreal",
           "angle", "range", "narrow_copy",
           # in-place functions
           *_UNARY_INPLACE, "clamp_", "clip_", "clamp_min_", "clamp_max_", "fill_", "round_",
           "logit_", "nan_to_num_", "xlogy_", "ldexp_", "gcd_", "lcm_", "addmv_",
           # other names
           "fill", "rsub", "detach", "is_signed", "is_same_size", "is_conj", "is_neg",
           "is_inference", "get_device", "igamma", "igammac", "adjoint", "real",
           "unsafe_chunk", "unsafe_split", "split_with_sizes", "unsafe_split_with_sizes",
           "nonzero_static", "frobenius_norm", "nuclear_norm",
           # *_copy
           "alias_copy", "as_strided_copy", "detach_copy", "diagonal_copy", "expand_copy",
           "permute_copy", "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy",
           "squeeze_copy", "t_copy", "transpose_copy", "unbind_copy", "unfold_copy",
           "unsqueeze_copy", "view_copy",
           # creation, transforms, control flow, state
           "qr", "asarray", "frombuffer", "to_dlpack", "empty_permuted", "vmap", "cond",
           "is_autocast_cpu_enabled", "get_autocast_cpu_dtype", "get_autocast_gpu_dtype",
           "set_autocast_enabled", "set_autocast_dtype", "set_autocast_cpu_enabled",
           "set_autocast_cpu_dtype", "set_autocast_gpu_dtype", "is_autocast_cache_enabled",
           "set_autocast_cache_enabled", "clear_autocast_cache", "autocast_increment_nesting",
           "autocast_decrement_nesting", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "set_anomaly_enabled", "get_deterministic_debug_mode",
           "set_deterministic_debug_mode"]
