"""A word-level RNN language model in PyTorch's idiom over variable-length sentences:
pad_sequence, pack_padded_sequence(enforce_sorted=False), an LSTM over the packed batch,
pad_packed_sequence, CrossEntropyLoss(ignore_index=PAD)."""

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

PAD = 0


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp=16, nhid=32):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp, padding_idx=PAD)
        self.rnn = nn.LSTM(ninp, nhid, batch_first=True)
        self.decoder = nn.Linear(nhid, ntoken)

    def forward(self, tokens, lengths):
        emb = self.encoder(tokens)
        packed = pack_padded_sequence(emb, lengths, batch_first=True, enforce_sorted=False)
        self.rnn.flatten_parameters()
        out, _ = self.rnn(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=tokens.size(1))
        return self.decoder(out)


def main():
    torch.manual_seed(0)
    vocab = 8
    # sentences count upward modulo 7 (tokens 1..7), of lengths 3..9
    sentences = []
    for i in range(64):
        start = int(torch.randint(1, 8, (1,)))
        n = 3 + i % 7
        sentences.append(torch.tensor([(start + k - 1) % 7 + 1 for k in range(n)]))
    model = RNNModel(vocab)
    criterion = nn.CrossEntropyLoss(ignore_index=PAD)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _epoch in range(40):
        batch = [sentences[j] for j in torch.randperm(len(sentences))[:16].tolist()]
        lengths = torch.tensor([len(s) - 1 for s in batch])
        inputs = pad_sequence([s[:-1] for s in batch], batch_first=True, padding_value=PAD)
        targets = pad_sequence([s[1:] for s in batch], batch_first=True, padding_value=PAD)
        logits = model(inputs, lengths)
        loss = criterion(logits.reshape(-1, vocab), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.3 * losses[0], losses
    return {"first_loss": losses[0], "last_loss": losses[-1]}
