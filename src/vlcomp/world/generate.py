"""Generate world splits: images (uint8 array), scene graphs (JSONL) and captions (Karpathy-style JSON).

The caption file uses the COCO Karpathy test format (a list of ``{"image": key, "caption": [...]}``) so the
same loader reads the toy splits and the real annotation files of the paper profile.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
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
    twin_prob: float = 0.0
    """Probability that a sampled scene comes with a *binding twin* (so about 2p/(1+p) of the images are in
    pairs): its copy with two objects' colours swapped, both with captions that bind colours to shapes. The pair is listed in ``twins.json`` and the
    pretraining sampler keeps it in one batch, so those captions can only be told apart by binding. This is the
    world's handle on "how often does web pretraining need binding" (0 = never; the split is then unchanged)."""

    def __post_init__(self) -> None:
        if self.n_images < 1:
            raise ValueError(f"world.splits.{self.name}.n_images={self.n_images}: must be >= 1")
        if not 0 <= self.twin_prob <= 1:
            raise ValueError(f"world.splits.{self.name}.twin_prob={self.twin_prob}: must be in [0, 1]")
        if self.style not in ("web", "coco", "flickr"):
            raise ValueError(f"world.splits.{self.name}.style={self.style!r}: must be web, coco or flickr")


def colour_twin(scene: Scene, i: int, j: int, image_id: str) -> Scene:
    """The scene with the colours of objects ``i`` and ``j`` swapped. Relations depend on geometry, shape and
    state, not colour, so the scene graph's relations carry over unchanged."""
    objs = [replace(o) for o in scene.objects]
    objs[i].colour, objs[j].colour = scene.objects[j].colour, scene.objects[i].colour
    return Scene(image_id, scene.background, objs, list(scene.relations))


def generate_split(
    spec: SplitSpec, wcfg: WorldConfig, ccfg: CaptionConfig, seed: int
) -> tuple[np.ndarray, list[Scene], list[dict], list[list[int]]]:
    """Sample, render and caption one split. Scene and caption randomness use separate streams (twin pairs use a
    third, drawn only when ``spec.twin_prob`` > 0). Returns images, scenes, annotations and the twin pairs."""
    scene_rng = np_rng(seed, "world", spec.name, "scenes")
    cap_rng = np_rng(seed, "world", spec.name, "captions")
    twin_rng = np_rng(seed, "world", spec.name, "twins") if spec.twin_prob > 0 else None
    bound = replace(ccfg, web_bind_prob=1.0, web_relation_prob=0.0)
    images = np.empty((spec.n_images, wcfg.image_size, wcfg.image_size, 3), dtype=np.uint8)
    scenes, annotations, twins = [], [], []
    i = 0
    while i < spec.n_images:
        scene = sample_scene(scene_rng, wcfg, f"{spec.name}/{i:06d}")
        pair = (twin_rng is not None and i + 1 < spec.n_images and len(scene.objects) >= 2
                and twin_rng.random() < spec.twin_prob)
        if pair:
            a, b = twin_rng.choice(len(scene.objects), size=2, replace=False)
            group = [scene, colour_twin(scene, int(a), int(b), f"{spec.name}/{i + 1:06d}")]
            twins.append([i, i + 1])
        else:
            group = [scene]
        for sc in group:
            images[i] = render(sc, wcfg.image_size)
            scenes.append(sc)
            annotations.append({"image": sc.image_id,
                                "caption": captions_for(cap_rng, sc, bound if pair else ccfg, spec.style)})
            i += 1
    return images, scenes, annotations, twins


def write_split(out_dir: str | Path, images: np.ndarray, scenes: list[Scene], annotations: list[dict],
                twins: list[list[int]] | None = None) -> None:
    out = Path(out_dir)
    write_npy(out / "images.npy", images)
    write_jsonl(out / "scenes.jsonl", (s.to_record() for s in scenes))
    write_json(out / "captions.json", annotations)
    if twins:
        write_json(out / "twins.json", twins)


def _generate_and_write(args: tuple) -> dict:
    spec, wcfg, ccfg, seed, out_dir = args
    images, scenes, ann, twins = generate_split(spec, wcfg, ccfg, seed)
    write_split(Path(out_dir) / spec.name, images, scenes, ann, twins)
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
