"""Cases of modules, optimizers and training runs.

A module is built on the CPU with a fixed seed, then a second one is built and moved to
the device under test, and the first one's parameters are copied into it through
``state_dict`` / ``load_state_dict``: both runs see the same weights whatever the
device's random generator does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .case import Arg, Case, as_outputs, host_dtype, require

SEED = 1234


def build_module(make: Callable, rt: Any) -> Any:
    """Build ``make(nn)`` on the CPU, then a copy on ``rt.device`` in ``rt.dtype``."""
    import volta_core as vt

    nn = require("nn")
    vt.manual_seed(SEED)
    with vt.no_grad():
        ref = make(nn).to(vt.float64 if rt.dtype == "float64" else rt.dtype)
        state = {k: rt.tensor(rt.host(v), v.dtype.name) for k, v in ref.state_dict().items()}
        mod = make(nn).to(rt.device).to(rt.dtype)
        mod.load_state_dict(state)
    return mod


def _upstream(rt: Any, outs: list) -> tuple[list, list]:
    import volta_core as vt

    diff = [o for o in outs if isinstance(o, vt.Tensor) and o.requires_grad]
    ups = [rt.tensor(rt.rng.uniform(-1, 1, o.shape).astype(host_dtype(o.dtype.name)),
                     o.dtype.name) for o in diff]
    return diff, ups


@dataclass
class ModuleCase(Case):
    """A layer or loss module: forward, input and parameter gradients, buffers after.

    Attributes:
        make: ``make(nn)`` builds the module.
        args: inputs (targets of losses use ``grad=False`` or ``kind="index"``).
        mode: ``"train"`` or ``"eval"``.
        grad: whether to run backward.
        random: the output depends on the device's random generator (dropout in
            training): only shapes, dtypes and the gradient's consistency are compared.
    """

    make: Callable | None = None
    args: tuple = ()
    mode: str = "train"
    grad: bool = True
    random: bool = False
    kind: str = field(default="layer", init=False)

    def run(self, rt: Any) -> dict[str, Any]:
        import volta_core as vt

        mod = build_module(self.make, rt)
        mod.train(self.mode == "train")
        leaves, inputs = [], []
        for arg in self.args:
            host = arg.sample(rt.rng, rt.dtype)
            dt = arg.dtype_for(rt.dtype)
            wants = self.grad and arg.grad and dt == rt.dtype
            base = rt.tensor(host, dt, requires_grad=wants)
            leaves.append(base)
            inputs.append(arg.realize(base))
        outs = as_outputs(mod(*inputs))
        results: dict[str, Any] = {}
        if self.random:
            for i, o in enumerate(outs):
                results[f"out{i}.shape"] = np.asarray(o.shape)
                results[f"out{i}.dtype"] = np.asarray(o.dtype.name)
            return results
        results.update({f"out{i}": o for i, o in enumerate(outs)})
        if self.grad:
            diff, ups = _upstream(rt, outs)
            if diff:
                vt.autograd.backward(diff, ups)
            for i, leaf in enumerate(leaves):
                if leaf.requires_grad:
                    results[f"grad{i}"] = leaf.grad
            for name, p in mod.named_parameters():
                results[f"grad.param.{name}"] = p.grad
        for name, b in mod.state_dict().items():
            results[f"state.{name}"] = b
        return results


@dataclass
class OptimCase(Case):
    """A few steps of an optimizer on fixed parameters and gradients.

    Attributes:
        make: ``make(optim, params)`` builds the optimizer.
        shapes: shapes of the parameters.
        steps: how many steps (state such as momentum builds up after the first).
        closure: step with a closure over a fixed quadratic loss (LBFGS) instead of
            fixed gradients.
    """

    make: Callable | None = None
    shapes: tuple = ((3, 4), (4,))
    steps: int = 3
    closure: bool = False
    kind: str = field(default="optimizer", init=False)

    def run(self, rt: Any) -> dict[str, Any]:
        optim = require("optim")
        params = [rt.tensor(rt.rng.uniform(-1, 1, s).astype(host_dtype(rt.dtype)), rt.dtype,
                            requires_grad=True) for s in self.shapes]
        opt = self.make(optim, params)
        results: dict[str, Any] = {}
        if self.closure:  # LBFGS: steps re-evaluate a fixed quadratic through a closure
            targets = [rt.tensor(rt.rng.uniform(-1, 1, s).astype(host_dtype(rt.dtype)),
                                 rt.dtype) for s in self.shapes]

            def closure() -> Any:
                opt.zero_grad()
                loss = sum((((p - t) ** 2) * (i + 1)).sum()
                           for i, (p, t) in enumerate(zip(params, targets)))
                loss.backward()
                return loss

            for step in range(self.steps):
                opt.step(closure)
                for i, p in enumerate(params):
                    results[f"step{step}.param{i}"] = p.detach().clone()
            return results
        for step in range(self.steps):
            for p in params:
                g = rt.rng.uniform(-1, 1, p.shape).astype(host_dtype(rt.dtype))
                p.grad = rt.tensor(g, rt.dtype)
            opt.step()
            for i, p in enumerate(params):
                results[f"step{step}.param{i}"] = p.detach().clone()  # steps may update p in place
        return results


@dataclass
class TrainCase(Case):
    """A short training run; the loss curve and final weights must match the reference.

    Attributes:
        make: ``make(nn)`` builds the model.
        optimizer: ``optimizer(optim, params)`` builds the optimizer.
        loss: ``loss(nn, output, target)`` returns the scalar loss.
        x: the input batch.
        y: the target batch.
        steps: training steps.
    """

    make: Callable | None = None
    optimizer: Callable | None = None
    loss: Callable | None = None
    x: Arg | None = None
    y: Arg | None = None
    steps: int = 20
    kind: str = field(default="training", init=False)

    def run(self, rt: Any) -> dict[str, Any]:
        model = build_module(self.make, rt)
        model.train()
        nn, optim = require("nn"), require("optim")
        x = rt.tensor(self.x.sample(rt.rng, rt.dtype), self.x.dtype_for(rt.dtype))
        y = rt.tensor(self.y.sample(rt.rng, rt.dtype), self.y.dtype_for(rt.dtype))
        opt = self.optimizer(optim, list(model.parameters()))
        losses = []
        for _ in range(self.steps):
            opt.zero_grad()
            loss = self.loss(nn, model(x), y)
            loss.backward()
            opt.step()
            losses.append(float(loss.item()))
        results: dict[str, Any] = {"loss_curve": np.asarray(losses, dtype=host_dtype(rt.dtype))}
        for name, p in model.named_parameters():
            results[f"final.{name}"] = p.detach()
        return results
