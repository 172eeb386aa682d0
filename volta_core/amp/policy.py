"""PyTorch's autocast op lists, per device type.

``LOWER`` ops cast their floating inputs to the autocast dtype (tensor-core work);
``FP32`` ops cast them up to float32 (accuracy-sensitive: exponentials, reductions,
losses); ``PROMOTE`` ops cast every floating input to the widest one among them;
``KEEP`` ops (the normalisations, whose float32 weights may meet a low-precision
input) compute in float32 and return the input's dtype, as PyTorch's mixed-dtype
kernels do; ``BANNED`` ops refuse to run under autocast. Float64 inputs are never cast.
The lists follow PyTorch 2.13's ``autocast_mode.cpp``: the CPU lists are shorter
(softmax, layer_norm, sum, exp... stay in the input's dtype on CPU).
"""

from __future__ import annotations

LOWER, FP32, PROMOTE, KEEP, BANNED = "lower", "fp32", "promote", "keep", "banned"

_LOWER_COMMON = (
    "matmul", "mm", "bmm", "baddbmm", "addmm", "addbmm", "linear", "conv1d", "conv2d",
    "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "prelu",
    "scaled_dot_product_attention",
)
_LOSSES = (
    "mse_loss", "cosine_embedding_loss", "nll_loss", "hinge_embedding_loss",
    "poisson_nll_loss", "smooth_l1_loss", "cross_entropy", "l1_loss", "huber_loss",
    "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
    "ctc_loss", "kl_div", "multilabel_margin_loss", "binary_cross_entropy_with_logits",
)
# batch_norm is on no list (as in PyTorch): it takes a low-precision input with float32
# parameters itself, computing in float32 and returning the input's dtype
_NORMS = ("layer_norm", "group_norm", "instance_norm", "rms_norm")

_CPU = {
    **dict.fromkeys(_LOWER_COMMON, LOWER),
    **dict.fromkeys(_LOSSES + ("binary_cross_entropy", "prod", "cdist", "trace"), FP32),
    **dict.fromkeys(("cat", "stack", "index_copy"), PROMOTE),
    **dict.fromkeys(_NORMS, KEEP),
}

_CUDA = {
    **dict.fromkeys(_LOWER_COMMON + ("mv", "addmv", "addr", "chain_matmul", "multi_dot",
                                     "lstm_cell", "gru_cell", "rnn_tanh_cell",
                                     "rnn_relu_cell"), LOWER),
    **dict.fromkeys(_LOSSES + (
        "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p",
        "reciprocal", "rsqrt", "sinh", "tan", "pow", "softplus", "layer_norm", "group_norm",
        "norm", "vector_norm", "matrix_norm", "cosine_similarity", "dist", "pdist", "cdist",
        "renorm", "logsumexp", "softmax", "log_softmax", "softmin", "cumprod", "cumsum",
        "sum", "prod"), FP32),
    **dict.fromkeys(("addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "grid_sample",
                     "index_put", "scatter_add", "tensordot", "cat", "stack", "index_copy"),
                    PROMOTE),
    **dict.fromkeys(("instance_norm", "rms_norm"), KEEP),
    "binary_cross_entropy": BANNED,
}

#: device type -> {op name: kind}; wgpu follows the CUDA lists (float16 tensor work)
POLICIES: dict[str, dict[str, str]] = {"cpu": _CPU, "cuda": _CUDA, "wgpu": _CUDA}

#: every op name that has a policy somewhere: only these get the autocast hook
HOOKED = frozenset(name for table in POLICIES.values() for name in table)
