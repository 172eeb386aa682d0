"""Autograd: ``Function``, the backward engine, grad modes and gradient checks."""

from . import functional
from .anomaly_mode import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from .engine import backward, grad
from .function import Function
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import gradcheck, gradgradcheck
from .graphviz import render_dot, to_dot

__all__ = ["Function", "backward", "grad", "no_grad", "enable_grad", "set_grad_enabled",
           "is_grad_enabled", "inference_mode", "is_inference_mode_enabled", "gradcheck",
           "gradgradcheck", "to_dot", "render_dot", "functional", "detect_anomaly",
           "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]
