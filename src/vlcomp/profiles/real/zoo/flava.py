"""Family ``flava``: ``FlavaForPreTraining`` from a local HF directory, a cross scorer (ARO's wrapper
``model_zoo/flava.py``).

Score: ``softmax(itm_logits)[:, 1]``, text padded to ``max_length=77``; images resized to the config's size (224)
bicubic + centre crop, CLIP mean/std (``FlavaImageProcessorPil`` built from explicit settings). ``dual_view()`` =
the unimodal ``get_image_features`` / ``get_text_features`` [CLS] (index 0) embeddings, which is what ARO's
retrieval tables use (``retrieval_mode = "dual_view"``).

AMBIGUOUS (documented choices): ARO calls ``FlavaForPreTraining(...)`` with ``input_ids_masked = input_ids`` and
an all-zero ``bool_masked_pos``; that is exactly ``itm_head(flava(...).multimodal_embeddings)`` (a zero mask
leaves the patch embeddings unchanged), computed here directly without the unused MLM / MIM heads (a test holds
the two equal). ARO does not truncate FLAVA text; here it is truncated at ``max_length`` (no ARO caption comes
near 77 tokens).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from ....models.factory import OPENAI_MEAN, OPENAI_STD
from ....models.scorers import ImageTextScorer
from .cross import CrossScorer, DualView, Tokens, hf_keys, load_hf_model, load_hf_tokenizer
from .spec import INT, ZOO, Family, Key

#: FlavaForPreTraining parts the ITM score and the unimodal features never use (pretraining losses).
_FLAVA_UNUSED = ("image_codebook.", "mim_head.", "mlm_head.", "mmm_image_head.", "mmm_text_head.",
                 "global_contrastive_head.")


def flava_image_processor(size: int):
    """FLAVA's eval preprocessing from explicit settings (``facebook/flava-full``'s: resize to ``size`` x
    ``size`` bicubic, centre crop, 1/255, CLIP mean/std), PIL backend like the reference's feature
    extractor."""
    from transformers import FlavaImageProcessorPil
    from transformers.image_utils import PILImageResampling

    square = {"height": size, "width": size}
    return FlavaImageProcessorPil(size=square, crop_size=dict(square), resample=PILImageResampling.BICUBIC,
                                  do_resize=True, do_center_crop=True, do_rescale=True, do_normalize=True,
                                  image_mean=list(OPENAI_MEAN), image_std=list(OPENAI_STD))


class FlavaScorer(CrossScorer):
    """FLAVA ITM probability (ARO's FLAVA wrapper) over transformers' ``FlavaForPreTraining``."""

    retrieval_mode = "dual_view"

    def __init__(self, name: str, model: nn.Module, tokenizer, *, max_length: int = 77, pair_batch: int = 32,
                 image_batch: int = 32, text_batch: int = 256, device: str | torch.device = "cpu") -> None:
        self.name = name
        self.device = torch.device(device)
        self.model = model.eval().to(self.device)
        self.tokens = Tokens(tokenizer, max_length, self.device)
        self.processor = flava_image_processor(int(model.config.image_config.image_size))
        self.pair_batch, self.image_batch, self.text_batch = pair_batch, image_batch, text_batch

    def _pixels(self, images: Sequence) -> torch.Tensor:
        x = self.processor(images=[im.convert("RGB") for im in images], return_tensors="pt")["pixel_values"]
        return x.to(self.device)

    def _score_chunk(self, images: Sequence, idx: torch.Tensor, texts: Sequence[str]) -> torch.Tensor:
        mm = self.model.flava(pixel_values=self._pixels(images)[idx], **self.tokens(texts)).multimodal_embeddings
        return torch.softmax(self.model.itm_head(mm).float(), dim=-1)[:, 1]

    def _image_features(self, images: Sequence) -> torch.Tensor:
        f = self.model.flava.get_image_features(pixel_values=self._pixels(images)).pooler_output[:, 0, :]
        return nn.functional.normalize(f.float(), dim=-1).cpu()

    def _text_features(self, texts: Sequence[str]) -> torch.Tensor:
        f = self.model.flava.get_text_features(**self.tokens(texts)).pooler_output[:, 0, :]
        return nn.functional.normalize(f.float(), dim=-1).cpu()

    def dual_view(self) -> DualView:
        """Unimodal [CLS] features (``get_image_features`` / ``get_text_features``, index 0): ARO's
        retrieval."""
        return DualView(f"{self.name}:unimodal", self._image_features, self._text_features, self.image_batch,
                        self.text_batch)


def build_flava(name: str, spec: dict[str, Any], device: torch.device) -> ImageTextScorer:
    from transformers import FlavaForPreTraining

    model = load_hf_model(FlavaForPreTraining, name, spec["path"], allow_missing=_FLAVA_UNUSED)
    key = "tokenizer" if spec["tokenizer"] else "path"
    vocab = int(model.config.text_config.vocab_size)
    tok = load_hf_tokenizer(name, spec["tokenizer"] or spec["path"], key, vocab)
    return FlavaScorer(name, model, tok, max_length=spec["max_length"], pair_batch=spec["pair_batch"],
                       image_batch=spec["image_batch"], text_batch=spec["text_batch"], device=device)


ZOO.add("flava", Family({**hf_keys(), "max_length": Key(INT, default=77, positive=True)}, build_flava,
                        "FLAVA ITM cross scorer (HF FlavaForPreTraining)"))
