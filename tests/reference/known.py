"""Where Volta and PyTorch are known to disagree: deliberate differences (kept, each
with its reason) and known-open bugs (temporary: each entry names its issue and goes
away when the fix lands).

Keys are signature patterns over ``kind: op[form] dtype``, as the campaign prints them;
``*`` matches any text, everything else matches itself. Keep them as narrow as the bug:
a pattern that covers a whole op hides the next bug in it.
"""

from __future__ import annotations

import re
from functools import cache

# Differences kept on purpose; docs/reference-net.md lists the same ones.
DELIBERATE: dict[str, str] = {
    "beyond PyTorch's kernels: *": (
        "PyTorch refused only because its CPU build lacks a kernel for the dtype "
        "(NotImplementedError, '... not implemented for 'Bool'/'Half''), not because the "
        "operation is invalid; Volta computing it is not a wrong answer (where PyTorch has "
        "no derivative, as for floor_divide, Volta's backward refuses too)"),
    "older PyTorch: *": (
        "the PyTorch at hand is older than 2.13 (the GPU machine has 2.11) and lacks a "
        "derivative that 2.13 has (aminmax); Volta follows 2.13"),
    "adapter lacks a dtype: *": (
        "the device has no such dtype (float64, float16 on an OpenGL adapter): Volta "
        "refuses with a DTypeError naming the missing feature, as the adapters issue asks, "
        "where PyTorch CPU computes it"),
    "result layout: *": (
        "PyTorch lays a fresh result out like its input (an elementwise op or clone of a "
        "transposed tensor is transposed), Volta makes every result contiguous; .view() then "
        "refuses on one side only, and .contiguous()/.reshape() copy on one side and alias on "
        "the other. The harness reruns PyTorch with its fresh results made contiguous and "
        "reports this kind only when that rerun agrees with Volta"),
    "sign of zero: *": (
        "signs of zero are not compared, and PyTorch's own are not stable (its softshrink "
        "gives -0.0 in the middle on its scalar path, +0.0 on its vectorized one); this kind "
        "marks a later op (1/x, rsqrt, atan2) that turns zeros of different signs into "
        "different values, when PyTorch, rerun on Volta's inputs, agrees with Volta"),
    "deprecated in PyTorch: *": (
        "PyTorch writes into an expanded tensor through index_put_ or masked_fill_ "
        "(t[mask] = value, t[idx] = value) only with a deprecation warning ('Please clone() "
        "the tensor before performing this operation'); Volta refuses, as PyTorch does for "
        "every other in-place write to an expanded tensor"),
    "grad value: F.softshrink[F] float": (
        "PyTorch's own softshrink gradient at a NaN input depends on the tensor's size: 1 "
        "on its scalar path (small tensors), 0 on its vectorized one; Volta gives 1 always "
        "(NaN passes the gradient through, as x - lambd does)"),
    "grad value: F.hardshrink[F] float": (
        "as softshrink: PyTorch's hardshrink gradient at a NaN input is 1 on its scalar path "
        "and 0 on its vectorized one; Volta gives 1 always (NaN passes, as x does)"),
    "grad value: F.hardtanh[F] *float*": (
        "as softshrink: PyTorch's hardtanh (and relu6) gradient at a NaN input is 1 on its "
        "scalar path (float64 tensors of under 8 elements, float32 under 16) and 0 on its "
        "vectorized one; Volta gives 1 always"),
    "grad value: F.relu6[F] *float*": "as hardtanh, which PyTorch's relu6 is",
    "grad value: F.softshrink[F] float16": "as softshrink in float32 and float64",
    "grad value: F.elu[F] *float*": (
        "as hardtanh: PyTorch's elu gradient at a NaN input is 1 (times scale) on its scalar "
        "path (tensors of a few elements) and NaN on its vectorized one; Volta gives 1"),
    "grad value: F.selu[F] *float*": "as elu, which PyTorch's selu is",
    "value: F.gelu[F] float": (
        "PyTorch's float32 gelu (erf form) at +inf is NaN on its vectorized path (tensors "
        "of 2 elements or more) and inf on its scalar path (one element) and in float64; "
        "Volta gives inf, the limit, always"),
    "grad value: F.hardswish[F] *float*": (
        "as hardtanh: PyTorch's hardswish gradient at a NaN input is 1 on its scalar path "
        "and NaN on its vectorized one; Volta gives 1"),
    "grad value: F.celu[F] *float*": "as elu, which PyTorch's celu is",
    "silent acceptance: F.mse_loss[F] *": (
        "PyTorch's CUDA mse_loss backward raises for a target of another dtype ('Found dtype "
        "Double but expected Float'), its CPU one computes; Volta computes on every device"),
    "silent acceptance: F.huber_loss[F] *": (
        "PyTorch's huber_loss forward accepts a target of another dtype, and its backward "
        "then raises ('Found dtype Double but expected Float'); Volta computes with the "
        "target cast to the input's dtype, as that forward does, and gives its gradient"),
    "grad value: logit[*] float": (
        "PyTorch's logit gradient at -0.0 is +inf on its scalar path and -inf on its "
        "vectorized one (float64 tensors of 16 or more elements, float32 of 32 or more); "
        "Volta gives +inf always, the gradient at +0.0"),
    "undefined cast: *": (
        "a float -> integer cast of NaN, inf or a number out of the dtype's range is "
        "undefined in C++: PyTorch CPU gives the dtype's lowest value (x86's 'integer "
        "indefinite'), a GPU saturates (WGSL's conversion: inf -> the highest value); the "
        "harness reports this kind only where every differing element is such a value"),
    "grad value: logit[*] bfloat16": (
        "as logit in float32: PyTorch's gradient at -0.0 is +inf on its scalar path and -inf "
        "on its vectorized one (2-byte floats: 64 or more elements); Volta gives +inf"),
    "grad value: logit[*] float16": "as logit in bfloat16",
    "integer gradient arithmetic: atan2[*] *": (
        "PyTorch's atan2 backward computes with an integer operand in its own dtype: "
        "other * other wraps in int8 ((-128)^2 is 0), -self wraps in uint8 (-1 is 255), "
        "so the float operand's gradient is wrong; Volta gives the true gradient. The "
        "harness reports this kind only for a gradient mismatch blamed on an atan2 that "
        "reads an integer tensor"),
    "view is self: *": (
        "a view op that changes nothing returns the tensor itself in Volta (documented in "
        "tensors-and-autograd.md), a new view object in PyTorch: a statement that then "
        "meets one tensor under two names (t[mask] = its own no-op view, when empty) is "
        "refused as a write of a tensor into itself, which PyTorch's distinct view allows"),
    "summation order: *": (
        "PyTorch does not specify the order in which a sum or mean adds its terms: where "
        "huge terms cancel, its CPU cascade sum keeps the small ones and NumPy's pairwise "
        "sum absorbs them. Reported only where the results differ by at most the dtype's "
        "tolerance times the largest input magnitude (times the count for a sum)"),
    "subnormal divisor: *": (
        "PyTorch's vectorized fmod/remainder (16 or more float32 elements) returns NaN for a "
        "subnormal divisor, its scalar path the exact remainder, as Volta always does; "
        "reported only where every differing element is PyTorch's NaN at a subnormal value "
        "of a tensor the statement reads"),
    "integer gradient arithmetic: pow[*] *": (
        "PyTorch's pow backward computes exponent * self ** (exponent - 1) with an integer "
        "exponent tensor in its own dtype: exponent - 1 wraps in int8 (-128 - 1 is 127), so "
        "the base's gradient is wrong (inf for 3 ** -128); Volta gives the true gradient. "
        "Reported only for a gradient mismatch blamed on a pow that reads an integer tensor"),
    "grad value: logical_not_[m] *": (
        "PyTorch's logical_not_ on a tensor that requires grad leaves its gradient flowing "
        "through the op before, as if the tensor were unchanged; the result is a constant "
        "(0/1), so Volta's gradient through it is zero"),
    "grad value: asin[m] bfloat16": (
        "seen only after sinc near 0 in bfloat16 (asin of its 1.0): PyTorch's bfloat16 sinc "
        "derivative (pi x cos(pi x) - sin(pi x)) / (pi x^2) cancels to exactly 0 at "
        "x = 0.0047, and 0 times asin's infinite derivative at 1 is NaN; Volta's derivative "
        "there is the true -0.015, giving -inf"),
    "volta raised AutogradError: logical_not_[m] *": (
        "PyTorch's logical_not_ skips autograd's check on a leaf (or a view of one) that "
        "requires grad, not being differentiable, and overwrites the leaf; Volta refuses it "
        "as PyTorch itself refuses every other in-place op there (sign_, gt_, "
        "bitwise_not_)"),
}

# Open bugs found by the net; the value names the issue that tracks the fix. Taken from
# the CI programs (seeds 0-2999 on cpu, 0-299 on wgpu) on the code of 2026-11-26.
# Delete an entry when its fix lands; the CI test then holds the fix in place.
KNOWN_OPEN: dict[str, str] = {}


@cache
def _regex(pattern: str) -> re.Pattern:
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")))


def matches(signature: str, pattern: str) -> bool:
    """Whether ``signature`` matches ``pattern`` (``*`` is the only wildcard)."""
    return _regex(pattern).fullmatch(signature) is not None


def classify(signature: str) -> tuple[str, str]:
    """("deliberate", reason), ("known", issue) or ("new", "") for a signature."""
    for pattern, reason in DELIBERATE.items():
        if matches(signature, pattern):
            return "deliberate", reason
    for pattern, issue in KNOWN_OPEN.items():
        if matches(signature, pattern):
            return "known", issue
    return "new", ""
