"""Fine-tuning a method variant from the base model, and learning-rate selection on validation retrieval."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from ..config import build
from ..methods import MethodConfig, apply_modifiers, finish_modifiers, make_loss, make_sampler, method_rows
from ..models.factory import ModelSpec, create_model, with_weights  # noqa: F401  (with_weights: re-exported)
from ..seeding import derive_seed, np_rng
from ..text.tokenizer import get_tokenizer
from ..world import Split
from .loop import TrainConfig, check_speed_options, train
from .validate import val_retrieval


@dataclass(frozen=True)
class FinetuneConfig:
    """``finetune`` in params.yaml (shared by every variant; the LR comes from selection, the training split from
    the method's generator: ``mine.<generator>.split``, :func:`training_split`)."""

    val_split: str
    lr_grid: tuple[float, ...]
    sweep_epochs: float
    epochs: float
    batch_size: int
    warmup_steps: int = 50
    weight_decay: float = 0.2
    checkpoint_every: int = 0  # steps between resumable training checkpoints (0: none); results do not change
    device: str = "auto"  # "auto": cuda when available (mixed precision then on), else cpu
    text_buckets: int = 0  # training text batches encoded in this many length groups (0: one batch; see TrainConfig)
    precision: str = "fp32"  # "bf16": bfloat16 towers (see TrainConfig); "fp32": as always

    def __post_init__(self) -> None:
        if isinstance(self.checkpoint_every, bool) or not isinstance(self.checkpoint_every, int) or self.checkpoint_every < 0:
            raise ValueError(f"finetune.checkpoint_every={self.checkpoint_every!r}: must be an int >= 0")
        if not (self.device == "auto" or self.device == "cpu" or self.device.startswith("cuda")):
            raise ValueError(f"finetune.device={self.device!r}: must be auto, cpu or cuda[:N]")
        check_speed_options(self.text_buckets, self.precision, "finetune.")
        if not self.lr_grid:
            raise ValueError("finetune.lr_grid: must list at least one learning rate")
        for lr in self.lr_grid:
            if not isinstance(lr, int | float) or lr <= 0:
                raise ValueError(f"finetune.lr_grid: {lr!r} is not a positive learning rate")

    def train_config(self, lr: float, epochs: float, method: MethodConfig | None = None) -> TrainConfig:
        """The recipe of one run at ``lr`` for ``epochs``: this section's, with ``method``'s own ``batch_size``,
        ``warmup_steps`` and ``weight_decay`` where it sets them."""
        def pick(key: str):
            own = getattr(method, key) if method is not None else None
            return getattr(self, key) if own is None else own

        return TrainConfig(lr=lr, epochs=epochs, batch_size=pick("batch_size"), warmup_steps=pick("warmup_steps"),
                           weight_decay=pick("weight_decay"), text_buckets=self.text_buckets, precision=self.precision)


def finetune_config(values: dict) -> FinetuneConfig:
    return build(FinetuneConfig, values, "finetune")


def training_split(params: dict, method: MethodConfig) -> str:
    """The split a method trains on: the one its generator mined (``mine.<generator>.split``)."""
    from ..config import section

    return section(params, f"mine.{method.generator}.split")


class FinetuneData:
    """The fine-tuning split (``split``: :func:`training_split`) with what ``method`` reads of its generator's output
    (``mined``: the ``mine@`` folder), loaded once: the training rows and the mined outputs by name."""

    def __init__(self, world: str | Path, mined: str | Path, cfg: FinetuneConfig, method: MethodConfig,
                 split: str, mined_positives: str | Path | None = None) -> None:
        from ..generators import read_mined
        from ..methods import sources

        self.split = Split(world, split)
        self.val = Split(world, cfg.val_split)
        captions = self.split.captions()
        self.mined = {}
        for gen, needs in sources(method).items():
            folder = mined_positives if gen != method.generator and mined_positives is not None else mined
            if gen != method.generator and mined_positives is None:
                raise ValueError(f"method reads positives from generator {gen!r}: give its folder (mined_positives)")
            self.mined.update(read_mined(folder, needs, n_images=len(captions), captions=captions, generator=gen))
        self.rows = method_rows(captions, self.mined, method.batch)
        if not self.rows:
            raise ValueError(f"{mined}: no training row for batch.rows={method.batch.rows!r} (no caption has a "
                             "negative?); nothing to fine-tune on")


def finetune_one(base: ModelSpec, data: FinetuneData, method: MethodConfig, tcfg: TrainConfig, seed: int,
                 stream: str, on_log: Callable | None = None, *, checkpoint_dir: str | os.PathLike | None = None,
                 checkpoint_every: int = 0, resume: bool = False, device: str | torch.device = "cpu",
                 amp: bool | str = "auto") -> tuple[torch.nn.Module, list[dict]]:
    """Fine-tune ``base`` on ``data`` with ``method``. The keyword options go to :func:`vlcomp.train.loop.train`
    (checkpoints and resume, device, mixed precision); their defaults train exactly as before they existed. The
    returned model is a plain open_clip model (a method's LoRA adapters merged), what ``model.pt`` holds."""
    if method.init == "scratch":  # the base's architecture, randomly initialised (Table 1c/d/f of TSVLC)
        model = create_model(replace(base, weights=None), init_seed=derive_seed(seed, "finetune-init", stream))
    else:
        model = create_model(base)
    model = apply_modifiers(model, method, seed=derive_seed(seed, "finetune-lora", stream))
    tokenizer = get_tokenizer(base.tokenizer, base.arch, base.context_length)
    sampler = make_sampler(data.rows, method, tcfg.batch_size, data.mined)
    history = train(model, tokenizer, data.split.images, sampler, make_loss(method), tcfg,
                    np_rng(seed, "finetune", stream), on_log=on_log, checkpoint_dir=checkpoint_dir,
                    checkpoint_every=checkpoint_every, resume=resume, device=device, amp=amp)
    return finish_modifiers(model, method), history


def lr_grid(method: MethodConfig, cfg: FinetuneConfig) -> tuple[float, ...]:
    """The learning rates ``method`` sweeps: its own ``lr_grid``, else ``finetune.lr_grid``."""
    return tuple(method.lr_grid or cfg.lr_grid)


def select_lr(base: ModelSpec, data: FinetuneData | None, method: MethodConfig, cfg: FinetuneConfig, seed: int,
              name: str, on_result: Callable | None = None, *, device: str | torch.device = "cpu") -> dict:
    """Train one short run per LR of the grid and keep the LR with the best validation mean R@1 (training and
    validation encoding on ``device``). A grid of one rate is that rate, with no run (``grid`` empty; ``data`` is
    not read and may be None)."""
    results = {}
    sweep_epochs = method.sweep_epochs or cfg.sweep_epochs
    grid = lr_grid(method, cfg)
    if len(grid) == 1:
        return {"method": name, "grid": {}, "selected_lr": float(grid[0]), "criterion": "the grid's only rate",
                "sweep_epochs": 0}
    if data is None:
        raise ValueError(f"select_lr {name}: a grid of {len(grid)} rates needs the fine-tuning data")
    tokenizer = get_tokenizer(base.tokenizer, base.arch, base.context_length)
    for lr in grid:
        model, _ = finetune_one(base, data, method, cfg.train_config(lr, sweep_epochs, method), seed,
                                f"lr-sweep/{name}/{lr}",
                                device=device)
        metrics = val_retrieval(model.to(device), tokenizer, data.val.images, data.val.captions())
        results[repr(float(lr))] = metrics
        if on_result:
            on_result(lr, metrics)
    best = max(results, key=lambda k: (results[k]["mean_recall_at_1"], -float(k)))
    return {"method": name, "grid": results, "selected_lr": float(best), "criterion": "val mean_recall_at_1",
            "sweep_epochs": sweep_epochs}

