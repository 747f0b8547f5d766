"""BatchNorm running statistics, re-estimated (item 11 of the toy-world issue).

A toy ResNet tower's running statistics are an exponential average (momentum 0.1) of its last training batches, so
eval-mode features depend on which batches came last; re-estimating them as the plain average over a fixed set of
images removes that dependence without touching a weight (``scripts/probe_perception.py``,
``scripts/probe_batchnorm.py``).
"""

from __future__ import annotations

import numpy as np
import torch

from .factory import to_tensor


def batchnorm_layers(module: torch.nn.Module) -> list[torch.nn.modules.batchnorm._BatchNorm]:
    return [m for m in module.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]


@torch.no_grad()
def reestimate_batchnorm(tower: torch.nn.Module, images: np.ndarray, image_size: int, batch_size: int = 256) -> int:
    """Replace every BatchNorm layer's running mean and variance of ``tower`` (a callable on image tensors) by their
    cumulative average (``momentum=None``) over ``images`` (uint8 ``[N, H, W, 3]``) in batches of ``batch_size``:
    the mean of the per-batch means and of the per-batch unbiased variances. Weights and other buffers are
    untouched; the layers are left in eval mode with their momentum restored. Returns the number of layers."""
    layers = batchnorm_layers(tower)
    if not layers:
        return 0
    if batch_size < 2:
        raise ValueError(f"batch_size={batch_size}: BatchNorm needs at least 2 images per batch")
    saved = [m.momentum for m in layers]
    for m in layers:
        m.reset_running_stats()
        m.momentum = None
        m.train()
    for i in range(0, len(images), batch_size):
        tower(to_tensor(images[i:i + batch_size], image_size))
    for m, momentum in zip(layers, saved, strict=True):
        m.momentum = momentum
        m.eval()
    return len(layers)
