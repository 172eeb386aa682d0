"""PyTorch programs run on Volta with only their import lines changed.

Each file in ``programs/`` is written in PyTorch's idiom (``import torch``, ``import
torch.nn as nn``, ``from torch.utils.data import DataLoader``, ...) and checks its own
success criterion in ``main()``. The test rewrites only the import lines to
``volta_core`` (``import torch`` becomes ``import volta_core as torch``) and runs it; a
second test runs the unchanged file on PyTorch, to show it is a real PyTorch program.
"""

from __future__ import annotations

import re
import types
from pathlib import Path

import pytest

import volta_core as vt

PROGRAMS = Path(__file__).parent / "programs"
NAMES = sorted(p.stem for p in PROGRAMS.glob("*.py"))
NEEDS_RNN_UTILS = {"rnn_lm_packed"}


def port(source: str) -> str:
    """The source with its import lines pointed at Volta, nothing else changed."""
    out = []
    for line in source.splitlines():
        if re.match(r"\s*import torch\s*$", line):
            line = line.replace("import torch", "import volta_core as torch")
        elif re.match(r"\s*(import|from) torch\b", line):
            line = re.sub(r"\btorch\b", "volta_core", line, count=1)
        out.append(line)
    return "\n".join(out) + "\n"


def run(name: str, source: str) -> dict:
    module = types.ModuleType(f"dropin_{name}")
    module.__file__ = str(PROGRAMS / f"{name}.py")
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module.main()


def _skip_without_rnn_utils(name: str) -> None:
    if name in NEEDS_RNN_UTILS and not hasattr(vt.nn.utils, "rnn"):
        pytest.skip("needs volta_core.nn.utils.rnn (the nn helper's work)")


def test_port_changes_only_imports():
    for name in NAMES:
        source = (PROGRAMS / f"{name}.py").read_text()
        ported = port(source)
        changed = [(a, b) for a, b in zip(source.splitlines(), ported.splitlines()) if a != b]
        assert changed, name
        assert all(re.match(r"\s*(import|from) ", a) for a, _ in changed), changed


@pytest.mark.parametrize("name", NAMES)
def test_program_runs_on_volta(name):
    _skip_without_rnn_utils(name)
    result = run(name, port((PROGRAMS / f"{name}.py").read_text()))
    assert isinstance(result, dict)


@pytest.mark.parametrize("name", NAMES)
def test_program_is_real_pytorch(name):
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny models: a thread pool costs more than it gains
    try:
        result = run(name, (PROGRAMS / f"{name}.py").read_text())
    finally:
        torch.set_num_threads(threads)
    assert isinstance(result, dict)
