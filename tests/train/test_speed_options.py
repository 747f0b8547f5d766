"""Training speed options (TrainConfig.text_buckets, TrainConfig.precision): off by default, and then the same
training bits whichever way they are left off; on, within a stated tolerance of float32 training, and really used.
"""

from __future__ import annotations

import pytest
import torch

import vlcomp.train.loop as loop
from vlcomp.config import build
from vlcomp.models.factory import ModelSpec, create_model
from vlcomp.train.finetune import FinetuneConfig, finetune_config
from vlcomp.train.loop import TrainConfig
from vlcomp.train.recipes import train_config

from .tiny_run import ARCHS, CFG, pinned_digests, run

#: The ways of leaving the options off: nothing said, both said off, one text bucket (all captions in one).
OFF = {"defaults": {}, "explicit-off": {"text_buckets": 0, "precision": "fp32"}, "one-bucket": {"text_buckets": 1}}
#: A setting that trains differently (captions padded to two lengths), which the digest must tell apart.
CHANGED = {"two-buckets": {"text_buckets": 2}}


@pytest.mark.parametrize("arch", ARCHS)
def test_options_off_train_the_same_bits_on_this_machine(arch) -> None:
    """A/B on this machine, each run in the same subprocess under the stages' kernel pin with one thread: every way
    of leaving the options off gives the same digest of weights, history and sampler generator; and the digest is
    sensitive, a setting that trains differently gives another."""
    digests, _ = pinned_digests({**OFF, **CHANGED})
    off = {name: digests[name][arch] for name in OFF}
    assert len(set(off.values())) == 1, f"options off, {arch}: {off}"
    for name in CHANGED:
        assert digests[name][arch] != off["defaults"], f"{name} trains differently but gives the same digest"


def _update(cfg: TrainConfig, arch: str) -> dict[str, torch.Tensor]:
    """What a tiny run changed in every float tensor of the model (float64)."""
    init = create_model(ModelSpec(arch), init_seed=0).state_dict()
    model, _, _ = run(cfg, arch=arch)
    return {k: (v - init[k]).double() for k, v in model.state_dict().items() if v.is_floating_point()}


def _relative_difference(a: dict, b: dict) -> float:
    num = sum(float(((a[k] - b[k]) ** 2).sum()) for k in b)
    return (num / sum(float((v**2).sum()) for v in b.values())) ** 0.5


#: Stated tolerances: the norm of (option's total update - float32's) over the norm of float32's, after tiny_run's
#: 10 steps. Measured under the pin: buckets 2e-4 (toy-vit-p8) and 2e-5 (toy-rn16), bfloat16 0.047 and 0.032.
TOLERANCE = {"text_buckets": 2e-3, "precision": 0.15}


@pytest.fixture(scope="module")
def fp32_updates() -> dict:
    return {arch: _update(CFG, arch) for arch in ARCHS}


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize(("option", "value"), [("text_buckets", 3), ("precision", "bf16")])
def test_options_on_stay_within_tolerance_of_fp32_and_are_used(monkeypatch, fp32_updates, arch, option, value) -> None:
    seen = []
    forward = loop.clip_forward

    def spy(model, images, tokens, **kwargs):
        seen.append(kwargs)
        return forward(model, images, tokens, **kwargs)

    monkeypatch.setattr(loop, "clip_forward", spy)
    cfg = TrainConfig(**{**CFG.__dict__, option: value})
    diff = _relative_difference(_update(cfg, arch), fp32_updates[arch])
    assert len(seen) == 10 and all(kw[option] == value for kw in seen)
    assert 0 < diff < TOLERANCE[option], f"{option}={value!r}: {diff:.3g} of the float32 update"


def test_absent_keys_default_to_off_and_bad_values_are_named() -> None:
    base = {"val_split": "b", "lr_grid": [1e-3], "sweep_epochs": 0.1, "epochs": 1, "batch_size": 8}
    cfg = finetune_config(base)
    assert (cfg.text_buckets, cfg.precision) == (0, "fp32")
    tcfg = cfg.train_config(1e-3, 1.0)
    assert (tcfg.text_buckets, tcfg.precision) == (0, "fp32")
    on = finetune_config({**base, "text_buckets": 4, "precision": "bf16"}).train_config(1e-3, 1.0)
    assert (on.text_buckets, on.precision) == (4, "bf16")
    with pytest.raises(ValueError, match=r"finetune\.text_buckets=-1"):
        finetune_config({**base, "text_buckets": -1})
    with pytest.raises(ValueError, match=r"finetune\.precision='fp16'"):
        finetune_config({**base, "precision": "fp16"})
    pre = {"lr": 1e-3, "epochs": 2, "batch_size": 256}
    assert train_config(pre, "pretrain") == TrainConfig(lr=1e-3, epochs=2, batch_size=256)
    assert train_config({**pre, "text_buckets": 4}, "pretrain").text_buckets == 4
    with pytest.raises(ValueError, match=r"pretrain\.text_buckets=True"):
        train_config({**pre, "text_buckets": True}, "pretrain")
    with pytest.raises(ValueError, match=r"pretrain\.precision='bfloat16'"):
        build(TrainConfig, {**pre, "precision": "bfloat16"}, "pretrain")
    assert {"text_buckets", "precision"} <= set(FinetuneConfig.__dataclass_fields__)


def test_bf16_with_cuda_amp_is_refused() -> None:
    with pytest.raises(ValueError, match="choose one kind of mixed precision"):
        run(TrainConfig(**{**CFG.__dict__, "precision": "bf16"}), amp=True)


def test_a_checkpoint_of_another_precision_is_not_resumed(tmp_path) -> None:
    run(TrainConfig(**{**CFG.__dict__, "precision": "bf16"}), checkpoint_dir=tmp_path, checkpoint_every=3)
    with pytest.raises(ValueError, match="config.precision"):
        run(CFG, checkpoint_dir=tmp_path, checkpoint_every=3, resume=True)
