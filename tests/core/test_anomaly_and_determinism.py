"""``vt.autograd.detect_anomaly``/``set_detect_anomaly`` (NaN from a backward raises naming
the op and the forward line, as PyTorch's) and ``vt.use_deterministic_algorithms``."""

from __future__ import annotations

import pytest
import torch

import volta_core as vt


def test_nan_in_backward_names_the_op_and_the_forward_line():
    for m in (torch, vt):
        x = m.tensor([0.0, 1.0], requires_grad=True)
        with pytest.warns(UserWarning, match="Anomaly Detection"):
            with m.autograd.detect_anomaly():
                y = (x.sqrt() * 0).sum()  # sqrt's gradient at 0 is inf, times 0: NaN
                with pytest.raises(RuntimeError, match="Sqrt.*returned nan values in its "
                                                       "0th output") as err:
                    y.backward()
        if m is vt:
            assert "x.sqrt()" in str(err.value)  # the forward call's traceback
    assert not vt.autograd.is_anomaly_enabled()


def test_without_the_mode_nan_passes_and_the_decorator_form():
    x = vt.tensor([0.0, 1.0], requires_grad=True)
    (x.sqrt() * 0).sum().backward()
    assert vt.isnan(x.grad).any()

    @vt.autograd.detect_anomaly(check_nan=False)
    def run():
        assert vt.autograd.is_anomaly_enabled()
        assert not vt.autograd.is_anomaly_check_nan_enabled()
        z = vt.tensor([0.0], requires_grad=True)
        (z.sqrt() * 0).sum().backward()  # not checked
        return z.grad

    with pytest.warns(UserWarning):
        assert vt.isnan(run()).all()
    vt.autograd.set_detect_anomaly(True)
    try:
        assert vt.autograd.is_anomaly_enabled()
    finally:
        vt.autograd.set_detect_anomaly(False)
    assert not vt.autograd.is_anomaly_enabled()


def test_use_deterministic_algorithms_flag():
    assert not vt.are_deterministic_algorithms_enabled()
    vt.use_deterministic_algorithms(True, warn_only=True)
    try:
        assert vt.are_deterministic_algorithms_enabled()
        assert vt.is_deterministic_algorithms_warn_only_enabled()
        # scatter-adds still give the right values on the generic kernels
        x = vt.zeros(4).index_add(0, vt.tensor([0, 0, 3]), vt.tensor([1.0, 2.0, 5.0]))
        assert x.tolist() == [3.0, 0.0, 0.0, 5.0]
    finally:
        vt.use_deterministic_algorithms(False)
    assert not vt.are_deterministic_algorithms_enabled()
    with pytest.raises(TypeError):
        vt.use_deterministic_algorithms("yes")
