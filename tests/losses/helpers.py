"""Features for loss tests, built from the flat layout the losses used to take: images ``[N, D]`` and texts
``[M, D]``, the first N the captions of the N images, the other M - N hard negatives (a ``negatives`` block of
width 1; negative j belongs to image row ``j mod N``, so text ``N + i`` is image i's negative when M = 2N)."""

from __future__ import annotations

import numpy as np
import torch

from vlcomp.train.batch import Batch, TextBlock, features


def blocks(images: torch.Tensor, captions: torch.Tensor, negatives: torch.Tensor | None = None,
           scale: torch.Tensor | float = 1.0, *, owner: list[int] | None = None, mask: np.ndarray | None = None,
           image_blocks: dict[str, int] | None = None):
    """Features with image blocks (default one block ``images``), ``captions`` [N, D] and optionally
    ``negatives`` [R, K, D] (owner: ``owner`` or ``arange(R) mod N``; ``mask`` bool [R, K])."""
    n = images.shape[0]
    sizes = image_blocks or {"images": n}
    cuts = dict(zip(sizes, torch.split(images, list(sizes.values())), strict=True))
    texts = {"captions": TextBlock(["t"] * captions.shape[0], np.arange(captions.shape[0]))}
    feats = {"captions": captions}
    if negatives is not None:
        r, k = negatives.shape[0], negatives.shape[1]
        own = np.asarray(owner if owner is not None else np.arange(r) % n)
        texts["negatives"] = TextBlock(["t"] * (r * k), own, k, mask)
        feats["negatives"] = negatives
    batch = Batch({name: np.zeros(s, dtype=np.int64) for name, s in sizes.items()}, texts)
    scale = scale if isinstance(scale, torch.Tensor) else torch.tensor(scale)
    return features(batch, cuts, feats, scale)


def flat(images: torch.Tensor, texts: torch.Tensor, scale: torch.Tensor | float):
    """The old flat layout (see the module docstring) as Features."""
    n = images.shape[0]
    negs = texts[n:]
    return blocks(images, texts[:n], negs[:, None, :] if len(negs) else None, scale)
