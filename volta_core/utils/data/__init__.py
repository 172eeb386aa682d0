"""``volta_core.utils.data``: the classes of :mod:`volta_core.data` under PyTorch's path.

``from volta_core.utils.data import DataLoader, TensorDataset`` gives the very objects of
``vt.data`` (not copies), and PyTorch's submodule paths work too:
``volta_core.utils.data.dataloader``, ``.dataset``, ``.sampler``, ``.distributed``.
"""

import sys

from ...data import *  # noqa: F401,F403
from ...data import __all__, collate, dataloader, dataset, distributed, sampler, worker

# PyTorch's submodule import paths (``from torch.utils.data.sampler import Sampler``)
for _name, _module in (("dataloader", dataloader), ("dataset", dataset),
                       ("sampler", sampler), ("distributed", distributed),
                       ("_utils.collate", collate), ("_utils.worker", worker)):
    sys.modules.setdefault(f"{__name__}.{_name}", _module)


def __getattr__(name: str):
    from ... import data

    return getattr(data, name)
