"""Training recipes: pretraining the tiny base CLIP and fine-tuning a method variant from it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..config import build, section
from ..losses import get_loss
from ..models.factory import ModelSpec
from .data import BatchSampler, Row, rows_from_annotations
from .loop import TrainConfig


@dataclass(frozen=True)
class MethodConfig:
    """A fine-tuning method (``methods.<name>`` in params.yaml)."""

    loss: str
    negatives: bool = False
    hard_images: bool = False
    paper: str = "aro"


@dataclass(frozen=True)
class VariantConfig:
    """One fine-tuning run (``variants.<name>``): a method and a training seed."""

    method: str
    seed: int


def model_spec(params: dict[str, Any]) -> ModelSpec:
    return build(ModelSpec, section(params, "model"), "model")


def train_config(values: dict[str, Any], prefix: str) -> TrainConfig:
    return build(TrainConfig, values, prefix)


def method_config(params: dict[str, Any], name: str) -> MethodConfig:
    methods = section(params, "methods")
    if name not in methods:
        raise ValueError(f"params: unknown method {name!r}; known: {', '.join(sorted(methods))}")
    cfg = build(MethodConfig, methods[name], f"methods.{name}")
    from ..losses import LOSSES

    if cfg.loss not in LOSSES:
        raise ValueError(f"params: methods.{name}.loss={cfg.loss!r} is not a registered loss; known: {LOSSES.names()}")
    return cfg


def variant_config(params: dict[str, Any], name: str) -> VariantConfig:
    variants = section(params, "variants")
    if name not in variants:
        raise ValueError(f"params: unknown variant {name!r}; known: {', '.join(sorted(variants))}")
    v = build(VariantConfig, variants[name], f"variants.{name}")
    method_config(params, v.method)
    return v


def finetune_rows(captions: list[list[str]], negatives: list[list[list[str]]]) -> list[Row]:
    """Rows for both CLIP-FT and NegCLIP: every (image, caption) whose caption has at least one negative.

    The NegCLIP data drops captions with no negative; CLIP-FT trains on the same rows (ignoring the negatives)
    so the ablation differs only in the loss and the batch composition.
    """
    return rows_from_annotations(captions, negatives, require_negative=True)


def make_sampler(rows: list[Row], method: MethodConfig, batch_size: int, hard_images: np.ndarray | None) -> BatchSampler:
    return BatchSampler(rows, batch_size, use_negatives=method.negatives,
                        hard_images=hard_images if method.hard_images else None)


def make_loss(method: MethodConfig):
    return get_loss(method.loss)
