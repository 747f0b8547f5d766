"""Collectives behind pure functions: no-ops at world size 1."""

from __future__ import annotations

import torch
import torch.distributed as dist


def world_size() -> int:
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def gather_features(features: torch.Tensor) -> torch.Tensor:
    """Concatenate ``features`` [n, D] from every rank along dim 0, keeping this rank's gradient."""
    if world_size() == 1:
        return features
    parts = [torch.zeros_like(features) for _ in range(world_size())]
    dist.all_gather(parts, features)
    parts[dist.get_rank()] = features
    return torch.cat(parts, dim=0)
