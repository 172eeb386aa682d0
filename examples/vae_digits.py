"""A variational autoencoder (VAE) on Volta's bundled 8x8 handwritten digits.

An MLP encoder maps each image to the mean and log-variance of an 8-dimensional Gaussian
latent, the reparameterisation trick draws a latent code, and an MLP decoder gives
Bernoulli pixel probabilities. Training maximises the ELBO (binary cross-entropy
reconstruction + KL divergence to N(0, I)), with the KL term warmed up over the first
epochs so the latent code is not switched off early. Saves a grid of samples decoded from
random latents and a grid of test images above their reconstructions.
Criterion, on the test set: the negative ELBO is below the cross-entropy of the best
image-independent model (the per-pixel mean), and reconstructions from the posterior
mean have at most 45% of that model's squared error (smoke: 85%), i.e. the 8 latent
numbers carry real information about each digit.

Usage: python examples/vae_digits.py [--device cpu|cuda|wgpu|auto] [--smoke]
"""

from __future__ import annotations

import _common

import volta_core as vt
from volta_core import nn, optim
from volta_core.data import DataLoader, TensorDataset
from volta_core.data.datasets import load_digits

LATENT = 8


class VAE(nn.Module):
    def __init__(self, hidden: int = 256) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Flatten(), nn.Linear(64, hidden), nn.ReLU(),
                                     nn.Linear(hidden, hidden), nn.ReLU())
        self.to_mu = nn.Linear(hidden, LATENT)
        self.to_logvar = nn.Linear(hidden, LATENT)
        self.decoder = nn.Sequential(nn.Linear(LATENT, hidden), nn.ReLU(),
                                     nn.Linear(hidden, hidden), nn.ReLU(),
                                     nn.Linear(hidden, 64), nn.Unflatten(1, (1, 8, 8)))

    def forward(self, x: vt.Tensor) -> tuple[vt.Tensor, vt.Tensor, vt.Tensor]:
        """Pixel logits of the reconstruction, and the posterior's mean and log-variance."""
        h = self.encoder(x)
        mu, logvar = self.to_mu(h), self.to_logvar(h)
        z = mu + (0.5 * logvar).exp() * vt.randn_like(mu)     # reparameterisation trick
        return self.decoder(z), mu, logvar


def negative_elbo(logits: vt.Tensor, x: vt.Tensor, mu: vt.Tensor,
                  logvar: vt.Tensor) -> tuple[vt.Tensor, vt.Tensor]:
    """(-ELBO, reconstruction term), both in nats per image."""
    n = x.shape[0]
    recon = nn.functional.binary_cross_entropy_with_logits(logits, x, reduction="sum") / n
    kl = -0.5 * (1 + logvar - mu ** 2 - logvar.exp()).sum() / n
    return recon + kl, recon


def baseline_bce(train: vt.Tensor, test: vt.Tensor) -> float:
    """Cross-entropy (nats/image) of the test set under the per-pixel training mean."""
    p = train.mean(dim=0, keepdim=True).clamp(1e-4, 1 - 1e-4).expand(*test.shape)
    return nn.functional.binary_cross_entropy(p, test, reduction="sum").item() / test.shape[0]


def mse(a: vt.Tensor, b: vt.Tensor) -> float:
    return ((a - b) ** 2).mean().item()


def main(argv: list[str] | None = None) -> None:
    parser = _common.make_parser(__doc__, "runs/vae")
    parser.add_argument("--epochs", type=int, default=None, help="default 30 (smoke: 8)")
    args = parser.parse_args(argv)
    device, out = _common.setup(args)
    epochs = args.epochs or (8 if args.smoke else 30)

    train_set, test_set = load_digits()
    loader = DataLoader(TensorDataset(train_set.data), batch_size=32, shuffle=True,
                        device=device)
    test_x = test_set.data.to(device)
    model = VAE().to(device)
    optimizer = optim.Adam(model.parameters(), lr=3e-3)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)

    with _common.Timer() as timer:
        for epoch in range(1, epochs + 1):
            total = 0.0
            beta = min(1.0, epoch / max(1, epochs // 4))      # KL warm-up
            for (x,) in loader:
                optimizer.zero_grad()
                logits, mu, logvar = model(x)
                loss, recon = negative_elbo(logits, x, mu, logvar)
                (recon + beta * (loss - recon)).backward()
                optimizer.step()
                total += loss.item() * x.shape[0]
            scheduler.step()
            if epoch % max(1, epochs // 8) == 0 or epoch == epochs:
                print(f"epoch {epoch:3d}  train -ELBO {total / len(train_set):.2f} nats/image")
    print(f"trained {epochs} epochs in {timer.seconds:.1f} s")

    model.eval()
    with vt.no_grad():
        logits, mu, logvar = model(test_x)
        test_loss, test_recon = negative_elbo(logits, test_x, mu, logvar)
        recon = model.decoder(model.to_mu(model.encoder(test_x[:32]))).sigmoid()
        samples = model.decoder(vt.randn(64, LATENT, device=device)).sigmoid()
        recon_all = model.decoder(mu).sigmoid()
    mean_image = train_set.data.to(device).mean(dim=0, keepdim=True)
    base, base_mse = baseline_bce(train_set.data.to(device), test_x), mse(mean_image, test_x)
    elbo, err = test_loss.item(), mse(recon_all, test_x)
    print(f"test: -ELBO {elbo:.2f} nats/image (reconstruction {test_recon.item():.2f}, "
          f"KL {elbo - test_recon.item():.2f}); per-pixel-mean model {base:.2f}")
    print(f"test: reconstruction MSE {err:.4f}; mean-image MSE {base_mse:.4f}")
    if not args.smoke:
        _common.image_grid(samples.numpy(), out / "vae_samples.png",
                           "VAE: digits decoded from random latents")
        pairs = vt.stack([test_x[:32].reshape(4, 8, 8, 8), recon.reshape(4, 8, 8, 8)], dim=1)
        _common.image_grid(pairs.reshape(64, 8, 8).numpy(), out / "vae_reconstructions.png",
                           "VAE: test digits (odd rows) and reconstructions (even rows)")
    factor = 0.85 if args.smoke else 0.45
    _common.check(elbo < base and err < factor * base_mse,
                  f"test -ELBO {elbo:.2f} < baseline {base:.2f} nats/image and reconstruction "
                  f"MSE {err:.4f} < {factor} x mean-image MSE {base_mse:.4f}")


if __name__ == "__main__":
    main()
