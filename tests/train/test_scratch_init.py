"""``methods.<m>.init: scratch`` (TSVLC Table 1c/d/f): the base's architecture, randomly initialised from the run's
seed; the base's weights are never read; deterministic; and ``init: base`` still starts from the weights."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest
import torch

from vlcomp.methods import MethodConfig
from vlcomp.models.factory import ModelSpec, create_model, save_checkpoint
from vlcomp.train.finetune import finetune_one
from vlcomp.train.loop import TrainConfig

from .tiny_run import ARCH, data

CFG = TrainConfig(lr=1e-3, epochs=1, batch_size=4, warmup_steps=1)


def _data():
    images, rows, _ = data(4, captions=2)
    return SimpleNamespace(rows=[replace(r, negatives=()) for r in rows], split=SimpleNamespace(images=images), mined={})


def _state(model: torch.nn.Module) -> dict:
    return {k: v.clone() for k, v in model.state_dict().items()}


def test_scratch_ignores_the_base_weights_and_is_deterministic(tmp_path):
    scratch = MethodConfig(generator="g", loss="clip", paper="aro", init="scratch")
    spec = ModelSpec(ARCH, str(tmp_path / "missing.pt"))  # never read
    a, _ = finetune_one(spec, _data(), scratch, CFG, seed=5, stream="s")
    b, _ = finetune_one(replace(spec, weights=None), _data(), scratch, CFG, seed=5, stream="s")
    assert all(torch.equal(x, y) for x, y in zip(_state(a).values(), _state(b).values(), strict=True))
    c, _ = finetune_one(spec, _data(), scratch, CFG, seed=6, stream="s")  # another seed: another init
    assert not all(torch.equal(x, y) for x, y in zip(_state(a).values(), _state(c).values(), strict=True))


def test_base_init_starts_from_the_weights(tmp_path):
    base = create_model(ModelSpec(ARCH), init_seed=1)
    save_checkpoint(base, tmp_path / "model.pt")
    spec = ModelSpec(ARCH, str(tmp_path / "model.pt"))
    tiny = replace(CFG, lr=1e-12)  # barely moves: the result stays next to the weights it started from
    tuned, _ = finetune_one(spec, _data(), MethodConfig(generator="g", loss="clip", paper="aro"), tiny, seed=5, stream="s")
    scratch, _ = finetune_one(spec, _data(), MethodConfig(generator="g", loss="clip", paper="aro", init="scratch"), tiny,
                              seed=5, stream="s")
    w = "text_projection"
    assert torch.allclose(tuned.state_dict()[w], base.state_dict()[w], atol=1e-6)
    assert not torch.allclose(scratch.state_dict()[w], base.state_dict()[w], atol=1e-3)
    with pytest.raises(FileNotFoundError):
        finetune_one(ModelSpec(ARCH, str(tmp_path / "missing.pt")), _data(), MethodConfig(generator="g", loss="clip", paper="aro"),
                     CFG, seed=5, stream="s")
