"""CUDA implementations of Volta's extension kernels (fused where it pays).

Each entry has the signature and results of the generic fallback of the same name
(``volta_core.ops.nn``, ``ops.softmax``, ``ops._scatter``, ``ops.math``,
``optim.kernels``) and hands inputs it does not serve (other dtypes, odd shapes) back
to that fallback. ``muon_step`` and ``scatter`` keep the generic versions (cuBLAS
matmuls and a sort, already on the GPU).
"""

from __future__ import annotations

from types import SimpleNamespace

from . import (
    batch_norm,
    conv,
    cublaslt,
    cudnn_ops,
    fused,
    multi_tensor,
    norms,
    pool,
    rnn,
    rows,
    scatter,
)

KERNELS: dict = {
    "linear": cublaslt.linear,
    "linear_weight_bias_grad": cublaslt.linear_weight_bias_grad,
    "conv2d": conv.conv2d,
    "conv2d_backward": conv.conv2d_backward,
    "max_pool2d": pool.max_pool2d,
    "max_pool2d_backward": pool.max_pool2d_backward,
    "avg_pool2d": pool.avg_pool2d,
    "avg_pool2d_backward": pool.avg_pool2d_backward,
    "scatter_add": scatter.scatter_add,
    "index_add": scatter.index_add,
    "embedding_backward": scatter.embedding_backward,
    "softmax": rows.softmax,
    "log_softmax": rows.log_softmax,
    "cross_entropy": rows.cross_entropy,
    "cross_entropy_backward": rows.cross_entropy_backward,
    "weighted_mean": norms.weighted_mean,
    "layer_norm": rows.layer_norm,
    "layer_norm_backward": norms.layer_norm_backward,
    "softmax_backward": norms.softmax_backward,
    "sum_leading": norms.sum_leading,
    "channel_sum": norms.channel_sum,
    "batch_norm": batch_norm.batch_norm,
    "batch_norm_backward": batch_norm.batch_norm_backward,
    "batch_norm_running": batch_norm.batch_norm_running,
    "batch_norm_train": batch_norm.batch_norm_train,
    "dropout_mask": fused.dropout_mask,
    "dropout_forward": fused.dropout_forward,
    "dropout_backward": fused.dropout_backward,
    "erf": fused.erf,
    "gelu_erf": fused.gelu_erf,
    "gelu_erf_backward": fused.gelu_erf_backward,
    "relu": fused.relu,
    "relu_backward": fused.relu_backward,
    "tanh_backward": fused.tanh_backward,
    "sigmoid_backward": fused.sigmoid_backward,
    "lstm_steps": rnn.lstm_steps,
    "lstm_steps_backward": rnn.lstm_steps_backward,
    "gru_steps": rnn.gru_steps,
    "gru_steps_backward": rnn.gru_steps_backward,
    "rnn_steps": rnn.rnn_steps,
    "rnn_steps_backward": rnn.rnn_steps_backward,
    "sgd_step": fused.sgd_step,
    "sgd_step_multi": multi_tensor.sgd_step_multi,
    "adam_step_multi": multi_tensor.adam_step_multi,
    "adam_step": fused.adam_step,
    "rmsprop_step": fused.rmsprop_step,
    "adagrad_step": fused.adagrad_step,
    # cuDNN's fused (flash) attention; ``supported`` is False without cuDNN; cuDNN draws
    # the dropout mask inside the kernel
    "sdpa_flash": SimpleNamespace(supported=cudnn_ops.sdpa_supported, dropout=True,
                                  forward=cudnn_ops.sdpa_forward,
                                  backward=cudnn_ops.sdpa_backward),
}
