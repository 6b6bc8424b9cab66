"""A small model's forward/backward pass and a few optimisation steps."""

import torch
from torch import nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def make_model() -> nn.Module:
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)).to(DEVICE)


def test_forward_shape(generator):
    model = make_model()
    x = torch.randn(32, 8, generator=generator).to(DEVICE)
    assert model(x).shape == (32, 1)


def test_backward_fills_every_gradient(generator):
    model = make_model()
    x = torch.randn(32, 8, generator=generator).to(DEVICE)
    model(x).pow(2).mean().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters())


def test_training_reduces_loss(generator):
    torch.manual_seed(0)
    model = make_model()
    x = torch.randn(64, 8, generator=generator).to(DEVICE)
    y = x.sum(dim=1, keepdim=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for _ in range(50):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
