"""CyCLIP's cyclic-consistency regularisers (Goel et al., "CyCLIP: Cyclic Contrastive Language-Image Pretraining",
NeurIPS 2022; the authors' ``src/train.py::get_loss``), and the ``cyclip`` loss: the CLIP loss plus both.

Over the N image rows ``I`` and their captions ``T`` (L2-normalised; caption i of image row i):

- ``inmodal_cyclic_loss`` = λ₁ · N · mean_{j,k} (⟨I_j, I_k⟩ − ⟨T_j, T_k⟩)²: the image-image and text-text similarity
  matrices agree;
- ``crossmodal_cyclic_loss`` = λ₂ · N · mean_{j,k} (⟨I_j, T_k⟩ − ⟨I_k, T_j⟩)²: the image-text similarity matrix is
  symmetric.

The reference computes both on logits (``s · I Iᵀ`` ...) and divides by ``s²``: the logit scale cancels, so the
terms are on cosines, as here. Its ``· batch_size`` factor (the mean over N² entries times N) is kept. λ₁ = λ₂ =
0.25, the CyCLIP paper's weights (TSVLC's Table 1e-f add "all extra CyCLIP losses" to Eq. 6: catalog tsvlc.md §3.2;
the TSVLC ``tsvlc`` loss takes the same terms through its ``cyclic`` argument, :func:`cyclic_terms`).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..train.batch import Features
from . import LOSSES
from .clip import image_captions

CYCLIP_WEIGHTS = (0.25, 0.25)
"""(λ₁ in-modal, λ₂ cross-modal): the CyCLIP paper's weights."""


def check_weights(weights, loss: str) -> tuple[float, float]:
    """``(λ₁, λ₂)`` checked: two numbers >= 0."""
    try:
        inmodal, crossmodal = (float(w) for w in weights)
    except (TypeError, ValueError):
        raise ValueError(f"{loss} loss: cyclic weights={weights!r} must be two numbers (in-modal, cross-modal)") from None
    if inmodal < 0 or crossmodal < 0:
        raise ValueError(f"{loss} loss: cyclic weights={weights!r} must be >= 0")
    return inmodal, crossmodal


def cyclic_terms(images: torch.Tensor, captions: torch.Tensor, weights: tuple[float, float] = CYCLIP_WEIGHTS
                 ) -> dict[str, torch.Tensor]:
    """``{"inmodal_cyclic_loss", "crossmodal_cyclic_loss"}`` of ``images [N, D]`` and ``captions [N, D]`` (row i a
    pair), each already multiplied by its weight."""
    n = images.shape[0]
    cross = images @ captions.T  # [N, N]: <I_j, T_k>
    inmodal = (images @ images.T - captions @ captions.T).square().mean() * n
    crossmodal = (cross - cross.T).square().mean() * n
    return {"inmodal_cyclic_loss": weights[0] * inmodal, "crossmodal_cyclic_loss": weights[1] * crossmodal}


@LOSSES.register("cyclip")
class CyclipLoss(nn.Module):
    """The CLIP loss (``contrastive_loss``: ½[CE(image→text) + CE(text→image)]) plus the two cyclic terms."""

    def __init__(self, inmodal: float = CYCLIP_WEIGHTS[0], crossmodal: float = CYCLIP_WEIGHTS[1]) -> None:
        super().__init__()
        self.weights = check_weights((inmodal, crossmodal), "cyclip")

    def extra_repr(self) -> str:
        return f"inmodal={self.weights[0]}, crossmodal={self.weights[1]}"

    def forward(self, f: Features) -> dict[str, torch.Tensor]:
        images, captions = image_captions(f, "cyclip")
        logits = f.logit_scale * images @ captions.T
        labels = torch.arange(images.shape[0], device=logits.device)
        out = {"contrastive_loss": 0.5 * (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels))}
        return out | cyclic_terms(images, captions, self.weights)
