"""Generate world splits: images (uint8 array), scene graphs (JSONL) and captions (Karpathy-style JSON).

The caption file uses the COCO Karpathy test format (a list of ``{"image": key, "caption": [...]}``) so the
same loader reads the toy splits and the real annotation files of the paper profile.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..io import write_json, write_jsonl, write_npy
from ..seeding import np_rng
from .captions import CaptionConfig, captions_for
from .render import render
from .scene import Scene, WorldConfig, sample_scene


@dataclass(frozen=True)
class SplitSpec:
    """One split of the world: what it stands for in the papers, how many images, which caption style."""

    name: str
    n_images: int
    style: str  # web | coco | flickr
    stands_for: str = ""

    def __post_init__(self) -> None:
        if self.n_images < 1:
            raise ValueError(f"world.splits.{self.name}.n_images={self.n_images}: must be >= 1")
        if self.style not in ("web", "coco", "flickr"):
            raise ValueError(f"world.splits.{self.name}.style={self.style!r}: must be web, coco or flickr")


def generate_split(
    spec: SplitSpec, wcfg: WorldConfig, ccfg: CaptionConfig, seed: int
) -> tuple[np.ndarray, list[Scene], list[dict]]:
    """Sample, render and caption one split. Scene and caption randomness use separate streams."""
    scene_rng = np_rng(seed, "world", spec.name, "scenes")
    cap_rng = np_rng(seed, "world", spec.name, "captions")
    images = np.empty((spec.n_images, wcfg.image_size, wcfg.image_size, 3), dtype=np.uint8)
    scenes, annotations = [], []
    for i in range(spec.n_images):
        scene = sample_scene(scene_rng, wcfg, f"{spec.name}/{i:06d}")
        images[i] = render(scene, wcfg.image_size)
        scenes.append(scene)
        annotations.append({"image": scene.image_id, "caption": captions_for(cap_rng, scene, ccfg, spec.style)})
    return images, scenes, annotations


def write_split(out_dir: str | Path, images: np.ndarray, scenes: list[Scene], annotations: list[dict]) -> None:
    out = Path(out_dir)
    write_npy(out / "images.npy", images)
    write_jsonl(out / "scenes.jsonl", (s.to_record() for s in scenes))
    write_json(out / "captions.json", annotations)


def _generate_and_write(args: tuple) -> dict:
    spec, wcfg, ccfg, seed, out_dir = args
    images, scenes, ann = generate_split(spec, wcfg, ccfg, seed)
    write_split(Path(out_dir) / spec.name, images, scenes, ann)
    return {"n_images": len(ann), "n_captions": sum(len(a["caption"]) for a in ann), "style": spec.style,
            "stands_for": spec.stands_for}


def generate_world(specs: list[SplitSpec], wcfg: WorldConfig, ccfg: CaptionConfig, seed: int, out_dir: str | Path,
                   workers: int = 1) -> dict[str, dict]:
    """Generate and write every split (in ``workers`` processes; each split has its own seeded streams, so the
    files are byte-identical whatever the number of workers). Returns a summary per split."""
    jobs = [(spec, wcfg, ccfg, seed, str(out_dir)) for spec in specs]
    if workers <= 1:
        results = [_generate_and_write(j) for j in jobs]
    else:
        from concurrent.futures import ProcessPoolExecutor

        # largest splits first so the two workers finish together
        order = sorted(range(len(jobs)), key=lambda i: -specs[i].n_images)
        with ProcessPoolExecutor(max_workers=workers) as pool:
            done = dict(zip(order, pool.map(_generate_and_write, [jobs[i] for i in order]), strict=True))
        results = [done[i] for i in range(len(jobs))]
    return {spec.name: r for spec, r in zip(specs, results, strict=True)}
