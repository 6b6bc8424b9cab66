"""`self.device` of a torch module the repository never sets (tools/classify/module_device.py): the edges the corpus
file tests/round12_module_device does not show, because they need a framework that is not installed here."""

from __future__ import annotations

from pathlib import Path

from tools.classify.runner import run

LIGHTNING_MODEL = '''import torch
from lightning.pytorch import LightningModule


class Base(LightningModule):
    def __init__(self, **hparams):
        super().__init__()
        for key, value in hparams.items():
            if not hasattr(self, key):
                setattr(self, key, value)

    def positions(self):
        return torch.tensor([0, 1], device=self.device)


def test_positions():
    Base(device="cuda").positions()
'''


def _labels(root: Path) -> dict[str, str]:
    result = run(root, paths=["test_x.py"], cache_dir=None)
    return {k: v.label for k, v in result.files["test_x.py"].tests.items()}


def test_read_only_device_property_of_a_framework_base(tmp_path: Path) -> None:
    """pytorch-forecasting's BaseModel(LightningModule) sets hyperparameters with `setattr`, but Lightning's
    `device` is a read-only property: `torch.tensor(..., device=self.device)` follows the module's own device."""
    (tmp_path / "test_x.py").write_text(LIGHTNING_MODEL)
    assert _labels(tmp_path) == {"test_positions": "cpu"}


def test_plain_module_with_setattr_is_followed(tmp_path: Path) -> None:
    """The same class over torch.nn.Module: `setattr(self, "device", "cuda")` sets it (round 13: a `setattr` whose
    name the analysis knows is the assignment; before, the device stayed unknown)."""
    (tmp_path / "test_x.py").write_text(LIGHTNING_MODEL.replace("from lightning.pytorch import LightningModule",
                                                                "from torch.nn import Module as LightningModule"))
    assert _labels(tmp_path) == {"test_positions": "gpu"}


def test_dunder_setattr_with_a_computed_name_sets_the_device(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text('''import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, device):
        super().__init__()
        object.__setattr__(self, "dev" + "ice", device)

    def run(self, x):
        return x.to(self.device)


def test_run():
    Net("cuda").run(torch.ones(1))
''')
    assert _labels(tmp_path) == {"test_run": "gpu"}  # (round 13: the name the call computes is known)
