"""A character-level language model (LSTM or causal Transformer) on a short story.

Trains on ``examples/data/lighthouse.txt`` (7.6 KB of original prose written for Volta
and dedicated to the public domain, see ``examples/data/README.md``), holding out the
last 10% for validation, then samples new text one character at a time.
``--model lstm`` uses ``nn.Embedding`` + ``nn.LSTM``; ``--model transformer`` uses a
pre-norm ``nn.TransformerEncoder`` with a causal mask and learned positions.
Saves the loss curves as a PNG.
Criterion: validation loss (nats per character) below the text's unigram entropy by at
least 0.7 nats (smoke: 0.2) -- i.e. the model uses context, not just letter counts.

Usage: python examples/char_lm.py [--model lstm|transformer] [--device cpu|cuda|wgpu|auto]
       [--smoke] [--steps N]
"""

from __future__ import annotations

import math
import random
from collections import Counter
from pathlib import Path

import _common

import volta_core as vt
from volta_core import nn, optim

TEXT = Path(__file__).parent / "data" / "lighthouse.txt"


class LSTMLM(nn.Module):
    def __init__(self, vocab: int, hidden: int = 128) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, 32)
        self.lstm = nn.LSTM(32, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, idx: vt.Tensor, state: tuple | None = None) -> tuple[vt.Tensor, tuple]:
        out, state = self.lstm(self.embed(idx), state)
        return self.head(out), state


class TransformerLM(nn.Module):
    def __init__(self, vocab: int, context: int, d_model: int = 64, layers: int = 2) -> None:
        super().__init__()
        self.context = context
        self.embed = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(context, d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead=4, dim_feedforward=4 * d_model,
                                           dropout=0.1, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(d_model))
        self.head = nn.Linear(d_model, vocab)

    def forward(self, idx: vt.Tensor, state: tuple | None = None) -> tuple[vt.Tensor, None]:
        t = idx.shape[1]
        pos = vt.arange(t, device=idx.device)
        mask = nn.Transformer.generate_square_subsequent_mask(t, device=idx.device)
        h = self.encoder(self.embed(idx) + self.pos(pos), mask=mask, is_causal=True)
        return self.head(h), None


def batches(data: vt.Tensor, batch: int, seq: int) -> tuple[vt.Tensor, vt.Tensor]:
    """``batch`` random windows of ``seq`` characters and the same windows shifted by one."""
    starts = vt.randint(0, data.shape[0] - seq - 1, (batch, 1), device=data.device)
    idx = starts + vt.arange(seq, device=data.device)
    return data[idx], data[idx + 1]


def evaluate(model: nn.Module, data: vt.Tensor, seq: int) -> float:
    """Mean cross-entropy (nats/char) over consecutive windows of ``data``."""
    n = (data.shape[0] - 1) // seq
    x = data[:n * seq].reshape(n, seq)
    y = data[1:n * seq + 1].reshape(n, seq)
    model.eval()
    with vt.no_grad():
        logits, _ = model(x)
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
    model.train()
    return loss.item()


def generate(model: nn.Module, prompt: str, stoi: dict[str, int], itos: list[str], n: int,
             device: vt.Device, context: int, temperature: float = 0.7, seed: int = 0) -> str:
    """Sample ``n`` characters after ``prompt`` (sampling on the host, seeded)."""
    rng = random.Random(seed)
    model.eval()
    out = list(prompt)
    with vt.no_grad():
        idx = vt.tensor([[stoi[c] for c in prompt]], dtype=vt.int64, device=device)
        logits, state = model(idx)
        for _ in range(n):
            probs = (logits[0, -1] / temperature).softmax(dim=0).tolist()
            out.append(itos[rng.choices(range(len(itos)), weights=probs)[0]])
            if state is not None:       # recurrent: feed one character, carry the state
                idx = vt.tensor([[stoi[out[-1]]]], dtype=vt.int64, device=device)
                logits, state = model(idx, state)
            else:                       # transformer: rerun the last `context` characters
                window = [stoi[c] for c in out[-context:]]
                logits, _ = model(vt.tensor([window], dtype=vt.int64, device=device))
    model.train()
    return "".join(out)


def plot_losses(history: dict[str, list], unigram: float, name: str, path: Path) -> None:
    plt = _common.pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(history["step"], history["train"], label="train (running mean)")
    ax.plot(history["step"], history["val"], marker="o", label="validation")
    ax.axhline(unigram, color="gray", ls="--", label=f"unigram entropy {unigram:.2f}")
    ax.set(title=f"character-level {name} on lighthouse.txt", xlabel="step",
           ylabel="cross-entropy (nats/char)")
    ax.legend()
    _common.save_figure(fig, path)


def main(argv: list[str] | None = None) -> None:
    parser = _common.make_parser(__doc__, "runs/char_lm")
    parser.add_argument("--model", choices=["lstm", "transformer"], default="lstm")
    parser.add_argument("--steps", type=int, default=None,
                        help="default 200 for lstm, 300 for transformer (smoke: 25)")
    parser.add_argument("--lr", type=float, default=None,
                        help="peak learning rate (default 1e-2)")
    parser.add_argument("--seq", type=int, default=None,
                        help="characters per training window (default 64, smoke: 32)")
    args = parser.parse_args(argv)
    device, out = _common.setup(args)
    steps = args.steps or (25 if args.smoke else 200 if args.model == "lstm" else 300)
    args.seq = args.seq or (32 if args.smoke else 64)

    text = TEXT.read_text(encoding="utf-8")
    itos = sorted(set(text))
    stoi = {c: i for i, c in enumerate(itos)}
    counts = Counter(text)
    unigram = -sum(c / len(text) * math.log(c / len(text)) for c in counts.values())
    data = vt.tensor([stoi[c] for c in text], dtype=vt.int64, device=device)
    cut = int(0.9 * len(text))
    train, val = data[:cut], data[cut:]
    print(f"{len(text)} characters, vocabulary {len(itos)}, unigram entropy "
          f"{unigram:.3f} nats/char; {cut} for training, {len(text) - cut} for validation")

    if args.model == "lstm":
        model: nn.Module = LSTMLM(len(itos)).to(device)
    else:
        model = TransformerLM(len(itos), args.seq).to(device)
    print(f"{args.model}: {sum(p.numel() for p in model.parameters()):,} parameters")
    optimizer = optim.AdamW(model.parameters(), lr=args.lr or 1e-2, weight_decay=0.01)
    warmup = max(1, steps // 20)
    scheduler = optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / warmup)
                                            * 0.5 * (1 + math.cos(math.pi * s / steps)))
    history: dict[str, list] = {"step": [], "train": [], "val": []}
    running = unigram
    with _common.Timer() as timer:
        for step in range(1, steps + 1):
            x, y = batches(train, 32, args.seq)
            logits, _ = model(x)
            loss = nn.functional.cross_entropy(logits.reshape(-1, len(itos)), y.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            running = 0.9 * running + 0.1 * loss.item()
            if step % max(1, steps // 5) == 0 or step == steps:
                val_loss = evaluate(model, val, args.seq)
                history["step"].append(step)
                history["train"].append(running)
                history["val"].append(val_loss)
                print(f"step {step:4d}  train {running:.3f}  validation {val_loss:.3f}")
    print(f"trained {steps} steps in {timer.seconds:.1f} s "
          f"({steps * 32 * args.seq / timer.seconds:,.0f} characters/s)")

    sample = generate(model, "The keeper ", stoi, itos, 40 if args.smoke else 300, device,
                      args.seq, seed=args.seed)
    print("--- sample (temperature 0.7) ---")
    print(sample)
    print("--------------------------------")
    val_loss = history["val"][-1]
    if not args.smoke:
        plot_losses(history, unigram, args.model, out / f"char_lm_{args.model}.png")
    margin = 0.2 if args.smoke else 0.7
    _common.check(val_loss < unigram - margin,
                  f"validation loss {val_loss:.3f} < unigram entropy {unigram:.3f} - {margin}")


if __name__ == "__main__":
    main()
