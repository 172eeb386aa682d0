"""The cooperative-matrix (tensor core) float32 matmul: gated on the adapter's feature and
on a test product. Software adapters lack the feature: there only the gate is tested;
on a GPU that offers it (an NVIDIA H100/H200 on Vulkan) the kernel itself is, with
``VOLTA_WGPU_COOPMAT=1`` in the environment (opt-in while untried on GPUs)."""

from __future__ import annotations

import numpy as np
import pytest

import volta_core as vt


@pytest.fixture
def eng(xp):
    from volta_wgpu.engine import get_engine
    return get_engine(0)


@pytest.fixture
def coop(monkeypatch):
    from volta_wgpu.kernels import coopmat
    monkeypatch.setattr(coopmat, "_verdict", {})
    return coopmat


def _needs_feature(eng, coop):
    if coop.FEATURE not in eng.features:
        pytest.skip(f"adapter lacks {coop.FEATURE} ({vt.wgpu.get_device_name()}), the "
                    "device refused it (wgpu-native counts it experimental), or "
                    "VOLTA_WGPU_COOPMAT=1 is not set")


def test_self_test_verdicts(eng, coop, monkeypatch):
    """The verdict comes from comparing with float64: the plain kernel passes as float32;
    a kernel that rounds its inputs to TF32 passes as TF32; a wrong one or one that does
    not build is turned off."""
    from volta_wgpu.kernels import matmul
    from volta_wgpu.namespace.elementwise import copy_into

    def plain(out, a, b, *args):
        copy_into(out, matmul.matmul_nd(a, b))

    def tf32(out, a, b, *args):  # inputs rounded to 10 mantissa bits first
        import volta_wgpu
        host = [volta_wgpu.to_numpy(x).copy() for x in (a, b)]
        for h in host:
            u = h.view(np.uint32)
            u[...] = (u + 0x1000) & 0xFFFFE000
        copy_into(out, matmul.matmul_nd(*(vt.device("wgpu").xp.asarray(h) for h in host)))

    def broken(out, a, b, *args):
        raise RuntimeError("no such WGSL")

    for fn, want in ((plain, "fp32"), (tf32, "tf32"), (broken, "off")):
        monkeypatch.setattr(coop, "dispatch", fn)
        assert coop._self_test(eng) == want
        coop._verdict.clear()
        coop.check(eng)  # what a new engine with the feature runs
        assert coop._verdict[eng.index] == want


def test_gate(eng, coop, monkeypatch):
    monkeypatch.setattr(eng, "features", eng.features | {coop.FEATURE})
    coop._verdict[eng.index] = "tf32"
    assert not coop.usable(eng, 128, 64)  # TF32-level results need the user's consent
    vt.set_float32_matmul_precision("high")
    try:
        assert coop.usable(eng, 128, 64)
        assert not coop.usable(eng, 128, 60) and not coop.usable(eng, 32, 64)
        vt.set_float32_matmul_precision("highest")
        coop._verdict[eng.index] = "fp32"
        assert coop.usable(eng, 128, 64)
        coop._verdict[eng.index] = "off"
        assert not coop.usable(eng, 128, 64)
    finally:
        vt.set_float32_matmul_precision("highest")


@pytest.mark.parametrize("shape_a,shape_b,ta,tb", [
    ((256, 128), (128, 192), False, False),
    ((3, 64, 200), (3, 200, 72), True, False),
    ((2, 1, 96, 40), (5, 40, 128), False, True),
    ((128, 8), (8, 64), False, False),
])
def test_kernel_matches_float64_on_a_gpu_that_has_it(eng, coop, shape_a, shape_b, ta, tb):
    """Run on a GPU with cooperative matrices: the kernel builds, passes its test product
    and computes strided, transposed and broadcast batched products."""
    _needs_feature(eng, coop)
    verdict = coop._self_test(eng)
    assert verdict in ("fp32", "tf32"), "the cooperative-matrix kernel failed its test"
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape_a).astype(np.float32)
    b = rng.standard_normal(shape_b).astype(np.float32)
    coop._verdict[eng.index] = verdict
    vt.set_float32_matmul_precision("high")
    try:
        x = vt.tensor(np.swapaxes(a, -1, -2).copy(), device="wgpu").mT if ta else \
            vt.tensor(a, device="wgpu")
        y = vt.tensor(np.swapaxes(b, -1, -2).copy(), device="wgpu").mT if tb else \
            vt.tensor(b, device="wgpu")
        got = np.array((x @ y).tolist())
    finally:
        vt.set_float32_matmul_precision("highest")
    want = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    assert np.max(np.abs(got - want) / scale) < (1e-5 if verdict == "fp32" else 2e-3)
    assert any(isinstance(k, tuple) and k[0] == "matmul_coop" for k in eng._kernels)
