"""SugarCrepe twin: the seven subsets (REPLACE obj/att/rel, SWAP obj/att, ADD obj/att), in the released layout.

Stands for RAIVNLab/sugar-crepe ``data/<category>.json`` (Hsieh et al. 2023; refcode catalog §3): one COCO
val2017 image, one of its original COCO captions (the positive) and a hard negative made by one edit of that
caption. Here the images are the ``coco_test`` scenes (the COCO stand-in of the toy world), written as
``val2017/<12-digit split index>.png``, and the positives are the split's own coco-style captions.

The paper's three construction steps (catalog §3.2), each with its toy counterpart:

1. **Generation** (ChatGPT, one prompt per subset). A caption is parsed into noun phrases (determiner,
   attribute words, shape noun) and literal words (:func:`parse`); a caption the parser cannot rebuild word for
   word, or whose meaning it cannot read (:func:`interpret`), is not used. Each subset's edit:

   - ``replace_obj``: the shape noun of one noun phrase -> another shape;
   - ``replace_att``: one attribute word -> a word of the same kind (colour, size, texture) naming another value;
   - ``replace_rel``: the relation phrase -> another relation phrase;
   - ``swap_obj``: the two related noun phrases change places, each with its attributes;
   - ``swap_att``: two noun phrases exchange their attribute words of one kind;
   - ``add_obj``: ``with a [colour] <shape>`` appended, a shape the scene does not have (captions that already
     end in a ``with`` clause are not used);
   - ``add_att``: an attribute word of a kind the noun phrase does not mention, inserted in the caption style's
     order (size, colour, texture).

   The negative is rendered by the same code as the positive (articles agree), so it is as fluent as the
   caption style. Per caption and subset ``candidates_per_caption`` negatives are drawn from the valid ones.
2. **Validation** (humans in the paper) is exact here: the positive must hold of the scene graph and the
   negative must not (:func:`holds`: an injective assignment of the noun phrases to objects with every named
   attribute, the relation and the background).
3. **Adversarial refinement** (``adversarial_refine.py``, ported in :func:`adversarial_refine`): the score gaps
   (positive minus negative) of two blind text-only models are binned on a signed 50 x 50 grid and each bin keeps
   as many cases as its point mirror (a 10-bin 1-D grid when one model's gap is 0; cases where both gaps are 0
   stay). Each blind model then prefers the positive exactly as often as the negative (ties aside): a
   text-only model is at chance, the point of SugarCrepe.

AMBIGUOUS choices (the paper's text does not fix them for a toy world):

- the blind models: Vera and the CoLA grammar model cannot read the toy world, so a bigram and a unigram
  language model stand for them (:class:`NgramPlausibility`, plausibility = per-token geometric-mean
  probability, in (0, 1) like Vera's score), fitted on the ``coco_test`` captions with the scored image's own
  captions left out (:func:`held_out`): the text prior of the split, not a memory of the positive (the toy
  CLIP never trains on coco_test text either). Both are balanced exactly; other text-only models only as far
  as they agree with them (a held-out trigram keeps a residual preference for the positive: it sees the
  world's colour and layout priors in longer contexts; the tests measure it);
- ``candidates_per_caption`` (the paper does not say how many negatives ChatGPT gave per caption);
- the attribute kinds: size (``large``/``big``, ``small``/``little``), colour, texture (``hollow``,
  ``striped``, ``dotted``): the words the coco caption style uses; ``near`` is never a negative relation (the
  world never labels it, so a ``near`` claim cannot be checked); a relation is true iff the scene graph has it
  (separated objects get only their dominant-axis relation, so "to the right of" is false of an object mostly
  above and a little to the right);
- ``add_obj`` adds an object the scene does not have (the paper's examples add an absent object);
- the world in use: its relation phrases (``WorldConfig.relations``: a support world adds "sitting on" and
  "hanging from") are the ones a caption may state and ``replace_rel`` may write, its shapes
  (:func:`vlcomp.twins.world_shapes`: with the bar) the nouns; a claim is true when
  :func:`vlcomp.twins.implied_facts` has it (the scene graph, what a support contact entails, the converses);
- synonyms: a caption may say a shape, colour or relation with a synonym of ``world.captions.synonyms: extended``
  (box, rhombus, violet, over, under / beneath, beside; :data:`SHAPE_SYNONYMS`, :data:`COLOUR_WORDS`,
  :data:`RELATION_SYNONYMS`), read as the word it stands for, so such captions are positives too and no edit
  writes a synonym of the word it replaces as a negative; the edits write the plain words only (the first world's
  captions have none of these synonyms, so its twin is unchanged);
- captions with the object count in front ("two shapes: ...", ``world.captions.count_prob``) or a negated clause
  at the end ("... and no square", ``negation_prob``) are not of the parsed forms and are never positives;
- when a subset has more refined cases than ``items_per_subset``, whole mirrored pairs are kept at random, so
  the cap keeps the balance;
- ids are ``"0".."n-1"`` in image order (the released ids are contiguous but for one removed case).
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..formats import sugarcrepe as sugarcrepe_ds
from ..world.concepts import (
    ALL_RELATIONS,
    BACKGROUNDS,
    COLOURS,
    EXTENDED_SYNONYMS,
    RELATIONS,
    SHAPES,
    SIZES,
    SYNONYMS,
    Relation,
    world_words,
)
from ..world.scene import Obj, Scene
from . import TWINS, TwinContext, TwinResult, implied_facts, option, world_shapes
from .images import write_png

SPLIT = "coco_test"
DEFAULT_ITEMS_PER_SUBSET = 300
DEFAULT_CANDIDATES_PER_CAPTION = 3
N_GRIDS = 50  # adversarial_refine.py: the signed 2-D grid of score gaps
N_GRIDS_1D = 10  # adversarial_refine.py: the 1-D grid when one model's gap is 0

NOT_EXPRESSIBLE = (
    ("replace_rel / swap_obj: actions and clause-level edits",
     "the world has 13 spatial or verb-like relation phrases between two shapes and captions state one of "
     "them; SugarCrepe's relations are mostly actions ('riding', 'holding') and its swaps can cross clauses"),
    ("replace_att / add_att / swap_att: attributes beyond colour, size and texture",
     "no counts, ages, emotions or real materials ('wooden') exist in the world"),
    ("add_obj / replace_obj: plural and counted objects", "every toy object is one shape, named once"),
    ("human validation", "not needed: every negative is checked false against the exact scene graph"),
    ("Vera and the grammar model (the refinement's blind models)",
     "no pretrained language model reads the closed world vocabulary; n-gram models fitted on the coco_test "
     "captions stand in"),
)

UNVERIFIABLE_RELATIONS = ("near",)
"""Relations the world never labels (:func:`vlcomp.world.scene.compute_relations` emits only "next to")."""

SIZE_WORDS: dict[str, str] = {**{s: s for s in SIZES}, **{w: s for s, ws in SYNONYMS.items() for w in ws}}
"""Size word -> canonical size (``big`` means ``large``)."""
COLOUR_WORDS: dict[str, str] = {**{c: c for c in COLOURS},
                                **{w: c for c, ws in EXTENDED_SYNONYMS.items() if c in COLOURS for w in ws}}
"""Colour word -> colour (``violet`` means ``purple``: ``world.captions.synonyms: extended``)."""
SHAPE_SYNONYMS: dict[str, str] = {w: s for s, ws in EXTENDED_SYNONYMS.items() if s in SHAPES for w in ws}
"""Shape synonym -> shape (``box``: square, ``rhombus``: diamond; ``world.captions.synonyms: extended``)."""
RELATION_SYNONYMS: dict[str, str] = {w: r for r, ws in EXTENDED_SYNONYMS.items() if r in ALL_RELATIONS for w in ws}
"""Relation synonym -> relation phrase (``over``: above, ``under`` / ``beneath``: below, ``beside``: next to)."""
TEXTURE_WORDS = ("hollow", "solid", "striped", "dotted", "plain")
ATTRIBUTE_KINDS = ("size", "colour", "texture")
"""Attribute kinds in noun-phrase order (:func:`vlcomp.world.captions.noun_phrase`)."""
EDIT_WORDS: dict[str, tuple[str, ...]] = {
    "size": tuple(SIZE_WORDS), "colour": tuple(COLOURS), "texture": ("hollow", "striped", "dotted"),
}
"""The words an edit may write, per kind: the ones the coco caption style uses."""


# --------------------------------------------------------------------------------------- attribute words


def attribute_kind(word: str) -> str | None:
    """``size``, ``colour``, ``texture``, or None for a word that is no attribute."""
    if word in SIZE_WORDS:
        return "size"
    if word in COLOUR_WORDS:
        return "colour"
    return "texture" if word in TEXTURE_WORDS else None


def canonical(word: str) -> str:
    """The attribute value a word names (synonyms merged)."""
    return SIZE_WORDS.get(word) or COLOUR_WORDS.get(word, word)


def shape_of(noun: str) -> str:
    """The shape a noun names (``box`` is a square)."""
    return SHAPE_SYNONYMS.get(noun, noun)


def attribute_holds(word: str, o: Obj) -> bool:
    """Whether an attribute word is true of an object (``hollow``/``solid`` are the state; ``striped``,
    ``dotted``, ``plain`` the surface of a solid object)."""
    kind = attribute_kind(word)
    if kind == "size":
        return o.size == SIZE_WORDS[word]
    if kind == "colour":
        return o.colour == COLOUR_WORDS[word]
    if word in ("hollow", "solid"):
        return o.state == word
    if kind == "texture":
        return o.state == "solid" and o.material == word
    raise ValueError(f"{word!r} is not an attribute word")


# --------------------------------------------------------------------------------------- caption structure


@dataclass(frozen=True)
class NounPhrase:
    """``[determiner] attribute* shape``; ``det`` is ``a`` (rendered ``a``/``an``), ``the`` or None; ``shape`` is the
    noun as written (a synonym stays a synonym: :func:`shape_of` reads it)."""

    det: str | None
    attrs: tuple[str, ...]
    shape: str

    def words(self) -> list[str]:
        body = [*self.attrs, self.shape]
        if self.det is None:
            return body
        det = self.det if self.det == "the" else ("an" if body[0][0] in "aeiou" else "a")
        return [det, *body]

    def kinds(self) -> dict[str, int]:
        """Attribute kind -> position in ``attrs``."""
        return {attribute_kind(w): i for i, w in enumerate(self.attrs)}


Part = str | NounPhrase
Caption = tuple[Part, ...]


def parse(text: str, shapes: Sequence[str] = SHAPES) -> Caption:
    """Words and noun phrases, left to right (a word that starts no noun phrase stays a literal); nouns are
    ``shapes`` (the world's: :func:`vlcomp.twins.world_shapes`; default the first world's) and their synonyms
    (:data:`SHAPE_SYNONYMS`), kept as written."""
    words = text.split(" ")
    parts: list[Part] = []
    i = 0
    while i < len(words):
        np_, i_next = _noun_phrase_at(words, i, shapes)
        if np_ is None:
            parts.append(words[i])
            i += 1
        else:
            parts.append(np_)
            i = i_next
    return tuple(parts)


def _noun_phrase_at(words: Sequence[str], i: int, shapes: Sequence[str] = SHAPES) -> tuple[NounPhrase | None, int]:
    j = i + 1 if words[i] in ("a", "an", "the") else i
    k = j
    while k < len(words) and attribute_kind(words[k]) is not None:
        k += 1
    if k < len(words) and shape_of(words[k]) in shapes:
        det = None if j == i else ("the" if words[i] == "the" else "a")
        return NounPhrase(det, tuple(words[j:k]), words[k]), k + 1
    return None, i


def render(parts: Caption) -> str:
    return " ".join(w for p in parts for w in ([p] if isinstance(p, str) else p.words()))


@dataclass(frozen=True)
class Meaning:
    """What a caption claims. ``nps`` index into the parts: the main noun phrase(s), then the ``with`` one;
    ``relation`` (the world's phrase, also when the caption says it with a synonym: "over" is "above") holds from
    the first to the second (None: a single phrase or two joined by "and");
    ``relation_span`` is the slice of parts holding the relation words."""

    nps: tuple[int, ...]
    relation: str | None
    relation_span: tuple[int, int] | None
    background: str | None
    with_np: int | None


def interpret(parts: Caption, relations: Mapping[str, Relation] = RELATIONS) -> Meaning | None:
    """The meaning of a coco-style caption (``world.captions`` templates, plus the ``with`` clause of
    ``add_obj``), or None when the caption is not of that form; a relation is a phrase of the world's
    ``relations`` (default: the first world's).

    Forms: ``[there is] NP (and | [is] REL) NP [on a BG background] [(with | and) NP]`` and ``NP [with NP]``.
    A third object joined by "and" (``world.captions.extra_and_prob``: "a triangle above a circle and a heart")
    is read as the "with" clause, but only after a relation or a background, so "NP and NP" keeps its meaning.
    """
    if len(parts) >= 5 and isinstance(parts[-1], NounPhrase) and parts[-2] == "and":
        m = _interpret(parts, "and", relations)
        if m is not None and (m.relation is not None or m.background is not None):
            return m
    return _interpret(parts, "with", relations)


def _interpret(parts: Caption, joiner: str, relations: Mapping[str, Relation]) -> Meaning | None:
    end = len(parts)
    with_np = None
    if end >= 3 and isinstance(parts[-1], NounPhrase) and parts[-2] == joiner:
        with_np, end = end - 1, end - 2
    background = None
    if end >= 4 and parts[end - 4:end - 2] == ("on", "a") and parts[end - 2] in BACKGROUNDS \
            and parts[end - 1] == "background":
        background, end = parts[end - 2], end - 4
    start = 2 if parts[:2] == ("there", "is") else 0
    main = parts[start:end]
    extra = () if with_np is None else (with_np,)
    if len(main) == 1 and isinstance(main[0], NounPhrase) and start == 0 and background is None:
        return Meaning((start, *extra), None, None, None, with_np)
    if len(main) < 3 or not isinstance(main[0], NounPhrase) or not isinstance(main[-1], NounPhrase):
        return None
    link = main[1:-1]
    if not all(isinstance(w, str) for w in link):
        return None
    nps = (start, end - 1, *extra)
    if link == ("and",):
        return Meaning(nps, None, None, background, with_np) if start == 0 else None
    skip = 1 if link[0] == "is" else 0
    relation = " ".join(link[skip:])
    relation = RELATION_SYNONYMS.get(relation, relation)
    if relation not in relations:
        return None
    return Meaning(nps, relation, (start + 1 + skip, end - 1), background, with_np)


def _np_matches(np_: NounPhrase, o: Obj) -> bool:
    return o.shape == shape_of(np_.shape) and all(attribute_holds(w, o) for w in np_.attrs)


def holds(parts: Caption, meaning: Meaning, scene: Scene) -> bool:
    """Whether the caption is true of the scene: its noun phrases name distinct objects with every named
    attribute, the scene graph implies the relation (:func:`vlcomp.twins.implied_facts`), the background is the
    scene's."""
    if meaning.background is not None and meaning.background != scene.background:
        return False
    nps = [parts[k] for k in meaning.nps]
    facts = implied_facts(scene)
    for objs in itertools.permutations(scene.objects, len(nps)):
        if not all(_np_matches(n, o) for n, o in zip(nps, objs, strict=True)):
            continue
        if meaning.relation is None or (objs[0].id, meaning.relation, objs[1].id) in facts:
            return True
    return False


# ------------------------------------------------------------------------------------------- the edits


def _put(parts: Caption, k: int, new: Part | Sequence[Part]) -> Caption:
    """``parts`` with position ``k`` replaced by ``new`` (one part, or a sequence spliced in)."""
    seq = [new] if isinstance(new, str | NounPhrase) else list(new)
    return (*parts[:k], *seq, *parts[k + 1:])


def edit_replace_obj(parts: Caption, m: Meaning, scene: Scene,
                     relations: Mapping[str, Relation] = RELATIONS) -> Iterator[Caption]:
    for k in m.nps:
        np_ = parts[k]
        for shape in world_shapes(relations):
            if shape != shape_of(np_.shape):
                yield _put(parts, k, replace(np_, shape=shape))


def edit_replace_att(parts: Caption, m: Meaning, scene: Scene,
                     relations: Mapping[str, Relation] = RELATIONS) -> Iterator[Caption]:
    for k in m.nps:
        np_ = parts[k]
        for i, word in enumerate(np_.attrs):
            for new in EDIT_WORDS[attribute_kind(word)]:
                if canonical(new) != canonical(word):
                    attrs = (*np_.attrs[:i], new, *np_.attrs[i + 1:])
                    yield _put(parts, k, replace(np_, attrs=attrs))


def edit_replace_rel(parts: Caption, m: Meaning, scene: Scene,
                     relations: Mapping[str, Relation] = RELATIONS) -> Iterator[Caption]:
    if m.relation_span is None:
        return
    a, b = m.relation_span
    for rel in relations:
        if rel != m.relation and rel not in UNVERIFIABLE_RELATIONS:
            yield (*parts[:a], *rel.split(), *parts[b:])


def edit_swap_obj(parts: Caption, m: Meaning, scene: Scene,
                  relations: Mapping[str, Relation] = RELATIONS) -> Iterator[Caption]:
    if m.relation is None:
        return
    i, j = m.nps[:2]
    x, y = parts[i], parts[j]
    swapped = list(parts)
    swapped[i] = replace(y, det=x.det)
    swapped[j] = replace(x, det=y.det)
    yield tuple(swapped)


def edit_swap_att(parts: Caption, m: Meaning, scene: Scene,
                  relations: Mapping[str, Relation] = RELATIONS) -> Iterator[Caption]:
    for i, j in itertools.combinations(m.nps, 2):
        x, y = parts[i], parts[j]
        kx, ky = x.kinds(), y.kinds()
        for kind in ATTRIBUTE_KINDS:
            if kind in kx and kind in ky:
                wx, wy = x.attrs[kx[kind]], y.attrs[ky[kind]]
                if canonical(wx) != canonical(wy):
                    ax = tuple(wy if n == kx[kind] else w for n, w in enumerate(x.attrs))
                    ay = tuple(wx if n == ky[kind] else w for n, w in enumerate(y.attrs))
                    swapped = list(parts)
                    swapped[i], swapped[j] = replace(x, attrs=ax), replace(y, attrs=ay)
                    yield tuple(swapped)


def edit_add_obj(parts: Caption, m: Meaning, scene: Scene,
                 relations: Mapping[str, Relation] = RELATIONS) -> Iterator[Caption]:
    if m.with_np is not None:
        return
    present = {o.shape for o in scene.objects}
    for shape in world_shapes(relations):
        if shape not in present:
            for attrs in ((), *((c,) for c in COLOURS)):
                yield (*parts, "with", NounPhrase("a", attrs, shape))


def edit_add_att(parts: Caption, m: Meaning, scene: Scene,
                 relations: Mapping[str, Relation] = RELATIONS) -> Iterator[Caption]:
    for k in m.nps:
        np_ = parts[k]
        have = np_.kinds()
        for kind in ATTRIBUTE_KINDS:
            if kind in have:
                continue
            order = ATTRIBUTE_KINDS.index(kind)
            at = sum(ATTRIBUTE_KINDS.index(attribute_kind(w)) < order for w in np_.attrs)
            for new in EDIT_WORDS[kind]:
                yield _put(parts, k, replace(np_, attrs=(*np_.attrs[:at], new, *np_.attrs[at:])))


Edit = Callable[[Caption, Meaning, Scene, Mapping[str, Relation]], Iterable[Caption]]
"""``edit(parts, meaning, scene, relations)``: the subset's edits of a caption in a world with the relations
``relations`` (those the edits enumerate: ``replace_rel``'s phrases, the shapes of ``replace_obj`` / ``add_obj``)."""
EDITS: dict[str, Edit] = {
    "add_att": edit_add_att, "add_obj": edit_add_obj, "replace_att": edit_replace_att,
    "replace_obj": edit_replace_obj, "replace_rel": edit_replace_rel, "swap_att": edit_swap_att,
    "swap_obj": edit_swap_obj,
}


def negatives(category: str, text: str, scene: Scene, rng: np.random.Generator | None = None,
              limit: int | None = None, relations: Mapping[str, Relation] = RELATIONS) -> list[str]:
    """Valid negatives of one positive for one subset: the subset's edits of the parsed caption, kept when the
    result still reads as a caption and is false of the scene. All of them in edit order, or (with ``rng``) the
    first ``limit`` valid ones in a random order of the edits, i.e. a uniform draw of ``limit`` valid negatives
    without checking the others. Empty when the positive is not a caption this twin understands or not true.
    ``relations``: the world's relations (default: the first world's), which fix its phrases and shapes."""
    parts = parse(text, world_shapes(relations))
    m = interpret(parts, relations)
    if m is None or render(parts) != text or not holds(parts, m, scene):
        return []
    edits = list(dict.fromkeys(e for e in EDITS[category](parts, m, scene, relations) if e != parts))
    if rng is not None:
        edits = [edits[i] for i in rng.permutation(len(edits))]
    out: list[str] = []
    for e in edits:
        me = interpret(e, relations)
        if me is not None and not holds(e, me, scene):
            out.append(render(e))
            if limit is not None and len(out) == limit:
                break
    return out


# --------------------------------------------------------------------------------------- blind models


_WORD = re.compile(r"[a-z]+")


class NgramPlausibility:
    """A text-only "plausibility" in (0, 1): the per-token geometric-mean probability of the caption under an
    add-one smoothed ``n``-gram model over the world vocabulary (plus the end marker), fitted on ``corpus``.
    Log probabilities are summed with :func:`math.fsum`, so two captions with the same n-grams in another order
    get exactly the same score. ``minus`` (from :meth:`counts_of`) takes texts out of the fit for one call."""

    def __init__(self, n: int, corpus: Iterable[str]) -> None:
        if n < 1:
            raise ValueError(f"n-gram order must be >= 1, got {n}")
        self.n = n
        self.vocab = len(world_words()) + 1
        self.counts, self.context = self.counts_of(corpus)

    def _grams(self, text: str) -> list[tuple[str, ...]]:
        tokens = ["<s>"] * (self.n - 1) + _WORD.findall(text.lower()) + ["</s>"]
        return [tuple(tokens[i:i + self.n]) for i in range(len(tokens) - self.n + 1)]

    def counts_of(self, texts: Iterable[str]) -> tuple[Counter[tuple[str, ...]], Counter[tuple[str, ...]]]:
        """N-gram and context counts of ``texts``."""
        grams = [g for t in texts for g in self._grams(t)]
        return Counter(grams), Counter(g[:-1] for g in grams)

    def __call__(self, text: str, minus: tuple[Counter, Counter] | None = None) -> float:
        less_g, less_c = minus or (Counter(), Counter())
        logs = [math.log((self.counts[g] - less_g[g] + 1) / (self.context[g[:-1]] - less_c[g[:-1]] + self.vocab))
                for g in self._grams(text)]
        return math.exp(math.fsum(logs) / len(logs))


HeldOutScore = Callable[[int, str], float]
"""``score(image index, caption)`` by a model fitted on the captions of every other image."""


def held_out(model: NgramPlausibility, captions: Sequence[Sequence[str]]) -> HeldOutScore:
    """``model`` (fitted on all of ``captions``) with the scored image's own captions left out of the fit, so it
    knows the split's text but has never seen the positive: a text prior, not a memory."""
    own = [model.counts_of(caps) for caps in captions]
    return lambda image, text: model(text, own[image])


def blind_models(captions: Sequence[Sequence[str]]) -> tuple[HeldOutScore, HeldOutScore]:
    """The refinement's two blind models (Vera and grammar-model stand-ins): a bigram and a unigram model fitted
    on the split's captions, each image scored with its own captions left out (:func:`held_out`)."""
    corpus = [t for caps in captions for t in caps]
    return held_out(NgramPlausibility(2, corpus), captions), held_out(NgramPlausibility(1, corpus), captions)


# ------------------------------------------------------------------------------- adversarial refinement


def _signed_bin(gap: float, n_grids: int) -> int:
    """adversarial_refine.py's ``int(|gap| * n_grids) + 1`` with the sign of the gap (clamped to the grid)."""
    return int(math.copysign(min(int(abs(gap) * n_grids) + 1, n_grids), gap))


def _mirror(a: Sequence[int], b: Sequence[int], rng: np.random.Generator) -> list[tuple[int, int]]:
    """Equal numbers from two mirrored bins: all of the smaller, a random sample of the larger, paired."""
    m = min(len(a), len(b))
    if m == 0:
        return []
    a = a if len(a) == m else [int(i) for i in rng.choice(a, m, replace=False)]
    b = b if len(b) == m else [int(i) for i in rng.choice(b, m, replace=False)]
    return list(zip(a, b, strict=True))


def adversarial_refine(gap1: Sequence[float], gap2: Sequence[float], rng: np.random.Generator,
                       n_grids: int = N_GRIDS, n_grids_1d: int = N_GRIDS_1D) -> list[tuple[int, ...]]:
    """SugarCrepe's ``adversarial_refine(model1_score_gap, model2_score_gap)`` with a seeded generator.

    Gaps are ``score(positive) - score(negative)`` of two blind models, in [-1, 1]. Cases with both gaps 0 are
    kept; cases with one gap 0 are balanced on a ``n_grids_1d``-bin grid of the other model's |gap| (as many
    positive as negative gaps per bin); the others on the signed ``n_grids`` x ``n_grids`` grid, each bin against
    its point mirror (``(i, j)`` vs ``(-i, -j)``). Returns the kept cases as units: ``(i,)`` for a both-zero
    case, ``(i, j)`` for a mirrored pair, so a random subset of units keeps the balance.
    """
    if len(gap1) != len(gap2):
        raise ValueError(f"adversarial_refine: {len(gap1)} and {len(gap2)} gaps")
    units: list[tuple[int, ...]] = []
    grid: dict[tuple[int, int], list[int]] = defaultdict(list)
    zero: dict[int, list[int]] = {1: [], 2: []}
    for i, (g1, g2) in enumerate(zip(gap1, gap2, strict=True)):
        if g1 == 0 and g2 == 0:
            units.append((i,))
        elif g1 == 0 or g2 == 0:
            zero[1 if g1 == 0 else 2].append(i)
        else:
            grid[(_signed_bin(g1, n_grids), _signed_bin(g2, n_grids))].append(i)
    for (b1, b2) in sorted(grid):
        if b1 > 0:
            units += _mirror(grid[(b1, b2)], grid.get((-b1, -b2), []), rng)
    for which, other in ((1, gap2), (2, gap1)):
        pos: dict[int, list[int]] = defaultdict(list)
        neg: dict[int, list[int]] = defaultdict(list)
        for i in zero[which]:
            (pos if other[i] > 0 else neg)[min(int(abs(other[i]) * n_grids_1d), n_grids_1d - 1)].append(i)
        for b in range(n_grids_1d):
            units += _mirror(pos[b], neg[b], rng)
    return units


def cap_units(units: Sequence[tuple[int, ...]], limit: int, rng: np.random.Generator) -> list[int]:
    """At most ``limit`` cases, taking whole units in a random order; returned sorted."""
    kept: list[int] = []
    for u in rng.permutation(len(units)):
        if len(kept) + len(units[u]) <= limit:
            kept.extend(units[u])
    return sorted(kept)


# ---------------------------------------------------------------------------------------------- the build


@dataclass(frozen=True)
class Candidate:
    image: int  # index in the split
    caption: str
    negative: str


def coco_file_name(index: int) -> str:
    """A split index as a COCO-val2017-like file name, PNG (``42`` -> ``000000000042.png``)."""
    if not 0 <= index < 10**12:
        raise ValueError(f"image index {index} does not fit 12 digits")
    return f"{index:012d}.png"


def candidates(category: str, scenes: Sequence[Scene], captions: Sequence[Sequence[str]], per_caption: int,
               rng: np.random.Generator, relations: Mapping[str, Relation] = RELATIONS) -> list[Candidate]:
    """Up to ``per_caption`` negatives per distinct caption of each image, drawn from the valid ones (in a world
    with the relations ``relations``)."""
    out = []
    for i, (scene, caps) in enumerate(zip(scenes, captions, strict=True)):
        for text in dict.fromkeys(caps):
            out += [Candidate(i, text, neg) for neg in negatives(category, text, scene, rng, per_caption, relations)]
    return out


def refine(pool: Sequence[Candidate], blind: Sequence[HeldOutScore], limit: int,
           rng: np.random.Generator) -> list[Candidate]:
    """The pool after :func:`adversarial_refine` with the two blind models, capped at ``limit`` cases."""
    gaps = [[m(c.image, c.caption) - m(c.image, c.negative) for c in pool] for m in blind]
    units = adversarial_refine(gaps[0], gaps[1], rng)
    return [pool[i] for i in cap_units(units, limit, rng)]


@TWINS.register("sugarcrepe")
def build_sugarcrepe(ctx: TwinContext) -> TwinResult:
    """``sugarcrepe/data/<category>.json`` (7 files) and ``sugarcrepe/val2017/<12 digits>.png``.

    Options: ``items_per_subset`` (cap per subset after refinement, default 300), ``candidates_per_caption``
    (negatives drawn per caption and subset before refinement, default 3).
    """
    limit = option(ctx.options, "items_per_subset", DEFAULT_ITEMS_PER_SUBSET, ctx.name, minimum=1)
    per_caption = option(ctx.options, "candidates_per_caption", DEFAULT_CANDIDATES_PER_CAPTION, ctx.name,
                         minimum=1)
    split = ctx.split(SPLIT)
    scenes, annotations = split.scenes(), split.annotations()
    if len(scenes) != len(annotations):
        raise ValueError(f"{split.dir}: {len(scenes)} scenes but {len(annotations)} caption records")
    captions = [a["caption"] for a in annotations]
    blind = blind_models(captions)

    counts: dict[str, int] = {}
    cases: dict[str, list[sugarcrepe_ds.SugarCrepeCase]] = {}
    used: set[int] = set()
    for cat in sugarcrepe_ds.CATEGORIES:
        pool = candidates(cat, scenes, captions, per_caption, ctx.rng("candidates", cat), ctx.wcfg.relations)
        kept = refine(pool, blind, limit, ctx.rng("refine", cat))
        if not kept:
            raise ValueError(f"sugarcrepe twin: subset {cat!r} has no case after refinement ({len(pool)} candidates "
                             f"from {len(scenes)} {SPLIT} images); give the world more {SPLIT} images or raise "
                             f"benchmarks.twins.sugarcrepe.candidates_per_caption")
        cases[cat] = [sugarcrepe_ds.SugarCrepeCase(str(n), coco_file_name(c.image), c.caption, c.negative)
                      for n, c in enumerate(kept)]
        used |= {c.image for c in kept}
        counts |= {f"{cat}/n_candidates": len(pool), f"{cat}/n_cases": len(kept)}

    data_dir, images_dir = ctx.folder("data"), ctx.folder("val2017")
    sugarcrepe_ds.write_all(data_dir, cases)
    for i in sorted(used):
        write_png(images_dir / coco_file_name(i), split.images[i])
    counts["n_images"] = len(used)
    return TwinResult({"sugarcrepe_dir": ctx.rel(data_dir), "coco_val2017_images": ctx.rel(images_dir)}, counts)
