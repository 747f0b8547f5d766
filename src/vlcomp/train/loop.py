"""The optimisation loop shared by pretraining and fine-tuning.

AdamW with linear warm-up then cosine annealing (the NegCLIP recipe, open_clip's ``cosine_lr``), learnable
logit scale clamped to ``[0, ln 100]`` as open_clip does. Steps are counted, not seconds, so a run is
reproducible from its seed.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from tqdm import tqdm

from ..models.encode import clip_forward
from ..models.factory import to_tensor
from .data import BatchSampler


@dataclass(frozen=True)
class TrainConfig:
    lr: float
    epochs: float
    batch_size: int
    warmup_steps: int = 50
    weight_decay: float = 0.2
    beta1: float = 0.9
    beta2: float = 0.98
    eps: float = 1e-6
    log_every: int = 20

    def __post_init__(self) -> None:
        # a string such as YAML's "1e-3" (PyYAML reads it as str) must be named, not fail on the comparison
        if not (_is_number(self.lr) and self.lr > 0 and math.isfinite(self.lr)):
            raise ValueError(f"lr={self.lr!r}: must be a positive number")
        if not (_is_number(self.epochs) and self.epochs > 0 and math.isfinite(self.epochs)):
            raise ValueError(f"epochs={self.epochs!r}: must be positive")
        if self.warmup_steps < 0 or self.weight_decay < 0:
            raise ValueError(f"warmup_steps={self.warmup_steps}, weight_decay={self.weight_decay}: must be >= 0")


def _is_number(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def lr_at(step: int, total: int, base_lr: float, warmup: int) -> float:
    """Linear warm-up over ``warmup`` steps, then cosine from ``base_lr`` to 0 at ``total``."""
    if step < warmup:
        return base_lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return 0.5 * (1 + math.cos(math.pi * min(progress, 1.0))) * base_lr


def _param_groups(model: torch.nn.Module, wd: float) -> list[dict]:
    """open_clip's rule: no weight decay on gains, biases, embeddings and the logit scale."""
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        exclude = p.ndim < 2 or "bn" in name or "ln" in name or "bias" in name or "logit_scale" in name or "embedding" in name
        (no_decay if exclude else decay).append(p)
    return [{"params": no_decay, "weight_decay": 0.0}, {"params": decay, "weight_decay": wd}]


class TextCache:
    """Tokenise each unique text once; look rows up per batch."""

    def __init__(self, tokenizer, texts: list[str]) -> None:
        uniq = sorted(set(texts))
        self.index = {t: i for i, t in enumerate(uniq)}
        self.tokens = tokenizer(uniq) if uniq else None

    def __call__(self, texts: list[str]) -> torch.Tensor:
        return self.tokens[[self.index[t] for t in texts]]


def train(
    model: torch.nn.Module,
    tokenizer,
    images: np.ndarray,
    sampler: BatchSampler,
    loss_fn: torch.nn.Module,
    cfg: TrainConfig,
    rng: np.random.Generator,
    on_log: Callable[[int, dict[str, float]], None] | None = None,
) -> list[dict[str, float]]:
    """Train in place; returns the logged history (one dict per ``log_every`` steps)."""
    all_texts = [r.caption for r in sampler.rows] + [n for r in sampler.rows for n in r.negatives]
    cache = TextCache(tokenizer, all_texts)
    size = model.visual.image_size
    size = int(size[0] if isinstance(size, tuple | list) else size)
    total = max(1, int(round(cfg.epochs * sampler.steps_per_epoch)))
    opt = torch.optim.AdamW(_param_groups(model, cfg.weight_decay), lr=cfg.lr, betas=(cfg.beta1, cfg.beta2), eps=cfg.eps)
    model.train()
    history: list[dict[str, float]] = []
    window: dict[str, list[float]] = {}
    step, t0 = 0, time.time()
    bar = tqdm(total=total, desc="train", mininterval=5, disable=None)
    while step < total:
        for batch in sampler.epoch(rng):
            if step >= total:
                break
            lr = lr_at(step, total, cfg.lr, cfg.warmup_steps)
            for g in opt.param_groups:
                g["lr"] = lr
            x = to_tensor(images[batch.images], size)
            out = clip_forward(model, x, cache(batch.texts))
            terms = loss_fn(**out)
            loss = sum(v for k, v in terms.items() if k.endswith("_loss"))
            if not torch.isfinite(loss):
                raise FloatingPointError(f"loss became {loss.item()} at step {step} (lr={lr:g}); lower the learning rate")
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            with torch.no_grad():
                model.logit_scale.clamp_(0, math.log(100))
            for k, v in terms.items():
                window.setdefault(k, []).append(float(v.detach()))
            step += 1
            bar.update(1)
            if step % cfg.log_every == 0 or step == total:
                rec = {k: float(np.mean(v)) for k, v in window.items()}
                rec.update(step=step, lr=lr, logit_scale=float(model.logit_scale.detach().exp()),
                           samples_per_s=step * cfg.batch_size / (time.time() - t0))
                history.append(rec)
                window = {}
                if on_log:
                    on_log(step, rec)
    bar.close()
    model.eval()
    return history
