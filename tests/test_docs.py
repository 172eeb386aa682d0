"""The docs work: every ```python block in docs/*.md runs, and the site builds strictly.

The blocks of one page run in order in one fresh interpreter (a page reads like a
notebook: later blocks use names from earlier ones), in a temporary working directory
and on the CPU. A block whose first three lines say ``# requires: NAME[, NAME]`` is
skipped unless each NAME is available here: ``cuda`` (or ``gpu``), ``wgpu``, ``torch``,
``mpi``, ``nccl``; ``multiprocess`` (a script meant to be launched as several
processes, e.g. by ``torchrun``-style launchers) is never run here. An unknown NAME fails
the test, so a typo cannot hide an example. Tracebacks name the Markdown file and line.

When mkdocs and mkdocstrings are installed (``pip install -e ".[docs]"``) the site,
including the API reference generated from docstrings, must build with
``mkdocs build --strict``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.M | re.S)
REQUIRES = re.compile(r"^#\s*requires:\s*([\w, -]+)", re.M)

_RUNNER = """
import json, sys, traceback
blocks = json.loads(sys.stdin.read())
ns = {"__name__": "__main__"}
for path, line, code in blocks:
    try:
        exec(compile("\\n" * line + code, path, "exec"), ns)
    except BaseException:
        traceback.print_exc()
        sys.exit(f"docs example failed: {path}, block starting at line {line + 1}")
"""


def _pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if FENCE.search(p.read_text()))


def blocks_of(page: Path) -> list[tuple[int, str, set[str]]]:
    """The ``(first line, code, requirements)`` of each python block of ``page``."""
    text = page.read_text()
    out = []
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start(1))
        head = "\n".join(m.group(1).splitlines()[:3])
        needs = {r.strip() for g in REQUIRES.findall(head) for r in g.split(",") if r.strip()}
        out.append((line, m.group(1), needs))
    return out


KNOWN_REQUIREMENTS = {"cuda", "gpu", "wgpu", "torch", "mpi", "nccl", "multiprocess"}


def _available(need: str) -> bool:
    if need == "torch":
        return importlib.util.find_spec("torch") is not None
    if need == "mpi":
        return importlib.util.find_spec("mpi4py") is not None
    if need in ("cuda", "gpu", "nccl", "wgpu"):
        import volta_core as vt

        rows = {b.device_type: b for b in vt.backends()}
        kind = "wgpu" if need == "wgpu" else "cuda"
        return kind in rows and rows[kind].available
    return False


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_docs_examples_run(page: Path, tmp_path: Path) -> None:
    blocks, skipped = [], []
    unknown = [(line + 1, sorted(needs - KNOWN_REQUIREMENTS))
               for line, _, needs in blocks_of(page) if needs - KNOWN_REQUIREMENTS]
    assert not unknown, (f"{page.name}: unknown '# requires:' names (line, names): {unknown}; "
                         f"known: {sorted(KNOWN_REQUIREMENTS)}")
    for line, code, needs in blocks_of(page):
        missing = sorted(n for n in needs if not _available(n))
        if missing:
            skipped.append(f"line {line + 1} needs {', '.join(missing)}")
            continue
        blocks.append((str(page.relative_to(ROOT)), line, code))
    if not blocks:
        pytest.skip(f"every example of {page.name} needs what this machine lacks: {skipped}")
    env = {k: v for k, v in os.environ.items() if k not in ("VOLTA_DEVICE",)}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["MPLBACKEND"] = "Agg"
    out = subprocess.run([sys.executable, "-c", _RUNNER], input=json.dumps(blocks),
                         capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-4000:]


def test_docs_blocks_are_found() -> None:
    pages = {p.name for p in _pages()}
    assert {"getting-started.md", "tensors-and-autograd.md", "nn.md", "training.md"} <= pages


def _nav_files(nav: object) -> list[str]:
    if isinstance(nav, str):
        return [nav] if nav.endswith(".md") else []
    if isinstance(nav, dict):
        return [f for v in nav.values() for f in _nav_files(v)]
    if isinstance(nav, list):
        return [f for v in nav for f in _nav_files(v)]
    return []


def test_nav_lists_every_page() -> None:
    yaml = pytest.importorskip("yaml", reason="PyYAML comes with mkdocs: pip install "
                                              "-e '.[docs]'")
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)
    listed = set(_nav_files(config["nav"]))
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert not pages - listed, f"pages missing from mkdocs.yml's nav: {sorted(pages - listed)}"


def test_mkdocs_build_strict(tmp_path: Path) -> None:
    for module in ("mkdocs", "mkdocstrings", "mkdocstrings_handlers.python", "material"):
        if importlib.util.find_spec(module.split(".")[0]) is None:
            pytest.skip(f"{module} is not installed: pip install -e '.[docs]' to build the "
                        "site (mkdocs, mkdocstrings[python], mkdocs-material)")
    import yaml

    # pages that other issues are still writing may be listed in the nav before they
    # exist; build with the pages that are there and say which were left out
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)
    missing = [f for f in _nav_files(config["nav"]) if not (DOCS / f).is_file()]
    cfg_path = ROOT / "mkdocs.yml"
    if missing:
        text = cfg_path.read_text()
        for f in missing:
            text = re.sub(rf"^\s*- [^\n]*: {re.escape(f)}\n", "", text, flags=re.M)
        text = re.sub(r"^docs_dir:.*\n", "", text, flags=re.M)
        text = text.replace("paths: [.]", f"paths: [{ROOT}]")
        cfg_path = tmp_path / "mkdocs.yml"
        cfg_path.write_text(f"docs_dir: {DOCS}\n" + text)
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                          "-f", str(cfg_path), "-d", str(tmp_path / "site")],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert out.returncode == 0, (out.stdout + out.stderr)[-6000:]
    assert (tmp_path / "site" / "api" / "nn" / "index.html").is_file()
    if missing:
        print(f"left out of the build (not written yet): {missing}")


def test_api_directives_name_importable_objects() -> None:
    """Each ``::: dotted.path`` of docs/api resolves, even where mkdocs is not installed."""
    import importlib

    bad = []
    for page in sorted((DOCS / "api").glob("*.md")):
        for target in re.findall(r"^:::\s+([\w.]+)", page.read_text(), re.M):
            parts = target.split(".")
            for cut in range(len(parts), 0, -1):
                try:
                    obj = importlib.import_module(".".join(parts[:cut]))
                except ImportError:
                    continue
                try:
                    for name in parts[cut:]:
                        obj = getattr(obj, name)
                except AttributeError:
                    bad.append(f"{page.name}: {target}")
                break
            else:
                bad.append(f"{page.name}: {target}")
    assert not bad, f"API directives naming nothing importable: {bad}"
