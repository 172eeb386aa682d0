"""Weight normalisation (Salimans & Kingma, 2016): ``w = g * v / ||v||``.

:func:`weight_norm` is PyTorch's original hook-based form (parameters ``<name>_g`` and
``<name>_v``); :func:`volta_core.nn.utils.parametrizations.weight_norm` is the newer
parametrization-based form.
"""

from __future__ import annotations

from typing import Any

from ...tensor import Tensor
from ..module import Module
from ..parameter import Parameter


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of ``v`` over every dim but ``dim`` (kept with size 1), or over
    the whole tensor when ``dim == -1`` (PyTorch's convention)."""
    powered = v * v if pow == 2 else v.abs() ** pow
    if dim == -1:
        return powered.sum() ** (1.0 / pow)
    d = dim % v.ndim
    others = tuple(i for i in range(v.ndim) if i != d)
    if not others:
        return v.abs()
    return powered.sum(dim=others, keepdim=True) ** (1.0 / pow)


def _weight_norm(v: Tensor, g: Tensor, dim: int) -> Tensor:
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and
    ``<name>_v`` before each call."""

    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Tensor:
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"),
                            self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if weight is None or name not in module._parameters:
            raise ValueError(f"weight_norm: {type(module).__name__} has no parameter {name!r}")
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2,
                                                                         fn.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        object.__setattr__(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module).detach()
        object.__delattr__(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        module.register_parameter(self.name, Parameter(weight))

    def __call__(self, module: Module, inputs: Any) -> None:
        object.__setattr__(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Re-parametrize ``module.<name>`` as ``g * v / ||v||`` (learnable ``<name>_g``,
    ``<name>_v``), the norm taken over every dim but ``dim`` (the whole tensor if None).

    Returns:
        the module, with a forward pre-hook that recomputes the weight.
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`weight_norm`: ``<name>`` becomes one plain parameter again."""
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")


__all__ = ["weight_norm", "remove_weight_norm", "norm_except_dim"]
