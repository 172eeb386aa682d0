"""Volta's CPU reference backend over NumPy (through array-api-compat)."""

from .backend import NumpyBackend

__all__ = ["NumpyBackend"]
