"""Backward refuses exactly where PyTorch's does, compared with PyTorch CPU.

Two kinds of refusal: an op whose derivative PyTorch does not implement (``floor_divide``,
``number % tensor``: the forward works, the backward raises), and a tensor that PyTorch's
backward of an op saved (``self``, ``other``, ``result`` in its derivatives.yaml) modified
in place before the backward, even where Volta's own formula needs less. Each program runs
on both libraries; both must raise at backward or neither, and Volta's error names the op.
"""

from __future__ import annotations

import numpy as np
import pytest
from torch_ref import torch

import volta_core as vt
from volta_core.autograd.function import Function, _counters
from volta_core.errors import AutogradError

X = np.array([[0.5, -1.5, 2.0], [0.3, 0.75, -0.25]])
Y = np.array([[1.5, 0.5, -2.0], [2.25, 0.7, 1.25]])
P = np.array([[0.2, 0.6, 0.4], [0.3, 0.7, 0.1]])


def _run(lib, program: str, dtype: str) -> BaseException | None:
    """Run ``program`` with ``x``, ``y`` (non-leaves requiring grad), ``p`` (in (0, 1)) and
    ``c`` (a constant); it sets ``loss``, whose backward runs. Returns its exception."""
    dt = getattr(lib, dtype)
    ns = {"vt": lib, "F": lib.nn.functional}
    for name, a, grad in (("x", X, True), ("y", Y, True), ("p", P, True), ("c", Y, False)):
        t = lib.tensor(a, dtype=dt, requires_grad=grad)
        ns[name] = t.clone() if grad else t  # clones: in-place changes are allowed
    exec(program, ns)
    try:
        ns["loss"].sum().backward()
    except Exception as exc:  # noqa: BLE001 - the verdict compares which side raises
        return exc
    return None


def _same_refusal(program: str, op: str, dtype: str = "float64") -> None:
    t_exc = _run(torch, program, dtype)
    v_exc = _run(vt, program, dtype)
    assert (t_exc is None) == (v_exc is None), (
        f"PyTorch: {t_exc!r}; Volta: {v_exc!r}")
    if v_exc is not None:
        assert isinstance(v_exc, AutogradError), repr(v_exc)
        assert op.lower() in str(v_exc).lower(), f"{op!r} not named in: {v_exc}"


# -- ops without a derivative ---------------------------------------------------------------

NO_DERIVATIVE = [
    "loss = x // y", "loss = x // 2.0", "loss = 3.0 // x", "loss = vt.floor_divide(x, y)",
    "loss = x.floor_divide(c)", "loss = x * 1; loss //= 2.0", "loss = x * 1; loss.floor_divide_(y)",
    "loss = c // x", "loss = 3.0 % x", "loss = vt.remainder(3.0, x)",
]


@pytest.mark.parametrize("program", NO_DERIVATIVE)
@pytest.mark.parametrize("dtype", ["float64", "bfloat16"])
def test_backward_through_an_op_without_derivative_raises_like_torch(program, dtype):
    op = "floor_divide" if "//" in program or "floor" in program else "remainder"
    _same_refusal(program, op, dtype)
    t = _run(vt, program, dtype)
    assert "detach()" in str(t)  # the message says what to do instead


@pytest.mark.parametrize("program", [
    "loss = x % y", "loss = x % 2.0", "loss = vt.div(x, y, rounding_mode='floor')",
    "loss = vt.div(x, 2.0, rounding_mode='trunc')", "loss = vt.fmod(x, y)",
    "loss = (x // 2.0).detach() + x",
])
def test_related_forms_keep_their_gradient(program):
    _same_refusal(program, "")


# -- a tensor PyTorch saved, modified in place ------------------------------------------------

# (program, the op its error names); each runs on float64 (and bfloat16 where marked)
MODIFIED = [
    # an op's result, saved by its backward
    ("loss = x.exp(); loss.add_(1)", "Exp"),
    ("loss = x.clone(); loss.exp_(); loss.add_(1)", "Exp"),
    ("loss = vt.exp2(x); loss.mul_(2)", "Exp2"),
    ("loss = x.tanh(); loss.add_(1)", "Tanh"),
    ("loss = x.clone(); loss.sigmoid_(); loss.mul_(2)", "Sigmoid"),
    ("loss = x.relu(); loss.add_(1)", "Relu"),
    ("loss = p.sqrt(); loss.add_(1)", "Sqrt"),
    ("loss = p.rsqrt(); loss.add_(1)", "Rsqrt"),
    ("loss = x.reciprocal(); loss.add_(1)", "Reciprocal"),
    ("loss = x.expm1(); loss.add_(1)", "Expm1"),
    ("loss = x.tan(); loss.add_(1)", "Tan"),
    ("loss = x.sgn(); loss.add_(1)", "sgn"),
    ("loss = x.sign(); loss.add_(1)", ""),  # sign saves nothing
    ("loss = x.floor(); loss.add_(1)", ""),
    ("loss = x.amax(1); loss.add_(1)", "Max"),
    ("loss = x.amin(); loss.add_(1)", "Min"),
    ("loss = x.max(); loss.add_(1)", "Max"),
    ("loss = x.prod(1); loss.add_(1)", "Prod"),
    ("loss = x.std(1); loss.add_(1)", "std"),
    ("loss = x.var(1); loss.add_(1)", ""),  # var saves its input only
    ("loss = x.norm(); loss.add_(1)", "VectorNorm"),
    ("loss = x.logsumexp(1); loss.add_(1)", "LogSumExp"),
    ("loss = x.softmax(1); loss.add_(1)", "Softmax"),
    ("loss = x.log_softmax(1); loss.add_(1)", "LogSoftmax"),
    ("loss = x.cumprod(1); loss.add_(1)", "Cumprod"),
    ("loss = x.logcumsumexp(1); loss.add_(1)", "LogCumSumExp"),
    ("loss = x.median(); loss.add_(1)", "EvenPick"),
    ("loss = vt.hypot(x, y); loss.add_(1)", "Hypot"),
    ("loss = vt.copysign(x, y); loss.add_(1)", "copysign"),
    ("loss = x.cumsum(1); loss.add_(1)", ""),
    # an op's input, saved by its backward
    ("loss = x.sin(); x.add_(1)", "Sin"),
    ("loss = x.relu(); x.add_(1)", ""),  # relu saves its result, not its input
    ("loss = x.abs(); x.add_(1)", "Abs"),
    ("loss = x * c; c.add_(1)", "Mul"),
    ("loss = x * c; x.add_(1)", ""),  # mul keeps c for x's gradient, not x
    ("loss = x @ c.mT; c.add_(1)", "Matmul"),
    ("loss = x @ c.mT; x.add_(1)", ""),  # x is kept for c's gradient only
    ("loss = x * 1; loss.mul_(loss)", "Mul"),  # the other factor is self, then changed
    ("loss = x * 1; loss.div_(loss)", "Div"),
    ("loss = x * 1; loss.add_(loss)", ""),
    # an overwritten graph still runs its backward (PyTorch's CopyBackwards sends zeros)
    ("loss = x ** y; loss.copy_(c)", "Pow"),
    ("loss = x.exp(); loss.copy_(y)", "Exp"),
    ("loss = x.exp(); loss.fill_(y[0, 0])", "Exp"),
    ("loss = x * 2; loss.copy_(y)", ""),
    ("loss = x / c; c.add_(1)", "Div"),
    ("loss = c / x; c.add_(1)", "Div"),
    ("loss = x ** 2.0; loss.add_(1)", ""),  # pow(Tensor, Scalar) keeps self only
    ("loss = x ** 2.0; x.add_(1)", "Pow"),
    ("loss = x ** y; loss.add_(1)", "Pow"),
    ("loss = 2.0 ** x; loss.add_(1)", "Pow"),
    ("loss = 2.0 ** x; x.add_(1)", "Pow"),
    ("loss = vt.maximum(x, y); y.add_(1)", "Maximum"),
    ("loss = vt.fmax(x, c); c.add_(1)", "FMax"),
    ("loss = vt.atan2(x, c); c.add_(1)", "Atan2"),
    ("loss = vt.clamp(x, c, None); c.add_(1)", "Clamp"),
    ("loss = vt.where(c > 0, x, y); c.add_(1)", "Where"),
    ("loss = x.nan_to_num(); x.add_(1)", "NanToNum"),
    ("loss = x.nansum(); x.add_(1)", "NanToZero"),
    ("loss = x.var(1); x.add_(1)", "Var"),
    ("loss = F.logsigmoid(x); x.add_(1)", "logsigmoid"),
    ("loss = F.softshrink(x); x.add_(1)", "softshrink"),
    ("loss = F.celu(x); x.add_(1)", "celu"),
    ("loss = F.hardswish(x); x.add_(1)", "Hardswish"),
    ("loss = F.gelu(x); x.add_(1)", "Gelu"),
    ("loss = vt.erfinv(p); p.add_(1)", "Erfinv"),
    ("loss = vt.erfinv(p); loss.add_(1)", ""),  # erfinv's backward recomputes from p
    ("loss = x.scatter_reduce(1, vt.tensor([[0, 0, 2]]), y, 'sum'); loss.add_(1)",
     "ScatterReduce"),  # PyTorch keeps the result for every reduce
    ("loss = x.scatter_reduce(1, vt.tensor([[0, 0, 2]]), y, 'amax'); y.add_(1)",
     "ScatterReduce"),
    ("loss = vt.lerp(x, y, 0.5); x.add_(1)", ""),  # a number weight: nothing saved
    ("loss = vt.lerp(x, y, p); x.add_(1)", "Lerp"),
    ("loss = vt.gather(x, 1, vt.tensor([[0, 2]])); x.add_(1)", "Gather"),
    # nn layers and losses
    ("loss = F.mse_loss(x, y); x.add_(1)", "mse_loss"),
    ("loss = F.smooth_l1_loss(x, y); y.add_(1)", "smooth_l1_loss"),
    ("loss = F.huber_loss(x, y, reduction='none'); x.add_(1)", "huber_loss"),
    ("loss = F.l1_loss(x, y); x.add_(1)", ""),  # composite in PyTorch: |x - y| keeps x - y
    ("loss = F.binary_cross_entropy_with_logits(x, p); p.add_(1)",
     "binary_cross_entropy_with_logits"),
    ("w = c[0].abs(); loss = F.nll_loss(x, vt.tensor([0, 2]), weight=w); w.add_(1)", "nll_loss"),
    ("w = c[0].abs(); loss = F.cross_entropy(x, vt.tensor([0, 2]), weight=w); w.add_(1)",
     "cross_entropy"),
    ("loss = F.max_pool2d(x.reshape(1, 1, 2, 3), 2, 1); x.add_(1)", "MaxPool2d"),
    ("loss = F.avg_pool2d(x.reshape(1, 1, 2, 3), 2, 1); x.add_(1)", "AvgPool2d"),
    ("loss = F.max_pool2d(x.reshape(1, 1, 2, 3), 2, 1); loss.add_(1)", ""),
    ("loss = F.layer_norm(x, (3,), p[0], y[0]); y.add_(1)", "LayerNorm"),
    ("loss = F.group_norm(x.reshape(2, 3, 1), 3); x.add_(1)", "group_norm"),
    ("loss = F.instance_norm(x.reshape(1, 2, 3)); x.add_(1)", "instance_norm"),
    ("loss = F.batch_norm(x, c[0] * 0, c[1].abs(), training=False); x.add_(1)", "batch_norm"),
    ("loss = F.pad(x.reshape(1, 2, 3), (1, 1), mode='reflect'); x.add_(1)", "pad"),
    ("loss = F.pad(x.reshape(1, 2, 3), (1, 1), mode='replicate'); x.add_(1)", "pad"),
    ("loss = F.pad(x.reshape(1, 2, 3), (1, 1), mode='circular'); x.add_(1)", ""),
    ("loss = F.rrelu(x); x.add_(1)", "rrelu"),
    # inplace=True writes into the tensor that an earlier backward saved
    ("loss = x.sigmoid(); F.relu(loss, inplace=True)", "Sigmoid"),
    ("loss = x.exp(); F.hardtanh(loss, 0.0, 2.0, inplace=True)", "Exp"),
    ("loss = x * 2; F.elu(loss, inplace=True)", ""),
    ("loss = x * 2; vt.nn.ReLU(inplace=True)(loss)", ""),
    ("loss = x.tanh(); vt.nn.SiLU(inplace=True)(loss)", "Tanh"),
    # the other outputs of several-output ops
    ("v, i = x.max(1); i.add_(1); loss = v", "max"),
    ("v, i = x.max(1); v.add_(1); loss = v", ""),  # the values are not saved
    ("v, i = x.median(1); i.add_(1); loss = v", "Pick"),
    ("v, i = x.sort(1); i.add_(1); loss = v", "Pick"),
    ("v, i = x[0, 0].sort(0); i.add_(1); loss = v", "sort"),
    ("v, i = x.topk(2, 1); x.add_(1); loss = v", ""),  # topk keeps the indices only
    ("v, i = x.cummax(1); x.add_(1); loss = v", "Gather"),
    ("lo, hi = vt.aminmax(x); hi.add_(1); loss = lo", "aminmax"),
    ("lo, hi = vt.aminmax(x, dim=1); lo.add_(1); loss = hi", "aminmax"),
]

BFLOAT16 = {"loss = x.exp(); loss.add_(1)", "loss = x.clone(); loss.exp_(); loss.add_(1)",
            "loss = x.tanh(); loss.add_(1)", "loss = x.clone(); loss.sigmoid_(); loss.mul_(2)",
            "loss = x ** 2.0; loss.add_(1)", "loss = 2.0 ** x; loss.add_(1)",
            "loss = x.std(1); loss.add_(1)", "loss = x.logcumsumexp(1); loss.add_(1)",
            "loss = vt.hypot(x, y); loss.add_(1)", "loss = vt.erfinv(p); p.add_(1)"}


@pytest.mark.parametrize("program,op", MODIFIED)
def test_modified_saved_tensor_refuses_like_torch(program, op):
    _same_refusal(program, op)


@pytest.mark.parametrize("program,op", [(p, o) for p, o in MODIFIED if p in BFLOAT16])
def test_modified_saved_tensor_refuses_like_torch_in_bfloat16(program, op):
    _same_refusal(program, op, "bfloat16")


def test_the_refusal_is_at_backward_and_says_what_to_do():
    x = vt.tensor([1.0, 2.0], requires_grad=True).clone()
    y = x.exp()
    y.add_(1)  # forward and the in-place op work, as in PyTorch
    with pytest.raises(AutogradError, match="Exp.*modified by an in-place.*clone"):
        y.sum().backward()
    q = x // 2
    assert q.requires_grad  # PyTorch's output requires grad too; only backward refuses
    with pytest.raises(AutogradError, match="floor_divide.*rounding_mode='floor'"):
        q.sum().backward()


def test_an_overwritten_graph_gives_its_leaves_zero_gradients_like_torch():
    for lib in (torch, vt):
        leaf = lib.tensor([1.0, 2.0], requires_grad=True)
        src = lib.tensor([3.0, 4.0], requires_grad=True)
        y = leaf * 2
        y.copy_(src)
        y.sum().backward()
        assert leaf.grad.tolist() == [0.0, 0.0] and src.grad.tolist() == [1.0, 1.0]


def test_a_second_backward_through_a_watching_node_says_the_graph_was_freed():
    x = vt.tensor([1.0, 2.0], requires_grad=True)
    y = vt.amax(x)  # saves through pytorch_saves: the node is freed like any other
    y.backward()
    with pytest.raises(AutogradError, match="second time"):
        y.backward()


# -- the ops whose forward saves exactly what PyTorch's backward does --------------------------

# arguments PyTorch is not differentiable with respect to: refused at the call
NOT_DIFFERENTIABLE = [
    "F.nll_loss(x, vt.tensor([0, 2]), weight=y[0])",
    "F.cross_entropy(x, vt.tensor([0, 2]), weight=y[0])",
    "F.binary_cross_entropy(p, p * 0.5, weight=y)",
    "F.binary_cross_entropy_with_logits(x, p, weight=y)",
    "F.binary_cross_entropy_with_logits(x, p, pos_weight=y[0])",
    "F.soft_margin_loss(x, y)",
    "F.multi_margin_loss(x, vt.tensor([0, 2]), weight=y[0])",
]


@pytest.mark.parametrize("call", NOT_DIFFERENTIABLE)
def test_an_argument_without_derivative_is_refused_like_torch(call):
    for lib in (torch, vt):
        with pytest.raises(Exception, match="differentiable"):
            _run(lib, "loss = " + call, "float64")
    with vt.no_grad():  # allowed without grad mode, as in PyTorch
        _run(vt, "loss = " + call + ".detach().requires_grad_()", "float64")
    with torch.no_grad():
        _run(torch, "loss = " + call + ".detach().requires_grad_()", "float64")


# one program per Function with saves_as_pytorch: the node of `out` is checked
CLAIMS = {
    "Reciprocal": "out = x.reciprocal()", "Sqrt": "out = p.sqrt()", "Exp": "out = x.exp()",
    "Exp2": "out = vt.exp2(x)", "Log": "out = p.log()", "Log2": "out = p.log2()",
    "Sin": "out = x.sin()", "Cos": "out = x.cos()", "Tanh": "out = x.tanh()",
    "Sigmoid": "out = x.sigmoid()", "Relu": "out = x.relu()", "Mul": "out = x * y",
    "Div": "out = x / y", "Log1p": "out = p.log1p()", "Expm1": "out = x.expm1()",
    "Sinh": "out = x.sinh()", "Cosh": "out = x.cosh()", "Tan": "out = x.tan()",
    "Asin": "out = p.asin()", "Acos": "out = p.acos()", "Atan": "out = x.atan()",
    "Square": "out = x.square()", "Rsqrt": "out = p.rsqrt()", "Erf": "out = x.erf()",
    "Atan2": "out = vt.atan2(x, y)", "Softmax": "out = x.softmax(1)",
    "LogSoftmax": "out = x.log_softmax(1)", "LogSumExp": "out = x.logsumexp(1)",
    "Softplus": "out = F.softplus(x)", "Gelu": "out = F.gelu(x)", "Silu": "out = F.silu(x)",
    "LeakyRelu": "out = F.leaky_relu(x)", "Elu": "out = F.elu(x)",
    "Hardtanh": "out = F.hardtanh(x)", "Matmul": "out = x @ y.mT", "Erfinv": "out = vt.erfinv(p)",
}


def _claimed() -> dict[str, type]:
    found, stack = {}, [Function]
    while stack:
        cls = stack.pop()
        stack += cls.__subclasses__()
        if cls.__dict__.get("saves_as_pytorch"):
            found[cls.__name__] = cls
    return found


def test_every_claim_has_a_program():
    assert set(_claimed()) == set(CLAIMS)


@pytest.mark.parametrize("name", sorted(CLAIMS))
@pytest.mark.parametrize("grads", [(True, True), (True, False), (False, True)])
def test_forward_saves_exactly_what_pytorch_saves(name, grads, monkeypatch):
    cls = _claimed()[name]
    monkeypatch.setattr(cls, "saves_as_pytorch", False)  # watch pytorch_saves as well
    ns = {"vt": vt, "F": vt.nn.functional}
    for var, a, grad in (("x", X, grads[0]), ("y", Y, grads[1]), ("p", P, grads[0])):
        ns[var] = vt.tensor(a, requires_grad=grad).clone() if grad else vt.tensor(a)
    exec(CLAIMS[name], ns)
    node = ns["out"].grad_fn
    if node is None:  # no input requires grad here
        return
    assert type(node) is cls
    watched = {id(c) for c, _ in node._watched or ()}
    node._watched = None
    assert watched == {id(c) for c in _counters(node)}
