"""A VAE in PyTorch's idiom with torch.distributions: Normal posterior (rsample), KL
against the prior with kl_divergence, Bernoulli likelihood from logits."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Bernoulli, Independent, Normal, kl_divergence
from torch.utils.data import DataLoader, TensorDataset


class VAE(nn.Module):
    def __init__(self, d_in=16, d_hidden=32, d_latent=2):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d_in, d_hidden), nn.ReLU())
        self.mu = nn.Linear(d_hidden, d_latent)
        self.log_sigma = nn.Linear(d_hidden, d_latent)
        self.dec = nn.Sequential(nn.Linear(d_latent, d_hidden), nn.ReLU(),
                                 nn.Linear(d_hidden, d_in))

    def forward(self, x):
        h = self.enc(x)
        q = Independent(Normal(self.mu(h), self.log_sigma(h).exp()), 1)
        z = q.rsample()
        p_x = Independent(Bernoulli(logits=self.dec(z)), 1)
        prior = Independent(Normal(torch.zeros_like(z), torch.ones_like(z)), 1)
        return p_x.log_prob(x), kl_divergence(q, prior)


def main():
    torch.manual_seed(0)
    # two prototype binary patterns with bit flips
    protos = (torch.rand(2, 16) > 0.5).float()
    which = torch.randint(0, 2, (256,))
    flips = (torch.rand(256, 16) < 0.05).float()
    x = (protos[which] - flips).abs()
    loader = DataLoader(TensorDataset(x), batch_size=32, shuffle=True)
    model = VAE()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    history = []
    for _epoch in range(15):
        total = 0.0
        for (batch,) in loader:
            log_lik, kl = model(batch)
            loss = -(log_lik - kl).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(batch)
        history.append(total / len(x))
    recon = F.binary_cross_entropy_with_logits(model.dec(model.mu(model.enc(x))), x)
    assert history[-1] < 0.6 * history[0], history
    assert recon.item() < 0.4, recon.item()
    return {"first_neg_elbo": history[0], "last_neg_elbo": history[-1], "recon": recon.item()}
