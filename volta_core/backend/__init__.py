"""Backends: plugin discovery, devices and extension-kernel dispatch."""

from .base import Backend, Generator
from .device import Device, device, get_default_device, set_default_device
from .hookspecs import hookimpl
from .kernels import fallback, get_fallback, get_kernel, kernel_names
from .registry import (
                       BackendInfo,
                       backend_for_type,
                       backends,
                       get_backend,
                       register_plugin,
                       unregister_plugin,
)

__all__ = [
    "Backend", "Generator", "Device", "device", "get_default_device", "set_default_device",
    "hookimpl", "fallback", "get_fallback", "get_kernel", "kernel_names", "BackendInfo",
    "backend_for_type", "backends", "get_backend", "register_plugin", "unregister_plugin",
]
