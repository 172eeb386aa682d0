"""PyTorch's checks on ``.grad`` assignment and ``backward(gradient=...)`` (issue 19)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import volta_core as vt
from volta_core.errors import AutogradError, DeviceError, DTypeError, ShapeError


def _torch_raises(value_fn) -> bool:
    p = torch.zeros(3, requires_grad=True)
    try:
        p.grad = value_fn(p)
        return False
    except (RuntimeError, TypeError):
        return True


@pytest.mark.parametrize("make_vt, make_torch, error, match", [
    (lambda p: vt.ones(1), lambda p: torch.ones(1), ShapeError, r"shape \(1,\) to a tensor "
                                                                r"of shape \(3,\)"),
    (lambda p: vt.ones(2, 3), lambda p: torch.ones(2, 3), ShapeError, "shape"),
    (lambda p: vt.ones(3, dtype="float64"), lambda p: torch.ones(3, dtype=torch.float64),
     DTypeError, "dtype float64 to a tensor of dtype float32"),
    (lambda p: vt.ones(3, dtype="int64"), lambda p: torch.ones(3, dtype=torch.int64),
     DTypeError, "int64"),
    (lambda p: [1.0, 2.0, 3.0], lambda p: [1.0, 2.0, 3.0], TypeError,
     "expected to be a Tensor or None but got grad of type list"),
    (lambda p: p, lambda p: p, AutogradError, "its own grad"),
])
def test_bad_grad_assignments_are_refused_like_torch(make_vt, make_torch, error, match):
    assert _torch_raises(make_torch)
    p = vt.zeros(3, requires_grad=True)
    with pytest.raises(error, match=match):
        p.grad = make_vt(p)
    assert p.grad is None


def test_good_grad_assignments_are_kept():
    p = vt.zeros(3, requires_grad=True)
    g = vt.ones(3)
    p.grad = g
    assert p.grad is g
    p.grad = None
    assert p.grad is None
    p.grad = vt.ones(3, requires_grad=True)  # PyTorch accepts this too
    opt = vt.optim.SGD([p], lr=1.0)
    p.grad = vt.full((3,), 2.0)
    opt.step()
    assert p.tolist() == [-2.0, -2.0, -2.0]


def test_grad_on_another_device_is_refused():
    NumpyBackend = type(vt.backend.get_backend("numpy"))
    from volta_core.backend import hookimpl, register_plugin, unregister_plugin

    class Other(NumpyBackend):
        name, device_type = "numpy-other", "othercpu"

    class Plugin:
        @hookimpl
        def volta_backends(self):
            return [Other()]

    register_plugin(Plugin(), name="grad-device-test")
    try:
        p = vt.zeros(3, requires_grad=True)
        with pytest.raises(DeviceError, match=r"gradient on othercpu:0 to a tensor on cpu"):
            p.grad = vt.ones(3, device="othercpu")
        with pytest.raises(DeviceError, match="gradient 0 is on othercpu:0"):
            (p * 2).backward(vt.ones(3, device="othercpu"))
    finally:
        unregister_plugin("grad-device-test")


@pytest.mark.parametrize("gdtype", ["float64", "int64", "float16"])
def test_backward_gradient_is_cast_to_the_output_dtype_as_torch(gdtype):
    tx = torch.ones(3, requires_grad=True)
    (tx * 2).backward(torch.ones(3, dtype=getattr(torch, gdtype)))
    x = vt.ones(3, requires_grad=True)
    (x * 2).backward(vt.ones(3, dtype=gdtype))
    assert x.grad.dtype.name == str(tx.grad.dtype).removeprefix("torch.") == "float32"
    np.testing.assert_array_equal(x.grad.tolist(), tx.grad.tolist())
    leaf = vt.ones(3, requires_grad=True)
    leaf.backward(vt.ones(3, dtype=gdtype))
    assert leaf.grad.dtype is vt.float32
