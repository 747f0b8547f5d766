"""Generate world splits: images (uint8 array), scene graphs (JSONL) and captions (Karpathy-style JSON).

The caption file uses the COCO Karpathy test format (a list of ``{"image": key, "caption": [...]}``) so the
same loader reads the toy splits and the real annotation files of the real profile.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..io import write_json, write_jsonl, write_npy
from ..seeding import np_rng
from .captions import CaptionConfig, captions_for, pair_caption
from .render import render
from .scene import Scene, WorldConfig, _boxes_overlap, compute_relations, sample_scene


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

    twin_layout_share: float = 0.0
    """Share of the twin pairs that are *layout twins* instead: two objects trade places (each keeps its look), so
    the relations between them reverse, and both (web) captions state a relation between those two objects. Only
    for scenes of separated objects without arrows; other scenes get a colour twin. 0 (the default): no layout
    twins, and no extra random number is drawn, so the split is the one generated before this knob existed."""

    captions: dict | None = None
    """Overrides of ``world.captions`` for this split alone (keys of :class:`CaptionConfig`), e.g. a web-style
    corpus whose alt-texts bind attributes and state relations more often than the pretraining text (the CC3M
    twin). None (the default): the shared knobs, and the split is the one generated before this key existed."""

    def __post_init__(self) -> None:
        if self.captions is not None:
            from dataclasses import fields

            if not isinstance(self.captions, dict):
                raise ValueError(f"world.splits.{self.name}.captions={self.captions!r}: must be a mapping of "
                                 "world.captions keys")
            known = {f.name for f in fields(CaptionConfig)}
            unknown = sorted(set(self.captions) - known)
            if unknown:
                raise ValueError(f"world.splits.{self.name}.captions: unknown key(s) {unknown}; known: "
                                 f"{sorted(known)}")
        if self.n_images < 1:
            raise ValueError(f"world.splits.{self.name}.n_images={self.n_images}: must be >= 1")
        for name in ("twin_prob", "twin_layout_share"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v <= 1:
                raise ValueError(f"world.splits.{self.name}.{name}={v!r}: must be in [0, 1]")
        if self.style not in ("web", "coco", "flickr"):
            raise ValueError(f"world.splits.{self.name}.style={self.style!r}: must be web, coco or flickr")


def colour_twin(scene: Scene, i: int, j: int, image_id: str) -> Scene:
    """The scene with the colours of objects ``i`` and ``j`` swapped. Relations depend on geometry, shape and
    state, not colour, so the scene graph's relations carry over unchanged."""
    objs = [replace(o) for o in scene.objects]
    objs[i].colour, objs[j].colour = scene.objects[j].colour, scene.objects[i].colour
    return Scene(image_id, scene.background, objs, list(scene.relations))


def layout_twin(scene: Scene, i: int, j: int, image_id: str, wcfg: WorldConfig) -> Scene | None:
    """The scene with objects ``i`` and ``j`` trading places (each keeps its look and size), so the relations
    between them reverse. None when that would not be a valid scene of separated objects: an arrow in the scene
    (its heading would no longer point where it did), overlapping boxes before or after, or an object pushed out
    of the image."""
    if any(o.shape == "arrow" for o in scene.objects):
        return None
    objs = [replace(o) for o in scene.objects]
    objs[i].x, objs[i].y = scene.objects[j].x, scene.objects[j].y
    objs[j].x, objs[j].y = scene.objects[i].x, scene.objects[i].y
    s = wcfg.image_size
    if any(o.box[0] < 0 or o.box[1] < 0 or o.box[2] > s or o.box[3] > s for o in objs):
        return None
    for objects in (scene.objects, objs):
        if any(_boxes_overlap(a, b) > 0 for k, a in enumerate(objects) for b in objects[k + 1 :]):
            return None
    return Scene(image_id, scene.background, objs, compute_relations(objs, wcfg))


def generate_split(
    spec: SplitSpec, wcfg: WorldConfig, ccfg: CaptionConfig, seed: int
) -> tuple[np.ndarray, list[Scene], list[dict], list[list[int]]]:
    """Sample, render and caption one split. Scene and caption randomness use separate streams (twin pairs use a
    third, drawn only when ``spec.twin_prob`` > 0). Returns images, scenes, annotations and the twin pairs."""
    if spec.captions:
        try:
            ccfg = replace(ccfg, **spec.captions)
        except ValueError as e:
            raise ValueError(f"world.splits.{spec.name}.captions: {e}") from None
    scene_rng = np_rng(seed, "world", spec.name, "scenes")
    cap_rng = np_rng(seed, "world", spec.name, "captions")
    twin_rng = np_rng(seed, "world", spec.name, "twins") if spec.twin_prob > 0 else None
    bound = replace(ccfg, web_bind_prob=1.0, web_relation_prob=0.0)
    images = np.empty((spec.n_images, wcfg.image_size, wcfg.image_size, 3), dtype=np.uint8)
    scenes, annotations, twins = [], [], []
    i = 0
    while i < spec.n_images:
        scene = sample_scene(scene_rng, wcfg, f"{spec.name}/{i:06d}", web=spec.style == "web")
        pair = (twin_rng is not None and i + 1 < spec.n_images and len(scene.objects) >= 2
                and twin_rng.random() < spec.twin_prob)
        swapped = None  # the two objects of a layout twin pair
        if pair:
            a, b = (int(k) for k in twin_rng.choice(len(scene.objects), size=2, replace=False))
            twin_id = f"{spec.name}/{i + 1:06d}"
            # the share is drawn only when it is on, so twin_layout_share = 0 leaves the colour twins unchanged
            twin = (layout_twin(scene, a, b, twin_id, wcfg)
                    if spec.twin_layout_share > 0 and twin_rng.random() < spec.twin_layout_share else None)
            swapped = (a, b) if twin is not None else None
            group = [scene, twin if twin is not None else colour_twin(scene, a, b, twin_id)]
            twins.append([i, i + 1])
        else:
            group = [scene]
        for sc in group:
            images[i] = render(sc, wcfg.image_size)
            scenes.append(sc)
            caps = ([pair_caption(cap_rng, sc, *swapped, bound)] if swapped is not None and spec.style == "web"
                    else captions_for(cap_rng, sc, bound if pair else ccfg, spec.style))
            annotations.append({"image": sc.image_id, "caption": caps})
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
