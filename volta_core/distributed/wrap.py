"""Auto-wrap policies: which submodules ``FullyShardedDataParallel`` makes units of.

A policy is called as ``policy(module=m, recurse=..., nonwrapped_numel=n)``, PyTorch's
contract: with ``recurse=True`` it says whether to look inside ``m``; with
``recurse=False`` whether to wrap ``m`` itself, ``n`` being the number of its parameters
not already inside a wrapped descendant. Descendants are wrapped first (bottom-up).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..nn.module import Module


class ModuleWrapPolicy:
    """Wrap every submodule that is an instance of one of ``module_classes``.

    Example:
        >>> FullyShardedDataParallel(model, auto_wrap_policy=ModuleWrapPolicy({Block}))
    """

    def __init__(self, module_classes: Any) -> None:
        self.module_classes = tuple(module_classes)

    def __call__(self, module: Module, recurse: bool, nonwrapped_numel: int) -> bool:
        return True if recurse else isinstance(module, self.module_classes)


def transformer_auto_wrap_policy(module: Module, recurse: bool, nonwrapped_numel: int,
                                 transformer_layer_cls: Any = ()) -> bool:
    """Wrap the transformer layers (``functools.partial(..., transformer_layer_cls={L})``)."""
    return ModuleWrapPolicy(transformer_layer_cls)(module, recurse, nonwrapped_numel)


def size_based_auto_wrap_policy(module: Module, recurse: bool, nonwrapped_numel: int,
                                min_num_params: int = 100_000_000) -> bool:
    """Wrap a submodule once its not-yet-wrapped parameters reach ``min_num_params``."""
    return True if recurse else nonwrapped_numel >= min_num_params


def _wrap_children(module: Module, policy: Callable, kwargs: dict) -> int:
    """Wrap, bottom-up, the descendants of ``module`` that ``policy`` picks.

    Returns the number of parameters of ``module`` not inside a wrapped unit.
    """
    from .fsdp import FullyShardedDataParallel

    total = sum(p.numel() for p in module._parameters.values() if p is not None)
    for name, child in list(module._modules.items()):
        if child is None or isinstance(child, FullyShardedDataParallel):
            continue
        if not policy(module=child, recurse=True, nonwrapped_numel=0):
            total += sum(p.numel() for p in child.parameters())
            continue
        rest = _wrap_children(child, policy, kwargs)
        if policy(module=child, recurse=False, nonwrapped_numel=rest):
            module._modules[name] = FullyShardedDataParallel(child, **kwargs)
        else:
            total += rest
    return total


__all__ = ["ModuleWrapPolicy", "transformer_auto_wrap_policy", "size_based_auto_wrap_policy"]
