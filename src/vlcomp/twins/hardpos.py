"""Toy twin of the Hard Positives benchmarks REPLACE and SWAP (Kamath et al., ECCV 2024; hard_positives catalog
§2.2-2.4, refcode catalog §3.2), written as the authors release them: ``data/<file>`` holds ``(c, c_n)`` and
``swapped_data/<file>`` holds ``(c_p, c_n)``, aligned row by row (:mod:`vlcomp.formats.hardpos`).

Layout under ``<benchmarks dir>/hardpos`` (the manifest input ``hard_positives_dir``)::

    data/vl_checklist_attributes.json      swapped_data/vl_checklist_attributes.json     REPLACE attributes
    data/vl_checklist_relations.json       swapped_data/vl_checklist_relations.json      REPLACE relations
    data/visual_genome_attribution.json    swapped_data/visual_genome_attribution.json   SWAP
    data/VG_100K/<vg_test_000123>.png                                                    REPLACE images, whole

**REPLACE** stands for the VL-CheckList Visual Genome Attribute / Relation items with a hand-written hard
positive. From ``vg_test`` scenes:

- attributes: ``c`` names one object with one attribute in VL-CheckList's region-phrase style, "large red
  circle"; ``c_n`` replaces that attribute so the phrase is false ("small red circle", checked on the scene
  graph: no small red circle); ``c_p`` replaces it with its synonym from :data:`HARD_POSITIVE_MAP` ("big red
  circle", checked true);
- relations: ``c`` is one relation of the scene graph, "red circle to the left of blue square"; ``c_n`` replaces
  the relation with one that does not hold for that pair ("red circle above blue square"); ``c_p`` is the
  converse paraphrase with the arguments swapped ("blue square to the right of red circle", checked true).

Paper rules applied: one fixed replacement per word (§2.2 step 2; :data:`HARD_POSITIVE_MAP`, words of the closed
vocabulary only), samples without a replacement are discarded (step 3: "pointing at" has no converse), images
are whole (``image_path`` = ``data/VG_100K/<file>.png`` relative to the twin root, as the released
``data/VG_100K/<id>.jpg``; ``image_id`` = the scene id). Every caption is re-checked on the exact scene graph:
``c`` and ``c_p`` true, ``c_n`` false (candidates failing a check are dropped).

**SWAP** stands for ARO's VG-Attribution with a hard positive. Its ``data/`` file *is* the VG-Attribution twin:
:func:`vlcomp.twins.aro_vg.build_vg_attribution` on the ``vg_test`` scenes with the generator of the ARO twin
(``np_rng(seed, "benchmarks", "vg_attribution")``), ``image_path`` = :func:`vlcomp.twins.images.image_file_name`
of the scene, i.e. relative to the ARO twin's ``aro/images`` (which the ARO twin writes and puts in the manifest
as ``aro_images``; this twin writes neither). ``c_p`` follows the paper's rule: the two "the ATTR OBJ" phrases
around "and" in the other order, each object keeping its attribute (:func:`swap_positive`), checked true.

AMBIGUOUS choices (the paper or the toy world leaves them open):

- The first world's vocabulary has no relation synonyms, so the converse paraphrase stands for the paper's
  relation synonyms ("behind" -> "to the rear of"): its converses are exact ("to the left of" <-> "to the right
  of" with subject and object swapped). For the symmetric "next to" the converse is "next to" with the arguments
  swapped (the paper maps "next to" -> "near"; the world never states "near", so a model never saw it). A world
  whose captions use the extended synonyms (``world.captions.synonyms: extended``, the second world) gets the
  paper's rule wherever its vocabulary has a synonym (:func:`hard_positive_map`: the first listed synonym, the
  same word order: above -> over, below -> under, next to -> beside; purple -> violet beside the sizes) and the
  converse stand-in only for the relations without one.
- One negative per true caption (VL-CheckList has one NEG per item; the paper repeats a ``c`` with several
  ``c_n`` only because VL-CheckList does). A relation negative is drawn among the relations that do not hold for
  the pair, of the same group (spatial / verb, as VL-CheckList's spatial and action files) when one exists, else
  of any group; the symmetric "next to" / "near" are never negatives (whether "next to" holds for overlapping
  shapes is not decided by the scene graph).
- One caption per related pair and relation axis, its direction drawn from the seeded generator (VG annotates
  a relation once; its converse is the hard positive).
- The world in use: negatives are drawn among its relations (``WorldConfig.relations``: a support world adds
  "sitting on" and "hanging from"; like "pointing at" they have no converse, so they are never a ``c``) and a
  caption is checked against :func:`vlcomp.twins.implied_facts` (the scene graph, what a support contact
  entails, and the converses).
- Sizes: :data:`DEFAULTS` keep the paper's relations : attributes ratio (16,868 : 10,575 ~ 1.6), so the pooled
  REPLACE weighs the parts as the paper does. The swapped SWAP file keeps ``attributes`` in the data order (the
  released SWAP files were not available).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..formats import hardpos as hp_format
from ..formats.hardpos import HardPositiveCase
from ..seeding import np_rng
from ..world.concepts import ALL_RELATIONS, COLOURS, EXTENDED_SYNONYMS, RELATIONS, SIZES, Relation
from ..world.scene import Obj, Scene
from . import TWINS, TwinContext, TwinResult, check_known, implied_facts, option
from .aro_vg import build_vg_attribution
from .images import image_file_name, write_png

SPLIT = "vg_test"
REPLACE_PARTS = ("replace_att", "replace_rel")
#: Where the REPLACE images go, relative to the twin root (the released ``data/VG_100K/<id>.jpg``).
IMAGE_DIR = "data/VG_100K"

#: The one fixed hard-positive map (paper §2.2 step 2: one hand-written replacement per word, across senses).
#: ``attributes``: word -> synonym (the vocabulary's synonyms, ``world/concepts.py`` SYNONYMS).
#: ``relations``: phrase -> converse, used with subject and object **swapped** ("A to the left of B" ->
#: "B to the right of A"; ``world/concepts.py`` RELATIONS). Only words of the closed vocabulary.
HARD_POSITIVE_MAP: dict[str, dict[str, str]] = {
    "attributes": {"large": "big", "small": "little"},
    "relations": {
        "to the left of": "to the right of", "to the right of": "to the left of",
        "above": "below", "below": "above",
        "in front of": "behind", "behind": "in front of",
        "inside": "surrounding", "surrounding": "inside",
        "covering": "covered by", "covered by": "covering",
        "next to": "next to",
    },
}


def hard_positive_map(synonyms: str = "base") -> dict[str, dict[str, str]]:
    """The fixed hard-positive map of a world whose captions draw synonyms from ``world.captions.synonyms``
    (``base``: :data:`HARD_POSITIVE_MAP`, the first world's, unchanged).

    ``extended`` (the second world, :data:`~vlcomp.world.concepts.EXTENDED_SYNONYMS`) follows the paper's rule as
    far as the vocabulary allows (§2.2 step 2: one fixed replacement per word, the same word order):

    - ``attributes``: every size and colour word with a synonym -> its **first** listed synonym (large -> big,
      small -> little, purple -> violet; the paper's white -> ivory, large -> big);
    - ``relation_synonyms``: every relation with a synonym -> its first listed synonym, subject and object kept
      (above -> over, below -> under, next to -> beside; the paper's under -> beneath, near -> next to);
    - ``relations``: the converse stand-in (subject and object swapped) only for the relations with no synonym
      (left/right, in front of/behind, inside/surrounding, covering/covered by). Shape synonyms (square -> box) are
      not used: the paper's REPLACE has no object replacements (VL-CheckList's Object part is left out)."""
    if synonyms == "base":
        return {k: dict(v) for k, v in HARD_POSITIVE_MAP.items()}
    if synonyms != "extended":
        raise ValueError(f"hardpos twin: world.captions.synonyms={synonyms!r}: expected 'base' or 'extended'")
    attributes = {w: ws[0] for w, ws in EXTENDED_SYNONYMS.items() if w in SIZES or w in COLOURS}
    rel_syn = {w: ws[0] for w, ws in EXTENDED_SYNONYMS.items() if w in ALL_RELATIONS}
    converses = {r: c for r, c in HARD_POSITIVE_MAP["relations"].items() if r not in rel_syn}
    return {"attributes": attributes, "relation_synonyms": rel_syn, "relations": converses}


#: Synonym -> the word it stands for, over every synonym table a twin caption may use (checking only: a first-world
#: caption never contains one of the extended synonyms, so its checks are unchanged).
_SYNONYM_OF: dict[str, str] = {syn: w for w, ws in EXTENDED_SYNONYMS.items() for syn in ws}



def negative_relations(relations: Mapping[str, Relation] = RELATIONS) -> tuple[str, ...]:
    """The relations of the world's ``relations`` a REPLACE negative may use: never the symmetric ones (see the
    module docstring)."""
    return tuple(p for p, r in relations.items() if not r.symmetric)


#: The first world's :func:`negative_relations`.
NEGATIVE_RELATIONS: tuple[str, ...] = negative_relations()

#: Parts of the paper the toy world cannot express (the report lists them).
NOT_EXPRESSIBLE: tuple[tuple[str, str], ...] = (
    ("replace_att/colour", "first world: no colour synonym; second world: purple -> violet only (the paper maps "
                           "7 colours, white -> ivory, ..., 81 % of its attribute items)"),
    ("replace_att/material", "no synonym for plain / striped / dotted (the paper dropped material too)"),
    ("replace_att/state", "no synonym for solid / hollow in the closed vocabulary"),
    ("replace_att/action", "the world has no intransitive verbs (standing, walking, ...)"),
    ("replace_rel/pointing at", "no converse or synonym in the vocabulary: discarded, as paper rule 3 does"),
    ("replace_rel/near", "never in a scene graph, so neither checkable nor seen in training captions"),
    ("replace_rel/synonyms", "first world: no relation synonym, every relation positive is the converse stand-in; "
                             "second world: above -> over, below -> under, next to -> beside, the rest converses"),
)

#: Default sizes (``benchmarks.twins.hardpos`` in params.yaml). SWAP has no size: it is the whole VG-A twin.
DEFAULTS = {"replace_att_items": 500, "replace_rel_items": 800}
ARTICLES = frozenset({"the", "a", "an"})
_CANONICAL = {syn: word for word, syn in HARD_POSITIVE_MAP["attributes"].items()} | {
    syn: w for syn, w in _SYNONYM_OF.items() if w in SIZES or w in COLOURS}


# --------------------------------------------------------------------------------- checking on the scene graph


def _matches(o: Obj, words: Sequence[str]) -> bool:
    *attrs, shape = [w for w in words if w not in ARTICLES]
    values = set(o.attributes().values())
    return o.shape == shape and all(_CANONICAL.get(a, a) in values for a in attrs)


def phrase_holds(scene: Scene, phrase: str) -> bool:
    """Some object of the scene is what the noun phrase says ("big red circle": a large red circle)."""
    return any(_matches(o, phrase.split()) for o in scene.objects)


def _split_relation(caption: str, relations: Mapping[str, Relation] = RELATIONS) -> tuple[str, str, str] | None:
    """(subject phrase, relation, object phrase) of a "<np> <relation> <np>" caption, longest relation of the
    world's ``relations`` (or a synonym of one: "over" is "above") first."""
    padded = f" {caption} "
    phrases = {rel: rel for rel in relations}
    phrases |= {syn: w for syn, w in _SYNONYM_OF.items() if w in relations and syn not in phrases}
    for said in sorted(phrases, key=len, reverse=True):
        if f" {said} " in padded:
            subj, obj = padded.split(f" {said} ", 1)
            return subj.strip(), phrases[said], obj.strip()
    return None


def caption_holds(scene: Scene, caption: str, relations: Mapping[str, Relation] = RELATIONS) -> bool:
    """Whether a twin caption is true of the scene graph: "<np> and <np>" (both objects exist), "<np> <relation>
    <np>" (the relation, one of the world's ``relations``, holds between the two objects: the scene graph implies
    it, :func:`vlcomp.twins.implied_facts`) or a noun phrase."""
    if " and " in caption:
        return all(phrase_holds(scene, p) for p in caption.split(" and "))
    parts = _split_relation(caption, relations)
    if parts is None:
        return phrase_holds(scene, caption)
    subj, rel, obj = parts
    facts = implied_facts(scene)
    return any((s.id, rel, o.id) in facts for s in scene.objects if _matches(s, subj.split())
               for o in scene.objects if _matches(o, obj.split()))


def _valid(scene: Scene, c: str, c_n: str, c_p: str, relations: Mapping[str, Relation] = RELATIONS) -> bool:
    return (caption_holds(scene, c, relations) and caption_holds(scene, c_p, relations)
            and not caption_holds(scene, c_n, relations) and c_p != c)


# ------------------------------------------------------------------------------------------------- REPLACE


def attribute_items(scene: Scene, hp_map: Mapping[str, Mapping[str, str]] = HARD_POSITIVE_MAP,
                    rng: np.random.Generator | None = None) -> list[tuple[str, str, str]]:
    """``(c, c_n, c_p)`` per object: its size replaced by the other size (false) and by its synonym (true); with a
    map that has colour synonyms (``hard_positive_map("extended")``), also, for an object whose colour has one, its
    colour replaced by a colour no object of that size and shape has (false, drawn with ``rng``) and by the
    synonym (true): "large purple circle" / "large green circle" / "large violet circle"."""
    syn = hp_map["attributes"]
    sizes = [w for w in syn if w in SIZES]
    out = []
    for o in scene.objects:
        other = next(s for s in sizes if s != o.size)
        c, c_n, c_p = (f"{w} {o.colour} {o.shape}" for w in (o.size, other, syn[o.size]))
        if _valid(scene, c, c_n, c_p):
            out.append((c, c_n, c_p))
        if o.colour in syn:
            if rng is None:
                raise ValueError("hardpos twin: colour items need a random generator (rng)")
            false = [k for k in COLOURS if k != o.colour
                     and not phrase_holds(scene, f"{o.size} {k} {o.shape}")]
            if not false:
                continue
            neg = false[int(rng.integers(len(false)))]
            c, c_n, c_p = (f"{o.size} {k} {o.shape}" for k in (o.colour, neg, syn[o.colour]))
            if _valid(scene, c, c_n, c_p):
                out.append((c, c_n, c_p))
    return out


def _np(o: Obj) -> str:
    return f"{o.colour} {o.shape}"


def relation_items(scene: Scene, rng: np.random.Generator,
                   relations: Mapping[str, Relation] = RELATIONS,
                   hp_map: Mapping[str, Mapping[str, str]] = HARD_POSITIVE_MAP) -> list[tuple[str, str, str]]:
    """``(c, c_n, c_p)`` per related pair and relation axis: the relation, a relation of the world's
    ``relations`` that does not hold for the pair, and the hard positive: the relation's synonym with the same
    subject and object (``hp_map["relation_synonyms"]``, when the map has one) or else the converse with the
    arguments swapped (``hp_map["relations"]``)."""
    synonyms = hp_map.get("relation_synonyms", {})
    converses = hp_map["relations"]
    axis = {**HARD_POSITIVE_MAP["relations"], **converses}  # a fact and its converse are one relation axis
    negatives = negative_relations(relations)
    facts = [f for f in scene.relations if f[1] in converses or f[1] in synonyms]
    holds = implied_facts(scene)
    seen: set[tuple[int, int, str]] = set()
    out = []
    for k in rng.permutation(len(facts)):
        s, rel, o = facts[k]
        key = (min(s, o), max(s, o), min(rel, axis[rel]))
        if key in seen:
            continue
        seen.add(key)
        false = [r for r in negatives if r != rel and (s, r, o) not in holds]
        same_group = [r for r in false if ALL_RELATIONS[r].group == ALL_RELATIONS[rel].group]
        pool = same_group or false
        if not pool:
            continue
        neg = pool[rng.integers(len(pool))]
        a, b = _np(scene.obj(s)), _np(scene.obj(o))
        c, c_n = f"{a} {rel} {b}", f"{a} {neg} {b}"
        c_p = f"{a} {synonyms[rel]} {b}" if rel in synonyms else f"{b} {converses[rel]} {a}"
        if _valid(scene, c, c_n, c_p, relations):
            out.append((c, c_n, c_p))
    return out


def _sample(items: list, n: int, rng: np.random.Generator) -> list:
    """``n`` items (all when fewer) drawn without replacement, kept in scene order."""
    idx = np.sort(rng.choice(len(items), size=min(n, len(items)), replace=False))
    return [items[i] for i in idx]


def replace_cases(scenes: Sequence[Scene], n_items: int, part: str, rng: np.random.Generator,
                  relations: Mapping[str, Relation] = RELATIONS,
                  hp_map: Mapping[str, Mapping[str, str]] = HARD_POSITIVE_MAP,
                  ) -> tuple[list[HardPositiveCase], list[int]]:
    """The cases of one REPLACE part (``replace_att`` / ``replace_rel``) and the scene index of each, in a world
    with the relations ``relations`` (default: the first world's) and the hard-positive map ``hp_map``
    (:func:`hard_positive_map`; default the first world's)."""
    pool = []
    for i, sc in enumerate(scenes):
        items = (attribute_items(sc, hp_map, rng) if part == "replace_att"
                 else relation_items(sc, rng, relations, hp_map))
        pool += [(i, item) for item in items]
    chosen = _sample(pool, n_items, rng)
    cases = [HardPositiveCase(k, f"{IMAGE_DIR}/{image_file_name(scenes[i].image_id)}", c, c_p, c_n,
                              image_id=scenes[i].image_id) for k, (i, (c, c_n, c_p)) in enumerate(chosen)]
    return cases, [i for i, _ in chosen]


# ---------------------------------------------------------------------------------------------------- SWAP


def swap_positive(caption: str) -> str:
    """The paper's SWAP hard positive: the two "the ATTR OBJ" phrases around "and" in the other order, each
    object keeping its attribute ("the crouched cat and the open door" -> "the open door and the crouched cat")."""
    words = caption.split()
    if len(words) != 7 or words[0] != "the" or words[3:5] != ["and", "the"]:
        raise ValueError(f"SWAP: caption {caption!r} is not 'the <attr> <object> and the <attr> <object>'")
    return f"the {words[5]} {words[6]} and the {words[1]} {words[2]}"


def swap_records(scenes: Sequence[Scene], image_size: int, seed: int) -> tuple[list[dict], list[str]]:
    """The VG-Attribution records (exactly the ARO twin's, ``image_path`` as its image file name) and their hard
    positives, each checked true on its scene."""
    records = build_vg_attribution(list(scenes), image_size, np_rng(seed, "benchmarks", "vg_attribution"))
    by_id = {sc.image_id: sc for sc in scenes}
    positives = []
    for n, rec in enumerate(records):
        scene, c_p = by_id[rec["image_path"]], swap_positive(rec["true_caption"])
        if not _valid(scene, rec["true_caption"], rec["false_caption"], c_p):
            raise RuntimeError(f"SWAP record {n} ({scene.image_id}): hard positive {c_p!r} or negative "
                               f"{rec['false_caption']!r} disagrees with the scene graph")
        rec["image_path"] = image_file_name(scene.image_id)
        positives.append(c_p)
    return records, positives


# --------------------------------------------------------------------------------------------------- build


def _options(options: Mapping[str, Any]) -> dict[str, int]:
    check_known(options, DEFAULTS, "hardpos")
    return {k: option(options, k, d, "hardpos", minimum=1) for k, d in DEFAULTS.items()}


def _write_images(root: Path, images: np.ndarray, scenes: Sequence[Scene], indices: set[int]) -> None:
    for i in sorted(indices):
        write_png(root / IMAGE_DIR / image_file_name(scenes[i].image_id), images[i])


@TWINS.register("hardpos")
def build_hardpos(ctx: TwinContext) -> TwinResult:
    """REPLACE (attributes, relations) and SWAP pair files under ``<benchmarks>/hardpos``; inputs
    ``hard_positives_dir`` (SWAP also needs ``aro_images``, which the ARO twin provides)."""
    opts = _options(ctx.options)
    split = ctx.split(SPLIT)
    scenes = split.scenes()
    root = ctx.folder()
    used: set[int] = set()
    counts: dict[str, int] = {}
    for part in REPLACE_PARTS:
        cases, scene_idx = replace_cases(scenes, opts[f"{part}_items"], part, ctx.rng(part), ctx.wcfg.relations,
                                         hard_positive_map(ctx.captions.synonyms))
        if not cases:
            raise ValueError(f"hardpos twin: no {part} case in {SPLIT} ({len(scenes)} scenes)")
        hp_format.write_replace(root, part, cases)
        used |= set(scene_idx)
        counts[f"{part}/n_cases"] = len(cases)
    _write_images(root, split.images, scenes, used)
    counts["replace/n_images"] = len(used)
    records, positives = swap_records(scenes, ctx.wcfg.image_size, ctx.seed)
    hp_format.write_swap(root, records, positives)
    counts["swap/n_cases"] = len(records)
    return TwinResult(inputs={"hard_positives_dir": ctx.rel(root)}, counts=counts)
