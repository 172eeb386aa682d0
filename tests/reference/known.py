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
        "operation is invalid; Volta computing it is not a wrong answer"),
    "adapter lacks a dtype: *": (
        "the device has no such dtype (float64, float16 on an OpenGL adapter): Volta "
        "refuses with a DTypeError naming the missing feature, as the adapters issue asks, "
        "where PyTorch CPU computes it"),
    "saves less than PyTorch: *": (
        "PyTorch's backward refused because a tensor it had saved (often an op's output, "
        "as max/amax/tanh save theirs) was modified in place; Volta's backward for that op "
        "saves something else or nothing, and its own version check guards what it does "
        "save, so its gradient is right (the views issue asks backward to save only what "
        "it needs)"),
    "grad value: F.softshrink[F] float": (
        "PyTorch's own softshrink gradient at a NaN input depends on the tensor's size: 1 "
        "on its scalar path (small tensors), 0 on its vectorized one; Volta gives 1 always "
        "(NaN passes the gradient through, as x - lambd does)"),
}

# Open bugs found by the net; the value names the issue that tracks the fix. Taken from
# the CI programs (seeds 0-2999 on cpu, 0-299 on wgpu) on the code of 2026-11-26.
# Delete an entry when its fix lands; the CI test then holds the fix in place.
KNOWN_OPEN: dict[str, str] = {
    # issue 14
    'dtype: addcmul/addcdiv[addcmul] int': 'issue 14',
    'dtype: sum[m] int': 'issue 14',
    'grad value: F.hardsigmoid[F] float': 'issue 14',
    'grad value: logit[f] float': 'issue 14',
    'grad value: logit[m] float': 'issue 14',
    'grad value: sinh[m] float': 'issue 14',
    'grad value: true_divide[kw] bfloat16': 'issue 14',
    'grad value: var[f] float': 'issue 14',
    'grad value: var[m] float': 'issue 14',
    'invalid tie order: median[f] float': 'issue 14',
    'invalid tie order: median[m] float': 'issue 14',
    'silent acceptance: F.relu6[F] bool': 'issue 14',
    'silent acceptance: addcmul/addcdiv[addcdiv] float': 'issue 14',
    'silent acceptance: addcmul/addcdiv[addcmul] bool': 'issue 14',
    'silent acceptance: addcmul/addcdiv[addcmul] float': 'issue 14',
    'silent acceptance: aminmax[f] bfloat16': 'issue 14',
    'silent acceptance: aminmax[m] float': 'issue 14',
    'silent acceptance: clamp[clip] bfloat16': 'issue 14',
    'silent acceptance: clamp[clip] int': 'issue 14',
    'silent acceptance: clamp[f] float': 'issue 14',
    'silent acceptance: matmul[@T] bool': 'issue 14',
    'silent acceptance: maximum[f] uint8': 'issue 14',
    'silent acceptance: maximum[kw] float': 'issue 14',
    'silent acceptance: maximum[m] bool': 'issue 14',
    'silent acceptance: minimum[m] float': 'issue 14',
    'silent acceptance: permute[m] float': 'issue 14',
    'silent acceptance: permute[movedim] float': 'issue 14',
    'silent acceptance: pow[f] float': 'issue 14',
    'silent acceptance: pow[kw] float': 'issue 14',
    'silent acceptance: pow[kw] int': 'issue 14',
    'silent acceptance: pow[m] float': 'issue 14',
    'silent acceptance: prod[f] float': 'issue 14',
    'silent acceptance: prod[m] bool': 'issue 14',
    'silent acceptance: prod[m] float': 'issue 14',
    'silent acceptance: prod[m] int': 'issue 14',
    'silent acceptance: setitem[setitem] float': 'issue 14',
    'silent acceptance: sort[argsort] bfloat16': 'issue 14',
    'value (aliased): cos_[m] float': 'issue 14',
    'value (aliased): frac_[m] float': 'issue 14',
    'value (aliased): lerp_[m] float': 'issue 14',
    'value (aliased): rsqrt_[m] float': 'issue 14',
    'value: F.gelu[F] float': 'issue 14',
    'value: median[f] float': 'issue 14',
    'value: sign[f] float': 'issue 14',
    'volta raised DTypeError: F.hardtanh[F] uint8': 'issue 14',
    'volta raised DTypeError: lerp[f] float': 'issue 14',
    'volta raised DTypeError: pow[op] bool': 'issue 14',
    'volta raised DTypeError: softmax[m.log_softmax] int': 'issue 14',
    'volta raised DTypeError: softmax[vt.log_softmax] bool': 'issue 14',
    'volta raised DivisionByZeroError: fmod[f] int': 'issue 14',
    'volta raised IndexOutOfRangeError: gather/index_select[take_along_dim] int': 'issue 14',
    'volta raised ShapeError: topk[m] float': 'issue 14',
    'volta raised ShapeError: topk[m] int': 'issue 14',
    'volta raised TypeError: copysign[kw] float': 'issue 14',
    'volta raised TypeError: pow[rop] bool': 'issue 14',
}


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
