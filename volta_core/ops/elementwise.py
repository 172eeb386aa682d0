"""Elementwise ops: unary math, binary arithmetic with broadcasting, comparisons, where.

Binary backward passes reduce the gradient over broadcast dimensions (``sum_to``).
"""

from __future__ import annotations

import builtins
import math
import struct
from typing import Any

from ..amp.dispatch import autocast_op
from ..amp.policy import HOOKED as AUTOCAST_HOOKED
from ..autograd.function import RESULT, Function, carry_saved, no_derivative
from ..autograd.grad_mode import state as _grad_state
from ..backend.kernels import fallback, get_kernel
from ..dtypes import DType, bfloat16, checked_scalar, float16, get_dtype
from ..dtypes import float32 as _FLOAT32
from ..errors import DivisionByZeroError, DTypeError
from ..tensor import Tensor, tensor_method
from ._util import Scalar, broadcast_shapes, promote_pair, python_scalar
from .movement import sum_to

# -- backward on arrays -----------------------------------------------------------------
# A plain backward (no create_graph) records nothing, so the hot backward formulas below
# run on the arrays directly: the same operations in the same order (the same values) as
# their Tensor form, without an op dispatch per term.

def _times(g: Tensor, v: Any) -> Tensor:
    """``g * v`` in a backward: on arrays where that is the Tensor op's result as is (same
    dtype and shape, or a Python number with a float ``g``), else the Tensor op."""
    if not _grad_state.enabled:
        tv = type(v)
        if tv is Tensor:
            ga, va = g.array, v.array
            if ga.dtype == va.dtype and ga.shape == va.shape:
                return Tensor._make(g.device.xp.multiply(ga, va), g.device)
        elif tv is float or tv is int:
            dt = g.dtype
            if dt.kind == "f" and dt is not bfloat16:
                return Tensor._make(g.device.xp.multiply(g.array, v), g.device)
    return g * v


# -- unary --------------------------------------------------------------------------------

class Neg(Function):
    def forward(ctx, x):
        return -x

    def backward(ctx, g):
        if not _grad_state.enabled:
            return Tensor._make(-g.array, g.device)
        return -g


class Reciprocal(Function):
    pytorch_saves = ((RESULT,),)
    saves_as_pytorch = True

    def forward(ctx, x, rounded=None):
        y = 1.0 / x
        ctx.save_for_backward(_as_rounded(ctx, y, rounded))
        return y

    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return -g * (y * y)  # PyTorch's order (one rounding of y * y, as its kernel)


class Sqrt(Function):
    pytorch_saves = ((RESULT,),)
    saves_as_pytorch = True

    def forward(ctx, x, rounded=None):
        y = ctx.xp.sqrt(x)
        ctx.save_for_backward(_as_rounded(ctx, y, rounded))
        return y

    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g / (2.0 * y)


class Exp(Function):
    pytorch_saves = ((RESULT,),)
    saves_as_pytorch = True

    def forward(ctx, x, rounded=None):
        y = ctx.xp.exp(x)
        ctx.save_for_backward(_as_rounded(ctx, y, rounded))
        return y

    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return _times(g, y)


class Exp2(Function):
    pytorch_saves = ((RESULT,),)
    saves_as_pytorch = True

    def forward(ctx, x, rounded=None):
        y = 2.0 ** x  # the standard has no exp2; a scalar base works on every array
        ctx.save_for_backward(_as_rounded(ctx, y, rounded))
        return y

    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y * math.log(2.0)


class Log(Function):
    pytorch_saves = ((0,),)
    saves_as_pytorch = True

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.log(x)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g / x


class Log2(Function):
    pytorch_saves = ((0,),)
    saves_as_pytorch = True

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.log2(x)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g / (x * math.log(2.0))


class Sin(Function):
    pytorch_saves = ((0,),)
    saves_as_pytorch = True

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.sin(x)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.cos()


class Cos(Function):
    pytorch_saves = ((0,),)
    saves_as_pytorch = True

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.cos(x)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return -g * x.sin()


@fallback("tanh_backward")
def tanh_backward_kernel(xp: Any, grad: Any, y: Any) -> Any:
    """The gradient of tanh from its output ``y``: ``grad * (1 - y * y)``."""
    return grad * (1.0 - y * y)


@fallback("sigmoid_backward")
def sigmoid_backward_kernel(xp: Any, grad: Any, y: Any) -> Any:
    """The gradient of sigmoid from its output ``y``: ``grad * y * (1 - y)``."""
    return grad * y * (1.0 - y)


def _fused_backward(ctx: Function, name: str, g: Tensor, y: Tensor) -> Tensor | None:
    """``name``'s one-kernel gradient, or None where Tensor ops must run (create_graph,
    mixed dtypes, bfloat16 whose Python-float arithmetic NumPy widens)."""
    if _grad_state.enabled:
        return None
    dt = g.dtype
    if dt is bfloat16 or y.dtype is not dt:
        return None
    kern = get_kernel(ctx.device.backend, name)
    return Tensor._make(kern(ctx.xp, g.array, y.array), ctx.device)


def _as_rounded(ctx: Function, y: Any, rounded: Any) -> Any:
    """``y`` rounded to the native dtype ``rounded`` and back (None: ``y``): the output a
    bfloat16 op computed in float32 saves, as PyTorch's backward sees the bfloat16 one.
    A rounded copy is not the output: the output is then watched for PyTorch's sake."""
    if rounded is None:
        return y
    ctx.saves_as_pytorch = False
    xp = ctx.xp
    return xp.astype(xp.astype(y, rounded), y.dtype)


class Tanh(Function):
    pytorch_saves = ((RESULT,),)
    saves_as_pytorch = True

    def forward(ctx, x, rounded=None):
        y = ctx.xp.tanh(x)
        ctx.save_for_backward(_as_rounded(ctx, y, rounded))
        return y

    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        fused = _fused_backward(ctx, "tanh_backward", g, y)
        return g * (1.0 - y * y) if fused is None else fused


class Sigmoid(Function):
    pytorch_saves = ((RESULT,),)
    saves_as_pytorch = True

    def forward(ctx, x, rounded=None):
        xp = ctx.xp
        # exp of a non-positive number only: no overflow for large |x|
        e = xp.exp(-xp.abs(x))
        y = xp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
        ctx.save_for_backward(_as_rounded(ctx, y, rounded))
        return y

    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        fused = _fused_backward(ctx, "sigmoid_backward", g, y)
        return g * y * (1.0 - y) if fused is None else fused


@fallback("relu")
def relu_kernel(xp: Any, x: Any) -> Any:
    """``max(x, 0)``; NaN stays NaN, as in PyTorch (``x < 0`` is false)."""
    return xp.where(x < 0, xp.zeros_like(x), x)


@fallback("relu_backward")
def relu_backward_kernel(xp: Any, grad: Any, y: Any) -> Any:
    """The gradient of relu from its output ``y``: 0 where ``y <= 0``, else ``grad`` (also
    at NaN, as in PyTorch)."""
    return xp.where(y <= 0, xp.zeros_like(grad), grad)


class Relu(Function):
    pytorch_saves = ((RESULT,),)
    saves_as_pytorch = True

    def forward(ctx, x):
        y = get_kernel(ctx.device.backend, "relu")(ctx.xp, x)
        ctx.save_for_backward(y)
        return y

    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        if not _grad_state.enabled:  # plain backward: one fused kernel
            kern = get_kernel(ctx.device.backend, "relu_backward")
            return Tensor._make(kern(ctx.xp, g.array, y.array), ctx.device)
        xp = ctx.xp
        return g * Tensor._make(xp.astype(~(y.array <= 0), y.array.dtype), ctx.device)


class Abs(Function):
    pytorch_saves = ((0,),)

    def forward(ctx, x):
        from .math import sign_kernel  # 0 at NaN: the gradient there is 0, as in PyTorch

        ctx.save_for_backward(sign_kernel(ctx.xp, x))
        return ctx.xp.abs(x)

    def backward(ctx, g):
        (sign,) = ctx.saved_tensors
        return g * sign


class Cast(Function):
    def forward(ctx, x, dtype=None, native=None, via=None):
        ctx.src = x.dtype
        if via is not None:  # float64 -> float16 through float32, as PyTorch (see cast)
            x = ctx.xp.astype(x, via)
        return ctx.xp.astype(x, native)

    def backward(ctx, g):
        return Cast.apply(g, native=ctx.src)


def cast(x: Tensor, dtype: DType | str) -> Tensor:
    """Return ``x`` converted to ``dtype`` (differentiable between floating dtypes)."""
    dt = get_dtype(dtype)
    if x.dtype is dt:
        return x
    if x.requires_grad and not dt.is_floating_point:
        x = x.detach()
    dev = x.device
    # PyTorch converts double to half through float (2.5166016 is a float32 tie and
    # becomes 2.515625, not the nearer 2.5175781)
    via = dev.native_dtype(_FLOAT32) if dt.name == "float16" and x.dtype.name == "float64" \
        else None
    return Cast.apply(x, native=dev.native_dtype(dt), via=via)


def _converter(method: str, dtype_name: str):
    def convert(self: Tensor) -> Tensor:
        return cast(self, dtype_name)

    convert.__name__ = method
    convert.__doc__ = (f"Return the tensor as ``{dtype_name}`` (self if it already is); "
                       "differentiable between floating dtypes.")
    return convert


for _method, _name in (("float", "float32"), ("double", "float64"), ("half", "float16"),
                       ("bfloat16", "bfloat16"), ("long", "int64"), ("int", "int32"),
                       ("short", "int16"), ("char", "int8"), ("byte", "uint8"),
                       ("bool", "bool")):
    setattr(Tensor, _method, _converter(_method, _name))


def in_float32(fn, x: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Run ``fn(x, ...)`` on ``x`` upcast to float32 and round the result back to x's dtype.

    Used for bfloat16, whose arithmetic with Python floats promotes to float32 on NumPy
    (ml_dtypes); PyTorch also computes bfloat16 ops in float32 internally.
    """
    xf = cast(x, "float32")
    inner = fn(xf, *args, **kwargs)
    out = cast(inner, x.dtype)
    carry_saved(inner, out, (xf, x))  # PyTorch's op saves x or out, not our float32 copies
    return out


def through_float32(x: Tensor) -> bool:
    """Whether an op of the 2-byte float tensor ``x`` computes in float32 and rounds once,
    as PyTorch's kernels do: bfloat16 everywhere, float16 on the CPU (NumPy's float16 loops
    round each step of a composite; other backends' float16 kernels do not)."""
    return x.dtype is bfloat16 or (x.dtype is float16 and x.device.type == "cpu")


_SAVE_RESULT = (Tanh, Sigmoid, Exp, Exp2, Sqrt, Reciprocal)


def _unary(cls: type, name: str, floating: bool = True, bool_ok: bool = True,
           exact: bool = False):
    """The op of Function ``cls``; ``exact``: its result needs no rounding in any dtype, so
    a bfloat16 input is served as it is instead of through float32."""
    def op(x: Tensor) -> Tensor:
        dt = x.dtype
        if dt.kind == "f" and dt.itemsize > 2:  # the common case: no check applies
            return cls.apply(x)
        if not bool_ok and dt.kind == "b":
            raise DTypeError(f"{name}: not implemented for bool tensors (as in PyTorch); "
                             "convert with .int() or .float() first")
        if not exact and through_float32(x):
            if cls in _SAVE_RESULT:  # their gradients use the 2-byte output (inf in float16)
                native = x.device.native_dtype(dt)
                return in_float32(lambda t: cls.apply(t, rounded=native), x)
            if cls.low_backward:  # its gradient rounds each step to bfloat16, as PyTorch's
                return in_float32(lambda t: cls.apply(t, low=dt), x)
            return in_float32(cls.apply, x)
        if cls is Neg and dt.kind == "b":
            raise DTypeError("neg: negation of a bool tensor is not supported, as in "
                             "PyTorch; use ~ or logical_not() to invert a mask")
        if floating and not dt.is_floating_point:
            x = cast(x, _default_float())
        return cls.apply(x)

    op.__name__ = name
    op.__doc__ = f"Elementwise ``{name}`` of ``x``."
    return tensor_method()(_autocast_hook(name, op))


def _autocast_hook(name: str, op: Any) -> Any:
    """``op`` with the autocast hook when ``name`` is on an autocast list."""
    return autocast_op(name)(op) if name in AUTOCAST_HOOKED else op


def _default_float() -> DType:
    from ..dtypes import get_default_dtype

    return get_default_dtype()


neg = _unary(Neg, "neg", floating=False, exact=True)
negative = neg
reciprocal = _unary(Reciprocal, "reciprocal")
sqrt = _unary(Sqrt, "sqrt")
exp = _unary(Exp, "exp")
exp2 = _unary(Exp2, "exp2")
log = _unary(Log, "log")
log2 = _unary(Log2, "log2")
sin = _unary(Sin, "sin")
cos = _unary(Cos, "cos")
tanh = _unary(Tanh, "tanh")
sigmoid = _unary(Sigmoid, "sigmoid")
relu = _unary(Relu, "relu", floating=False, bool_ok=False, exact=True)
abs = _unary(Abs, "abs", floating=False, bool_ok=False,  # noqa: A001 - users' name
             exact=True)


# -- binary -------------------------------------------------------------------------------

class Add(Function):
    def forward(ctx, a, b):
        needs = ctx.needs_input_grad  # all False when not recording
        if needs[0] or needs[1]:
            ctx.shapes = operand_shapes(a, b)
        if getattr(a, "dtype", None) == ctx.xp.bool:  # bool + bool is `or`, as in PyTorch
            return ctx.xp.logical_or(a, b)
        return ctx.xp.add(a, b)  # the namespace's function: a backend may serve it faster

    def backward(ctx, g):
        sa, sb = ctx.shapes
        na, nb = ctx.needs_input_grad
        return (sum_to(g, sa) if na else None, sum_to(g, sb) if nb else None)


class Sub(Function):
    def forward(ctx, a, b):
        needs = ctx.needs_input_grad  # all False when not recording
        if needs[0] or needs[1]:
            ctx.shapes = operand_shapes(a, b)
        return ctx.xp.subtract(a, b)

    def backward(ctx, g):
        sa, sb = ctx.shapes
        na, nb = ctx.needs_input_grad
        return (sum_to(g, sa) if na else None, sum_to(-g, sb) if nb else None)


class Mul(Function):
    pytorch_saves = ((1,), (0,))
    saves_as_pytorch = True

    def forward(ctx, a, b):
        needs = ctx.needs_input_grad  # all False when not recording
        na, nb = needs[0], needs[1]
        if na or nb:
            ctx.shapes = operand_shapes(a, b)
            # keep only what backward reads: a later in-place change of the other is fine
            ctx.save_for_backward(b if na else None, a if nb else None)
        return ctx.xp.multiply(a, b)

    def backward(ctx, g):
        b, a = ctx.saved_tensors
        sa, sb = ctx.shapes
        na, nb = ctx.needs_input_grad
        return (sum_to(_times(g, b), sa) if na else None,
                sum_to(_times(g, a), sb) if nb else None)


class Div(Function):
    pytorch_saves = ((1,), (0, 1))
    saves_as_pytorch = True

    def forward(ctx, a, b):
        needs = ctx.needs_input_grad  # all False when not recording
        if needs[0] or needs[1]:
            ctx.shapes = operand_shapes(a, b)
            ctx.save_for_backward(a if needs[1] else None, b)
        return ctx.xp.divide(a, b)

    def backward(ctx, g):
        a, b = ctx.saved_tensors
        sa, sb = ctx.shapes
        na, nb = ctx.needs_input_grad
        return (sum_to(g / b, sa) if na else None,
                # PyTorch's order: no b * b to overflow in narrow floats
                sum_to(-g * ((a / b) / b), sb) if nb else None)


class Pow(Function):
    pytorch_saves = ((0, 1, RESULT), (0, 1, RESULT))
    number_exponent = False  # the exponent is a number made a 0-d tensor (bfloat16)

    def forward(ctx, a, b):
        xp = ctx.xp
        na, nb = ctx.needs_input_grad[:2]  # all False when not recording
        ctx.shapes = operand_shapes(a, b)
        if hasattr(b, "dtype") and not ctx.device.volta_dtype(b.dtype).is_floating_point:
            y = _int_pow(xp, a, b)
        elif type(b) is float and (b == 0.5 or b == -0.5):
            # PyTorch takes sqrt/rsqrt: NaN at -inf; its CPU float16 kernel takes C's pow
            # instead, +inf at -inf and +0 at -0 (so (-0) ** -0.5 is +inf)
            base = a
            if ctx.device.volta_dtype(a.dtype).name == "float16":  # in float32, rounded once
                base = xp.astype(xp.where(xp.isinf(a), xp.abs(a), a) + 0.0, xp.float32)
            y = xp.sqrt(base) if b == 0.5 else 1.0 / xp.sqrt(base)
            if y.dtype != a.dtype:  # float16's float32 result (no copy for the others)
                y = xp.astype(y, a.dtype)
        elif ctx.number_exponent and ctx.device.type == "cpu" and float(b) in (3.0, -2.0):
            # PyTorch's CPU bfloat16 loop multiplies in the dtype, each step rounded:
            # x ** 3 is (x * x) * x and x ** -2 is 1 / (x * x)
            sq = a * a
            y = sq * a if float(b) == 3.0 else xp.asarray(1, dtype=a.dtype) / sq
        elif (type(b) is float and a.dtype == xp.float32 and ctx.device.type == "cpu"
              and not _exact_in_float32(b)):
            # PyTorch's CPU float32 pow keeps the exponent in float64: (-3) ** 9999999999.0
            # is -inf (an odd power), where the exponent rounded to float32 is even
            y = xp.astype(xp.astype(a, xp.float64) ** b, xp.float32)
        elif hasattr(b, "shape"):
            # an exponent tensor: C's pow per element, as PyTorch's tensor-tensor pow. NumPy
            # takes sqrt for an exponent of 0.5 that it broadcasts (NaN at -inf, not +inf,
            # and another rounding), so a broadcast exponent is laid out in full first
            e, shape = b, tuple(a.shape) if hasattr(a, "shape") else ()
            if tuple(b.shape) != shape and len(shape) >= b.ndim:
                if broadcast_shapes("pow", shape, tuple(b.shape)) == shape:
                    e = xp.asarray(xp.broadcast_to(b, shape), copy=True)
            if (getattr(a, "dtype", None) == xp.float32 and e.dtype == xp.float32
                    and ctx.device.type == "cpu"):
                # in float64, rounded once: NumPy's float32 pow is an ulp off now and then
                y = xp.astype(xp.astype(a, xp.float64) ** xp.astype(e, xp.float64), xp.float32)
            else:
                y = a ** e
        else:
            y = a ** b
        ctx.save_for_backward(a, b if na or nb else None, y if nb else None)
        if not hasattr(b, "shape"):  # PyTorch's pow(Tensor, Scalar) keeps self only, as
            ctx.saves_as_pytorch = True  # this forward does
        elif not hasattr(a, "shape"):  # pow(Scalar, Tensor): exponent and result
            ctx.pytorch_saves = _POW_NUMBER_BASE
        return y

    def backward(ctx, g):
        a, b, y = ctx.saved_tensors
        if ctx.number_exponent:
            b = b.item()  # the number again: PyTorch's backward takes self.pow(b - 1)
        sa, sb = ctx.shapes
        na, nb = ctx.needs_input_grad
        ga = gb = None
        # PyTorch's products and selections, in its order: an inf or NaN g survives a
        # selected 0 only where PyTorch multiplies after selecting
        if na:  # b * a^(b-1), taken as 0 where b == 0 (also at 0**0), as in PyTorch
            if type(b) is bool:  # PyTorch's Scalar False is not 0: 0 * a^-1, NaN at 0
                ga = g * (float(b) * a ** (float(b) - 1.0))
            elif type(b) is not Tensor:  # zeros outright for a number 0, even where g is NaN
                ga = g.new_zeros(g.shape) if b == 0 else g * (b * a ** (b - 1))
            else:
                ga = where(b == 0, 0.0, g * (b * a ** (b - 1)))
            ga = sum_to(ga, sa)
        if nb:
            # g * (a^b log a), the factor taken as 0 where a == 0 and b >= 0 (the limit)
            if type(a) is not Tensor:
                gb = g * (y * math.log(a)) if a != 0 else g * where(b >= 0, 0.0, y * -math.inf)
            else:
                zero = (a == 0).logical_and(b >= 0)
                gb = g * where(zero, 0.0, y * where(zero, 1.0, a).log())
            gb = sum_to(gb, sb)
        return ga, gb


_POW_NUMBER_EXPONENT = ((0,), ())
_POW_NUMBER_BASE = ((), (1, RESULT))


class _PowNumberExponent(Pow):
    """``bfloat16 ** number``, the number as a 0-d tensor: saves what PyTorch's does."""

    pytorch_saves = _POW_NUMBER_EXPONENT
    number_exponent = True


class _PowNumberBase(Pow):
    """``number ** bfloat16``, the number as a 0-d tensor: saves what PyTorch's does."""

    pytorch_saves = _POW_NUMBER_BASE


def _int_pow(xp: Any, a: Any, b: Any) -> Any:
    """Integer ``a ** b`` with PyTorch's rule for negative exponents: 1 for a base of 1,
    +-1 for -1 (by the exponent's parity) and 0 otherwise (NumPy raises instead)."""
    a, b = _arrays(xp, a, b)  # a reflected number (2 ** t) as an array: where needs arrays
    neg = b < 0
    y = a ** xp.where(neg, xp.zeros_like(b), b)
    one = xp.ones_like(y)
    odd = (b % 2) != 0
    small = xp.where(a == 1, one, xp.where(a == -1, xp.where(odd, -one, one),
                                           xp.zeros_like(y)))
    return xp.where(neg, small, y)


class Maximum(Function):
    """Elementwise max; as in PyTorch, ties split the gradient evenly and where the
    comparison fails (a NaN) both operands get it."""

    pytorch_saves = ((0, 1), (0, 1))

    pick = "maximum"

    def forward(ctx, a, b):
        xp = ctx.xp
        a, b = _arrays(xp, a, b)
        ctx.shapes = operand_shapes(a, b)
        if ctx.device.volta_dtype(a.dtype).is_floating_point:  # integers have no gradient
            # weights from 0-d arrays of a's dtype: NumPy's bfloat16 with a Python float
            # would give float32
            one, half = (xp.asarray(v, dtype=a.dtype, device=ctx.device.native)
                         for v in (1.0, 0.5))
            zero = xp.zeros_like(one)
            tie = xp.where(a == b, half, one)
            a_loses, b_loses = (a < b, a > b) if ctx.pick == "maximum" else (a > b, a < b)
            ctx.save_for_backward(xp.where(a_loses, zero, tie), xp.where(b_loses, zero, tie))
        return getattr(xp, ctx.pick)(a, b)

    def backward(ctx, g):
        wa, wb = ctx.saved_tensors
        sa, sb = ctx.shapes
        na, nb = ctx.needs_input_grad
        # PyTorch masks the loser's gradient to 0 (an infinite g gives no NaN there)
        return (sum_to(where(wa == 0, 0.0, g * wa), sa) if na else None,
                sum_to(where(wb == 0, 0.0, g * wb), sb) if nb else None)


class Minimum(Maximum):
    pick = "minimum"


class Remainder(Function):
    pytorch_saves = ((), (0, 1))

    def forward(ctx, a, b):
        xp = ctx.xp
        ctx.shapes = operand_shapes(a, b)
        if ctx.device.volta_dtype(getattr(a, "dtype", getattr(b, "dtype", None))
                                  ).is_floating_point:  # integers have no gradient
            a, b = _arrays(xp, a, b)
            # PyTorch's gradient -g * floor_divide(a, b), whose quotient is exact (it is
            # -1, not floor(5 / -inf) = -0, for 5 % -inf)
            ctx.save_for_backward(xp.floor_divide(a, b))
            r = xp.remainder(a, b)
            # PyTorch's zero remainder keeps fmod's sign (the dividend's), not the divisor's
            return xp.where(r == 0, xp.copysign(r, a), r)
        return a % b

    def backward(ctx, g):
        (q,) = ctx.saved_tensors
        sa, sb = ctx.shapes
        na, nb = ctx.needs_input_grad
        return (sum_to(g, sa) if na else None, sum_to(-g * q, sb) if nb else None)


class Fmod(Function):
    """C's ``fmod``: ``a - trunc(a / b) * b``, with the sign of ``a``."""

    pytorch_saves = ((), (0, 1))

    def forward(ctx, a, b):
        xp = ctx.xp
        a, b = _arrays(xp, a, b)
        ctx.shapes = operand_shapes(a, b)
        if ctx.device.volta_dtype(a.dtype).is_floating_point:
            # on magnitudes Python's remainder is exactly fmod; the sign then comes from a
            # (xp.remainder, not %: the backend's own, right for an infinite divisor)
            m = xp.remainder(xp.abs(a), xp.abs(b))
            if ctx.needs_input_grad[1]:
                ctx.save_for_backward(xp.trunc(a / b))
            return xp.copysign(m, a)
        # integers: the floor remainder (no abs, which overflows at -128 in int8), moved
        # to the dividend's sign
        r = a % b
        return xp.where((r != 0) & ((r < 0) != (a < 0)), r - b, r)

    def backward(ctx, g):
        sa, sb = ctx.shapes
        na, nb = ctx.needs_input_grad
        return (sum_to(g, sa) if na else None,
                sum_to(-g * ctx.saved_tensors[0], sb) if nb else None)


def _check_int_divisor(name: str, b: Any) -> None:
    """Integer division by zero raises, as in PyTorch (floats give inf/NaN instead)."""
    if type(b) is Tensor:
        if b.dtype.is_floating_point or not builtins.bool(b.device.xp.any(b.array == 0)):
            return
    elif isinstance(b, float) or b != 0:
        return
    raise DivisionByZeroError(f"{name}: integer division by zero (ZeroDivisionError); "
                              "use a floating tensor to get inf/NaN instead")


def _arrays(xp: Any, a: Any, b: Any) -> tuple[Any, Any]:
    """Turn a Python scalar operand into a 0-d array like the other operand."""
    if not hasattr(a, "dtype"):
        a = xp.asarray(a, dtype=b.dtype, device=getattr(b, "device", None))
    elif not hasattr(b, "dtype"):
        b = xp.asarray(b, dtype=a.dtype, device=getattr(a, "device", None))
    return a, b


def shape_of_raw(a: Any) -> tuple[int, ...]:
    """Shape of a backend array, or () for a Python scalar."""
    return tuple(a.shape) if hasattr(a, "shape") else ()


def operand_shapes(a: Any, b: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(shape_of_raw(a), shape_of_raw(b))`` in one call (binary forwards keep it for the
    backward's sum over broadcast dims)."""
    return (tuple(a.shape) if hasattr(a, "shape") else (),
            tuple(b.shape) if hasattr(b, "shape") else ())


_NO_BOOL = ("pow", "remainder", "fmod")


def _is_float(v: Any) -> bool:
    return v.dtype.is_floating_point if type(v) is Tensor else isinstance(v, float)


def _refuse_bool_sub(name: str, a: Any, b: Any) -> None:
    for v in (a, b):
        if v is True or v is False or (type(v) is Tensor and v.dtype.kind == "b"):
            raise DTypeError(f"{name}: subtraction with a bool tensor is not supported, as "
                             "in PyTorch; use ~ or logical_not() to invert a mask, or "
                             "logical_xor() for two masks")


def _refuse_negative_int_power(name: str, a: Any, b: Any) -> None:
    if type(a) is Tensor and a.dtype.kind in "biu" and type(b) is int and b < 0:
        raise DTypeError(f"{name}: integers to negative integer powers are not allowed "
                         f"({a.dtype.name} tensor ** {b}); use a float tensor or exponent")
    if type(a) is Tensor and a.dtype.kind == "f" and a.dtype.itemsize == 2:
        checked_scalar(name, a.dtype, python_scalar(b), floats=True)  # PyTorch converts it


def _exact_in_float32(v: float) -> bool:
    """Whether the float ``v`` is a float32 value (NaN and infinities count)."""
    try:
        return v != v or struct.unpack("f", struct.pack("f", v))[0] == v
    except OverflowError:  # beyond float32's range
        return False


def _exact_in(dt: DType, v: Any) -> bool:
    """Whether the number ``v`` is a value of the 2-byte float ``dt`` (NaN counts)."""
    if v != v:
        return True
    try:
        if dt is bfloat16:  # a float32 whose low 16 bits are zero
            f32 = struct.unpack("f", struct.pack("f", v))[0]
            return f32 == v and struct.unpack("I", struct.pack("f", f32))[0] & 0xFFFF == 0
        return struct.unpack("e", struct.pack("e", v))[0] == v
    except (OverflowError, struct.error):  # beyond the dtype, or an int beyond 64 bits
        return False


def number_in_float32(a: Any, b: Any) -> Any:
    """``b`` as PyTorch's CPU loops for mul, div and the rounded divisions read one factor
    or divisor next to a float16/bfloat16 tensor ``a``: its own value in float32, not
    rounded to ``a``'s dtype first (bfloat16 408 // 409.0 is 0, not 408 // 408). ``b`` may
    be a number (on every device: PyTorch's CUDA kernels read it in float32 too) or a 0-d
    tensor of another dtype on the CPU. Returns a Python number or a float32 tensor, or
    None where ``b`` is read in ``a``'s dtype."""
    if type(a) is not Tensor or a.dtype.kind != "f" or a.dtype.itemsize != 2:
        return None
    b = python_scalar(b)
    if type(b) is float or type(b) is int:
        return b
    if (type(b) is Tensor and not b.ndim and a.ndim and b.dtype is not a.dtype
            and b.dtype.kind in "fiub" and a.device.type == "cpu"):
        return b if b.dtype is _FLOAT32 else cast(b, _FLOAT32)
    return None


def rounded_to(dt: DType, v: float) -> float:
    """The number ``v`` rounded to the 2-byte float ``dt`` through float32, as PyTorch
    converts a number to float16 or bfloat16 (to nearest, ties to even; inf beyond)."""
    try:
        f32 = struct.unpack("f", struct.pack("f", v))[0]
    except OverflowError:
        f32 = math.copysign(math.inf, v)
    if f32 != f32 or f32 in (math.inf, -math.inf):
        return f32
    if dt is bfloat16:  # the float32 bits, rounded to their upper 16
        bits = struct.unpack("I", struct.pack("f", f32))[0]
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        return struct.unpack("f", struct.pack("I", bits))[0]
    try:
        return struct.unpack("e", struct.pack("e", f32))[0]
    except OverflowError:
        return math.copysign(math.inf, f32)


def _binary(cls: type, name: str, true_div: bool = False, int_divisor: bool = False,
            check: Any = None, special: Any = None, opmath: bool = False,
            exact_number: bool = False):
    """The op of Function ``cls``. ``opmath`` (mul, div): a float16/bfloat16 tensor with
    a number that dtype can't hold exactly is computed in float32, as PyTorch keeps the
    number in float32 there (``1e10 * x`` of a float16 zero is 0, not inf * 0); its add
    and sub round the number to the tensor's dtype first, as NumPy does. ``exact_number``
    (pow): such a number after a float16 tensor takes the path of ``check``."""
    narrow = opmath or exact_number

    def op(input: Any, other: Any) -> Tensor:  # PyTorch's names: ``other=`` works
        a, b = input, other
        # fast path: same dtype and shape, or a float tensor with a Python float
        if type(a) is Tensor and not true_div and not int_divisor:
            tb = type(b)
            if tb is Tensor:
                if (a._data.dtype == b._data.dtype and a._data.shape == b._data.shape
                        and (check is None or a.dtype.kind != "b")):  # checks refuse bools
                    return cls.apply(a, b)
            elif tb is float or tb is int:
                dt = a.dtype
                if dt.kind == "f" and dt is not bfloat16 and (
                        not narrow or dt.itemsize != 2 or _exact_in(dt, b)):
                    return cls.apply(a, b)
        elif type(b) is Tensor and (type(a) is float or type(a) is int) and not int_divisor:
            dt = b.dtype  # a reflected Python number (``1.0 - x``): the same fast path
            if dt.kind == "f" and dt is not bfloat16 and (
                    not opmath or dt.itemsize != 2 or _exact_in(dt, a)):
                return cls.apply(a, b)
        if special is not None:  # cases the fast path never takes (bool operands)
            out = special(a, b)
            if out is not None:
                return out
        if true_div:  # integer operands become the default float before promotion
            a, b = python_scalar(a), python_scalar(b)
            if not (_is_float(a) or _is_float(b)):
                a = cast(a, _default_float()) if type(a) is Tensor else a
                b = cast(b, _default_float()) if type(b) is Tensor else b
        if check is not None:
            check(name, a, b)
        # PyTorch checks (not wraps) an integer exponent scalar
        a0, b0 = a, b
        a, b = promote_pair(a, b, checked="pow" if name == "pow" and type(a) is Tensor else "")
        if int_divisor and not (a if type(a) is Tensor else b).dtype.is_floating_point and (
                type(a) is not Tensor or a.numel() != 0):  # nothing to divide: no error
            _check_int_divisor(name, b)
        if name in _NO_BOOL and (a if type(a) is Tensor else b).dtype.kind == "b":
            raise DTypeError(f"{name}: not implemented for bool tensors; convert them with "
                             ".int() or .float() first")
        if opmath and (type(a) is not Tensor or type(b) is not Tensor):
            t, n = (a, b) if type(a) is Tensor else (b, a)
            if t.dtype.kind == "f" and t.dtype.itemsize == 2 and not _exact_in(t.dtype, n):
                return in_float32(lambda x: op(x, n) if t is a else op(n, x), t)
        elif opmath and type(b0) is Tensor and (b32 := number_in_float32(a0, b0)) is not None:
            return in_float32(lambda x: op(x, b32), a0)  # a 0-d factor of another dtype
        # bfloat16 with a Python float would become float32 on NumPy: use a 0-d tensor
        if type(b) is not Tensor:
            if a.dtype is bfloat16:
                b = a.new_full((), b)
        elif type(a) is not Tensor:
            if b.dtype is bfloat16:
                a = b.new_full((), a)
        elif a.array.shape != b.array.shape:
            broadcast_shapes(name, a.array.shape, b.array.shape)
        out = cls.apply(a, b)
        if out.grad_fn is not None and (a is not a0 or b is not b0):
            # an operand cast for the op: PyTorch's backward saves the original
            carry_saved(out, out, (a, a0), (b, b0))
        return out

    op.__name__ = name
    op.__doc__ = f"Elementwise ``{name}`` of ``a`` and ``b``, with broadcasting."
    return _autocast_hook(name, op)


_add = tensor_method("__add__")(_binary(Add, "add"))
_sub = tensor_method("__sub__")(_binary(Sub, "sub", check=_refuse_bool_sub))
mul = tensor_method("mul", "__mul__")(_binary(Mul, "mul", opmath=True))
multiply = mul
_div = tensor_method("__truediv__")(_binary(Div, "div", true_div=True, opmath=True))


def _scaled(op: str, input: Any, other: Any, alpha: Any) -> Any:
    """``alpha * other`` in the result dtype of ``input`` and ``other`` (PyTorch's rule)."""
    if alpha == 1 and not isinstance(alpha, bool):
        return other
    ta = input if type(input) is Tensor else other
    if type(ta) is not Tensor:
        raise TypeError(f"{op}: expected a Tensor argument, got {type(input).__name__} and "
                        f"{type(other).__name__}")
    a, b = promote_pair(input, other)
    dt = (a if type(a) is Tensor else b).dtype
    if isinstance(alpha, float) and not dt.is_floating_point:
        raise DTypeError(f"{op}: for integral input tensors, argument alpha must not be a "
                         f"floating point number (got alpha={alpha}, dtype {dt.name})")
    if isinstance(alpha, bool) and dt.name != "bool":
        raise DTypeError(f"{op}: boolean alpha only supported for boolean results, got "
                         f"dtype {dt.name}")
    if dt.name == "bool":  # bool + alpha * bool stays bool: alpha only switches `other` off
        return b if alpha or type(b) is not Tensor else b.new_zeros(b.shape, dtype="bool")
    checked_scalar(op, dt, alpha, floats=True)  # an alpha of 1e10 can't scale float16
    return mul(b, alpha) if type(b) is Tensor else b * alpha


def _two_byte_alpha(op: str, fn: Any, input: Any, other: Any, alpha: Any) -> Any:
    """``fn(input, alpha * other)`` of a float16/bfloat16 tensor and a tensor as PyTorch
    computes it: in float32, rounded once, with ``alpha`` rounded to the dtype on the CPU
    (its loop reads alpha in the dtype) and kept in float32 elsewhere (CUDA's opmath).
    None where this does not apply."""
    if (type(input) is not Tensor or type(other) is not Tensor or input.dtype.kind != "f"
            or input.dtype.itemsize != 2 or type(alpha) not in (int, float) or alpha == 1):
        return None
    a, b = promote_pair(input, other)
    dt = a.dtype
    if dt is not input.dtype:  # promoted beyond the 2-byte dtype
        return None
    checked_scalar(op, dt, alpha, floats=True)
    cpu = a.device.type == "cpu"
    if cpu:
        alpha = rounded_to(dt, alpha)
    out = in_float32(lambda x: fn(x, mul(cast(b, _FLOAT32), alpha)), a)
    if cpu:
        _fused_zero_signs(out, a, b, alpha if fn is _add else -alpha)
    return out


def _fused_zero_signs(out: Tensor, a: Tensor, b: Tensor, alpha: float) -> None:
    """Give the zeros of ``out = a + alpha * b`` (CPU, 2-byte floats) the sign of the exact
    value, as PyTorch's vectorised loop does with its fused multiply-add: unfused, a
    product that underflows to -0.0 plus +0.0 is +0.0, fused it is -0.0. The other values
    of the unfused float32 steps matched the fused loop's in every case measured (the
    rounding to 2 bytes hides the product's extra bits). PyTorch's scalar loop for the
    last elements of a length that is not a multiple of its vector rounds the product to
    the 2-byte dtype first; that is not modelled."""
    xp = out.device.xp
    y = out.array
    zero = y == 0
    if not bool(xp.any(zero)):
        return
    f64 = xp.float64
    exact = xp.broadcast_to(xp.astype(a.array, f64) + xp.astype(b.array, f64) * alpha,
                            y.shape)
    y[xp.logical_and(zero, exact < 0)] = -0.0
    y[xp.logical_and(zero, exact > 0)] = 0.0


@tensor_method()
def add(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``input + alpha * other``, elementwise with broadcasting.

    Args:
        input: a tensor or number.
        other: a tensor or number.
        alpha: a number multiplying ``other`` (an int for integer results).
    """
    out = _two_byte_alpha("add", _add, input, other, alpha)
    return _add(input, _scaled("add", input, other, alpha)) if out is None else out


@tensor_method("sub", "subtract")
def sub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``input - alpha * other``, elementwise with broadcasting (see :func:`add`)."""
    if alpha != 1:  # before alpha * other turns a bool operand into a number
        _refuse_bool_sub("sub", input, other)
    out = _two_byte_alpha("sub", _sub, input, other, alpha)
    return _sub(input, _scaled("sub", input, other, alpha)) if out is None else out


subtract = sub


@tensor_method("div", "divide", "true_divide")
def div(input: Any, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """``input / other``, elementwise with broadcasting.

    Args:
        input: the dividend, a tensor or number.
        other: the divisor, a tensor or number.
        rounding_mode: None (true division, always floating), ``"trunc"`` (rounded toward
            zero) or ``"floor"`` (rounded down); the rounded forms keep integer dtypes and
            have a zero gradient.
    """
    if rounding_mode is None:
        return _div(input, other)
    from .division import rounded_div

    return rounded_div("div", input, other, rounding_mode)


divide = true_divide = div
def refusing_backward(cls: type, op: str, what: str) -> type:
    """``cls`` whose backward raises: PyTorch's backward of ``op`` computes ``what`` with a
    bool operand (``b - 1``, ``-a``), which it refuses, so a gradient through it raises."""
    def backward(ctx, g):
        raise DTypeError(f"{op}: the gradient needs {what} of a bool tensor operand, which "
                         "PyTorch refuses; convert the bool operand with .float() first")

    return type(cls.__name__, (cls,), {"backward": backward})


_pow_bool_exponent = _binary(refusing_backward(Pow, "pow", "exponent - 1"), "pow",
                             check=_refuse_negative_int_power)


def _pow_special(a: Any, b: Any) -> Tensor | None:
    """``pow``'s bool cases: a bool exponent tensor (the base's gradient refuses, as
    PyTorch's) and a bool tensor to a Python bool (``x ** False`` is True); and bfloat16
    with a Python number, which becomes a 0-d tensor (see ``_PowNumberExponent``)."""
    a, b = python_scalar(a), python_scalar(b)  # NumPy scalars count as numbers
    if type(b) is Tensor and b.dtype.kind == "b":
        if type(a) is Tensor and a.dtype.kind != "b":
            return _pow_bool_exponent(a, b)
    elif type(b) is bool and type(a) is Tensor and a.dtype.kind == "b":
        return a.clone() if b else a.new_ones(a.shape)
    elif type(a) is Tensor and a.dtype is bfloat16 and type(b) in (int, float, bool):
        if b in (0.5, -0.5) or type(b) is bool:  # PyTorch's sqrt/rsqrt, through float32
            # (NaN at -inf); a bool keeps its own gradient rule (see Pow.backward)
            return in_float32(lambda t: _pow(t, b), a)
        return _pow_number_exponent(a, b)
    elif type(b) is Tensor and b.dtype is bfloat16 and type(a) in (int, float):
        return _pow_number_base(a, b)
    return None


_pow_number_exponent = _binary(_PowNumberExponent, "pow", check=_refuse_negative_int_power)
_pow_number_base = _binary(_PowNumberBase, "pow", check=_refuse_negative_int_power)


_pow = _binary(Pow, "pow", check=_refuse_negative_int_power, special=_pow_special,
               exact_number=True)
Tensor.__pow__ = _pow  # operators take no keywords: no wrapper on their path


@tensor_method()
def pow(input: Any, exponent: Any) -> Tensor:  # noqa: A001
    """``input ** exponent``, elementwise with broadcasting.

    Args:
        input: the base, a tensor or number.
        exponent: the exponent, a tensor or number (integers to negative integer powers
            are refused, as in PyTorch).
    """
    return _pow(input, exponent)


_maximum = _binary(Maximum, "maximum")
_minimum = _binary(Minimum, "minimum")


def _tensors_only(name: str, input: Any, other: Any) -> None:
    raise TypeError(f"{name}(): expected two Tensors, got {type(input).__name__} and "
                    f"{type(other).__name__}, as in PyTorch; use clamp_min/clamp_max with a "
                    "number")


@tensor_method()
def maximum(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise maximum of two tensors (NaN wins), with broadcasting."""
    if type(other) is not Tensor or type(input) is not Tensor:
        _tensors_only("maximum", input, other)
    return _maximum(input, other)


@tensor_method()
def minimum(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise minimum of two tensors (NaN wins), with broadcasting."""
    if type(other) is not Tensor or type(input) is not Tensor:
        _tensors_only("minimum", input, other)
    return _minimum(input, other)
class _NumberRemainder(Remainder):
    """``number % tensor``: PyTorch's forward, and its backward, which refuses."""

    def backward(ctx, g):
        raise no_derivative("remainder(number, tensor)", "only tensor % tensor and "
                            "tensor % number have a gradient: write vt.full_like(t, number) "
                            "% t, or .detach() the tensor")


_remainder = _binary(Remainder, "remainder", int_divisor=True)
_number_remainder = _binary(_NumberRemainder, "remainder", int_divisor=True)


@tensor_method("remainder", "__mod__")
def remainder(input: Any, other: Any) -> Tensor:
    """Python's (floor) remainder of ``input / other``, with the sign of ``other``;
    elementwise with broadcasting.

    Args:
        input: the dividend, a tensor or number (a number has no gradient through the
            divisor, as in PyTorch: its backward raises).
        other: the divisor, a tensor or number.
    """
    if type(input) is not Tensor:
        return _number_remainder(input, other)
    return _remainder(input, other)


fmod = tensor_method()(_binary(Fmod, "fmod", int_divisor=True))


Tensor.__radd__ = lambda self, other: _add(other, self)
Tensor.__rsub__ = lambda self, other: _sub(other, self)
Tensor.__rmul__ = lambda self, other: mul(other, self)
# number / tensor is PyTorch's reciprocal(tensor) * number: its values, and its backward
# keeps the reciprocal, not the divisor (which may then change in place)
Tensor.__rtruediv__ = lambda self, other: mul(reciprocal(self), other)
Tensor.__rpow__ = lambda self, other: pow(other, self)
Tensor.__rmod__ = lambda self, other: remainder(other, self)
Tensor.__neg__ = neg
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = abs


# -- comparisons (not differentiable) ------------------------------------------------------

class _Compare(Function):
    differentiable = False
    symbol = ""

    def forward(ctx, a, b):
        return _COMPARE[ctx.symbol](a, b)


_COMPARE = {
    "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
}


def _comparison(name: str, dunder: str):
    cls = type(name.capitalize(), (_Compare,), {"symbol": name})

    def op(input: Any, other: Any) -> Tensor:  # PyTorch's names: ``other=`` works
        a, b = input, python_scalar(other)
        if not isinstance(b, (Tensor, *Scalar)):
            return NotImplemented
        a, b = promote_pair(a, b)
        if type(a) is Tensor and type(b) is Tensor and a.array.shape != b.array.shape:
            broadcast_shapes(name, a.array.shape, b.array.shape)
        return cls.apply(a, b)

    op.__name__ = name
    op.__doc__ = f"Elementwise ``{name}`` comparison; returns a bool tensor."
    return tensor_method(name, dunder)(op)


lt = _comparison("lt", "__lt__")
le = _comparison("le", "__le__")
gt = _comparison("gt", "__gt__")
ge = _comparison("ge", "__ge__")
eq = _comparison("eq", "__eq__")
ne = _comparison("ne", "__ne__")
less, less_equal, greater, greater_equal, not_equal = lt, le, gt, ge, ne


# -- where --------------------------------------------------------------------------------

class Where(Function):
    pytorch_saves = ((), (0,), (0,))

    def forward(ctx, cond, a, b):
        xp = ctx.xp
        ctx.shapes = operand_shapes(a, b)
        ctx.save_for_backward(cond)
        return xp.where(cond, a, b)

    def backward(ctx, g):
        (cond,) = ctx.saved_tensors
        zero = g.new_zeros(())
        sa, sb = ctx.shapes
        _, na, nb = ctx.needs_input_grad
        return (None, sum_to(where(cond, g, zero), sa) if na else None,
                sum_to(where(cond, zero, g), sb) if nb else None)


def where(condition: Tensor, input: Any = None, other: Any = None) -> Any:
    """Pick ``input`` where ``condition`` is True, else ``other`` (broadcasting).

    ``where(condition)`` alone is ``nonzero(condition, as_tuple=True)``.

    Args:
        condition: a bool tensor.
        input: tensor or scalar taken where ``condition`` holds.
        other: tensor or scalar taken elsewhere.
    """
    if input is None and other is None:
        from .indexing import nonzero

        return nonzero(condition, as_tuple=True)
    if input is None or other is None:
        raise TypeError("where: pass both input and other, or neither (where(condition) is "
                        "nonzero(condition, as_tuple=True))")
    if type(condition) is not Tensor or condition.dtype.name != "bool":
        raise DTypeError(f"where: condition must be a bool tensor, got "
                         f"{getattr(condition, 'dtype', type(condition).__name__)}")
    if type(input) is not Tensor and type(other) is not Tensor:
        input = condition.new_full((), input, dtype=_scalar_dtype(input))
    a, b = promote_pair(input, other, checked="where")
    # the standard's where takes arrays only: scalars become 0-d arrays of the right dtype
    if type(a) is not Tensor:
        a = b.new_full((), a)
    if type(b) is not Tensor:
        b = a.new_full((), b)
    broadcast_shapes("where", condition.array.shape, a.array.shape, b.array.shape)
    return Where.apply(condition, a, b)


def _scalar_dtype(v: Any) -> DType:
    from ..dtypes import bool_, int64

    return bool_ if isinstance(v, bool) else int64 if isinstance(v, int) else _default_float()


Tensor.where = lambda self, condition, other: where(condition, self, other)

__all__ = [
    "cast", "neg", "negative", "reciprocal", "sqrt", "exp", "exp2", "log", "log2", "sin", "cos",
    "tanh", "sigmoid", "relu", "abs", "add", "sub", "subtract", "mul", "multiply", "div",
    "divide", "true_divide", "pow", "maximum", "minimum", "remainder", "fmod", "lt", "le", "gt",
    "ge", "eq", "ne", "less", "less_equal", "greater", "greater_equal", "not_equal", "where",
]
