"""``GradScaler``: loss scaling for float16 training (and harmless with bfloat16).

Float16 gradients of small magnitude underflow to zero. The scaler multiplies the loss
by a large factor before ``backward``, divides the gradients by it before the optimizer
step (skipping the step when they hold an inf or NaN, and then lowering the factor), and
raises the factor again after ``growth_interval`` good steps. Example::

    scaler = vt.amp.GradScaler("cuda")
    for x, y in loader:
        opt.zero_grad()
        with vt.autocast("cuda"):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)                       # optional: to clip true gradients
        vt.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)                           # skipped if a gradient is inf/NaN
        scaler.update()
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from enum import Enum
from typing import Any

from ..backend.kernels import get_kernel
from ..errors import DTypeError
from ..tensor import Tensor
from . import kernels as _kernels  # noqa: F401 - registers the kernels' fallbacks


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state() -> dict[str, Any]:
    return {"stage": OptState.READY, "found_inf": None}


class GradScaler:
    """Scale the loss, unscale the gradients and skip steps that overflowed.

    Args:
        device: device type of the gradients (``"cuda"`` by default, as in PyTorch;
            ``"cpu"`` and ``"wgpu"`` work too). When that device type is unavailable
            the scaler warns and disables itself.
        init_scale: the first scale factor (default ``2**16``).
        growth_factor: factor applied after ``growth_interval`` steps without inf/NaN.
        backoff_factor: factor applied after a step with inf/NaN gradients.
        growth_interval: number of consecutive good steps before growing the scale.
        enabled: False makes every method a no-op (``scale`` returns its input).
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = str(device).split(":")[0]
        self._enabled = bool(enabled)
        if self._enabled and self._device != "cpu":
            from ..backend.accelerator import Accelerator

            if not Accelerator(self._device).is_available():
                warnings.warn(f"GradScaler is enabled, but {self._device} is not available; "
                              "disabling it", stacklevel=2)
                self._enabled = False
        if growth_factor <= 1.0:
            raise ValueError(f"GradScaler: growth_factor must be > 1, got {growth_factor}")
        if not 0.0 < backoff_factor < 1.0:
            raise ValueError(f"GradScaler: backoff_factor must be in (0, 1), got "
                             f"{backoff_factor}")
        if not isinstance(growth_interval, int) or growth_interval <= 0:
            raise ValueError(f"GradScaler: growth_interval must be a positive int, got "
                             f"{growth_interval!r}")
        self._init_scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        self._scale: Tensor | None = None  # 0-d float32 on the gradients' device
        self._growth_tracker: Tensor | None = None  # 0-d int32 on the same device
        self._per_optimizer_states: dict[int, dict[str, Any]] = {}

    # -- scaling -----------------------------------------------------------------------
    def _lazy_init(self, dev: Any) -> None:
        xp = dev.xp
        self._scale = Tensor._make(
            xp.asarray(self._init_scale, dtype=xp.float32, device=dev.native), dev)
        self._growth_tracker = Tensor._make(
            xp.asarray(self._init_growth_tracker, dtype=xp.int32, device=dev.native), dev)

    def scale(self, outputs: Any) -> Any:
        """Multiply ``outputs`` (a tensor, or nested lists/tuples of them) by the scale.

        Returns them unchanged when the scaler is disabled.
        """
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init(outputs.device)
            return outputs * self._scale_on(outputs)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        if isinstance(outputs, Iterable):
            return map(self.scale, outputs)
        raise TypeError(f"GradScaler.scale: outputs must be a Tensor or an iterable of "
                        f"Tensors, got {type(outputs).__name__}")

    def _scale_on(self, t: Tensor) -> Tensor:
        scale = self._scale
        if scale.device is not t.device:
            scale = scale.to(t.device)
        return scale if t.dtype is scale.dtype else scale.to(t.dtype)

    def _check_scale_growth_tracker(self, op: str) -> None:
        if self._scale is None:
            raise RuntimeError(f"GradScaler.{op}: no scale yet; call scale(loss) first "
                               "(it sets the scale up on the loss's device)")

    # -- unscaling ---------------------------------------------------------------------
    def _unscale_grads(self, optimizer: Any, inv_scale: Any, allow_fp16: bool) -> Any:
        """Unscale the optimizer's gradients in place; the 0-d found-inf array per device."""
        by_device: dict[Any, list[Tensor]] = {}
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if not allow_fp16 and g.dtype.name == "float16":
                    raise DTypeError("GradScaler: attempting to unscale float16 gradients; "
                                     "keep the parameters in float32 and let autocast cast "
                                     "them (float16 master weights are unsupported)")
                by_device.setdefault(g.device, []).append(g)
        found = None
        for dev, grads in by_device.items():
            inv = inv_scale if inv_scale.device is dev else inv_scale.to(dev)
            new, found_dev = get_kernel(dev.backend, "amp_unscale")(
                dev.xp, [g.array for g in grads], inv.array)
            for g, a in zip(grads, new):
                g.array = a
                g._version[0] += 1
            f = Tensor._make(found_dev, dev)
            found = f if found is None else found + f.to(found.device)
        if found is None:  # no gradients at all
            found = Tensor._make(
                self._scale.device.xp.zeros((), dtype=self._scale.device.xp.float32,
                                            device=self._scale.device.native),
                self._scale.device)
        return found

    def unscale_(self, optimizer: Any) -> None:
        """Divide ``optimizer``'s gradients by the scale, in place (for clipping them).

        Call it at most once per optimizer between ``update`` calls, before ``step``.
        """
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states.setdefault(id(optimizer), _fresh_state())
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update()")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step()")
        # float32 reciprocal: exact for the power-of-two scales the defaults produce
        inv_scale = Tensor._make(1.0 / self._scale.array, self._scale.device)
        state["found_inf"] = self._unscale_grads(optimizer, inv_scale, allow_fp16=False)
        state["stage"] = OptState.UNSCALED

    # -- stepping ----------------------------------------------------------------------
    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale the gradients (unless ``unscale_`` did) and step if they are finite.

        Returns what ``optimizer.step`` returns, or None when the step was skipped.
        """
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states.setdefault(id(optimizer), _fresh_state())
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        retval = None
        if not float(state["found_inf"].item()):  # the step's one host sync
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Update the scale after this iteration's ``step`` calls (see the class doc).

        Args:
            new_scale: set the scale to this value instead (a float or a 1-element tensor).
        """
        if not self._enabled:
            return
        self._check_scale_growth_tracker("update")
        dev = self._scale.device
        xp = dev.xp
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1:
                    raise ValueError("GradScaler.update: new_scale must have one element")
                arr = xp.reshape(new_scale.detach().to(dev, "float32").array, ())
            else:
                arr = xp.asarray(float(new_scale), dtype=xp.float32, device=dev.native)
            self._scale.array = arr
        else:
            founds = [s["found_inf"] for s in self._per_optimizer_states.values()
                      if s["found_inf"] is not None]
            if not founds:
                raise RuntimeError("GradScaler.update: no inf checks were recorded; call "
                                   "step(optimizer) (or unscale_) before update()")
            found = founds[0]
            for f in founds[1:]:
                found = found + f.to(found.device)
            scale, tracker = get_kernel(dev.backend, "amp_update_scale")(
                xp, self._scale.array, self._growth_tracker.array, found.to(dev).array,
                growth_factor=self._growth_factor, backoff_factor=self._backoff_factor,
                growth_interval=self._growth_interval)
            self._scale.array = scale
            self._growth_tracker.array = tracker
        self._per_optimizer_states = {}

    # -- getters and setters -----------------------------------------------------------
    def get_scale(self) -> float:
        """The current scale as a Python float (a host sync); 1.0 when disabled."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self) -> float:
        """The factor applied to the scale after ``growth_interval`` good steps."""
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        """Set the growth factor."""
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        """The factor applied to the scale after a step with inf/NaN gradients."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        """Set the backoff factor."""
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        """The number of good steps in a row after which the scale grows."""
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        """Set the growth interval."""
        self._growth_interval = int(new_interval)

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        if self._growth_tracker is None:
            return self._init_growth_tracker
        return int(self._growth_tracker.item())

    def is_enabled(self) -> bool:
        """Whether the scaler is on."""
        return self._enabled

    # -- checkpoints -------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """The scaler's state: ``scale``, ``growth_factor``, ``backoff_factor``,
        ``growth_interval`` and ``_growth_tracker`` (empty when disabled)."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state from :meth:`state_dict`."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._scale is not None:
            dev = self._scale.device
            xp = dev.xp
            self._scale.array = xp.asarray(self._init_scale, dtype=xp.float32,
                                           device=dev.native)
            self._growth_tracker.array = xp.asarray(self._init_growth_tracker,
                                                    dtype=xp.int32, device=dev.native)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self._enabled:
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = state["_growth_tracker"] = None
        state["_per_optimizer_states"] = {}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

