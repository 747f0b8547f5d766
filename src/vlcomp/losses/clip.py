"""The CLIP contrastive loss (Radford et al., 2021; open_clip ``ClipLoss``)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from . import LOSSES


@LOSSES.register("clip")
class ClipLoss(nn.Module):
    """Symmetric InfoNCE over a square batch: ½[CE(image→text) + CE(text→image)].

    ``logits_per_image`` is ``[N, N]`` = ``logit_scale · I Tᵀ``; the true pairs are on the diagonal.
    """

    def forward(self, *, image_features: torch.Tensor, text_features: torch.Tensor,
                logit_scale: torch.Tensor, **_: object) -> dict[str, torch.Tensor]:
        n = image_features.shape[0]
        if text_features.shape[0] != n:
            raise ValueError(f"clip loss needs as many texts as images, got {text_features.shape[0]} vs {n}")
        logits = logit_scale * image_features @ text_features.T  # [N, N]
        labels = torch.arange(n, device=logits.device)
        loss = 0.5 * (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels))
        return {"contrastive_loss": loss}
