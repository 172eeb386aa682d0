"""The whole default conformance suite on the wgpu backend (Mesa's lavapipe in CI)."""

from __future__ import annotations

import pytest
from volta_conformance import run_suite

import volta_core as vt

_rows = {b.name: b for b in vt.backends()}


@pytest.mark.skipif("wgpu" not in _rows or not _rows["wgpu"].available,
                    reason=f"wgpu backend unavailable: {getattr(_rows.get('wgpu'), 'reason', '')}")
def test_wgpu_backend_passes_the_suite():
    results = run_suite("wgpu")
    failures = [f"{r.id}: {r.detail}" for r in results if r.status == "fail"]
    assert not failures, "\n".join(failures)
    # only what the adapter truly lacks may be unsupported: WGSL has no 8-bit integers,
    # and float16/float64 need shader-f16/shader-f64 (OpenGL adapters have neither);
    # int64 exists everywhere (emulated as two 32-bit words without shader-int64)
    import volta_wgpu
    have = volta_wgpu.__array_namespace_info__().dtypes()
    lacking = ["int8"] + [d for d in ("float16", "float64") if d not in have]
    unsupported = [r for r in results if r.status == "unsupported"]
    bad = [r.id for r in unsupported
           if not any(d in r.id or f"dtype {d} " in r.detail for d in lacking)]
    assert not bad, bad
    assert sum(r.status == "pass" for r in results) > (2500 if "float64" in have else 1600)
