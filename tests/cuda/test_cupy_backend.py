"""The CuPy backend on a real GPU (skipped, with the reason, where CUDA is unavailable)."""

import numpy as np
import pytest
from vt_helpers import assert_close, rand

import volta_core as vt


def test_device_and_transfers_round_trip():
    a = rand(3, 4, seed=1).astype(np.float32)
    x = vt.tensor(a, device="cuda")
    assert x.device == "cuda:0" and x.device.type == "cuda" and str(x.device) == "cuda:0"
    assert vt.cuda.get_device_name().startswith("NVIDIA")
    assert_close(x.cpu(), a)
    assert_close(vt.tensor(a).to("cuda").to("cpu"), a)
    assert vt.cuda.is_available() and vt.cuda.device_count() >= 1


def test_ops_and_gradients_stay_on_the_gpu():
    a, b = rand(5, 3, seed=2), rand(3, 4, seed=3)
    x = vt.tensor(a, device="cuda", requires_grad=True)
    w = vt.tensor(b, device="cuda", requires_grad=True)
    loss = (x @ w).tanh().sum()
    loss.backward()
    assert x.grad.device.type == "cuda" and w.grad.device.type == "cuda"
    t = np.tanh(a @ b)
    assert_close(loss, t.sum(), rtol=1e-10)
    assert_close(w.grad, a.T @ (1 - t ** 2), rtol=1e-10)


def test_gradients_flow_back_across_an_explicit_transfer():
    x = vt.ones(3, requires_grad=True)
    (x.to("cuda") * 2).sum().backward()
    assert x.grad.device.type == "cpu" and x.grad.tolist() == [2.0, 2.0, 2.0]


def test_mixing_cpu_and_cuda_raises():
    with pytest.raises(vt.DeviceError, match=r"cuda:0 and cpu|cpu and cuda:0"):
        vt.ones(2, device="cuda") + vt.ones(2)


def test_memory_statistics_and_flat_memory():
    vt.cuda.synchronize()
    before = vt.cuda.memory_allocated()
    x = vt.zeros(1024, 1024, device="cuda")  # 4 MiB
    assert vt.cuda.memory_allocated() >= before + 4 * 2**20
    assert vt.cuda.max_memory_allocated() >= vt.cuda.memory_allocated()
    del x
    assert vt.cuda.memory_allocated() <= before + 1024
    vt.cuda.reset_peak_memory_stats()
    assert vt.cuda.max_memory_allocated() == vt.cuda.memory_allocated()


def test_out_of_memory_is_a_clear_volta_error():
    with pytest.raises(vt.OutOfMemoryError, match=r"CUDA out of memory: tried to allocate"):
        vt.empty(2**44, dtype="uint8", device="cuda")


def test_dlpack_zero_copy_with_torch_and_numpy():
    torch = pytest.importorskip("torch")
    t = torch.arange(6, dtype=torch.float32, device="cuda")
    v = vt.from_dlpack(t)
    assert v.device.type == "cuda" and v.tolist() == [0, 1, 2, 3, 4, 5]
    t[0] = 42
    assert v.tolist()[0] == 42  # shares memory
    back = torch.from_dlpack(v * 2)
    assert back.device.type == "cuda" and back.tolist()[0] == 84


def test_tf32_is_opt_in():
    assert vt.backends.cuda.matmul.allow_tf32 is False
    a = vt.full((256, 256), 1.0001, device="cuda")
    vt.backends.cuda.matmul.allow_tf32 = True
    try:
        fast = (a @ a).max().item()
    finally:
        vt.backends.cuda.matmul.allow_tf32 = False
    full_precision = (a @ a).max().item()
    assert full_precision == pytest.approx(256 * 1.0001 ** 2, rel=1e-6)
    assert fast == pytest.approx(256.0, rel=1e-5)  # TF32 rounds 1.0001 to 1.0


def test_float16_end_to_end():
    x = vt.randn(8, 16, device="cuda", dtype="float16", requires_grad=True)
    w = vt.randn(16, 4, device="cuda", dtype="float16", requires_grad=True)
    (x @ w).relu().sum().backward()
    assert x.grad.dtype is vt.float16 and w.grad.dtype is vt.float16


def test_seeded_rng_on_device():
    vt.manual_seed(7)
    a = vt.randn(100, device="cuda").tolist()
    vt.manual_seed(7)
    assert vt.randn(100, device="cuda").tolist() == a
