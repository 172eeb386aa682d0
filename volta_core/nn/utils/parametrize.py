"""Parametrizations: make a module's tensor a function of other, learnable tensors.

``register_parametrization(module, "weight", P())`` replaces ``module.weight`` by a
property that returns ``P()(original)``: the learnable tensor moves to
``module.parametrizations.weight.original`` (or ``original0``, ``original1``, ... when
``P.right_inverse`` returns several tensors), and assigning ``module.weight = X`` stores
``P.right_inverse(X)``. The module's class is swapped for a subclass holding the
property (``Parametrized<Name>``), restored when the last parametrization is removed.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ...autograd.grad_mode import no_grad
from ...errors import ShapeError
from ...tensor import Tensor
from ..containers import ModuleDict, ModuleList
from ..module import Module
from ..parameter import Parameter, is_parameter

_cache_depth = 0
_cache: dict[tuple[int, str], Tensor] = {}


@contextmanager
def cached() -> Iterator[None]:
    """Compute each parametrized tensor once inside this block and reuse it (e.g. a
    weight used at every step of an RNN), instead of once per access."""
    global _cache_depth
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if not _cache_depth:
            _cache.clear()


def _assign_into(target: Tensor, value: Tensor) -> None:
    """Give ``target`` the values of ``value`` in place (keeps its identity for optimizers)."""
    value = value.detach().to(target.device, target.dtype)
    target.array = target.device.xp.asarray(value.array, copy=True)
    target._version[0] += 1


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and the original tensor(s).

    ``original`` holds the tensor (or ``original0``, ``original1``, ... when the first
    parametrization's ``right_inverse`` returns a sequence); calling the list returns
    the parametrized value.
    """

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False
                 ) -> None:
        super().__init__(modules)
        object.__setattr__(self, "unsafe", unsafe)
        with no_grad():
            new = original
            for m in reversed(list(self)):
                if hasattr(m, "right_inverse"):
                    try:
                        new = m.right_inverse(new)
                    except NotImplementedError:  # as PyTorch: the identity at registration
                        pass
        object.__setattr__(self, "is_tensor", isinstance(new, Tensor))
        object.__setattr__(self, "ntensors", 1 if self.is_tensor else len(new))
        as_param = is_parameter(original)
        if self.is_tensor:
            if not unsafe and (new.shape != original.shape or new.dtype is not original.dtype):
                raise ShapeError("parametrization: right_inverse must return a tensor of the "
                                 f"original's shape {tuple(original.shape)} and dtype "
                                 f"{original.dtype.name}, got {tuple(new.shape)} "
                                 f"{new.dtype.name}; pass unsafe=True to allow it")
            if new.shape == original.shape and new.dtype is original.dtype:
                _assign_into(original, new)  # the same Parameter object stays registered
                self._register("original", original, as_param)
            else:
                self._register("original", self._fresh(new, original, as_param), as_param)
        else:
            for i, t in enumerate(new):
                if not isinstance(t, Tensor):
                    raise TypeError("parametrization: right_inverse must return Tensors, got "
                                    f"{type(t).__name__} at position {i}")
                self._register(f"original{i}", self._fresh(t, original, as_param), as_param)
        if not unsafe:
            value = self()
            if value.shape != original.shape or value.dtype is not original.dtype:
                raise ShapeError("parametrization: it must return a tensor of the original's "
                                 f"shape {tuple(original.shape)} and dtype "
                                 f"{original.dtype.name}, got {tuple(value.shape)} "
                                 f"{value.dtype.name}; pass unsafe=True to allow it")

    @staticmethod
    def _fresh(t: Tensor, original: Tensor, as_param: bool) -> Tensor:
        t = t.detach().clone()
        return Parameter(t, original.requires_grad) if as_param else t

    def _register(self, name: str, t: Tensor, as_param: bool) -> None:
        if as_param:
            self.register_parameter(name, t)
        else:
            self.register_buffer(name, t)

    def right_inverse(self, value: Tensor) -> None:
        """Store ``value`` as the parametrized tensor (through the ``right_inverse``s)."""
        with no_grad():
            for m in reversed(list(self)):
                if not hasattr(m, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(m).__name__} does not implement "
                                       "right_inverse, so the tensor cannot be assigned")
                value = m.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise TypeError(f"right_inverse should return a Tensor, got "
                                    f"{type(value).__name__}")
                _assign_into(self.original, value)
            else:
                if len(value) != self.ntensors:
                    raise ValueError(f"right_inverse should return {self.ntensors} tensors, "
                                     f"got {len(value)}")
                for i, t in enumerate(value):
                    _assign_into(getattr(self, f"original{i}"), t)

    def forward(self) -> Tensor:
        mods = list(self)
        if self.is_tensor:
            x = mods[0](self.original)
        else:
            x = mods[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for m in mods[1:]:
            x = m(x)
        return x

    def __call__(self) -> Tensor:  # type: ignore[override]
        return self.forward()


def _parametrized_class(cls: type) -> type:
    def __setattr__(self: Module, name: str, value: Any) -> None:
        plist = self.__dict__.get("_modules", {}).get("parametrizations")
        if plist is not None and name in plist._modules:
            plist._modules[name].right_inverse(value)
            return
        cls.__setattr__(self, name, value)

    def __getstate__(self: Module) -> Any:
        raise RuntimeError("Serialization of parametrized modules is only supported through "
                           "state_dict(); pickle module.state_dict() instead")

    def __deepcopy__(self: Module, memo: dict) -> Module:
        import copy

        new = object.__new__(type(self))
        memo[id(self)] = new
        for k, v in self.__dict__.items():
            object.__setattr__(new, k, copy.deepcopy(v, memo))
        for p in new._parameters.values():
            if p is not None:
                from ..parameter import _mark

                _mark(p)
        return new

    return type(f"Parametrized{cls.__name__}", (cls,), {
        "__setattr__": __setattr__, "__getstate__": __getstate__,
        "__deepcopy__": __deepcopy__, "_unparametrized_class": cls,
        "__module__": cls.__module__})


def _add_property(module: Module, name: str) -> None:
    def getter(self: Module) -> Tensor:
        plist = self.parametrizations[name]
        if not _cache_depth:
            return plist()
        key = (id(self), name)
        if key not in _cache:
            _cache[key] = plist()
        return _cache[key]

    def setter(self: Module, value: Tensor) -> None:
        self.parametrizations[name].right_inverse(value)

    setattr(type(module), name, property(getter, setter))


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has a parametrization (on ``tensor_name``, if given)."""
    plist = module._modules.get("parametrizations") if isinstance(module, Module) else None
    if not isinstance(plist, ModuleDict) or not hasattr(type(module), "_unparametrized_class"):
        return False
    return len(plist) > 0 if tensor_name is None else tensor_name in plist


def type_before_parametrizations(module: Module) -> type:
    """The module's class before any parametrization was registered."""
    return getattr(type(module), "_unparametrized_class", type(module))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Parametrize ``module.<tensor_name>`` by ``parametrization`` (a Module).

    Accessing the tensor then returns ``parametrization(original)``; registering a second
    parametrization on the same tensor applies it after the first.

    Args:
        module: the module owning the parameter or buffer.
        tensor_name: its name.
        parametrization: a module whose ``forward`` maps the original tensor(s) to the
            value; an optional ``right_inverse`` maps a value back to the original(s).
        unsafe: skip the checks that shape and dtype are preserved.

    Returns:
        the module.
    """
    if not isinstance(parametrization, Module):
        raise TypeError("register_parametrization: the parametrization must be a Module, "
                        f"got {type(parametrization).__name__}")
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            value = getattr(module, tensor_name)
            new = parametrization(value)
            if new.shape != value.shape or new.dtype is not value.dtype:
                raise ShapeError(f"register_parametrization: the new parametrization changes "
                                 f"{tensor_name}'s shape/dtype from {tuple(value.shape)} "
                                 f"{value.dtype.name} to {tuple(new.shape)} {new.dtype.name}; "
                                 "pass unsafe=True to allow it")
        plist.append(parametrization)
        object.__setattr__(plist, "unsafe", plist.unsafe or unsafe)
        return module
    if tensor_name not in module._parameters and tensor_name not in module._buffers:
        raise ValueError(f"Module '{type(module).__name__}' does not have a parameter, a "
                         f"buffer, or a parametrized element with name '{tensor_name}'")
    original = getattr(module, tensor_name)
    if original is None:
        raise ValueError(f"register_parametrization: {tensor_name} of "
                         f"{type(module).__name__} is None")
    plist = ParametrizationList([parametrization], original, unsafe=unsafe)
    if tensor_name in module._parameters:
        del module._parameters[tensor_name]
    else:
        del module._buffers[tensor_name]
        module._non_persistent_buffers_set.discard(tensor_name)
    if not is_parametrized(module):
        object.__setattr__(module, "__class__", _parametrized_class(type(module)))
        module._modules["parametrizations"] = ModuleDict()
    module.parametrizations._modules[tensor_name] = plist
    _add_property(module, tensor_name)
    return module


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Remove the parametrizations of ``module.<tensor_name>``.

    Args:
        module: the module.
        tensor_name: the parametrized tensor.
        leave_parametrized: keep the current parametrized value as the plain tensor
            (else the original tensor is put back).

    Returns:
        the module.
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {type(module).__name__} does not have a parametrization on "
                         f"{tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
            if value.shape == original.shape and value.dtype is original.dtype:
                _assign_into(original, value)
            else:
                original = (Parameter(value.detach().clone(), original.requires_grad)
                            if is_parameter(original) else value.detach().clone())
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a "
                             "tensor that is parametrized in terms of a sequence of tensors.")
        with no_grad():
            value = getattr(module, tensor_name).detach().clone()
        first = plist.original0
        original = Parameter(value, first.requires_grad) if is_parameter(first) else value
    delattr(type(module), tensor_name)
    del module.parametrizations._modules[tensor_name]
    if is_parameter(original):
        module._parameters[tensor_name] = original
    else:
        module._buffers[tensor_name] = original
    if not module.parametrizations._modules:
        del module._modules["parametrizations"]
        object.__setattr__(module, "__class__", type(module)._unparametrized_class)
    return module


__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized",
           "cached", "type_before_parametrizations", "ParametrizationList"]
