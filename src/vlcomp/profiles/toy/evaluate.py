"""Stages ``evaluate_base`` / ``evaluate@<variant>``, toy profile: a pipeline model directory as a scorer."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...config import section
from ...io import read_json
from ...models.factory import ModelSpec, create_model
from ...models.scorers import ImageTextScorer, toy_scorer
from ...text.tokenizer import get_tokenizer


def checkpoint_scorer(params: Mapping[str, Any], name: str, ckpt: str | Path) -> ImageTextScorer:
    """The model of ``ckpt`` (``model.json`` + ``model.pt``) with the toy preprocessing (squash + resize), scoring
    in batches of ``evaluate.batch_size`` images and 4x as many texts; ``evaluate.channels_last`` (toy profile, a
    bool) hands the ResNet image tower channels-last batches (~1.3x faster image encoding on the CPU; features move
    in the last bits, <= 3e-7: see :class:`vlcomp.models.scorers.OpenClipScorer`)."""
    ckpt = Path(ckpt)
    meta = read_json(ckpt / "model.json")
    spec = ModelSpec(meta["arch"], str(ckpt / "model.pt"), meta["tokenizer"], meta["context_length"])
    batch = section(params, "evaluate.batch_size")
    channels_last = params.get("evaluate", {}).get("channels_last", False)
    if not isinstance(channels_last, bool):
        raise ValueError(f"params evaluate.channels_last must be true or false, got {channels_last!r}")
    return toy_scorer(name, create_model(spec), get_tokenizer(spec.tokenizer, spec.arch, spec.context_length),
                      image_batch=batch, text_batch=4 * batch, channels_last=channels_last)
