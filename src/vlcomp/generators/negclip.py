"""NegCLIP mining: swap-based negative captions for every caption, and K nearest-neighbour hard images."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from . import GENERATORS, Generator
from .knn import nearest_images


@dataclass(frozen=True)
class NegClipMineConfig:
    """``mine.negclip`` in params.yaml."""

    split: str
    max_negatives: int = 5
    k_images: int = 3
    device: str = "auto"  # where the hard-image features are computed (cuda when available, else cpu)

    def __post_init__(self) -> None:
        if self.max_negatives < 1:
            raise ValueError(f"mine.negclip.max_negatives={self.max_negatives}: must be >= 1")
        if self.k_images < 1:
            raise ValueError(f"mine.negclip.k_images={self.k_images}: must be >= 1")


def mine_captions(captions: list[list[str]], nlp, rng: np.random.Generator, max_negatives: int,
                  docs=None) -> list[list[list[str]]]:
    """Negatives per caption, shaped like ``captions`` (a list per image of a list per caption); ``docs``: the
    flattened captions' parses, when saved (otherwise ``nlp`` parses them)."""
    from ..text.negclip_swaps import mine_negatives

    flat = [c for caps in captions for c in caps]
    negs = mine_negatives(flat, rng, nlp, docs=docs, max_negatives=max_negatives)
    out, k = [], 0
    for caps in captions:
        out.append([list(n) for n in negs[k : k + len(caps)]])
        k += len(caps)
    return out


def mine_images(image_features: torch.Tensor, k: int) -> np.ndarray:
    return nearest_images(image_features, k).numpy()


def run(cfg: NegClipMineConfig, *, world, model, nlp, seed: int, out_dir, parsed=None) -> dict:
    """Mine negatives for every caption of ``cfg.split`` and the K nearest images; write them to ``out_dir``.

    Files: ``negatives.json`` (per image, per caption, a list of negative captions; empty when none) and
    ``hard_images.npy`` (int [n_images, K], indices into the same split).
    """
    from ..io import write_json, write_npy
    from ..models.encode import encode_images
    from ..seeding import np_rng
    from ..world import Split

    split = Split(world, cfg.split)
    captions = split.captions()
    docs = None
    if parsed is not None:
        from ..text.parsed import read_parses

        docs = read_parses(parsed, nlp, [c for caps in captions for c in caps])
    negatives = mine_captions(captions, nlp, np_rng(seed, "mine", "negclip", "captions"), cfg.max_negatives, docs)
    knn = mine_images(encode_images(model, split.images), cfg.k_images)
    write_json(out_dir / "negatives.json", negatives)
    write_npy(out_dir / "hard_images.npy", knn.astype(np.int64))
    counts = [len(n) for caps in negatives for n in caps]
    return {
        "mine/negclip/n_captions": len(counts),
        "mine/negclip/captions_with_negative": sum(c > 0 for c in counts),
        "mine/negclip/mean_negatives": float(np.mean(counts)) if counts else 0.0,
    }


GENERATORS.add("negclip", Generator(NegClipMineConfig, run, writes=("negatives", "hard_images")))
