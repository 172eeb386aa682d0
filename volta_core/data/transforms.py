"""Image transforms for datasets: ``Compose``, ``ToTensor``, ``Normalize``, flips, crops.

Images are channels-first, ``(..., C, H, W)``, either tensors (on any device) or NumPy
arrays; a transform returns the same kind it was given. :class:`ToTensor` is the
exception: it turns an ``(H, W, C)`` or ``(H, W)`` NumPy image into a ``(C, H, W)``
tensor, so it comes first.

Random transforms draw from Volta's CPU generator (``vt.rand``/``vt.randint`` on
``"cpu"``), so they are reproducible under ``vt.manual_seed``; in DataLoader workers,
each worker's generator is seeded with its own seed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..backend.device import Device
from ..creation import rand, randint
from ..tensor import Tensor


def _unwrap(img: Any) -> tuple[Any, Any, Callable[[Any], Any]]:
    """(xp, array, rewrap) for a tensor or a NumPy array."""
    if isinstance(img, Tensor):
        dev = img.device
        return dev.xp, img.array, lambda a: Tensor._make(a, dev)
    if hasattr(img, "__array_interface__") and hasattr(img, "shape"):
        xp = Device("cpu").xp
        return xp, xp.asarray(img), lambda a: a
    raise TypeError(f"expected an image tensor or NumPy array, got {type(img).__name__}")


def _check_chw(name: str, arr: Any) -> None:
    if len(arr.shape) < 2:
        raise ValueError(f"{name}: expected an image of shape (..., H, W), got shape "
                         f"{tuple(arr.shape)}")


class Compose:
    """Apply transforms one after the other.

    Args:
        transforms: the transforms, in order.

    Example::

        >>> t = Compose([ToTensor(), Normalize((0.5,), (0.5,))])
    """

    def __init__(self, transforms: Sequence[Callable[[Any], Any]]) -> None:
        self.transforms = list(transforms)

    def __call__(self, img: Any) -> Any:
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self) -> str:
        body = "".join(f"\n    {t!r}," for t in self.transforms)
        return f"{type(self).__name__}({body}\n)"


class ToTensor:
    """Turn an ``(H, W, C)`` or ``(H, W)`` NumPy image into a ``(C, H, W)`` CPU tensor.

    ``uint8`` images are scaled to float32 in ``[0, 1]``; other dtypes are kept unscaled,
    as in torchvision.
    """

    def __call__(self, pic: Any) -> Tensor:
        if isinstance(pic, Tensor) or not hasattr(pic, "__array_interface__"):
            raise TypeError(f"ToTensor: expected a NumPy array of shape (H, W, C) or (H, W), "
                            f"got {type(pic).__name__}")
        if len(pic.shape) not in (2, 3):
            raise ValueError(f"ToTensor: expected an image of shape (H, W, C) or (H, W), got "
                             f"shape {tuple(pic.shape)}")
        dev = Device("cpu")
        xp = dev.xp
        arr = xp.asarray(pic)
        arr = arr[:, :, None] if arr.ndim == 2 else arr
        arr = xp.permute_dims(arr, (2, 0, 1))
        if arr.dtype == xp.uint8:
            arr = xp.astype(arr, xp.float32) / 255.0
        else:
            arr = xp.asarray(arr, copy=True)
        return Tensor._make(arr, dev)

    def __repr__(self) -> str:
        return "ToTensor()"


class Normalize:
    """Normalise each channel: ``out[c] = (img[c] - mean[c]) / std[c]``.

    Args:
        mean: the per-channel means.
        std: the per-channel standard deviations (non-zero).
        inplace: write into the input (float arrays/tensors only).
    """

    def __init__(self, mean: Sequence[float], std: Sequence[float],
                 inplace: bool = False) -> None:
        self.mean = [float(m) for m in (mean if isinstance(mean, Sequence) else [mean])]
        self.std = [float(s) for s in (std if isinstance(std, Sequence) else [std])]
        if any(s == 0 for s in self.std):
            raise ValueError(f"Normalize: std evaluated to zero in {self.std}, leading to "
                             "division by zero")
        self.inplace = inplace

    def __call__(self, img: Any) -> Any:
        xp, arr, wrap = _unwrap(img)
        if len(arr.shape) < 3:
            raise ValueError(f"Normalize: expected an image of shape (..., C, H, W), got "
                             f"shape {tuple(arr.shape)}")
        if not xp.isdtype(arr.dtype, "real floating"):
            raise TypeError(f"Normalize: expected a floating image, got {arr.dtype}; "
                            "apply ToTensor() first")
        c = arr.shape[-3]
        mean, std = self.mean, self.std
        if len(mean) == 1:
            mean = mean * c
        if len(std) == 1:
            std = std * c
        if len(mean) != c or len(std) != c:
            raise ValueError(f"Normalize: {len(mean)} means and {len(std)} stds for an "
                             f"image of {c} channels")
        dev = getattr(arr, "device", None)
        m = xp.reshape(xp.asarray(mean, dtype=arr.dtype, device=dev), (c, 1, 1))
        s = xp.reshape(xp.asarray(std, dtype=arr.dtype, device=dev), (c, 1, 1))
        out = (arr - m) / s
        if self.inplace:
            if isinstance(img, Tensor):  # an in-place op: rebind (arrays may be shared)
                img.array = out
                img._version[0] += 1
            else:
                arr[...] = out
            return img
        return wrap(out)

    def __repr__(self) -> str:
        return f"Normalize(mean={self.mean}, std={self.std})"


class RandomHorizontalFlip:
    """Flip the image left-right (its last axis) with probability ``p``.

    Args:
        p: the probability of a flip.
    """

    def __init__(self, p: float = 0.5) -> None:
        self.p = p

    def __call__(self, img: Any) -> Any:
        xp, arr, wrap = _unwrap(img)
        _check_chw("RandomHorizontalFlip", arr)
        if rand(1, device="cpu").item() < self.p:
            return wrap(xp.flip(arr, axis=-1))
        return img

    def __repr__(self) -> str:
        return f"RandomHorizontalFlip(p={self.p})"


def _pair(size: int | Sequence[int], name: str) -> tuple[int, int]:
    if isinstance(size, int):
        return size, size
    if len(size) == 1:
        return int(size[0]), int(size[0])
    if len(size) == 2:
        return int(size[0]), int(size[1])
    raise ValueError(f"{name}: expected an int or (height, width), got {size!r}")


class RandomCrop:
    """Crop a random ``size`` window, after optional zero (``fill``) padding.

    Args:
        size: the crop's ``(height, width)``, or an int for a square.
        padding: padding of the borders first: an int (all sides), ``(left/right,
            top/bottom)`` or ``(left, top, right, bottom)``, as in torchvision.
        pad_if_needed: pad images smaller than ``size`` up to it.
        fill: the padding value.
        padding_mode: only ``"constant"`` is supported.
    """

    def __init__(self, size: int | Sequence[int], padding: int | Sequence[int] | None = None,
                 pad_if_needed: bool = False, fill: float = 0,
                 padding_mode: str = "constant") -> None:
        self.size = _pair(size, "RandomCrop")
        if padding_mode != "constant":
            raise ValueError(f"RandomCrop: padding_mode {padding_mode!r} is not supported; "
                             "use 'constant'")
        if padding is None:
            self.padding = (0, 0, 0, 0)
        elif isinstance(padding, int):
            self.padding = (padding,) * 4
        elif len(padding) == 2:
            self.padding = (padding[0], padding[1], padding[0], padding[1])
        elif len(padding) == 4:
            self.padding = tuple(int(p) for p in padding)  # type: ignore[assignment]
        else:
            raise ValueError(f"RandomCrop: padding must be an int or 2 or 4 ints, got "
                             f"{padding!r}")
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    @staticmethod
    def _pad(xp: Any, arr: Any, pad: tuple[int, ...], fill: float) -> Any:
        left, top, right, bottom = pad
        if not any(pad):
            return arr
        *lead, h, w = arr.shape
        out = xp.full((*lead, h + top + bottom, w + left + right), fill, dtype=arr.dtype,
                      device=getattr(arr, "device", None))
        out[..., top:top + h, left:left + w] = arr
        return out

    def __call__(self, img: Any) -> Any:
        xp, arr, wrap = _unwrap(img)
        _check_chw("RandomCrop", arr)
        arr = self._pad(xp, arr, self.padding, self.fill)
        th, tw = self.size
        h, w = arr.shape[-2:]
        if self.pad_if_needed and (h < th or w < tw):
            dh, dw = max(th - h, 0), max(tw - w, 0)
            arr = self._pad(xp, arr, (dw, dh, dw, dh), self.fill)
            h, w = arr.shape[-2:]
        if h < th or w < tw:
            raise ValueError(f"RandomCrop: crop size {(th, tw)} is larger than the (padded) "
                             f"image size {(h, w)}")
        i = randint(0, h - th + 1, (1,), device="cpu").item()
        j = randint(0, w - tw + 1, (1,), device="cpu").item()
        return wrap(arr[..., i:i + th, j:j + tw])

    def __repr__(self) -> str:
        return f"RandomCrop(size={self.size}, padding={self.padding})"


class Lambda:
    """Apply a user function as a transform.

    Args:
        lambd: the function.
    """

    def __init__(self, lambd: Callable[[Any], Any]) -> None:
        if not callable(lambd):
            raise TypeError(f"Lambda: expected a callable, got {type(lambd).__name__}")
        self.lambd = lambd

    def __call__(self, img: Any) -> Any:
        return self.lambd(img)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


__all__ = ["Compose", "ToTensor", "Normalize", "RandomHorizontalFlip", "RandomCrop", "Lambda"]
