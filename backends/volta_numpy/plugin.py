"""Entry point of the NumPy backend (group ``volta.backends``)."""

from volta_core.backend import hookimpl

from .backend import NumpyBackend


@hookimpl
def volta_backends():
    return [NumpyBackend()]
