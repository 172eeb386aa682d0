"""Loss edge cases checked against PyTorch CPU: -inf log-probabilities, ignored targets,
logits at exactly 0, broadcasting inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import volta_core as vt
import volta_core.nn.functional as F


def close(got: vt.Tensor, want: torch.Tensor, rtol: float = 1e-6, atol: float = 1e-7) -> None:
    assert tuple(got.shape) == tuple(want.shape)
    assert got.dtype.name == str(want.dtype).removeprefix("torch.")
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=rtol,
                               atol=atol, equal_nan=True)


def both(data, dtype=torch.float32):
    a = np.asarray(data, dtype=str(dtype).removeprefix("torch."))
    return (vt.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_with_minus_inf_in_other_classes(reduction):
    logits = [[2.0, -math.inf, 0.5], [1.0, 2.0, -math.inf], [0.0, 0.0, 0.0]]
    target = [0, 1, -100]
    v, t = both(logits)
    w = [0.5, 2.0, 1.0]
    for weight in (None, w):
        lv = F.nll_loss(F.log_softmax(v, 1), vt.tensor(target), reduction=reduction,
                        weight=None if weight is None else vt.tensor(weight))
        lt = TF.nll_loss(TF.log_softmax(t, 1), torch.tensor(target), reduction=reduction,
                         weight=None if weight is None else torch.tensor(weight))
        close(lv, lt)
        v.grad = t.grad = None
        lv.sum().backward()
        lt.sum().backward()
        close(v.grad, t.grad)


@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_every_target_ignored(loss, reduction):
    v, t = both([[2.0, 0.0, 0.5], [1.0, 2.0, 3.0]])
    lv = getattr(F, loss)(v, vt.tensor([-100, -100]), reduction=reduction)
    lt = getattr(TF, loss)(t, torch.tensor([-100, -100]), reduction=reduction)
    close(lv, lt)  # mean: NaN (0 / 0), as in PyTorch; sum: 0
    lv.backward()
    lt.backward()
    close(v.grad, t.grad)  # zero gradients, not NaN


def test_bce_with_logits_gradient_at_zero():
    for pos_weight in (None, [3.0, 0.5]):
        v, t = both([0.0, 0.0])
        kw_v = {} if pos_weight is None else {"pos_weight": vt.tensor(pos_weight)}
        kw_t = {} if pos_weight is None else {"pos_weight": torch.tensor(pos_weight)}
        F.binary_cross_entropy_with_logits(v, vt.tensor([1.0, 0.0]), **kw_v).backward()
        TF.binary_cross_entropy_with_logits(t, torch.tensor([1.0, 0.0]), **kw_t).backward()
        close(v.grad, t.grad)


def test_bce_with_logits_gradcheck_through_zero():
    x = vt.tensor(np.array([-30.0, -1.0, 0.0, 1e-3, 2.0, 40.0]), requires_grad=True)
    y = vt.tensor(np.array([1.0, 0.0, 1.0, 0.3, 0.0, 1.0]))
    assert vt.autograd.gradcheck(lambda a: F.binary_cross_entropy_with_logits(a, y), [x])
    vx = F.binary_cross_entropy_with_logits(x, y, reduction="none")
    tx = TF.binary_cross_entropy_with_logits(torch.tensor(x.detach().numpy()),
                                             torch.tensor(y.numpy()), reduction="none")
    close(vx, tx, rtol=1e-14)


@pytest.mark.parametrize("loss", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
@pytest.mark.parametrize("shapes", [((3, 1), (3, 4)), ((3, 4), (3, 1)), ((4,), (3, 4))])
def test_pointwise_losses_broadcast_with_a_warning(loss, shapes):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    va, ta = vt.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    with pytest.warns(UserWarning, match="target size"):
        lv = getattr(F, loss)(va, vt.tensor(b))
    with pytest.warns(UserWarning):
        lt = getattr(TF, loss)(ta, torch.tensor(b))
    close(lv, lt, rtol=1e-5)
    lv.backward()
    lt.backward()
    close(va.grad, ta.grad, rtol=1e-5)


def test_losses_that_refuse_other_shapes_still_raise():
    a, b = vt.rand(3, 1), vt.rand(3, 4)
    with pytest.raises(ValueError):
        F.binary_cross_entropy(a, b)
    with pytest.raises(ValueError):
        F.binary_cross_entropy_with_logits(a, b)
    with pytest.raises(ValueError):
        F.mse_loss(vt.rand(3), vt.rand(4))  # not broadcastable


def test_kl_div_broadcasts():
    a = np.log(np.random.default_rng(1).uniform(0.1, 1, (3, 4))).astype(np.float32)
    b = np.random.default_rng(2).uniform(0, 1, (3, 1)).astype(np.float32)
    close(F.kl_div(vt.tensor(a), vt.tensor(b), reduction="sum"),
          TF.kl_div(torch.tensor(a), torch.tensor(b), reduction="sum"), rtol=1e-5)


SPECIAL = [[-2.5, 0.0, 1.0, -math.inf], [math.nan, 1.5, -1.25, 3.25], [40.0, -40.0, 0.5, 2.0]]
TARGET = [[0.0, 1.0, 1.0, 0.0], [0.5, 0.0, 1.0, 1.0], [1.0, 0.0, 0.3, 1.0]]
PROBS = [[0.1, 0.5, 0.0, 0.4], [0.7, 0.2, 0.1, 0.0], [0.5, 0.0, 0.5, 0.0]]


@pytest.mark.parametrize("name", ["smooth_l1", "huber", "kl_div", "ce_ignored_smoothing",
                                  "ce_3d_ignored", "l1", "mse"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_losses_with_nan_and_inf_inputs(name, reduction):
    def fn(f, m, x):
        t = m.tensor(TARGET, dtype=x.dtype)
        red = "batchmean" if name == "kl_div" and reduction == "mean" else reduction
        return {
            "smooth_l1": lambda: f.smooth_l1_loss(x, t, reduction=red, beta=0.5),
            "huber": lambda: f.huber_loss(x, t, reduction=red, delta=0.7),
            "l1": lambda: f.l1_loss(x, t, reduction=red),
            "mse": lambda: f.mse_loss(x, t, reduction=red),
            "kl_div": lambda: f.kl_div(f.log_softmax(x, 1), m.tensor(PROBS, dtype=x.dtype),
                                       reduction=red),
            "ce_ignored_smoothing": lambda: f.cross_entropy(
                x, m.tensor([-100, 3, 1]), label_smoothing=0.2, reduction=red),
            "ce_3d_ignored": lambda: f.cross_entropy(x.reshape(1, 3, 4),
                                                     m.tensor([[0, 2, 1, -100]]), reduction=red),
        }[name]()
    v, t = both(SPECIAL)
    lv, lt = fn(F, vt, v), fn(TF, torch, t)
    close(lv, lt, rtol=1e-5, atol=1e-6)
    g = np.linspace(0.5, 1.5, lt.numel()).reshape(tuple(lt.shape)).astype(np.float32)
    lv.backward(vt.tensor(g))
    lt.backward(torch.tensor(g))
    close(v.grad, t.grad, rtol=1e-5, atol=1e-6)


def test_binary_cross_entropy_rejects_nan_input():
    x = [0.5, math.nan]
    with pytest.raises(RuntimeError):
        TF.binary_cross_entropy(torch.tensor(x), torch.tensor([1.0, 0.0]))
    with pytest.raises(ValueError, match="probabilities"):
        F.binary_cross_entropy(vt.tensor(x), vt.tensor([1.0, 0.0]))


# -- dtype promotion and broadcasting of the pair losses, as PyTorch ----------------------

_PAIR_LOSSES = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "soft_margin_loss",
                "binary_cross_entropy_with_logits", "binary_cross_entropy", "kl_div",
                "poisson_nll_loss", "hinge_embedding_loss", "multilabel_soft_margin_loss"]
_PAIRS = {
    "f32,f64": lambda m: (m.rand(2, 3), m.rand(2, 3, dtype=m.float64)),
    "f64,f32": lambda m: (m.rand(2, 3, dtype=m.float64), m.rand(2, 3)),
    "f16,f32": lambda m: (m.rand(2, 3).half(), m.rand(2, 3)),
    "bf16,f32": lambda m: (m.rand(2, 3).bfloat16(), m.rand(2, 3)),
    "bf16,f32 0-d": lambda m: (m.rand(2, 3).bfloat16(), m.rand(())),
    "f32,i64": lambda m: (m.rand(2, 3), m.ones(2, 3, dtype=m.int64)),
    "i64,f32": lambda m: (m.ones(2, 3, dtype=m.int64), m.rand(2, 3)),
    "i64,i64": lambda m: (m.ones(2, 3, dtype=m.int64), m.ones(2, 3, dtype=m.int64)),
    "f32,bool": lambda m: (m.rand(2, 3), m.ones(2, 3, dtype=m.bool)),
    "(2,3),(3,)": lambda m: (m.rand(2, 3), m.rand(3)),
    "(),(1,)": lambda m: (m.rand(()), m.rand(1)),
    "(2,1),(1,3)": lambda m: (m.rand(2, 1), m.rand(1, 3)),
}


def _outcome(lib, name, pair):
    a, b = _PAIRS[pair](lib)
    try:
        out = getattr(lib.nn.functional, name)(a, b, reduction="none")
    except Exception:  # noqa: BLE001 - both refuse, or neither
        return "refused"
    return str(out.dtype).rsplit(".", 1)[-1], tuple(out.shape)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("pair", sorted(_PAIRS))
@pytest.mark.parametrize("name", _PAIR_LOSSES)
def test_pair_loss_dtype_and_broadcast_like_torch(name, pair):
    assert _outcome(vt, name, pair) == _outcome(torch, name, pair)


@pytest.mark.parametrize("expr", [
    "F.cosine_embedding_loss(m.rand(2, 1), m.rand(1, 3), m.ones(2))",
    "F.cosine_embedding_loss(m.rand(2, 3), m.rand(3), m.ones(2))",
    "F.margin_ranking_loss(m.rand(2, 1), m.rand(1, 3), m.ones(2, 1))",
    "F.margin_ranking_loss(m.rand(2, 3), m.rand(3), m.ones(3))",
    "F.margin_ranking_loss(m.ones(3, dtype=m.int64), m.ones(3, dtype=m.int64), m.ones(3))",
    "F.triplet_margin_loss(m.rand(2, 3), m.rand(2, 3, dtype=m.float64), m.rand(2, 3))",
    "F.gaussian_nll_loss(m.ones(3, dtype=m.int64), m.rand(3), m.ones(3))",
    "F.gaussian_nll_loss(m.rand(3), m.rand(3), m.ones(3, dtype=m.int64))",
])
def test_other_losses_dtype_and_broadcast_like_torch(expr):
    outcomes = []
    for lib in (torch, vt):
        try:
            out = eval(expr, {"m": lib, "F": lib.nn.functional})
            outcomes.append((str(out.dtype).rsplit(".", 1)[-1], tuple(out.shape)))
        except Exception:  # noqa: BLE001 - both refuse, or neither
            outcomes.append("refused")
    assert outcomes[0] == outcomes[1]


def test_kl_div_gradient_at_zero_targets_is_xlogys():
    for data in ([[-0.0, 0.0, 0.5, -1.0]], [[0.0, 0.25, 0.75, 0.0]]):
        got, want = both(data)
        F.kl_div(got, got, reduction="sum").backward()
        TF.kl_div(want, want, reduction="sum").backward()
        close(got.grad, want.grad)
