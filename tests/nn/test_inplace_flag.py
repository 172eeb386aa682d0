"""PyTorch's ``inplace=True`` of activations and dropout, compared with PyTorch CPU: the
result is written into the input (same object, new values, history replaced), gradients
flow as through the out-of-place op, and a leaf that requires grad is refused."""

from __future__ import annotations

import numpy as np
import pytest
from torch_ref import torch

import volta_core as vt

X = np.array([[-2.5, -0.5, 0.0], [0.25, 1.5, 7.0]])

CALLS = [
    ("relu", ()), ("relu6", ()), ("elu", (0.7,)), ("leaky_relu", (0.2,)),
    ("hardtanh", (-1.0, 2.0)), ("silu", ()), ("selu", ()), ("celu", (1.3,)),
    ("hardsigmoid", ()), ("hardswish", ()), ("mish", ()), ("rrelu", (0.1, 0.3)),
    ("threshold", (0.1, 5.0)),
]


def _version(lib, t) -> int:
    return t._version if lib is torch else t._version[0]  # Volta's counter is a shared cell


def _call(lib, name, args, x, inplace):
    return getattr(lib.nn.functional, name)(x, *args, inplace=inplace)


@pytest.mark.parametrize("name,args", CALLS)
def test_inplace_writes_the_input_like_torch(name, args):
    results = {}
    for lib in (torch, vt):
        leaf = lib.tensor(X, requires_grad=True)
        x = leaf * 1.0
        version = _version(lib, x)
        y = _call(lib, name, args, x, inplace=True)
        assert y is x
        assert _version(lib, x) > version
        y.sum().backward()
        results[lib] = (np.asarray(x.detach().tolist()), np.asarray(leaf.grad.tolist()))
    np.testing.assert_allclose(results[vt][0], results[torch][0], rtol=1e-6)
    np.testing.assert_allclose(results[vt][1], results[torch][1], rtol=1e-6)
    out = _call(vt, name, args, vt.tensor(X), inplace=False)  # out of place: the same values
    np.testing.assert_allclose(out.numpy(), results[vt][0], rtol=1e-6)


@pytest.mark.parametrize("name,args", CALLS)
def test_inplace_on_a_leaf_that_requires_grad_is_refused(name, args):
    with pytest.raises(RuntimeError):
        _call(torch, name, args, torch.tensor(X, requires_grad=True), inplace=True)
    with pytest.raises(Exception, match="leaf"):
        _call(vt, name, args, vt.tensor(X, requires_grad=True), inplace=True)


@pytest.mark.parametrize("module,args", [
    ("ReLU", ()), ("ReLU6", ()), ("LeakyReLU", (0.1,)), ("ELU", (0.5,)), ("SiLU", ()),
    ("Hardtanh", (-0.5, 0.5)), ("SELU", ()), ("CELU", (2.0,)), ("Hardsigmoid", ()),
    ("Hardswish", ()), ("Mish", ()), ("Threshold", (0.3, -1.0)),
])
def test_modules_with_inplace_write_their_input(module, args):
    got = {}
    for lib in (torch, vt):
        x = lib.tensor(X)
        y = getattr(lib.nn, module)(*args, inplace=True)(x)
        assert y is x
        got[lib] = np.asarray(x.tolist())
    np.testing.assert_allclose(got[vt], got[torch], rtol=1e-6)


def test_trailing_underscore_forms():
    for name in ("relu_", "elu_", "leaky_relu_", "hardtanh_", "selu_", "celu_", "rrelu_"):
        x, xt = vt.tensor(X), torch.tensor(X)
        assert getattr(vt.nn.functional, name)(x) is x
        getattr(torch.nn.functional, name)(xt)
        np.testing.assert_allclose(x.numpy(), xt.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name,shape", [
    ("dropout", (4, 50)), ("dropout1d", (4, 50, 2)), ("dropout2d", (4, 50, 2, 2)),
    ("dropout3d", (4, 50, 2, 2, 2)), ("alpha_dropout", (4, 50)),
    ("feature_alpha_dropout", (4, 50, 2)),
])
def test_dropout_inplace_writes_the_input(name, shape):
    leaf = vt.ones(*shape).requires_grad_()
    h = leaf * 1.0
    version = h._version[0]
    y = getattr(vt.nn.functional, name)(h, 0.5, training=True, inplace=True)
    assert y is h and h._version[0] > version
    changed = h.detach() != 1.0
    assert bool(changed.any())
    y.sum().backward()
    assert leaf.grad.shape == leaf.shape and bool((leaf.grad != 1.0).any())
    z = vt.ones(100)
    assert vt.nn.Dropout(0.5, inplace=True).train()(z) is z and bool((z != 1.0).any())
    z = vt.ones(100)
    assert vt.nn.Dropout(0.5, inplace=True).eval()(z) is z and bool((z == 1.0).all())


@pytest.mark.parametrize("name,args", CALLS)
def test_changing_the_written_tensor_again_refuses_like_torch(name, args):
    # PyTorch's in-place elu/leaky_relu/selu/celu/rrelu/relu keep their result
    outcomes = []
    for lib in (torch, vt):
        x = lib.tensor(X, requires_grad=True) * 1.0
        y = _call(lib, name, args, x, inplace=True)
        x.add_(1)
        try:
            y.sum().backward()
            outcomes.append("ok")
        except RuntimeError:
            outcomes.append("refused")
    assert outcomes[1] == outcomes[0]
