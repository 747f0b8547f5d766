"""Injected randomness: every consumer derives its own generator from ``root_seed`` and a stable name."""

from __future__ import annotations

import hashlib

import numpy as np
import torch


def derive_seed(base_seed: int, *names: object) -> int:
    """A stable 63-bit seed from a base seed and a path of names (stage, split, purpose, ...).

    Uses SHA-256 rather than ``hash()`` so the value does not change between processes.
    """
    key = "/".join([str(base_seed), *map(str, names)]).encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "little") & ((1 << 63) - 1)


def np_rng(base_seed: int, *names: object) -> np.random.Generator:
    return np.random.default_rng(derive_seed(base_seed, *names))


def torch_gen(base_seed: int, *names: object) -> torch.Generator:
    return torch.Generator().manual_seed(derive_seed(base_seed, *names))
