"""Fixtures shared by the NumPy backend's threaded conv and pool tests."""

from __future__ import annotations

import pytest

import volta_core as vt


@pytest.fixture
def threads():
    """Set the CPU thread count inside a test; the previous count comes back after."""
    before = vt.get_num_threads()
    yield vt.set_num_threads
    vt.set_num_threads(before)


@pytest.fixture(params=["default", "small"])
def chunking(request, monkeypatch):
    """The shapes' own chunking, or chunks of a sample or two (so small inputs run through
    several chunks, uneven ones included)."""
    parallel = pytest.importorskip("volta_numpy.parallel")
    if request.param == "small":
        monkeypatch.setattr(parallel, "MIN_CHUNK_ELEMENTS", 1)
        monkeypatch.setattr(parallel, "CHUNK_ELEMENTS", 256)
    return request.param
