"""Nearest-neighbour hard images (NegCLIP, App. C.2)."""

from __future__ import annotations

import torch


def nearest_images(features: torch.Tensor, k: int, *, chunk: int = 2048) -> torch.Tensor:
    """Indices [N, k] of the k most cosine-similar other images for each image.

    ``features`` are L2-normalised [N, D]. The image itself is excluded (AMBIGUOUS in the paper: whether
    near-duplicates are excluded too is not stated; we exclude only the identical index). Ties in similarity
    go to the lower index (``torch.topk`` on a stable sort of the chunk).
    """
    n = features.shape[0]
    if not 1 <= k < n:
        raise ValueError(f"k_images={k}: must be between 1 and the number of images minus one ({n - 1})")
    out = torch.empty(n, k, dtype=torch.long)
    for s in range(0, n, chunk):
        sim = features[s : s + chunk] @ features.T  # [c, N]
        rows = torch.arange(sim.shape[0])
        sim[rows, rows + s] = float("-inf")
        order = torch.sort(sim, dim=1, descending=True, stable=True).indices
        out[s : s + chunk] = order[:, :k]
    return out
