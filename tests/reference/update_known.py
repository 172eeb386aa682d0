"""Rewrite ``KNOWN_OPEN`` in ``known.py`` from what the CI programs find today.

Run from ``tests/`` after fixes land: ``python -m reference.update_known``. Entries whose
signature no longer occurs are dropped (the net then holds the fix in place); a new
signature keeps the issue of an old entry it matches, or gets the issue its kind points
to (writes through views and in-place checks: 13; wgpu only: 15; otherwise 14). Review
the diff: a new signature is a bug to fix or to explain, not only a line to add.
"""

from __future__ import annotations

import collections
import os
import re
import sys
import warnings
from pathlib import Path

from reference import known
from reference.campaign import device_dtypes, run_isolated, run_one
from reference.test_reference_net import BUDGET, _unusable


def signatures(device: str, n: int) -> collections.Counter[str]:
    """Signatures of the not-deliberate disagreements of programs ``0..n-1``."""
    found: collections.Counter[str] = collections.Counter()
    dtypes = device_dtypes(device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = (run_isolated(0, n, device) if device != "cpu"
                   else ((s, run_one(s, device, dtypes)) for s in range(n)))
        for _, result in results:
            sig = result[1].signature if isinstance(result, tuple) and result[1] else (
                result if isinstance(result, str) else None)
            if sig is not None and known.classify(sig)[0] != "deliberate":
                found[sig] += 1
    return found


def _issue(sig: str, wgpu_only: bool) -> str:
    for pattern, issue in known.KNOWN_OPEN.items():
        if known.matches(sig, pattern):
            return issue
    if wgpu_only:
        return "issue 15"
    op = sig.split(": ", 1)[-1].split("[", 1)[0]
    if "aliased" in sig or op.endswith("_") or op in ("setitem", "augmented"):
        return "issue 13"
    return "issue 14"


def main() -> int:
    cpu = signatures("cpu", BUDGET["cpu"])
    wgpu: collections.Counter[str] = collections.Counter()
    if not _unusable("wgpu"):
        # wgpu programs run in child processes: each pass takes its adapter from the
        # environment, so the list also holds for a machine without a Vulkan driver
        for adapter in (None, "OpenGL"):
            saved = os.environ.pop("WGPU_BACKEND_TYPE", None)
            if adapter:
                os.environ["WGPU_BACKEND_TYPE"] = adapter
            try:
                wgpu.update(signatures("wgpu", BUDGET["wgpu"]))
            finally:
                os.environ.pop("WGPU_BACKEND_TYPE", None)
                if saved is not None:
                    os.environ["WGPU_BACKEND_TYPE"] = saved
    by_issue: dict[str, list[str]] = collections.defaultdict(list)
    for sig in sorted(set(cpu) | set(wgpu)):
        by_issue[_issue(sig, sig not in cpu)].append(sig)
    lines = ["KNOWN_OPEN: dict[str, str] = {"]
    for issue in sorted(by_issue):
        lines.append(f"    # {issue}")
        lines += [f"    {sig!r}: {issue!r}," for sig in by_issue[issue]]
    lines.append("}")
    path = Path(known.__file__)
    text = path.read_text()
    text = re.sub(r"KNOWN_OPEN: dict\[str, str\] = \{.*?\n\}", "\n".join(lines), text,
                  count=1, flags=re.S)
    path.write_text(text)
    print(f"{sum(map(len, by_issue.values()))} known-open signatures "
          f"({len(cpu)} on cpu, {len(wgpu)} on wgpu) written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
