"""The models the ONNX tests export: every examples/ model and a GPT-style decoder."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import volta_core as vt
from volta_core import nn
from volta_core.nn import functional as F

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))


class CausalSelfAttention(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x: vt.Tensor) -> vt.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).contiguous().view(b, t, c))


class Block(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, heads)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d),
                                 nn.Dropout(0.1))

    def forward(self, x: vt.Tensor) -> vt.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    """A small GPT-style decoder: token + learned positions, pre-norm causal blocks."""

    def __init__(self, vocab: int = 40, context: int = 32, d: int = 32, heads: int = 4,
                 layers: int = 2) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(context, d)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx: vt.Tensor) -> vt.Tensor:
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(vt.arange(t, device=idx.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


class VAEMean(nn.Module):
    """The VAE's deterministic path (reconstruction from the posterior mean)."""

    def __init__(self, vae: nn.Module) -> None:
        super().__init__()
        self.vae = vae

    def forward(self, x: vt.Tensor) -> tuple[vt.Tensor, vt.Tensor, vt.Tensor]:
        h = self.vae.encoder(x)
        mu, logvar = self.vae.to_mu(h), self.vae.to_logvar(h)
        return self.vae.decoder(mu), mu, logvar


class Case(NamedTuple):
    build: Callable[[], nn.Module]
    inputs: Callable[..., tuple]  # sizes -> example inputs
    sizes: tuple[tuple, tuple]  # two input sizes (dynamic axes)
    dynamic: dict[str, Any]
    names: list[str]


def _ints(high: int) -> Callable[..., tuple]:
    return lambda b, t: (vt.randint(0, high, (b, t)),)


def _cases() -> dict[str, Case]:
    import char_lm
    import dcgan_digits
    import lenet_cnn
    import lstm_timeseries
    import super_resolution
    import train_digits
    import vae_digits

    batch = {"x": {0: "batch"}}
    seq = {"x": {0: "batch", 1: "seq"}}
    return {
        "cnn": Case(train_digits.make_model, lambda b: (vt.randn(b, 1, 8, 8),), ((2,), (5,)),
                    batch, ["x"]),
        "lenet": Case(lenet_cnn.LeNet, lambda b: (vt.randn(b, 1, 8, 8),), ((2,), (5,)),
                      batch, ["x"]),
        "lstm": Case(lstm_timeseries.Forecaster, lambda b, t: (vt.randn(b, t, 1),),
                     ((2, 12), (5, 20)), seq, ["x"]),
        "char_lstm": Case(lambda: char_lm.LSTMLM(30, 32), _ints(30), ((2, 10), (4, 16)), seq,
                          ["x"]),
        "char_transformer": Case(lambda: char_lm.TransformerLM(30, 24, 32, 2), _ints(30),
                                 ((2, 10), (4, 16)), seq, ["x"]),
        "vae": Case(lambda: VAEMean(vae_digits.VAE(64)), lambda b: (vt.rand(b, 1, 8, 8),),
                    ((2,), (5,)), batch, ["x"]),
        "dcgan_generator": Case(dcgan_digits.generator, lambda b: (vt.randn(b, 16),),
                                ((2,), (5,)), batch, ["x"]),
        "espcn": Case(super_resolution.ESPCN, lambda b: (vt.rand(b, 1, 4, 4),), ((2,), (5,)),
                      batch, ["x"]),
        "gpt": Case(GPT, _ints(40), ((2, 9), (3, 17)), seq, ["x"]),
    }


CASES = _cases()


def make(name: str, device: str = "cpu") -> tuple[nn.Module, Case]:
    vt.manual_seed(0)
    case = CASES[name]
    model = case.build().to(device)
    if name == "dcgan_generator":  # non-trivial batch-norm statistics
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.data = vt.randn(m.num_features, device=device) * 0.1
                m.running_var.data = vt.rand(m.num_features, device=device) + 0.5
    return model.eval(), case
