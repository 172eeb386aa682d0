"""``vt.func``: ``torch.func``'s function transforms, for the cases programs use most.

- ``functional_call(module, params_and_buffers, args, kwargs)`` runs a module with other
  tensors in place of its parameters and buffers (meta-learning, ensembling), which are
  restored afterwards.
- ``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd`` and ``hessian``
  turn a function of tensors into one computing its derivatives, built on reverse-mode
  autograd (``vt.autograd.functional``); they compose with each other (``jacrev(grad(f))``)
  because each keeps the graph of what it computes.
- ``vmap(f, in_dims, out_dims)`` maps ``f`` over a batch dimension by running it once per
  element and stacking the results: the semantics of ``torch.func.vmap``, not its speed
  (one call per element).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .autograd import functional as F
from .autograd.engine import grad as _autograd_grad
from .autograd.grad_mode import enable_grad
from .tensor import Tensor


def functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = (),
                    kwargs: dict | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with the named tensors of ``parameter_and_buffer_dicts``
    (a dict, or a tuple of dicts) in place of its parameters and buffers."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, dict):
        dicts = (dicts,)
    merged: dict[str, Any] = {}
    for d in dicts:
        for k, v in d.items():
            if k in merged:
                raise ValueError(f"functional_call got multiple values for keys ['{k}'], "
                                 "which are present in more than one dict")
            merged[k] = v
    known = dict(module.named_parameters(remove_duplicate=False)) if _takes_dup(module) \
        else dict(module.named_parameters())
    known.update(dict(module.named_buffers()))
    if strict:
        missing = sorted(set(known) - set(merged))
        unexpected = sorted(set(merged) - set(known))
        if missing or unexpected:
            raise RuntimeError(f"Error(s) in functional_call: missing keys {missing}, "
                               f"unexpected keys {unexpected}")
    swapped = []
    try:
        for name, value in merged.items():
            owner, attr = _owner(module, name)
            store = "_parameters" if attr in owner._parameters else (
                "_buffers" if attr in owner._buffers else None)
            if store is None:
                raise AttributeError(f"functional_call: {type(module).__name__} has no "
                                     f"parameter or buffer named {name!r}")
            table = getattr(owner, store)
            swapped.append((table, attr, table[attr]))
            table[attr] = value
        args = args if isinstance(args, tuple) else (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for table, attr, original in reversed(swapped):
            table[attr] = original


def _takes_dup(module: Any) -> bool:
    import inspect

    return "remove_duplicate" in inspect.signature(module.named_parameters).parameters


def _owner(module: Any, name: str) -> tuple[Any, str]:
    *path, attr = name.split(".")
    owner = module
    for p in path:
        owner = getattr(owner, p)
    return owner, attr


_depth = [0]  # transforms running (nested ones keep their graphs for the outer ones)


class _level:  # noqa: N801 - a context manager used as a function
    def __enter__(self) -> None:
        _depth[0] += 1

    def __exit__(self, *exc: Any) -> None:
        _depth[0] -= 1


def _finish(value: Any, inputs: Sequence[Any]) -> Any:
    """A transform's result: detached at the outermost level when no input requires grad
    (as ``torch.func``'s, which leaves no graph behind), else as computed."""
    if _depth[0] > 0 or any(isinstance(t, Tensor) and t.requires_grad for t in inputs):
        return value
    if isinstance(value, tuple):
        return tuple(_finish(v, inputs) for v in value)
    return value.detach() if isinstance(value, Tensor) else value


def _select(args: tuple, argnums: int | Sequence[int]) -> tuple[bool, list[int]]:
    if isinstance(argnums, int):
        return False, [argnums]
    return True, list(argnums)


def grad_and_value(func: Callable, argnums: int | Sequence[int] = 0,
                   has_aux: bool = False) -> Callable:
    """A function returning ``(gradient of func w.r.t. args[argnums], func(*args))``;
    ``func`` returns a one-element tensor (or ``(that, aux)`` with ``has_aux``)."""
    def wrapper(*args: Any, **kwargs: Any) -> tuple:
        with _level():
            out = _grad_and_value(args, kwargs)
        return _finish(out, args)

    def _grad_and_value(args: tuple, kwargs: dict) -> tuple:
        several, nums = _select(args, argnums)
        args = list(args)
        with enable_grad():
            for i in nums:
                t = args[i]
                args[i] = t if t.requires_grad else t.detach().requires_grad_()
            out = func(*args, **kwargs)
            value, aux = (out if has_aux else (out, None))
            if not isinstance(value, Tensor) or value.numel() != 1:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                   "scalar Tensor")
            gs = _autograd_grad(value, [args[i] for i in nums], create_graph=True,
                                materialize_grads=True)
        g = gs if several else gs[0]
        return (g, (value, aux)) if has_aux else (g, value)
    return wrapper


def grad(func: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable:
    """A function returning the gradient of ``func`` (a scalar) w.r.t. ``args[argnums]``."""
    inner = grad_and_value(func, argnums, has_aux)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = inner(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangent)`` gives one tuple entry per
    primal."""
    with enable_grad():
        xs = [p if p.requires_grad else p.detach().requires_grad_() for p in primals]
        out = func(*xs)
        out, aux = out if has_aux else (out, None)

    def vjp_fn(*cotangents: Any) -> tuple:
        outs = out if isinstance(out, tuple) else (out,)
        return _finish(_autograd_grad(list(outs), xs, grad_outputs=list(cotangents),
                                      retain_graph=True, create_graph=True,
                                      materialize_grads=True), primals)

    out_ = _finish(out, primals)
    return (out_, vjp_fn, aux) if has_aux else (out_, vjp_fn)


def _split_aux(func: Callable, has_aux: bool, aux: list) -> Callable:
    """``func`` returning its output only; with ``has_aux``, ``func`` returns
    ``(output, aux)`` and the last aux is kept in ``aux``."""
    if not has_aux:
        return func

    def call(*args: Any) -> Any:
        out = func(*args)
        if not (isinstance(out, tuple) and len(out) == 2):
            raise RuntimeError("has_aux=True: expected f(*args) to return a tuple "
                               "(output, aux)")
        aux[:] = [out[1]]
        return out[0]
    return call


def jvp(func: Callable, primals: tuple, tangents: tuple, *, has_aux: bool = False) -> tuple:
    """``(func(*primals), J tangents)`` (by the double-vjp trick); with ``has_aux``,
    ``func`` returns ``(output, aux)`` and so does this, ``(output, J tangents, aux)``."""
    aux: list = []
    inner = _split_aux(func, has_aux, aux)
    with _level():
        out = F.jvp(lambda *xs: inner(*xs), tuple(primals), tuple(tangents),
                    create_graph=True)
    out = _finish(out, primals)
    return (*out, _finish(aux[0], primals)) if has_aux else out


def jacrev(func: Callable, argnums: int | Sequence[int] = 0, *,
           has_aux: bool = False) -> Callable:
    """A function returning the Jacobian of ``func`` w.r.t. ``args[argnums]`` (shape
    ``output.shape + input.shape``); with ``has_aux``, ``func`` returns ``(output, aux)``
    and the function ``(jacobian, aux)``."""
    aux: list = []
    inner = _split_aux(func, has_aux, aux)

    def wrapper(*args: Any) -> Any:
        with _level():
            jac = _jacobian(args)
        jac = _finish(jac, args)
        return (jac, _finish(aux[0], args)) if has_aux else jac

    def _jacobian(args: tuple) -> Any:
        several, nums = _select(args, argnums)

        def of_selected(*sel: Tensor) -> Any:
            full = list(args)
            for i, s in zip(nums, sel):
                full[i] = s
            return inner(*full)

        sel = tuple(args[i] for i in nums)
        jac = F.jacobian(of_selected, sel if several else sel[0], create_graph=True)
        return jac
    return wrapper


jacfwd = jacrev  # the same Jacobian (reverse mode here)


def hessian(func: Callable, argnums: int | Sequence[int] = 0) -> Callable:
    """The Hessian of a scalar ``func`` w.r.t. ``args[argnums]``."""
    return jacrev(jacrev(func, argnums), argnums)


def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error",
         *, chunk_size: int | None = None) -> Callable:
    """``func`` mapped over dimension ``in_dims`` of its tensor arguments (an int for all,
    or one entry per argument, None for arguments not mapped), results stacked along
    ``out_dims``. Runs ``func`` once per element."""
    from .ops.joining import stack

    def wrapper(*args: Any) -> Any:
        dims = in_dims if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(f"vmap: in_dims has {len(dims)} entries for {len(args)} "
                             "arguments")
        sizes = {a.shape[d] for a, d in zip(args, dims) if d is not None}
        if len(sizes) != 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the "
                             f"mapped dimension, got sizes {sorted(sizes)}")
        (n,) = sizes
        results = []
        for k in range(n):
            results.append(func(*[a if d is None else a.select(d, k)
                                  for a, d in zip(args, dims)]))
        if isinstance(results[0], tuple):
            od = out_dims if isinstance(out_dims, (tuple, list)) else (out_dims,) * len(
                results[0])
            return tuple(stack([r[j] for r in results], od[j])
                         for j in range(len(results[0])))
        return stack(results, out_dims)
    return wrapper


__all__ = ["functional_call", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd",
           "hessian", "vmap"]
