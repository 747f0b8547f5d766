"""Batched encoding: every unique image and caption is encoded once per model."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch

from .factory import image_size, to_tensor


@torch.no_grad()
def encode_images(model: torch.nn.Module, images: np.ndarray | Sequence[np.ndarray], *, batch_size: int = 256,
                  perturb: Callable[[torch.Tensor], torch.Tensor] | None = None) -> torch.Tensor:
    """L2-normalised image features [N, D]. ``images`` is uint8 [N, H, W, 3] or a list of such arrays of any
    size (crops); each is resized to the model's input. ``perturb`` runs on the preprocessed batch (ARO's
    image shuffles act on the model-preprocessed tensor)."""
    model.eval()
    size = image_size(model)
    feats = []
    for s in range(0, len(images), batch_size):
        chunk = images[s : s + batch_size]
        if isinstance(chunk, np.ndarray):
            x = to_tensor(chunk, size)
        else:
            x = torch.cat([to_tensor(im[None], size) for im in chunk])  # [b, 3, S, S]
        if perturb is not None:
            x = perturb(x)
        f = model.encode_image(x)
        feats.append(torch.nn.functional.normalize(f.float(), dim=-1))
    return torch.cat(feats) if feats else torch.zeros(0, 0)


@torch.no_grad()
def encode_texts(model: torch.nn.Module, tokenizer, texts: Sequence[str], *, batch_size: int = 1024) -> torch.Tensor:
    """L2-normalised text features [N, D]; duplicate strings are encoded once."""
    model.eval()
    uniq = sorted(set(texts))
    index = {t: i for i, t in enumerate(uniq)}
    feats = []
    for s in range(0, len(uniq), batch_size):
        f = model.encode_text(tokenizer(uniq[s : s + batch_size]))
        feats.append(torch.nn.functional.normalize(f.float(), dim=-1))
    if not feats:
        return torch.zeros(0, 0)
    uniq_feats = torch.cat(feats)  # [U, D]
    return uniq_feats[[index[t] for t in texts]]
