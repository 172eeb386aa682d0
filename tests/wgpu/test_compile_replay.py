"""``vt.compile(mode="reduce-overhead")`` on wgpu: once two calls recorded the same GPU
work, later calls replay it without running the Python code, with eager's results bit for
bit; calls whose work cannot be frozen (random numbers, read-backs, outputs that require
grad, new state) keep running the Python code."""

from __future__ import annotations

import contextlib

import pytest

import volta_core as vt


@pytest.fixture(autouse=True)
def _lazy_default(xp, monkeypatch):
    monkeypatch.delenv("VOLTA_WGPU_EAGER", raising=False)


def _dispatches() -> int:
    from volta_wgpu.engine import get_engine
    return get_engine().dispatch_count


@contextlib.contextmanager
def _eager():
    """Every op as its own kernel: the reference replay must match bit for bit."""
    vt.wgpu.set_lazy(False)
    try:
        yield
    finally:
        vt.wgpu.set_lazy(True)


def _train(net, opt, x, t=None):
    """One step on ``mean((net(x) - t)^2)`` (``t`` None: 0); the detached loss."""
    opt.zero_grad()
    out = net(x)
    loss = ((out if t is None else out - t) ** 2).mean()
    loss.backward()
    opt.step()
    return loss.detach()


def test_replayed_forward_backward_matches_eager():
    calls = []

    def step(x):
        calls.append(1)
        y = x
        for _ in range(40):
            y = vt.tanh(y * 1.01 + x) - 0.5
        y.sum().backward()

    f = vt.compile(step, mode="reduce-overhead")
    vt.manual_seed(0)
    for _ in range(5):
        x = vt.randn(3, 5, device="wgpu", requires_grad=True)
        ref = vt.tensor(x.tolist(), device="wgpu", requires_grad=True)
        with _eager():
            step(ref)
        assert f(x) is None
        assert x.grad.tolist() == ref.grad.tolist()
    # 5 reference runs and 2 recordings: the other 3 calls replayed without the Python code
    assert len(calls) == 5 + 2


def test_new_shape_or_grad_state_records_again():
    n = []

    @vt.compile(mode="reduce-overhead")
    def f(x, k):
        n.append(1)
        return x * k + 1.0

    a = vt.ones(4, device="wgpu")
    for _ in range(4):
        assert f(a, 2.0).tolist() == [3.0] * 4
    assert len(n) == 2
    assert f(a, 3.0).tolist() == [4.0] * 4  # another scalar argument: another guard
    assert f(vt.ones(2, 3, device="wgpu"), 2.0).tolist() == [[3.0] * 3] * 2
    assert len(n) == 4
    b = vt.full((4,), 5.0, device="wgpu")
    assert f(b, 2.0).tolist() == [11.0] * 4  # a replay reads the new input
    assert len(n) == 4


def test_readbacks_are_never_frozen():
    n = []

    @vt.compile(mode="reduce-overhead")
    def branchy(x):
        n.append(1)
        return x * 2 if x.sum().item() > 0 else x * 3

    assert branchy(vt.ones(2, device="wgpu")).tolist() == [2.0, 2.0]
    for _ in range(3):
        branchy(vt.ones(2, device="wgpu"))
    assert branchy(-vt.ones(2, device="wgpu")).tolist() == [-3.0, -3.0]
    assert len(n) == 5


def test_random_draws_replay_with_the_generator_advancing():
    """A call that draws random numbers replays: each replay advances the generator by
    what the call drew and draws the numbers eager calls would; reseeding between calls
    restarts the stream there too."""
    n = []

    def noisy(x):
        n.append(1)
        return x + vt.rand(x.shape, device="wgpu") + vt.randn(3, device="wgpu").sum()

    def run(f):
        vt.manual_seed(3)
        out = []
        for i in range(8):
            if i == 5:
                vt.manual_seed(4)
            out.append(f(x).tolist())
        from volta_core.random import draw_from
        return out, draw_from("t", None, vt.device("wgpu")).get_state()

    x = vt.zeros(64, device="wgpu")
    with _eager():
        eager = run(noisy)
    n.clear()
    assert run(vt.compile(noisy, mode="reduce-overhead")) == eager
    assert len(n) == 2
    assert len({tuple(d) for d in eager[0]}) == 8


def test_reseeding_inside_the_call_is_never_frozen():
    """A call that reseeds the generator (then draws, or not) changes host state a replay
    would not: it keeps running its Python code, so every call draws what eager's does."""
    n = []

    def reseeded(x):
        n.append(1)
        vt.manual_seed(5)
        return x + vt.rand(x.shape, device="wgpu")

    def reseeded_after(x):
        n.append(1)
        y = x + vt.rand(x.shape, device="wgpu")
        vt.manual_seed(6)
        return y

    x = vt.zeros(8, device="wgpu")
    for fn in (reseeded, reseeded_after):
        vt.manual_seed(1)
        with _eager():
            eager = [fn(x).tolist() for _ in range(5)]
        vt.manual_seed(1)
        n.clear()
        f = vt.compile(fn, mode="reduce-overhead")
        assert [f(x).tolist() for _ in range(5)] == eager
        assert len(n) == 5


def test_dropout_training_step_replays_and_matches_eager():
    """Dropout in a training step: the masks of the replays are eager's, bit for bit."""
    def make():
        vt.manual_seed(14)
        net = vt.nn.Sequential(vt.nn.Linear(5, 16), vt.nn.ReLU(), vt.nn.Dropout(0.3),
                               vt.nn.Linear(16, 3), vt.nn.Dropout(0.1)).to("wgpu")
        return net, vt.optim.AdamW(net.parameters(), lr=0.01)

    x = vt.randn(8, 5, device="wgpu")
    net_e, opt_e = make()
    with _eager():
        eager = [_train(net_e, opt_e, x).item() for _ in range(10)]
    net, opt = make()
    n = []
    step = vt.compile(lambda: n.append(1) or _train(net, opt, x), mode="reduce-overhead")
    assert [step().item() for _ in range(10)] == eager
    assert len(n) == 3
    assert [p.tolist() for p in net.parameters()] == [p.tolist() for p in net_e.parameters()]


def test_training_step_with_optimizer_state_matches_eager():
    def make():
        vt.manual_seed(1)
        net = vt.nn.Sequential(vt.nn.Linear(6, 8), vt.nn.Tanh(), vt.nn.Linear(8, 2)).to("wgpu")
        return net, vt.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)

    vt.manual_seed(2)
    data = [(vt.randn(5, 6, device="wgpu"), vt.randn(5, 2, device="wgpu")) for _ in range(6)]
    net_e, opt_e = make()
    with _eager():
        eager = [_train(net_e, opt_e, x, t).item() for x, t in data]
    net, opt = make()
    n = []
    step = vt.compile(lambda x, t: n.append(1) or _train(net, opt, x, t), mode="reduce-overhead")
    assert [step(x, t).item() for x, t in data] == eager
    assert [p.tolist() for p in net.parameters()] == [p.tolist() for p in net_e.parameters()]
    # the 1st step makes the momentum buffers (new state: not frozen), the 2nd and 3rd
    # record the same work, the others replay it
    assert len(n) == 3


def test_fixed_tensor_gone_records_again():
    n = []

    class Box:  # not a Module: the compiler does not look inside, the tensor is fixed
        w = vt.full((3,), 2.0, device="wgpu")
    box = Box()

    @vt.compile(mode="reduce-overhead")
    def f(x):
        n.append(1)
        return x * box.w

    x = vt.ones(3, device="wgpu")
    for _ in range(3):
        assert f(x).tolist() == [2.0] * 3
    assert len(n) == 2
    Box.w = vt.full((3,), 7.0, device="wgpu")  # the recorded tensor dies
    assert f(x).tolist() == [7.0] * 3
    assert len(n) == 3


def test_module_in_eval_replays_and_sees_parameter_updates():
    vt.manual_seed(3)
    net = vt.nn.Linear(4, 3).to("wgpu").eval()
    seen = []
    ref_fwd = type(net).forward

    class Probe(vt.nn.Linear):
        def forward(self, x):
            seen.append(1)
            return ref_fwd(self, x)

    net.__class__ = Probe
    compiled = vt.compile(net, mode="reduce-overhead")
    x = vt.randn(2, 4, device="wgpu")
    with vt.no_grad():
        outs = [compiled(x).tolist() for _ in range(4)]
        assert len(seen) == 2 and all(o == outs[0] for o in outs)
        net.weight.mul_(2.0)
        assert compiled(x).tolist() == vt.nn.functional.linear(x, net.weight, net.bias).tolist()
    assert len(seen) == 2
    out = compiled(x)  # with grad: the output requires grad, so the Python code runs
    assert out.requires_grad and len(seen) == 3


def test_nested_compiled_calls_and_cpu_passthrough():
    inner = vt.compile(lambda t: vt.tanh(t) * 3.0, mode="reduce-overhead")
    outer = vt.compile(lambda t: inner(t) + 1.0, mode="reduce-overhead")
    a = vt.linspace(-1, 1, 8, device="wgpu")
    want_inner = (vt.tanh(a) * 3.0).tolist()
    want = (vt.tanh(a) * 3.0 + 1.0).tolist()
    for _ in range(5):
        assert outer(a).tolist() == want
        assert inner(a).tolist() == want_inner
    twice = vt.compile(lambda t: t * 2, mode="reduce-overhead")
    x = vt.ones(3)  # a CPU tensor: nothing to record, the function runs as it is
    assert [twice(x).tolist() for _ in range(4)] == [[2.0] * 3] * 4


def test_work_that_changes_every_call_stops_being_recorded():
    """A step whose work changes every call (here a Python number baked into an op that
    changes every call) never records the same tape twice: after a few tries the call
    just runs lazily (still eager's results)."""
    k = [0]

    def f(x):
        k[0] += 1
        return x * float(k[0])

    x = vt.ones(3, device="wgpu")
    step = vt.compile(lambda: f(x), mode="reduce-overhead")
    assert [step().tolist() for _ in range(8)] == [[float(i)] * 3 for i in range(1, 9)]
    entry = list(step.entries.values())[-1]
    assert not entry.stable and entry.fails >= 3


@pytest.mark.parametrize("make_opt", [
    lambda p: vt.optim.Adam(p, lr=0.05, amsgrad=True),
    lambda p: vt.optim.AdamW(p, lr=0.05, amsgrad=True, weight_decay=0.1),
    lambda p: vt.optim.RAdam(p, lr=0.05, weight_decay=0.01),
    lambda p: vt.optim.RAdam(p, lr=0.05, weight_decay=0.01, decoupled_weight_decay=True),
    lambda p: vt.optim.Adamax(p, lr=0.05, weight_decay=0.01),
    lambda p: vt.optim.Adagrad(p, lr=0.1, lr_decay=0.05, weight_decay=0.01),
], ids=["amsgrad", "adamw-amsgrad", "radam", "radamw", "adamax", "adagrad-lr-decay"])
def test_per_parameter_optimizers_replay_with_live_step_arguments(make_opt):
    """AMSGrad, RAdam, Adamax and Adagrad with lr_decay step parameter by parameter; their
    step-dependent numbers (bias corrections, RAdam's rectification and its switch at
    rho_t > 5, Adagrad's decayed lr) and a scheduler's lr are live kernel arguments, so
    the step replays from the 4th call and 14 steps equal eager's bit for bit."""
    def make():
        vt.manual_seed(15)
        net = vt.nn.Sequential(vt.nn.Linear(5, 8), vt.nn.Tanh(), vt.nn.Linear(8, 3)).to("wgpu")
        opt = make_opt(net.parameters())
        return net, opt, vt.optim.lr_scheduler.StepLR(opt, 4, gamma=0.5)

    def run(step, sched):
        out = []
        for _ in range(14):
            out.append(step().item())
            sched.step()
        return out

    x = vt.randn(4, 5, device="wgpu")
    net_e, opt_e, sched_e = make()
    with _eager():
        eager = run(lambda: _train(net_e, opt_e, x), sched_e)
    net, opt, sched = make()
    n = []
    step = vt.compile(lambda: n.append(1) or _train(net, opt, x), mode="reduce-overhead")
    assert run(step, sched) == eager
    assert len(n) == 3
    assert [p.tolist() for p in net.parameters()] == [p.tolist() for p in net_e.parameters()]
    _same_state(opt, opt_e)


def test_copies_of_a_compiled_module_record_their_own():
    import copy
    import pickle

    vt.manual_seed(6)
    net = vt.compile(vt.nn.Linear(3, 2).to("wgpu").eval(), mode="reduce-overhead")
    x = vt.ones(4, 3, device="wgpu")
    with vt.no_grad():
        want = [net(x).tolist() for _ in range(4)][-1]
        for other in (copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
            assert [other(x).tolist() for _ in range(4)] == [want] * 4
            other.weight.mul_(0.0)  # its own parameters: the original is untouched
            assert other(x).tolist() == [other.bias.tolist()] * 4
    assert net(x).tolist() == want


def _net_and_opt(kind, **kw):
    vt.manual_seed(5)
    net = vt.nn.Sequential(vt.nn.Linear(5, 8), vt.nn.Tanh(), vt.nn.Linear(8, 3)).to("wgpu")
    opts = {"adam": lambda p: vt.optim.Adam(p, lr=0.05, **kw),
            "adamw": lambda p: vt.optim.AdamW(p, lr=0.05, weight_decay=0.1, **kw),
            "sgd": lambda p: vt.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True,
                                          weight_decay=1e-3, **kw)}
    return net, opts[kind](net.parameters())


def _same_state(opt_a, opt_b):
    """The optimizers' state dicts hold the same step counts and tensor values."""
    sa, sb = opt_a.state_dict()["state"], opt_b.state_dict()["state"]
    assert sa.keys() == sb.keys()
    for k in sa:
        assert sa[k].keys() == sb[k].keys()
        for name, v in sa[k].items():
            w = sb[k][name]
            assert (v.tolist() == w.tolist()) if isinstance(v, vt.Tensor) else v == w


@pytest.mark.parametrize("kind", ["adam", "adamw", "sgd"])
def test_whole_training_step_replays_and_matches_eager(kind):
    """zero_grad, forward, loss, backward and the optimizer step replay as one recorded
    tape: Adam's step count and bias corrections live on in a buffer each replay writes,
    so 20 steps equal eager's bit for bit, step counts included."""
    vt.manual_seed(6)
    data = [(vt.randn(4, 5, device="wgpu"), vt.randn(4, 3, device="wgpu")) for _ in range(4)]
    net_e, opt_e = _net_and_opt(kind)
    with _eager():
        eager = [_train(net_e, opt_e, *data[i % 4]).item() for i in range(20)]
    net, opt = _net_and_opt(kind)
    n = []
    step = vt.compile(lambda x, t: n.append(1) or _train(net, opt, x, t), mode="reduce-overhead")
    assert [step(*data[i % 4]).item() for i in range(20)] == eager
    # the 1st step makes the optimizer state, the 2nd and 3rd record the same work
    assert len(n) == 3
    assert [p.tolist() for p in net.parameters()] == [p.tolist() for p in net_e.parameters()]
    _same_state(opt, opt_e)
    d = _dispatches()
    step(*data[0]).item()
    assert _dispatches() - d < 40  # one replayed tape, not the Python ops


def test_step_bound_as_a_default_argument_replays():
    """``vt.compile(lambda step=step: step())``: the guard reaches the module and optimizer
    through the default argument, so the step replays (it used to run the Python code on
    every call: the optimizer was out of the guard's reach)."""
    vt.manual_seed(6)
    x, t = vt.randn(4, 5, device="wgpu"), vt.randn(4, 3, device="wgpu")
    net, opt = _net_and_opt("sgd")
    n = []

    def train() -> vt.Tensor:
        n.append(1)
        return _train(net, opt, x, t)

    step = vt.compile(lambda train=train: train(), mode="reduce-overhead")
    for _ in range(6):
        step().item()
    assert len(n) == 3  # state made, then two equal recordings; the rest replayed


def test_scheduler_between_steps_needs_no_new_recording():
    """A scheduler stepping outside the compiled step changes ``lr``; the replay writes the
    new value into the optimizer's scalar buffer instead of recording again."""
    def run(step, opt):
        sched = vt.optim.lr_scheduler.ExponentialLR(opt, gamma=0.8)
        out = []
        for _ in range(12):
            out.append(step().item())
            sched.step()
        return out

    x = vt.randn(4, 5, device="wgpu")
    net_e, opt_e = _net_and_opt("adamw")
    with _eager():
        eager = run(lambda: _train(net_e, opt_e, x), opt_e)
    net, opt = _net_and_opt("adamw")
    n = []
    step = vt.compile(lambda: n.append(1) or _train(net, opt, x), mode="reduce-overhead")
    assert run(step, opt) == eager
    assert len(n) == 3
    _same_state(opt, opt_e)


def test_scheduler_inside_the_step_is_never_frozen():
    """A scheduler stepped inside the compiled call is Python work a replay would skip:
    such calls are not replayed (here StepLR changes lr only every 4 steps, so most calls
    leave it as it was)."""
    def make():
        net, opt = _net_and_opt("sgd")
        return net, opt, vt.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)

    def body(net, opt, sched, x):
        loss = _train(net, opt, x)
        sched.step()
        return loss

    x = vt.randn(4, 5, device="wgpu")
    net_e, opt_e, sched_e = make()
    with _eager():
        eager = [body(net_e, opt_e, sched_e, x).item() for _ in range(12)]
    net, opt, sched = make()
    n = []
    step = vt.compile(lambda: n.append(1) or body(net, opt, sched, x), mode="reduce-overhead")
    assert [step().item() for _ in range(12)] == eager
    assert len(n) == 12 and sched.last_epoch == sched_e.last_epoch == 12
    assert opt.param_groups[0]["lr"] == opt_e.param_groups[0]["lr"]


@pytest.mark.parametrize("kind, kw, key, value", [("sgd", {"foreach": False}, "lr", 0.01),
                                                   ("adam", {}, "betas", (0.5, 0.9))])
def test_hyperparameter_held_as_a_constant_records_again(kind, kw, key, value):
    """SGD with ``foreach=False`` steps parameter by parameter, its lr a constant of the
    recorded work: a new lr (or new betas for Adam, part of the guard) records again,
    then replays with the new value."""
    x = vt.randn(3, 5, device="wgpu")

    def run(step, opt):
        out = []
        for i in range(10):
            if i == 5:
                opt.param_groups[0][key] = value
            out.append(step().item())
        return out

    net_e, opt_e = _net_and_opt(kind, **kw)
    with _eager():
        eager = run(lambda: _train(net_e, opt_e, x), opt_e)
    net, opt = _net_and_opt(kind, **kw)
    n = []
    step = vt.compile(lambda: n.append(1) or _train(net, opt, x), mode="reduce-overhead")
    assert run(step, opt) == eager
    # steps 1-3 record (the first makes the state), 6-7 record the new value
    assert len(n) == 3 + 2


def test_step_counts_that_diverge_record_again():
    """A replay recomputes Adam's arguments from the step counts; counts that no longer
    agree (one parameter's state edited) cannot be replayed: the Python code runs."""
    def run(step, opt):
        out = []
        for i in range(10):
            if i == 6:
                first = opt.param_groups[0]["params"][0]
                opt.state[first]["step"] += 3
            out.append(step().item())
        return out

    x = vt.randn(4, 5, device="wgpu")
    net_e, opt_e = _net_and_opt("adam")
    with _eager():
        eager = run(lambda: _train(net_e, opt_e, x), opt_e)
    net, opt = _net_and_opt("adam")
    n = []
    step = vt.compile(lambda: n.append(1) or _train(net, opt, x), mode="reduce-overhead")
    assert run(step, opt) == eager
    assert len(n) > 3
    _same_state(opt, opt_e)


def test_new_batch_shape_records_again():
    """A last, smaller batch is a new guard: recorded anew, the full batches replay."""
    vt.manual_seed(7)
    data = [vt.randn(4 if i != 5 else 2, 5, device="wgpu") for i in range(10)]
    net_e, opt_e = _net_and_opt("adam")
    with _eager():
        eager = [_train(net_e, opt_e, x).item() for x in data]
    net, opt = _net_and_opt("adam")
    n = []
    step = vt.compile(lambda x: n.append(1) or _train(net, opt, x), mode="reduce-overhead")
    assert [step(x).item() for x in data] == eager
    assert len(n) == 3 + 1  # the odd batch runs its Python code once
    _same_state(opt, opt_e)


def test_float_state_changed_by_the_step_is_never_frozen():
    """An optimizer that keeps a Python float in its state and changes it on each step,
    with no ``_advance_host_state`` to recompute it: a call that changes it is not
    replayed."""
    class Decaying(vt.optim.SGD):
        def _update(self, p, group):
            st = self.state[p]
            st["scale"] = st.get("scale", 1.0) * 0.9
            st["step"] = st.get("step", 0) + 1
            p.data.sub_(p.grad * (group["lr"] * st["scale"]))

        def _step_group(self, group):
            return False

    def make():
        vt.manual_seed(8)
        net = vt.nn.Linear(5, 3).to("wgpu")
        return net, Decaying(net.parameters(), lr=0.05)

    x = vt.randn(4, 5, device="wgpu")
    net_e, opt_e = make()
    with _eager():
        eager = [_train(net_e, opt_e, x).item() for _ in range(6)]
    net, opt = make()
    n = []
    step = vt.compile(lambda: n.append(1) or _train(net, opt, x), mode="reduce-overhead")
    assert [step().item() for _ in range(6)] == eager
    assert len(n) == 6


def test_nadam_momentum_product_advances_on_replay():
    """NAdam keeps its momentum product as a Python float in its state; a replay
    recomputes it step by step (``NAdam._advance_host_state``) before the live kernel
    arguments, so 12 steps equal eager's bit for bit, the product included."""
    def make():
        vt.manual_seed(8)
        net = vt.nn.Sequential(vt.nn.Linear(5, 8), vt.nn.Tanh(), vt.nn.Linear(8, 3)).to("wgpu")
        return net, vt.optim.NAdam(net.parameters(), lr=0.05, weight_decay=0.01)

    x = vt.randn(4, 5, device="wgpu")
    net_e, opt_e = make()
    with _eager():
        eager = [_train(net_e, opt_e, x).item() for _ in range(12)]
    net, opt = make()
    n = []
    step = vt.compile(lambda: n.append(1) or _train(net, opt, x), mode="reduce-overhead")
    assert [step().item() for _ in range(12)] == eager
    assert len(n) == 3
    _same_state(opt, opt_e)


def test_training_step_replayed_inside_another_recording():
    """A compiled training step called from another compiled function: its replays are
    recorded by the outer call, live scalar buffer included, so the outer replays stay
    eager's too."""
    x = vt.randn(4, 5, device="wgpu")
    net_e, opt_e = _net_and_opt("adam")
    with _eager():
        eager = [_train(net_e, opt_e, x).item() for _ in range(12)]
    net, opt = _net_and_opt("adam")
    inner = vt.compile(lambda: _train(net, opt, x), mode="reduce-overhead")
    n = []
    outer = vt.compile(lambda: n.append(1) or inner() * 1.0, mode="reduce-overhead")
    got = [inner().item() for _ in range(5)]  # the inner step replays from its 4th call
    got += [outer().item() for _ in range(7)]
    assert got == eager
    assert len(n) < 7
    _same_state(opt, opt_e)


def test_optimizer_the_guard_cannot_see_is_never_frozen():
    """An optimizer reached only through an object's attributes is outside the guard: its
    step counts and lr would be frozen, so a call that steps it is not replayed (here the
    gradients die within the call, so nothing else refuses it)."""
    class Trainer:
        def __init__(self):
            self.net, self.opt = _net_and_opt("adam")

        def step(self, x):
            loss = (self.net(x) ** 2).mean()
            loss.backward()
            self.opt.step()
            self.opt.zero_grad()
            return loss.detach()

    x = vt.randn(4, 5, device="wgpu")
    ref = Trainer()
    with _eager():
        eager = [ref.step(x).item() for _ in range(8)]
    tr = Trainer()
    n = []
    step = vt.compile(lambda x: n.append(1) or tr.step(x), mode="reduce-overhead")
    assert [step(x).item() for _ in range(8)] == eager
    assert len(n) == 8
    _same_state(tr.opt, ref.opt)


def test_two_optimizer_steps_in_one_call_are_never_frozen():
    """Gradient steps taken twice in one call (the second at step count + 2) cannot be
    recomputed from the state the call leaves: such calls run their Python code."""
    x = vt.randn(4, 5, device="wgpu")

    def twice(net, opt):
        _train(net, opt, x)
        return _train(net, opt, x)

    net_e, opt_e = _net_and_opt("adam")
    with _eager():
        eager = [twice(net_e, opt_e).item() for _ in range(6)]
    net, opt = _net_and_opt("adam")
    n = []
    step = vt.compile(lambda: n.append(1) or twice(net, opt), mode="reduce-overhead")
    assert [step().item() for _ in range(6)] == eager
    assert len(n) == 6
    _same_state(opt, opt_e)


def test_step_count_edited_inside_the_call_replays_the_same_edit():
    """A replay advances the step counts by what the recorded call did to them, then
    recomputes the kernel's arguments: a call that also bumps the count itself before
    stepping replays right."""
    x = vt.randn(4, 5, device="wgpu")

    def body(net, opt):
        for st in opt.state.values():
            st["step"] += 2
        return _train(net, opt, x)

    net_e, opt_e = _net_and_opt("adam")
    with _eager():
        _train(net_e, opt_e, x)  # the state exists before the edits
        eager = [body(net_e, opt_e).item() for _ in range(8)]
    net, opt = _net_and_opt("adam")
    _train(net, opt, x)
    n = []
    step = vt.compile(lambda: n.append(1) or body(net, opt), mode="reduce-overhead")
    assert [step().item() for _ in range(8)] == eager
    assert len(n) == 2
    _same_state(opt, opt_e)


def test_detached_loss_does_not_keep_the_graph_from_replay():
    """``loss.detach()`` is a view of the loss, whose graph holds arrays made during the
    call (max pooling's indices): the recorded call returns a plain tensor, as replays do,
    so the graph dies with the call and the step replays."""
    def make():
        vt.manual_seed(9)
        net = vt.nn.Sequential(vt.nn.Conv2d(1, 2, 3), vt.nn.ReLU(), vt.nn.MaxPool2d(2),
                               vt.nn.Flatten(), vt.nn.Linear(8, 3)).to("wgpu")
        return net, vt.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)

    x = vt.randn(2, 1, 6, 6, device="wgpu")
    net_e, opt_e = make()
    with _eager():
        eager = [_train(net_e, opt_e, x).item() for _ in range(6)]
    net, opt = make()
    n = []
    step = vt.compile(lambda: n.append(1) or _train(net, opt, x), mode="reduce-overhead")
    out = [step() for _ in range(6)]
    assert [o.item() for o in out] == eager
    assert len(n) == 3 and not any(o.requires_grad or o._base is not None for o in out)


def test_gradients_sharing_one_array_replay():
    """An LSTM's two biases get one gradient array: inputs of the tape that share a
    buffer replay as long as they still do."""
    def make():
        vt.manual_seed(10)
        net = vt.nn.LSTM(3, 4, batch_first=True).to("wgpu")
        return net, vt.optim.Adam(net.parameters(), lr=0.05)

    def train(net, opt, x):
        opt.zero_grad()
        out, _ = net(x)
        loss = (out ** 2).mean()
        loss.backward()
        opt.step()
        return loss.detach()

    x = vt.randn(2, 5, 3, device="wgpu")
    net_e, opt_e = make()
    with _eager():
        eager = [train(net_e, opt_e, x).item() for _ in range(6)]
    net, opt = make()
    n = []
    step = vt.compile(lambda: n.append(1) or train(net, opt, x), mode="reduce-overhead")
    assert [step().item() for _ in range(6)] == eager
    assert len(n) == 3
    _same_state(opt, opt_e)


def test_optimizer_state_loaded_in_another_order_replays_right():
    """A loaded state dict may fill the optimizer's state in another order; the guard
    walks it in parameter order, so same-shaped state tensors keep their places."""
    def make():
        vt.manual_seed(11)
        net = vt.nn.Sequential(vt.nn.Linear(4, 4, bias=False), vt.nn.Tanh(),
                               vt.nn.Linear(4, 4, bias=False)).to("wgpu")
        return net, vt.optim.Adam(net.parameters(), lr=0.05)

    def run(step, opt):
        out = []
        for i in range(10):
            if i == 5:
                sd = opt.state_dict()
                sd["state"] = dict(reversed(list(sd["state"].items())))
                opt.load_state_dict(sd)
            out.append(step().item())
        return out

    x = vt.randn(3, 4, device="wgpu")
    net_e, opt_e = make()
    with _eager():
        eager = run(lambda: _train(net_e, opt_e, x), opt_e)
    net, opt = make()
    step = vt.compile(lambda: _train(net, opt, x), mode="reduce-overhead")
    assert run(step, opt) == eager
    _same_state(opt, opt_e)


def test_two_groups_zeroed_gradients_and_a_scheduler():
    """Plain SGD over two parameter groups with their own rates, gradients zeroed in place
    (``set_to_none=False``), a LambdaLR stepped between calls: replayed from the fifth
    call on (the first gradients are views, which zeroing in place does not record), eager's
    results throughout."""
    def make():
        vt.manual_seed(12)
        net = vt.nn.Sequential(vt.nn.Linear(5, 6), vt.nn.Tanh(), vt.nn.Linear(6, 2)).to("wgpu")
        opt = vt.optim.SGD([{"params": net[0].parameters()},
                            {"params": net[2].parameters(), "lr": 0.2}], lr=0.05)
        return net, opt, vt.optim.lr_scheduler.LambdaLR(opt, lambda e: 1.0 / (1 + e))

    def train(net, opt, x):
        opt.zero_grad(set_to_none=False)
        loss = (net(x) ** 2).mean()
        loss.backward()
        opt.step()
        return loss.detach()

    def run(step, sched):
        out = []
        for _ in range(10):
            out.append(step().item())
            sched.step()
        return out

    x = vt.randn(4, 5, device="wgpu")
    net_e, opt_e, sched_e = make()
    with _eager():
        eager = run(lambda: train(net_e, opt_e, x), sched_e)
    net, opt, sched = make()
    n = []
    step = vt.compile(lambda: n.append(1) or train(net, opt, x), mode="reduce-overhead")
    assert run(step, sched) == eager
    assert len(n) <= 4
    assert [p.grad.tolist() for p in net.parameters()] == \
        [p.grad.tolist() for p in net_e.parameters()]


def test_named_tuple_results_replay():
    """A named tuple result (``vt.max(x, dim)``) comes back as its own type, recorded or
    replayed."""
    n = []

    @vt.compile(mode="reduce-overhead")
    def f(x):
        n.append(1)
        return vt.max(x * 2.0, 0)

    x = vt.tensor([[1.0, 5.0], [3.0, 2.0]], device="wgpu")
    for _ in range(4):
        r = f(x)
        assert type(r).__name__ == "MaxResult"
        assert r.values.tolist() == [6.0, 10.0] and r.indices.tolist() == [1, 0]
    assert len(n) == 2


def test_conv_net_with_cross_entropy_and_a_cosine_schedule():
    """Conv, max pooling, GELU, layer norm and cross entropy on integer targets, AdamW, a
    cosine schedule stepped every few calls, batches cycling: 15 steps equal eager's bit
    for bit with the Python code run 3 times."""
    def make():
        vt.manual_seed(3)
        net = vt.nn.Sequential(vt.nn.Conv2d(1, 3, 3), vt.nn.ReLU(), vt.nn.MaxPool2d(2),
                               vt.nn.Flatten(), vt.nn.Linear(27, 16), vt.nn.GELU(),
                               vt.nn.LayerNorm(16), vt.nn.Linear(16, 4)).to("wgpu")
        opt = vt.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=0.05)
        return net, opt, vt.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)

    vt.manual_seed(5)
    data = [(vt.randn(5, 1, 8, 8, device="wgpu"), vt.randint(0, 4, (5,), device="wgpu"))
            for _ in range(3)]
    lossf = vt.nn.CrossEntropyLoss()

    def train(net, opt, x, y):
        opt.zero_grad()
        loss = lossf(net(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    def run(step, sched):
        out = []
        for i in range(15):
            out.append(step(*data[i % 3]).item())
            if i % 3 == 2:
                sched.step()
        return out

    net_e, opt_e, sched_e = make()
    with _eager():
        eager = run(lambda x, y: train(net_e, opt_e, x, y), sched_e)
    net, opt, sched = make()
    n = []
    step = vt.compile(lambda x, y: n.append(1) or train(net, opt, x, y), mode="reduce-overhead")
    assert run(step, sched) == eager
    assert len(n) == 3
    assert [p.tolist() for p in net.parameters()] == [p.tolist() for p in net_e.parameters()]
    _same_state(opt, opt_e)


@pytest.mark.parametrize("compiled_module", [False, True])
def test_submodule_switched_to_eval_records_again(compiled_module):
    """``training`` of every submodule is part of the guard: batch norm switched to eval
    alone changes the work."""
    vt.manual_seed(0)
    net = vt.nn.Sequential(vt.nn.Linear(4, 4), vt.nn.BatchNorm1d(4)).to("wgpu")
    x = vt.randn(8, 4, device="wgpu")
    if compiled_module:
        f = vt.compile(net, mode="reduce-overhead")
    else:
        f = vt.compile(lambda x: net(x), mode="reduce-overhead")
    with vt.no_grad():
        for _ in range(4):
            f(x)
        net[1].eval()
        want = vt.nn.functional.batch_norm(
            vt.nn.functional.linear(x, net[0].weight, net[0].bias), net[1].running_mean,
            net[1].running_var, net[1].weight, net[1].bias, training=False)
        assert f(x).tolist() == want.tolist()


def test_numbers_the_function_names_are_part_of_the_guard():
    """A closure variable that picks the batch, or a counter the call advances, is a
    Python value a replay would freeze: a new value records again (the counter: never
    replayed), so each call still sees its own batch and the counter counts every call."""
    data = [vt.full((3,), float(i), device="wgpu") for i in range(3)]
    k = 0
    calls = 0

    def pick():
        return data[k] * 2.0

    def count():
        nonlocal calls
        calls += 1
        return data[0] + 1.0

    f, g = (vt.compile(h, mode="reduce-overhead") for h in (pick, count))
    for i in range(12):
        k = (i // 4) % 3
        assert f().tolist() == [2.0 * k] * 3
        assert g().tolist() == [1.0] * 3
    assert calls == 12


def test_reordered_parameter_group_records_again():
    """The guard holds where each group's parameters are watched: reversing a group's
    list (same shapes throughout) does not pair one parameter with another's moments."""
    def make():
        vt.manual_seed(13)
        net = vt.nn.Sequential(vt.nn.Linear(4, 4, bias=False), vt.nn.Tanh(),
                               vt.nn.Linear(4, 4, bias=False)).to("wgpu")
        return net, vt.optim.Adam(net.parameters(), lr=0.05)

    def run(step, opt):
        out = []
        for i in range(10):
            if i == 5:
                opt.param_groups[0]["params"].reverse()
            out.append(step().item())
        return out

    x = vt.randn(3, 4, device="wgpu")
    net_e, opt_e = make()
    with _eager():
        eager = run(lambda: _train(net_e, opt_e, x), opt_e)
    net, opt = make()
    step = vt.compile(lambda: _train(net, opt, x), mode="reduce-overhead")
    assert run(step, opt) == eager
