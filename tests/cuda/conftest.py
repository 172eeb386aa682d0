"""What every CUDA test shares: it is skipped, with the reason, where the CUDA backend is
unavailable (no GPU, no CuPy), and the ``cp`` fixture hands it CuPy with the device made
(which installs the backend's allocator)."""

from __future__ import annotations

import pytest

import volta_core as vt

_CUPY = next(b for b in vt.backends() if b.name == "cupy")


@pytest.fixture(scope="session", autouse=True)
def _cuda_backend() -> None:
    # session scope: set up before any module-scoped fixture (``cp``) that needs CUDA
    if not _CUPY.available:
        pytest.skip(f"CUDA backend unavailable: {_CUPY.reason}")


@pytest.fixture(scope="module")
def cp():
    import cupy

    vt.device("cuda")
    return cupy
