"""Optimizers and learning-rate schedulers (``import volta_core.optim as optim``).

Every optimizer's update is one extension kernel per parameter (``sgd_step``,
``adam_step``, ...; see :mod:`volta_core.optim.kernels`) so a backend can fuse it.
"""

from . import kernels, lr_scheduler, swa_utils  # noqa: F401
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .lion import Lion
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Muon", "lr_scheduler",
           "swa_utils"]
__all__ += ["Adadelta", "Adamax", "NAdam", "RAdam", "Lion", "LBFGS", "ASGD", "Rprop"]
