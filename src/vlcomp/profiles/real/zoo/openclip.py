"""Family ``openclip``: any open_clip architecture with a pretrained tag or a local checkpoint - OpenAI CLIP
(``weights: openai``), the released NegCLIP ``negclip.pth`` and CE-CLIP state dicts; also the open_clip spec
keys and scorer the ``conclip`` and ``tsvlc`` families share.

What the released files hold: NegCLIP ``negclip.pth`` (vinid/neg_clip, an open_clip 1.3 fork) and CE-CLIP (an
open_clip 2.10 fork) are open_clip training checkpoints ``{"epoch", "name", "state_dict", "optimizer"}``, open_clip
key names, possibly ``module.``-prefixed. Both were fine-tuned from ``pretrained=openai``, so they are
``openai_derived: true`` (QuickGELU; :mod:`vlcomp.models.weights`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import nn

from ....models.scorers import ImageTextScorer, OpenClipScorer
from ....models.weights import create_open_clip, resolve_quick_gelu
from .spec import BOOL, INT, STR, ZOO, Family, Key, batch_keys


def open_clip_keys() -> dict[str, Key]:
    """The keys of every open_clip family: ``arch``, ``weights``, ``tokenizer``, ``context_length``, batches."""
    from ....text.tokenizer import TOKENIZERS

    return {"arch": Key(STR, required=True),
            "weights": Key(STR, required=True, nullable=True, tag_or_path=True),
            "tokenizer": Key(STR, default="open_clip", choices=tuple(TOKENIZERS.names())),
            "context_length": Key(INT, nullable=True, positive=True), **batch_keys(64, 256)}


def open_clip_scorer(name: str, model: nn.Module, preprocess: Callable, spec: Mapping[str, Any],
                     device: torch.device) -> OpenClipScorer:
    """The dual scorer of an open_clip model with the spec's tokenizer, context length and batch sizes."""
    from ....text.tokenizer import get_tokenizer

    ctx = spec["context_length"] or int(getattr(model, "context_length", 77))
    tokenizer = get_tokenizer(spec["tokenizer"], spec["arch"], ctx)
    return OpenClipScorer(name, model, preprocess, tokenizer, device=device, image_batch=spec["image_batch"],
                          text_batch=spec["text_batch"])


def build_openclip(name: str, spec: dict[str, Any], device: torch.device) -> ImageTextScorer:
    qg = resolve_quick_gelu(name, spec["arch"], spec["weights"], openai_derived=spec["openai_derived"],
                            quick_gelu=spec["quick_gelu"])
    model, preprocess = create_open_clip(name, spec["arch"], spec["weights"], quick_gelu=qg)
    return open_clip_scorer(name, model, preprocess, spec, device)


ZOO.add("openclip", Family(
    {**open_clip_keys(), "openai_derived": Key(BOOL, nullable=True), "quick_gelu": Key(BOOL, nullable=True)},
    build_openclip, "open_clip architecture + tag or checkpoint (OpenAI CLIP, NegCLIP, CE-CLIP)"))
