"""Conv and transposed-conv modules against PyTorch's with random configurations: every
``padding_mode`` (zeros, reflect, replicate, circular; ints and ``'same'``), groups,
strides, dilations and, for transposed convs, output paddings up to the dilation (past
the stride); outputs and the input and weight gradients, float64, on every device."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from vt_helpers import available_devices

import volta_core as vt


def _config(rng: np.random.Generator) -> tuple[str, dict, tuple, int, int, tuple]:
    nd = int(rng.integers(1, 4))
    transposed = rng.random() < 0.35
    g = int(rng.choice([1, 1, 2, 3]))
    cin, cout = g * int(rng.integers(1, 3)), g * int(rng.integers(1, 3))
    k = tuple(int(v) for v in rng.integers(1, 4, nd))
    s = tuple(int(v) for v in rng.integers(1, 3, nd))
    d = tuple(int(v) for v in rng.integers(1, 3, nd))
    sizes = tuple(int(v) for v in rng.integers(3, 8, nd))
    kw = dict(stride=s, dilation=d, groups=g, bias=bool(rng.random() < 0.7))
    if transposed:
        kw["padding"] = tuple(int(v) for v in rng.integers(0, 2, nd))
        kw["output_padding"] = tuple(int(min(v, max(s[i], d[i]) - 1))
                                     for i, v in enumerate(rng.integers(0, 2, nd)))
        return f"ConvTranspose{nd}d", kw, k, cin, cout, sizes
    kw["padding_mode"] = str(rng.choice(["zeros", "reflect", "replicate", "circular"]))
    if rng.random() < 0.2 and all(v == 1 for v in s):
        kw["padding"] = "same"
    else:
        kw["padding"] = tuple(int(v) for v in rng.integers(0, 3, nd))
    return f"Conv{nd}d", kw, k, cin, cout, sizes


def _run(m, name, kw, k, cin, cout, x0, weights=None, device=None):
    torch.manual_seed(0)
    layer = getattr(m.nn, name)(cin, cout, k, **kw).double()
    if weights is not None:
        layer.weight.data.copy_(vt.tensor(weights[0]))
        if layer.bias is not None:
            layer.bias.data.copy_(vt.tensor(weights[1]))
        layer = layer.to(device)
    kwargs = {} if m is torch else {"device": device}
    x = m.tensor(x0, requires_grad=True, **kwargs)
    y = layer(x)
    w = m.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)), **kwargs)
    (y * w).sum().backward()
    out = [a.detach().cpu().numpy() for a in (y, x.grad, layer.weight.grad)]
    params = (layer.weight.detach().cpu().numpy(),
              None if layer.bias is None else layer.bias.detach().cpu().numpy())
    return out, params


@pytest.mark.parametrize("device", available_devices())
@pytest.mark.parametrize("seed", range(8))
def test_random_conv_modules_match_torch(device, seed):
    from vt_helpers import device_has

    if not device_has(device, "float64"):
        pytest.skip(f"{device} has no float64")
    rng = np.random.default_rng(seed)
    for _ in range(12):
        name, kw, k, cin, cout, sizes = _config(rng)
        x0 = rng.standard_normal((2, cin) + sizes)
        try:
            want, params = _run(torch, name, kw, k, cin, cout, x0)
        except RuntimeError:  # an input too small for the kernel: both refuse
            with pytest.raises((vt.VoltaError, ValueError)):
                _run(vt, name, kw, k, cin, cout, x0, _random_params(name, kw, k, cin, cout),
                     device)
            continue
        got, _ = _run(vt, name, kw, k, cin, cout, x0, params, device)
        for what, a, b in zip(("output", "input grad", "weight grad"), want, got):
            np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-9,
                                       err_msg=f"{what} of {name}({cin}, {cout}, {k}, {kw})")


def _random_params(name, kw, k, cin, cout):
    layer = getattr(torch.nn, name)(cin, cout, k, **kw).double()
    return (layer.weight.detach().numpy(),
            None if layer.bias is None else layer.bias.detach().numpy())


def test_padding_mode_checks_like_torch():
    with pytest.raises(ValueError, match="padding_mode"):
        vt.nn.Conv2d(2, 2, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match='Only "zeros" padding mode'):
        torch.nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match='Only "zeros" padding mode'):
        vt.nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")
