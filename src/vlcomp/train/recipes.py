"""Training recipes: the model spec and optimiser settings of params.yaml (methods: vlcomp.methods)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..config import build, section
from ..models.factory import ModelSpec
from .loop import TrainConfig


def model_spec(params: dict[str, Any], base: str | None = None) -> ModelSpec:
    """``model`` as a :class:`ModelSpec`; with ``base`` (a key of ``bases``), that base's architecture where it is
    another base model's (``bases.<base>.arch``: ``base_models.<kind>.arch``)."""
    spec = build(ModelSpec, section(params, "model"), "model")
    arch = section(params, f"bases.{base}").get("arch") if base is not None else None
    return replace(spec, arch=arch) if arch else spec


def base_loss(params: dict[str, Any], base: str) -> str:
    """The pretraining loss of ``base`` (``bases.<base>.loss``: ``base_models.<kind>.loss``; default ``clip``)."""
    return section(params, f"bases.{base}").get("loss") or "clip"


def train_config(values: dict[str, Any], prefix: str) -> TrainConfig:
    return build(TrainConfig, values, prefix)
