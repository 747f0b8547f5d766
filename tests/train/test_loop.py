"""lr_at (linear warm-up then cosine, open_clip's cosine_lr) by hand; TrainConfig validation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vlcomp.train.loop import TrainConfig, lr_at

BASE, WARMUP, TOTAL = 1e-3, 10, 110


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        (0, BASE * 1 / 10),  # first warm-up step: base / warmup
        (4, BASE * 5 / 10),
        (9, BASE),  # last warm-up step reaches the base rate
        (10, BASE),  # cosine starts at the base rate (progress 0)
        (35, BASE * 0.5 * (1 + math.cos(math.pi * 0.25))),
        (60, BASE * 0.5),  # midpoint of the cosine
        (85, BASE * 0.5 * (1 + math.cos(math.pi * 0.75))),
        (110, 0.0),  # end
        (500, 0.0),  # past the end stays at 0
    ],
)
def test_lr_at_by_hand(step: int, expected: float) -> None:
    assert lr_at(step, TOTAL, BASE, WARMUP) == pytest.approx(expected, abs=1e-15)


def test_lr_at_without_warmup_is_pure_cosine() -> None:
    assert lr_at(0, 4, 2.0, 0) == 2.0
    assert lr_at(2, 4, 2.0, 0) == pytest.approx(1.0)
    assert lr_at(4, 4, 2.0, 0) == pytest.approx(0.0, abs=1e-15)


def test_lr_at_is_monotone_up_then_down() -> None:
    lrs = [lr_at(s, TOTAL, BASE, WARMUP) for s in range(TOTAL + 1)]
    assert all(a < b for a, b in zip(lrs[:WARMUP - 1], lrs[1:WARMUP], strict=True))
    assert all(a >= b for a, b in zip(lrs[WARMUP - 1 : -1], lrs[WARMUP:], strict=True))
    assert max(lrs) == pytest.approx(BASE)


def test_warmup_longer_than_the_run() -> None:
    """A tiny run whose warm-up never ends still rises linearly and never exceeds the base rate."""
    lrs = [lr_at(s, 5, BASE, 50) for s in range(5)]
    assert lrs == pytest.approx([BASE * (s + 1) / 50 for s in range(5)])


def test_train_config_defaults_follow_the_recipe() -> None:
    cfg = TrainConfig(lr=1e-6, epochs=5, batch_size=256)
    assert cfg.warmup_steps == 50 and cfg.weight_decay == 0.2
    assert (cfg.beta1, cfg.beta2, cfg.eps) == (0.9, 0.98, 1e-6)
    assert TrainConfig(lr=np.float32(1e-3), epochs=1, batch_size=2).lr > 0  # numpy scalars are numbers too


@pytest.mark.parametrize("lr", [0, 0.0, -1e-5, float("nan"), float("inf"), "1e-3", None, True])
def test_train_config_rejects_a_bad_lr_by_name(lr) -> None:
    with pytest.raises(ValueError, match=r"^lr=.*must be a positive number"):
        TrainConfig(lr=lr, epochs=1, batch_size=2)


@pytest.mark.parametrize("epochs", [0, -1, "2", float("nan"), float("inf")])
def test_train_config_rejects_bad_epochs(epochs) -> None:
    with pytest.raises(ValueError, match=r"^epochs="):
        TrainConfig(lr=1e-3, epochs=epochs, batch_size=2)


def test_train_config_rejects_negative_warmup_or_decay() -> None:
    with pytest.raises(ValueError, match="warmup_steps=-1"):
        TrainConfig(lr=1e-3, epochs=1, batch_size=2, warmup_steps=-1)
    with pytest.raises(ValueError, match="weight_decay=-0.1"):
        TrainConfig(lr=1e-3, epochs=1, batch_size=2, weight_decay=-0.1)
