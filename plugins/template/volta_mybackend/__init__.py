"""A Volta backend skeleton: copy, rename, point ``LIBRARY`` at your array library."""

from .backend import MyBackend

__all__ = ["MyBackend"]
