"""The module the ``volta.backends`` entry point names: it returns the backend."""

from volta_core.backend import hookimpl

from .backend import MyBackend


@hookimpl
def volta_backends():
    return [MyBackend()]
