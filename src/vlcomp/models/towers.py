"""The parts of an open_clip CLIP a method can freeze or adapt: the image tower, the text tower, the logit scale.

The image tower is ``model.visual``; the text tower is every other parameter (token and positional embeddings,
``transformer``, ``ln_final``, ``text_projection``) but ``logit_scale`` / ``logit_bias``, which belong to no tower.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

TOWERS = ("image", "text")
#: What ``methods.<m>.tuning.freeze`` may name: a tower, or the learnable temperature (TSVLC's LoRA runs keep it
#: at its pretrained value).
FREEZABLE = (*TOWERS, "logit_scale")


def part_of(name: str) -> str | None:
    """The part a parameter or module name belongs to: ``image``, ``text``, ``logit_scale`` or None
    (``logit_bias``, the root)."""
    if name == "visual" or name.startswith("visual."):
        return "image"
    if name == "logit_scale":
        return "logit_scale"
    if not name or name.startswith("logit_"):
        return None
    return "text"


def freeze(model: torch.nn.Module, parts: Iterable[str]) -> torch.nn.Module:
    """Turn off the gradient of every parameter in ``parts`` (so the optimiser gives them no state)."""
    parts = set(parts)
    for name, p in model.named_parameters():
        if part_of(name) in parts:
            p.requires_grad_(False)
    return model
