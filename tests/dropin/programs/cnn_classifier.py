"""A CNN classifier in PyTorch's idiom: DataLoader, Adadelta, StepLR, accelerator device,
f-string formatting of losses, evaluation under no_grad."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset, random_split


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1, padding=1)
        self.dropout = nn.Dropout(0.1)
        self.fc1 = nn.Linear(16 * 4 * 4, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = self.dropout(F.relu(self.fc1(x)))
        return F.log_softmax(self.fc2(x), dim=1)


def make_data(n, generator):
    # four classes: a bright 4x4 quadrant on noise
    labels = torch.randint(0, 4, (n,), generator=generator)
    images = 0.3 * torch.randn(n, 1, 8, 8, generator=generator)
    for k in range(4):
        r, c = divmod(k, 2)
        mask = (labels == k).float().view(n, 1, 1, 1)
        patch = torch.zeros(1, 1, 8, 8)
        patch[:, :, 4 * r:4 * r + 4, 4 * c:4 * c + 4] = 1.0
        images = images + mask * patch
    return TensorDataset(images, labels)


def main():
    torch.manual_seed(0)
    use_accel = torch.accelerator.is_available() and False  # the CPU keeps tests quick
    device = torch.accelerator.current_accelerator() if use_accel else torch.device("cpu")
    g = torch.Generator().manual_seed(1)
    train_set, test_set = random_split(make_data(384, g), [0.75, 0.25], generator=g)
    train_loader = DataLoader(train_set, batch_size=32, shuffle=True, generator=g)
    test_loader = DataLoader(test_set, batch_size=64)
    model = Net().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    log = []
    for epoch in range(1, 4):
        model.train()
        for batch_idx, (data, target) in enumerate(train_loader):
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            output = model(data)
            loss = F.nll_loss(output, target)
            loss.backward()
            optimizer.step()
            if batch_idx % 4 == 0:
                log.append(f"Train Epoch: {epoch} [{batch_idx * len(data)}/"
                           f"{len(train_loader.dataset)}]\tLoss: {loss.item():.6f} {loss:.3f}")
        scheduler.step()
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for data, target in test_loader:
            output = model(data.to(device))
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    accuracy = correct / len(test_loader.dataset)
    assert abs(scheduler.get_last_lr()[0] - 0.7 ** 3) < 1e-9
    assert accuracy > 0.9, accuracy
    assert log and "Loss:" in log[-1]
    return {"accuracy": accuracy, "test_loss": test_loss / len(test_loader.dataset)}
