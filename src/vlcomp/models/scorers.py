"""The scoring contract every evaluated model meets (toy tiny CLIPs and the real profile's real models).

A benchmark never touches a model directly; it asks an :class:`ImageTextScorer` for scores:

- ``kind == "dual"`` (CLIP-style: CLIP, NegCLIP, CE-CLIP, CoN-CLIP, TSVLC): images and texts are encoded
  independently, so a benchmark encodes every *unique* image and caption once (``encode_images`` /
  ``encode_texts``, rows L2-normalised) and scores by dot product (cosine). Multiplying by
  ``logit_scale.exp()`` (VL-CheckList's code does) never changes a comparison, so it is left out.
- ``kind == "cross"`` (BLIP ITM+ITC, FLAVA ITM): a score needs the pair, so ``score_pairs`` is called on
  aligned lists of images and texts, batched by the caller.

``score_pairs`` exists for both kinds (for a dual encoder it is the cosine of each aligned pair), so a naive
one-item-at-a-time reference loop can be written once for every model. Images are PIL images in RGB; each
scorer applies its own model's preprocessing (224 px bicubic for OpenAI CLIP, 384 px for BLIP, ...).

Cross scorers and ``dual_view()``: a cross scorer may offer ``dual_view()``, returning a ``kind == "dual"``
scorer over the *same* weights' unimodal features (rows L2-normalised, ``score_pairs`` = their cosine), for
the places where the reference code does not run the cross encoder:

- BLIP: the ITC features (``vision_proj`` / ``text_proj`` of the [CLS] tokens). Retrieval keeps each query's
  top ``k_test`` candidates under this view and re-scores them with ``score_pairs`` (ITM + ITC), every other
  entry -100; the scorer says so with ``retrieval_mode = "rerank"`` and its ``k_test`` (128).
- FLAVA: the unimodal ``get_image_features`` / ``get_text_features`` [CLS] embeddings, which is what ARO's
  retrieval tables report (ITM is used for the ARO pair tasks only); ``retrieval_mode = "dual_view"``.

Dual scorers need no ``dual_view``. The real profile builds every scorer from its ``params.yaml`` spec with
:func:`vlcomp.profiles.real.zoo.build_scorer`; the open_clip families (CLIP, NegCLIP, CE-CLIP, CoN-CLIP, TSVLC)
are :class:`OpenClipScorer` instances, BLIP and FLAVA are ``zoo.BlipScorer`` / ``zoo.FlavaScorer``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, Protocol, runtime_checkable

import torch


@runtime_checkable
class ImageTextScorer(Protocol):
    name: str
    kind: Literal["dual", "cross"]

    def encode_images(self, images: Sequence) -> torch.Tensor:
        """[N, D] float32, rows L2-normalised (dual encoders only)."""

    def encode_texts(self, texts: Sequence[str]) -> torch.Tensor:
        """[N, D] float32, rows L2-normalised (dual encoders only)."""

    def score_pairs(self, images: Sequence, texts: Sequence[str]) -> torch.Tensor:
        """[N] float32: the score of image i with text i (higher = better match)."""


class OpenClipScorer:
    """An open_clip model (any architecture, any weights) behind the scoring contract.

    ``preprocess`` is open_clip's eval transform for the model (Resize + CenterCrop + normalise, bicubic for
    OpenAI configs); ``tokenizer`` is ``open_clip.get_tokenizer(arch)`` or the toy world tokenizer.

    ``channels_last``: hand the image tower its batch in channels-last memory order (the model's weights are
    left as they are). ~1.3x faster image encoding of the toy ResNets on this CPU, but NOT bitwise: the
    convolutions take another kernel, so ResNet features move in the last bits (<= 3e-7 on L2-normalised toy-rn16
    features, with or without the CPU pin; ViT towers are unchanged). Off by default, so evaluation outputs stay
    what they were (``perf/results/issue13_speed.md``).
    """

    kind: Literal["dual"] = "dual"

    def __init__(self, name: str, model: torch.nn.Module, preprocess: Callable, tokenizer: Callable, *,
                 device: str | torch.device = "cpu", image_batch: int = 64, text_batch: int = 256,
                 channels_last: bool = False) -> None:
        self.name = name
        self.model = model.eval().to(device)
        self.preprocess = preprocess
        self.tokenizer = tokenizer
        self.device = torch.device(device)
        self.image_batch = image_batch
        self.text_batch = text_batch
        self.channels_last = channels_last

    def preprocess_images(self, images: Sequence) -> torch.Tensor:
        """``[N, 3, S, S]``: the model's own preprocessing of each image (what an image perturbation acts on)."""
        return torch.stack([self.preprocess(im) for im in images])

    @torch.no_grad()
    def encode_image_tensor(self, x: torch.Tensor) -> torch.Tensor:
        """L2-normalised features of an already preprocessed batch ``[N, 3, S, S]``."""
        x = x.to(self.device, memory_format=torch.channels_last) if self.channels_last else x.to(self.device)
        return torch.nn.functional.normalize(self.model.encode_image(x).float(), dim=-1).cpu()

    @torch.no_grad()
    def encode_images(self, images: Sequence) -> torch.Tensor:
        feats = [self.encode_image_tensor(self.preprocess_images(images[s : s + self.image_batch]))
                 for s in range(0, len(images), self.image_batch)]
        return torch.cat(feats) if feats else torch.zeros(0, 0)

    @torch.no_grad()
    def encode_texts(self, texts: Sequence[str]) -> torch.Tensor:
        from .encode import encode_text_tokens

        feats = []
        for s in range(0, len(texts), self.text_batch):
            tokens = self.tokenizer(list(texts[s : s + self.text_batch])).to(self.device)
            feats.append(torch.nn.functional.normalize(encode_text_tokens(self.model, tokens).float(), dim=-1).cpu())
        return torch.cat(feats) if feats else torch.zeros(0, 0)

    @torch.no_grad()
    def score_pairs(self, images: Sequence, texts: Sequence[str]) -> torch.Tensor:
        if len(images) != len(texts):
            raise ValueError(f"score_pairs: {len(images)} images but {len(texts)} texts")
        return (self.encode_images(images) * self.encode_texts(texts)).sum(dim=1)


def toy_preprocess(size: int) -> Callable:
    """The toy profile's own image preprocessing: the whole image (or crop) squashed to ``size`` x ``size``
    (bilinear, antialiased) and CLIP-normalised - no centre crop, which would cut wide union boxes of VG crops.
    Takes a PIL image or a uint8 ``[H, W, 3]`` array."""
    import numpy as np

    from .factory import to_tensor

    def preprocess(image) -> torch.Tensor:
        arr = np.array(image.convert("RGB") if hasattr(image, "convert") else image, dtype=np.uint8)  # writable copy
        return to_tensor(arr[None], size)[0]

    return preprocess


def toy_scorer(name: str, model: torch.nn.Module, tokenizer: Callable, *, device: str | torch.device = "cpu",
               image_batch: int = 256, text_batch: int = 1024, channels_last: bool = False) -> OpenClipScorer:
    """A toy-profile model (tiny open_clip CLIP, world tokenizer) behind the scoring contract, with the toy's own
    preprocessing (:func:`toy_preprocess`). ``channels_last``: see :class:`OpenClipScorer` (faster, not bitwise)."""
    from .factory import image_size

    return OpenClipScorer(name, model, toy_preprocess(image_size(model)), tokenizer, device=device,
                          image_batch=image_batch, text_batch=text_batch, channels_last=channels_last)
