"""A pipeline checkpoint's bytes are a function of its weights alone (no temporary file name inside), so DVC
sees an unchanged model as unchanged."""

from __future__ import annotations

import torch

from vlcomp.models.factory import ModelSpec, create_model, load_checkpoint, save_checkpoint


def test_same_weights_same_bytes_whatever_the_path(tmp_path):
    model = create_model(ModelSpec("toy-vit-p8"), init_seed=0)
    a, b = tmp_path / "a" / "model.pt", tmp_path / "other.pt"
    a.parent.mkdir()
    save_checkpoint(model, a)
    save_checkpoint(model, b)
    assert a.read_bytes() == b.read_bytes()
    back = create_model(ModelSpec("toy-vit-p8"), init_seed=1)
    load_checkpoint(back, a)
    assert all(torch.equal(back.state_dict()[k], v) for k, v in model.state_dict().items())
    with torch.no_grad():
        next(model.parameters()).add_(1.0)
    save_checkpoint(model, b)
    assert a.read_bytes() != b.read_bytes()
