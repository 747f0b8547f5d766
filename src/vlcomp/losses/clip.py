"""The CLIP contrastive loss (Radford et al., 2021; open_clip ``ClipLoss``)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..train.batch import Features
from . import LOSSES


def image_captions(f: Features, loss: str) -> tuple[torch.Tensor, torch.Tensor]:
    """``(images [N, D], captions [N, D])``: every image row and the ``captions`` block, caption i owned by
    image row i (the layout every sampler writes), or ValueError naming the loss and what is wrong."""
    if "captions" not in f.texts:
        raise ValueError(f"{loss} loss: the batch has no 'captions' text block (blocks: {sorted(f.texts)})")
    images, captions = f.image_rows(), f.texts["captions"]
    n = images.shape[0]
    if captions.ndim != 2 or captions.shape[0] != n:
        raise ValueError(f"{loss} loss needs one caption per image row, got captions {tuple(captions.shape)} for "
                         f"{n} image rows")
    owner = f.owner["captions"]
    if not torch.equal(owner, torch.arange(n, device=owner.device)):
        raise ValueError(f"{loss} loss: caption i must belong to image row i")
    return images, captions


@LOSSES.register("clip")
class ClipLoss(nn.Module):
    """Symmetric InfoNCE over a square batch: ½[CE(image→text) + CE(text→image)].

    ``logits_per_image`` is ``[N, N]`` = ``logit_scale · I Tᵀ`` over the image rows and the ``captions`` block;
    the true pairs are on the diagonal. Other blocks (negatives, positives) are ignored.
    """

    def forward(self, f: Features) -> dict[str, torch.Tensor]:
        images, captions = image_captions(f, "clip")
        logits = f.logit_scale * images @ captions.T  # [N, N]
        labels = torch.arange(images.shape[0], device=logits.device)
        loss = 0.5 * (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels))
        return {"contrastive_loss": loss}
