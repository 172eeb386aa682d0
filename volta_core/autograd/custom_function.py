"""PyTorch-style custom Functions: ``forward`` and ``backward`` as static methods on Tensors.

A subclass of :class:`~volta_core.autograd.Function` whose ``forward`` is a
``@staticmethod`` is written as for PyTorch::

    class Exp(vt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

``forward`` runs on Tensors with gradients off and may return one Tensor or a tuple;
``backward`` receives one gradient per output (zeros for outputs that got none, unless
``ctx.set_materialize_grads(False)``) and returns one per input (None for inputs that need
none, and for non-Tensor arguments). ``ctx`` offers ``save_for_backward``,
``saved_tensors`` (refused once a saved tensor was modified in place),
``needs_input_grad``, ``mark_non_differentiable``, ``set_materialize_grads`` and
``mark_dirty`` (an input modified in place and returned is the output: the same tensor,
its history this Function's node), and keeps any attribute. The PyTorch 2 form,
``forward(*args)`` plus ``setup_context(ctx, inputs, output)``, works too. Backward is
itself differentiable (``create_graph``) when written with differentiable Tensor ops.

The op is recorded as one node of Volta's graph. Several differentiable outputs are
packed, flattened, into one array that the node produces; each returned output is a view
of it, so that the engine hands the node all outputs' gradients at once (one of several
outputs that got no gradient would arrive as zeros; under ``set_materialize_grads(False)``
each output passes through a marker node that notes the gradient it got, so those
arrive as None, as in PyTorch).
"""

from __future__ import annotations

import inspect
from typing import Any

from ..errors import AutogradError
from ..tensor import Tensor
from .function import Function, rebind_output
from .grad_mode import no_grad
from .grad_mode import state as _grad_state


class FunctionCtx:
    """The ``ctx`` a PyTorch-style ``forward`` and ``backward`` receive."""

    def __init__(self, needs_input_grad: tuple) -> None:
        self.needs_input_grad = needs_input_grad
        self.materialize_grads = True
        self._got: set[int] | None = None  # outputs that got a gradient (no materializing)
        self._saved: tuple = ()
        self._versions: tuple = ()
        self._non_differentiable: set[int] = set()
        self._dirty: set[int] = set()

    def save_for_backward(self, *tensors: Any) -> None:
        """Keep tensors (inputs, outputs, or others; None allowed) for backward."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save tensors, but argument "
                                f"{tensors.index(t)} is of type {type(t).__name__}")
        self._saved = tensors
        self._versions = tuple(None if t is None else t._version[0] for t in tensors)

    @property
    def saved_tensors(self) -> tuple:
        for t, v in zip(self._saved, self._versions):
            if t is not None and t._version[0] != v:
                raise AutogradError(
                    f"one of the variables needed for gradient computation has been "
                    f"modified by an inplace operation: [{t.dtype.name} {list(t.shape)}] is "
                    f"at version {t._version[0]}; expected version {v} instead")
        return self._saved

    def mark_non_differentiable(self, *outputs: Tensor) -> None:
        """Outputs that get no gradient (indices, masks)."""
        self._non_differentiable.update(id(t) for t in outputs)

    def set_materialize_grads(self, value: bool) -> None:
        """False: backward receives None (not zeros) for outputs that got no gradient."""
        self.materialize_grads = bool(value)

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Inputs that ``forward`` modified in place (and returns): each returned one is
        the input tensor itself, its history now this Function's node."""
        self._dirty.update(id(t) for t in tensors)


class _GotGrad(Function):
    """Identity on one output of a Function under ``set_materialize_grads(False)``: its
    backward notes that the output got a gradient."""

    def forward(ctx, x, info=None):
        ctx.info = info
        return ctx.xp.asarray(x, copy=True)

    def backward(ctx, g):
        user_ctx, index = ctx.info
        user_ctx._got.add(index)
        return g


class _CustomNode(Function):
    """The graph node of a PyTorch-style Function call: produces the precomputed output
    array (the packed outputs) and runs the user's backward."""

    def forward(ctx, *arrays, out=None, info=None):
        ctx.info = info
        return out

    def backward(ctx, g):
        cls, user_ctx, layout, n_args, tensor_pos, outs = ctx.info
        got, user_ctx._got = user_ctx._got, (None if user_ctx._got is None else set())
        grads = []
        for i, (entry, o) in enumerate(zip(layout, outs)):
            if got is not None and i not in got:  # no gradient, not materialized
                grads.append(None)
            elif entry is not None and g is not None:  # its part of the packed gradient
                start, size, shape = entry
                grads.append((g if len(layout) == 1 else g[start:start + size]).reshape(shape))
            elif user_ctx.materialize_grads and isinstance(o, Tensor):
                grads.append(o.detach().new_zeros(o.shape))
            else:
                grads.append(None)
        out = cls.backward(user_ctx, *grads)
        out = out if isinstance(out, tuple) else (out,)
        if len(out) < n_args:
            out = out + (None,) * (n_args - len(out))
        if len(out) > n_args and any(o is not None for o in out[n_args:]):
            raise AutogradError(f"function {cls.__name__}Backward returned an incorrect "
                                f"number of gradients (expected {n_args}, got {len(out)})")
        return tuple(_checked(cls, out[p], p) for p in tensor_pos)


def _checked(cls: type, g: Any, position: int) -> Any:
    if g is not None and not isinstance(g, Tensor):
        raise TypeError(f"{cls.__name__}.backward returned a {type(g).__name__} as the "
                        f"gradient of argument {position}; expected a Tensor or None")
    return g


def _check_dirty(cls: type, ctx: FunctionCtx, args: tuple, outs: tuple) -> None:
    """PyTorch's rules for ``mark_dirty``: only inputs, returned as outputs, and no leaf
    that requires grad while grad is recorded."""
    inputs = {id(a): a for a in args if isinstance(a, Tensor)}
    returned = {id(o) for o in outs}
    for key in ctx._dirty:
        t = inputs.get(key)
        if t is None:
            raise AutogradError(f"{cls.__name__}: mark_dirty only accepts input tensors")
        if key not in returned:
            raise AutogradError(f"{cls.__name__}: an input marked dirty with mark_dirty "
                                "must be returned as an output of forward")
        if t.requires_grad and t.grad_fn is None and _grad_state.enabled:
            raise AutogradError("a leaf Variable that requires grad is being used in an "
                                f"in-place operation ({cls.__name__} marked it dirty)")


def apply(cls: type, args: tuple, kwargs: dict) -> Any:
    """``cls.apply(*args, **kwargs)`` for a PyTorch-style custom Function."""
    needs = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
    ctx = FunctionCtx(needs)
    setup = inspect.getattr_static(cls, "setup_context", None)
    with no_grad():
        if isinstance(setup, staticmethod):  # forward(*args) + setup_context(ctx, ...)
            out = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, args, out)
        else:
            out = cls.forward(ctx, *args, **kwargs)
    outs = out if isinstance(out, tuple) else (out,)
    if ctx._dirty:
        _check_dirty(cls, ctx, args, outs)
    if not (_grad_state.enabled and any(needs)):
        return out
    diff = [i for i, o in enumerate(outs) if isinstance(o, Tensor)
            and o.dtype.is_floating_point and id(o) not in ctx._non_differentiable]
    if not diff:
        return out
    first = outs[diff[0]]
    if any(outs[i].dtype is not first.dtype or outs[i].device is not first.device
           for i in diff):
        raise AutogradError(f"{cls.__name__}: differentiable outputs of several dtypes or "
                            "devices are not supported; cast them to one dtype")
    tensor_pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    layout: list = [None] * len(outs)
    if len(diff) == 1:
        o = outs[diff[0]]
        arr = o.array
        if id(o) not in ctx._dirty and any(o is a for a in args):
            arr = o.device.xp.asarray(arr, copy=True)  # an input returned as is: a copy
        layout[diff[0]] = (0, o.numel(), tuple(o.shape))
    else:
        xp = first.device.xp
        start = 0
        parts = []
        for i in diff:
            o = outs[i]
            layout[i] = (start, o.numel(), tuple(o.shape))
            parts.append(xp.reshape(o.array, (-1,)))
            start += o.numel()
        arr = xp.concat(parts)
    info = (cls, ctx, layout, len(args), tensor_pos, outs)
    packed = _CustomNode.apply(*[args[p] for p in tensor_pos], out=arr, info=info)
    results = list(outs)
    for i in diff:
        start, size, shape = layout[i]
        results[i] = packed if len(diff) == 1 else packed[start:start + size].reshape(shape)
    if not ctx.materialize_grads and len(diff) > 1:
        ctx._got = set()
        for i in diff:
            results[i] = _GotGrad.apply(results[i], info=(ctx, i))
    for i in diff:
        if id(outs[i]) in ctx._dirty:  # the input itself, its history now this node's
            from ..views import assign
            new, results[i] = results[i], outs[i]
            assign(outs[i], new, True)
            outs[i]._version[0] += 1  # as PyTorch: marking it dirty counts as a write
            rebind_output(new.grad_fn, new._version, outs[i]._version)
    # saved outputs are the returned ones (connected to the graph, for double backward)
    mapping = {id(outs[i]): results[i] for i in diff}
    if ctx._saved:
        ctx._saved = tuple(mapping.get(id(t), t) for t in ctx._saved)
        ctx._versions = tuple(None if t is None else t._version[0] for t in ctx._saved)
    return tuple(results) if isinstance(out, tuple) else results[0]
