"""``vt.utils``: PyTorch's ``torch.utils`` names, so ``from volta_core.utils.data import
DataLoader`` works as ``from torch.utils.data import DataLoader`` does.

``vt.utils.data`` is :mod:`volta_core.data` under PyTorch's import path;
``vt.utils.checkpoint`` is activation checkpointing.
"""

from . import checkpoint, data

__all__ = ["checkpoint", "data"]
