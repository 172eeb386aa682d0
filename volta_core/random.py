"""Random number generators: ``vt.Generator``, ``vt.default_generator`` and seeding.

Every device has a default generator (the backend's own, seeded by :func:`manual_seed`).
A :class:`Generator` object is an independent stream on one device, passed as
``generator=`` to the random functions (``rand``, ``randn``, ``randint``, ``randperm``,
``normal``, ``bernoulli``, ``multinomial``, the in-place ``uniform_``/``normal_``/...),
to samplers, ``random_split`` and ``DataLoader``, as in PyTorch. The streams are the
backend's (PCG64 on NumPy, Philox on wgpu), so the numbers differ from PyTorch's; the
seeding and state semantics are PyTorch's.
"""

from __future__ import annotations

import json
import os
from typing import Any

from .backend.device import Device
from .errors import DeviceError

_DEFAULT_SEED = 67280421310721  # PyTorch's initial seed of a fresh Generator
_seed = 0  # the seed of every device's default generator, set by manual_seed


def entropy_seed() -> int:
    """A 63-bit seed from the OS's entropy (``seed()`` and its per-device forms)."""
    return int.from_bytes(os.urandom(8), "little") >> 1


class Generator:
    """An independent, seedable random stream on one device (``torch.Generator``).

    Args:
        device: the device whose tensors it draws (``"cpu"``, ``"wgpu"``, ...).

    Example::

        >>> g = vt.Generator().manual_seed(0)
        >>> a = vt.rand(3, generator=g)
        >>> b = vt.rand(3, generator=vt.Generator().manual_seed(0))  # equal to a
    """

    def __init__(self, device: Any = "cpu") -> None:
        self.device = Device(device)
        self._native = self.device.backend.new_generator(self.device.index)
        self._initial = _DEFAULT_SEED
        self._native.manual_seed(self._initial)

    @classmethod
    def _of_device(cls, dev: Device, seed: int) -> Generator:
        """The default generator of ``dev`` (the backend's own stream)."""
        gen = object.__new__(cls)
        gen.device = dev
        gen._native = dev.backend.generator(dev.index)
        gen._initial = seed
        gen._native.manual_seed(seed)
        return gen

    def manual_seed(self, seed: int) -> Generator:
        """Reset the stream to the one of ``seed``; returns ``self``."""
        if isinstance(seed, bool) or not hasattr(seed, "__index__"):
            raise RuntimeError(f"manual_seed expected a long, but got "
                               f"{type(seed).__name__}")
        seed = int(seed)
        if not -(2 ** 63) <= seed < 2 ** 64:
            raise ValueError(f"Overflow when unpacking long long: seed {seed} must be in "
                             "[-2**63, 2**64)")
        seed %= 2 ** 64  # PyTorch keeps negative seeds as their unsigned 64-bit value
        self._initial = seed
        self._native.manual_seed(seed)
        return self

    def seed(self) -> int:
        """Seed the stream from the OS's entropy and return that seed."""
        seed = entropy_seed()
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        """The seed the stream was last seeded with."""
        return self._initial

    def get_state(self):
        """The stream's state as a ``uint8`` tensor (for :meth:`set_state`)."""
        from .creation import tensor
        from .dtypes import uint8

        blob = json.dumps({"seed": self._initial, "state": self._native.get_state()})
        return tensor(list(blob.encode()), dtype=uint8)

    def set_state(self, new_state: Any) -> Generator:
        """Restore a state returned by :meth:`get_state`; returns ``self``."""
        from .tensor import Tensor

        if not isinstance(new_state, Tensor) or new_state.dtype.name != "uint8":
            raise TypeError(f"RNG state must be a torch.ByteTensor (a uint8 tensor from "
                            f"get_state()), got {type(new_state).__name__}")
        try:
            blob = json.loads(bytes(new_state.tolist()).decode())
            self._native.set_state(blob["state"])
        except (ValueError, KeyError, TypeError) as e:
            raise RuntimeError(f"set_state: not a state of a {self.device.type} Generator "
                               f"from get_state() ({e})") from None
        self._initial = int(blob["seed"])
        return self

    def clone_state(self) -> Generator:
        """A new generator on the same device with this one's state."""
        return Generator(self.device).set_state(self.get_state())

    def __repr__(self) -> str:
        return f"<volta_core.Generator object on {self.device}>"


_defaults: dict[Device, Generator] = {}


def _default(dev: Device) -> Generator:
    gen = _defaults.get(dev)
    if gen is None:
        gen = _defaults[dev] = Generator._of_device(dev, _seed)
    return gen


def draw_from(op: str, generator: Generator | None, dev: Device):
    """The backend generator that ``op`` draws from on ``dev``: ``generator``'s if given
    (it must be on ``dev``'s device type), else the device's default."""
    if generator is None:
        return _default(dev)._native
    if not isinstance(generator, Generator):
        raise TypeError(f"{op}: generator must be a vt.Generator, got "
                        f"{type(generator).__name__}")
    if generator.device is not dev:
        raise DeviceError(f"{op}: expected a generator on {dev} (the device of the "
                           f"result), found one on {generator.device}; make it with "
                           f"vt.Generator(device='{dev}')")
    return generator._native


def manual_seed(seed: int) -> Generator:
    """Seed the default generators of every device (those created later too) and return
    the CPU's (``vt.default_generator``).

    Every device gets the same ``seed``, as in PyTorch: ``cuda:0`` and ``cuda:1`` draw the
    same numbers, so ranks that build a model from one seed start from the same weights.
    """
    global _seed
    gen = _default(Device("cpu")).manual_seed(seed)
    _seed = gen.initial_seed()
    for dev in set(Device._interned.values()):
        _default(dev).manual_seed(_seed)
    return gen


def seed_cpu(seed: int) -> None:
    """Seed only the CPU's default generator (a DataLoader worker: a GPU must not be
    touched in a forked child), so ``initial_seed()`` there is the worker's seed."""
    global _seed
    _seed = _default(Device("cpu")).manual_seed(seed).initial_seed()


def seed() -> int:
    """Seed every device's default generator from the OS's entropy; returns the seed."""
    s = entropy_seed()
    manual_seed(s)
    return s


def initial_seed() -> int:
    """The seed of the CPU's default generator (``vt.default_generator.initial_seed()``)."""
    return _seed


def get_rng_state():
    """The CPU default generator's state as a ``uint8`` tensor."""
    return _default(Device("cpu")).get_state()


def set_rng_state(new_state: Any) -> None:
    """Restore a state returned by :func:`get_rng_state`."""
    _default(Device("cpu")).set_state(new_state)


def default_generator() -> Generator:
    """The CPU's default generator (``vt.default_generator`` is this object)."""
    return _default(Device("cpu"))


__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
           "set_rng_state"]
