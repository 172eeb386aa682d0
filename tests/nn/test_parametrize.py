"""``nn.utils.parametrize``, ``nn.utils.parametrizations`` (weight_norm, spectral_norm,
orthogonal) and the hook-based ``weight_norm``/``spectral_norm``, against PyTorch: the
same weights (and power-iteration vectors) loaded into both, forward and backward
compared over training steps, state-dict keys, removal, errors."""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest
import torch

import volta_core as vt
from volta_core import nn

TP = torch.nn.utils.parametrize
VP = nn.utils.parametrize


def _pair(make_t, make_v):
    torch.manual_seed(0)  # reproducible weights (and power-iteration vectors)
    t, v = make_t(), make_v()
    v.load_state_dict({k: vt.tensor(a.detach().numpy()) for k, a in t.state_dict().items()})
    return t, v


def _sync(t, v) -> None:
    """Load PyTorch's state (random power-iteration vectors, orthogonal base) into Volta."""
    assert list(v.state_dict()) == list(t.state_dict())
    v.load_state_dict({k: vt.tensor(a.detach().numpy()) for k, a in t.state_dict().items()})


def _steps(t, v, x: np.ndarray, steps: int = 3, train: bool = True,
           tol: tuple = (1e-8, 1e-12)) -> None:
    t.train(train)
    v.train(train)
    topt = torch.optim.SGD(t.parameters(), lr=0.1)
    vopt = vt.optim.SGD(v.parameters(), lr=0.1)
    for _ in range(steps):
        topt.zero_grad()
        vopt.zero_grad()
        ot, ov = t(torch.tensor(x)), v(vt.tensor(x))
        np.testing.assert_allclose(ov.detach().numpy(), ot.detach().numpy(), rtol=tol[0],
                                   atol=tol[1])
        (ot ** 2).sum().backward()
        (ov ** 2).sum().backward()
        names = [n for n, _ in t.named_parameters()]
        assert [n for n, _ in v.named_parameters()] == names
        for (name, a), b in zip(t.named_parameters(), v.parameters()):
            np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=tol[0],
                                       atol=tol[1], err_msg=name)
        topt.step()
        vopt.step()
    for (k, a), b in zip(t.state_dict().items(), v.state_dict().values()):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=tol[0], atol=tol[1], err_msg=k)


def _linear(m, i=4, o=5):
    return (lambda: m.nn.Linear(i, o, dtype=torch.float64 if m is torch else "float64"))


def _conv(m):
    return (lambda: m.nn.Conv2d(2, 3, 3, dtype=torch.float64 if m is torch else "float64"))


X_LIN = np.random.default_rng(0).standard_normal((6, 4))
X_CONV = np.random.default_rng(1).standard_normal((2, 2, 5, 5))


@pytest.mark.parametrize("dim", [0, 1, None])
def test_parametrizations_weight_norm(dim) -> None:
    t, v = _pair(_linear(torch), _linear(vt))
    torch.nn.utils.parametrizations.weight_norm(t, dim=dim)
    nn.utils.parametrizations.weight_norm(v, dim=dim)
    _sync(t, v)
    assert type(v).__name__ == type(t).__name__ == "ParametrizedLinear"
    _steps(t, v, X_LIN)


@pytest.mark.parametrize("kind", ["linear", "conv"])
@pytest.mark.parametrize("train", [True, False])
def test_parametrizations_spectral_norm(kind: str, train: bool) -> None:
    make_t, make_v, x = ((_linear(torch), _linear(vt), X_LIN) if kind == "linear"
                         else (_conv(torch), _conv(vt), X_CONV))
    t, v = _pair(make_t, make_v)
    torch.nn.utils.parametrizations.spectral_norm(t, n_power_iterations=2)
    nn.utils.parametrizations.spectral_norm(v, n_power_iterations=2)
    _sync(t, v)
    _steps(t, v, x, train=train)


def test_parametrizations_orthogonal_square() -> None:
    for orth_map in ("matrix_exp", "cayley"):
        t, v = _pair(_linear(torch, 4, 4), _linear(vt, 4, 4))
        torch.nn.utils.parametrizations.orthogonal(t, orthogonal_map=orth_map)
        nn.utils.parametrizations.orthogonal(v, orthogonal_map=orth_map)
        _sync(t, v)
        w = v.weight.detach().numpy()
        np.testing.assert_allclose(w @ w.T, np.eye(4), atol=1e-12)
        np.testing.assert_allclose(w, t.weight.detach().numpy(), atol=1e-12)
        # a Taylor matrix exponential (Volta) vs a Pade one (PyTorch): ~1e-11 apart
        _steps(t, v, X_LIN, tol=(1e-7, 1e-9))
        w = v.weight.detach().numpy()
        np.testing.assert_allclose(w @ w.T, np.eye(4), atol=1e-10)


@pytest.mark.parametrize("kw", [{}, {"orthogonal_map": "householder"},
                                {"orthogonal_map": "householder", "use_trivialization": False},
                                {"orthogonal_map": "cayley"}])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
def test_parametrizations_orthogonal_train_as_pytorch(shape, kw) -> None:
    """Every map, with and without trivialization (PyTorch's default map: Householder for
    non-square weights), trains as PyTorch's from the same state (its base loaded)."""
    if shape[0] == shape[1] and not kw:
        kw = {"orthogonal_map": "matrix_exp"}  # the square default, tested above
    t, v = _pair(_linear(torch, shape[1], shape[0]), _linear(vt, shape[1], shape[0]))
    torch.nn.utils.parametrizations.orthogonal(t, **kw)
    nn.utils.parametrizations.orthogonal(v, **kw)
    assert v.parametrizations.weight[0].orthogonal_map == str(
        t.parametrizations.weight[0].orthogonal_map).split(".")[-1]
    _sync(t, v)
    tol = (1e-7, 1e-9) if kw.get("orthogonal_map") == "matrix_exp" else (1e-8, 1e-12)
    _steps(t, v, np.random.default_rng(0).standard_normal((6, shape[1])), tol=tol)


def test_orthogonal_refusals_as_pytorch() -> None:
    """An unknown map is refused; the matrix exponential without trivialization registers
    (a right_inverse that raises NotImplementedError is the identity there: the weight is
    the map of the old weight) and refuses assignment."""
    res = []
    for lib in (torch, vt):
        P = lib.nn.utils.parametrizations
        with pytest.raises(ValueError):
            P.orthogonal(lib.nn.Linear(3, 3), orthogonal_map="qr")
        m = lib.nn.Linear(3, 3).double()
        w = np.random.default_rng(3).standard_normal((3, 3)) * 0.3
        with lib.no_grad():
            m.weight.copy_(lib.tensor(w))
        P.orthogonal(m, orthogonal_map="matrix_exp", use_trivialization=False)
        res.append(m.weight.detach().numpy().copy())
        np.testing.assert_array_equal(m.parametrizations.weight.original.detach().numpy(), w)
        with pytest.raises(NotImplementedError):
            m.weight = lib.eye(3, dtype=lib.float64)
    np.testing.assert_allclose(res[1], res[0], atol=1e-12)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
def test_orthogonal_non_square_stays_orthogonal_with_correct_gradients(shape) -> None:
    # the Householder map (the default here) truncates X's diagonal: no finite differences
    lin = nn.Linear(shape[1], shape[0], dtype="float64")
    nn.utils.parametrizations.orthogonal(lin, orthogonal_map="matrix_exp")
    w = lin.weight.detach().numpy()
    small = min(shape)
    gram = w.T @ w if shape[0] > shape[1] else w @ w.T
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-12)
    plist = lin.parametrizations.weight
    x0 = plist.original.detach().clone()
    g = vt.tensor(np.random.default_rng(2).standard_normal(shape))

    def f(x):
        return (plist[0](x) * g).sum()

    assert vt.autograd.gradcheck(f, (x0.requires_grad_(),))


def test_hook_weight_norm_and_remove() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        t, v = _pair(_conv(torch), _conv(vt))
        torch.nn.utils.weight_norm(t)
        nn.utils.weight_norm(v)
        _sync(t, v)
        assert list(v.state_dict()) == ["bias", "weight_g", "weight_v"]
        _steps(t, v, X_CONV)
        torch.nn.utils.remove_weight_norm(t)
        nn.utils.remove_weight_norm(v)
    assert list(v.state_dict()) == list(t.state_dict())
    assert isinstance(v.weight, nn.Parameter)
    np.testing.assert_allclose(v.weight.detach().numpy(), t.weight.detach().numpy(),
                               rtol=1e-9)
    with pytest.raises(ValueError):
        nn.utils.remove_weight_norm(v)


def test_hook_spectral_norm_and_remove() -> None:
    t, v = _pair(_linear(torch), _linear(vt))
    torch.nn.utils.spectral_norm(t)
    nn.utils.spectral_norm(v)
    _sync(t, v)
    assert list(v.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    _steps(t, v, X_LIN)
    _steps(t, v, X_LIN, steps=1, train=False)
    torch.nn.utils.remove_spectral_norm(t)
    nn.utils.remove_spectral_norm(v)
    assert list(v.state_dict()) == list(t.state_dict())
    np.testing.assert_allclose(v.weight.detach().numpy(), t.weight.detach().numpy(),
                               rtol=1e-9)


class _Symmetric:
    """A parametrization defined the same way for both libraries."""

    @staticmethod
    def make(m):
        class Symmetric(m.nn.Module):
            def forward(self, x):
                return x.triu() + x.triu(1).mT

            def right_inverse(self, a):
                return a.triu()

        return Symmetric()


def test_register_parametrization_and_remove_like_torch() -> None:
    t, v = _pair(_linear(torch, 4, 4), _linear(vt, 4, 4))
    TP.register_parametrization(t, "weight", _Symmetric.make(torch))
    VP.register_parametrization(v, "weight", _Symmetric.make(vt))
    assert VP.is_parametrized(v) and VP.is_parametrized(v, "weight")
    assert not VP.is_parametrized(v, "bias")
    assert VP.type_before_parametrizations(v) is nn.Linear
    _sync(t, v)
    w = v.weight.detach().numpy()
    np.testing.assert_allclose(w, w.T)
    _steps(t, v, X_LIN)
    # assignment goes through right_inverse
    a = np.random.default_rng(3).standard_normal((4, 4))
    t.weight = torch.tensor(a)
    v.weight = vt.tensor(a)
    np.testing.assert_allclose(v.weight.detach().numpy(), t.weight.detach().numpy())
    with VP.cached():
        assert v.weight is v.weight
    assert v.weight is not v.weight
    TP.remove_parametrizations(t, "weight")
    VP.remove_parametrizations(v, "weight")
    assert type(v) is nn.Linear and not VP.is_parametrized(v)
    assert list(v.state_dict()) == list(t.state_dict())
    np.testing.assert_allclose(v.weight.detach().numpy(), t.weight.detach().numpy())


def test_two_parametrizations_chain_and_leave_unparametrized() -> None:
    class Double(nn.Module):
        def forward(self, x):
            return x * 2

    lin = nn.Linear(3, 3)
    original = lin.weight.detach().numpy().copy()
    VP.register_parametrization(lin, "weight", Double())
    VP.register_parametrization(lin, "weight", Double())
    np.testing.assert_allclose(lin.weight.detach().numpy(), original * 4, rtol=1e-6)
    assert list(lin.state_dict()) == ["bias", "parametrizations.weight.original"]
    VP.remove_parametrizations(lin, "weight", leave_parametrized=False)
    np.testing.assert_allclose(lin.weight.detach().numpy(), original)


def test_parametrize_errors_like_torch() -> None:
    for m, P in ((torch, TP), (vt, VP)):
        lin = m.nn.Linear(2, 2)
        with pytest.raises(ValueError):
            P.register_parametrization(lin, "nope", _Symmetric.make(m))
        with pytest.raises(ValueError):
            P.remove_parametrizations(lin, "weight")
    lin = nn.Linear(2, 3)
    nn.utils.parametrizations.weight_norm(lin)
    with pytest.raises(ValueError, match="sequence of tensors"):
        VP.remove_parametrizations(lin, "weight", leave_parametrized=False)


def test_parametrized_module_deepcopies_but_pickles_only_its_state_dict() -> None:
    lin = nn.Linear(3, 2)
    nn.utils.parametrizations.weight_norm(lin)
    clone = copy.deepcopy(lin)
    x = vt.randn(4, 3)
    np.testing.assert_allclose(clone(x).detach().numpy(), lin(x).detach().numpy())
    assert clone.parametrizations.weight.original0 is not lin.parametrizations.weight.original0
    with pytest.raises(RuntimeError, match="state_dict"):
        pickle.dumps(lin)
