"""Differentiable ops, grouped by kind. Importing this package attaches Tensor methods."""

from . import (  # noqa: F401
    elementwise,
    extra,
    indexing,
    inplace,
    linalg,
    math,
    movement,
    reduce,
    transfer,
)
from .elementwise import *  # noqa: F401,F403
from .extra import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .inplace import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .math import *  # noqa: F401,F403
from .movement import *  # noqa: F401,F403
from .reduce import *  # noqa: F401,F403
