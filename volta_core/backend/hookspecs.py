"""The hooks a Volta plugin implements.

A backend distribution registers a module under the entry-point group
``volta.backends``; that module implements one or more of these hooks with
``@volta_core.backend.hookimpl``. Hooks are always called with keyword arguments.
"""

from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("volta")
hookimpl = pluggy.HookimplMarker("volta")


# -- discovery --------------------------------------------------------------------------

@hookspec
def volta_backends():
    """Return a list of :class:`volta_core.backend.Backend` instances this plugin provides.

    Creating a backend must be cheap and must not import its array library: the
    library is imported on first use, so a missing one is reported, not raised.
    """


# -- kernels ----------------------------------------------------------------------------

@hookspec(firstresult=True)
def volta_kernel(backend, name):
    """Return an implementation of extension kernel ``name`` for ``backend``, or None.

    Lets a plugin override a kernel of another backend (a faster conv for CuPy, say)
    without forking it. The first non-None result wins (``firstresult``); without
    one, the backend's own kernel is used, else the core's generic fallback.

    Args:
        backend: the :class:`Backend` the kernel will run on.
        name: the kernel's name, e.g. ``"conv2d"``.
    """
