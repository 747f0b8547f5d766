"""Family ``blip``: ``BlipForImageTextRetrieval`` from a local HF directory, a cross scorer (ARO's wrapper
``model_zoo/blip_models.py``).

Score: ``itm_head(text_encoder(ids with [ENC] first, image tokens))[:, 1]`` + the ITC cosine of ``vision_proj`` /
``text_proj`` of the [CLS] tokens; text padded / truncated to ``max_length=35``; images resized to the config's
size (384) bicubic, no crop, CLIP mean/std. ``dual_view()`` = the ITC features; retrieval re-ranks the ITC top
``k_test`` (``retrieval_mode = "rerank"``).

AMBIGUOUS (documented choice): BLIP's retrieval code (and ARO's wrapper) puts ``[ENC]`` first for the ITM pass;
transformers' ``BlipForImageTextRetrieval`` feeds the ids unchanged ([CLS]). ``itm_first_token``: default ``enc``
(ARO); ``cls`` gives the transformers behaviour.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from torch import nn

from ....models.factory import OPENAI_MEAN, OPENAI_STD
from ....models.scorers import ImageTextScorer
from .cross import CrossScorer, DualView, Tokens, hf_keys, load_hf_model, load_hf_tokenizer
from .spec import INT, STR, ZOO, Family, Key


def _rgb(image):
    return image.convert("RGB")


def blip_transform(size: int) -> Callable:
    """BLIP's ``transform_test``: resize to ``size`` x ``size`` bicubic (no crop), CLIP mean/std."""
    from torchvision import transforms as T

    return T.Compose([_rgb, T.Resize((size, size), interpolation=T.InterpolationMode.BICUBIC), T.ToTensor(),
                      T.Normalize(OPENAI_MEAN, OPENAI_STD)])


class BlipScorer(CrossScorer):
    """BLIP ITM + ITC (ARO's BLIP wrapper) over transformers' ``BlipForImageTextRetrieval``."""

    retrieval_mode = "rerank"

    def __init__(self, name: str, model: nn.Module, tokenizer, *, max_length: int = 35,
                 enc_token_id: int | None, k_test: int = 128, pair_batch: int = 32, image_batch: int = 32,
                 text_batch: int = 256, device: str | torch.device = "cpu") -> None:
        self.name = name
        self.device = torch.device(device)
        self.model = model.eval().to(self.device)
        self.tokens = Tokens(tokenizer, max_length, self.device)
        self.preprocess = blip_transform(int(model.config.vision_config.image_size))
        self.enc_token_id = enc_token_id
        self.k_test, self.pair_batch = k_test, pair_batch
        self.image_batch, self.text_batch = image_batch, text_batch

    def _image_embeds(self, images: Sequence) -> torch.Tensor:
        x = torch.stack([self.preprocess(im) for im in images]).to(self.device)
        return self.model.vision_model(pixel_values=x).last_hidden_state  # [N, 1 + patches, H]

    def _itc_image(self, embeds: torch.Tensor) -> torch.Tensor:
        return nn.functional.normalize(self.model.vision_proj(embeds[:, 0, :]).float(), dim=-1)

    def _itc_text(self, tok: Mapping[str, torch.Tensor]) -> torch.Tensor:
        h = self.model.text_encoder(input_ids=tok["input_ids"], attention_mask=tok["attention_mask"])
        return nn.functional.normalize(self.model.text_proj(h.last_hidden_state[:, 0, :]).float(), dim=-1)

    def _score_chunk(self, images: Sequence, idx: torch.Tensor, texts: Sequence[str]) -> torch.Tensor:
        embeds = self._image_embeds(images)
        tok = self.tokens(texts)
        itc = (self._itc_image(embeds)[idx] * self._itc_text(tok)).sum(dim=1)
        ids = tok["input_ids"].clone()
        if self.enc_token_id is not None:
            ids[:, 0] = self.enc_token_id
        e = embeds[idx]
        e_mask = torch.ones(e.shape[:-1], dtype=torch.long, device=self.device)
        h = self.model.text_encoder(input_ids=ids, attention_mask=tok["attention_mask"],
                                    encoder_hidden_states=e, encoder_attention_mask=e_mask)
        return self.model.itm_head(h.last_hidden_state[:, 0, :])[:, 1].float() + itc

    def dual_view(self) -> DualView:
        """ITC: normalised ``vision_proj`` / ``text_proj`` of the [CLS] tokens (retrieval's pre-selection)."""
        return DualView(f"{self.name}:itc", lambda ims: self._itc_image(self._image_embeds(ims)).cpu(),
                        lambda txt: self._itc_text(self.tokens(txt)).cpu(), self.image_batch,
                        self.text_batch)


def build_blip(name: str, spec: dict[str, Any], device: torch.device) -> ImageTextScorer:
    from transformers import BlipForImageTextRetrieval

    model = load_hf_model(BlipForImageTextRetrieval, name, spec["path"])
    tok_dir = spec["tokenizer"] or spec["path"]
    tok = load_hf_tokenizer(name, tok_dir, "tokenizer" if spec["tokenizer"] else "path",
                            int(model.config.text_config.vocab_size))
    enc = None
    if spec["itm_first_token"] == "enc":
        if "[ENC]" not in tok.get_vocab():
            raise ValueError(f"{tok_dir}: tokenizer of model {name!r} has no [ENC] token (key "
                             "'itm_first_token'=enc; cls gives transformers' behaviour)")
        enc = int(tok.convert_tokens_to_ids("[ENC]"))
    return BlipScorer(name, model, tok, max_length=spec["max_length"], enc_token_id=enc,
                      k_test=spec["k_test"], pair_batch=spec["pair_batch"], image_batch=spec["image_batch"],
                      text_batch=spec["text_batch"], device=device)


ZOO.add("blip", Family(
    {**hf_keys(), "max_length": Key(INT, default=35, positive=True),
     "itm_first_token": Key(STR, default="enc", choices=("enc", "cls")),
     "k_test": Key(INT, default=128, positive=True)},
    build_blip, "BLIP ITM + ITC cross scorer (HF BlipForImageTextRetrieval)"))
