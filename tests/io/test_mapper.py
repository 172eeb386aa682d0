"""``StateDictMapper``: chainable key and value transformations."""

from __future__ import annotations

import numpy as np
import pytest
from vt_helpers import to_np

import volta_core as vt
from volta_core.io import StateDictMapper


def sd():
    return {"module.encoder.proj.weight": vt.tensor(np.arange(6.0).reshape(2, 3)),
            "module.encoder.proj.bias": vt.zeros(2),
            "module.decoder.out.weight": vt.ones(3, 2),
            "module.bn.num_batches_tracked": vt.tensor(5)}


def test_chain_in_order():
    m = (StateDictMapper()
         .strip_prefix("module.")
         .exclude_keys(r"num_batches_tracked$")
         .select_keys(r"^encoder\.", r"^decoder\.")
         .rename_prefix("encoder.", "enc.")
         .rename("decoder.out.weight", "head.weight")
         .transpose("enc.proj.weight")
         .add_prefix("net."))
    src = sd()
    out = m(src)
    assert sorted(out) == ["net.enc.proj.bias", "net.enc.proj.weight", "net.head.weight"]
    np.testing.assert_array_equal(to_np(out["net.enc.proj.weight"]),
                                  np.arange(6.0).reshape(2, 3).T)
    assert out["net.head.weight"] is src["module.decoder.out.weight"]
    assert len(src) == 4 and "module.encoder.proj.weight" in src  # input untouched
    assert m.apply(sd()).keys() == out.keys() and len(m) == 7
    assert ".transpose('enc.proj.weight',)" in repr(m)


def test_regex_rename_transpose_pattern_and_transform():
    m = (StateDictMapper()
         .rename_regex(r"^module\.(\w+)\.", r"\1/")
         .transpose_pattern(r"weight$")
         .transform(lambda t: t * 2, pattern=r"/proj\.")
         .map_keys(str.upper))
    out = m(sd())
    assert sorted(out) == ["BN/NUM_BATCHES_TRACKED", "DECODER/OUT.WEIGHT",
                           "ENCODER/PROJ.BIAS", "ENCODER/PROJ.WEIGHT"]
    assert out["DECODER/OUT.WEIGHT"].shape == (2, 3)
    np.testing.assert_array_equal(to_np(out["ENCODER/PROJ.WEIGHT"]),
                                  2 * np.arange(6.0).reshape(2, 3).T)


def test_transform_all_values_and_numpy_values():
    out = StateDictMapper().transform(lambda a: a + 1).transpose("w")({"w": np.zeros((2, 3))})
    assert out["w"].shape == (3, 2) and out["w"][0, 0] == 1


def test_strict_missing_keys_and_hints():
    with pytest.raises(KeyError, match=r"missing key\(s\) 'module.encoder.proj.weigth' "
                                       r"\(close: \['module.encoder.proj.weight'"):
        StateDictMapper().rename("module.encoder.proj.weigth", "x")(sd())
    with pytest.raises(KeyError, match="match no key"):
        StateDictMapper().select_keys("^nothing")(sd())
    with pytest.raises(KeyError, match="matches no key"):
        StateDictMapper().transpose_pattern("^nothing")(sd())
    lax = StateDictMapper(strict=False).rename("nope", "x").transpose("nope")
    assert lax(sd()).keys() == sd().keys()


def test_collisions_and_bad_values():
    with pytest.raises(ValueError, match=r"'module.encoder.proj.weight' and "
                                         r"'module.decoder.out.weight' -> 'w'"):
        StateDictMapper().map_keys(lambda k: "w" if k.endswith("weight") else k)(sd())
    with pytest.raises(ValueError, match="several keys map to one name"):
        StateDictMapper().rename("module.bn.num_batches_tracked", "module.encoder.proj.bias")(sd())
    with pytest.raises(ValueError, match=r"has shape \(2,\); only tensors with >= 2"):
        StateDictMapper().transpose("module.encoder.proj.bias")(sd())
    with pytest.raises(TypeError, match="expected a dict"):
        StateDictMapper().apply([1, 2])
