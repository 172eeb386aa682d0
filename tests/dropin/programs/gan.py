"""A GAN in PyTorch's idiom: generator and discriminator MLPs, BCEWithLogitsLoss, Adam
with betas=(0.5, 0.999), detach() for the discriminator step."""

import torch
import torch.nn as nn
import torch.optim as optim


def main():
    torch.manual_seed(0)
    netG = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    netD = nn.Sequential(nn.Linear(1, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    criterion = nn.BCEWithLogitsLoss()
    optimizerD = optim.Adam(netD.parameters(), lr=5e-3, betas=(0.5, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=5e-3, betas=(0.5, 0.999))
    real_label, fake_label = 1.0, 0.0
    batch = 64
    for _it in range(300):
        real = 3.0 + 0.5 * torch.randn(batch, 1)
        # (1) update D: maximize log(D(x)) + log(1 - D(G(z)))
        netD.zero_grad()
        label = torch.full((batch, 1), real_label)
        errD_real = criterion(netD(real), label)
        errD_real.backward()
        noise = torch.randn(batch, 4)
        fake = netG(noise)
        label.fill_(fake_label)
        errD_fake = criterion(netD(fake.detach()), label)
        errD_fake.backward()
        optimizerD.step()
        # (2) update G: maximize log(D(G(z)))
        netG.zero_grad()
        label.fill_(real_label)
        errG = criterion(netD(fake), label)
        errG.backward()
        optimizerG.step()
    with torch.no_grad():
        samples = netG(torch.randn(2000, 4))
    mean, std = samples.mean().item(), samples.std().item()
    assert abs(mean - 3.0) < 0.75, mean
    assert 0.05 < std < 2.0, std
    return {"mean": mean, "std": std, "errD": (errD_real + errD_fake).item(),
            "errG": errG.item()}
