"""The pytest plugin: one test item per case x dtype, so ``-k`` and ``-x`` work.

Use it with ``pytest -p volta_conformance.plugin --volta-backend NAME`` (or through the
``pytest11`` entry point once installed). When ``--volta-backend`` is given, only the
conformance items run; without it the plugin does nothing.
"""

from __future__ import annotations

from typing import Any

import pytest


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("volta", "Volta conformance suite")
    group.addoption("--volta-backend", help="run the conformance suite on this backend")
    group.addoption("--volta-device", help="device of the backend (default: its first)")
    group.addoption("--volta-dtypes", help="comma-separated dtypes (default: all but "
                                           "float16/bfloat16)")
    group.addoption("--volta-large", action="store_true",
                    help="run every large-input case")


class ConformanceItem(pytest.Item):
    """One case in one dtype; fails with the harness's explanation, skips if unsupported."""

    def __init__(self, *, case: Any, dtype: str, device: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.dtype = dtype
        self.device = device
        self.result = None

    def runtest(self) -> None:
        import volta_core as vt

        from .harness import run_case

        # IEEE float32, as run_suite: no TF32 convolutions (cuDNN's default is on)
        tf32, vt.backends.cudnn.allow_tf32 = vt.backends.cudnn.allow_tf32, False
        try:
            self.result = r = run_case(self.case, self.dtype, self.device)
        finally:
            vt.backends.cudnn.allow_tf32 = tf32
        self.user_properties.append(("status", r.status))
        if r.status == "unsupported":
            pytest.skip(f"unsupported: {r.detail}")
        if r.status == "fail":
            raise ConformanceFailure(r.detail)

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, ConformanceFailure):
            return f"{self.name}: {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple:
        return self.path, None, f"volta-conformance {self.name}"


class ConformanceFailure(AssertionError):
    """A case whose results differ from the reference."""


def pytest_ignore_collect(collection_path: Any, config: Any) -> bool | None:
    # with --volta-backend, the run is the conformance suite only
    return True if config.getoption("volta_backend") else None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: Any, config: Any, items: list) -> None:
    backend = config.getoption("volta_backend")
    if not backend:
        return
    from volta_core.backend import get_backend

    from .cases import all_cases
    from .harness import select

    b = get_backend(backend)
    reason = b.unavailable_reason()
    if reason is not None:
        raise pytest.UsageError(f"backend {backend!r} is unavailable: {reason}")
    device = config.getoption("volta_device") or b.device_type
    raw = config.getoption("volta_dtypes")
    dtypes = [d.strip() for d in raw.split(",")] if raw else None
    for case, dt in select(all_cases(), dtypes, None, config.getoption("volta_large")):
        items.append(ConformanceItem.from_parent(session, name=f"{case.name}[{dt}]",
                                                 case=case, dtype=dt, device=device))
