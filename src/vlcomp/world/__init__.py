"""The toy world: scene graphs, rendering and caption styles (stands in for COCO, Flickr30k, VG, web data)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..config import build, section
from ..io import read_json, read_jsonl, read_npy
from .captions import CaptionConfig
from .generate import SplitSpec
from .scene import Scene, WorldConfig


def world_configs(params: dict[str, Any]) -> tuple[WorldConfig, CaptionConfig, list[SplitSpec]]:
    w = dict(section(params, "world"))
    caps = w.pop("captions", {})
    splits = w.pop("splits", None)
    if not splits:
        raise ValueError("params: world.splits is missing or empty")
    specs = []
    for name, spec in splits.items():
        if not isinstance(spec, dict):
            raise ValueError(f"params: world.splits.{name} must be a mapping")
        specs.append(build(SplitSpec, {"name": name, **spec}, f"world.splits.{name}"))
    return build(WorldConfig, w, "world"), build(CaptionConfig, caps, "world.captions"), specs


class Split:
    """A split on disk: images (uint8 [N, H, W, 3]), scene graphs and captions, read lazily.

    Toy profile: generated ``images.npy`` and ``scenes.jsonl``. Real profile: ``index.json`` (written by
    :mod:`vlcomp.profiles.real.world`) points at real image files, decoded on indexing (:class:`vlcomp.formats.images.ImageFiles`);
    a real split has captions but no scene graphs.
    """

    def __init__(self, root: str | Path, name: str) -> None:
        self.dir = Path(root) / name
        self.name = name
        if not self.dir.is_dir():
            raise FileNotFoundError(f"{self.dir}: split {name!r} not found (run the world stage)")
        self._images: np.ndarray | None = None

    @property
    def is_indexed(self) -> bool:
        """True for a real-profile split (real image files listed in ``index.json``)."""
        return (self.dir / "index.json").exists()

    @property
    def images(self) -> np.ndarray:
        if self._images is None and self.is_indexed:
            from ..formats.images import ImageFiles

            index = read_json(self.dir / "index.json")
            for key in ("image_root", "images", "image_size"):
                if key not in index:
                    raise ValueError(f"{self.dir / 'index.json'}: missing field {key!r} (rerun the world stage)")
            self._images = ImageFiles([Path(index["image_root"]) / p for p in index["images"]], index["image_size"])
        if self._images is None:
            arr = read_npy(self.dir / "images.npy", dtype="uint8", ndim=4)
            if arr.shape[-1] != 3:
                raise ValueError(f"{self.dir / 'images.npy'}: expected RGB images [N, H, W, 3], got {arr.shape}")
            self._images = arr
        return self._images

    def annotations(self) -> list[dict]:
        from ..formats.karpathy import validate_karpathy

        path = self.dir / "captions.json"
        return validate_karpathy(read_json(path), path)

    def captions(self) -> list[list[str]]:
        return [a["caption"] for a in self.annotations()]

    def twins(self) -> list[list[int]]:
        """Binding twin pairs ``[i, j]`` of image indices (``SplitSpec.twin_prob``); empty when the split has none."""
        path = self.dir / "twins.json"
        if not path.exists():
            return []
        pairs = read_json(path)
        n = len(self.annotations())
        if not isinstance(pairs, list):
            raise ValueError(f"{path}: expected a JSON list of [i, j] pairs")
        seen: set[int] = set()
        for k, pair in enumerate(pairs):
            if (not isinstance(pair, list) or len(pair) != 2 or not all(isinstance(i, int) for i in pair)
                    or not all(0 <= i < n for i in pair) or pair[0] == pair[1]):
                raise ValueError(f"{path}: pair {k} must be two distinct image indices in [0, {n}), got {pair!r}")
            if seen & set(pair):
                raise ValueError(f"{path}: pair {k} {pair!r} reuses an image of an earlier pair")
            seen |= set(pair)
        return pairs

    def scenes(self) -> list[Scene]:
        path = self.dir / "scenes.jsonl"
        if self.is_indexed:
            raise ValueError(f"{self.dir}: split {self.name!r} is a real dataset index (real profile); "
                             "it has captions but no scene graphs")
        return [Scene.from_record(r, f"{path}:{i + 1}") for i, r in enumerate(read_jsonl(path))]
