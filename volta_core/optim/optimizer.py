"""The ``Optimizer`` base class: parameter groups, state, ``zero_grad`` and state dicts.

A concrete optimizer is a small bookkeeping class: it creates its per-parameter state
lazily in ``step`` and calls ONE extension kernel per parameter (see
:mod:`volta_core.optim.kernels`), then writes the returned arrays back. State arrays
live on the parameter's device; step counts are Python ints (no host sync).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from ..autograd.grad_mode import enable_grad
from ..backend.kernels import get_kernel
from ..errors import GraphCaptureError
from ..replay import fixed_host_args, host_args
from ..tensor import Tensor

_REQUIRED = object()  # marks a hyper-parameter with no default (``SGD``'s lr in PyTorch 1.x)


class Optimizer:
    """Base class of all optimizers.

    Args:
        params: an iterable of Tensors, or of dicts each holding ``"params"`` (the
            tensors of one group) and per-group hyper-parameters overriding ``defaults``.
        defaults: the default hyper-parameters of every group.

    Attributes:
        param_groups: list of dicts, each with ``"params"`` and its hyper-parameters.
        state: per-parameter state (``{param: {name: value}}``).
        defaults: the defaults given to the constructor.
    """

    kernel_name: str = ""
    #: whether ``step`` may be captured in a CUDA graph (nothing is read from the host;
    #: Adam and AdamW need ``capturable=True`` for it)
    capture_safe: bool = False
    # whether ``_update`` calls its kernel inside ``self._host_args(p, group)`` (see there):
    # then a recorded step takes the group's lr live where the kernel does
    live_update: bool = False

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], defaults: dict) -> None:
        self.defaults = dict(defaults)
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        if isinstance(params, Tensor):
            raise TypeError(
                f"{type(self).__name__}: params should be an iterable of Tensors or dicts, "
                "got a single Tensor; pass [tensor] or model.parameters()")
        groups = list(params)
        if not groups:
            raise ValueError(f"{type(self).__name__} got an empty parameter list; pass "
                             "model.parameters() of a model that has parameters")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    # -- groups ------------------------------------------------------------------------
    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters, e.g. layers unfrozen during fine-tuning.

        Args:
            param_group: a dict with ``"params"`` and optional hyper-parameters; missing
                ones are taken from ``defaults``.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"{type(self).__name__}: a parameter group must be a dict, got "
                            f"{type(param_group).__name__}")
        group = dict(param_group)
        params = group.get("params")
        if params is None:
            raise ValueError(f"{type(self).__name__}: parameter group has no 'params' key")
        if isinstance(params, (set, frozenset)):
            raise TypeError(f"{type(self).__name__}: parameters must be an ordered collection "
                            "(a list or tuple), not a set, so state dicts map them back "
                            "reliably")
        params = [params] if isinstance(params, Tensor) else list(params)
        problems = []
        for i, p in enumerate(params):
            if not isinstance(p, Tensor):
                problems.append(f"params[{i}] is a {type(p).__name__}, not a Tensor")
            elif not p.is_leaf:
                problems.append(f"params[{i}] (shape {p.shape}) is not a leaf tensor; "
                                "optimize the leaf it was computed from, or .detach() it")
            elif not p.dtype.is_floating_point:
                problems.append(f"params[{i}] has dtype {p.dtype.name}; only floating-point "
                                "tensors can be optimized")
        if problems:
            raise TypeError(f"{type(self).__name__} cannot optimize: " + "; ".join(problems))
        if len({id(p) for p in params}) != len(params):
            raise ValueError(f"{type(self).__name__}: a parameter group holds the same tensor "
                             "twice; pass each parameter once")
        group["params"] = params
        missing = []
        for name, default in self.defaults.items():
            if name not in group:
                if default is _REQUIRED:
                    missing.append(name)
                group.setdefault(name, default)
        if missing:
            raise ValueError(f"{type(self).__name__}: parameter group lacks required "
                             f"hyper-parameter(s) {missing}")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError(f"{type(self).__name__}: some parameters appear in more than one "
                             "parameter group; each parameter may belong to one group only")
        self._check_group(group)
        self.param_groups.append(group)

    def _check_group(self, group: dict) -> None:
        """Validate a group's hyper-parameters (subclasses raise ``ValueError``)."""

    # -- stepping ----------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized parameters.

        Args:
            set_to_none: set ``.grad`` to None (saves memory, the default) instead of
                filling it with zeros.
        """
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    g = p.grad
                    g.grad_fn = None
                    g.requires_grad = False
                    g.array = p.device.xp.zeros_like(g.array)
                    g._version[0] += 1

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one optimization step.

        Args:
            closure: a function that re-evaluates the model and returns the loss
                (run with gradients enabled); optional for most optimizers.

        Returns:
            the closure's loss, or None.
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        self._check_capture()
        for group in self.param_groups:
            if self._step_group(group):
                continue
            if not self.live_update:
                fixed_host_args(group)  # its lr goes into the work as a constant
            for p in group["params"]:
                if p.grad is not None:
                    if p.dtype.itemsize == 2:  # float16 / bfloat16
                        self._update_low_precision(p, group)
                    else:
                        self._update(p, group)
        return loss

    def _check_capture(self) -> None:
        """Refuse a CUDA graph capture of a step that would freeze host values into it."""
        first = self.param_groups[0]["params"]
        if not first or first[0].device.type != "cuda":
            return
        graphs = getattr(first[0].device.backend, "graphs", None)
        if graphs is None or not graphs.is_capturing():
            return
        name = type(self).__name__
        if not self.capture_safe:
            raise GraphCaptureError(
                f"{name}.step() cannot be captured in a CUDA graph: its step counts and "
                "bias corrections are host values that a replay would not update; use "
                "SGD, or Adam/AdamW with capturable=True")
        if any("capturable" in g and not g["capturable"] for g in self.param_groups):
            raise GraphCaptureError(
                f"Attempting CUDA graph capture of step() for an instance of {name} but "
                "param_groups' capturable is False; construct it with capturable=True")
        if any(p.grad is not None and not self.state.get(p)
               for g in self.param_groups if g.get("momentum", 1) != 0  # SGD keeps none
               for p in g["params"]):
            raise GraphCaptureError(
                f"{name}.step() captured before its state exists: run a few eager steps "
                "(warm-up, on a side stream) before capturing, so that the state tensors "
                "are allocated outside the graph")

    def _update_low_precision(self, p: Tensor, group: dict) -> None:
        """``_update`` for a float16/bfloat16 parameter, keeping it and its state in its dtype.

        A kernel may compute in float32 (NumPy promotes ml_dtypes' bfloat16 with Python
        floats); as PyTorch does, the parameter and its state stay in the parameter's
        dtype, each step computed at higher precision and rounded once.
        """
        native = p.array.dtype
        self._update(p, group)
        xp = p.device.xp
        if p.array.dtype != native:
            p.array = xp.astype(p.array, native)
        for value in self.state[p].values():
            if isinstance(value, Tensor) and value.array.dtype != native \
                    and value.dtype.is_floating_point:
                value.array = xp.astype(value.array, native)

    def _step_group(self, group: dict) -> bool:
        """Update the whole group with one multi-tensor kernel, if the optimizer and the
        backend can; returns whether it did (else ``step`` updates parameter by parameter).

        The kernel call runs inside :class:`volta_core.compiler.host_args`, so that a
        replay of a recorded step (``vt.compile(mode="reduce-overhead")``) recomputes the
        arguments that change from step to step.
        """
        return False

    def _group_arrays(self, group: dict, *state_names: str) -> tuple | None:
        """``(params, [param arrays], [grad arrays], [state arrays] per name)`` of the
        group's parameters that have a gradient, or None when a multi-tensor step does
        not apply (no such parameter, several devices, a missing state, low precision)."""
        params = [p for p in group["params"] if p.grad is not None]
        if not params:
            return None
        dev = params[0].device
        states = [[] for _ in state_names]
        for p in params:
            if p.device is not dev or p.dtype.itemsize == 2 or p._owner is not None:
                return None
            state = self.state.get(p)
            for arrays, name in zip(states, state_names):
                value = None if state is None else state.get(name)
                if not isinstance(value, Tensor):
                    return None
                arrays.append(value.array)
        return (params, [p._data for p in params], [p.grad.array for p in params], *states)

    def _update(self, p: Tensor, group: dict) -> None:
        """Update one parameter that has a gradient (subclasses implement)."""
        raise NotImplementedError

    def _kernel_args(self, state: dict, group: dict) -> dict | None:
        """The host arguments of the per-parameter kernel for ``state`` as its step count
        is (None when that count is not a Python int); for ``live_update`` optimizers."""
        raise NotImplementedError

    def _host_args(self, p: Tensor, group: dict) -> host_args:
        """A :class:`~volta_core.replay.host_args` around ``p``'s kernel call: a replayed
        step (``vt.compile(mode="reduce-overhead")``) recomputes the kernel's arguments
        (bias corrections, a scheduler's lr) from the state with :meth:`_kernel_args`."""
        return host_args(lambda: self._kernel_args(self.state[p], group), group)

    def _kernel(self, p: Tensor) -> Callable:
        return get_kernel(p.device.backend, self.kernel_name)

    @staticmethod
    def _write(p: Tensor, new: Any) -> None:
        """Replace a parameter's values with the array ``new`` (no graph recorded)."""
        if new is not p._data and p.device.type == "cuda":
            graphs = getattr(p.device.backend, "graphs", None)
            if graphs is not None and graphs.is_capturing():
                raise GraphCaptureError(
                    f"optimizer step: parameter of shape {tuple(p.shape)} and dtype "
                    f"{p.dtype.name} is not updated in place on cuda (no fused kernel for "
                    "it), so a CUDA graph replay would not see the update; use float32 "
                    "parameters or step outside the graph")
        p.array = new
        p._version[0] += 1

    def _zeros(self, p: Tensor) -> Tensor:
        """A state tensor of zeros shaped like ``p``, on its device."""
        return Tensor._make(p.device.xp.zeros_like(p.array), p.device)

    def _step_state(self, p: Tensor, *buffers: str) -> dict[str, Any]:
        """``p``'s state with its ``step`` count advanced by one.

        On first use the state is created with ``step = 0`` and a zero tensor shaped like
        ``p`` under each name in ``buffers``.
        """
        state = self.state[p]
        if not state:
            state["step"] = 0
            for name in buffers:
                state[name] = self._zeros(p)
        state["step"] += 1
        return state

    # -- state dicts -------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Return the optimizer's state as ``{"state": ..., "param_groups": ...}``.

        As in PyTorch, parameters are replaced by their index (counted over all groups
        in order): ``state`` maps index to that parameter's state, and each group's
        ``"params"`` is a list of indices. Tensors in the state are not copied.
        """
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            ids = []
            for p in group["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            packed["params"] = ids
            groups.append(packed)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state returned by :meth:`state_dict` (from this or a fresh optimizer).

        Floating-point state tensors are copied to each parameter's device and dtype.
        The groups must match in number and size.
        """
        name = type(self).__name__
        if not isinstance(state_dict, dict) or not {"state", "param_groups"} <= state_dict.keys():
            raise ValueError(f"{name}.load_state_dict: expected a dict with 'state' and "
                             "'param_groups' (from Optimizer.state_dict())")
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups):
            raise ValueError(f"{name}.load_state_dict: the state dict has {len(saved)} "
                             f"parameter group(s), the optimizer {len(self.param_groups)}")
        sizes = [(len(g["params"]), len(s["params"])) for g, s in zip(self.param_groups, saved)]
        bad = [i for i, (a, b) in enumerate(sizes) if a != b]
        if bad:
            detail = ", ".join(f"group {i}: {sizes[i][1]} saved vs {sizes[i][0]}" for i in bad)
            raise ValueError(f"{name}.load_state_dict: parameter group sizes differ ({detail}); "
                             "the state dict belongs to a different model or grouping")
        id_map = {}
        for group, sgroup in zip(self.param_groups, saved):
            id_map.update(zip(sgroup["params"], group["params"]))
        state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        for key, value in state_dict["state"].items():
            key = int(key)
            if key not in id_map:
                raise ValueError(f"{name}.load_state_dict: state for parameter index {key} "
                                 "that no parameter group lists")
            p = id_map[key]
            state[p] = {k: _cast_state(k, v, p) for k, v in value.items()}
        self.state = state
        for group, sgroup in zip(self.param_groups, saved):
            for k, v in sgroup.items():
                if k == "params":
                    continue
                if isinstance(group.get(k, self.defaults.get(k)), tuple) and isinstance(v, list):
                    v = tuple(v)
                group[k] = v

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(group.items()) if k != "params"]
        return "\n".join(lines) + "\n)"


def _cast_state(key: str, value: Any, p: Tensor) -> Any:
    """A copy of one state value fit for ``p``: tensors moved to its device (and dtype)."""
    if key == "step":
        return int(value.item()) if isinstance(value, Tensor) else int(value)
    if not isinstance(value, Tensor):
        return value
    value = value.detach()
    if value.dtype.is_floating_point:
        value = value.to(p.device, p.dtype)
    else:
        value = value.to(p.device)
    return Tensor._make(p.device.xp.asarray(value.array, copy=True), p.device)


def check_range(opt: str, name: str, value: float, low: float = 0.0,
                high: float | None = None, high_open: bool = False) -> None:
    """Raise ``ValueError`` unless ``low <= value`` (and ``value <= high`` / ``< high``)."""
    ok = value >= low
    if high is not None:
        ok = ok and (value < high if high_open else value <= high)
    if not ok:
        bound = f"[{low}, {high}{')' if high_open else ']'}" if high is not None else f">= {low}"
        raise ValueError(f"{opt}: invalid {name} {value}; expected {bound}")


def check_betas(name: str, group: dict) -> None:
    """Validate ``lr``, ``eps``, ``weight_decay`` and ``betas`` of an Adam-like group."""
    check_range(name, "learning rate", group["lr"])
    check_range(name, "epsilon value", group["eps"])
    check_range(name, "weight_decay value", group["weight_decay"])
    b1, b2 = group["betas"]
    check_range(name, "beta parameter at index 0", b1, 0.0, 1.0, high_open=True)
    check_range(name, "beta parameter at index 1", b2, 0.0, 1.0, high_open=True)


__all__ = ["Optimizer"]
