"""Caption statistics for calibrating the COCO twin against real COCO captions (issue 13).

:func:`caption_items` gives one row per caption: its length, whether it uses "and", whether it states a
relation (under the four definitions below), and which NegCLIP hard negatives the project's miner
(:mod:`vlcomp.text.negclip_swaps`, run exactly as :func:`vlcomp.generators.negclip.mine_captions` runs it) makes
of it. :func:`caption_statistics` derives every aggregate from those rows.

Words. A caption's words are its lowercased runs of letters and digits, an apostrophe suffix kept ("man's");
punctuation is not a word (:func:`caption_words`). "Uses and" means the word "and" is one of them.

Relation, four definitions (on real COCO they give shares from 15 % to 94 %, so all four are reported):

==================  ==========================================================================================
``rel_world``       a phrase of the toy world's relation vocabulary (``world_relations``: by default
                    :data:`WORLD_RELATIONS`, the first world's 13 phrases of ``vlcomp.world.concepts.RELATIONS``;
                    a caller with a world at hand passes ``tuple(WorldConfig.relations)``) occurs as a run of
                    words
``rel_vgr``         a phrase of ARO VG-Relation's relations (:data:`VGR_RELATIONS`: the 13 spatial + 32 verb
                    relations of ARO Table 2, ``vlcomp.metrics.aro``) occurs as a run of words
``rel_word``        any spatial/action relation word, read off the spaCy parse: a preposition (``pos_`` ADP)
                    of :data:`SPATIAL_PREPOSITIONS`, or a verb (``pos_`` VERB) that is not a form of "be" or
                    "have" (:data:`NON_RELATION_VERBS`)
``rel_objects``     a ``rel_word`` with a noun (NOUN, PROPN or PRON) before it and after it in the caption:
                    the caption states a relation between two things ("a man riding a horse"; not "a man
                    smiling", not "a red circle and a blue square")
==================  ==========================================================================================

:data:`SPATIAL_PREPOSITIONS` is an explicit list of place/direction prepositions. Left out on purpose: "of"
(mostly partitive: "a plate of food"; "in front of" still counts through "in"), "with" (possession or
accompaniment: "a man with a hat"; not an ARO VG-Relation relation), and non-spatial ones ("for", "as",
"like", "about", "during", ...). The ARO and world vocabularies are the project's own; ``rel_word`` and
``rel_objects`` are the broad reading of "a caption with a relation word".

Negatives. Types as the issue names them (:data:`NEGATIVE_TYPE_OF`): noun phrase (``np_swap``), noun
(``nn_swap`` + ``nns_swap``), adjective, verb phrase, adverb. Three levels:

- ``candidate``: every negative a swap rule makes (None and :func:`check_same` dropped), before the cap;
- ``mined``: the first ``max_negatives`` of them in swap order: what the miner writes;
- ``drawn``: what NegCLIP fine-tuning draws: each time a row is in a batch it draws ``draws``
  (``methods.negclip.batch.negatives``, 1) of its mined negatives uniformly without replacement
  (``vlcomp.train.data``), so a mined negative has weight ``min(draws, n) / n`` (n = the caption's mined
  negatives); captions with none are not training rows.

A *subject/object swap* is a noun-phrase or noun swap whose two swapped elements are the two arguments of one
relation (:func:`swap_around_relation`): between the two noun phrases (a swapped noun stands for the noun
chunk it heads; a noun that only modifies another, "delivery" in "a delivery truck", is no argument) there is
only a relation, i.e. either a relation phrase of the world or ARO vocabulary after
an optional form of "be" ("is above", "to the left of", "in front of"), or words with no noun among them and
at least one ``rel_word`` ("riding", "parked near").
``np_swap`` ones (whole noun phrases exchanged, attributes moving with their nouns: "a blue square above a
red circle") are the *clean* swaps of the toy-world probe (``../shared/TOY_WORLD_PROBE.md``); noun swaps
around a relation also re-bind the attributes ("a red square above a blue circle") and are counted apart.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..metrics.aro import VG_SPATIAL_RELATIONS, VG_VERB_RELATIONS
from ..world.concepts import RELATIONS
from .negclip_swaps import (
    DEFAULT_SWAPS,
    EXTRA_SWAP_RULES,
    MAX_NEGATIVES,
    SWAP_RULES,
    check_same,
    verb_phrase_spans,
)
from .perturb import _check_captions, _check_rng

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Span

#: The first world's relation phrases (``vlcomp.world.concepts.RELATIONS``): the default ``world_relations``
#: (a world's own are ``tuple(WorldConfig.relations)``).
WORLD_RELATIONS: tuple[str, ...] = tuple(RELATIONS)
#: ARO VG-Relation's relations (Table 2: spatial, then verbs).
VGR_RELATIONS: tuple[str, ...] = VG_SPATIAL_RELATIONS + VG_VERB_RELATIONS
#: Prepositions of place or direction that make a ``rel_word`` (see the module notes for what is left out).
SPATIAL_PREPOSITIONS: frozenset[str] = frozenset((
    "aboard", "above", "across", "against", "along", "alongside", "amid", "amidst", "among", "amongst",
    "around", "at", "atop", "behind", "below", "beneath", "beside", "besides", "between", "beyond", "by",
    "down", "from", "in", "inside", "into", "near", "off", "on", "onto", "opposite", "out", "outside", "over",
    "past", "through", "throughout", "to", "toward", "towards", "under", "underneath", "up", "upon", "within",
))  # fmt: skip
#: Verb forms that never make a ``rel_word`` (copula and possession; spaCy tags some of them VERB).
NON_RELATION_VERBS: frozenset[str] = frozenset((
    "am", "is", "are", "was", "were", "be", "been", "being", "'s", "'re", "has", "have", "had", "having",
))  # fmt: skip
#: NegCLIP swap rule -> the negative type the issue names.
NEGATIVE_TYPE_OF: dict[str, str] = {
    "np_swap": "noun_phrase", "vp_swap": "verb_phrase", "nn_swap": "noun", "nns_swap": "noun",
    "adv_swap": "adverb", "adj_swap": "adjective", "verb_swap": "verb",
}  # fmt: skip
#: The types reported for the default swap rules, in the issue's order.
NEGATIVE_TYPES: tuple[str, ...] = ("noun_phrase", "noun", "adjective", "verb_phrase", "adverb")
#: Swap rules whose swaps can exchange a relation's subject and object.
NOUN_SWAPS: tuple[str, ...] = ("np_swap", "nn_swap", "nns_swap")
RELATION_DEFINITIONS: tuple[str, ...] = ("rel_world", "rel_vgr", "rel_word", "rel_objects")
LEVELS: tuple[str, ...] = ("candidate", "mined", "drawn")

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_NOUNS = ("NOUN", "PROPN", "PRON")


def caption_words(text: str) -> list[str]:
    """The caption's words: lowercased runs of letters and digits (an apostrophe suffix kept), no punctuation."""
    return _WORD.findall(text.lower())


def has_phrase(words: Sequence[str], phrases: Iterable[str]) -> bool:
    """True if some phrase of ``phrases`` (space-separated words) occurs in ``words`` as a contiguous run."""
    padded = f" {' '.join(words)} "
    return any(f" {p} " in padded for p in phrases)


def is_relation_word(tok: Any) -> bool:
    """A spatial preposition of :data:`SPATIAL_PREPOSITIONS` or an action verb (a spaCy ``Token``); a participle
    that modifies a noun ("a striped square", "a parked car": dependency ``amod``) is an attribute, not a verb."""
    low = tok.lower_
    return ((tok.pos_ == "ADP" and low in SPATIAL_PREPOSITIONS)
            or (tok.pos_ == "VERB" and low not in NON_RELATION_VERBS and tok.dep_ != "amod"))


def relation_flags(doc: Doc, world_relations: Sequence[str] = WORLD_RELATIONS) -> dict[str, bool]:
    """The four relation definitions of the module notes for one parsed caption (``world_relations``: the toy
    world's relation phrases, default the first world's)."""
    words = caption_words(doc.text)
    rel = [t.i for t in doc if is_relation_word(t)]
    nouns = [t.i for t in doc if t.pos_ in _NOUNS]
    return {
        "rel_world": has_phrase(words, world_relations),
        "rel_vgr": has_phrase(words, VGR_RELATIONS),
        "rel_word": bool(rel),
        "rel_objects": bool(nouns) and any(nouns[0] < i < nouns[-1] for i in rel),
    }


def _chunk_of(doc: Doc, span: Span) -> Span | None:
    """The noun phrase a swapped element stands for: a noun chunk is itself; a noun stands for the chunk it is
    the head of (None when it is a modifier inside a chunk: "delivery" in "a delivery truck"), or for itself
    outside any chunk."""
    for chunk in doc.noun_chunks:
        if chunk.start == span.start and chunk.end == span.end:
            return chunk
        if chunk.start <= span.start and span.end <= chunk.end:
            return chunk if len(span) == 1 and chunk.root.i == span.start else None
    return span


def swap_around_relation(doc: Doc, a: Span, b: Span, world_relations: Sequence[str] = WORLD_RELATIONS) -> bool:
    """True if the elements ``a`` and ``b`` (a before b) are the two arguments of one relation: what lies
    between their noun chunks is a relation phrase (world, ``world_relations``, or ARO vocabulary, after an
    optional form of "be"), or has no noun and at least one :func:`is_relation_word`. See the module notes."""
    left, right = _chunk_of(doc, a), _chunk_of(doc, b)
    if left is None or right is None or left.end >= right.start:
        return False
    between = doc[left.end:right.start]
    words = caption_words(between.text)
    while words and words[0] in NON_RELATION_VERBS:
        words = words[1:]
    phrase = " ".join(words)
    if phrase and (phrase in world_relations or phrase in VGR_RELATIONS):
        return True
    return (not any(t.pos_ in _NOUNS for t in between)) and any(is_relation_word(t) for t in between)


def swap_elements(doc: Doc, swap: str) -> list[Span]:
    """The candidate elements a swap rule of :mod:`vlcomp.text.negclip_swaps` picks two of, in its order."""
    if swap == "np_swap":
        return [c for c in doc.noun_chunks if len(c.text.split()) > 2]
    if swap == "vp_swap":
        return verb_phrase_spans(doc)
    keep = {
        "nn_swap": lambda t: t.tag_ == "NN",
        "nns_swap": lambda t: t.tag_ == "NNS",
        "adv_swap": lambda t: t.pos_ == "ADV",
        "adj_swap": lambda t: t.pos_ == "ADJ",
        "verb_swap": lambda t: t.pos_ == "VERB",
    }.get(swap)
    if keep is None:
        raise ValueError(f"unknown swap rule {swap!r}; known: {', '.join(NEGATIVE_TYPE_OF)}")
    return [doc[t.i:t.i + 1] for t in doc if keep(t)]


class _RecordingRng:
    """A ``numpy.random.Generator`` stand-in that records the pairs the swap rules pick (same draws)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self._rng = rng
        self.picks: list[tuple[int, ...]] = []

    def choice(self, *args: Any, **kwargs: Any) -> Any:
        out = self._rng.choice(*args, **kwargs)
        self.picks.append(tuple(int(x) for x in np.atleast_1d(out)))
        return out


def _rebuilt(doc: Doc, swap: str, a: Span, b: Span) -> str:
    """The negative that swapping ``a`` and ``b`` gives, built as :mod:`negclip_swaps` builds it."""
    if swap in ("np_swap", "vp_swap"):
        t = doc.text
        return (t[:a.start_char] + b.text + t[a.end_char:b.start_char] + a.text + t[b.end_char:]).lower()
    words = [t.text for t in doc]
    words[a.start], words[b.start] = words[b.start], words[a.start]
    return " ".join(words)


def _negatives_of(doc: Doc, rng: np.random.Generator, swaps: Sequence[str],
                  world_relations: Sequence[str] = WORLD_RELATIONS) -> list[dict[str, Any]]:
    """Every candidate negative of one caption with its swap rule and whether it is a subject/object swap.
    Draws exactly the random numbers :func:`negclip_swaps.negatives_for_doc` draws."""
    known = {**SWAP_RULES, **EXTRA_SWAP_RULES}
    rec = _RecordingRng(rng)
    out = []
    for name in swaps:
        n_picks = len(rec.picks)
        cand = known[name](doc, rec)  # type: ignore[arg-type]
        if cand is None or check_same(doc.text, cand):
            continue
        if len(rec.picks) != n_picks + 1:
            raise RuntimeError(f"{name}: expected one pair drawn for {doc.text!r}, got {rec.picks[n_picks:]}")
        elems = swap_elements(doc, name)
        a, b = sorted((elems[i] for i in rec.picks[-1]), key=lambda s: s.start)
        if _rebuilt(doc, name, a, b) != cand:  # the elements here must be the ones the swap rule swapped
            raise RuntimeError(f"{name}: swap_elements is out of step with negclip_swaps on {doc.text!r}")
        out.append({"swap": name, "text": cand,
                    "relation_swap": name in NOUN_SWAPS and swap_around_relation(doc, a, b, world_relations)})
    return out


def caption_items(
    captions: Sequence[str],
    nlp: Language,
    rng: np.random.Generator,
    *,
    swaps: Sequence[str] = DEFAULT_SWAPS,
    max_negatives: int = MAX_NEGATIVES,
    batch_size: int = 256,
    world_relations: Iterable[str] = WORLD_RELATIONS,
) -> pd.DataFrame:
    """One row per caption (in order): ``caption``, ``n_words``, ``has_and``, the relation flags of
    :data:`RELATION_DEFINITIONS`, then per swap rule ``g``: ``cand_<g>`` (it made a negative), ``mined_<g>``
    (that negative is among the first ``max_negatives``) and, for :data:`NOUN_SWAPS`, ``relswap_<g>``
    (the negative is a subject/object swap); ``n_candidates``, ``n_mined`` and ``negatives`` (the mined
    texts, as the miner writes them). ``rng`` is consumed as :func:`negclip_swaps.mine_negatives` consumes it,
    so with the miner's generator the mined negatives are the miner's. ``world_relations``: the relation phrases
    of the toy world ``rel_world`` and the subject/object swaps read (a world's: ``WorldConfig.relations``;
    default the first world's, :data:`WORLD_RELATIONS`)."""
    captions = _check_captions(captions, "caption_items")
    _check_rng(rng, "caption_items")
    bad = [g for g in swaps if g not in NEGATIVE_TYPE_OF]
    if isinstance(swaps, str) or bad:
        raise ValueError(f"caption_items: unknown swap rule(s) {bad or swaps!r}; known: {', '.join(NEGATIVE_TYPE_OF)}")
    if isinstance(max_negatives, bool) or not isinstance(max_negatives, int) or max_negatives < 1:
        raise ValueError(f"caption_items: max_negatives must be a positive int, got {max_negatives!r}")
    if "parser" not in nlp.pipe_names:
        raise ValueError(f"caption_items: the spaCy pipeline {nlp.meta.get('name')!r} has no 'parser'")
    phrases = tuple(world_relations)
    rows = []
    for doc in nlp.pipe(captions, batch_size=batch_size):
        words = caption_words(doc.text)
        row: dict[str, Any] = {"caption": doc.text, "n_words": len(words), "has_and": "and" in words,
                               **relation_flags(doc, phrases)}
        negs = _negatives_of(doc, rng, swaps, phrases)
        mined = negs[:max_negatives]
        for g in swaps:
            row[f"cand_{g}"] = any(n["swap"] == g for n in negs)
            row[f"mined_{g}"] = any(n["swap"] == g for n in mined)
            if g in NOUN_SWAPS:
                row[f"relswap_{g}"] = any(n["swap"] == g and n["relation_swap"] for n in negs)
        row["n_candidates"], row["n_mined"] = len(negs), len(mined)
        row["negatives"] = [n["text"] for n in mined]
        rows.append(row)
    return pd.DataFrame(rows, columns=_item_columns(swaps))


def _item_columns(swaps: Sequence[str]) -> list[str]:
    cols = ["caption", "n_words", "has_and", *RELATION_DEFINITIONS]
    for g in swaps:
        cols += [f"cand_{g}", f"mined_{g}"] + ([f"relswap_{g}"] if g in NOUN_SWAPS else [])
    return cols + ["n_candidates", "n_mined", "negatives"]


def _swaps_of(items: pd.DataFrame) -> list[str]:
    return [c[len("cand_"):] for c in items.columns if c.startswith("cand_")]


def _weights(items: pd.DataFrame, level: str, draws: int) -> pd.DataFrame:
    """Per caption and swap rule, the weight of its negative at ``level`` ([N, G], one column per swap rule):
    1 if it exists at the level (``drawn``: the probability that the row draws it), else 0."""
    gens = _swaps_of(items)
    if level not in LEVELS:
        raise ValueError(f"level {level!r}: must be one of {LEVELS}")
    prefix = "cand_" if level == "candidate" else "mined_"
    w = items[[prefix + g for g in gens]].to_numpy(bool).astype(float)  # [N, G]
    if level == "drawn":
        n = w.sum(axis=1, keepdims=True)  # [N, 1]
        w = w * np.divide(np.minimum(draws, n), n, out=np.zeros_like(n), where=n > 0)
    return pd.DataFrame(w, columns=gens, index=items.index)


def caption_statistics(items: pd.DataFrame, *, draws: int = 1) -> dict[str, float]:
    """Aggregates of :func:`caption_items` rows, as a flat ``{statistic: value}`` dict (order fixed):

    - ``n_captions``; ``share_and``; ``share_<definition>`` for each relation definition;
    - ``words_mean``, ``words_q25``, ``words_median``, ``words_q75`` (linear-interpolation quantiles);
    - ``share_no_negative``: captions with no negative at all (dropped by NegCLIP's row rule);
    - ``negatives_per_caption/<level>``: mean negatives per caption at ``candidate`` / ``mined`` level, and for
      ``drawn`` the negatives a training row draws (``min(draws, n_mined)``, averaged over captions with one);
    - ``neg_share/<level>/<type>``: share of each :data:`NEGATIVE_TYPES` type among the negatives of the level
      (``drawn``: weighted by the probability the row draws it); types of non-default swap rules follow;
    - ``neg_share/<level>/subject_object_np`` and ``.../subject_object_noun``: share of negatives that are
      noun-phrase (clean) / noun subject-object swaps around a relation; ``.../subject_object`` their sum.
    """
    if isinstance(draws, bool) or not isinstance(draws, int) or draws < 1:
        raise ValueError(f"caption_statistics: draws must be a positive int, got {draws!r}")
    if len(items) == 0:
        raise ValueError("caption_statistics: no captions")
    n_words = items["n_words"].to_numpy(float)
    out: dict[str, float] = {"n_captions": float(len(items)), "share_and": float(items["has_and"].mean())}
    for d in RELATION_DEFINITIONS:
        out[f"share_{d}"] = float(items[d].mean())
    q25, q50, q75 = np.quantile(n_words, [0.25, 0.5, 0.75])
    out |= {"words_mean": float(n_words.mean()), "words_q25": float(q25), "words_median": float(q50),
            "words_q75": float(q75), "share_no_negative": float((items["n_candidates"] == 0).mean())}
    gens = _swaps_of(items)
    types = [t for t in NEGATIVE_TYPES if any(NEGATIVE_TYPE_OF[g] == t for g in gens)]
    types += [t for t in dict.fromkeys(NEGATIVE_TYPE_OF[g] for g in gens) if t not in types]
    for level in LEVELS:
        w = _weights(items, level, draws)
        total = float(w.to_numpy().sum())
        per = int((items["n_mined"] > 0).sum()) if level == "drawn" else len(items)  # drawn: per training row
        out[f"negatives_per_caption/{level}"] = total / per if per else 0.0
        for t in types:
            cols = [g for g in gens if NEGATIVE_TYPE_OF[g] == t]
            out[f"neg_share/{level}/{t}"] = float(w[cols].to_numpy().sum()) / total if total else 0.0
        swaps = {}
        for kind, kind_gens in (("np", ["np_swap"]), ("noun", ["nn_swap", "nns_swap"])):
            kind_gens = [g for g in kind_gens if g in gens]
            s = sum(float((w[g] * items[f"relswap_{g}"]).sum()) for g in kind_gens)
            swaps[kind] = s / total if total else 0.0
            out[f"neg_share/{level}/subject_object_{kind}"] = swaps[kind]
        out[f"neg_share/{level}/subject_object"] = swaps["np"] + swaps["noun"]
    return out


#: Share statistics :func:`calibration_distance` compares as absolute differences.
DISTANCE_SHARES: tuple[str, ...] = ("share_and", "share_rel_objects", "share_no_negative")


def calibration_distance(real: dict[str, float], twin: dict[str, float], *, level: str = "mined") -> float:
    """How far a twin's statistics are from the real ones (two :func:`caption_statistics` dicts); 0 = equal.

    The sum of: the absolute differences of :data:`DISTANCE_SHARES` ("and", a relation between two objects,
    no negative), the relative difference of the mean caption length ``|twin - real| / real``, and the total
    variation distance between the two mixes of negative types at ``level`` (half the sum of the absolute
    differences of ``neg_share/<level>/<type>`` over :data:`NEGATIVE_TYPES`). Every term weighs 1.
    """
    if level not in LEVELS:
        raise ValueError(f"level {level!r}: must be one of {LEVELS}")
    keys = [*DISTANCE_SHARES, "words_mean", *(f"neg_share/{level}/{t}" for t in NEGATIVE_TYPES)]
    missing = [k for k in keys if k not in real or k not in twin]
    if missing:
        raise ValueError(f"calibration_distance: statistics {missing} missing (use caption_statistics)")
    if real["words_mean"] <= 0:
        raise ValueError(f"calibration_distance: real words_mean must be > 0, got {real['words_mean']}")
    d = sum(abs(twin[k] - real[k]) for k in DISTANCE_SHARES)
    d += abs(twin["words_mean"] - real["words_mean"]) / real["words_mean"]
    d += 0.5 * sum(abs(twin[f"neg_share/{level}/{t}"] - real[f"neg_share/{level}/{t}"]) for t in NEGATIVE_TYPES)
    return float(d)
