"""Fixtures of the conformance suite's own tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(ROOT / "conformance") not in sys.path:  # works before `pip install -e .` maps it
    sys.path.insert(0, str(ROOT / "conformance"))


def load_fixture(name: str):
    """Import ``fixtures/<name>.py`` under a private module name."""
    key = f"_volta_conformance_fixture_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, HERE / "fixtures" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]


@pytest.fixture
def broken_backends():
    """Register the two deliberately broken backends for one test."""
    from volta_core.backend import register_plugin, unregister_plugin

    register_plugin(load_fixture("broken_backends").Plugin(), name="volta-broken-fixture")
    try:
        yield
    finally:
        unregister_plugin("volta-broken-fixture")
