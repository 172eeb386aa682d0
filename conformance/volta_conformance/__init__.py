"""Volta's conformance suite: certify a backend against the NumPy CPU reference.

Run it as ``volta-conformance --backend NAME`` (or ``python -m volta_conformance``), or
with pytest: ``pytest -p volta_conformance.plugin --volta-backend NAME``. Cases are data
(``volta_conformance.cases``), run by one harness (``volta_conformance.harness``).
"""

from .case import Arg, Case, OpCase, Scalar
from .case_nn import ModuleCase, OptimCase, TrainCase
from .harness import Result, run_case, run_suite
from .report import summary_line

__all__ = ["Arg", "Case", "OpCase", "Scalar", "ModuleCase", "OptimCase", "TrainCase",
           "Result", "run_case", "run_suite", "summary_line"]
