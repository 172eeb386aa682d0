"""A Volta backend over array-api-strict (device type ``strict``)."""

from .backend import StrictBackend, StrictGenerator

__all__ = ["StrictBackend", "StrictGenerator"]
