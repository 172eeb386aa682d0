"""The MPI communication engine for Volta (CPU tensors through mpi4py).

Registered under the entry-point group ``volta.comm`` as ``mpi``; install with
``pip install 'volta[mpi]'`` (mpi4py plus Open MPI's wheel) and launch jobs with
``mpirun -n N python script.py``.
"""

from .engine import MpiEngine, MpiProcessGroup

__all__ = ["MpiEngine", "MpiProcessGroup"]
