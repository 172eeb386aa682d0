"""Differentiable ops, grouped by kind. Importing this package attaches Tensor methods."""

from . import (  # noqa: F401
    bessel,
    bitwise,
    bucketing,
    closeness,
    cross_product,
    diagonals,
    differences,
    dims,
    division,
    elementwise,
    erfinv,
    float_parts,
    gamma_functions,
    grids,
    index_sets,
    index_update,
    indexing,
    inplace,
    integration,
    linalg,
    math,
    math_inplace,
    matrix_builders,
    movement,
    nan_reduce,
    order_stats,
    pairwise,
    quantiles,
    queries,
    reduce,
    sampling,
    scans,
    special,
    splitting,
    stacking,
    statistics,
    threshold,
    transfer,
    unique,
    windows,
)
from .aliases import *  # noqa: F401,F403 - other names of the ops (imports what it needs)
from .bessel import *  # noqa: F401,F403
from .bitwise import *  # noqa: F401,F403
from .bucketing import *  # noqa: F401,F403
from .closeness import *  # noqa: F401,F403
from .cross_product import *  # noqa: F401,F403
from .diagonals import *  # noqa: F401,F403
from .differences import *  # noqa: F401,F403
from .dims import *  # noqa: F401,F403
from .division import *  # noqa: F401,F403
from .elementwise import *  # noqa: F401,F403
from .erfinv import *  # noqa: F401,F403
from .float_parts import *  # noqa: F401,F403
from .gamma_functions import *  # noqa: F401,F403
from .grids import *  # noqa: F401,F403
from .index_sets import *  # noqa: F401,F403
from .index_update import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .inplace import *  # noqa: F401,F403
from .integration import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .lu import *  # noqa: F401,F403
from .lu import legacy_lu as lu  # noqa: F401 - torch.lu's (LU, pivots)
from .lu import legacy_lu_solve as lu_solve  # noqa: F401 - torch.lu_solve(b, LU, pivots)
from .math import *  # noqa: F401,F403
from .matrix_builders import *  # noqa: F401,F403
from .movement import *  # noqa: F401,F403
from .nan_reduce import *  # noqa: F401,F403
from .order_stats import *  # noqa: F401,F403
from .pairwise import *  # noqa: F401,F403
from .quantiles import *  # noqa: F401,F403
from .queries import *  # noqa: F401,F403
from .reduce import *  # noqa: F401,F403
from .sampling import *  # noqa: F401,F403
from .scans import *  # noqa: F401,F403
from .special import *  # noqa: F401,F403
from .spectral import *  # noqa: F401,F403
from .spectral import legacy_svd as svd  # noqa: F401 - torch.svd's (U, S, V)
from .splitting import *  # noqa: F401,F403
from .stacking import *  # noqa: F401,F403
from .statistics import *  # noqa: F401,F403
from .threshold import *  # noqa: F401,F403
from .unique import *  # noqa: F401,F403
from .view_scatter import *  # noqa: F401,F403
from .windows import *  # noqa: F401,F403
