"""``volta_core.nn.functional``: the functional form of every layer and loss."""

from ..ops.elementwise import relu, sigmoid, tanh  # noqa: F401
from ..ops.threshold import threshold, threshold_  # noqa: F401
from .distance import cosine_similarity, normalize  # noqa: F401
from .functional_core import *  # noqa: F401,F403
from .functional_extra import *  # noqa: F401,F403
from .functional_seq import *  # noqa: F401,F403
