"""Shared fixtures of the wgpu backend tests; every test here is skipped, with the
reason, when wgpu or a WebGPU adapter is missing."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

_HERE = pathlib.Path(__file__).parent


def _unavailable() -> str | None:
    try:
        import wgpu  # noqa: F401
    except ImportError:
        return "wgpu is not installed: pip install 'volta[wgpu]'"
    try:
        from volta_wgpu.engine import get_engine
        get_engine(0)
    except Exception as exc:  # no adapter, no Vulkan loader, ...
        return f"no WebGPU adapter found ({exc})"
    return None


_REASON = _unavailable()


def pytest_collection_modifyitems(config, items):
    if _REASON is None:
        return
    mark = pytest.mark.skip(reason=_REASON)
    for item in items:
        if _HERE in pathlib.Path(str(item.fspath)).parents:
            item.add_marker(mark)


@pytest.fixture(scope="session")
def xp():
    import volta_wgpu
    return volta_wgpu


@pytest.fixture
def eager(xp):
    """Run the test with lazy fusion off: it checks how single eager kernels run."""
    was = xp.is_lazy()
    xp.set_lazy(False)
    yield xp
    xp.set_lazy(was)


def has(dtype_name: str) -> bool:
    """Whether the test adapter supports a dtype."""
    if _REASON is not None:
        return False
    from volta_wgpu.dtypes import supported
    return dtype_name in [d.name for d in supported()]




def check(got, expected, rtol: float = 1e-5, atol: float = 1e-6, dtype: bool = True) -> None:
    """Compare a wgpu array with a NumPy result: shape, dtype (by name) and values."""
    import volta_wgpu
    exp = np.asarray(expected)
    assert isinstance(got, volta_wgpu.Array), type(got)
    assert got.shape == exp.shape, (got.shape, exp.shape)
    if dtype:
        assert got.dtype.name == exp.dtype.name, (got.dtype, exp.dtype)
    host = volta_wgpu.to_numpy(got)
    if exp.dtype.kind in "biu":
        np.testing.assert_array_equal(host, exp)
    else:
        np.testing.assert_allclose(host, exp, rtol=rtol, atol=atol, equal_nan=True)


def variants(a: np.ndarray, xp):
    """(name, wgpu array, numpy array) for a contiguous, a transposed and a strided view."""
    out = [("contig", xp.asarray(a), a)]
    if a.ndim >= 2:
        out.append(("permuted", xp.permute_dims(xp.asarray(np.ascontiguousarray(a.T)),
                                                tuple(range(a.ndim))[::-1]), a))
    if a.ndim >= 1 and a.shape[-1] >= 1:
        big = np.repeat(a, 2, axis=-1)
        out.append(("strided", xp.asarray(big)[..., ::2], big[..., ::2]))
    return out


@pytest.fixture(name="check", scope="session")
def _check_fixture():
    return check


@pytest.fixture(name="variants", scope="session")
def _variants_fixture():
    return variants
