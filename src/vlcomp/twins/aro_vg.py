"""VG-Relation and VG-Attribution twins, built from the world's scene graphs with ARO's rules (App. A.1).

Records use the fields of ARO's released ``visual_genome_relation.json`` / ``visual_genome_attribution.json``
(``image_path``, ``bbox_x/y/w/h`` of the union box, ``true_caption``, ``false_caption``, and
``relation_name`` or ``attributes``), so the scorer is the same for the toy and the real profile.

Rules applied:
- size filter: drop an object whose box is narrower than 1/4 of the image width or shorter than 1/4 of its
  height (the boxes of the first world are square; a flat bar's is not, and passes only when large enough,
  ``world.object_scale``);
- VG-R: pairs of objects in a relation and of different categories (shape nouns); template
  "the [object 1] is [relation] [object 2]" vs the swap. One direction per related pair is kept (VG annotates
  a relation once); which one is drawn from the seeded generator. Symmetric relations ("next to") are kept in
  the file and excluded at score time, as the ARO code does with its ``symmetric`` list. The relation files
  (symmetric relations, Table 2 groups) list the relations of the world in use (``WorldConfig.relations``);
- VG-A: pairs of objects that differ in category and in the chosen attribute; template
  "the [attribute 1] [object 1] and the [attribute 2] [object 2]" vs the attribute swap. The attribute kind is
  drawn among those whose values differ (colour, size, material, state);
- the image is cropped to the smallest box containing both objects.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from ..formats.aro import write_vg
from ..io import write_json
from ..seeding import np_rng
from ..world.concepts import ALL_RELATIONS, RELATIONS, Relation
from ..world.scene import Obj, Scene
from . import TWINS, TwinContext, TwinResult, option
from .images import image_file_name, write_pngs

MIN_BOX_FRACTION = 0.25
ATTRIBUTE_KINDS = ("colour", "size", "material", "state")
ATTRIBUTE_KIND_WEIGHTS = (0.55, 0.15, 0.15, 0.15)


def _big_enough(o: Obj, image_size: int) -> bool:
    """The box is at least 1/4 of the image wide and high (a square box: ``2 * half`` both ways)."""
    return min(2 * o.half, 2 * o.half_height) >= MIN_BOX_FRACTION * image_size


def union_box(a: Obj, b: Obj, image_size: int) -> dict[str, int]:
    x0 = max(0, math.floor(min(a.box[0], b.box[0])))
    y0 = max(0, math.floor(min(a.box[1], b.box[1])))
    x1 = min(image_size, math.ceil(max(a.box[2], b.box[2])))
    y1 = min(image_size, math.ceil(max(a.box[3], b.box[3])))
    return {"bbox_x": x0, "bbox_y": y0, "bbox_w": x1 - x0, "bbox_h": y1 - y0}


def build_vg_relation(scenes: list[Scene], image_size: int, rng: np.random.Generator) -> list[dict]:
    out = []
    for sc in scenes:
        seen: set[tuple[int, int, str]] = set()
        facts = list(sc.relations)
        order = rng.permutation(len(facts))
        for k in order:
            s, rel, o = facts[k]
            a, b = sc.obj(s), sc.obj(o)
            if a.shape == b.shape or not (_big_enough(a, image_size) and _big_enough(b, image_size)):
                continue
            key = (min(s, o), max(s, o), _relation_axis(rel))
            if key in seen:
                continue
            seen.add(key)
            out.append({
                "image_path": sc.image_id,
                **union_box(a, b, image_size),
                "true_caption": f"the {a.shape} is {rel} the {b.shape}",
                "false_caption": f"the {b.shape} is {rel} the {a.shape}",
                "relation_name": rel,
            })
    return out


def _relation_axis(rel: str) -> str:
    """Converse relations share an axis, so only one direction of a related pair becomes a case."""
    conv = ALL_RELATIONS[rel].converse or rel
    return min(rel, conv)


def relation_files(relations: Mapping[str, Relation] = RELATIONS) -> tuple[str, dict[str, str]]:
    """The text of ``symmetric_relations.txt`` (the relations left out of the VG-R macro: the world's symmetric
    ones) and the content of ``relation_groups.json`` (Table 2's ``spatial`` / ``verbs`` of every other relation),
    for the world's relations ``relations`` (default: the first world's)."""
    symmetric = [p for p, r in relations.items() if r.symmetric]
    text = ("# relations excluded from the VG-Relation macro (the toy world's symmetric relations)\n"
            + "\n".join(symmetric) + "\n")
    return text, {p: ("verbs" if r.group == "verb" else "spatial") for p, r in relations.items() if not r.symmetric}


def build_vg_attribution(scenes: list[Scene], image_size: int, rng: np.random.Generator) -> list[dict]:
    out = []
    for sc in scenes:
        objs = [o for o in sc.objects if _big_enough(o, image_size)]
        for i in range(len(objs)):
            for j in range(i + 1, len(objs)):
                a, b = objs[i], objs[j]
                if a.shape == b.shape:
                    continue
                if rng.random() < 0.5:
                    a, b = b, a
                kinds = [k for k in ATTRIBUTE_KINDS if a.attributes()[k] != b.attributes()[k]]
                if not kinds:
                    continue
                w = np.asarray([ATTRIBUTE_KIND_WEIGHTS[ATTRIBUTE_KINDS.index(k)] for k in kinds])
                kind = kinds[rng.choice(len(kinds), p=w / w.sum())]
                va, vb = a.attributes()[kind], b.attributes()[kind]
                out.append({
                    "image_path": sc.image_id,
                    **union_box(a, b, image_size),
                    "true_caption": f"the {va} {a.shape} and the {vb} {b.shape}",
                    "false_caption": f"the {vb} {a.shape} and the {va} {b.shape}",
                    "attributes": [va, vb],
                    "attribute_kind": kind,
                })
    return out


def crop(image: np.ndarray, rec: dict) -> np.ndarray:
    """Crop uint8 [H, W, 3] to the record's box (x..x+w, y..y+h), as ARO does before preprocessing."""
    x, y, w, h = rec["bbox_x"], rec["bbox_y"], rec["bbox_w"], rec["bbox_h"]
    return image[y : y + h, x : x + w]


# --------------------------------------------------------------------------- the registered twin
VG_SPLIT = "vg_test"


@TWINS.register("aro")
def build_aro(ctx: TwinContext) -> TwinResult:
    """ARO's VG-Relation / VG-Attribution files over the ``vg_test`` scenes, in ARO's released layout
    (``visual_genome_relation.json``, ``visual_genome_attribution.json``; ``image_path`` is the PNG's name in
    ``aro/images``), the relations left out of the VG-R macro (the world's symmetric ones; ARO's notebook keeps a
    157-name list for real VG) and the relation groups of Table 2 (``spatial`` / ``verbs``). The case builders
    keep the seeding keys of the first toy pipeline, so the cases are the same draws."""
    split = ctx.split(VG_SPLIT)
    scenes = split.scenes()
    names = [image_file_name(sc.image_id) for sc in scenes]
    size = ctx.wcfg.image_size
    vgr = build_vg_relation(scenes, size, np_rng(ctx.seed, "benchmarks", "vg_relation"))
    vga = build_vg_attribution(scenes, size, np_rng(ctx.seed, "benchmarks", "vg_attribution"))
    file_of = dict(zip((sc.image_id for sc in scenes), names, strict=True))
    for rec in (*vgr, *vga):
        rec["image_path"] = file_of[rec["image_path"]]
    write_pngs(ctx.folder("images"), split.images, names)
    root = ctx.folder()
    write_vg(root / "visual_genome_relation.json", vgr, "relation")
    write_vg(root / "visual_genome_attribution.json", vga, "attribution")
    symmetric, groups = relation_files(ctx.wcfg.relations)
    (root / "symmetric_relations.txt").write_text(symmetric)
    write_json(root / "relation_groups.json", groups)
    min_count = option(ctx.options, "vga_min_count", 25, "aro", minimum=1)
    return TwinResult(
        inputs={"aro_vg_relation": ctx.rel(root / "visual_genome_relation.json"),
                "aro_vg_attribution": ctx.rel(root / "visual_genome_attribution.json"),
                "aro_images": ctx.rel(root / "images"),
                "aro_relation_exclusions": ctx.rel(root / "symmetric_relations.txt"),
                "aro_relation_groups": ctx.rel(root / "relation_groups.json"),
                "aro_vga_min_count": min_count},
        counts={"vg_relation/n_cases": len(vgr), "vg_attribution/n_cases": len(vga), "aro/n_images": len(names)})
