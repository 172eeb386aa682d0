"""Cases of ``nn`` layers: forward, input and parameter gradients, train and eval modes."""

from __future__ import annotations

from ..case import FLOAT, Arg
from ..case_nn import ModuleCase


def layer(cls: str, tag: str, make, *args: Arg, modes: tuple = ("train", "eval"),
          random_train: bool = False, tol: float = 1.0, dtypes: tuple = FLOAT) -> list:
    """One case per mode of layer ``nn.<cls>`` built by ``make(nn)``."""
    return [ModuleCase(f"nn.{cls}/{tag}/{mode}", f"nn.{cls}", dtypes, tol=tol, make=make,
                       args=args, mode=mode, random=random_train and mode == "train")
            for mode in modes]


def X(*shape: int, low: float = -1.0, high: float = 1.0, view: str | None = None) -> Arg:
    return Arg(tuple(shape), low, high, view=view)


IDX = Arg((2, 5), 0, 10, kind="index")

CASES: list = []
CASES += layer("Linear", "basic", lambda nn: nn.Linear(5, 3), X(4, 5))
CASES += layer("Linear", "batched_nobias", lambda nn: nn.Linear(5, 3, bias=False), X(2, 4, 5))
CASES += layer("Linear", "permuted", lambda nn: nn.Linear(4, 2), X(3, 4, view="T"))
CASES += layer("Linear", "1d", lambda nn: nn.Linear(5, 3), X(5))
CASES += layer("Bilinear", "basic", lambda nn: nn.Bilinear(3, 4, 2), X(5, 3), X(5, 4))
CASES += layer("Conv1d", "basic", lambda nn: nn.Conv1d(3, 4, 3, padding=1), X(2, 3, 8))
CASES += layer("Conv2d", "basic", lambda nn: nn.Conv2d(3, 4, 3), X(2, 3, 7, 6))
CASES += layer("Conv2d", "stride_pad", lambda nn: nn.Conv2d(2, 3, (3, 2), stride=2, padding=1),
               X(2, 2, 7, 8))
CASES += layer("Conv2d", "dilation_nobias",
               lambda nn: nn.Conv2d(2, 2, 3, dilation=2, bias=False), X(1, 2, 9, 9))
CASES += layer("Conv2d", "groups", lambda nn: nn.Conv2d(4, 6, 3, groups=2, padding=1),
               X(2, 4, 5, 5))
CASES += layer("Conv2d", "1x1", lambda nn: nn.Conv2d(3, 5, 1), X(2, 3, 4, 4))
CASES += layer("Conv2d", "permuted", lambda nn: nn.Conv2d(2, 3, 3),
               X(1, 2, 5, 5, view="T"))
CASES += layer("ConvTranspose2d", "basic",
               lambda nn: nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1), X(2, 3, 4, 4))
CASES += layer("MaxPool2d", "basic", lambda nn: nn.MaxPool2d(2), X(2, 3, 6, 6))
CASES += layer("MaxPool2d", "stride_pad", lambda nn: nn.MaxPool2d(3, stride=2, padding=1),
               X(2, 2, 7, 7))
CASES += layer("AvgPool2d", "basic", lambda nn: nn.AvgPool2d(2), X(2, 3, 6, 6))
CASES += layer("AvgPool2d", "stride_pad", lambda nn: nn.AvgPool2d(3, stride=2, padding=1),
               X(2, 2, 7, 7))
CASES += layer("MaxPool1d", "basic", lambda nn: nn.MaxPool1d(2), X(2, 3, 8))
CASES += layer("AvgPool1d", "basic", lambda nn: nn.AvgPool1d(2), X(2, 3, 8))
CASES += layer("AdaptiveAvgPool2d", "basic", lambda nn: nn.AdaptiveAvgPool2d((2, 3)),
               X(2, 3, 6, 6))
CASES += layer("AdaptiveAvgPool2d", "global", lambda nn: nn.AdaptiveAvgPool2d(1), X(2, 3, 5, 4))
CASES += layer("AdaptiveMaxPool2d", "basic", lambda nn: nn.AdaptiveMaxPool2d(2), X(2, 3, 6, 6))
CASES += layer("BatchNorm1d", "basic", lambda nn: nn.BatchNorm1d(4), X(6, 4))
CASES += layer("BatchNorm1d", "seq", lambda nn: nn.BatchNorm1d(3), X(4, 3, 5))
CASES += layer("BatchNorm2d", "basic", lambda nn: nn.BatchNorm2d(3), X(4, 3, 5, 5))
CASES += layer("BatchNorm2d", "no_affine",
               lambda nn: nn.BatchNorm2d(3, affine=False, momentum=0.5), X(2, 3, 4, 4))
CASES += layer("LayerNorm", "basic", lambda nn: nn.LayerNorm(5), X(3, 4, 5))
CASES += layer("LayerNorm", "2d", lambda nn: nn.LayerNorm((4, 5)), X(3, 4, 5))
CASES += layer("GroupNorm", "basic", lambda nn: nn.GroupNorm(2, 4), X(3, 4, 5, 5))
CASES += layer("InstanceNorm2d", "basic", lambda nn: nn.InstanceNorm2d(3), X(2, 3, 4, 4))
CASES += layer("RMSNorm", "basic", lambda nn: nn.RMSNorm(5), X(3, 4, 5))
CASES += layer("LocalResponseNorm", "basic", lambda nn: nn.LocalResponseNorm(3), X(2, 5, 3, 3))
CASES += layer("Embedding", "basic", lambda nn: nn.Embedding(10, 4), IDX)
CASES += layer("Embedding", "padding_idx", lambda nn: nn.Embedding(10, 3, padding_idx=0),
               Arg((3, 4), 0, 10, kind="index"))
CASES += layer("EmbeddingBag", "basic", lambda nn: nn.EmbeddingBag(10, 3), IDX)
CASES += layer("Dropout", "basic", lambda nn: nn.Dropout(0.3), X(4, 5), random_train=True)
CASES += layer("Dropout", "p0", lambda nn: nn.Dropout(0.0), X(4, 5))
CASES += layer("Dropout1d", "basic", lambda nn: nn.Dropout1d(0.3), X(2, 3, 5), random_train=True)
CASES += layer("Dropout2d", "basic", lambda nn: nn.Dropout2d(0.3), X(2, 3, 4, 4),
               random_train=True)
CASES += layer("AlphaDropout", "basic", lambda nn: nn.AlphaDropout(0.3), X(4, 5),
               random_train=True)
for _cls, _make in (
        ("ReLU", lambda nn: nn.ReLU()), ("ReLU6", lambda nn: nn.ReLU6()),
        ("GELU", lambda nn: nn.GELU()), ("SiLU", lambda nn: nn.SiLU()),
        ("Sigmoid", lambda nn: nn.Sigmoid()), ("Tanh", lambda nn: nn.Tanh()),
        ("LeakyReLU", lambda nn: nn.LeakyReLU(0.1)), ("ELU", lambda nn: nn.ELU()),
        ("SELU", lambda nn: nn.SELU()), ("CELU", lambda nn: nn.CELU()),
        ("Softplus", lambda nn: nn.Softplus()), ("Hardtanh", lambda nn: nn.Hardtanh()),
        ("Hardswish", lambda nn: nn.Hardswish()), ("Hardsigmoid", lambda nn: nn.Hardsigmoid()),
        ("Mish", lambda nn: nn.Mish()), ("Softsign", lambda nn: nn.Softsign()),
        ("LogSigmoid", lambda nn: nn.LogSigmoid()), ("Tanhshrink", lambda nn: nn.Tanhshrink()),
        ("Softshrink", lambda nn: nn.Softshrink()), ("Hardshrink", lambda nn: nn.Hardshrink()),
        ("PReLU", lambda nn: nn.PReLU()), ("GLU", lambda nn: nn.GLU()),
        ("Softmax", lambda nn: nn.Softmax(dim=-1)),
        ("LogSoftmax", lambda nn: nn.LogSoftmax(dim=1)),
        ("Softmin", lambda nn: nn.Softmin(dim=-1)),
        ("Flatten", lambda nn: nn.Flatten()),
        ("Unflatten", lambda nn: nn.Unflatten(1, (2, 2))),
        ("Identity", lambda nn: nn.Identity())):
    CASES += layer(_cls, "basic", _make, X(3, 4, low=-3.0, high=3.0), modes=("train",))
CASES += layer("Upsample", "nearest", lambda nn: nn.Upsample(scale_factor=2), X(2, 3, 4, 4),
               modes=("train",))
CASES += layer("Upsample", "bilinear",
               lambda nn: nn.Upsample(scale_factor=2, mode="bilinear"), X(2, 3, 4, 4),
               modes=("train",))
CASES += layer("PixelShuffle", "basic", lambda nn: nn.PixelShuffle(2), X(2, 8, 3, 3),
               modes=("train",))
CASES += layer("PixelUnshuffle", "basic", lambda nn: nn.PixelUnshuffle(2), X(2, 2, 4, 6),
               modes=("train",))
CASES += layer("ZeroPad2d", "basic", lambda nn: nn.ZeroPad2d((1, 2, 0, 1)), X(2, 3, 4, 4),
               modes=("train",))
_PAD_INPUTS = {1: X(2, 3, 5), 2: X(2, 3, 4, 5), 3: X(1, 2, 3, 4, 5)}
for _kind in ("ZeroPad", "ConstantPad", "ReflectionPad", "ReplicationPad", "CircularPad"):
    for _n, _x in _PAD_INPUTS.items():
        _pads = (1, 2, 2, 1, 0, 2)[: 2 * _n]
        _args = (_pads, 0.5) if _kind == "ConstantPad" else (_pads,)
        CASES += layer(f"{_kind}{_n}d", "asym",
                       lambda nn, c=f"{_kind}{_n}d", a=_args: getattr(nn, c)(*a), _x,
                       modes=("train",))
CASES += layer("Conv3d", "basic", lambda nn: nn.Conv3d(3, 4, (2, 3, 2), padding=1),
               X(2, 3, 4, 5, 4), tol=2.0)
CASES += layer("ConvTranspose1d", "basic", lambda nn: nn.ConvTranspose1d(3, 4, 3, stride=2),
               X(2, 3, 6))
CASES += layer("ConvTranspose3d", "basic", lambda nn: nn.ConvTranspose3d(3, 2, 2, stride=2),
               X(2, 3, 3, 3, 3), tol=2.0)
CASES += layer("BatchNorm3d", "basic", lambda nn: nn.BatchNorm3d(3), X(2, 3, 3, 4, 4))
CASES += layer("InstanceNorm1d", "affine", lambda nn: nn.InstanceNorm1d(3, affine=True),
               X(2, 3, 8))
CASES += layer("InstanceNorm3d", "tracked",
               lambda nn: nn.InstanceNorm3d(3, track_running_stats=True), X(2, 3, 3, 4, 4))
CASES += layer("MaxPool3d", "basic", lambda nn: nn.MaxPool3d(2), X(2, 3, 4, 4, 6),
               modes=("train",))
CASES += layer("AvgPool3d", "basic", lambda nn: nn.AvgPool3d(3, 2, 1), X(2, 3, 5, 4, 6),
               modes=("train",))
CASES += layer("AdaptiveAvgPool1d", "basic", lambda nn: nn.AdaptiveAvgPool1d(3), X(2, 3, 7),
               modes=("train",))
CASES += layer("AdaptiveMaxPool1d", "basic", lambda nn: nn.AdaptiveMaxPool1d(3), X(2, 3, 7),
               modes=("train",))
CASES += layer("AdaptiveAvgPool3d", "basic", lambda nn: nn.AdaptiveAvgPool3d((2, 3, 2)),
               X(2, 3, 5, 4, 3), modes=("train",))
CASES += layer("AdaptiveMaxPool3d", "basic", lambda nn: nn.AdaptiveMaxPool3d((2, 3, 2)),
               X(2, 3, 5, 4, 3), modes=("train",))
CASES += layer("Unfold", "basic", lambda nn: nn.Unfold(2, padding=1, stride=2),
               X(2, 3, 5, 6), modes=("train",))
CASES += layer("Fold", "basic", lambda nn: nn.Fold((4, 5), 2), X(2, 12, 12), modes=("train",))
CASES += layer("Dropout3d", "basic", lambda nn: nn.Dropout3d(0.3), X(2, 3, 2, 3, 3),
               random_train=True)
CASES += layer("Threshold", "basic", lambda nn: nn.Threshold(0.1, 2.0), X(3, 7),
               modes=("train",))
CASES += layer("Softmax2d", "basic", lambda nn: nn.Softmax2d(), X(2, 3, 4, 4),
               modes=("train",))
CASES += layer("CosineSimilarity", "basic", lambda nn: nn.CosineSimilarity(), X(4, 5),
               X(4, 5), modes=("train",))
CASES += layer("PairwiseDistance", "basic", lambda nn: nn.PairwiseDistance(), X(4, 5),
               X(4, 5), modes=("train",))


def _lazy_linear(nn):
    """A LazyLinear materialised (in_features=5) before the harness copies the weights."""
    from volta_core import zeros

    lazy = nn.LazyLinear(3)
    lazy(zeros(1, 5))
    return lazy


CASES += layer("LazyLinear", "basic", _lazy_linear, X(4, 5), modes=("train",))


def _lazy(cls: str, args: tuple, shape: tuple):
    """``nn.<cls>(*args)`` materialised on zeros of ``shape`` before the weights are copied."""

    def make(nn):
        from volta_core import zeros

        lazy = getattr(nn, cls)(*args)
        lazy(zeros(*shape))
        return lazy

    return make


for _cls, _args, _shape in (("LazyConv1d", (4, 3), (2, 3, 6)),
                            ("LazyConv2d", (4, 3), (2, 3, 5, 5)),
                            ("LazyConv3d", (2, 2), (1, 2, 3, 3, 3)),
                            ("LazyConvTranspose1d", (4, 3), (2, 3, 5)),
                            ("LazyConvTranspose2d", (4, 3), (2, 3, 4, 4)),
                            ("LazyConvTranspose3d", (2, 2), (1, 2, 2, 2, 2)),
                            ("LazyBatchNorm1d", (), (4, 3)),
                            ("LazyBatchNorm2d", (), (2, 3, 3, 3)),
                            ("LazyBatchNorm3d", (), (2, 3, 2, 2, 2)),
                            ("LazyInstanceNorm1d", (), (2, 3, 5)),
                            ("LazyInstanceNorm2d", (), (2, 3, 3, 3)),
                            ("LazyInstanceNorm3d", (), (2, 3, 2, 2, 2))):
    CASES += layer(_cls, "basic", _lazy(_cls, _args, _shape), X(*_shape), tol=2.0)
CASES += layer("LPPool1d", "basic", lambda nn: nn.LPPool1d(2, 3, 2), X(2, 3, 8, low=0.1),
               modes=("train",))
CASES += layer("LPPool2d", "basic", lambda nn: nn.LPPool2d(2, 2), X(2, 3, 4, 6, low=0.1),
               modes=("train",))
CASES += layer("LPPool3d", "basic", lambda nn: nn.LPPool3d(2, 2), X(2, 3, 4, 4, 2, low=0.1),
               modes=("train",))
CASES += layer("ChannelShuffle", "basic", lambda nn: nn.ChannelShuffle(2), X(2, 6, 3, 3),
               modes=("train",))
CASES += layer("TripletMarginWithDistanceLoss", "basic",
               lambda nn: nn.TripletMarginWithDistanceLoss(swap=True), X(4, 5), X(4, 5),
               X(4, 5), modes=("train",))
CASES += layer("MultiLabelMarginLoss", "basic", lambda nn: nn.MultiLabelMarginLoss(), X(3, 4),
               Arg((3, 4), -1, 4, kind="index"), modes=("train",))
CASES += layer("RReLU", "basic", lambda nn: nn.RReLU(), X(4, 5), random_train=True)
CASES += layer("FeatureAlphaDropout", "basic", lambda nn: nn.FeatureAlphaDropout(0.3),
               X(2, 3, 4), random_train=True)


class _PoolUnpool:
    """MaxPool2d then MaxUnpool2d through its indices (the unpool layer's usual use)."""

    @staticmethod
    def make(nn):
        class PoolUnpool(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.pool = nn.MaxPool2d(2, return_indices=True)
                self.unpool = nn.MaxUnpool2d(2)

            def forward(self, x):
                return self.unpool(*self.pool(x))

        return PoolUnpool()


CASES += layer("MaxUnpool2d", "roundtrip", _PoolUnpool.make, X(2, 3, 4, 6), modes=("train",))


def _unpool_fixed(n: int):
    """``MaxUnpool{n}d(2)`` fed the indices of each window's first position."""

    def make(nn):
        class Unpool(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.unpool = getattr(nn, f"MaxUnpool{n}d")(2)

            def forward(self, x):
                from volta_core import arange

                idx = arange(x[0, 0].numel(), device=x.device).reshape(*x.shape[2:]) * 2
                if n == 3:
                    d, h, w = x.shape[2:]
                    idx = (arange(d, device=x.device).reshape(d, 1, 1) * 8 * h * w
                           + arange(h, device=x.device).reshape(1, h, 1) * 4 * w
                           + arange(w, device=x.device) * 2)
                return self.unpool(x, idx.expand(*x.shape))

        return Unpool()

    return make


CASES += layer("MaxUnpool1d", "fixed", _unpool_fixed(1), X(2, 3, 4), modes=("train",))
CASES += layer("MaxUnpool3d", "fixed", _unpool_fixed(3), X(1, 2, 2, 2, 3), modes=("train",))
CASES += layer("DataParallel", "linear", lambda nn: nn.DataParallel(nn.Linear(5, 3)), X(4, 5),
               modes=("train",))
CASES += layer("MultiheadAttention", "self",
               lambda nn: nn.MultiheadAttention(8, 2, batch_first=True),
               X(2, 5, 8), X(2, 5, 8), X(2, 5, 8), tol=4.0)
CASES += layer("TransformerEncoderLayer", "basic",
               lambda nn: nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                                    batch_first=True),
               X(2, 5, 8), tol=4.0)
CASES += layer("TransformerDecoderLayer", "basic",
               lambda nn: nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                                    batch_first=True),
               X(2, 4, 8), X(2, 5, 8), tol=4.0)
CASES += layer("TransformerEncoder", "basic",
               lambda nn: nn.TransformerEncoder(nn.TransformerEncoderLayer(
                   8, 2, dim_feedforward=16, dropout=0.0, batch_first=True), 2),
               X(2, 5, 8), tol=4.0)
CASES += layer("TransformerDecoder", "basic",
               lambda nn: nn.TransformerDecoder(nn.TransformerDecoderLayer(
                   8, 2, dim_feedforward=16, dropout=0.0, batch_first=True), 2),
               X(2, 4, 8), X(2, 5, 8), tol=4.0)
CASES += layer("Transformer", "basic",
               lambda nn: nn.Transformer(8, 2, 1, 1, dim_feedforward=16, dropout=0.0,
                                         batch_first=True),
               X(2, 5, 8), X(2, 4, 8), tol=4.0)
CASES += layer("UpsamplingNearest2d", "basic", lambda nn: nn.UpsamplingNearest2d(scale_factor=2),
               X(2, 3, 4, 4), modes=("train",))
CASES += layer("UpsamplingBilinear2d", "basic",
               lambda nn: nn.UpsamplingBilinear2d(scale_factor=2), X(2, 3, 4, 4),
               modes=("train",))
CASES += layer("RNN", "basic", lambda nn: nn.RNN(4, 5, batch_first=True), X(2, 3, 4), tol=2.0)
CASES += layer("RNN", "two_layers", lambda nn: nn.RNN(4, 3, num_layers=2), X(3, 2, 4), tol=2.0)
CASES += layer("LSTM", "basic", lambda nn: nn.LSTM(4, 5, batch_first=True), X(2, 3, 4), tol=2.0)
CASES += layer("LSTM", "bidirectional", lambda nn: nn.LSTM(3, 4, bidirectional=True),
               X(5, 2, 3), tol=2.0)
CASES += layer("GRU", "basic", lambda nn: nn.GRU(4, 5, batch_first=True), X(2, 3, 4), tol=2.0)
CASES += layer("RNNCell", "basic", lambda nn: nn.RNNCell(4, 3), X(2, 4), modes=("train",))
CASES += layer("LSTMCell", "basic", lambda nn: nn.LSTMCell(4, 3), X(2, 4), modes=("train",))
CASES += layer("GRUCell", "basic", lambda nn: nn.GRUCell(4, 3), X(2, 4), modes=("train",))
CASES += layer("Sequential", "mlp",
               lambda nn: nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)), X(3, 4),
               modes=("train",))
