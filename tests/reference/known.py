"""Where Volta and PyTorch are known to disagree: deliberate differences (kept, each
with its reason) and known-open bugs (temporary: each entry names its issue and goes
away when the fix lands).

Keys are signature patterns (``fnmatch`` syntax) over ``kind: op[form] dtype``, as the
campaign prints them. Keep them as narrow as the bug: a pattern that covers a whole op
hides the next bug in it.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

# Differences kept on purpose; docs/reference-net.md lists the same ones.
DELIBERATE: dict[str, str] = {}

# Open bugs found by the net; the value names the issue that tracks the fix.
KNOWN_OPEN: dict[str, str] = {}


def classify(signature: str) -> tuple[str, str]:
    """("deliberate", reason), ("known", issue) or ("new", "") for a signature."""
    for pattern, reason in DELIBERATE.items():
        if fnmatchcase(signature, pattern):
            return "deliberate", reason
    for pattern, issue in KNOWN_OPEN.items():
        if fnmatchcase(signature, pattern):
            return "known", issue
    return "new", ""
