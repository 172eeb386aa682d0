"""Entry point of the strict backend (group ``volta.backends``, name ``strict``)."""

from volta_core.backend import hookimpl

from .backend import StrictBackend


@hookimpl
def volta_backends():
    return [StrictBackend()]
