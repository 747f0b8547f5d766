"""Family ``conclip``: OpenAI CLIP + a CoN-CLIP ``ckpt_*.pt``.

The file is ``{"model": state_dict, "optimizer": ..., "args": Namespace}``, the state dict being the *whole*
OpenAI CLIP (``clip.load`` names = open_clip's names) in float32. The image tower was frozen
(``--lock-image-encoder=on`` in ``run_finetuning.sh``, although ``helpers.py`` defaults to ``off``), so its
``visual.*`` entries should equal the base weights. ``image_tower: base`` (default) loads every non-``visual.``
entry from the file and keeps the base image tower, after checking that the file's ``visual.*`` entries (if any)
match it; a mismatch is an error pointing at ``image_tower: checkpoint`` (load the whole file, as the reference
README does). Always QuickGELU (fine-tuned from OpenAI CLIP).
"""

from __future__ import annotations

from typing import Any

import torch

from ....models.scorers import ImageTextScorer
from ....models.weights import check_frozen, create_open_clip, load_into, read_state_dict, resolve_quick_gelu
from .openclip import open_clip_keys, open_clip_scorer
from .spec import STR, ZOO, Family, Key


def build_conclip(name: str, spec: dict[str, Any], device: torch.device) -> ImageTextScorer:
    qg = resolve_quick_gelu(name, spec["arch"], spec["weights"], openai_derived=True)
    path = spec["checkpoint"]
    state = read_state_dict(path, what=f"CoN-CLIP checkpoint of model {name!r}")
    model, preprocess = create_open_clip(name, spec["arch"], spec["weights"], quick_gelu=qg)
    if spec["image_tower"] == "checkpoint":
        load_into(model, state, path, what="CoN-CLIP checkpoint")
    else:
        visual = {k: v for k, v in state.items() if k.startswith("visual.")}
        check_frozen(model, visual, path, what="CoN-CLIP checkpoint (image tower)",
                     hint=" If the image tower was fine-tuned, set image_tower: checkpoint.")
        text = {k: v for k, v in state.items() if not k.startswith("visual.")}
        load_into(model, text, path, what="CoN-CLIP checkpoint (text tower)",
                  allow_missing=lambda k: k.startswith("visual."))
    return open_clip_scorer(name, model.eval(), preprocess, spec, device)


ZOO.add("conclip", Family(
    {**open_clip_keys(), "checkpoint": Key(STR, required=True, path=True),
     "image_tower": Key(STR, default="base", choices=("base", "checkpoint"))},
    build_conclip, "OpenAI CLIP + CoN-CLIP {'model': state_dict} checkpoint"))
