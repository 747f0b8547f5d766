"""The NegCLIP loss (Yuksekgonul et al., ICLR 2023, §4 and the authors' open_clip fork).

Blocks: the image rows ``[N, D]`` (with NN hard images, ``[I; I']``, N = 2B), ``captions`` ``[N, D]`` (caption i
of image row i) and, optionally, ``negatives`` ``[R, K, D]`` with a validity mask: hard negative captions with no
image of their own. The text columns are ``[captions; negatives flattened]`` (M = N + R·K; the fork's
``[T; T'; T⁻; T'⁻]`` for K = 1).

- image→text: ``logits_per_image`` is ``[N, M]``; CE over all M columns (masked negative slots excluded),
  labels ``arange(N)``.
- text→image: only the N caption rows of ``logits_per_text`` (``[N, N]``); a negative caption has no
  matching image, so there is no text→image term for the negative columns.
- ``L = ½ (L_i2t + L_t2i)``, no extra weight on the negatives.

Diagnostic ``hard_negative_acc``: how often an image row scores its own caption above one of its own negatives
(over valid negative slots).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..train.batch import Features
from . import LOSSES
from .clip import image_captions


@LOSSES.register("negclip")
class NegClipLoss(nn.Module):
    def forward(self, f: Features) -> dict[str, torch.Tensor]:
        images, captions = image_captions(f, "negclip")
        n = images.shape[0]
        if "negatives" not in f.texts:
            texts, valid, neg_owner = captions, None, None
        else:
            negs, neg_owner, valid = f.flat("negatives")
            texts = torch.cat([captions, negs])
        logits_per_image = f.logit_scale * images @ texts.T  # [N, M]
        logits_per_text = logits_per_image[:, :n].T  # [N, N]: caption rows only
        if valid is not None:  # masked slots leave the softmax
            keep = torch.cat([torch.ones(n, dtype=torch.bool, device=valid.device), valid])
            logits_per_image = logits_per_image.masked_fill(~keep, float("-inf"))
        labels = torch.arange(n, device=logits_per_image.device)
        loss = 0.5 * (F.cross_entropy(logits_per_image, labels) + F.cross_entropy(logits_per_text, labels))
        out = {"contrastive_loss": loss}
        if neg_owner is not None:
            cols = torch.arange(n, n + neg_owner.shape[0], device=neg_owner.device)
            pos, neg = logits_per_image[neg_owner, neg_owner], logits_per_image[neg_owner, cols]
            hit = (pos > neg).float()
            out["hard_negative_acc"] = (hit.mean() if valid is None else hit[valid].mean()).detach()
        return out
