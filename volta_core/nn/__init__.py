"""Neural-network modules, layers, losses and initialisation (``import volta_core.nn as nn``)."""

from . import functional, init, parallel, utils  # noqa: F401
from .activation import *  # noqa: F401,F403
from .adaptive_pooling import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .containers import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .conv3d import *  # noqa: F401,F403
from .ctc import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .embedding import *  # noqa: F401,F403
from .embedding_bag import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .instancenorm import *  # noqa: F401,F403
from .lazy import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .lp_pool import *  # noqa: F401,F403
from .margin_loss import *  # noqa: F401,F403
from .max_unpool import *  # noqa: F401,F403
from .module import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .parallel import DataParallel  # noqa: F401
from .parameter import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .pooling3d import *  # noqa: F401,F403
from .regression_loss import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .shape import *  # noqa: F401,F403
from .softmax import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403
