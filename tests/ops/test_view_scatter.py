"""``select_scatter``, ``slice_scatter`` and ``diagonal_scatter`` against PyTorch CPU on
every device: values and both gradients; a ``src`` of the wrong shape refused."""

from __future__ import annotations

import numpy as np
import pytest
from vt_helpers import available_devices

import volta_core as vt

torch = pytest.importorskip("torch")

DEVICES = available_devices()

CASES = [  # fn(m, a, src), src shape; a is (3, 4, 5)
    (lambda m, a, s: m.select_scatter(a, s, 1, -1), (3, 5)),
    (lambda m, a, s: m.select_scatter(a, s, 0, 2), (4, 5)),
    (lambda m, a, s: m.slice_scatter(a, s, 2, 1, None, 2), (3, 4, 2)),
    (lambda m, a, s: a.slice_scatter(s, dim=-2, start=-3, end=-1), (3, 2, 5)),
    (lambda m, a, s: a.slice_scatter(s), (3, 4, 5)),
    (lambda m, a, s: m.diagonal_scatter(a, s, 1, 0, 2), (4, 3)),
    (lambda m, a, s: a.diagonal_scatter(s, -1, 1, 2), (3, 3)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_view_scatter_as_pytorch(device, case):
    fn, shape = CASES[case]
    rng = np.random.default_rng(case)
    x, src = (rng.standard_normal(s).astype(np.float32) for s in ((3, 4, 5), shape))
    out = []
    for m, dev in ((torch, "cpu"), (vt, device)):
        a, s = ((vt.tensor(v, device=dev) if m is vt else torch.tensor(v)).requires_grad_(True)
                for v in (x, src))
        y = fn(m, a, s)
        g = np.arange(y.numel(), dtype=np.float32).reshape(tuple(y.shape))
        y.backward(vt.tensor(g, device=dev) if m is vt else torch.tensor(g))
        host = (lambda t: t.detach().cpu().numpy()) if m is vt else (lambda t: t.detach().numpy())
        out.append([host(y), host(a.grad), host(s.grad)])
    for got, want in zip(out[1], out[0]):
        np.testing.assert_array_equal(got, want)


def test_wrong_src_shape_refused():
    with pytest.raises(vt.ShapeError, match="slice_scatter"):
        vt.slice_scatter(vt.zeros(4, 3), vt.zeros(2, 2), 1, 0, 3)
    with pytest.raises(RuntimeError):
        torch.slice_scatter(torch.zeros(4, 3), torch.zeros(2, 2), 1, 0, 3)
