"""Cases of the functional forms of layers (``nn.functional.conv2d`` and friends).

Weights are ordinary inputs here, so their gradients are compared like any input's.
"""

from __future__ import annotations

import volta_core as vt

from ..case import FLOAT, Arg, OpCase


def F(name: str, tag: str, *args: Arg, fn=None, tol: float = 1.0, **kwargs) -> OpCase:
    """A case of ``nn.functional.<name>``."""
    return OpCase(f"nn.functional.{name}/{tag}", f"nn.functional.{name}", FLOAT, tol=tol,
                  args=args, fn=fn, kwargs=kwargs)


def X(*shape: int, low: float = -1.0, high: float = 1.0, view: str | None = None,
      grad: bool = True) -> Arg:
    return Arg(tuple(shape), low, high, view=view, grad=grad)


def _f():
    return vt.nn.functional


def _grid_indices(offset, rows: int, cols: int, k: int):
    """Flat indices of the top-left corner of each ``k x k`` window (plus ``offset``)."""
    corners = [[r * k * cols * k + c * k for c in range(cols)] for r in range(rows)]
    return offset + vt.tensor(corners, device=offset.device)


def _with_diagonal(mask):
    """A boolean attention mask where every query sees at least one key."""
    return vt.logical_or(mask, vt.eye(*mask.shape, dtype="bool", device=mask.device))


VAR = X(3, low=0.5, high=1.5, grad=False)  # a running variance


CASES: list = [
    F("linear", "basic", X(4, 5), X(3, 5), X(3)),
    F("linear", "nobias", X(2, 4, 5), X(3, 5)),
    F("bilinear", "basic", X(4, 3), X(4, 2), X(5, 3, 2), X(5)),
    F("conv2d", "basic", X(2, 3, 6, 5), X(4, 3, 3, 3), X(4)),
    F("conv2d", "stride_pad_dilation", X(1, 2, 9, 8), X(3, 2, 3, 2), stride=2, padding=1,
      dilation=(2, 1)),
    F("conv2d", "groups", X(2, 4, 5, 5), X(6, 2, 3, 3), groups=2),
    F("conv2d", "permuted", X(1, 2, 5, 5, view="T"), X(3, 2, 3, 3)),
    F("conv1d", "basic", X(2, 3, 8), X(4, 3, 3), X(4), padding=1),
    F("conv_transpose2d", "basic", X(2, 3, 4, 4), X(3, 2, 3, 3), X(2), stride=2, padding=1,
      output_padding=1),
    F("max_pool2d", "basic", X(2, 3, 6, 6), kernel_size=2),
    F("max_pool2d", "ceil", X(1, 2, 7, 7), kernel_size=3, stride=2, padding=1, ceil_mode=True),
    F("max_pool1d", "basic", X(2, 3, 9), kernel_size=3, stride=2),
    F("avg_pool2d", "basic", X(2, 3, 6, 6), kernel_size=2),
    F("avg_pool2d", "no_pad_count", X(1, 2, 7, 7), kernel_size=3, stride=2, padding=1,
      count_include_pad=False),
    F("adaptive_avg_pool2d", "basic", X(2, 3, 7, 5), output_size=(3, 2)),
    F("batch_norm", "train", X(4, 3, 2), X(3, grad=False), VAR, X(3), X(3),
      fn=lambda x, m, v, w, b: _f().batch_norm(x, m * 1, v * 1, w, b, training=True)),
    F("batch_norm", "eval", X(4, 3), X(3, grad=False), VAR, X(3), X(3),
      fn=lambda x, m, v, w, b: _f().batch_norm(x, m, v, w, b, training=False)),
    F("layer_norm", "basic", X(3, 4, 5), X(5), X(5), fn=lambda x, w, b: _f().layer_norm(
        x, (5,), w, b)),
    F("group_norm", "basic", X(2, 4, 3, 3), X(4), X(4),
      fn=lambda x, w, b: _f().group_norm(x, 2, w, b)),
    F("rms_norm", "basic", X(3, 4, 5), X(5), fn=lambda x, w: _f().rms_norm(x, (5,), w)),
    F("embedding", "basic", Arg((2, 5), 0, 7, kind="index"), X(7, 3)),
    F("embedding", "padding_idx", Arg((3, 4), 0, 7, kind="index"), X(7, 3), padding_idx=0),
    F("interpolate", "nearest", X(2, 3, 4, 4), scale_factor=2),
    F("interpolate", "bilinear", X(2, 3, 4, 5), size=(7, 9), mode="bilinear"),
    F("interpolate", "bilinear_corners", X(1, 2, 3, 4), scale_factor=2, mode="bilinear",
      align_corners=True),
    F("pixel_shuffle", "basic", X(2, 8, 3, 3), fn=lambda x: _f().pixel_shuffle(x, 2)),
    F("pixel_unshuffle", "basic", X(2, 2, 4, 6), fn=lambda x: _f().pixel_unshuffle(x, 2)),
    F("scaled_dot_product_attention", "basic", X(2, 3, 5, 4), X(2, 3, 6, 4), X(2, 3, 6, 4),
      tol=2.0),
    F("scaled_dot_product_attention", "causal", X(2, 5, 4), X(2, 5, 4), X(2, 5, 4),
      is_causal=True, tol=2.0),
    F("scaled_dot_product_attention", "mask", X(1, 4, 3), X(1, 5, 3), X(1, 5, 3),
      Arg((4, 5), kind="bool"), fn=lambda q, k, v, m: _f().scaled_dot_product_attention(
          q, k, v, attn_mask=_with_diagonal(m)), tol=2.0),
    F("cosine_embedding_loss", "basic", X(4, 3), X(4, 3), Arg((4,), 1, 2, kind="index")),
    F("avg_pool1d", "basic", X(2, 3, 9), kernel_size=3, stride=2, padding=1),
    F("adaptive_max_pool2d", "basic", X(2, 3, 7, 5), output_size=(3, 2)),
    F("instance_norm", "basic", X(2, 3, 4, 4), X(3), X(3),
      fn=lambda x, w, b: _f().instance_norm(x, weight=w, bias=b)),
    F("local_response_norm", "basic", X(2, 5, 3, 3), size=3, alpha=0.5, k=2.0),
    F("affine_grid", "basic", X(2, 2, 3), fn=lambda t: _f().affine_grid(t, (2, 1, 3, 4))),
    F("grid_sample", "bilinear", X(2, 3, 4, 5), X(2, 3, 2, 2, low=-1.2, high=1.2),
      tol=2.0),
    F("grid_sample", "border_nearest", X(1, 2, 3, 3), X(1, 4, 1, 2, low=-1.3, high=1.3),
      mode="nearest", padding_mode="border", align_corners=True),
    F("grid_sample", "reflection_bicubic", X(1, 2, 4, 4), X(1, 2, 3, 2, low=-1.2, high=1.2),
      mode="bicubic", padding_mode="reflection", tol=2.0),
    F("embedding_bag", "offsets", Arg((7,), 0, 6, kind="index"), X(6, 3),
      fn=lambda i, w: _f().embedding_bag(i, w, vt.tensor([0, 3, 3], device=w.device),
                                         mode="sum")),
    F("embedding_bag", "max", Arg((2, 4), 0, 6, kind="index"), X(6, 3), mode="max"),
    F("prelu", "basic", X(2, 3, 4, low=-2.0, high=2.0), X(3)),
    F("softmin", "basic", X(3, 5, low=-3.0, high=3.0), dim=1),
    F("margin_ranking_loss", "basic", X(5), X(5), X(5, grad=False), margin=0.1),
    F("triplet_margin_loss", "basic", X(4, 3), X(4, 3), X(4, 3), swap=True),
    F("conv3d", "basic", X(2, 4, 4, 5, 5), X(6, 2, 3, 2, 3), X(6), stride=(2, 1, 2),
      padding=(1, 0, 1), dilation=(1, 2, 1), groups=2, tol=2.0),
    F("conv_transpose1d", "basic", X(2, 4, 6), X(4, 3, 3), X(6), stride=2, padding=1,
      output_padding=1, groups=2),
    F("conv_transpose3d", "basic", X(2, 4, 3, 3, 4), X(4, 3, 3, 2, 3), X(6),
      stride=(2, 3, 1), padding=(1, 1, 0), output_padding=(1, 2, 0), groups=2, tol=2.0),
    F("max_pool3d", "basic", X(2, 3, 5, 6, 7), kernel_size=(3, 2, 3), stride=(2, 2, 1),
      padding=(1, 1, 0), ceil_mode=True),
    F("avg_pool3d", "basic", X(2, 3, 5, 6, 7), kernel_size=3, stride=2, padding=1,
      ceil_mode=True, count_include_pad=False),
    F("adaptive_avg_pool1d", "basic", X(2, 3, 11), output_size=4),
    F("adaptive_max_pool1d", "basic", X(2, 3, 11), output_size=4),
    F("adaptive_avg_pool3d", "basic", X(2, 3, 5, 6, 7), output_size=(3, None, 4)),
    F("adaptive_max_pool3d", "basic", X(2, 3, 5, 6, 7), output_size=(3, 5, 4)),
    F("unfold", "basic", X(2, 3, 7, 8), kernel_size=(2, 3), dilation=(1, 2), padding=(1, 0),
      stride=(2, 1)),
    F("fold", "basic", X(2, 18, 16), output_size=(7, 8), kernel_size=(2, 3), dilation=(1, 2),
      padding=(1, 0), stride=(2, 1)),
    F("pairwise_distance", "basic", X(4, 5), X(4, 5)),
    F("lp_pool1d", "basic", X(2, 3, 8, low=0.1), norm_type=2, kernel_size=3, stride=2),
    F("lp_pool2d", "basic", X(2, 3, 4, 6, low=0.1), norm_type=3, kernel_size=2),
    F("lp_pool3d", "basic", X(2, 3, 4, 4, 2, low=0.1), norm_type=2, kernel_size=2),
    F("channel_shuffle", "basic", X(2, 6, 3, 3), groups=3),
    F("pdist", "basic", X(5, 4), p=1.5),
    F("max_unpool1d", "basic", X(2, 3, 4), Arg((2, 3, 4), 0, 2, kind="index"),
      fn=lambda v, i: _f().max_unpool1d(v, i + vt.arange(4, device=i.device) * 2, 2)),
    F("max_unpool2d", "basic", X(2, 3, 2, 3), Arg((2, 3, 2, 3), 0, 1, kind="index"),
      fn=lambda v, i: _f().max_unpool2d(v, _grid_indices(i, 2, 3, 2), 2)),
    F("max_unpool3d", "basic", X(1, 2, 2, 2, 2), Arg((1, 2, 2, 2, 2), 0, 1, kind="index"),
      fn=lambda v, i: _f().max_unpool3d(v, i + vt.tensor(
          [[[0, 2], [8, 10]], [[32, 34], [40, 42]]], device=i.device), 2)),
    F("upsample", "nearest", X(1, 2, 3, 3), scale_factor=2),
    F("upsample_nearest", "basic", X(1, 2, 3, 3), size=(5, 4)),
    F("upsample_bilinear", "basic", X(1, 2, 3, 3), scale_factor=2),
    F("max_pool2d_with_indices", "basic", X(2, 3, 6, 6), kernel_size=2),
    F("adaptive_max_pool1d_with_indices", "basic", X(2, 3, 9), output_size=4),
    F("adaptive_max_pool2d_with_indices", "basic", X(2, 3, 7, 5), output_size=(3, 2)),
    F("multilabel_margin_loss", "basic", X(3, 4), Arg((3, 4), -1, 4, kind="index")),
    F("triplet_margin_with_distance_loss", "basic", X(4, 5), X(4, 5), X(4, 5), swap=True),
]

# the activations' functional forms with PyTorch's inplace flag, and their trailing-underscore
# spellings, written into an intermediate (x * 1) so the gradient reaches x
_ACT = X(3, 4, low=-3.0, high=3.0)
CASES += [F(name, "basic", _ACT) for name in ("relu", "elu", "leaky_relu", "hardtanh", "silu")]
CASES += [
    F(name, "inplace", _ACT, fn=lambda x, n=name: getattr(_f(), n)(x * 1.0, inplace=True))
    for name in ("relu", "elu", "leaky_relu", "hardtanh", "silu", "selu", "celu", "relu6",
                 "hardswish", "hardsigmoid", "mish")
]
CASES += [
    F(name, "basic", _ACT, fn=lambda x, n=name: getattr(_f(), n)(x * 1.0))
    for name in ("relu_", "elu_", "leaky_relu_", "hardtanh_", "selu_", "celu_", "rrelu_")
]
