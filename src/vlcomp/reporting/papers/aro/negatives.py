"""What the mined NegCLIP negatives ask of the model: each negative classified by the words it changes.

The gist's swaps (NP, VP, NN, NNS, ADV, ADJ) keep a caption's words and move them, so a negative differs from its
caption at a set of positions. The kind is read from the words at those positions:

- ``colour swap``: only colour words move (attribute binding, the VG-Attribution skill);
- ``shape swap``: only shape nouns move (subject/object roles, the VG-Relation skill);
- ``other attribute swap``: only attribute words (colour, size, material, state) move, not only colours;
- ``other``: anything else (verb phrases, relation words, articles; often ungrammatical);
- ``not a permutation``: the words differ as a multiset (should not happen for swaps).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pandas as pd

from ....world.concepts import COLOURS, MATERIALS, SHAPES, SIZES, STATES, SYNONYMS

KINDS = ("colour swap", "shape swap", "other attribute swap", "other", "not a permutation")
_COLOURS = frozenset(COLOURS)
_SHAPES = frozenset(SHAPES)
_ATTRIBUTES = frozenset(COLOURS) | frozenset(SIZES) | frozenset(MATERIALS) | frozenset(STATES) | frozenset(
    w for k in SIZES for w in SYNONYMS.get(k, ()))


def negative_kind(caption: str, negative: str) -> str:
    a, b = caption.split(), negative.split()
    if Counter(a) != Counter(b):
        return "not a permutation"
    moved = {w for x, y in zip(a, b, strict=True) if x != y for w in (x, y)}
    if moved and moved <= _COLOURS:
        return "colour swap"
    if moved and moved <= _SHAPES:
        return "shape swap"
    if moved and moved <= _ATTRIBUTES:
        return "other attribute swap"
    return "other"


def negative_composition(captions: Sequence[Sequence[str]], negatives: Sequence[Sequence[Sequence[str]]]) -> pd.DataFrame:
    """Counts and shares of each kind over all negatives, plus the share of captions with at least one."""
    per_neg: Counter[str] = Counter()
    per_caption: Counter[str] = Counter()
    n_captions = 0
    for caps, negs in zip(captions, negatives, strict=True):
        for cap, ns in zip(caps, negs, strict=True):
            n_captions += 1
            kinds = {negative_kind(cap, n) for n in ns}
            per_neg.update(negative_kind(cap, n) for n in ns)
            per_caption.update(kinds)
    total = sum(per_neg.values())
    return pd.DataFrame({
        "kind": list(KINDS),
        "negatives": [per_neg[k] for k in KINDS],
        "share of negatives": [round(per_neg[k] / total, 4) if total else float("nan") for k in KINDS],
        "share of captions with one": [round(per_caption[k] / n_captions, 4) if n_captions else float("nan") for k in KINDS],
    })
