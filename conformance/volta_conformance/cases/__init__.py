"""The case modules. Each defines ``CASES``, a list of :class:`~volta_conformance.case.Case`.

Modules are data: adding an op means adding entries here, not writing a test.
"""

from __future__ import annotations

import importlib

from ..case import Case

MODULES = ("ops_core", "ops_movement", "ops_math", "ops_special", "ops_index_update",
           "ops_order_stats", "views", "nn_layers", "nn_functional", "losses", "optimizers",
           "training", "ops_sets", "ops_matrices", "ops_layout", "aliases")

_cache: list[Case] | None = None


def all_cases() -> list[Case]:
    """Every case of every module, in a stable order; names are unique."""
    global _cache
    if _cache is None:
        cases: list[Case] = []
        for name in MODULES:
            try:
                module = importlib.import_module(f"{__name__}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{__name__}.{name}":
                    raise
                continue
            cases.extend(module.CASES)
        seen: set[str] = set()
        for case in cases:
            if case.name in seen:
                raise ValueError(f"two conformance cases are named {case.name!r}")
            seen.add(case.name)
        _cache = cases
    return _cache
