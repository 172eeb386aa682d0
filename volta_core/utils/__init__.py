"""``vt.utils``: PyTorch's ``torch.utils`` names, so ``from volta_core.utils.data import
DataLoader`` works as ``from torch.utils.data import DataLoader`` does.

``vt.utils.data`` is :mod:`volta_core.data` under PyTorch's import path.
"""

from . import data

__all__ = ["data"]
