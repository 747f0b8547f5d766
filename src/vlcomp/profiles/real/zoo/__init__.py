"""The real profile's model registry ("zoo"): each evaluated model is built from its ``params.yaml`` spec.

``build_scorer(name, spec)`` returns an :class:`~vlcomp.models.scorers.ImageTextScorer`; ``spec["family"]``
picks one of the families registered in :data:`ZOO`, one module each (spec keys; ``*`` = required):

- ``openclip`` (:mod:`.openclip`): any open_clip architecture with a pretrained tag or a local checkpoint -
  OpenAI CLIP (``weights: openai``), the released NegCLIP ``negclip.pth`` and CE-CLIP state dicts. Keys:
  ``arch*``, ``weights*`` (tag, file, or null = random init), ``openai_derived`` (required when ``weights`` is a
  file), ``quick_gelu`` (null = resolved), ``tokenizer`` (``open_clip``), ``context_length`` (null = the
  model's), ``image_batch`` (64), ``text_batch`` (256).
- ``conclip`` (:mod:`.conclip`): OpenAI CLIP + a CoN-CLIP ``ckpt_*.pt``. Keys: ``arch*``, ``weights*`` (the base
  CLIP), ``checkpoint*``, ``image_tower`` (``base`` | ``checkpoint``), tokenizer / batch keys as above.
- ``tsvlc`` (:mod:`.tsvlc`): OpenAI CLIP + the TSVLC / DAC LoRA applied through peft and merged. Keys:
  ``arch*``, ``weights*`` (the base), ``adapter*`` (the released checkpoint), ``lora_r*`` (4 in the release),
  ``lora_alpha`` (1), tokenizer / batch.
- ``blip`` (:mod:`.blip`): ``BlipForImageTextRetrieval`` from a local HF directory, a cross scorer. Keys:
  ``path*``, ``tokenizer`` (a directory; null = ``path``), ``max_length`` (35), ``itm_first_token`` (``enc`` |
  ``cls``), ``k_test`` (128), ``pair_batch`` (32), ``image_batch`` (32), ``text_batch`` (256).
- ``flava`` (:mod:`.flava`): ``FlavaForPreTraining`` from a local HF directory, a cross scorer. Keys: ``path*``,
  ``tokenizer``, ``max_length`` (77), ``pair_batch``, ``image_batch``, ``text_batch``.

Path-valued keys expand ``$VAR`` / ``~`` like ``real_inputs``. A spec that is not a mapping, has an unknown
key, misses a required key or holds a value of the wrong type raises ``ValueError`` naming model and key
(:mod:`.spec`). Checkpoints are read weights-only, and every open_clip family resolves QuickGELU
(:mod:`vlcomp.models.weights`); the HF families share :mod:`.cross`.

This is real-profile code: the toy profile never loads a released checkpoint, and shared code never imports
it (the toy pipeline's models are built by :mod:`vlcomp.models.factory`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import torch

from ....models.scorers import ImageTextScorer
from .spec import ZOO, Family, Key, check_spec

log = logging.getLogger(__name__)


def build_scorer(name: str, spec: Mapping[str, Any], *,
                 device: str | torch.device = "cpu") -> ImageTextScorer:
    """Build the model ``name`` described by its ``params.yaml`` ``spec`` (see the module docstring)."""
    family, checked = check_spec(name, spec)
    scorer = family.build(name, checked, torch.device(device))
    scorer.spec = dict(checked)  # provenance: the resolved spec the scorer was built from
    log.info("model %r: built %s scorer (family %s)", name, scorer.kind, checked["family"])
    return scorer


__all__ = ["ZOO", "Family", "Key", "build_scorer", "check_spec"]
