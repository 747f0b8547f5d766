"""VL-CheckList twin: the benchmark's Visual Genome files rebuilt from the toy world's exact scene graphs.

Stands for VL-CheckList (Zhao et al. 2022) as TSVLC / DAC / CE-CLIP score it: one released annotation file per
(category, source) (``[image, {"POS": [...], "NEG": [...]}]``, :func:`vlcomp.formats.vlchecklist.write_file`),
under VL-CheckList's own paths (``data/Object/Location/vg_location/vg_obj_center.json``, ...) and result keys
(``Object_Location_center_vg_obj``, ``Attribute_color_vg``, ``Relation_spatial_vg``, ...), images as PNG under
one image root (``images/vg``, item paths ``VG_100K/<image>.png`` as in the real VG files), and a ``corpus.json`` in
TSVLC's layout mapping the 13 categories to the files written (its one source dataset is ``vg``, the toy's
stand-in for Visual Genome). Scoring is the record's (TSVLC protocol: first 1000 items with an image, strict
``>``). Built from ``vg_test`` only; every POS is checked true and every NEG false on the scene graph.

Captions follow the VG files' style: bare phrases without articles, a relation triple ``"<subj> <rel> <obj>"``
("star above circle") or an attribute phrase ``"<value> <noun>"`` ("red circle"); nouns are shape names (shapes
are unique within a scene, so a noun names one object).

Rules, per category:

- **Object** (``Object/Location/{center,mid,margin}``, ``Object/Size/{large,medium,small}``; files ``vg_subj`` and
  ``vg_obj``): POS is a non-symmetric relation fact of the scene; the tested object is its subject (``vg_subj``) or
  object (``vg_obj``), and the file is chosen by where that object's box lies (:func:`location_bin`) or by its box
  area (:func:`size_bin`). NEG replaces the tested noun with a shape that is absent from the scene, so NEG is false
  whatever the relation (VL-CheckList's object negatives replace the noun with another noun).
- **Attribute** (``color``, ``material``, ``size``, ``state``, ``action``): POS ``"<value> <shape>"`` with the
  object's value; NEG replaces the value with another value of the same kind that the object does not have.
  Action: the world's only actions are its verb-like relations, used as participles (``pointing``,
  ``covering``, ``covered``, ``surrounding``: true when the object is the subject of ``pointing at``,
  ``covering``, ``covered by``, ``surrounding``; a support world adds ``sitting`` and ``hanging`` for
  ``sitting on`` and ``hanging from``); an object with several actions gives one item per action.
- **Relation** (``action`` = the verb-like relations, ``spatial`` = the spatial ones; groups of the relations of
  the world in use, ``WorldConfig.relations``): POS is a fact of that group; NEG replaces the relation phrase.
  Symmetric relations are neither tested nor used as replacements, and a replacement that also holds for the
  pair (:func:`vlcomp.twins.implied_facts`: the scene graph, what a support contact entails, the converses)
  is refused.

AMBIGUOUS choices (the VL-CheckList paper gives no thresholds or replacement lists we could read):

- Location: the Euclidean distance of the box centre from the image centre, over half the image side:
  ``< 1/3`` center, ``< 2/3`` mid, else margin (:data:`LOCATION_BINS`).
- Size: the box area over the image area: ``< 0.05`` small (only objects inside a container are this small),
  ``< 0.12`` medium (the world's "small" objects), else large (:data:`SIZE_BINS`). In the second world
  (``world.contain_inner_scale`` 1.0) a contained object is as large as a small one, so no object is small: the
  twin writes no "small" files, and the Object/Size mean is over medium and large
  (:func:`vlcomp.formats.vlchecklist.group_averages`' ``absent``).
- Spatial NEG is the converse phrase (left <-> right, above <-> below, in front of <-> behind, inside ->
  surrounding), as the real spatial negatives are antonyms (``ON`` -> ``under``, ``in front of`` -> ``behind``); any
  other spatial phrase can be half-true for a diagonal pair (the scene graph keeps only the dominant axis).
  Action NEG is drawn among the other verb-like relations that do not hold.
- An arrow always points somewhere, so ``pointing`` / ``pointing at`` is never a NEG for an arrow subject.
- Only a bar supports, and only a non-bar, non-arrow object sits on or hangs from one, so ``sitting`` /
  ``hanging`` / ``sitting on`` / ``hanging from`` is a NEG only where that role is possible
  (:func:`vlcomp.twins.plausible`); the first world's role relations keep the rules above.
- The NEG noun of an Object item is a shape of the world in use (:func:`vlcomp.twins.world_shapes`: a support
  world's include the bar).
- Material is tested on solid objects only (a hollow object is an outline: no surface, material "plain").
- A file with more candidates than ``items_per_file`` keeps a seeded subset, in scene order (the real files are
  grouped by image); a file with none is not written and is left out of the inputs and the corpus.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..formats import vlchecklist as vlc_ds
from ..world.concepts import (
    ALL_RELATIONS,
    COLOURS,
    MATERIALS,
    RELATIONS,
    SIZES,
    STATES,
    SUPPORT_RELATIONS,
    Relation,
)
from ..world.scene import Obj, Scene
from . import TWINS, TwinContext, TwinResult, check_known, implied_facts, option, plausible, world_shapes
from .images import image_file_name, write_png

NAME = "vlchecklist"
SPLIT = "vg_test"
SOURCE = "vg"  # the source dataset the toy stands in for (VL-CheckList's Visual Genome files)
IMAGE_DIR = "VG_100K"  # the real VG items' image folder, kept so item paths look like the released ones
DEFAULT_ITEMS_PER_FILE = 200
OPTIONS = ("items_per_file",)

#: (bin, upper bound) on the box centre's distance from the image centre / half the image side.
LOCATION_BINS: tuple[tuple[str, float], ...] = (("center", 1 / 3), ("mid", 2 / 3), ("margin", math.inf))
#: (bin, upper bound) on the box area / image area.
SIZE_BINS: tuple[tuple[str, float], ...] = (("small", 0.05), ("medium", 0.12), ("large", math.inf))
#: Action participle -> the relation that makes it true of its subject, for every relation any world has.
ALL_ACTIONS: dict[str, str] = {"pointing": "pointing at", "covering": "covering", "covered": "covered by",
                               "surrounding": "surrounding", "sitting": "sitting on", "hanging": "hanging from"}


def actions(relations: Mapping[str, Relation] = RELATIONS) -> dict[str, str]:
    """The action participles of a world with the relations ``relations`` (default: the first world's)."""
    return {a: rel for a, rel in ALL_ACTIONS.items() if rel in relations}


def world_attribute_values(relations: Mapping[str, Relation] = RELATIONS) -> dict[str, tuple[str, ...]]:
    """Attribute kind (VL-CheckList name) -> its values in a world with the relations ``relations``."""
    return {"color": tuple(COLOURS), "material": MATERIALS, "size": tuple(SIZES), "state": STATES,
            "action": tuple(actions(relations))}


#: The first world's :func:`actions` and :func:`world_attribute_values`.
ACTIONS: dict[str, str] = actions()
ATTRIBUTE_VALUES: dict[str, tuple[str, ...]] = world_attribute_values()
RELATION_GROUPS = {"action": "verb", "spatial": "spatial"}  # VL-CheckList subtype -> concepts.Relation group

NOT_EXPRESSIBLE: tuple[tuple[str, str], ...] = (
    ("Object/*/swig_{agent,destination,item,tool}, Object/*/hake, Relation/action/{swig,hake}",
     "SWiG and HAKE annotate people and their activities (agents, tools, human-object interactions); the world "
     "has no people, so the twin has one source dataset, its stand-in for Visual Genome (vg)"),
    ("Attribute/*/vaw",
     "VAW re-annotates Visual Genome images with attributes; the world has one exact attribute annotation, so a "
     "second source would only duplicate the vg files"),
    ("Attribute/action: intransitive actions (standing, sitting, running, ...)",
     "the world's only actions are its verb-like relations, used as participles (pointing, covering, covered, "
     "surrounding)"),
    ("Relation/spatial: symmetric relations ('next to', 'near')",
     "VL-CheckList replaces them with antonyms ('far from'), which are not in the world vocabulary, and any other "
     "replacement may also hold for the pair"),
)


@dataclass(frozen=True)
class Item:
    """One VL-CheckList item before writing: the scene it shows (index into the split), POS[0], NEG[0]."""

    scene: int
    pos: str
    neg: str


@dataclass(frozen=True)
class FileSpec:
    """One annotation file: its VL-CheckList data type (``Object/Location/center``), file name part (``vg_obj``),
    TSVLC category, and its path under ``data/`` as released."""

    data_type: str
    name: str
    category: str
    path: str

    @property
    def key(self) -> str:
        return vlc_ds.result_key(self.data_type, self.name)


def file_specs() -> list[FileSpec]:
    """Every file of the twin, in TSVLC ``corpus.json`` category order."""
    specs = []
    for kind, bins, folder in (("Size", SIZE_BINS, "vg_size"), ("Location", LOCATION_BINS, "vg_location")):
        for b, _ in bins:
            for role in ("obj", "subj"):
                name = f"{SOURCE}_{role}"
                specs.append(FileSpec(f"Object/{kind}/{b}", name, b, f"Object/{kind}/{folder}/{name}_{b}.json"))
    for kind in ATTRIBUTE_VALUES:
        category = "action_a" if kind == "action" else kind
        specs.append(FileSpec(f"Attribute/{kind}", SOURCE, category, f"Attribute/{SOURCE}/{kind}.json"))
    for sub in RELATION_GROUPS:
        category = "action_r" if sub == "action" else sub
        specs.append(FileSpec(f"Relation/{sub}", SOURCE, category, f"Relation/{SOURCE}/{sub}.json"))
    order = list(vlc_ds.CORPUS)
    return sorted(specs, key=lambda s: order.index(s.category))


# ------------------------------------------------------------------------------------------------ geometry


def _bin(value: float, bins: Sequence[tuple[str, float]]) -> str:
    return next(name for name, upper in bins if value < upper)


def location_bin(o: Obj, image_size: int) -> str:
    """center / mid / margin by the box centre's distance from the image centre (over half the image side)."""
    x0, y0, x1, y1 = o.box
    half = image_size / 2
    return _bin(math.hypot((x0 + x1) / 2 - half, (y0 + y1) / 2 - half) / half, LOCATION_BINS)


def size_bin(o: Obj, image_size: int) -> str:
    """small / medium / large by the box area over the image area."""
    x0, y0, x1, y1 = o.box
    return _bin((x1 - x0) * (y1 - y0) / image_size**2, SIZE_BINS)


# ------------------------------------------------------------------------------------------- ground truth


def holds(scene: Scene, subj: str, rel: str, obj: str) -> bool:
    """The scene graph implies ``subj rel obj`` (:func:`vlcomp.twins.implied_facts`; nouns are shapes, unique
    within a scene)."""
    ids = {o.shape: o.id for o in scene.objects}
    return subj in ids and obj in ids and (ids[subj], rel, ids[obj]) in implied_facts(scene)


def actions_of(scene: Scene, o: Obj, relations: Mapping[str, Relation] = RELATIONS) -> list[str]:
    """The action participles of the world of ``relations`` true of ``o`` (it is the subject of the matching
    relation)."""
    return [a for a, rel in actions(relations).items() if any(s == o.id and p == rel for s, p, _ in scene.relations)]


def attribute_values(scene: Scene, o: Obj, kind: str, relations: Mapping[str, Relation] = RELATIONS) -> list[str]:
    """The values of ``kind`` true of ``o``: its attribute (material only for solid objects), or its actions."""
    if kind == "action":
        return actions_of(scene, o, relations)
    if kind == "material" and o.state != "solid":
        return []
    return [{"color": o.colour, "material": o.material, "size": o.size, "state": o.state}[kind]]


def _facts(scene: Scene) -> list[tuple[Obj, str, Obj]]:
    return [(scene.obj(s), p, scene.obj(o)) for s, p, o in scene.relations if not ALL_RELATIONS[p].symmetric]


def _role_ok(subject: str, relation: str, obj: str | None = None) -> bool:
    """False for a support relation whose subject cannot take its role (a bar, an arrow) or, when ``obj`` is
    given, whose object is no bar (:func:`vlcomp.twins.plausible`); True for every other relation."""
    if relation not in SUPPORT_RELATIONS:
        return True
    return plausible(subject, relation, "bar" if obj is None else obj)


def _pick(rng: np.random.Generator, options: Sequence[str]) -> str:
    return options[int(rng.integers(len(options)))]


# ------------------------------------------------------------------------------------------------ items


def object_items(scenes: Sequence[Scene], image_size: int, kind: str, bin_name: str, role: str,
                 rng: np.random.Generator, relations: Mapping[str, Relation] = RELATIONS) -> list[Item]:
    """Object/{Location,Size}/<bin> for role ``subj`` or ``obj``: facts whose tested object falls in the bin; NEG
    replaces the tested noun by a shape of the world of ``relations`` absent from the scene (for a support
    relation, one that can take the tested role)."""
    binner = {"Location": location_bin, "Size": size_bin}[kind]
    shapes = world_shapes(relations)
    out = []
    for i, sc in enumerate(scenes):
        absent = [s for s in shapes if s not in {o.shape for o in sc.objects}]
        for a, rel, b in _facts(sc):
            tested = a if role == "subj" else b
            options = [s for s in absent
                       if (_role_ok(s, rel, b.shape) if role == "subj" else _role_ok(a.shape, rel, s))]
            if binner(tested, image_size) != bin_name or not options:
                continue
            new = _pick(rng, options)
            neg = f"{new} {rel} {b.shape}" if role == "subj" else f"{a.shape} {rel} {new}"
            out.append(Item(i, f"{a.shape} {rel} {b.shape}", neg))
    return out


def attribute_items(scenes: Sequence[Scene], kind: str, rng: np.random.Generator,
                    relations: Mapping[str, Relation] = RELATIONS) -> list[Item]:
    """Attribute/<kind>: ``"<value> <shape>"`` vs another value of the kind the object does not have (values of
    the world of ``relations``)."""
    values = world_attribute_values(relations)[kind]
    acts = actions(relations)
    out = []
    for i, sc in enumerate(scenes):
        for o in sc.objects:
            true = attribute_values(sc, o, kind, relations)
            wrong = [v for v in values if v not in true
                     and not (kind == "action" and v == "pointing" and o.shape == "arrow")
                     and not (kind == "action" and not _role_ok(o.shape, acts[v]))]
            for value in true:
                if wrong:
                    out.append(Item(i, f"{value} {o.shape}", f"{_pick(rng, wrong)} {o.shape}"))
    return out


def relation_replacements(scene: Scene, a: Obj, rel: str, b: Obj,
                          relations: Mapping[str, Relation] = RELATIONS) -> list[str]:
    """NEG relation phrases for the fact ``a rel b``: spatial -> its converse, verb-like -> the other verb-like
    relations of the world's ``relations``; never symmetric, never one that also holds, never ``pointing at`` for
    an arrow subject, a support relation only where its roles are possible."""
    r = ALL_RELATIONS[rel]
    if r.group == "spatial":
        options = [r.converse] if r.converse else []
    else:
        options = [p for p, q in relations.items() if q.group == "verb" and p != rel]
    return [p for p in options if not ALL_RELATIONS[p].symmetric and not holds(scene, a.shape, p, b.shape)
            and not (p == "pointing at" and a.shape == "arrow") and _role_ok(a.shape, p, b.shape)]


def relation_items(scenes: Sequence[Scene], sub: str, rng: np.random.Generator,
                   relations: Mapping[str, Relation] = RELATIONS) -> list[Item]:
    """Relation/<sub> (``action``: verb-like relations, ``spatial``): the fact vs a replaced relation phrase."""
    group = RELATION_GROUPS[sub]
    out = []
    for i, sc in enumerate(scenes):
        for a, rel, b in _facts(sc):
            if ALL_RELATIONS[rel].group != group:
                continue
            options = relation_replacements(sc, a, rel, b, relations)
            if options:
                out.append(Item(i, f"{a.shape} {rel} {b.shape}", f"{a.shape} {_pick(rng, options)} {b.shape}"))
    return out


def items_for(spec: FileSpec, scenes: Sequence[Scene], image_size: int, rng: np.random.Generator,
              relations: Mapping[str, Relation] = RELATIONS) -> list[Item]:
    """Every candidate item of one file (before the per-file cap), in a world with the relations ``relations``."""
    group, kind, *rest = spec.data_type.split("/")
    if group == "Object":
        return object_items(scenes, image_size, kind, rest[0], spec.name.removeprefix(f"{SOURCE}_"), rng, relations)
    if group == "Attribute":
        return attribute_items(scenes, kind, rng, relations)
    return relation_items(scenes, kind, rng, relations)


def cap(items: Sequence[Item], n: int, rng: np.random.Generator) -> list[Item]:
    """At most ``n`` items: a seeded subset in the original (scene) order."""
    if len(items) <= n:
        return list(items)
    keep = np.sort(rng.choice(len(items), size=n, replace=False))
    return [items[k] for k in keep]


# ------------------------------------------------------------------------------------------------ build


def image_path(scene: Scene) -> str:
    """An item's image, relative to the image root, as the real VG items name theirs (``VG_100K/<file>``)."""
    return f"{IMAGE_DIR}/{image_file_name(scene.image_id)}"


def build_files(scenes: Sequence[Scene], image_size: int, items_per_file: int,
                rng: Callable[..., np.random.Generator],
                relations: Mapping[str, Relation] = RELATIONS) -> dict[FileSpec, list[Item]]:
    """Every non-empty file's items (each file draws from its own generator ``rng(result key)``), in a world with
    the relations ``relations`` (default: the first world's)."""
    out = {}
    for spec in file_specs():
        gen = rng(spec.key)
        items = cap(items_for(spec, scenes, image_size, gen, relations), items_per_file, gen)
        if items:
            out[spec] = items
    return out


@TWINS.register(NAME)
def build_vlchecklist(ctx: TwinContext) -> TwinResult:
    """Write the annotation files, the images they use and ``corpus.json``; inputs ``vlchecklist_files`` and
    ``vlchecklist_corpus`` (paths relative to the benchmarks dir)."""
    check_known(ctx.options, OPTIONS, NAME)
    n = option(ctx.options, "items_per_file", DEFAULT_ITEMS_PER_FILE, NAME, minimum=1)
    split = ctx.split(SPLIT)
    scenes = split.scenes()
    files = build_files(scenes, ctx.wcfg.image_size, n, lambda key: ctx.rng("file", key), ctx.wcfg.relations)
    if not files:
        raise ValueError(f"{ctx.world_dir / SPLIT}: no VL-CheckList item in any file ({len(scenes)} scenes)")
    root = ctx.folder("images", SOURCE)
    used = sorted({it.scene for items in files.values() for it in items})
    for i in used:
        write_png(root / image_path(scenes[i]), np.asarray(split.images[i]))
    inputs, corpus, counts = {}, {}, {}
    for spec in file_specs():
        counts[f"{spec.key}/n_items"] = len(files.get(spec, []))
    for spec, items in files.items():
        path = ctx.folder("data") / spec.path
        cases = [vlc_ds.VLCheckListCase(k, image_path(scenes[it.scene]), (it.pos,), (it.neg,))
                 for k, it in enumerate(items)]
        vlc_ds.write_file(path, cases)
        inputs[spec.key] = {"annotations": ctx.rel(path), "images": ctx.rel(root)}
        corpus.setdefault(spec.category, {}).setdefault(SOURCE, []).append(spec.key)
    corpus_path = vlc_ds.write_corpus(ctx.folder() / "corpus.json", corpus)
    counts |= {"n_images": len(used), "n_items": sum(len(v) for v in files.values()), "n_files": len(files)}
    return TwinResult({"vlchecklist_files": inputs, "vlchecklist_corpus": ctx.rel(corpus_path)}, counts)
