"""A PyTorch-idiom program (word-level LSTM language model over packed variable-length
batches, tied embeddings, gradient clipping, a cyclic schedule) run unchanged on Volta
and on PyTorch from the same weights: the losses match step by step."""

from __future__ import annotations

import numpy as np
import torch

import volta_core as vt


def _program(m, state: dict | None, batches: list) -> tuple[list[float], dict]:
    nn = m.nn
    rnn_utils = m.nn.utils.rnn

    class LM(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = nn.Embedding(20, 8, padding_idx=0)
            self.lstm = nn.LSTM(8, 8, num_layers=2, batch_first=True)
            self.head = nn.Linear(8, 20)
            self.head.weight = self.emb.weight  # tied

        def forward(self, tokens, lengths):
            packed = rnn_utils.pack_padded_sequence(self.emb(tokens), lengths,
                                                    batch_first=True, enforce_sorted=False)
            self.lstm.flatten_parameters()
            out, _ = self.lstm(packed)
            out, _ = rnn_utils.pad_packed_sequence(out, batch_first=True,
                                                   total_length=tokens.shape[1])
            return self.head(out)

    model = LM().double()
    if state is not None:
        model.load_state_dict({k: m.tensor(v) for k, v in state.items()})
    opt = m.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    sched = m.optim.lr_scheduler.CyclicLR(opt, 0.1, 0.5, step_size_up=2)
    losses = []
    for tokens, targets, lengths in batches:
        opt.zero_grad()
        logits = model(m.tensor(tokens), lengths)
        loss = nn.functional.cross_entropy(logits.reshape(-1, 20), m.tensor(targets).reshape(-1),
                                           ignore_index=0)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(float(loss.item()))
    return losses, {k: v.detach().numpy() for k, v in model.state_dict().items()}


def test_packed_lstm_language_model_trains_like_torch() -> None:
    rng = np.random.default_rng(0)
    batches = []
    for _ in range(4):
        lengths = [int(n) for n in rng.integers(2, 7, size=5)]
        tokens = np.zeros((5, 6), dtype=np.int64)
        targets = np.zeros((5, 6), dtype=np.int64)
        for b, n in enumerate(lengths):
            seq = rng.integers(1, 20, size=n + 1)
            tokens[b, :n], targets[b, :n] = seq[:-1], seq[1:]
        batches.append((tokens, targets, lengths))
    torch.manual_seed(0)
    t_losses, t_state = _program(torch, None, [])
    start = {k: v.copy() for k, v in t_state.items()}
    t_losses, t_final = _program(torch, start, batches)
    v_losses, v_final = _program(vt, start, batches)
    np.testing.assert_allclose(v_losses, t_losses, rtol=1e-9)
    for k in t_final:
        np.testing.assert_allclose(v_final[k], t_final[k], rtol=1e-8, atol=1e-10, err_msg=k)
