"""Activation checkpointing (``torch.utils.checkpoint``): run a piece of a model without
keeping its activations, and run it again during backward to get its gradients.

``checkpoint(fn, *args)`` computes ``fn(*args)`` with gradients off, keeps only the inputs,
and in backward re-runs ``fn`` with gradients on (with the random generators as they were,
so dropout draws the same masks) and backpropagates through that second run: the
gradients of the inputs are returned, those of the parameters ``fn`` uses go to their
``.grad`` as usual. Memory is traded for one more forward pass.

``use_reentrant=True`` (PyTorch's default, which it asks to pass explicitly) records the
checkpoint only when an input requires grad, as PyTorch's reentrant variant (parameters
then get no gradient, with PyTorch's warning); ``use_reentrant=False`` records it always,
so a checkpointed first layer (inputs without grad) still trains its parameters, and
takes keyword arguments for ``fn``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from typing import Any

from ..autograd.engine import backward as _backward
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad
from ..autograd.grad_mode import state as _grad_state
from ..tensor import Tensor


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx, run, preserve_rng, kwargs, anchor, *args):
        from ..creation import generator_states

        ctx.run, ctx.kwargs = run, kwargs
        ctx.rng = generator_states() if preserve_rng else None
        ctx.tensor_pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.others = args
        ctx.save_for_backward(*[args[i] for i in ctx.tensor_pos])
        return run(*args, **kwargs)

    @staticmethod
    def backward(ctx, *grads):
        from ..creation import generator_states, set_generator_states

        saved = ctx.saved_tensors
        args = list(ctx.others)
        inputs = []
        for i, t in zip(ctx.tensor_pos, saved):
            d = t.detach()
            d.requires_grad_(t.requires_grad)
            args[i] = d
            inputs.append(d)
        now = None
        if ctx.rng is not None:  # replay the forward's draws (dropout masks), then go on
            now = generator_states()
            set_generator_states(ctx.rng)
        try:
            with enable_grad():
                out = ctx.run(*args, **ctx.kwargs)
        finally:
            if now is not None:
                set_generator_states(now)
        outs = out if isinstance(out, tuple) else (out,)
        pairs = [(o, g) for o, g in zip(outs, grads)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if pairs:
            _backward([o for o, _ in pairs], [g for _, g in pairs])
        grads_in = [None] * len(args)
        for i, d in zip(ctx.tensor_pos, inputs):
            grads_in[i] = d.grad if d.requires_grad else None
        return (None, None, None, None, *grads_in)


def checkpoint(function: Callable, *args: Any, use_reentrant: bool | None = None,
               preserve_rng_state: bool = True, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)`` without keeping its activations; recomputed in
    backward.

    Args:
        function: the piece of the model to run (a module or any function of tensors).
        args: its arguments.
        use_reentrant: see the module doc; None warns as PyTorch does and means True.
        preserve_rng_state: replay the random generators in the recomputation (default
            True), so that dropout matches the forward's.
        kwargs: keyword arguments of ``function`` (only with ``use_reentrant=False``).
    """
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed "
                      "explicitly; use_reentrant=False is recommended (Volta uses True "
                      "when it is not given, as PyTorch does)", stacklevel=2)
        use_reentrant = True
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if not _grad_state.enabled:
        return function(*args, **kwargs)
    anchor = None
    if use_reentrant:
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be "
                          "None", stacklevel=2)
    else:  # always recorded (an input that requires grad): the parameters inside get
        # their gradients even where no argument requires grad
        from ..creation import empty

        device = next((a.device for a in args if isinstance(a, Tensor)), None)
        anchor = empty(0, device=device, requires_grad=True)
    return _Checkpoint.apply(function, preserve_rng_state, kwargs, anchor, *args)


def checkpoint_sequential(functions: Any, segments: int, input: Tensor,
                          use_reentrant: bool | None = None, **kwargs: Any) -> Any:
    """Run a ``Sequential`` (or a list of modules) in ``segments`` checkpointed chunks;
    the last chunk runs normally, as PyTorch's."""
    if isinstance(functions, Iterable) and not hasattr(functions, "forward"):
        functions = list(functions)
    else:
        functions = list(functions.children())

    def run(start: int, end: int) -> Callable:
        def forward(x: Any) -> Any:
            for f in functions[start:end + 1]:
                x = f(x)
            return x
        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, **kwargs)
    return run(end + 1, len(functions) - 1)(input)


__all__ = ["checkpoint", "checkpoint_sequential"]
