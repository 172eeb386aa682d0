"""Cases of losses: each module in every reduction, and its functional form."""

from __future__ import annotations

from ..case import FLOAT, Arg, OpCase
from ..case_nn import ModuleCase

REDUCTIONS = ("mean", "sum", "none")


def _t(*shape: int, low: float = -1.0, high: float = 1.0) -> Arg:
    return Arg(tuple(shape), low, high, grad=False)


def _idx(*shape: int, n: int) -> Arg:
    return Arg(tuple(shape), 0, n, kind="index")


# (class, functional name, input, target, extra constructor kwargs)
LOSSES = (
    ("MSELoss", "mse_loss", Arg((4, 3)), _t(4, 3), {}),
    ("L1Loss", "l1_loss", Arg((4, 3)), _t(4, 3), {}),
    ("SmoothL1Loss", "smooth_l1_loss", Arg((4, 3), -2, 2), _t(4, 3), {"beta": 0.5}),
    ("HuberLoss", "huber_loss", Arg((4, 3), -2, 2), _t(4, 3), {"delta": 0.7}),
    ("CrossEntropyLoss", "cross_entropy", Arg((5, 4), -3, 3), _idx(5, n=4), {}),
    ("NLLLoss", "nll_loss", Arg((5, 4), -3, 0), _idx(5, n=4), {}),
    ("BCELoss", "binary_cross_entropy", Arg((4, 3), 0.05, 0.95), _t(4, 3, low=0, high=1), {}),
    ("BCEWithLogitsLoss", "binary_cross_entropy_with_logits", Arg((4, 3), -3, 3),
     _t(4, 3, low=0, high=1), {}),
    ("KLDivLoss", "kl_div", Arg((4, 3), -3, 0), _t(4, 3, low=0.05, high=1), {}),
    ("SoftMarginLoss", "soft_margin_loss", Arg((4, 3)), _t(4, 3), {}),
    ("HingeEmbeddingLoss", "hinge_embedding_loss", Arg((4, 3)), _t(4, 3), {}),
    ("GaussianNLLLoss", "gaussian_nll_loss", Arg((4, 3)), _t(4, 3), {}),
    ("PoissonNLLLoss", "poisson_nll_loss", Arg((4, 3)), _t(4, 3, low=0, high=3), {}),
    ("MultiMarginLoss", "multi_margin_loss", Arg((5, 4)), _idx(5, n=4), {}),
    ("MultiLabelSoftMarginLoss", "multilabel_soft_margin_loss", Arg((4, 3)),
     _t(4, 3, low=0, high=1), {}),
)

CASES: list = []
for _cls, _fn, _input, _target, _kw in LOSSES:
    for _red in REDUCTIONS:
        if _cls == "GaussianNLLLoss":  # takes a variance as a third input
            _args = (_input, _target, Arg((4, 3), 0.2, 2.0))
        else:
            _args = (_input, _target)
        _make = (lambda cls, red, kw: lambda nn: getattr(nn, cls)(reduction=red, **kw))(
            _cls, _red, _kw)
        CASES.append(ModuleCase(f"nn.{_cls}/{_red}", f"nn.{_cls}", FLOAT, make=_make,
                                args=_args))
    CASES.append(OpCase(f"nn.functional.{_fn}/basic", f"nn.functional.{_fn}", FLOAT,
                        args=_args if _cls == "GaussianNLLLoss" else (_input, _target)))



def _weights():
    import volta_core as vt

    return vt.tensor([1.0, 2.0, 0.5, 1.0])


_CE_SOFT = (Arg((5, 4), -3, 3), _t(5, 4, low=0, high=1))
CASES += [
    ModuleCase("nn.CrossEntropyLoss/weight", "nn.CrossEntropyLoss", FLOAT,
               make=lambda nn: nn.CrossEntropyLoss(weight=_weights()),
               args=(Arg((5, 4), -3, 3), _idx(5, n=4))),
    ModuleCase("nn.CrossEntropyLoss/ignore_index", "nn.CrossEntropyLoss", FLOAT,
               make=lambda nn: nn.CrossEntropyLoss(ignore_index=1),
               args=(Arg((6, 4), -3, 3), _idx(6, n=4))),
    ModuleCase("nn.CrossEntropyLoss/label_smoothing", "nn.CrossEntropyLoss", FLOAT,
               make=lambda nn: nn.CrossEntropyLoss(label_smoothing=0.1),
               args=(Arg((5, 4), -3, 3), _idx(5, n=4))),
    ModuleCase("nn.CrossEntropyLoss/spatial", "nn.CrossEntropyLoss", FLOAT,
               make=lambda nn: nn.CrossEntropyLoss(),
               args=(Arg((2, 4, 3, 3), -3, 3), _idx(2, 3, 3, n=4))),
    ModuleCase("nn.CrossEntropyLoss/probabilities", "nn.CrossEntropyLoss", FLOAT,
               make=lambda nn: nn.CrossEntropyLoss(), args=_CE_SOFT),
    ModuleCase("nn.CrossEntropyLoss/extreme_logits", "nn.CrossEntropyLoss", FLOAT,
               make=lambda nn: nn.CrossEntropyLoss(),
               args=(Arg((5, 4), -300, 300), _idx(5, n=4))),
    ModuleCase("nn.CosineEmbeddingLoss/mean", "nn.CosineEmbeddingLoss", FLOAT,
               make=lambda nn: nn.CosineEmbeddingLoss(),
               args=(Arg((4, 3)), Arg((4, 3)), Arg((4,), 1, 2, kind="index"))),
    ModuleCase("nn.MarginRankingLoss/mean", "nn.MarginRankingLoss", FLOAT,
               make=lambda nn: nn.MarginRankingLoss(margin=0.1),
               args=(Arg((5,)), Arg((5,)), _t(5))),
    ModuleCase("nn.TripletMarginLoss/mean", "nn.TripletMarginLoss", FLOAT,
               make=lambda nn: nn.TripletMarginLoss(),
               args=(Arg((4, 3)), Arg((4, 3)), Arg((4, 3)))),
]


def _ctc(log_probs, targets):
    import volta_core as vt

    lp = log_probs.log_softmax(-1)
    return vt.nn.functional.ctc_loss(lp, targets, [6, 5], [3, 2])


def _ctc_module(nn):
    class CTC(nn.Module):  # the loss of raw scores: log_softmax first
        def __init__(self) -> None:
            super().__init__()
            self.loss = nn.CTCLoss(blank=0)

        def forward(self, scores, targets):
            return self.loss(scores.log_softmax(-1), targets, [6, 5], [3, 2])

    return CTC()


CASES += [  # CTC: log-probabilities (T, N, C), padded targets of labels 1..4
    OpCase("nn.functional.ctc_loss/basic", "nn.functional.ctc_loss", FLOAT,
           args=(Arg((6, 2, 5)), Arg((2, 3), 1, 5, kind="index")), fn=_ctc),
    ModuleCase("nn.CTCLoss/mean", "nn.CTCLoss", FLOAT, make=_ctc_module,
               args=(Arg((6, 2, 5)), Arg((2, 3), 1, 5, kind="index"))),
]
