"""The NegCLIP loss (Yuksekgonul et al., ICLR 2023, §4 and the authors' open_clip fork).

Images ``[N, D]``; texts ``[M, D]`` with ``M >= N``: the first N texts are the true captions of the N images
(aligned by index), the remaining ``M - N`` are hard negative captions with no image of their own.
With NN hard images the caller lays the batch out as the fork does: images ``[I; I']`` (N = 2B) and texts
``[T; T'; T⁻; T'⁻]`` (M = 4B).

- image→text: ``logits_per_image`` is ``[N, M]``; CE over all M columns, labels ``arange(N)``.
- text→image: only the N true-caption rows of ``logits_per_text`` (``[N, N]``); a negative caption has no
  matching image, so there is no text→image term for columns N..M-1.
- ``L = ½ (L_i2t + L_t2i)``, no extra weight on the negatives.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from . import LOSSES


@LOSSES.register("negclip")
class NegClipLoss(nn.Module):
    def forward(self, *, image_features: torch.Tensor, text_features: torch.Tensor,
                logit_scale: torch.Tensor, **_: object) -> dict[str, torch.Tensor]:
        n, m = image_features.shape[0], text_features.shape[0]
        if m < n:
            raise ValueError(f"negclip loss needs at least as many texts as images, got {m} < {n}")
        logits_per_image = logit_scale * image_features @ text_features.T  # [N, M]
        logits_per_text = logits_per_image[:, :n].T  # [N, N]: true-caption rows only
        labels = torch.arange(n, device=logits_per_image.device)
        loss = 0.5 * (F.cross_entropy(logits_per_image, labels) + F.cross_entropy(logits_per_text, labels))
        out = {"contrastive_loss": loss}
        if m >= 2 * n:
            # diagnostic: how often a caption outscores its own hard negative (text n+i is the negative of i)
            pos = logits_per_image.diagonal()
            neg = logits_per_image[torch.arange(n), torch.arange(n) + n]
            out["hard_negative_acc"] = (pos > neg).float().mean().detach()
        return out
