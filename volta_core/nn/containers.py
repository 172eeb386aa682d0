"""Containers: ``Sequential`` (and its builder), ``ModuleList``, ``ModuleDict``,
``ParameterList``, ``ParameterDict``."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..tensor import Tensor
from .module import Module
from .parameter import Parameter, is_parameter


def _index(op: str, idx: int, n: int) -> int:
    if not isinstance(idx, int):
        raise TypeError(f"{op} indices must be integers or slices, got {type(idx).__name__}")
    if not -n <= idx < n:
        raise IndexError(f"{op}: index {idx} is out of range for a container of {n} modules")
    return idx % n


def _renumber(container: Module, mods: list[Module]) -> None:
    """Make ``mods`` the container's modules, named by their positions."""
    container._modules.clear()
    for i, m in enumerate(mods):
        container.add_module(str(i), m)


class Sequential(Module):
    """Run modules one after another, each on the previous one's output.

    Built from modules (named ``"0"``, ``"1"``, ...), from an ``OrderedDict`` of named
    modules, or with :meth:`builder`.

    Example::

        >>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        >>> model = (nn.Sequential.builder().add_named("fc1", nn.Linear(4, 8))
        ...          .add_unnamed(nn.ReLU()).build())
    """

    def __init__(self, *args: Module) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], Mapping):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    @staticmethod
    def builder() -> SequentialBuilder:
        """Return a builder that adds named and unnamed layers fluently."""
        return SequentialBuilder()

    def get_named(self, name: str) -> Module:
        """Return the layer called ``name`` (as given to ``add_named``)."""
        m = self._modules.get(name)
        if m is None:
            raise KeyError(f"Sequential has no layer named {name!r}; names: "
                           f"{list(self._modules)}")
        return m

    def forward(self, input: Any) -> Any:
        for m in self._modules.values():
            input = m(input)
        return input

    def __getitem__(self, idx: int | slice) -> Any:
        items = list(self._modules.items())
        if isinstance(idx, slice):
            return Sequential(OrderedDict(items[idx]))
        return items[_index("Sequential", idx, len(items))][1]

    def __setitem__(self, idx: int, module: Module) -> None:
        keys = list(self._modules)
        self.add_module(keys[_index("Sequential", idx, len(keys))], module)

    def __delitem__(self, idx: int | slice) -> None:
        keys = list(self._modules)
        targets = keys[idx] if isinstance(idx, slice) else [keys[_index("Sequential", idx,
                                                                        len(keys))]]
        for k in targets:
            del self._modules[k]
        if all(k.isdigit() for k in self._modules):  # keep positional names contiguous
            _renumber(self, list(self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        """Add ``module`` at the end (named by its position); returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> Sequential:
        """Append every module of ``modules``; returns self."""
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Insert ``module`` before position ``index`` (positional names are renumbered)."""
        mods = list(self._modules.values())
        n = len(mods)
        if not -n <= index <= n:
            raise IndexError(f"Sequential.insert: index {index} out of range for {n} modules")
        mods.insert(index % (n + 1) if index < 0 else index, module)
        _renumber(self, mods)
        return self


class SequentialBuilder:
    """Fluent construction of a :class:`Sequential` with named and unnamed layers.

    Unnamed layers are named by their position, as in ``Sequential(*layers)``.
    """

    def __init__(self) -> None:
        self._layers: list[tuple[str | None, Module]] = []

    def add_named(self, name: str, module: Module) -> SequentialBuilder:
        """Add ``module`` under ``name`` (must be unique and not a position number)."""
        if not isinstance(module, Module):
            raise TypeError(f"add_named: {type(module).__name__} is not a Module")
        if any(n == name for n, _ in self._layers):
            raise KeyError(f"add_named: a layer named {name!r} was already added")
        if name.isdigit():
            raise KeyError(f"add_named: {name!r} looks like a position; use add_unnamed")
        self._layers.append((name, module))
        return self

    def add_unnamed(self, module: Module) -> SequentialBuilder:
        """Add ``module`` named by its position."""
        if not isinstance(module, Module):
            raise TypeError(f"add_unnamed: {type(module).__name__} is not a Module")
        self._layers.append((None, module))
        return self

    def build(self) -> Sequential:
        """Return the :class:`Sequential`."""
        ordered = OrderedDict((name if name is not None else str(i), m)
                              for i, (name, m) in enumerate(self._layers))
        return Sequential(ordered)


class ModuleList(Module):
    """A list of modules, registered so their parameters are found.

    Args:
        modules: an iterable of modules.
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx: int | slice) -> Any:
        mods = list(self._modules.values())
        if isinstance(idx, slice):
            return ModuleList(mods[idx])
        return mods[_index("ModuleList", idx, len(mods))]

    def __setitem__(self, idx: int, module: Module) -> None:
        self.add_module(str(_index("ModuleList", idx, len(self))), module)

    def __delitem__(self, idx: int | slice) -> None:
        mods = list(self._modules.values())
        if isinstance(idx, slice):
            del mods[idx]
        else:
            del mods[_index("ModuleList", idx, len(mods))]
        _renumber(self, mods)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def append(self, module: Module) -> ModuleList:
        """Add ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Append every module of ``modules``; returns self."""
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Insert ``module`` before position ``index``."""
        mods = list(self._modules.values())
        mods.insert(index, module)
        _renumber(self, mods)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("ModuleList has no forward; iterate over it and call the "
                                  "modules instead")


class ModuleDict(Module):
    """A dict of modules by name, registered so their parameters are found.

    Args:
        modules: a mapping or an iterable of ``(name, module)`` pairs.
    """

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None
                 = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        if key not in self._modules:
            raise KeyError(f"ModuleDict has no key {key!r}; keys: {list(self._modules)}")
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def keys(self) -> Iterable[str]:
        return self._modules.keys()

    def values(self) -> Iterable[Module]:
        return self._modules.values()

    def items(self) -> Iterable[tuple[str, Module]]:
        return self._modules.items()

    def pop(self, key: str) -> Module:
        """Remove and return the module under ``key``."""
        m = self[key]
        del self._modules[key]
        return m

    def clear(self) -> None:
        """Remove every module."""
        self._modules.clear()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        """Add the modules of a mapping or of ``(name, module)`` pairs."""
        items = modules.items() if isinstance(modules, Mapping) else modules
        for name, m in items:
            self.add_module(name, m)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("ModuleDict has no forward; index it and call the modules")


def _as_parameter(value: Any) -> Any:
    """Tensors become Parameters (as PyTorch's containers do); other values stay as they are."""
    if isinstance(value, Tensor) and not is_parameter(value):
        return Parameter(value)
    return value


class ParameterList(Module):
    """A list of parameters, registered so ``parameters()`` and ``state_dict()`` find them.

    Plain tensors appended are wrapped in :class:`Parameter`; other objects are kept as
    plain attributes (as PyTorch does).

    Args:
        values: an iterable of parameters (or tensors).
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        object.__setattr__(self, "_size", 0)
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return ParameterList([self[i] for i in range(len(self))[idx]])
        return getattr(self, str(_index("ParameterList", idx, len(self))))

    def __setitem__(self, idx: int, param: Any) -> None:
        setattr(self, str(_index("ParameterList", idx, len(self))), _as_parameter(param))

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(len(self)))

    def __iadd__(self, values: Iterable[Any]) -> ParameterList:
        return self.extend(values)

    def __dir__(self) -> list[str]:
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value: Any) -> ParameterList:
        """Add ``value`` at the end; returns self."""
        object.__setattr__(self, "_size", self._size + 1)
        setattr(self, str(self._size - 1), _as_parameter(value))
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Append every value of ``values``; returns self."""
        if isinstance(values, Tensor) or not isinstance(values, Iterable):
            raise TypeError("ParameterList.extend should be called with an iterable, but "
                            f"got {type(values).__name__}")
        for v in values:
            self.append(v)
        return self

    def extra_repr(self) -> str:
        lines = []
        for i, p in enumerate(self):
            if isinstance(p, Tensor):
                size = "x".join(str(n) for n in p.shape)
                lines.append(f"({i}): Parameter containing: [{p.dtype.name} of size {size}]")
            else:
                lines.append(f"({i}): Object of type: {type(p).__name__}")
        return "\n".join(lines)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("ParameterList has no forward; use its parameters in the "
                                  "owning module's forward")


class ParameterDict(Module):
    """A dict of parameters by name, registered so ``parameters()`` finds them.

    Plain tensors stored are wrapped in :class:`Parameter`; keys keep insertion order.

    Args:
        parameters: a mapping or an iterable of ``(name, value)`` pairs.
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        object.__setattr__(self, "_keys", {})
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)

    def __setitem__(self, key: str, value: Any) -> None:
        self._keys[key] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __or__(self, other: ParameterDict) -> ParameterDict:
        out = self.copy()
        out.update(other)
        return out

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same parameters."""
        return ParameterDict(list(self.items()))

    def keys(self) -> Iterable[str]:
        return self._keys.keys()

    def values(self) -> Iterable[Any]:
        return [self[k] for k in self._keys]

    def items(self) -> Iterable[tuple[str, Any]]:
        return [(k, self[k]) for k in self._keys]

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def pop(self, key: str) -> Any:
        value = self[key]
        del self[key]
        return value

    def popitem(self) -> tuple[str, Any]:
        key = list(self._keys)[-1]
        return key, self.pop(key)

    def clear(self) -> None:
        for k in list(self._keys):
            del self[k]

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        return ParameterDict((k, default) for k in keys)

    def update(self, parameters: Any) -> None:
        """Add or replace entries from a mapping or ``(name, value)`` pairs."""
        if isinstance(parameters, (OrderedDict, ParameterDict)) or not isinstance(
                parameters, Mapping):
            pairs = parameters.items() if isinstance(parameters, Mapping) else parameters
        else:
            pairs = sorted(parameters.items())  # a plain dict is sorted, as in PyTorch
        for pair in pairs:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError("ParameterDict.update: expected (name, value) pairs, got "
                                 f"{pair!r}")
            self[pair[0]] = pair[1]

    def extra_repr(self) -> str:
        lines = []
        for k, p in self.items():
            if isinstance(p, Tensor):
                size = "x".join(str(n) for n in p.shape)
                lines.append(f"({k}): Parameter containing: [{p.dtype.name} of size {size}]")
            else:
                lines.append(f"({k}): Object of type: {type(p).__name__}")
        return "\n".join(lines)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("ParameterDict has no forward; use its parameters in the "
                                  "owning module's forward")


__all__ = ["ParameterList", "ParameterDict", "Sequential", "SequentialBuilder", "ModuleList",
           "ModuleDict"]
