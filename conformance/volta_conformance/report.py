"""Reports: a Markdown or JSON table of case x dtype, ending with the summary line.

The summary line is exactly ``N passed, N failed, N unsupported``. ``update_docs``
keeps one section per backend in ``docs/conformance.md`` (the latest run replaces it).
"""

from __future__ import annotations

import json
import platform
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .harness import Result
from .tolerances import policy_markdown

DTYPE_ORDER = ("float64", "float32", "float16", "bfloat16", "int64", "int32", "int16",
               "int8", "uint8", "uint32", "bool")


def summary_line(results: Sequence[Result]) -> str:
    """``N passed, N failed, N unsupported``."""
    n = Counter(r.status for r in results)
    return f"{n['pass']} passed, {n['fail']} failed, {n['unsupported']} unsupported"


def _cell(rs: Sequence[Result]) -> str:
    """One table cell: the status of one case, or the combined status of an op's cases."""
    if not rs:
        return ""
    fails = [r for r in rs if r.status == "fail"]
    if fails:
        errs = [r.max_error for r in fails if r.max_error is not None]
        worst = max(errs) if errs else float("inf")
        err = "inf" if worst == float("inf") else f"{worst:.2g}"
        count = f" {len(fails)}/{len(rs)}" if len(rs) > 1 else ""
        return f"**fail** ({err}){count}"
    unsupported = sum(r.status == "unsupported" for r in rs)
    if unsupported == len(rs):
        return "unsupported"
    return f"pass ({unsupported} unsupported)" if unsupported else "pass"


def _dtypes(results: Sequence[Result]) -> list[str]:
    seen = {r.dtype for r in results}
    return [d for d in DTYPE_ORDER if d in seen] + sorted(seen - set(DTYPE_ORDER))


def to_markdown(results: Sequence[Result], meta: dict[str, Any], title: str | None = None,
                level: int = 1, by_op: bool = False) -> str:
    """The report as Markdown: header, table, failures, unsupported reasons, summary.

    Args:
        results: the run's results.
        meta: the run's description (see :func:`meta_for`).
        title: the heading; ``"Volta conformance: BACKEND"`` by default.
        level: the heading level.
        by_op: one row per op (its cases combined) instead of one per case.
    """
    h = "#" * level
    lines = [f"{h} {title or 'Volta conformance: ' + str(meta.get('backend'))}", ""]
    for key in ("backend", "device", "device_name", "dtypes", "filter", "large", "python",
                "seconds", "date"):
        if meta.get(key) not in (None, ""):
            lines.append(f"- {key}: `{meta[key]}`")
    lines.append("")
    dtypes = _dtypes(results)
    rows: dict[str, dict[str, list[Result]]] = {}
    for r in results:
        rows.setdefault(r.op if by_op else r.case, {}).setdefault(r.dtype, []).append(r)
    lines.append(f"| {'op' if by_op else 'case'} | " + " | ".join(dtypes) + " |")
    lines.append("| --- |" + " --- |" * len(dtypes))
    for name, by_dtype in rows.items():
        cells = [_cell(by_dtype.get(d, [])) for d in dtypes]
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    fails = [r for r in results if r.status == "fail"]
    if fails:
        lines += ["", f"{h}# Failures", ""]
        lines += [f"- `{r.id}`: {r.detail}" for r in fails]
    unsupported: dict[str, list[str]] = {}
    for r in results:
        if r.status == "unsupported":
            unsupported.setdefault(r.detail, []).append(r.id)
    if unsupported:
        lines += ["", f"{h}# Unsupported", ""]
        for reason, ids in sorted(unsupported.items(), key=lambda kv: -len(kv[1])):
            shown = ", ".join(f"`{i}`" for i in ids[:6])
            more = f" and {len(ids) - 6} more" if len(ids) > 6 else ""
            lines.append(f"- {reason} ({len(ids)}): {shown}{more}")
    lines += ["", summary_line(results)]
    return "\n".join(lines) + "\n"


def to_json(results: Sequence[Result], meta: dict[str, Any]) -> str:
    """The report as JSON: ``meta``, ``results`` (one object per case x dtype), ``summary``."""
    data = {"meta": meta,
            "results": [{"case": r.case, "op": r.op, "dtype": r.dtype, "status": r.status,
                         "detail": r.detail,
                         "max_error": None if r.max_error in (None, float("inf"))
                         else r.max_error, "seconds": round(r.seconds, 4)}
                        for r in results],
            "summary": summary_line(results)}
    return json.dumps(data, indent=1) + "\n"


def write(path: str | Path, results: Sequence[Result], meta: dict[str, Any]) -> None:
    """Write a ``.json`` or Markdown report, by the file's suffix."""
    path = Path(path)
    text = to_json(results, meta) if path.suffix == ".json" else to_markdown(results, meta)
    path.write_text(text, encoding="utf-8")


def meta_for(backend: str, device: Any, dtypes: Any, pattern: str | None, large: bool,
             seconds: float) -> dict[str, Any]:
    """The run's description printed at the top of a report."""
    import datetime

    from volta_core import Device

    dev = Device(device)
    try:
        name = dev.name
    except Exception:  # a device name is informative only
        name = ""
    return {"backend": backend, "device": str(dev), "device_name": name,
            "dtypes": ",".join(dtypes) if dtypes else "default", "filter": pattern or "",
            "large": large, "python": platform.python_version(),
            "seconds": round(seconds, 1), "date": datetime.date.today().isoformat()}


_HEADER = """# Conformance reports

Generated by `volta-conformance --backend NAME --docs docs/conformance.md`; do not edit
by hand. Each backend's section is the latest run on it, one row per op (its cases
combined: `pass (2 unsupported)`, `fail (max error) failed/total`). Every case runs on
the NumPy reference (`cpu`) and on the backend's device from the same seeded host data;
outputs, dtypes, shapes and every input gradient must match within the tolerances
below. A case the backend cannot run is `unsupported` with its reason, never passed.
`volta-conformance --report report.md` gives the same table with one row per case.

"""


def update_docs(path: str | Path, backend: str, results: Sequence[Result],
                meta: dict[str, Any]) -> None:
    """Replace (or add) ``backend``'s section of the generated docs page at ``path``."""
    path = Path(path)
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    sections = dict(re.findall(r"<!-- backend:(\S+) -->\n(.*?)<!-- /backend -->\n", old,
                               re.S))
    sections[backend] = to_markdown(results, meta, title=f"Backend `{backend}`", level=2,
                                    by_op=True)
    body = "".join(f"<!-- backend:{name} -->\n{text}<!-- /backend -->\n\n"
                   for name, text in sorted(sections.items()))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_HEADER + policy_markdown() + "\n" + body, encoding="utf-8")
