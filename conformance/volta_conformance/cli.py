"""``volta-conformance``: certify a backend against the NumPy reference.

Exit status 0 only when no case failed (unsupported cases do not fail a run; they are
listed with their reasons).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from . import report
from .harness import Result, run_suite


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="volta-conformance",
        description="Run Volta's conformance suite on a backend and compare every case, "
                    "forward and backward, with the NumPy CPU reference.")
    p.add_argument("--backend", required=True, help="backend name, e.g. numpy, strict, cupy")
    p.add_argument("--device", help="device of that backend (default: its first device)")
    p.add_argument("--dtypes", help="comma-separated dtypes, e.g. float32,float64 "
                                    "(default: every dtype a case declares but float16 "
                                    "and bfloat16)")
    p.add_argument("--report", help="write a report: report.md (Markdown) or report.json")
    p.add_argument("--docs", help="update this backend's section of a generated docs page "
                                  "(docs/conformance.md)")
    p.add_argument("-k", dest="pattern", help="only case ids containing one of these "
                                              "words ('add or matmul', 'not large')")
    p.add_argument("--large", action="store_true",
                   help="run every large-input case (above 2**20 elements), not only "
                        "the default subset")
    p.add_argument("-q", "--quiet", action="store_true", help="print only failures and "
                                                              "the summary")
    p.add_argument("--list", action="store_true", help="list the selected case ids and exit")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suite; return the exit status (0: nothing failed)."""
    args = parse_args(argv)
    dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()] if args.dtypes else None
    if args.list:
        from .cases import all_cases
        from .harness import select

        for case, dt in select(all_cases(), dtypes, args.pattern, args.large):
            print(f"{case.name}[{dt}]")
        return 0

    def progress(r: Result) -> None:
        if r.status == "fail":
            print(f"FAIL {r.id}: {r.detail}", flush=True)
        elif not args.quiet and r.status == "unsupported":
            print(f"unsupported {r.id}: {r.detail}", flush=True)

    start = time.perf_counter()
    try:
        results = run_suite(args.backend, args.device, dtypes, args.pattern, args.large,
                            progress)
    except Exception as exc:  # unknown or unavailable backend: say why, exit 2
        print(f"volta-conformance: {exc}", file=sys.stderr)
        return 2
    seconds = time.perf_counter() - start
    from volta_core.backend import get_backend

    device = args.device or get_backend(args.backend).device_type
    meta = report.meta_for(args.backend, device, dtypes, args.pattern, args.large, seconds)
    if args.report:
        report.write(args.report, results, meta)
        print(f"report written to {args.report}")
    if args.docs:
        report.update_docs(args.docs, args.backend, results, meta)
        print(f"{args.docs} updated for backend {args.backend!r}")
    print(f"volta-conformance on {args.backend} ({device}) in {seconds:.1f}s")
    print(report.summary_line(results))
    return 1 if any(r.status == "fail" for r in results) else 0
