"""CREPE-Negate twin (the Negate fold of CREPE-Productivity, Ma et al. 2023; conclip catalog §2.6): one
caption per image region with hard negatives that each negate one part of it, in CREPE's released CSV layout
(:mod:`vlcomp.formats.crepe`), built from the world's exact scene graphs.

What it stands for. CREPE-Productivity states a scene sub-graph of ``n`` atoms (objects, attributes,
relationships; complexity ``n`` = 4..12) as a templated caption, crops the image to the sub-graph's region,
and asks the model to retrieve the caption among it and its hard negatives; CoN-CLIP fine-tunes on the Negate
fold's (caption, negation) pairs in its ablation and contrasts its crude negations with CC-Neg (CoN-CLIP
Table 1: "Street not has on side a tree", "There is no car has tire").

Rules applied (from CREPE's description and CoN-CLIP's Table 1 examples; CREPE's repository holds only its
evaluation code, not the code that built its negatives):

1. **Sub-graph.** Objects ``V`` of one scene, some of their attributes (size, colour, and material or
   *hollow* when not the default), and relationships of the scene graph between objects of ``V``; complexity
   = ``|V|`` + attributes + relationships. The parts are drawn at random until the complexity is met and the
   text fits (see 4).
2. **Caption (templates).** One sentence per relationship, ``<subject> <relation> <object>`` (CREPE writes
   no copula: "Tree on a side of a street"), in random order, then ``there is <object>`` for each object of
   ``V`` in no relationship; sentences end with a period. An object's first mention carries its chosen
   attributes (``a large red circle``), later ones are ``the <shape>`` (shapes are unique in a scene, so
   every mention names one object). The caption is true on the scene graph: every sentence is a fact of it.
3. **Negation foils.** A hard negative negates exactly one sentence and keeps the others: *not* before the
   relationship (``<subject> not <relation> <object>``, Table 1's "Street not has on side a tree") or *no*
   before one of its objects (``there is no <subject> <relation> <object>``, Table 1's "There is no car has
   tire", or ``<subject> <relation> no <object>``), and ``there is no <object>`` for an object sentence. It is
   false on the scene graph because the negated sentence is a fact of it.
   ``n_negatives`` (5, as CREPE's CLIP script expects 6 texts per image) distinct negatives are drawn from
   all of them; a sub-graph offering fewer is not used.
4. **Text length.** The caption and every negative fit ``max_words`` words (30: the toy text tower's context
   32 minus start and end tokens). CREPE's own script truncates long captions (``truncate=True``); the twin
   never relies on that, since a cut-off negation would equal the caption.
5. **Crop.** ``x, y, width, height`` is the smallest pixel box holding every object of ``V`` (clipped to the
   image); CREPE crops to the sub-graph's region the same way.

Layout (``crepe_prod_dir`` is CREPE's ``--input-dir``; ``image_id`` is the image's index in the split, the
image ``<crepe_images>/<image_id>.png``)::

    crepe_negate/prod_hard_negatives/negate/prod_vg_hard_negs_negate_complexity_<n>.csv
    crepe_negate/images/<image_id>.png

Items: ``n_items`` (300) apportioned equally over ``complexities`` (4..12, CREPE's range); for each complexity the
split's images are visited in a seeded order and each gives at most one item. AMBIGUOUS: CREPE's per-complexity
sizes and its mix of negation forms are not published here; both are set by this twin.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..formats.crepe import COMPLEXITIES, negate_file, write_crepe_csv
from ..world.scene import Obj, Scene
from . import TWINS, TwinContext, TwinResult, check_known, option, test_split
from .ccneg import apportion, article
from .images import write_png

DEFAULTS: dict[str, Any] = {"n_items": 300, "complexities": list(COMPLEXITIES), "n_negatives": 5,
                            "split": "vg_test", "max_words": 30}
#: Sub-graph draws per image and complexity before the image is skipped for that complexity.
TRIES = 30

NOT_EXPRESSIBLE = (
    ("sub-graphs of 4+ objects", "a toy scene holds at most 3 objects, so high complexities are reached with "
                                 "attributes and both directions of a relationship (CREPE's own 'Tree on a side "
                                 "of a street. street has on side a tree.'), not with more objects"),
    ("atom and swap folds of CREPE-Productivity, and CREPE-Systematicity",
     "not used by the five papers; only the Negate fold is built"),
    ("GPT-3 / region-description captions", "captions come from templates over the scene graph only"),
)


@dataclass(frozen=True)
class SubGraph:
    objects: tuple[int, ...]  # object ids, ascending
    attributes: tuple[tuple[int, str], ...]  # (object id, attribute word)
    relations: tuple[tuple[int, str, int], ...]  # scene-graph facts, in sentence order

    @property
    def complexity(self) -> int:
        return len(self.objects) + len(self.attributes) + len(self.relations)


@dataclass(frozen=True)
class Sentence:
    text: str
    negations: tuple[str, ...]  # this sentence negated, each variant false on the scene graph


@dataclass(frozen=True)
class CrepeOptions:
    n_items: int
    complexities: tuple[int, ...]
    n_negatives: int
    split: str
    max_words: int


def read_options(options: Mapping[str, Any], twin: str = "crepe_negate") -> CrepeOptions:
    check_known(options, DEFAULTS, twin)
    n_items = option(options, "n_items", DEFAULTS["n_items"], twin, minimum=1)
    n_negatives = option(options, "n_negatives", DEFAULTS["n_negatives"], twin, minimum=1)
    max_words = option(options, "max_words", DEFAULTS["max_words"], twin, minimum=4)
    split = test_split(options, DEFAULTS["split"], twin)
    cx = options.get("complexities", DEFAULTS["complexities"])
    if (not isinstance(cx, list | tuple) or not cx or len(set(cx)) != len(cx)
            or any(isinstance(n, bool) or n not in COMPLEXITIES for n in cx)):
        raise ValueError(f"params benchmarks.twins.{twin}.complexities={cx!r}: need distinct ints in "
                         f"{COMPLEXITIES[0]}..{COMPLEXITIES[-1]} (CREPE's complexities)")
    if n_items < len(cx):
        raise ValueError(f"params benchmarks.twins.{twin}.n_items={n_items}: fewer than the {len(cx)} complexities")
    return CrepeOptions(n_items, tuple(sorted(cx)), n_negatives, split, max_words)


# --------------------------------------------------------------------------- scene graph


def attribute_words(o: Obj) -> list[str]:
    """The attribute atoms of an object, in noun-phrase order: size, colour, then material or *hollow* (the
    defaults *plain* and *solid* are never said in the world's captions)."""
    words = [o.size, o.colour]
    if o.state == "hollow":
        words.append("hollow")
    elif o.material != "plain":
        words.append(o.material)
    return words


def region(objs: Sequence[Obj], image_size: int) -> dict[str, int]:
    """The smallest whole-pixel box ``x, y, width, height`` holding every object, clipped to the image."""
    x0 = max(0, math.floor(min(o.box[0] for o in objs)))
    y0 = max(0, math.floor(min(o.box[1] for o in objs)))
    x1 = min(image_size, math.ceil(max(o.box[2] for o in objs)))
    y1 = min(image_size, math.ceil(max(o.box[3] for o in objs)))
    return {"x": x0, "y": y0, "width": x1 - x0, "height": y1 - y0}


def sentences(scene: Scene, g: SubGraph) -> list[Sentence]:
    """The caption's sentences (rules 2-3 of the module docstring), in order."""
    chosen = {v: [w for w in attribute_words(scene.obj(v)) if (v, w) in g.attributes] for v in g.objects}
    mentioned: set[int] = set()

    def mention(oid: int) -> tuple[str, str]:
        """``(determiner, words)``: first mention ``a``/``an`` + attributes + shape, later ``the`` + shape."""
        if oid in mentioned:
            return "the", scene.obj(oid).shape
        mentioned.add(oid)
        words = " ".join([*chosen[oid], scene.obj(oid).shape])
        return article(words), words

    out = []
    for s, p, o in g.relations:
        (ds, ws), (do, wo) = mention(s), mention(o)
        out.append(Sentence(f"{ds} {ws} {p} {do} {wo}",
                            (f"{ds} {ws} not {p} {do} {wo}", f"there is no {ws} {p} {do} {wo}",
                             f"{ds} {ws} {p} no {wo}")))
    in_relation = {s for s, _, _ in g.relations} | {o for _, _, o in g.relations}
    for v in g.objects:
        if v not in in_relation:
            d, w = mention(v)
            out.append(Sentence(f"there is {d} {w}", (f"there is no {w}",)))
    return out


def join(texts: Sequence[str]) -> str:
    return ". ".join(texts) + "."


def caption_and_negatives(scene: Scene, g: SubGraph) -> tuple[str, list[str]]:
    """The caption and every hard negative (one sentence negated), negatives in sentence order."""
    sents = sentences(scene, g)
    texts = [s.text for s in sents]
    negatives = [join([*texts[:i], neg, *texts[i + 1:]]) for i, s in enumerate(sents) for neg in s.negations]
    return join(texts), list(dict.fromkeys(negatives))


def holds(scene: Scene, g: SubGraph) -> bool:
    """Every atom of the sub-graph is in the scene graph (so the caption is true and each negation false)."""
    ids = {o.id for o in scene.objects}
    return (set(g.objects) <= ids
            and all(v in g.objects and w in attribute_words(scene.obj(v)) for v, w in g.attributes)
            and all(s in g.objects and o in g.objects and (s, p, o) in scene.relations for s, p, o in g.relations))


def sample_subgraph(scene: Scene, complexity: int, rng: np.random.Generator) -> SubGraph | None:
    """One draw of a sub-graph with ``complexity`` atoms (None when this draw cannot reach it)."""
    objs = scene.objects
    m = int(rng.integers(1, len(objs) + 1))
    ids = tuple(sorted(int(v) for v in rng.choice(len(objs), size=m, replace=False)))
    rels = [r for r in scene.relations if r[0] in ids and r[2] in ids]
    attrs = [(v, w) for v in ids for w in attribute_words(objs[v])]
    lo, hi = max(0, complexity - m - len(attrs)), min(len(rels), complexity - m)
    if lo > hi:
        return None
    r = int(rng.integers(lo, hi + 1))
    picked_rels = tuple(rels[int(i)] for i in rng.permutation(len(rels))[:r])
    a = complexity - m - r
    picked_attrs = tuple(attrs[int(i)] for i in sorted(rng.choice(len(attrs), size=a, replace=False)))
    return SubGraph(ids, picked_attrs, picked_rels)


def build_row(scene: Scene, image_id: int, complexity: int, image_size: int, rng: np.random.Generator,
              opts: CrepeOptions) -> dict[str, Any] | None:
    """One CSV row for the scene at ``complexity``, or None when :data:`TRIES` draws give no usable one."""
    for _ in range(TRIES):
        g = sample_subgraph(scene, complexity, rng)
        if g is None:
            continue
        caption, negatives = caption_and_negatives(scene, g)
        if len(negatives) < opts.n_negatives:
            continue
        if max(len(t.split()) for t in (caption, *negatives)) > opts.max_words:
            continue
        if not holds(scene, g) or g.complexity != complexity:
            raise RuntimeError(f"{scene.image_id}: sub-graph is not a scene-graph fact of complexity {complexity}")
        picked = [negatives[int(i)] for i in rng.choice(len(negatives), size=opts.n_negatives, replace=False)]
        return {"image_id": image_id, **region([scene.obj(v) for v in g.objects], image_size),
                "caption": caption, "hard_negs": picked}
    return None


def build_rows(scenes: Sequence[Scene], image_size: int, ctx_rng: Callable[[int], np.random.Generator],
               opts: CrepeOptions) -> dict[int, list[dict]]:
    """Rows per complexity; ``ctx_rng(n)`` gives complexity ``n`` its own generator."""
    quotas = apportion(opts.n_items, [1.0] * len(opts.complexities))
    out: dict[int, list[dict]] = {}
    for n, quota in zip(opts.complexities, quotas, strict=True):
        rng = ctx_rng(n)
        rows: list[dict] = []
        for i in rng.permutation(len(scenes)):
            if len(rows) == quota:
                break
            row = build_row(scenes[int(i)], int(i), n, image_size, rng, opts)
            if row is not None:
                rows.append(row)
        if len(rows) < quota:
            raise ValueError(f"params benchmarks.twins.crepe_negate: complexity {n} got {len(rows)} of {quota} "
                             f"items from split {opts.split!r} ({len(scenes)} images); lower n_items or drop "
                             "the complexity")
        out[n] = rows
    return out


# --------------------------------------------------------------------------- build


@TWINS.register("crepe_negate")
def build_crepe_negate(ctx: TwinContext) -> TwinResult:
    opts = read_options(ctx.options, ctx.name or "crepe_negate")
    split = ctx.split(opts.split)
    scenes = split.scenes()
    rows = build_rows(scenes, ctx.wcfg.image_size, lambda n: ctx.rng("complexity", n), opts)
    prod_dir = ctx.folder("prod_hard_negatives")
    images = ctx.folder("images")
    for n in COMPLEXITIES:  # the record reads every complexity file present: none may be left from an older build
        if n not in rows:
            negate_file(prod_dir, n).unlink(missing_ok=True)
    for n, rs in rows.items():
        write_crepe_csv(negate_file(prod_dir, n), rs, n)
    for i in sorted({r["image_id"] for rs in rows.values() for r in rs}):
        write_png(images / f"{i}.png", split.images[i])
    counts = {"crepe_negate/n_items": sum(len(rs) for rs in rows.values())}
    counts |= {f"crepe_negate/complexity/{n}": len(rs) for n, rs in rows.items()}
    return TwinResult(inputs={"crepe_prod_dir": ctx.rel(prod_dir), "crepe_images": ctx.rel(images)},
                      counts=counts)
