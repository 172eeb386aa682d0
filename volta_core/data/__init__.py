"""Datasets, samplers, the DataLoader, transforms and built-in datasets.

``from volta_core.data import DataLoader, TensorDataset`` (also ``vt.data.DataLoader``).
``transforms`` and ``datasets`` are submodules: ``vt.data.transforms.Normalize``.
"""

from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed import DistributedSampler
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from .worker import WorkerInfo, get_worker_info

__all__ = [
    "DataLoader", "Dataset", "IterableDataset", "ChainDataset", "TensorDataset", "Subset",
    "ConcatDataset", "StackDataset", "random_split", "Sampler", "SequentialSampler",
    "RandomSampler",
    "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler", "default_collate",
    "default_convert", "get_worker_info", "WorkerInfo", "DistributedSampler", "transforms",
    "datasets",
]


def __getattr__(name: str):
    if name in ("transforms", "datasets"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
