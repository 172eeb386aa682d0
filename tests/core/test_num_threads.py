"""``vt.get_num_threads`` / ``vt.set_num_threads`` and the CPU backend's default count."""

from __future__ import annotations

import pytest

import volta_core as vt

threadpoolctl = pytest.importorskip("threadpoolctl")


def test_default_is_at_most_the_cores_this_process_may_use():
    from volta_numpy.threads import available_cores

    assert 1 <= vt.get_num_threads() <= max(available_cores(), 1) or \
        any(__import__("os").environ.get(v) for v in ("OMP_NUM_THREADS",
                                                      "OPENBLAS_NUM_THREADS"))


def test_set_then_get_round_trips():
    before = vt.get_num_threads()
    try:
        vt.set_num_threads(1)
        assert vt.get_num_threads() == 1
    finally:
        vt.set_num_threads(before)
    assert vt.get_num_threads() == before


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_bad_counts_raise(bad):
    with pytest.raises(ValueError, match="set_num_threads"):
        vt.set_num_threads(bad)
