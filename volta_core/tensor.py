"""The Tensor: a backend array, its device, and autograd metadata."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .backend.device import Device
from .backend.device import device as _as_device
from .dtypes import DType, get_dtype
from .errors import AutogradError, DeviceError

_DTYPE_PREFIXES = ("float", "int", "uint", "bool", "bfloat", "complex", "half", "double")


class Tensor:
    """A multi-dimensional array on one device that can record operations for autograd.

    Tensors are made by creation functions (``vt.tensor``, ``vt.zeros``, ...) and by
    operations. ``array`` is the backend's array (a NumPy array on the CPU).

    Attributes:
        array: the backend array holding the values.
        device: the :class:`Device` the values live on.
        requires_grad: whether operations on this tensor are recorded.
        grad: the accumulated gradient of a leaf, or None.
        grad_fn: the autograd node that produced this tensor (None for leaves).
    """

    __slots__ = ("_data", "device", "requires_grad", "_grad", "grad_fn", "_version", "_hooks",
                 "_post_hooks", "_owner", "_view", "_seen", "_gen", "_moved", "__weakref__")
    __array_priority__ = 1000  # NumPy defers `ndarray + Tensor` to Tensor.__radd__

    def __init__(self, data: Any, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> None:
        from .creation import _array_from

        dev = _as_device(device)
        self._data = _array_from(data, dtype, dev)
        self._owner = None
        self._gen = 0
        self.device = dev
        self.requires_grad = False
        self._grad = None
        self.grad_fn = None
        self._version = [0]
        self._hooks = None
        self._post_hooks = None
        if requires_grad:
            self.requires_grad_(True)

    @property
    def grad(self) -> Tensor | None:
        """The gradient accumulated by ``backward()`` (None until then).

        Assigning it is checked as in PyTorch: a Tensor (or None) of this tensor's shape,
        dtype and device, and not the tensor itself.
        """
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            _check_grad(self, value)
        self._grad = value

    @staticmethod
    def _make(array: Any, device: Device, requires_grad: bool = False,
              grad_fn: Any = None) -> Tensor:
        """Wrap a backend array without copying or checking (the ops' fast path)."""
        t = object.__new__(Tensor)
        t._data = array
        t._owner = None
        t._gen = 0
        t.device = device
        t.requires_grad = requires_grad
        t._grad = None
        t.grad_fn = grad_fn
        t._version = [0]
        t._hooks = None
        t._post_hooks = None
        return t

    # -- values ------------------------------------------------------------------------
    @property
    def array(self) -> Any:
        """The backend array holding the values (re-derived first if this is a stale view).

        Assigning replaces the values: a tensor that is not a view takes the new array; a
        view writes it into its base (see :mod:`volta_core.views`).
        """
        base = self._owner
        if base is not None and (self._seen != base._gen or base._owner is not None):
            _views().refresh(self)
        return self._data

    @array.setter
    def array(self, value: Any) -> None:
        if self._owner is None:
            self._data = value
            self._gen += 1
        else:
            _views().assign(self, Tensor._make(value, self.device), False)

    # -- metadata ----------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """The size of each dimension, as a tuple of ints."""
        return tuple(self._data.shape)  # a view's shape and dtype never go stale

    def size(self, dim: int | None = None):
        """Return the shape, or the size of dimension ``dim``."""
        shape = self.shape
        return shape if dim is None else shape[dim]

    @property
    def dtype(self) -> DType:
        """The element type, a :class:`volta_core.DType`."""
        native = self._data.dtype
        d = self.device._dtypes.get(native)  # the device's cache, read inline: a hot path
        return d if d is not None else self.device.volta_dtype(native)

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self._data.shape)

    def dim(self) -> int:
        """Number of dimensions."""
        return len(self._data.shape)

    def numel(self) -> int:
        """Number of elements."""
        n = 1
        for s in self._data.shape:
            n *= s
        return n

    @property
    def is_leaf(self) -> bool:
        """True for tensors not produced by a recorded operation."""
        return self.grad_fn is None

    def is_floating_point(self) -> bool:
        """True if the dtype is a floating one (a method, as PyTorch's)."""
        return self.dtype.is_floating_point

    @property
    def data(self) -> Tensor:
        """A detached tensor sharing this tensor's values (assigning replaces them).

        Unlike :meth:`detach`, its version counter is its own, as in PyTorch: in-place
        changes through ``.data`` are invisible to autograd's modification check.
        """
        t = self._alias()
        t._version = [0]
        return t

    @data.setter
    def data(self, other: Tensor) -> None:
        if other.device is not self.device:
            raise DeviceError(f"cannot assign .data on {other.device} to a tensor on "
                              f"{self.device}; call .to('{self.device}') first")
        _views().rebind(self, other)

    def _alias(self) -> Tensor:
        """A tensor sharing this one's values but not its history (detach, .data)."""
        return _views().make_alias(Tensor._make(self.array, self.device), self)

    @property
    def _base(self) -> Tensor | None:
        """The tensor this one is a view of, as PyTorch reports it (None if no view)."""
        owner = self._owner
        if owner is None or self._view.alias:
            return None
        origin = self._view.origin
        return owner if origin is None else origin

    def stride(self, dim: int | None = None):
        """Elements to step in memory per step along each dim (PyTorch's strides)."""
        strides = _views().layout(self)[0]
        return strides if dim is None else strides[dim]

    def storage_offset(self) -> int:
        """Position of the first element in the memory shared with the base."""
        return _views().layout(self)[1]

    def _is_view(self) -> bool:
        """True if this tensor is a view sharing its values with a base tensor."""
        return self._base is not None

    # -- conversion --------------------------------------------------------------------
    def numpy(self):
        """Return the values as a NumPy array (shares memory on the CPU)."""
        if self.requires_grad:
            raise AutogradError("can't call numpy() on a tensor that requires grad; "
                                "use tensor.detach().numpy() instead")
        return self.device.backend.to_host(self.array)

    def item(self) -> float | int | bool:
        """Return the single value of a one-element tensor as a Python number."""
        if self.numel() != 1:
            raise ValueError(f"item(): a tensor with {self.numel()} elements cannot be "
                             "converted to a Python scalar")
        return self.device.backend.to_host(self.array).reshape(()).item()

    def tolist(self) -> Any:
        """Return the values as (nested) Python lists of numbers."""
        return self.device.backend.to_host(self.array).tolist()

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """Return a copy on another device and/or of another dtype (self if unchanged).

        Accepts ``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(other_tensor)``
        and the keywords ``device=``, ``dtype=``, ``non_blocking=`` (copies are ordered on
        the device's stream either way), ``copy=`` (a new tensor even when nothing
        changes) and ``memory_format=`` (every tensor is row-major). Differentiable.
        """
        dev, dt = kwargs.pop("device", None), kwargs.pop("dtype", None)
        copy = kwargs.pop("copy", False)
        kwargs.pop("non_blocking", None)
        kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"to() got unexpected arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, Tensor):
                dev, dt = a.device, a.dtype
            elif isinstance(a, DType) or a in (float, int, bool):
                dt = a
            else:
                try:
                    dt = get_dtype(a)
                except TypeError:
                    if isinstance(a, str) and a.startswith(_DTYPE_PREFIXES):
                        raise  # "float128" is an unknown dtype, not a device
                    dev = a
        out = self
        if dev is not None and Device(dev) is not self.device:
            from .ops.transfer import to_device

            out = to_device(out, Device(dev))
        if dt is not None and get_dtype(dt) is not out.dtype:
            from .ops.elementwise import cast

            out = cast(out, get_dtype(dt))
        return out.clone() if copy and out is self else out

    def cpu(self, memory_format: Any = None) -> Tensor:
        """Return a copy on the CPU (self if already there)."""
        return self.to("cpu")

    def cuda(self, device: Any = None, non_blocking: bool = False,
             memory_format: Any = None) -> Tensor:
        """Return a copy on ``cuda:device`` (an index, ``"cuda:1"`` or a device; the
        current one when None)."""
        return self.to(cuda_device(device))

    def type_as(self, other: Tensor) -> Tensor:
        return self.to(other.dtype)

    @property
    def is_cuda(self) -> bool:
        """True if the tensor is on a ``cuda`` device."""
        return self.device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        """True if the tensor is on the CPU."""
        return self.device.type == "cpu"

    def type(self, dtype: Any = None, non_blocking: bool = False) -> Any:
        """With no argument, the type's name (``"torch.FloatTensor"``, as PyTorch spells
        it, so code comparing names keeps working); else a copy cast to ``dtype`` (a
        dtype, a typed-tensor class such as ``vt.LongTensor``, or its name)."""
        from .typed_tensors import tensor_type, type_name

        if dtype is None:
            return type_name(self)
        return self.to(tensor_type(dtype))

    def __format__(self, spec: str) -> str:
        # as PyTorch: a 0-d tensor formats like its Python number; others only with ""
        if self.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        # np.asarray(t): the CPU values (refused with requires_grad, as numpy() is)
        array = self.numpy()
        return array if dtype is None else array.astype(dtype, copy=False)

    # -- autograd ----------------------------------------------------------------------
    def detach(self) -> Tensor:
        """Return a tensor sharing the values but cut off from the graph."""
        return self._alias()

    def detach_(self) -> Tensor:
        """Cut this tensor off the graph in place (refused for a view, as in PyTorch)."""
        if self._base is not None:
            raise AutogradError(f"detach_(): can't detach a view (shape {self.shape}) in "
                                "place, as its history follows its base's; use detach()")
        self.grad_fn = None
        self.requires_grad = False
        return self

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set whether autograd records operations on this leaf; returns self."""
        if not self.is_leaf and not requires_grad:
            raise AutogradError("requires_grad_(False) on a non-leaf tensor; use detach()")
        if requires_grad and not self.dtype.is_floating_point:
            raise AutogradError(f"only floating-point tensors can require gradients, "
                                f"got dtype {self.dtype.name}; convert with .float() first")
        self.requires_grad = requires_grad
        return self

    def backward(self, gradient: Tensor | None = None, retain_graph: bool = False,
                 create_graph: bool = False, inputs: Any = None) -> None:
        """Accumulate the gradient of this tensor into the ``.grad`` of the leaves.

        Args:
            gradient: the gradient w.r.t. this tensor; may be omitted for a scalar.
            retain_graph: keep the graph so backward can run through it again.
            create_graph: record the backward pass, for higher-order gradients.
            inputs: if given, accumulate only into these leaves.
        """
        from .autograd.engine import backward

        self.array  # noqa: B018 - a stale view takes its base's history first
        backward([self], None if gradient is None else [gradient], retain_graph,
                 create_graph, inputs)

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> HookHandle:
        """Call ``hook(grad)`` when this tensor's gradient is computed.

        The hook may return a replacement gradient. Returns a handle whose ``remove()``
        unregisters it.
        """
        if not self.requires_grad:
            raise AutogradError("cannot register a hook on a tensor that doesn't require grad")
        if self.grad_fn is not None:
            hooks = self.grad_fn.hooks
            if hooks is None:
                hooks = self.grad_fn.hooks = []
        else:
            if self._hooks is None:
                self._hooks = []
            hooks = self._hooks
        hooks.append(hook)
        return HookHandle(hooks, hook)

    def register_post_accumulate_grad_hook(self, hook: Callable[[Tensor], None]
                                           ) -> HookHandle:
        """Call ``hook(tensor)`` right after backward has accumulated this leaf's ``.grad``.

        It runs as soon as the leaf's gradient is final, while the rest of backward may
        still be running (DistributedDataParallel starts its all-reduces from it).
        Returns a function removing the hook.
        """
        if self.grad_fn is not None:
            raise AutogradError("post-accumulate-grad hooks can only be registered on leaves")
        if self._post_hooks is None:
            self._post_hooks = []
        hooks = self._post_hooks
        hooks.append(hook)
        return HookHandle(hooks, hook)

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward."""
        if self.grad_fn is not None:
            import weakref

            self.grad_fn.retained = weakref.ref(self)

    # -- Python protocol ---------------------------------------------------------------
    def __len__(self) -> int:
        if not self.array.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.array.shape[0]

    def __iter__(self):
        if not self.array.shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.array.shape[0]))

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise ValueError(f"the truth value of a tensor with {self.numel()} elements is "
                             "ambiguous; use .any() or .all()")
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be used as an index")
        return int(self.item())

    def __hash__(self) -> int:
        return id(self)

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        """Export the values through DLPack (zero-copy; see ``vt.from_dlpack``)."""
        if self.requires_grad:
            raise AutogradError("can't export a tensor that requires grad through DLPack; "
                                "use tensor.detach()")
        return self.array.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.array.__dlpack_device__()

    def __repr__(self) -> str:
        from .printing import format_host

        body = format_host(self.device.backend.to_host(self.array))
        body = body[body.index("(") + 1:-1]
        for key in ("dtype=", "shape="):  # NumPy's ", dtype=..." and a summary's ", shape="
            cut = body.rfind(key)
            if cut > body.rfind("]"):  # (on a line of its own when the values wrap)
                body = body[:cut].rstrip().rstrip(",")
        body = body.replace("\n", "\n ")
        extras = []
        if self.device.type != "cpu":
            extras.append(f"device='{self.device}'")
        dt = self.dtype
        if dt.name not in ("float32", "int64", "bool") or self.numel() == 0:
            extras.append(f"dtype={dt!r}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{type(self.grad_fn).__name__}Backward>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + ", ".join([body, *extras]) + ")"


_views_module = None


def _views():
    """The :mod:`volta_core.views` module (imported late: it imports this one)."""
    global _views_module
    if _views_module is None:
        from . import views

        _views_module = views
    return _views_module


class HookHandle:
    """Returned by ``register_hook``: ``remove()`` unregisters the hook (calling works too)."""

    __slots__ = ("_hooks", "_hook")

    def __init__(self, hooks: list, hook: Callable) -> None:
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)

    __call__ = remove


def cuda_device(device: Any = None) -> Any:
    """The device ``Tensor.cuda(device)`` / ``Module.cuda(device)`` move to: ``"cuda"``
    for None, ``cuda:i`` for an index, else ``device`` itself."""
    if device is None:
        return "cuda"
    return f"cuda:{device}" if isinstance(device, int) else device


def tensor_method(*names: str) -> Callable[[Callable], Callable]:
    """Attach the decorated function to :class:`Tensor` under ``names`` (or its own).

    Op modules use this so that each op's function and method are defined once, next
    to the op, without editing this file.
    """

    def attach(fn: Callable) -> Callable:
        for name in names or (fn.__name__,):
            setattr(Tensor, name, fn)
        return fn

    return attach


def _check_grad(t: Tensor, g: Any) -> None:
    """PyTorch's checks on ``t.grad = g``: type, identity, shape, dtype, device."""
    from .errors import DTypeError, ShapeError

    if not isinstance(g, Tensor):
        raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                        f"{type(g).__name__}")
    if g is t:
        raise AutogradError("can't assign a tensor as its own grad")
    if g.shape != t.shape:
        raise ShapeError(f"attempting to assign a gradient of shape {g.shape} to a tensor of "
                         f"shape {t.shape}; the gradient must have the tensor's shape")
    if g.dtype is not t.dtype:
        raise DTypeError(f"attempting to assign a gradient of dtype {g.dtype.name} to a tensor "
                         f"of dtype {t.dtype.name}; convert it with .to({t.dtype.name})")
    if g.device is not t.device:
        raise DeviceError(f"attempting to assign a gradient on {g.device} to a tensor on "
                          f"{t.device}; move it with .to('{t.device}')")
