"""Layers added for PyTorch programs (3-D convolutions, transposed 1-D/3-D convolutions,
BatchNorm3d, InstanceNorm1d/3d, 3-D and adaptive pooling, Unfold/Fold, Dropout3d,
Threshold, Softmax2d, CosineSimilarity, PairwiseDistance, LazyLinear), compared with
PyTorch: the same weights loaded into both, forward and backward, dtypes, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch_ref import compare, raises_like_torch

import volta_core as vt

RNG = np.random.default_rng(0)


def _module_pair(make):
    """``make(m)`` built in both libraries in float64, Volta given PyTorch's weights."""
    t = make(torch).double()
    v = make(vt).to("float64")
    v.load_state_dict({k: vt.tensor(a.detach().numpy()) for k, a in t.state_dict().items()})
    return t, v


def _check_module(make, x: np.ndarray, train: bool = True, tol: float = 1e-10) -> None:
    t, v = _module_pair(make)
    t.train(train)
    v.train(train)
    tx, vx = torch.tensor(x, requires_grad=True), vt.tensor(x, requires_grad=True)
    to, vo = t(tx), v(vx)
    np.testing.assert_allclose(vo.detach().numpy(), to.detach().numpy(), rtol=tol, atol=tol)
    assert vo.dtype.name == "float64"
    up = RNG.standard_normal(tuple(to.shape))
    to.backward(torch.tensor(up))
    vo.backward(vt.tensor(up))
    np.testing.assert_allclose(vx.grad.numpy(), tx.grad.numpy(), rtol=tol, atol=tol)
    for (name, a), b in zip(t.named_parameters(), v.parameters()):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=tol, atol=tol,
                                   err_msg=name)
    for (name, a), b in zip(t.named_buffers(), v.buffers()):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=tol, atol=tol, err_msg=name)


X5 = RNG.standard_normal((2, 4, 5, 6, 7))


@pytest.mark.parametrize("make", [
    lambda m: m.nn.Conv3d(4, 6, 3),
    lambda m: m.nn.Conv3d(4, 6, (3, 2, 3), stride=(2, 1, 2), padding=(1, 0, 2),
                          dilation=(1, 2, 1), groups=2, bias=False),
    lambda m: m.nn.Conv3d(4, 2, 2, padding="same"),
    lambda m: m.nn.ConvTranspose3d(4, 6, 3),
    lambda m: m.nn.ConvTranspose3d(4, 6, (3, 2, 3), stride=(2, 3, 1), padding=(1, 1, 0),
                                   output_padding=(1, 2, 0), groups=2, dilation=(1, 1, 2)),
], ids=["conv3d", "conv3d_all_options", "conv3d_same", "convT3d", "convT3d_all_options"])
def test_conv3d_layers(make) -> None:
    _check_module(make, X5)


def test_conv3d_unbatched() -> None:
    _check_module(lambda m: m.nn.Conv3d(4, 3, 2), X5[0])


@pytest.mark.parametrize("make", [
    lambda m: m.nn.ConvTranspose1d(4, 6, 3),
    lambda m: m.nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2,
                                   dilation=1),
    lambda m: m.nn.ConvTranspose1d(4, 2, 2, stride=3, dilation=2, bias=False),
])
def test_conv_transpose1d(make) -> None:
    _check_module(make, RNG.standard_normal((2, 4, 7)))


@pytest.mark.parametrize("train", [True, False])
def test_batchnorm3d(train: bool) -> None:
    _check_module(lambda m: m.nn.BatchNorm3d(4), X5, train=train)
    _check_module(lambda m: m.nn.BatchNorm3d(4, momentum=None, affine=False), X5, train=train)


@pytest.mark.parametrize("n", [1, 3])
@pytest.mark.parametrize("kw", [{}, {"affine": True}, {"track_running_stats": True}])
def test_instance_norm_1d_3d(n: int, kw: dict) -> None:
    x = RNG.standard_normal((2, 4, 9) if n == 1 else (2, 4, 3, 4, 5))
    cls = f"InstanceNorm{n}d"
    _check_module(lambda m: getattr(m.nn, cls)(4, **kw), x)
    _check_module(lambda m: getattr(m.nn, cls)(4, **kw), x[0])  # unbatched


def test_norm_layers_reject_wrong_ranks_like_torch() -> None:
    raises_like_torch(lambda m, t: m.nn.BatchNorm3d(4)(t), RNG.standard_normal((2, 4, 5)))
    raises_like_torch(lambda m, t: m.nn.InstanceNorm3d(4)(t), RNG.standard_normal((2, 4, 5)))


@pytest.mark.parametrize("fn", [
    lambda m, x: m.nn.MaxPool3d(2)(x),
    lambda m, x: m.nn.MaxPool3d((3, 2, 3), (2, 2, 1), (1, 1, 0), (1, 2, 1), ceil_mode=True)(x),
    lambda m, x: m.nn.AvgPool3d(2)(x),
    lambda m, x: m.nn.AvgPool3d(3, 2, 1, ceil_mode=True, count_include_pad=False)(x),
    lambda m, x: m.nn.AvgPool3d(3, 2, 1, ceil_mode=True)(x),
    lambda m, x: m.nn.AvgPool3d(2, divisor_override=3)(x),
    lambda m, x: m.nn.AdaptiveAvgPool3d((3, None, 4))(x),
    lambda m, x: m.nn.AdaptiveAvgPool3d(1)(x),
    lambda m, x: m.nn.AdaptiveMaxPool3d((3, 5, 4))(x),
    lambda m, x: m.nn.AdaptiveMaxPool3d(2)(x[0]),
])
def test_pooling_3d(fn) -> None:
    compare(fn, X5)


@pytest.mark.parametrize("fn", [
    lambda m, x: m.nn.AdaptiveAvgPool1d(4)(x),
    lambda m, x: m.nn.AdaptiveAvgPool1d(3)(x[0]),
    lambda m, x: m.nn.AdaptiveMaxPool1d(4)(x),
    lambda m, x: m.nn.AdaptiveMaxPool1d(4, return_indices=True)(x),
    lambda m, x: m.nn.functional.adaptive_max_pool1d(x, 5, return_indices=True),
])
def test_adaptive_pooling_1d(fn) -> None:
    compare(fn, RNG.standard_normal((2, 3, 11)))


@pytest.mark.parametrize("args", [
    ((2, 3), 1, 0, 1), ((2, 3), (1, 2), (1, 0), (2, 1)), (3, 1, 1, 2), (1, 1, 0, 1),
])
def test_unfold_and_fold(args) -> None:
    k, d, p, s = args
    x = RNG.standard_normal((2, 3, 7, 8))
    compare(lambda m, t: m.nn.Unfold(k, d, p, s)(t), x)
    compare(lambda m, t: m.nn.Unfold(k, d, p, s)(t), x[0])
    cols = torch.nn.functional.unfold(torch.tensor(x), k, d, p, s)
    c = RNG.standard_normal(tuple(cols.shape))
    compare(lambda m, t: m.nn.Fold((7, 8), k, d, p, s)(t), c)
    compare(lambda m, t: m.nn.Fold((7, 8), k, d, p, s)(t), c[0])


def test_fold_errors_like_torch() -> None:
    raises_like_torch(lambda m, t: m.nn.functional.fold(t, (4, 4), 2), np.zeros((1, 5, 9)))
    raises_like_torch(lambda m, t: m.nn.functional.fold(t, (4, 4), 2), np.zeros((1, 4, 8)))
    raises_like_torch(lambda m, t: m.nn.functional.unfold(t, 2), np.zeros((4, 4)))


def test_dropout3d() -> None:
    x = vt.ones(4, 6, 2, 3, 3)
    layer = vt.nn.Dropout3d(0.5)
    y = layer(x).numpy()
    per_channel = y.reshape(4, 6, -1)
    assert set(np.unique(per_channel)) <= {0.0, 2.0}
    assert (per_channel.min(-1) == per_channel.max(-1)).all()  # whole channels
    layer.eval()
    assert layer(x) is x or np.array_equal(layer(x).numpy(), x.numpy())
    raises_like_torch(lambda m, t: m.nn.functional.dropout3d(t, 1.5), np.ones((2, 2, 2, 2)))


@pytest.mark.parametrize("fn", [
    lambda m, x, y: m.nn.Threshold(0.1, 20.0)(x),
    lambda m, x, y: m.nn.Softmax2d()(x),
    lambda m, x, y: m.nn.Softmax2d()(x[0]),
    lambda m, x, y: m.nn.CosineSimilarity()(x, y),
    lambda m, x, y: m.nn.CosineSimilarity(dim=-1, eps=1e-3)(x, y),
    lambda m, x, y: m.nn.PairwiseDistance()(x[:, :, 0, 0], y[:, :, 0, 0]),
    lambda m, x, y: m.nn.PairwiseDistance(p=1.0, keepdim=True)(x[:, :, 0], y[:, :, 0]),
    lambda m, x, y: m.nn.functional.normalize(x, p=3.0, dim=2),
])
def test_small_layers(fn) -> None:
    compare(fn, RNG.standard_normal((2, 3, 4, 5)), RNG.standard_normal((2, 3, 4, 5)))


def test_lazy_linear_takes_in_features_from_the_first_input() -> None:
    lazy = vt.nn.LazyLinear(3)
    opt = vt.optim.SGD(lazy.parameters(), lr=0.1)
    out = lazy(vt.randn(2, 5))
    assert type(lazy) is vt.nn.Linear and lazy.in_features == 5
    assert tuple(lazy.weight.shape) == (3, 5) and tuple(out.shape) == (2, 3)
    out.sum().backward()
    opt.step()  # the optimizer built before the first call still holds the parameters
    t = torch.nn.LazyLinear(3)
    t(torch.randn(2, 5))
    assert repr(lazy) == repr(t)


def test_every_requested_layer_exists() -> None:
    names = ["Conv3d", "ConvTranspose1d", "ConvTranspose3d", "BatchNorm3d", "InstanceNorm1d",
             "InstanceNorm2d", "InstanceNorm3d", "Unfold", "Fold", "AdaptiveMaxPool1d",
             "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AdaptiveAvgPool1d",
             "AdaptiveAvgPool3d", "MaxPool3d", "AvgPool3d", "LazyLinear", "ParameterList",
             "ParameterDict", "DataParallel", "Dropout3d", "Threshold", "Softmax2d",
             "CosineSimilarity", "PairwiseDistance"]
    names += [f"{k}Pad{n}d" for k in ("Reflection", "Replication", "Zero", "Constant",
                                      "Circular") for n in (1, 2, 3)]
    assert [n for n in names if not hasattr(vt.nn, n)] == []
    for fn in ("normalize", "unfold", "fold", "conv3d", "conv_transpose1d",
               "conv_transpose3d", "max_pool3d", "avg_pool3d", "adaptive_max_pool1d",
               "adaptive_max_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool3d",
               "pairwise_distance", "dropout3d"):
        assert hasattr(vt.nn.functional, fn), fn


@pytest.mark.parametrize("fn", [
    lambda m, x: m.nn.LPPool1d(3, 2)(x[:, :, 0]),
    lambda m, x: m.nn.LPPool2d(2, (2, 3), 2)(x),
    lambda m, x: m.nn.LPPool2d(1.5, 2, ceil_mode=True)(x),
    lambda m, x: m.nn.LPPool3d(2, 2, ceil_mode=True)(x.unsqueeze(-1).expand(-1, -1, -1, -1, 4)),
    lambda m, x: m.nn.ChannelShuffle(3)(x.reshape(1, 6, 6, 7)),
])
def test_lp_pooling_and_channel_shuffle(fn) -> None:
    compare(fn, RNG.uniform(0.1, 1.0, (2, 3, 6, 7)))


@pytest.mark.parametrize("kw", [{}, {"swap": True, "margin": 0.5}, {"reduction": "none"}])
def test_triplet_margin_with_distance_loss(kw) -> None:
    a, p, n = RNG.standard_normal((3, 4, 5))
    compare(lambda m, x, y, z: m.nn.TripletMarginWithDistanceLoss(**kw)(x, y, z), a, p, n)
    compare(lambda m, x, y, z: m.nn.TripletMarginWithDistanceLoss(
        distance_function=lambda u, v: 1 - m.nn.functional.cosine_similarity(u, v), **kw)(
        x, y, z), a, p, n)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_multilabel_margin_loss(reduction: str) -> None:
    y = np.array([[3, 0, -1, 1], [1, 2, 3, 0], [0, -1, 2, 2]])
    x = RNG.standard_normal((3, 4))
    compare(lambda m, a, t: m.nn.MultiLabelMarginLoss(reduction=reduction)(a, t), x, y)
    compare(lambda m, a, t: m.nn.functional.multilabel_margin_loss(a, t), x[0], y[0])


def test_pdist_and_aliases() -> None:
    x = RNG.standard_normal((5, 4))
    compare(lambda m, t: m.nn.functional.pdist(t), x)
    compare(lambda m, t: m.nn.functional.pdist(t, p=1.5), x)
    img = RNG.standard_normal((1, 2, 3, 3))
    with pytest.warns(UserWarning):
        torch.nn.functional.upsample(torch.tensor(img), scale_factor=2)
    compare(lambda m, t: m.nn.functional.interpolate(t, scale_factor=2), img)
    compare(lambda m, t: vt.nn.functional.upsample(t, scale_factor=2) if m is vt
            else torch.nn.functional.interpolate(t, scale_factor=2), img)
    compare(lambda m, t: vt.nn.functional.upsample_bilinear(t, scale_factor=2) if m is vt
            else torch.nn.functional.interpolate(t, scale_factor=2, mode="bilinear",
                                                 align_corners=True), img)
    compare(lambda m, t: m.nn.functional.max_pool2d_with_indices(t, 2),
            RNG.standard_normal((2, 3, 6, 6)))
    compare(lambda m, t: m.nn.functional.adaptive_max_pool2d_with_indices(t, (3, 2)),
            RNG.standard_normal((2, 3, 7, 5)))


def test_rrelu_and_feature_alpha_dropout() -> None:
    x = RNG.standard_normal((6, 5))
    compare(lambda m, t: m.nn.RReLU(0.1, 0.3).eval()(t), x)
    compare(lambda m, t: m.nn.functional.rrelu(t), x)          # training=False by default
    y = vt.nn.RReLU(0.1, 0.3)(vt.tensor(x)).numpy()
    slopes = y[x < 0] / x[x < 0]
    assert (slopes >= 0.1).all() and (slopes <= 0.3).all() and np.array_equal(y[x >= 0],
                                                                               x[x >= 0])
    drop = vt.nn.FeatureAlphaDropout(0.5)
    out = drop(vt.ones(8, 6, 5)).numpy()
    assert (out.min(-1) == out.max(-1)).all()                   # whole channels
    assert np.array_equal(drop.eval()(vt.ones(2, 3)).numpy(), np.ones((2, 3)))


@pytest.mark.parametrize("n,shape,kw", [
    (1, (2, 3, 9), {"kernel_size": 3, "stride": 2}),
    (2, (2, 3, 6, 8), {"kernel_size": 2}),
    (2, (2, 3, 6, 8), {"kernel_size": 2, "output_size": (7, 9)}),
    (3, (1, 2, 4, 4, 6), {"kernel_size": 2}),
])
def test_max_unpool_like_torch(n: int, shape: tuple, kw: dict) -> None:
    pool = getattr(torch.nn.functional, f"max_pool{n}d")
    k, s = kw["kernel_size"], kw.get("stride")
    values, idx = pool(torch.tensor(RNG.standard_normal(shape)), k, s, return_indices=True)
    out_size = kw.get("output_size")

    def fn(m, v, i):
        layer = getattr(m.nn, f"MaxUnpool{n}d")(k, s)
        return layer(v, i, out_size) if out_size else layer(v, i)

    compare(fn, values.numpy(), idx.numpy())


LAZY = [("LazyConv1d", (4, 3), (2, 3, 8)), ("LazyConv2d", (4, 3), (2, 3, 6, 6)),
        ("LazyConv3d", (4, 2), (2, 3, 4, 4, 4)), ("LazyConvTranspose1d", (4, 3), (2, 3, 5)),
        ("LazyConvTranspose2d", (4, 3), (2, 3, 4, 4)),
        ("LazyConvTranspose3d", (4, 2), (2, 3, 3, 3, 3)), ("LazyBatchNorm1d", (), (5, 3)),
        ("LazyBatchNorm2d", (), (2, 3, 4, 4)), ("LazyBatchNorm3d", (), (2, 3, 2, 2, 2)),
        ("LazyInstanceNorm1d", (), (2, 3, 5)), ("LazyInstanceNorm2d", (), (2, 3, 4, 4)),
        ("LazyInstanceNorm3d", (), (2, 3, 2, 2, 2))]


@pytest.mark.parametrize("name,args,shape", LAZY, ids=[n for n, _, _ in LAZY])
def test_lazy_layers_like_torch(name: str, args: tuple, shape: tuple) -> None:
    x = RNG.standard_normal(shape)
    t = getattr(torch.nn, name)(*args).double()
    v = getattr(vt.nn, name)(*args, dtype="float64")
    params = list(v.parameters())
    opt = vt.optim.SGD(params, lr=0.1)
    t(torch.tensor(x))
    v(vt.tensor(x))
    assert type(v).__name__ == type(t).__name__ == name.replace("Lazy", "")
    assert list(v.state_dict()) == list(t.state_dict())
    assert [tuple(a.shape) for a in v.state_dict().values()] == [
        tuple(a.shape) for a in t.state_dict().values()]
    assert list(v.parameters()) == params  # the same objects, now shaped
    opt.zero_grad()
    v.load_state_dict({k: vt.tensor(a.detach().numpy()) for k, a in t.state_dict().items()})
    t.eval()
    v.eval()
    np.testing.assert_allclose(v(vt.tensor(x)).detach().numpy(),
                               t(torch.tensor(x)).detach().numpy(), rtol=1e-10, atol=1e-12)
