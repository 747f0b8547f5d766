"""VALSE twin: every VALSE instrument the toy world can express, in VALSE's released instrument-file format.

VALSE (Parcalabescu et al., ACL 2022; CE-CLIP catalog §2.3) pairs an image with a caption and a *foil*, the
caption with one linguistic phenomenon altered; a model is right when it scores the caption above the foil, on
the MTurk-validated cases only (``mturk.caption >= 2``). The twin writes ``data/<instrument>.json`` with
:func:`vlcomp.formats.valse.write_instrument` (one JSON object keyed by foil id; ``dataset``, ``image_file``,
``caption``, ``foil``, ``mturk`` and the instrument's other VALSE fields: ``classes``, ``classes_foil``,
``answer``, ``provenance_of_foils``, ``foil_method``, ...) and the images as PNG files under ``images/<folder>``,
one folder per image source key of the CE-CLIP evaluator (:data:`vlcomp.formats.valse.IMAGE_SOURCE`), so the
released loader and the ``valse`` benchmark record read it unchanged. The scene graphs of the scenes the twin
samples itself (plurals, counting) are written beside, in :data:`SCENES_FILE` (the world's ``scenes.jsonl``
record format), so every case can be re-checked; the other cases name their world split and image
(``dataset``, ``dataset_idx``).

Ground truth. Every caption and foil is built from a claim about the scene graph (:class:`Quantity`: "there
is/are <quantifier> <noun phrase>", :class:`Fact`: "<noun phrase> <relation> <noun phrase>") and checked
exactly on it. That check stands in for VALSE's three annotators (:func:`mturk_votes`): caption true and foil
false gives ``{"foil": 0, "caption": 3, "other": 0}`` (validated); a foil that is also true gives
``{"foil": 3, "caption": 0, "other": 0}`` and a caption that is not true ``{"foil": 0, "caption": 0,
"other": 3}``, both failing ``caption >= 2``. Such cases stay in the file as non-validated ones (VALSE keeps both).

Instruments and the rules applied (the catalogs name the 11 files but not how each was built: the rules below
are VALSE's construction as its released files show it, ``lezhang7/Enhance-FineGrained/VALSE/data``, read
through the code index; the counting rules are inferred from the numbers in those files, AMBIGUOUS):

- ``existence`` (Visual7W -> ``vg_test`` scenes): "there is no X" vs "there is a X" (``zero_to_something``, X a
  shape absent from the image) or the reverse (``something_to_zero``, X present); one direction per scene, 50/50.
- ``plurals`` (COCO 2017 -> sampled multiples scenes): singular vs plural noun phrase, "there is one X" vs
  "there are some Xs" (``change NP to PL``) or the reverse (``change NP to SG``), 50/50. The noun phrase is a
  shape, or a colour and a shape (then one object, or two or more, have that colour among those of the shape).
- ``counting-hard`` / ``counting-small-quant`` / ``counting-adversarial`` (Visual7W -> sampled multiples
  scenes): "there is one X" / "there are two Xs" / "there are three Xs" with the true count vs another count;
  they differ in how the numbers are chosen (:func:`counting_pairs`).
- ``relations`` (COCO 2017 -> ``coco_test``): a spatial fact of the scene, the relation phrase replaced by
  another spatial phrase drawn from the captions' own phrase distribution (VALSE's "matched distribution").
- ``action-replacement`` (SWiG -> ``vg_test``): a fact with a verb-like relation (pointing at, covering,
  covered by, surrounding), the verb replaced by another verb-like relation.
- ``actant-swap`` (SWiG -> ``vg_test``): the same kind of fact, subject and object swapped.
- ``foil-it`` (COCO 2014 -> ``coco_test``): a fact of the scene, the subject or the object noun (50/50) replaced
  by a shape absent from the image (FOIL-it's rule: the foil noun names an object not in the image).

AMBIGUOUS and deviations (the toy's closed vocabulary has no "exactly", "single", "number", "yes"):

- number words are read exactly ("there are two circles" = exactly two, as VALSE writes "exactly 2"); "one X"
  is VALSE's "exactly one X" / "a single X", "some Xs" its "some Xs" / "a number of Xs" (two or more);
- counts are 1..3 (number words one, two, three): VALSE counts 0..14. ``counting-small-quant`` (VALSE: caption
  and foil numbers 0..3) keeps its rule on 1..3; ``counting-hard`` (VALSE: caption and foil numbers balanced)
  balances the 6 ordered pairs of distinct numbers exactly; ``counting-adversarial`` (VALSE: true counts 4 and
  more, foils 0..3, so a preference for small numbers always loses) becomes true counts 2..3 with a strictly
  smaller foil. On 1..3, small-quant and hard differ only by the exact balance;
- existence is singular ("there is no X"), VALSE's files are plural ("There are no X"); counting and plurals
  never count "cross": its plural "crosses" is not in the vocabulary (whose plural token is "crosss");
- relation foils never use "near": the world never annotates it, so its truth cannot be checked; action foils
  never use the caption verb's converse ("covering" -> "covered by" would be an actant swap);
- FOIL-it replaces a noun with one of the same supercategory; the toy's shapes have none, any absent shape is used;
- plausibility: VALSE's relation and action foils are possible sentences (SpanBERT predictions, NLI and
  grammaticality filters). A toy foil like "a red diamond pointing at a square" is impossible in the world and
  would give a text-only shortcut, so relation, action-replacement and FOIL-it foils keep :func:`plausible`
  (only an arrow points, only a container shape surrounds, only a bar supports a non-bar). Actant swaps are not
  filtered: VALSE's own swaps are often implausible ("A fireplug pees the dog.");
- the world in use: the relation phrases (:func:`spatial_relations`, :func:`verb_relations`) and the shapes
  (existence, FOIL-it) are those of ``WorldConfig.relations`` (a support world adds "sitting on", "hanging from"
  and the bar); a claim is true when :func:`vlcomp.twins.implied_facts` has it (the scene graph, what a support
  contact entails, the converses: "a star above a bar" for a star sitting on it);
- one case per scene; with fewer eligible scenes than ``n_per_instrument`` the instrument is smaller.

Options (``benchmarks.twins.valse``): ``n_per_instrument`` (default 200): cases written per instrument,
validated or not. Inputs returned: ``valse_dir``, ``valse_images`` (folder key -> folder) and
``valse_instruments`` (the instruments built; the coreference files do not exist).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..formats.valse import IMAGE_SOURCE, MIN_CAPTION_VOTES, write_instrument
from ..io import write_jsonl
from ..world.concepts import ALL_RELATIONS, COLOURS, RELATIONS, SHAPES, Relation
from ..world.multiples import MAX_OBJECTS, count_matching, sample_multiples_scene
from ..world.render import render
from ..world.scene import Obj, Scene, WorldConfig
from . import TWINS, TwinContext, TwinResult, check_known, implied_facts, option, world_shapes
from . import plausible as _plausible
from .images import image_file_name, write_png

NAME = "valse"
#: The VALSE instruments the twin writes, in CE-CLIP's ``DATA`` order.
INSTRUMENTS = ("existence", "plurals", "counting-hard", "counting-small-quant", "counting-adversarial",
               "relations", "action-replacement", "actant-swap", "foil-it")
#: What the toy world cannot express (the report lists it).
NOT_EXPRESSIBLE: tuple[tuple[str, str], ...] = (
    ("coreference-standard", "needs a visual dialogue: a caption, then a question with a pronoun answered yes or "
                             "no (VisDial); the world has no dialogues or questions and 'yes' is not in its "
                             "vocabulary"),
    ("coreference-hard", "the same: the 'clean' coreference dialogues of VisDial val2018"),
    ("counting: counts 0 and 4 or more", "the vocabulary's number words are one, two and three, and a 48 px "
                                         "scene holds at most 5 objects; counting-adversarial's true counts of "
                                         "4+ become the largest toy counts (2-3) with smaller foils"),
    ("relations: 'near' and prepositions outside the world", "the world never annotates 'near', so a caption or "
                                                             "foil with it cannot be checked; VALSE's other "
                                                             "prepositions (on, off, outside, ...) have no toy "
                                                             "meaning"),
    ("actions: verbs beyond the world's verb-like relations", "only pointing at, covering, covered by and "
                                                              "surrounding exist; SWiG's 500 verbs and their "
                                                              "human agents do not"),
)
DEFAULT_N = 200
OPTIONS = ("n_per_instrument",)
#: The ``dataset`` of cases on scenes sampled by the twin (the others name their world split).
SAMPLED = "multiples"
#: Scene graphs of the sampled scenes, one ``Scene.to_record()`` per line, in the twin's folder.
SCENES_FILE = "sampled_scenes.jsonl"
NUMBER_WORDS = {1: "one", 2: "two", 3: "three"}
NUMBERS = tuple(NUMBER_WORDS)
#: Shapes whose plural is in the closed vocabulary (``cross`` -> "crosss" is not English; see module docstring).
COUNTABLE_SHAPES = tuple(s for s in SHAPES if s != "cross")


def spatial_relations(relations: Mapping[str, Relation] = RELATIONS) -> tuple[str, ...]:
    """The spatial phrases of the world's relations ``relations`` a case may use ("near" is never annotated)."""
    return tuple(p for p, r in relations.items() if r.group == "spatial" and p != "near")


def verb_relations(relations: Mapping[str, Relation] = RELATIONS) -> tuple[str, ...]:
    """The verb-like phrases of the world's relations ``relations``."""
    return tuple(p for p, r in relations.items() if r.group == "verb")


#: The first world's :func:`spatial_relations` and :func:`verb_relations`.
SPATIAL = spatial_relations()
VERBS = verb_relations()
#: Probability that a plurals noun phrase names a colour as well as a shape.
COLOUR_NP_PROB = 0.5


# --------------------------------------------------------------------------------------------- claims


def article(phrase: str) -> str:
    return "an" if phrase[0] in "aeiou" else "a"


@dataclass(frozen=True)
class NounPhrase:
    """A shape, optionally with a colour: matches the objects having both."""

    shape: str
    colour: str | None = None

    def matches(self, o: Obj) -> bool:
        return o.shape == self.shape and (self.colour is None or o.colour == self.colour)

    def text(self, plural: bool = False) -> str:
        if plural and self.shape not in COUNTABLE_SHAPES:
            raise ValueError(f"no plural of {self.shape!r} in the closed vocabulary")
        noun = self.shape + "s" if plural else self.shape
        return f"{self.colour} {noun}" if self.colour else noun


#: Quantifier -> (is the noun plural, does a count satisfy it).
QUANTIFIERS = {
    "no": (False, lambda n: n == 0),
    "a": (False, lambda n: n >= 1),
    "one": (False, lambda n: n == 1),
    "two": (True, lambda n: n == 2),
    "three": (True, lambda n: n == 3),
    "some": (True, lambda n: n >= 2),
}


@dataclass(frozen=True)
class Quantity:
    """"there is/are <quantifier> <noun phrase>": true when the number of matching objects satisfies it."""

    np: NounPhrase
    quantifier: str

    def holds(self, scene: Scene) -> bool:
        return QUANTIFIERS[self.quantifier][1](sum(self.np.matches(o) for o in scene.objects))

    def text(self) -> str:
        plural = QUANTIFIERS[self.quantifier][0]
        phrase = self.np.text(plural)
        word = article(phrase) if self.quantifier == "a" else self.quantifier
        return f"there {'are' if plural else 'is'} {word} {phrase}"


@dataclass(frozen=True)
class Fact:
    """"a <subject> <relation> a <object>": true when some matching pair is in that relation."""

    subject: NounPhrase
    relation: str
    object: NounPhrase

    def holds(self, scene: Scene) -> bool:
        return any(p == self.relation and self.subject.matches(scene.obj(s)) and self.object.matches(scene.obj(o))
                   for s, p, o in implied_facts(scene))

    def text(self) -> str:
        a, b = self.subject.text(), self.object.text()
        return f"{article(a)} {a} {self.relation} {article(b)} {b}"


Claim = Quantity | Fact


def mturk_votes(caption_true: bool, foil_true: bool) -> dict[str, int]:
    """The 3 annotators' votes of an exactly checked case (see the module docstring), in VALSE's key order."""
    if caption_true and not foil_true:
        return {"foil": 0, "caption": 3, "other": 0}
    if foil_true:
        return {"foil": 3, "caption": 0, "other": 0}
    return {"foil": 0, "caption": 0, "other": 3}


@dataclass(frozen=True)
class Item:
    """One case before it is written: the scene, the two claims, the instrument's extra VALSE fields."""

    scene: Scene
    caption: Claim
    foil: Claim
    fields: Mapping[str, Any] = field(default_factory=dict)
    source: str = SAMPLED  # the world split of the scene, or SAMPLED
    index: int = -1  # the scene's position in that split

    @property
    def votes(self) -> dict[str, int]:
        return mturk_votes(self.caption.holds(self.scene), self.foil.holds(self.scene))


# ------------------------------------------------------------------------------------- helpers on scenes


def _colour_np(o: Obj) -> NounPhrase:
    return NounPhrase(o.shape, o.colour)


def _unique_shapes(scene: Scene) -> bool:
    """True when no shape repeats (a shape-named noun phrase then picks one object: world splits always)."""
    shapes = [o.shape for o in scene.objects]
    return len(set(shapes)) == len(shapes)


def _pick(rng: np.random.Generator, values: Sequence) -> Any:
    return values[int(rng.integers(len(values)))]


def _scene_order(scenes: Sequence[Scene], rng: np.random.Generator) -> Iterable[tuple[int, Scene]]:
    """The scenes with unique shapes, in a seeded random order, with their split positions."""
    for i in rng.permutation(len(scenes)):
        if _unique_shapes(scenes[i]):
            yield int(i), scenes[i]


def _facts(scene: Scene, relations: Sequence[str]) -> list[tuple[int, str, int]]:
    return [r for r in scene.relations if r[1] in relations]


# ------------------------------------------------------------------------------------------ existence


def existence_items(scenes: Sequence[Scene], split: str, rng: np.random.Generator, n: int,
                    relations: Mapping[str, Relation] = RELATIONS) -> list[Item]:
    """One case per scene: "there is no X" (X absent) vs "there is a X", or the reverse (X present), 50/50; X a
    shape of the world of ``relations`` (:func:`vlcomp.twins.world_shapes`)."""
    shapes = world_shapes(relations)
    items = []
    for i, sc in _scene_order(scenes, rng):
        if len(items) == n:
            break
        present = sorted({o.shape for o in sc.objects}, key=shapes.index)
        absent = [s for s in shapes if s not in present]
        if rng.random() < 0.5:
            shape, caption_q, foil_q, provenance = _pick(rng, absent), "no", "a", "zero_to_something"
        else:
            shape, caption_q, foil_q, provenance = _pick(rng, present), "a", "no", "something_to_zero"
        np_ = NounPhrase(shape)
        caption, foil = Quantity(np_, caption_q), Quantity(np_, foil_q)
        count = count_matching(sc, shape)
        fields = {"answer": count, "classes": count, "split": "test", "classes_foil": [1 if count == 0 else 0],
                  "declarative_statement": caption.text(), "declarative_statement_foils": [foil.text()],
                  "provenance_of_foils": provenance}
        items.append(Item(sc, caption, foil, fields, split, i))
    return items


# ------------------------------------------------------------------------------- multiples: plurals, counting


def _other_colours(rng: np.random.Generator, avoid: str, k: int) -> list[str]:
    """``k`` colours different from ``avoid`` (repeats allowed)."""
    pool = [c for c in COLOURS if c != avoid]
    return [_pick(rng, pool) for _ in range(k)]


def _distractors(rng: np.random.Generator, shape: str, room: int) -> list[tuple[str, str]]:
    """0..2 objects (at most ``room``) of other shapes, random colours."""
    k = int(rng.integers(0, min(2, room) + 1))
    others = [s for s in SHAPES if s != shape]
    return [(_pick(rng, others), _pick(rng, list(COLOURS))) for _ in range(k)]


def _sampled_scene(rng: np.random.Generator, cfg: WorldConfig, instrument: str, k: int,
                   targets: list[tuple[str, str]]) -> Scene:
    """The target looks plus distractors, shuffled so object ids do not give the targets away."""
    looks = targets + _distractors(rng, targets[0][0], MAX_OBJECTS - len(targets))
    looks = [looks[j] for j in rng.permutation(len(looks))]
    return sample_multiples_scene(rng, cfg, f"{NAME}_{instrument}/{k:06d}", looks)


def _plural_targets(rng: np.random.Generator, shape: str, singular: bool) -> tuple[NounPhrase, list[tuple[str, str]]]:
    """The noun phrase and the looks of the objects of ``shape``: exactly one matches the phrase (``singular``)
    or two or more do."""
    colour = _pick(rng, list(COLOURS))
    n_shape = int(rng.integers(1, 4)) if singular else int(rng.integers(2, 4))
    with_colour = (singular and n_shape > 1) or rng.random() < COLOUR_NP_PROB
    if not with_colour:
        return NounPhrase(shape), [(shape, _pick(rng, list(COLOURS))) for _ in range(n_shape)]
    n_match = 1 if singular else int(rng.integers(2, n_shape + 1))
    colours = [colour] * n_match + _other_colours(rng, colour, n_shape - n_match)
    return NounPhrase(shape, colour), [(shape, c) for c in colours]


def plurals_items(rng: np.random.Generator, cfg: WorldConfig, n: int) -> list[Item]:
    """``n`` sampled scenes: "there is one X" vs "there are some Xs" (change NP to PL), or the reverse, 50/50."""
    items = []
    for k in range(n):
        singular = bool(rng.random() < 0.5)
        np_, targets = _plural_targets(rng, _pick(rng, COUNTABLE_SHAPES), singular)
        sc = _sampled_scene(rng, cfg, "plurals", k, targets)
        one, some = Quantity(np_, "one"), Quantity(np_, "some")
        caption, foil = (one, some) if singular else (some, one)
        sg, pl = np_.text(), np_.text(plural=True)
        fields = {"foil_method": f"change NP to {'PL' if singular else 'SG'}",
                  "classes": sg if singular else pl, "classes_foil": pl if singular else sg}
        items.append(Item(sc, caption, foil, fields))
    return items


def counting_pairs(instrument: str, n: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """``n`` (true count, foil count) pairs for a counting instrument, counts in 1..3:

    - ``counting-hard`` (balanced): the 6 ordered pairs of distinct numbers in seeded rounds, so every number is
      the true count and the foil count equally often (exactly when ``n`` is a multiple of 6);
    - ``counting-small-quant`` (small numbers): true count uniform in 1..3, foil uniform among the other two;
    - ``counting-adversarial``: true count uniform in 2..3, foil uniform among the smaller numbers, so a model
      preferring small numbers always picks the foil.
    """
    if instrument == "counting-hard":
        rounds = [(c, f) for c in NUMBERS for f in NUMBERS if c != f]
        out: list[tuple[int, int]] = []
        while len(out) < n:
            out += [rounds[j] for j in rng.permutation(len(rounds))]
        return out[:n]
    if instrument == "counting-small-quant":
        trues = [_pick(rng, NUMBERS) for _ in range(n)]
        return [(c, _pick(rng, [f for f in NUMBERS if f != c])) for c in trues]
    if instrument == "counting-adversarial":
        trues = [_pick(rng, NUMBERS[1:]) for _ in range(n)]
        return [(c, _pick(rng, [f for f in NUMBERS if f < c])) for c in trues]
    raise ValueError(f"unknown counting instrument {instrument!r}")


def counting_items(instrument: str, rng: np.random.Generator, cfg: WorldConfig, n: int) -> list[Item]:
    """``n`` sampled scenes with ``c`` objects of one shape (random colours) and 0..2 of other shapes:
    "there are <c> Xs" vs "there are <f> Xs", (c, f) from :func:`counting_pairs`."""
    items = []
    for k, (c, f) in enumerate(counting_pairs(instrument, n, rng)):
        shape = _pick(rng, COUNTABLE_SHAPES)
        sc = _sampled_scene(rng, cfg, instrument, k, [(shape, _pick(rng, list(COLOURS))) for _ in range(c)])
        np_ = NounPhrase(shape)
        fields = {"answer": c, "classes": c, "split": "test", "classes_foil": f}
        items.append(Item(sc, Quantity(np_, NUMBER_WORDS[c]), Quantity(np_, NUMBER_WORDS[f]), fields))
    return items


# ------------------------------------------------------------------------------ facts: relations, actions


def plausible(subject: str, relation: str, obj: str) -> bool:
    """Whether ``relation`` can hold at all between objects of these shapes in the world (the toy's stand-in for
    VALSE's plausibility filters: its action and relation foils read as possible sentences): only an arrow
    points; only a hollow circle, square or diamond surrounds, and never an arrow; only a bar supports, and never
    a bar or an arrow (:func:`vlcomp.twins.plausible`)."""
    return _plausible(subject, relation, obj)


def _fact_cases(scenes: Sequence[Scene], rng: np.random.Generator, n: int, relations: Sequence[str],
                keep: Callable[[Fact, Scene], bool] = lambda f, sc: True) -> list[tuple[int, Scene, Fact]]:
    """One fact per scene, up to ``n``: uniform among the scene's facts with one of ``relations`` that ``keep``
    accepts (scenes without one are passed over); noun phrases colour + shape."""
    out = []
    for i, sc in _scene_order(scenes, rng):
        if len(out) == n:
            break
        facts = [Fact(_colour_np(sc.obj(s)), p, _colour_np(sc.obj(o))) for s, p, o in _facts(sc, relations)]
        facts = [f for f in facts if keep(f, sc)]
        if facts:
            out.append((i, sc, _pick(rng, facts)))
    return out


def foil_relations(fact: Fact, relations: Mapping[str, Relation] = RELATIONS) -> list[str]:
    """The spatial phrases of the world's ``relations`` that may replace the fact's: not its own, and
    :func:`plausible` for its shapes."""
    return [p for p in spatial_relations(relations)
            if p != fact.relation and plausible(fact.subject.shape, p, fact.object.shape)]


def matched_foil_relation(fact: Fact, frequency: Mapping[str, int], rng: np.random.Generator,
                          relations: Mapping[str, Relation] = RELATIONS) -> str:
    """One of :func:`foil_relations`, drawn in proportion to how often the instrument's captions use it (VALSE's
    "matched distribution": foil phrases as frequent as caption phrases); uniform when none of them occurs in
    the captions."""
    others = foil_relations(fact, relations)
    weights = np.asarray([frequency.get(p, 0) for p in others], dtype=float)
    if weights.sum() == 0:
        weights = np.ones(len(others))
    return others[int(rng.choice(len(others), p=weights / weights.sum()))]


def relations_items(scenes: Sequence[Scene], split: str, rng: np.random.Generator, n: int,
                    relations: Mapping[str, Relation] = RELATIONS) -> list[Item]:
    """A spatial fact per scene, the relation replaced with a matched-distribution spatial phrase (the spatial
    phrases of the world's ``relations``)."""
    cases = _fact_cases(scenes, rng, n, spatial_relations(relations))
    frequency = Counter(f.relation for _, _, f in cases)
    items = []
    for i, sc, fact in cases:
        new = matched_foil_relation(fact, frequency, rng, relations)
        fields = {"foil_method": "relation phrase replaced (matched distribution)", "classes": fact.relation,
                  "classes_foil": new}
        items.append(Item(sc, fact, Fact(fact.subject, new, fact.object), fields, split, i))
    return items


def replacement_verbs(fact: Fact, relations: Mapping[str, Relation] = RELATIONS) -> list[str]:
    """The verb-like relations of the world's ``relations`` that may replace the fact's: not itself, not its
    converse, :func:`plausible`."""
    verb = fact.relation
    return [v for v in verb_relations(relations) if v not in (verb, ALL_RELATIONS[verb].converse)
            and plausible(fact.subject.shape, v, fact.object.shape)]


def action_replacement_items(scenes: Sequence[Scene], split: str, rng: np.random.Generator, n: int,
                             relations: Mapping[str, Relation] = RELATIONS) -> list[Item]:
    """A verb-like fact per scene that has a replacement verb, the verb replaced by one of them (uniform)."""
    items = []
    for i, sc, fact in _fact_cases(scenes, rng, n, verb_relations(relations),
                                   keep=lambda f, sc: bool(replacement_verbs(f, relations))):
        new = _pick(rng, replacement_verbs(fact, relations))
        fields = {"foiling_method": "change_action", "classes": fact.relation, "classes_foil": new}
        items.append(Item(sc, fact, Fact(fact.subject, new, fact.object), fields, split, i))
    return items


def actant_swap_items(scenes: Sequence[Scene], split: str, rng: np.random.Generator, n: int,
                      relations: Mapping[str, Relation] = RELATIONS) -> list[Item]:
    """A verb-like fact per scene (the verb-like relations of the world's ``relations``), subject and object
    swapped."""
    items = []
    for i, sc, fact in _fact_cases(scenes, rng, n, verb_relations(relations)):
        fields = {"classes": fact.subject.text(), "classes_foil": fact.object.text()}
        items.append(Item(sc, fact, Fact(fact.object, fact.relation, fact.subject), fields, split, i))
    return items


def noun_foils(fact: Fact, scene: Scene, relations: Mapping[str, Relation] = RELATIONS) -> dict[str, list[Fact]]:
    """``{"subject": [...], "object": [...]}``: the fact with that noun's shape replaced by each shape of the
    world of ``relations`` (:func:`vlcomp.twins.world_shapes`) absent from the scene that keeps it
    :func:`plausible` (colours kept); sides without one are left out."""
    absent = [s for s in world_shapes(relations) if s not in {o.shape for o in scene.objects}]
    subj, rel, obj = fact.subject, fact.relation, fact.object
    sides = {"subject": [Fact(NounPhrase(s, subj.colour), rel, obj) for s in absent if plausible(s, rel, obj.shape)],
             "object": [Fact(subj, rel, NounPhrase(s, obj.colour)) for s in absent if plausible(subj.shape, rel, s)]}
    return {side: foils for side, foils in sides.items() if foils}


def foil_it_items(scenes: Sequence[Scene], split: str, rng: np.random.Generator, n: int,
                  relations: Mapping[str, Relation] = RELATIONS) -> list[Item]:
    """A fact per scene (any non-symmetric relation of the world's ``relations``), the subject or the object noun
    (50/50 when both can be) replaced by an absent shape (uniform among the plausible ones)."""
    phrases = tuple(p for p, r in relations.items() if not r.symmetric)
    items = []
    for i, sc, fact in _fact_cases(scenes, rng, n, phrases, keep=lambda f, sc: bool(noun_foils(f, sc, relations))):
        sides = noun_foils(fact, sc, relations)
        side = _pick(rng, sorted(sides))
        foil = _pick(rng, sides[side])
        old, new = getattr(fact, side).shape, getattr(foil, side).shape
        items.append(Item(sc, fact, foil, {"classes": old, "classes_foil": new}, split, i))
    return items


# -------------------------------------------------------------------------------------------- writing


#: The ``linguistic_phenomena`` field of each instrument (VALSE's values).
PHENOMENON = {"existence": "existence", "plurals": "plurals", "counting-hard": "counting",
              "counting-small-quant": "counting", "counting-adversarial": "counting", "relations": "relations",
              "action-replacement": "actions", "actant-swap": "actions", "foil-it": "noun phrases"}


def foil_id(instrument: str, k: int, image_file: str) -> str:
    """Ids in the style of each released file (``existence_<image>``, ``plurals:<image>``, ``actions_test_<k>``,
    a number for FOIL-it); unique within a file because each case has its own scene."""
    stem = Path(image_file).stem
    if instrument in ("action-replacement", "actant-swap"):
        return f"actions_test_{k}"
    if instrument == "foil-it":
        return str(k)
    if instrument in ("plurals", "relations"):
        return f"{instrument}:{stem}"
    return f"{PHENOMENON[instrument]}_{stem}"


def valse_record(instrument: str, item: Item, image_file: str) -> dict[str, Any]:
    """One case in VALSE's record layout."""
    return {"dataset": item.source, "original_split": "test", "dataset_idx": item.scene.image_id,
            "linguistic_phenomena": PHENOMENON[instrument], "image_file": image_file,
            "caption": item.caption.text(), **item.fields, "mturk": item.votes, "foil": item.foil.text()}


def build_items(ctx: TwinContext, n: int) -> dict[str, list[Item]]:
    """Every instrument's cases (each from its own seeded generator)."""
    vg, coco = ctx.split("vg_test").scenes(), ctx.split("coco_test").scenes()
    rels = ctx.wcfg.relations
    items = {
        "existence": existence_items(vg, "vg_test", ctx.rng("existence"), n, rels),
        "plurals": plurals_items(ctx.rng("plurals"), ctx.wcfg, n),
        **{ins: counting_items(ins, ctx.rng(ins), ctx.wcfg, n)
           for ins in ("counting-hard", "counting-small-quant", "counting-adversarial")},
        "relations": relations_items(coco, "coco_test", ctx.rng("relations"), n, rels),
        "action-replacement": action_replacement_items(vg, "vg_test", ctx.rng("action-replacement"), n, rels),
        "actant-swap": actant_swap_items(vg, "vg_test", ctx.rng("actant-swap"), n, rels),
        "foil-it": foil_it_items(coco, "coco_test", ctx.rng("foil-it"), n, rels),
    }
    for ins, its in items.items():
        if not any(it.votes["caption"] >= MIN_CAPTION_VOTES for it in its):
            raise ValueError(f"valse twin: no validated {ins} case could be built ({len(its)} cases; the world's "
                             f"test splits are too small or lack the relations it needs)")
    return items


def _pixels(ctx: TwinContext, item: Item, images: dict[str, np.ndarray]) -> np.ndarray:
    if item.source == SAMPLED:
        return render(item.scene, ctx.wcfg.image_size)
    if item.source not in images:
        images[item.source] = ctx.split(item.source).images
    return images[item.source][item.index]


def write_twin(ctx: TwinContext, items: Mapping[str, Sequence[Item]]) -> tuple[Path, dict[str, Path], int]:
    """``data/<instrument>.json``, ``images/<folder key>/<image>.png`` and :data:`SCENES_FILE`; returns the data
    dir, the image folders and the number of images written."""
    data_dir = ctx.folder("data")
    folders: dict[str, Path] = {}
    split_images: dict[str, np.ndarray] = {}
    written: set[Path] = set()
    for ins, its in items.items():
        key = IMAGE_SOURCE[ins]
        folders.setdefault(key, ctx.folder("images", key))
        records = {}
        for k, item in enumerate(its):
            name = image_file_name(item.scene.image_id)
            records[foil_id(ins, k, name)] = valse_record(ins, item, name)
            path = folders[key] / name
            if path not in written:
                write_png(path, _pixels(ctx, item, split_images))
                written.add(path)
        write_instrument(data_dir / f"{ins}.json", records)
    sampled = [it.scene.to_record() for its in items.values() for it in its if it.source == SAMPLED]
    write_jsonl(ctx.folder() / SCENES_FILE, sampled)
    return data_dir, folders, len(written)


def _options(ctx: TwinContext) -> int:
    check_known(ctx.options, OPTIONS, NAME)
    return option(ctx.options, "n_per_instrument", DEFAULT_N, NAME, minimum=1)


@TWINS.register(NAME)
def build_valse(ctx: TwinContext) -> TwinResult:
    """The VALSE twin: ``data/<instrument>.json`` for every expressible instrument, images beside it."""
    items = build_items(ctx, _options(ctx))
    data_dir, folders, n_images = write_twin(ctx, items)
    counts = {"n_images": n_images}
    for ins, its in items.items():
        counts[f"{ins}/n_cases"] = len(its)
        counts[f"{ins}/n_validated"] = sum(it.votes["caption"] >= MIN_CAPTION_VOTES for it in its)
    inputs = {"valse_dir": ctx.rel(data_dir), "valse_images": {k: ctx.rel(f) for k, f in sorted(folders.items())},
              "valse_instruments": list(items)}
    return TwinResult(inputs, counts)
