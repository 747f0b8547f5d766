"""Training recipes: the model spec and optimiser settings of params.yaml (methods: vlcomp.methods)."""

from __future__ import annotations

from typing import Any

from ..config import build, section
from ..models.factory import ModelSpec
from .loop import TrainConfig


def model_spec(params: dict[str, Any]) -> ModelSpec:
    return build(ModelSpec, section(params, "model"), "model")


def train_config(values: dict[str, Any], prefix: str) -> TrainConfig:
    return build(TrainConfig, values, prefix)
