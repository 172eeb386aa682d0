"""PyTorch names of issue 18 outside ops: Generator objects and seeding, randint's forms,
sampling ops, vt.accelerator, vt.cuda seeding, typed tensors, Tensor.type/is_cuda/
__format__/__array__, vt.compile, volta_core.utils.data and lazy samplers."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from torch_ref import torch

import volta_core as vt


def test_generator_streams_and_state():
    g = vt.Generator().manual_seed(0)
    assert isinstance(g, vt.Generator) and g.device == vt.device("cpu")
    assert g.initial_seed() == 0
    assert vt.Generator().initial_seed() == torch.Generator().initial_seed()
    a = vt.rand(4, generator=g)
    b = vt.rand(4, generator=vt.Generator().manual_seed(0))
    assert a.tolist() == b.tolist()
    state = g.get_state()
    assert state.dtype is vt.uint8 and state.ndim == 1
    x = vt.randn(3, generator=g)
    g.set_state(state)
    assert vt.randn(3, generator=g).tolist() == x.tolist()
    # a Generator's stream is independent of the default generator's
    vt.manual_seed(5)
    g.manual_seed(1)
    first = vt.rand(2).tolist()
    vt.manual_seed(5)
    vt.rand(3, generator=g)
    assert vt.rand(2).tolist() == first
    s = vt.Generator().seed()
    assert isinstance(s, int) and s >= 0
    assert vt.Generator().manual_seed(-1).initial_seed() == torch.Generator().manual_seed(
        -1).initial_seed()


def test_generator_errors_like_torch():
    for m in (vt, torch):
        with pytest.raises(RuntimeError):
            m.Generator().manual_seed(1.5)
        with pytest.raises(ValueError):
            m.Generator().manual_seed(2 ** 64)
        with pytest.raises(TypeError):
            m.Generator().set_state(m.zeros(3))
    with pytest.raises(TypeError):
        vt.rand(2, generator=3)


def test_default_generator_and_seeding():
    assert vt.manual_seed(7) is vt.default_generator
    assert vt.initial_seed() == 7 and vt.default_generator.initial_seed() == 7
    st = vt.get_rng_state()
    x = vt.rand(3)
    vt.set_rng_state(st)
    assert vt.rand(3).tolist() == x.tolist()
    s = vt.seed()
    assert vt.initial_seed() == s
    vt.manual_seed(0)


def test_every_random_function_takes_generator():
    def draws(g):
        t = vt.zeros(3)
        return [
            vt.rand(2, generator=g), vt.randn(2, 2, generator=g),
            vt.randint(0, 10, (3,), generator=g), vt.randint(10, (3,), generator=g),
            vt.randperm(6, generator=g), vt.normal(0.0, 1.0, (2,), generator=g),
            vt.normal(vt.zeros(2), vt.ones(2), generator=g),
            vt.bernoulli(vt.full((4,), 0.5), generator=g),
            vt.multinomial(vt.ones(5), 3, generator=g),
            vt.multinomial(vt.ones(5), 3, replacement=True, generator=g),
            vt.rand_like(t, generator=g), vt.randn_like(t, generator=g),
            vt.randint_like(t, 5, generator=g), vt.poisson(vt.full((3,), 2.0), generator=g),
            vt.zeros(3).uniform_(-1, 1, generator=g), vt.zeros(3).normal_(generator=g),
            vt.zeros(3).bernoulli_(0.5, generator=g), vt.zeros(3).exponential_(generator=g),
            vt.zeros(3).random_(0, 9, generator=g), vt.zeros(3).log_normal_(generator=g),
            vt.zeros(3).cauchy_(generator=g), vt.zeros(3).geometric_(0.5, generator=g),
        ]
    one = draws(vt.Generator().manual_seed(3))
    two = draws(vt.Generator().manual_seed(3))
    for a, b in zip(one, two):
        assert a.tolist() == b.tolist()


def test_randint_forms_like_torch():
    for m in (vt, torch):
        assert tuple(m.randint(5, (2, 3)).shape) == (2, 3)
        assert tuple(m.randint(2, 5, (4,)).shape) == (4,)
        assert tuple(m.randint(low=0, high=5, size=(2,)).shape) == (2,)
        assert str(m.randint(3, (2,), dtype=m.float32).dtype).endswith("float32")
        assert str(m.randint(5, (2,)).dtype).endswith("int64")
        with pytest.raises(TypeError):
            m.randint(5)
        with pytest.raises(RuntimeError):
            m.randint(5, 5, (2,))
    x = vt.randint(3, 7, (1000,))
    assert int(x.min()) >= 3 and int(x.max()) <= 6


def test_sampling_ops_values():
    vt.manual_seed(0)
    b = vt.bernoulli(vt.tensor([0.0, 1.0, 0.0, 1.0], dtype="float64"))
    assert b.tolist() == [0.0, 1.0, 0.0, 1.0] and b.dtype is vt.float64
    n = vt.normal(vt.tensor([0.0, 100.0]), vt.tensor([1e-6, 1e-6]))
    np.testing.assert_allclose(n.numpy(), [0.0, 100.0], atol=1e-3)
    assert vt.normal(vt.zeros(2, 1), vt.ones(3)).shape == tuple(
        torch.normal(torch.zeros(2, 1), torch.ones(3)).shape)
    p = vt.poisson(vt.full((20000,), 4.0))
    assert abs(float(p.mean()) - 4.0) < 0.1 and abs(float(p.var()) - 4.0) < 0.2
    e = vt.zeros(20000, dtype="float64").exponential_(2.0)
    assert abs(float(e.mean()) - 0.5) < 0.02
    r = vt.zeros(1000, dtype="int64").random_(3, 6)
    assert set(r.tolist()) == {3, 4, 5}
    geo = vt.zeros(20000).geometric_(0.25)
    assert float(geo.min()) >= 1 and abs(float(geo.mean()) - 4.0) < 0.15
    for m in (vt, torch):
        with pytest.raises(RuntimeError):
            m.normal(m.zeros(2), -m.ones(2))
        with pytest.raises(RuntimeError):
            m.zeros(2).exponential_(-1.0)


def test_generator_device_mismatch():
    try:
        gw = vt.Generator("wgpu")
    except Exception:
        pytest.skip("no wgpu adapter")
    with pytest.raises(vt.DeviceError):
        vt.rand(2, generator=gw)
    a = vt.rand(3, device="wgpu", generator=gw.manual_seed(4))
    b = vt.rand(3, device="wgpu", generator=vt.Generator("wgpu").manual_seed(4))
    assert a.tolist() == b.tolist()


def test_accelerator_and_cuda_seeding():
    acc = vt.accelerator.current_accelerator()
    assert vt.accelerator.is_available() == (acc is not None)
    assert vt.accelerator.device_count() == (0 if acc is None else vt.accelerator
                                             .device_count())
    if acc is None:
        with pytest.raises(RuntimeError, match="none is available"):
            vt.accelerator.current_device_index()
    else:
        assert vt.accelerator.current_device_index() == 0
        vt.accelerator.synchronize()
        with vt.accelerator.device_index(0):
            pass
    vt.cuda.manual_seed(1)  # no-ops without CUDA, as in PyTorch
    vt.cuda.manual_seed_all(1)
    vt.cuda.seed_all()
    torch.cuda.manual_seed_all(1)
    assert vt.cuda.current_device() == 0 or not vt.cuda.is_available()
    assert vt.cuda.is_bf16_supported() == (vt.cuda.is_available() and
                                           vt.cuda.is_bf16_supported())
    try:
        vt.zeros(1, device="wgpu")
    except Exception:
        return
    state = vt.wgpu.get_rng_state()
    a = vt.rand(3, device="wgpu")
    vt.wgpu.set_rng_state(state)
    assert vt.rand(3, device="wgpu").tolist() == a.tolist()


def test_typed_tensors_like_torch():
    for name, dt in (("FloatTensor", "float32"), ("DoubleTensor", "float64"),
                     ("HalfTensor", "float16"), ("LongTensor", "int64"),
                     ("IntTensor", "int32"), ("BoolTensor", "bool"), ("ByteTensor", "uint8")):
        v, t = getattr(vt, name), getattr(torch, name)
        assert v([1, 0, 2]).dtype.name == dt and v([1, 0, 2]).tolist() == t([1, 0, 2]).tolist()
        assert v(2, 3).shape == tuple(t(2, 3).shape) and v(2, 3).dtype.name == dt
        assert v().shape == tuple(t().shape)
        assert isinstance(vt.zeros(2, dtype=dt), v)
        assert not isinstance(vt.zeros(2, dtype="int8"), v)
        assert not isinstance([1], v)
    for m in (vt, torch):
        with pytest.raises(TypeError):
            m.FloatTensor(m.tensor([1, 2]))
    assert vt.FloatTensor(vt.tensor([1.0])).dtype is vt.float32


def test_tensor_type_is_cuda_format_array():
    for m in (vt, torch):
        t = m.zeros(2, 3)
        assert t.type() == "torch.FloatTensor"
        assert t.long().type() == "torch.LongTensor"
        assert str(t.type(m.int64).dtype).endswith("int64")
        assert str(t.type("torch.DoubleTensor").dtype).endswith("float64")
        assert str(t.type(m.LongTensor).dtype).endswith("int64")
        assert t.is_cuda is False and t.is_cpu is True
        assert f"{m.tensor(2.5):.2f}" == "2.50"
        assert f"{m.tensor(3):d}" == "3"
        assert format(m.tensor(0.125), "e") == format(0.125, "e")
        with pytest.raises(TypeError):
            f"{t:.3f}"
        assert f"{t}" == str(t)
        np.testing.assert_array_equal(np.asarray(m.ones(2)), [1.0, 1.0])
        assert np.asarray(m.ones(2), dtype=np.int32).dtype == np.int32
        with pytest.raises(RuntimeError):
            np.asarray(m.ones(2, requires_grad=True))


def test_compile_passthrough():
    model = vt.nn.Linear(2, 2)
    assert vt.compile(model) is model
    assert vt.compile(model, mode="max-autotune", fullgraph=True, dynamic=False) is model

    @vt.compile(backend="inductor")
    def f(x):
        return x + 1

    assert f(vt.ones(1)).tolist() == [2.0]
    for m in (vt, torch):
        with pytest.raises(RuntimeError):
            m.compile(model, mode="fastest")
        with pytest.raises(RuntimeError):
            m.compile(model, mode="default", options={})
    assert vt.compiler.is_compiling() is False


def test_utils_data_is_vt_data():
    from volta_core.utils.data.distributed import DistributedSampler
    from volta_core.utils.data.sampler import Sampler

    from volta_core.utils.data import (
        BatchSampler,
        ConcatDataset,
        DataLoader,
        Dataset,
        IterableDataset,
        RandomSampler,
        SequentialSampler,
        Subset,
        SubsetRandomSampler,
        TensorDataset,
        WeightedRandomSampler,
        default_collate,
        get_worker_info,
        random_split,
    )

    assert DataLoader is vt.data.DataLoader and Sampler is vt.data.Sampler
    assert DistributedSampler is vt.data.DistributedSampler
    for obj in (BatchSampler, ConcatDataset, Dataset, IterableDataset, RandomSampler,
                SequentialSampler, Subset, SubsetRandomSampler, TensorDataset,
                WeightedRandomSampler, default_collate, get_worker_info, random_split):
        assert getattr(vt.data, obj.__name__) is obj
    ds = TensorDataset(vt.arange(10.0), vt.arange(10))
    g = vt.Generator().manual_seed(0)
    a, b = random_split(ds, [0.7, 0.3], generator=g)
    assert (len(a), len(b)) == (7, 3)
    again = random_split(ds, [0.7, 0.3], generator=vt.Generator().manual_seed(0))
    assert a.indices == again[0].indices
    loader = DataLoader(ds, batch_size=4, shuffle=True, generator=vt.Generator().manual_seed(1))
    xs = [x for x, _ in loader]
    assert sorted(vt.cat(xs).tolist()) == list(map(float, range(10)))


def test_lazy_samplers():
    from volta_core.utils.data import RandomSampler, WeightedRandomSampler

    s = RandomSampler(range(10), replacement=True, num_samples=int(1e10))
    assert len(s) == int(1e10)
    first = list(itertools.islice(iter(s), 1000))
    assert all(0 <= i < 10 for i in first)
    w = WeightedRandomSampler([0.0, 1.0, 3.0], num_samples=int(1e10))
    head = list(itertools.islice(iter(w), 5000))
    assert 0 not in head and abs(head.count(2) / 5000 - 0.75) < 0.03
    # without replacement and more samples than items: whole permutations, lazily
    s = RandomSampler(range(4), num_samples=10, generator=vt.Generator().manual_seed(2))
    order = list(s)
    assert sorted(order[:4]) == [0, 1, 2, 3] and sorted(order[4:8]) == [0, 1, 2, 3]
    # resumable at any offset
    it = iter(s)
    next(it), next(it), next(it)
    state = s.state_dict()
    rest = list(it)
    s2 = RandomSampler(range(4), num_samples=10)
    s2.load_state_dict(state)
    assert list(s2) == rest


def test_finfo_iinfo_size():
    for dt in ("float16", "bfloat16", "float32", "float64"):
        v, t = vt.finfo(getattr(vt, dt)), torch.finfo(getattr(torch, dt))
        for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
            assert getattr(v, attr) == getattr(t, attr), (dt, attr)
    assert vt.finfo().eps == torch.finfo().eps
    for dt in ("uint8", "int8", "int16", "int32", "int64"):
        v, t = vt.iinfo(getattr(vt, dt)), torch.iinfo(getattr(torch, dt))
        assert (v.bits, v.min, v.max) == (t.bits, t.min, t.max)
    for m in (vt, torch):
        with pytest.raises(TypeError):
            m.finfo(m.int32)
        with pytest.raises(TypeError):
            m.iinfo(m.float32)
    assert vt.zeros(2, 3).shape == vt.Size([2, 3]) == torch.Size([2, 3])
    assert vt.Size([2, 3]).numel() == 6


class _SeedPerItem(vt.data.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = vt.utils.data.get_worker_info()
        return vt.tensor([vt.initial_seed() == info.seed, float(vt.rand(1))])


def test_worker_initial_seed_is_the_workers_seed():
    loader = vt.utils.data.DataLoader(_SeedPerItem(), batch_size=None, num_workers=2)
    rows = [row.tolist() for row in loader]
    assert all(ok == 1.0 for ok, _ in rows)
    assert len({r for _, r in rows}) == 4  # workers draw different numbers
