"""Cases of optimizers: three steps from fixed parameters and gradients."""

from __future__ import annotations

from ..case import FLOAT
from ..case_nn import OptimCase


def opt(cls: str, tag: str, shapes: tuple = ((3, 4), (4,)), **kwargs) -> OptimCase:
    """Three steps of ``optim.<cls>(params, **kwargs)``."""
    return OptimCase(f"optim.{cls}/{tag}", f"optim.{cls}", FLOAT, shapes=shapes,
                     make=lambda optim, params: getattr(optim, cls)(params, **kwargs))


CASES: list = [
    opt("SGD", "plain", lr=0.1),
    opt("SGD", "momentum", lr=0.1, momentum=0.9),
    opt("SGD", "nesterov_wd", lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    opt("SGD", "dampening", lr=0.1, momentum=0.5, dampening=0.3),
    opt("Adam", "default", lr=0.01),
    opt("Adam", "weight_decay", lr=0.01, weight_decay=0.1, betas=(0.8, 0.9)),
    opt("Adam", "amsgrad", lr=0.01, amsgrad=True),
    opt("AdamW", "default", lr=0.01, weight_decay=0.1),
    opt("RMSprop", "default", lr=0.01),
    opt("RMSprop", "centered_momentum", lr=0.01, centered=True, momentum=0.5),
    opt("Adagrad", "default", lr=0.1),
    opt("Adagrad", "lr_decay", lr=0.1, lr_decay=0.1, weight_decay=0.01),
    opt("Muon", "default", shapes=((4, 6), (6, 3)), lr=0.02),
    opt("Adamax", "default", lr=0.01),
    opt("NAdam", "default", lr=0.01),
    opt("RAdam", "default", lr=0.01),
    opt("Adadelta", "default", lr=1.0),
    opt("Lion", "default", lr=0.01),
    opt("ASGD", "averaging", lr=0.05, t0=1, lambd=0.01, weight_decay=0.1),
    opt("Rprop", "default", lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.08)),
    OptimCase("optim.LBFGS/default", "optim.LBFGS", FLOAT, closure=True, steps=2,
              make=lambda optim, params: optim.LBFGS(params, max_iter=4)),
    OptimCase("optim.LBFGS/strong_wolfe", "optim.LBFGS", FLOAT, closure=True, steps=2,
              make=lambda optim, params: optim.LBFGS(params, max_iter=4, history_size=3,
                                                     line_search_fn="strong_wolfe")),
]
