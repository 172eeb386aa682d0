"""Entry point of the CuPy backend (group ``volta.backends``)."""

from volta_core.backend import hookimpl

from .backend import CupyBackend


@hookimpl
def volta_backends():
    return [CupyBackend()]
