"""Higher-level autograd (``vt.autograd.functional``, as ``torch.autograd.functional``):
``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``vhp`` and ``hvp`` of a function of Tensors.

Everything is built on reverse mode (``autograd.grad``): ``jvp`` by the double-vjp trick
(the vjp is linear in its cotangent, so differentiating it with respect to the cotangent
gives the jvp), ``jacobian`` one vjp per output element, ``hessian`` the jacobian of the
gradient. ``inputs`` and the function's outputs may be one Tensor or a tuple of them; the
results follow the same structure, as PyTorch's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import AutogradError
from ..tensor import Tensor
from .engine import grad
from .grad_mode import enable_grad


def _as_tuple(x: Any, what: str, fn: str) -> tuple[bool, tuple]:
    if isinstance(x, Tensor):
        return False, (x,)
    if isinstance(x, (tuple, list)) and all(isinstance(t, Tensor) for t in x):
        return True, tuple(x)
    raise TypeError(f"The {what} given to {fn} must be either a Tensor or a tuple of "
                    f"Tensors but the given {what} has type {type(x).__name__}")


def _tangents(v: Any, xs: tuple, fn: str) -> tuple:
    """``v`` as a tuple shaped as the inputs; omitted only for one-element inputs (ones)."""
    if v is not None:
        return _as_tuple(v, "v", fn)[1]
    if any(x.numel() != 1 for x in xs):
        raise RuntimeError("The vector v can only be None if the input to the "
                           "user-provided function is a single Tensor with a single element.")
    return tuple(x.detach().new_ones(x.shape) for x in xs)


def _grad_inputs(inputs: tuple, create_graph: bool) -> tuple:
    """Inputs that require grad, detached from any outer graph unless ``create_graph``."""
    return tuple(t if create_graph and t.requires_grad else t.detach().requires_grad_()
                 for t in inputs)


def _zeros_for_none(grads: tuple, like: tuple, strict: bool, fn: str) -> tuple:
    out = []
    for g, t in zip(grads, like):
        if g is None:
            if strict:
                raise AutogradError(f"{fn}: the output of the function is independent of "
                                    "an input, which strict=True refuses")
            g = t.detach().new_zeros(t.shape)
        out.append(g)
    return tuple(out)


def _detached(ts: tuple, create_graph: bool) -> tuple:
    return ts if create_graph else tuple(t.detach() for t in ts)


def vjp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(inputs), v^T J)``: the vector-Jacobian product at ``inputs``.

    Args:
        func: a function of the inputs returning a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of Tensors.
        v: the cotangent, shaped as the output(s); may be omitted for one-element outputs.
        create_graph: record the computation, so the results can be differentiated.
        strict: raise when an output does not depend on an input (else zeros).
    """
    tuple_in, xs = _as_tuple(inputs, "inputs", "vjp")
    with enable_grad():
        xs = _grad_inputs(xs, create_graph)
        out = func(*xs)
        tuple_out, outs = _as_tuple(out, "outputs of the user-provided function", "vjp")
        if v is None:
            if any(o.numel() != 1 for o in outs):
                raise RuntimeError("The vector v can only be None if the user-provided "
                                   "function returns a single Tensor with a single element.")
            vs = None
        else:
            _, vs = _as_tuple(v, "v", "vjp")
        grads = grad(outs, xs, grad_outputs=vs, create_graph=create_graph, allow_unused=True)
    grads = _zeros_for_none(grads, xs, strict, "vjp")
    outs, grads = _detached(outs, create_graph), _detached(grads, create_graph)
    return (outs if tuple_out else outs[0]), (grads if tuple_in else grads[0])


def jvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(inputs), J v)``: the Jacobian-vector product at ``inputs`` (by the
    double-vjp trick; ``v`` shaped as the inputs, omitted for one-element inputs)."""
    tuple_in, xs = _as_tuple(inputs, "inputs", "jvp")
    vs = _tangents(v, xs, "jvp")
    with enable_grad():
        xs = _grad_inputs(xs, create_graph)
        out = func(*xs)
        tuple_out, outs = _as_tuple(out, "outputs of the user-provided function", "jvp")
        # u is a dummy cotangent: vjp(u) = J^T u is linear in u, and d(J^T u . v)/du = J v
        us = tuple(o.detach().new_zeros(o.shape).requires_grad_() for o in outs)
        gs = grad(outs, xs, grad_outputs=us, create_graph=True, allow_unused=True)
        pairs = [(g, w) for g, w in zip(gs, vs) if g is not None]
        if not pairs:
            jv = (None,) * len(outs)
        else:
            jv = grad([g for g, _ in pairs], us, grad_outputs=[w for _, w in pairs],
                      create_graph=create_graph, allow_unused=True)
    jv = _zeros_for_none(jv, outs, strict, "jvp")
    outs, jv = _detached(outs, create_graph), _detached(jv, create_graph)
    return (outs if tuple_out else outs[0]), (jv if tuple_out else jv[0])


def jacobian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian of ``func`` at ``inputs``: for one input and one output a Tensor of
    shape ``output.shape + input.shape``; tuples of them for tuples (outputs first).
    ``vectorize`` and ``strategy`` are accepted for PyTorch's signature (one vjp per
    output element is computed either way)."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    tuple_in, xs = _as_tuple(inputs, "inputs", "jacobian")
    with enable_grad():
        xs = _grad_inputs(xs, create_graph)
        out = func(*xs)
        tuple_out, outs = _as_tuple(out, "outputs of the user-provided function", "jacobian")
        from ..ops.joining import stack

        rows = []  # per output: per input, the Jacobian block
        for o in outs:
            flat = o.reshape(-1)
            per_input: list[list] = [[] for _ in xs]
            for k in range(flat.shape[0]):
                gs = grad(flat[k], xs, retain_graph=True, create_graph=create_graph,
                          allow_unused=True)
                gs = _zeros_for_none(gs, xs, strict, "jacobian")
                for j, g in enumerate(gs):
                    per_input[j].append(g)
            blocks = []
            for j, x in enumerate(xs):
                if per_input[j]:
                    b = stack(per_input[j]).reshape(tuple(o.shape) + tuple(x.shape))
                else:  # an empty output
                    b = x.detach().new_zeros(tuple(o.shape) + tuple(x.shape))
                blocks.append(b if create_graph else b.detach())
            rows.append(tuple(blocks))
    if not tuple_out and not tuple_in:
        return rows[0][0]
    if not tuple_out:
        return rows[0]
    if not tuple_in:
        return tuple(r[0] for r in rows)
    return tuple(rows)


def hessian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar ``func`` at ``inputs`` (shape ``input.shape * 2``; a tuple
    of tuples for several inputs)."""
    tuple_in, xs = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*ys: Tensor) -> Any:
        out = func(*ys)
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian "
                               "should contain a single element")
        gs = grad(out.reshape(()), ys, create_graph=True, allow_unused=True)
        gs = _zeros_for_none(gs, ys, strict, "hessian")
        return gs if tuple_in else gs[0]

    return jacobian(gradient, xs if tuple_in else xs[0], create_graph=create_graph,
                    strict=strict)


def vhp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(inputs), v^T H)`` of a scalar ``func``."""
    tuple_in, xs = _as_tuple(inputs, "inputs", "vhp")
    vs = _tangents(v, xs, "vhp")
    with enable_grad():
        xs = _grad_inputs(xs, create_graph)
        out = func(*xs)
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise RuntimeError("The function given in vhp should return a single Tensor "
                               "with a single element")
        gs = grad(out.reshape(()), xs, create_graph=True, allow_unused=True)
        pairs = [(g, w) for g, w in zip(gs, vs) if g is not None]
        hv = (None,) * len(xs) if not pairs else grad(
            [g for g, _ in pairs], xs, grad_outputs=[w for _, w in pairs],
            create_graph=create_graph, allow_unused=True)
    hv = _zeros_for_none(hv, xs, strict, "vhp")
    out = out if create_graph else out.detach()
    hv = _detached(hv, create_graph)
    return out, (hv if tuple_in else hv[0])


def hvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(inputs), H v)`` of a scalar ``func`` (the Hessian is symmetric, so this is
    :func:`vhp`)."""
    return vhp(func, inputs, v, create_graph, strict)


__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]
