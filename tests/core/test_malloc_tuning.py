"""The CPU backend's malloc settings (``volta_numpy.malloc``): set once, opt-out respected."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_PROBE = ("import volta_core as vt; vt.zeros(2); from volta_numpy import malloc; "
          "print(malloc._done, malloc.apply_default())")


def _probe(**env: str) -> str:
    full = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    full.pop("VOLTA_MALLOC_TUNING", None)
    full.update(env)
    out = subprocess.run([sys.executable, "-c", _PROBE], env=full, capture_output=True,
                         text=True, check=True)
    return out.stdout.split()


def test_first_cpu_use_applies_it_once():
    done, again = _probe()
    assert done == "True" and again == "False"  # a second call does nothing


@pytest.mark.parametrize("env", [{"VOLTA_MALLOC_TUNING": "0"},
                                 {"MALLOC_TRIM_THRESHOLD_": "1000000"}])
def test_opt_out_and_users_own_settings_leave_malloc_alone(env, monkeypatch):
    from volta_numpy import malloc

    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr(malloc, "_done", False)
    assert malloc.apply_default() is False
