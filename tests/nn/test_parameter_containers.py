"""``ParameterList``, ``ParameterDict``, ``DataParallel``, and deepcopy/pickle of models
keeping ``nn.Parameter`` identity and weight ties, compared with PyTorch."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import torch

import volta_core as vt
from volta_core import nn


def _lm_class(m):
    class LM(m.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = m.nn.Embedding(7, 4)
            self.head = m.nn.Linear(4, 7, bias=False)
            self.head.weight = self.emb.weight

        def forward(self, idx):
            return self.head(self.emb(idx))

    LM.__qualname__ = LM.__name__ = f"LM_{m.__name__}"
    return LM


LM_torch, LM_volta_core = _lm_class(torch), _lm_class(vt)  # module level: picklable


def _tied(m):
    return LM_torch() if m is torch else LM_volta_core()


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_copies_keep_parameter_identity_and_ties(how: str) -> None:
    for m in (torch, vt):
        model = _tied(m)
        clone = (copy.deepcopy(model) if how == "deepcopy"
                 else pickle.loads(pickle.dumps(model)))
        assert clone.head.weight is clone.emb.weight
        assert clone.emb.weight is not model.emb.weight
        assert isinstance(clone.emb.weight, m.nn.Parameter)
        assert clone.emb.weight.requires_grad
        clone.head.weight = clone.emb.weight  # re-tying works (raised before)
        assert len(list(clone.parameters())) == 1
    v = copy.deepcopy(_tied(vt))
    v(vt.tensor([1, 2])).sum().backward()
    assert v.emb.weight.grad is not None


def test_parameter_list_matches_torch() -> None:
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((2, 3)), rng.standard_normal(4)]
    t = torch.nn.ParameterList([torch.tensor(a) for a in arrays])
    v = nn.ParameterList([vt.tensor(a) for a in arrays])
    t.append(torch.nn.Parameter(torch.ones(1)))
    v.append(nn.Parameter(vt.ones(1)))
    t += [torch.zeros(2)]
    v += [vt.zeros(2)]
    assert len(v) == len(t) == 4
    assert [n for n, _ in v.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert list(v.state_dict()) == list(t.state_dict())
    for a, b in zip(v, t):
        assert isinstance(a, nn.Parameter) and a.requires_grad
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert isinstance(v[-1], nn.Parameter) and len(v[1:3]) == 2
    v[0] = vt.ones(2, 3)
    assert isinstance(v[0], nn.Parameter)
    with pytest.raises(IndexError):
        v[9]
    with pytest.raises(TypeError):
        v.extend(vt.ones(2))


def test_parameter_dict_matches_torch() -> None:
    t = torch.nn.ParameterDict({"b": torch.ones(2), "a": torch.zeros(3)})
    v = nn.ParameterDict({"b": vt.ones(2), "a": vt.zeros(3)})
    assert list(v.keys()) == list(t.keys())
    t["c"] = torch.nn.Parameter(torch.ones(1))
    v["c"] = nn.Parameter(vt.ones(1))
    assert list(v.state_dict()) == list(t.state_dict())
    assert [n for n, _ in v.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert "c" in v and "z" not in v and len(v) == 3
    assert isinstance(v["a"], nn.Parameter)
    popped = v.pop("c")
    assert isinstance(popped, nn.Parameter) and "c" not in v and len(v) == 2
    v.update([("d", vt.ones(4))])
    assert list(v) == ["a", "b", "d"]
    with pytest.raises(AttributeError):
        v["missing"]


def test_parameter_containers_train_with_an_optimizer() -> None:
    class Model(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ws = nn.ParameterList([vt.ones(3), vt.ones(3)])
            self.bs = nn.ParameterDict({"b": vt.zeros(3)})

        def forward(self, x):
            return (x * self.ws[0] * self.ws[1] + self.bs["b"]).sum()

    model = Model()
    opt = vt.optim.SGD(model.parameters(), lr=0.1)
    model(vt.tensor([1.0, 2.0, 3.0])).backward()
    opt.step()
    np.testing.assert_allclose(model.ws[0].detach().numpy(), [0.9, 0.8, 0.7], rtol=1e-6)
    np.testing.assert_allclose(model.bs["b"].detach().numpy(), [-0.1] * 3, rtol=1e-6)


def test_data_parallel_runs_the_module() -> None:
    t_lin = torch.nn.Linear(3, 2).double()
    v_lin = nn.Linear(3, 2, dtype="float64")
    v_lin.load_state_dict({k: vt.tensor(a.detach().numpy()) for k, a in
                           t_lin.state_dict().items()})
    t_dp, v_dp = torch.nn.DataParallel(t_lin), nn.DataParallel(v_lin)
    assert v_dp.module is v_lin
    assert list(v_dp.state_dict()) == list(t_dp.state_dict())
    x = np.random.default_rng(1).standard_normal((4, 3))
    # .cpu(): with CUDA, PyTorch's DataParallel answers on its first GPU
    np.testing.assert_allclose(v_dp(vt.tensor(x)).detach().numpy(),
                               t_dp(torch.tensor(x)).detach().cpu().numpy(), rtol=1e-12)
    with pytest.warns(UserWarning, match="DistributedDataParallel"):
        nn.DataParallel(v_lin, device_ids=[0, 1])
    assert nn.parallel.DataParallel is nn.DataParallel
