"""default_collate / default_convert and placing batches on a device."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest
from vt_helpers import assert_close, to_np

import volta_core as vt
from volta_core.data import default_collate, default_convert
from volta_core.data.collate import HostArray, collate_host, place

Point = namedtuple("Point", ["x", "y"])


def test_tensors_are_stacked():
    out = default_collate([vt.tensor([1.0, 2.0]), vt.tensor([3.0, 4.0])])
    assert_close(out, [[1.0, 2.0], [3.0, 4.0]], dtype="float32")


def test_python_numbers():
    assert_close(default_collate([1, 2, 3]), [1, 2, 3], dtype="int64")
    assert_close(default_collate([1.5, 2.0]), [1.5, 2.0], dtype="float64")
    assert_close(default_collate([True, False]), [True, False], dtype="bool")


def test_numpy_arrays_and_scalars():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = default_collate([a, a + 1])
    assert_close(out, np.stack([a, a + 1]), dtype="float32")
    assert_close(default_collate([np.int32(1), np.int32(5)]), [1, 5], dtype="int32")


def test_tuples_become_lists_of_batches():
    out = default_collate([(1, 2.0), (3, 4.0)])
    assert isinstance(out, list) and len(out) == 2
    assert_close(out[0], [1, 3], dtype="int64")
    assert_close(out[1], [2.0, 4.0], dtype="float64")


def test_dicts_strings_and_nesting():
    batch = [{"img": np.ones(2, np.float32), "name": "a", "meta": {"id": 1}},
             {"img": np.zeros(2, np.float32), "name": "b", "meta": {"id": 2}}]
    out = default_collate(batch)
    assert set(out) == {"img", "name", "meta"}
    assert_close(out["img"], [[1, 1], [0, 0]], dtype="float32")
    assert out["name"] == ["a", "b"]
    assert_close(out["meta"]["id"], [1, 2], dtype="int64")


def test_namedtuple_keeps_its_type():
    out = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert isinstance(out, Point)
    assert_close(out.x, [1, 3])
    assert_close(out.y, [2.0, 4.0])


def test_errors_are_clear():
    with pytest.raises(ValueError, match="different shapes"):
        default_collate([np.zeros(2), np.zeros(3)])
    with pytest.raises(ValueError, match="equal size"):
        default_collate([[1, 2], [1]])
    with pytest.raises(TypeError, match="found object"):
        default_collate([object(), object()])


def test_default_convert_does_not_batch():
    out = default_convert({"a": np.arange(3), "b": "s", "c": (np.ones(1), 2)})
    assert_close(out["a"], [0, 1, 2], dtype="int64")
    assert out["b"] == "s"
    assert isinstance(out["c"], list) and out["c"][1] == 2


def test_host_collate_then_place_matches_default_collate():
    batch = [(vt.tensor([1.0, 2.0]), np.int64(3), "a"),
             (vt.tensor([3.0, 4.0]), np.int64(4), "b")]
    host = collate_host(batch)
    assert isinstance(host[0], HostArray) and host[0].device == "cpu"
    assert isinstance(host[1], HostArray) and host[1].device is None
    placed = place(host, vt.Device("cpu"))
    ref = default_collate(batch)
    for p, r in zip(placed[:2], ref[:2]):
        assert_close(p, to_np(r))
        assert p.device == "cpu"
    assert placed[2] == ["a", "b"]


def test_place_keeps_non_tensor_leaves():
    data = {"x": HostArray(np.ones(2, np.float32)), "k": None, "n": 3, "s": ("a", "b")}
    out = place(data, None)
    assert isinstance(out["x"], vt.Tensor) and out["x"].device == "cpu"
    assert out["k"] is None and out["n"] == 3 and out["s"] == ("a", "b")
