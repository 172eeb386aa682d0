"""Layers and functions on empty inputs (a batch of 0, no keys, no classes) against PyTorch
CPU on every device: the same output shapes and gradients, or a refusal where PyTorch
refuses. Each case once raised or answered differently (a convolution's batch chunking
divided by zero, batch/instance norm refused an empty batch, group norm could not reshape
it, attention took the maximum of no keys, one_hot inferred 0 classes)."""

from __future__ import annotations

import pytest
from vt_helpers import available_devices

import volta_core as vt

torch = pytest.importorskip("torch")

DEVICES = available_devices()


def _cases(m):
    F = m.nn.functional
    long = m.int64
    return {  # name: (fn of the leaf tensors, their shapes)
        "conv2d": (lambda x, w: F.conv2d(x, w, padding=1), [(0, 3, 5, 5), (4, 3, 3, 3)]),
        "conv1d": (lambda x, w: F.conv1d(x, w), [(0, 3, 5), (4, 3, 3)]),
        "conv_transpose2d": (lambda x, w: F.conv_transpose2d(x, w, stride=2),
                             [(0, 3, 4, 4), (3, 2, 3, 3)]),
        "conv3d": (lambda x, w: F.conv3d(x, w), [(0, 2, 3, 3, 3), (4, 2, 2, 2, 2)]),
        "batch_norm": (lambda x, w: F.batch_norm(x, None, None, w, None, training=True),
                       [(0, 3, 4), (3,)]),
        "batch_norm_len0": (lambda x, w: F.batch_norm(x, None, None, w, None, training=True),
                            [(2, 3, 0), (3,)]),
        "instance_norm_len0": (lambda x, w: F.instance_norm(x, weight=w), [(2, 3, 0), (3,)]),
        "group_norm": (lambda x, w: F.group_norm(x, 2, w), [(0, 4, 3), (4,)]),
        "layer_norm": (lambda x, w: F.layer_norm(x, (4,), w), [(0, 4), (4,)]),
        "max_pool2d": (lambda x: F.max_pool2d(x, 2), [(0, 2, 4, 4)]),
        "interpolate": (lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"),
                        [(0, 2, 4, 4)]),
        "cross_entropy": (lambda x: F.cross_entropy(x, m.zeros(0, dtype=long, device=x.device),
                                                   reduction="sum"), [(0, 5)]),
        "attention_no_keys": (lambda q, k: F.scaled_dot_product_attention(q, k, k),
                              [(1, 2, 3, 4), (1, 2, 0, 4)]),
        "causal_attention_no_keys": (
            lambda q, k: F.scaled_dot_product_attention(q, k, k, is_causal=True),
            [(1, 2, 3, 4), (1, 2, 0, 4)]),
        "softmax_no_columns": (lambda x: m.softmax(x, -1), [(3, 0)]),
        "one_hot_inferred": (lambda x: F.one_hot(m.zeros(0, dtype=long, device=x.device)) + x,
                             [(1,)]),
        "one_hot_zero_classes": (
            lambda x: F.one_hot(m.zeros(0, dtype=long, device=x.device), 0) + x, [(1,)]),
        "encoder_layer": (lambda x: m.nn.TransformerEncoderLayer(
            4, 2, 8, dropout=0.0, batch_first=True).to(x.device)(x), [(0, 3, 4)]),
    }


def _run(m, name, device):
    fn, shapes = _cases(m)[name]
    leaves = [m.ones(*s, device=device, requires_grad=True) for s in shapes]
    try:
        y = fn(*leaves)
        y.float().sum().backward()
    except (RuntimeError, vt.VoltaError):
        return "refused"
    return tuple(y.shape), [(tuple(t.grad.shape), float(t.grad.sum())) for t in leaves]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(_cases(torch)))
def test_empty_input_as_pytorch(name, device):
    assert _run(vt, name, device) == _run(torch, name, "cpu")

