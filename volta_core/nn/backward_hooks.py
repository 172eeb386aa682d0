"""Module backward hooks: ``register_full_backward_hook`` and
``register_full_backward_pre_hook``, as PyTorch runs them.

A module with such hooks gets two identity nodes around its ``forward``: one on the tensor
inputs that require grad, one on the tensor outputs (each a single node, so it receives
all its tensors' gradients at once). In backward the output node runs first: the pre-hooks
see ``grad_output`` (and may replace it); then the input node runs the full hooks with
``(module, grad_input, grad_output)``, which may replace ``grad_input``. Where no input
requires grad, the full hooks run at the output node with ``grad_input`` all None.
"""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..tensor import Tensor


class _Identity(Function):
    """The tensors as they are; backward hands their gradients to ``state``."""

    @staticmethod
    def forward(ctx: Any, state: Any, side: str, *tensors: Tensor) -> tuple:
        ctx.state, ctx.side = state, side
        return tuple(tensors)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple:
        handle = ctx.state.on_output if ctx.side == "output" else ctx.state.on_input
        return (None, None, *handle(tuple(grads)))


class _State:
    """One call's hooks and the gradients they have seen so far."""

    def __init__(self, module: Any, tensor_inputs: list[Tensor]) -> None:
        self.module, self.tensor_inputs = module, tensor_inputs
        self.grad_output: tuple = ()

    def on_output(self, grads: tuple) -> tuple:
        for hook in list(self.module._backward_pre_hooks.values()):
            new = hook(self.module, grads)
            if new is not None:
                grads = tuple(new) if isinstance(new, (tuple, list)) else (new,)
        self.grad_output = grads
        if not any(t.requires_grad for t in self.tensor_inputs):  # no input node runs
            self._run_full((None,) * len(self.tensor_inputs))
        return grads

    def on_input(self, grads: tuple) -> tuple:
        # an entry per tensor argument: zeros for one that needs no gradient (PyTorch's)
        it = iter(grads)
        full = tuple(next(it) if t.requires_grad else t.new_zeros(t.shape)
                     for t in self.tensor_inputs)
        full = self._run_full(full)
        return tuple(g for g, t in zip(full, self.tensor_inputs) if t.requires_grad)

    def _run_full(self, grad_input: tuple) -> tuple:
        for hook in list(self.module._backward_hooks.values()):
            new = hook(self.module, grad_input, self.grad_output)
            if new is not None:
                grad_input = tuple(new) if isinstance(new, (tuple, list)) else (new,)
        return grad_input


def _swap(values: list, positions: list, new: tuple) -> None:
    for p, v in zip(positions, new):
        values[p] = v


def call_with_backward_hooks(module: Any, forward: Any, args: tuple, kwargs: dict) -> Any:
    """``forward(*args, **kwargs)`` with ``module``'s backward hooks attached around it."""
    from ..autograd.grad_mode import is_grad_enabled

    if not is_grad_enabled():
        return forward(*args, **kwargs)
    args = list(args)
    tracked = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
    state = _State(module, [a for a in args if isinstance(a, Tensor)])
    if tracked:
        _swap(args, tracked, _Identity.apply(state, "input", *[args[i] for i in tracked]))
    out = forward(*args, **kwargs)
    single = isinstance(out, Tensor)
    outs = [out] if single else list(out) if isinstance(out, (tuple, list)) else None
    if outs is None:
        return out
    grads = [i for i, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
    if not grads:
        return out
    _swap(outs, grads, _Identity.apply(state, "output", *[outs[i] for i in grads]))
    if single:
        return outs[0]
    return type(out)(*outs) if hasattr(out, "_fields") else type(out)(outs)
