"""Training recipes: the model spec and optimiser settings of params.yaml (methods: vlcomp.methods)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..config import build, section
from ..models.factory import ModelSpec
from .loop import TrainConfig


def model_spec(params: dict[str, Any], base: str | None = None) -> ModelSpec:
    """``clip`` (the CLIP spec) as a :class:`ModelSpec`; with ``base`` (a key of ``bases``) of another family of base
    model (``bases.<base>.family``), that family's architecture (``base_models.<family>.arch``, default
    ``clip.arch``) and its own weights (``base_models.<family>.weights``, default none: ``clip.weights`` are another
    model's)."""
    spec = build(ModelSpec, section(params, "clip"), "clip")
    values = section(params, f"bases.{base}") if base is not None else {}
    if not values.get("family"):
        return spec
    return replace(spec, arch=values.get("arch") or spec.arch, weights=values.get("weights"))


def base_loss(params: dict[str, Any], base: str) -> str:
    """The pretraining loss of ``base`` (``bases.<base>.loss``: ``base_models.<family>.loss``; default ``clip``)."""
    return section(params, f"bases.{base}").get("loss") or "clip"


def train_config(values: dict[str, Any], prefix: str) -> TrainConfig:
    return build(TrainConfig, values, prefix)
