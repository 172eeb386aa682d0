"""``Module``: the base class of every layer and model."""

from __future__ import annotations

import itertools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator
from typing import Any

from ..autograd.grad_mode import no_grad
from ..errors import VoltaError
from ..tensor import Tensor, cuda_device
from .parameter import _mark, buffer_persistence, is_parameter


class StateDictError(VoltaError, RuntimeError):
    """A state dict that does not fit a module (missing/unexpected keys, shape mismatch)."""


IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])
_hook_ids = itertools.count()


class RemovableHandle:
    """Returned by ``register_*_hook``; ``remove()`` unregisters the hook."""

    def __init__(self, hooks: dict, key: int) -> None:
        self._hooks, self.id = hooks, key

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


class Module:
    """Base class of neural-network layers and models.

    Subclasses build their parameters and sub-modules in ``__init__`` (after calling
    ``super().__init__()``) and compute in ``forward``. Assigning a :class:`Parameter`,
    a ``Module`` or an ``nn.Buffer`` to an attribute registers it.

    Example::

        >>> class Net(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc1 = nn.Linear(4, 8)
        ...         self.fc2 = nn.Linear(8, 2)
        ...     def forward(self, x):
        ...         return self.fc2(self.fc1(x).relu())
    """

    training: bool
    _parameters: dict[str, Tensor | None]
    _buffers: dict[str, Tensor | None]
    _modules: dict[str, Module | None]

    def __init__(self) -> None:
        sa = object.__setattr__
        sa(self, "training", True)
        sa(self, "_parameters", {})
        sa(self, "_buffers", {})
        sa(self, "_non_persistent_buffers_set", set())
        sa(self, "_modules", {})
        sa(self, "_forward_pre_hooks", {})
        sa(self, "_forward_hooks", {})
        sa(self, "_forward_hooks_with_kwargs", set())  # keys of hooks that take kwargs
        sa(self, "_backward_pre_hooks", {})
        sa(self, "_backward_hooks", {})

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Compute the module's output; every subclass overrides this."""
        raise NotImplementedError(f"{type(self).__name__} is missing the required "
                                  "'forward' method")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks
                or self._backward_pre_hooks):
            return self.forward(*args, **kwargs)
        with_kwargs = self._forward_hooks_with_kwargs
        out, called = None, set()
        try:
            for key, hook in list(self._forward_pre_hooks.items()):
                if key in with_kwargs:
                    new = hook(self, args, kwargs)
                    if new is not None:
                        args, kwargs = new
                    continue
                new = hook(self, args)
                if new is not None:
                    args = new if isinstance(new, tuple) else (new,)
            if self._backward_hooks or self._backward_pre_hooks:
                from .backward_hooks import call_with_backward_hooks

                out = call_with_backward_hooks(self, self.forward, args, kwargs)
            else:
                out = self.forward(*args, **kwargs)
            for key, hook in list(self._forward_hooks.items()):
                called.add(key)
                new = (hook(self, args, kwargs, out) if key in with_kwargs
                       else hook(self, args, out))
                if new is not None:
                    out = new
            return out
        except Exception:
            self._always_called_hooks(args, kwargs, out, called)
            raise

    def _always_called_hooks(self, args: tuple, kwargs: dict, out: Any, called: set) -> None:
        """After an exception in the call: run the forward hooks registered with
        ``always_call=True`` that have not run (with the output so far, None if
        ``forward`` raised), as PyTorch does; their own exceptions become warnings."""
        always = self.__dict__.get("_forward_hooks_always_called", ())
        for key, hook in list(self._forward_hooks.items()):
            if key not in always or key in called:
                continue
            try:
                if key in self._forward_hooks_with_kwargs:
                    hook(self, args, kwargs, out)
                else:
                    hook(self, args, out)
            except Exception as e:
                warnings.warn("forward hook with ``always_call=True`` raised an exception that "
                              f"was silenced as another error was raised in forward: {e}",
                              stacklevel=3)

    # -- hooks ---------------------------------------------------------------------------
    def _add_hook(self, hooks: dict, hook: Callable, prepend: bool = False,
                  with_kwargs: bool = False) -> RemovableHandle:
        key = next(_hook_ids)
        hooks[key] = hook
        if prepend:  # first in the calling order (the dict object itself stays)
            rest = [(k, hooks.pop(k)) for k in list(hooks) if k != key]
            hooks.update(rest)
        if with_kwargs:
            self._forward_hooks_with_kwargs.add(key)
        return RemovableHandle(hooks, key)

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Call ``hook(module, args)`` before ``forward``; it may return replacement args.
        With ``with_kwargs``: ``hook(module, args, kwargs)``, returning ``(args, kwargs)``
        or None; ``prepend`` runs it before the hooks registered earlier."""
        return self._add_hook(self._forward_pre_hooks, hook, prepend, with_kwargs)

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after ``forward``; it may replace the output.
        With ``with_kwargs``: ``hook(module, args, kwargs, output)``; with ``always_call``
        it also runs when the call raises (``output`` None if ``forward`` did)."""
        handle = self._add_hook(self._forward_hooks, hook, prepend, with_kwargs)
        if always_call:
            self.__dict__.setdefault("_forward_hooks_always_called", set()).add(handle.id)
        return handle

    def register_full_backward_pre_hook(self, hook: Callable, *,
                                        prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when the gradients of the module's outputs
        are known; it may return replacement ``grad_output`` (see
        :mod:`volta_core.nn.backward_hooks`)."""
        return self._add_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook: Callable, *,
                                    prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_input, grad_output)`` when the gradients of the
        module's tensor inputs are known; it may return replacement ``grad_input``."""
        return self._add_hook(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        """PyTorch's deprecated spelling; registered as a full backward hook."""
        return self.register_full_backward_hook(hook)

    # -- registration --------------------------------------------------------------------
    def _check_name(self, kind: str, name: Any) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call; "
                                 f"call super().__init__() first in {type(self).__name__}")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string, got {type(name).__name__}")
        if "." in name or name == "":
            raise KeyError(f"{kind} name can't contain '.' or be empty, got {name!r}")

    def register_parameter(self, name: str, param: Tensor | None) -> None:
        """Add a parameter (or None) under ``name``."""
        self._check_name("parameter", name)
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute {name!r} already exists on {type(self).__name__}")
        if param is not None and not is_parameter(param):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter "
                            f"{name!r} (nn.Parameter or None required)")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer: state that is saved and moved with the module but not trained.

        Args:
            name: the attribute name.
            tensor: the buffer (or None).
            persistent: whether it is part of ``state_dict()``.
        """
        self._check_name("buffer", name)
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute {name!r} already exists on {type(self).__name__}")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer "
                            f"{name!r} (Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module (or None) under ``name``."""
        self._check_name("module", name)
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute {name!r} already exists on {type(self).__name__}")
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if is_parameter(value):
            self._check_name("parameter", name)
            _discard(d, name, "_buffers", "_modules")
            params[name] = value
            return
        if isinstance(value, Module):
            self._check_name("module", name)
            _discard(d, name, "_parameters", "_buffers")
            self._modules[name] = value
            return
        persistent = buffer_persistence(value) if isinstance(value, Tensor) else None
        if persistent is not None:
            _discard(d, name, "_parameters", "_modules")
            self.register_buffer(name, value, persistent)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter "
                                f"{name!r} of {type(self).__name__} (nn.Parameter or None "
                                "expected); wrap it with nn.Parameter(...)")
            params[name] = None
            return
        mods = d.get("_modules")
        if mods is not None and name in mods:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module "
                                f"{name!r} (Module or None expected)")
            mods[name] = None
            return
        bufs = d.get("_buffers")
        if bufs is not None and name in bufs:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer {name!r} "
                                "(Tensor or None expected)")
            bufs[name] = value
            return
        object.__setattr__(self, name, value)

    def __setstate__(self, state: dict) -> None:
        # deepcopy and pickle rebuild the parameters as new tensors: mark them as
        # parameters again (ties survive: both copy the shared tensor once)
        self.__dict__.update(state)
        for p in self._parameters.values():
            if p is not None:
                _mark(p)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            s = d.get(store)
            if s is not None and name in s:
                return s[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for store in ("_parameters", "_buffers", "_modules"):
            s = self.__dict__[store]
            if name in s:
                del s[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        keys = list(super().__dir__())
        keys += list(self._parameters) + list(self._buffers) + list(self._modules)
        return sorted(set(k for k in keys if not k[0].isdigit()))

    def get_submodule(self, target: str) -> Module:
        """Return the sub-module at dotted path ``target`` (``""`` is self)."""
        mod: Module = self
        if target == "":
            return mod
        for part in target.split("."):
            sub = mod._modules.get(part)
            if sub is None:
                raise AttributeError(f"{type(mod).__name__} has no sub-module {part!r} "
                                     f"(looking up {target!r})")
            mod = sub
        return mod

    def get_parameter(self, target: str) -> Tensor:
        """Return the parameter at dotted path ``target`` (``"fc1.weight"``)."""
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if name not in mod._parameters:
            raise AttributeError(f"{type(mod).__name__} has no parameter {name!r}")
        return mod._parameters[name]

    # -- iteration -----------------------------------------------------------------------
    def _named_members(self, store: str, prefix: str, recurse: bool,
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        seen: set[int] = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for mod_prefix, mod in mods:
            for name, v in getattr(mod, store).items():
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                seen.add(id(v))
                yield (mod_prefix + "." + name if mod_prefix else name), v

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """Yield ``(name, parameter)`` pairs, shared parameters once."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Tensor]:
        """Yield the module's parameters (and its sub-modules' when ``recurse``)."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """Yield ``(name, buffer)`` pairs."""
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Yield the module's buffers."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """Yield ``(name, module)`` for each direct child, each module once."""
        seen: set[int] = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator[Module]:
        """Yield the direct child modules."""
        for _, m in self.named_children():
            yield m

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """Yield ``(dotted name, module)`` for self and every descendant, depth first."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + "." + name if prefix else name,
                                       remove_duplicate)

    def modules(self) -> Iterator[Module]:
        """Yield self and every descendant module."""
        for _, m in self.named_modules():
            yield m

    # -- modes and gradients -------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode (dropout active, batch norm uses batch statistics)."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be a bool")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> Module:
        """Set evaluation mode; the same as ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` on every parameter; returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to None, or to zeros in place)."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                g.array = g.device.xp.zeros_like(g.array)
                g.grad_fn, g.requires_grad = None, False

    # -- conversion ----------------------------------------------------------------------
    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call ``fn`` on every sub-module (children first) and then self; returns self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _convert(self, fn: Callable[[Tensor], Tensor]) -> Module:
        """Replace the values of every parameter, gradient and buffer by ``fn(values)``.

        Parameters keep their identity, so optimizers built earlier still hold them.
        """
        with no_grad():
            for m in self.modules():
                for p in m._parameters.values():
                    if p is None:
                        continue
                    new = fn(p.detach())
                    p.array, p.device = new.array, new.device
                    p._version[0] += 1
                    if p.grad is not None:
                        g = fn(p.grad.detach())
                        p.grad = g
                for name, b in list(m._buffers.items()):
                    if b is not None:
                        m._buffers[name] = fn(b)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Move parameters and buffers to a device and/or cast floating ones to a dtype.

        Accepts ``to(device)``, ``to(dtype)``, ``to(device, dtype)`` and keywords, as
        ``Tensor.to``. Integer buffers (``num_batches_tracked``) keep their dtype.
        """
        from ..dtypes import DType, get_dtype

        dev, dt = kwargs.pop("device", None), kwargs.pop("dtype", None)
        kwargs.pop("non_blocking", None)
        kwargs.pop("memory_format", None)  # every tensor is row-major (vt.channels_last too)
        if kwargs:
            raise TypeError(f"Module.to() got unexpected arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, Tensor):
                dev, dt = a.device, a.dtype
            elif isinstance(a, DType) or a in (float, int):
                dt = a
            else:
                try:
                    dt = get_dtype(a)
                except (TypeError, KeyError, ValueError):
                    dev = a
        if dt is not None:
            dt = get_dtype(dt)
            if not dt.is_floating_point:
                raise TypeError(f"Module.to only accepts floating point dtypes, got {dt.name}")

        def convert(t: Tensor) -> Tensor:
            out = t.to(dev) if dev is not None else t
            if dt is not None and out.dtype.is_floating_point:
                out = out.to(dt)
            return out

        return self._convert(convert)

    def cpu(self) -> Module:
        """Move every parameter and buffer to the CPU."""
        return self.to("cpu")

    def cuda(self, device: Any = None) -> Module:
        """Move every parameter and buffer to ``cuda:device`` (an index, a name or a
        device; the current one when None)."""
        return self.to(cuda_device(device))

    def float(self) -> Module:  # noqa: A003
        """Cast floating parameters and buffers to float32."""
        return self.to("float32")

    def double(self) -> Module:
        """Cast floating parameters and buffers to float64."""
        return self.to("float64")

    def half(self) -> Module:
        """Cast floating parameters and buffers to float16."""
        return self.to("float16")

    # -- state dict ----------------------------------------------------------------------
    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()

    def state_dict(self, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> OrderedDict[str, Tensor]:
        """Return every parameter and persistent buffer by dotted name (``fc1.weight``).

        The tensors share values with the module (detached unless ``keep_vars``).
        """
        if destination is None:
            destination = OrderedDict()
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination, prefix + name + ".", keep_vars)
        return destination

    def _load_from_state_dict(self, state_dict: dict, prefix: str, missing: list,
                              errors: list) -> None:
        """Copy this module's own entries of ``state_dict``; override to adapt old keys."""
        local = [(n, p) for n, p in self._parameters.items() if p is not None]
        local += [(n, b) for n, b in self._buffers.items()
                  if b is not None and n not in self._non_persistent_buffers_set]
        for name, t in local:
            key = prefix + name
            if key not in state_dict:
                missing.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                from ..creation import tensor as _tensor

                value = _tensor(value, dtype=t.dtype, device=t.device)
            if tuple(value.shape) != tuple(t.shape):
                errors.append(f"size mismatch for {key}: copying a param with shape "
                              f"{tuple(value.shape)} from checkpoint, the shape in the "
                              f"current model is {tuple(t.shape)}")
                continue
            with no_grad():
                value = value.detach().to(t.device)
                if value.dtype is not t.dtype:
                    value = value.to(t.dtype)
                xp = t.device.xp
                t.array = xp.asarray(value.array, copy=True)
                t._version[0] += 1

    def load_state_dict(self, state_dict: dict, strict: bool = True) -> IncompatibleKeys:
        """Copy parameters and buffers from ``state_dict`` into this module.

        Values are copied into the existing tensors (cast to their dtype and device), so
        optimizers keep working. Every problem is reported at once.

        Args:
            state_dict: a mapping from dotted names to tensors, as from ``state_dict()``.
            strict: require the keys to match exactly.

        Returns:
            ``(missing_keys, unexpected_keys)``.

        Raises:
            StateDictError: listing all missing and unexpected keys (when ``strict``) and
                all shape mismatches.
        """
        if not hasattr(state_dict, "keys"):
            raise TypeError(f"expected a mapping of names to tensors, got "
                            f"{type(state_dict).__name__}")
        missing: list[str] = []
        errors: list[str] = []
        expected: set[str] = set()
        for prefix, m in self.named_modules():
            p = prefix + "." if prefix else ""
            m._load_from_state_dict(state_dict, p, missing, errors)
            expected.update(p + n for n, v in m._parameters.items() if v is not None)
            expected.update(p + n for n, v in m._buffers.items()
                            if v is not None and n not in m._non_persistent_buffers_set)
        unexpected = [k for k in state_dict.keys() if k not in expected]
        msgs = []
        if strict:
            if unexpected:
                msgs.append("Unexpected key(s) in state_dict: "
                            + ", ".join(f'"{k}"' for k in unexpected) + ".")
            if missing:
                msgs.append("Missing key(s) in state_dict: "
                            + ", ".join(f'"{k}"' for k in missing) + ".")
        msgs += errors
        if msgs:
            raise StateDictError(f"Error(s) in loading state_dict for {type(self).__name__}:"
                                 "\n\t" + "\n\t".join(msgs) + "\n(pass strict=False to "
                                 "ignore missing and unexpected keys)")
        return IncompatibleKeys(missing, unexpected)

    # -- repr ----------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The text inside this module's ``repr`` parentheses; override in layers."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, m in self._modules.items():
            text = repr(m).replace("\n", "\n  ")
            lines.append(f"({name}): {text}")
        main = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


def _discard(d: dict, name: str, *stores: str) -> None:
    d.pop(name, None)  # a plain attribute of that name (e.g. set to None earlier) would shadow it
    for store in stores:
        s = d.get(store)
        if s is not None and name in s:
            del s[name]


__all__ = ["Module", "StateDictError", "RemovableHandle", "IncompatibleKeys"]
