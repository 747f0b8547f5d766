"""The concepts of the toy world: the things a caption can name and an image can show.

Everything here is data. The relation table says, for each relation phrase, whether it is symmetric
(excluded from the VG-Relation twin, as ARO excludes "near" / "next to"), which group it belongs to
(ARO Table 2: spatial vs verbs) and its converse (used by the hard-positive benchmarks of later papers).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

SHAPES: tuple[str, ...] = ("circle", "square", "triangle", "diamond", "star", "cross", "heart", "arrow")
"""Shape nouns. ``arrow`` is the one shape with a heading; it is the subject of "pointing at"."""

COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (220, 40, 40),
    "green": (40, 180, 60),
    "blue": (50, 90, 230),
    "yellow": (235, 220, 40),
    "purple": (150, 60, 200),
    "orange": (245, 140, 30),
    "white": (240, 240, 240),
    "cyan": (40, 210, 220),
}

WEB_ONLY_SHAPES: tuple[str, ...] = ("hexagon", "moon")
"""Shapes the world can show only in the web split (``world.web_only_shapes`` picks which): real COCO covers a
narrower slice of the world than web data (80 object classes against ImageNet's 1,000), so fine-tuning on the COCO
twin never sees these, and the zero-shot twins, drawn from the full web vocabulary, can show it forgetting them."""

WEB_ONLY_COLOURS: dict[str, tuple[int, int, int]] = {
    "pink": (250, 150, 200),
    "brown": (130, 80, 35),
}
"""Colours only the web split can show (``world.web_only_colours``); see :data:`WEB_ONLY_SHAPES`."""

ALL_COLOURS: dict[str, tuple[int, int, int]] = {**COLOURS, **WEB_ONLY_COLOURS}
"""Every colour the renderer knows (the COCO-style splits draw from :data:`COLOURS` alone)."""

SIZES: dict[str, int] = {"small": 6, "large": 10}
"""Size word -> half-extent in pixels at 48 px resolution (scaled with the image size and ``world.object_scale``:
:meth:`vlcomp.world.scene.WorldConfig.half_extent`)."""

SUPPORT_SHAPES: tuple[str, ...] = ("bar",)
"""Flat supports, placed only by the ``support`` layout (``world.layout_probs``' fifth weight): a small object rests
*on* a bar ("sitting on") or hangs *from* it, never the reverse, so "a bar on a star" is implausible as text, as "a table on a cup"
is in Visual Genome. Not a class of the zero-shot twins (they draw from :data:`SHAPES`)."""

BAR_ASPECT = 0.5
"""A bar's half-height over its half-width (its box is twice as wide as high; the other shapes' boxes are square).
A bar is always large, so it is 12 px high at 48 px: ARO keeps objects at least 1/4 of the image wide *and* high
(catalog §2), and a flatter bar would never enter the VG twins."""

MATERIALS: tuple[str, ...] = ("plain", "striped", "dotted")
"""Surface texture of a solid object."""

STATES: tuple[str, ...] = ("solid", "hollow")
"""A hollow object is drawn as an outline (no texture); a large hollow object can contain another."""

BACKGROUNDS: dict[str, tuple[int, int, int]] = {"black": (0, 0, 0), "gray": (70, 70, 70)}

TYPICAL_COLOUR: dict[str, str] = {
    "circle": "white", "square": "blue", "triangle": "orange", "diamond": "cyan",
    "star": "yellow", "cross": "green", "heart": "red", "arrow": "purple",
    "hexagon": "pink", "moon": "brown",
}
"""Each shape's typical colour (a bijection; the web-only shapes' typical colours are the web-only colours, and a
web-only shape whose typical colour is not in the split's vocabulary draws a colour at random). With ``world.colour_prior`` > 0 objects take it more often than
chance, as real objects have typical colours ("green grass", "white snow"); that is the co-occurrence prior a
text-only model can exploit on VG-Attribution."""

ELEVATION: dict[str, int] = {
    "star": 6, "heart": 5, "diamond": 4, "circle": 3, "cross": 2, "triangle": 1, "square": 0,
}
"""Where a shape tends to sit in a scene: with ``world.layout_prior`` > 0, higher-ranked shapes are placed above
and in front of lower-ranked ones more often than chance, as real scenes have typical arrangements ("the lamp
above the table", "the cup on the table"). Arrows are not ranked: their heading ties them to their place."""

SYNONYMS: dict[str, tuple[str, ...]] = {
    "large": ("big",),
    "small": ("little",),
}
"""Words that mean the same thing (for hard positives in later papers); captions draw from them."""

EXTENDED_SYNONYMS: dict[str, tuple[str, ...]] = {
    **SYNONYMS,
    "square": ("box",),
    "diamond": ("rhombus",),
    "purple": ("violet",),
    "above": ("over",),
    "below": ("under", "beneath"),
    "next to": ("beside",),
}
"""``world.captions.synonyms: extended``: at least one synonym for every class of word where English has a plain one
(shape, colour, size, relation), so Hard Positives' REPLACE positives are synonyms and not only converse relations.
"under" and "beneath" are ARO Table 2's own geometric relations; here they are ways of saying "below"."""


@dataclass(frozen=True)
class Relation:
    phrase: str
    group: str  # "spatial" or "verb" (ARO Table 2 grouping)
    symmetric: bool
    converse: str | None
    kind: str = "geometric"
    """``geometric``: any shape can be on either side, so the swapped caption is as plausible as text as the true
    one (ARO Table 2's left/right/above/below/behind/in front of: NegCLIP gains nothing there); ``role``: only some
    shapes can take the subject's role (only hollow containers surround, only arrows point, only bars support), so
    the swapped caption is implausible as text (Table 2's on/wearing/holding/riding: where NegCLIP's gain is)."""


RELATIONS: dict[str, Relation] = {
    r.phrase: r
    for r in (
        Relation("to the left of", "spatial", False, "to the right of"),
        Relation("to the right of", "spatial", False, "to the left of"),
        Relation("above", "spatial", False, "below"),
        Relation("below", "spatial", False, "above"),
        Relation("in front of", "spatial", False, "behind"),
        Relation("behind", "spatial", False, "in front of"),
        Relation("inside", "spatial", False, "surrounding", "role"),
        Relation("surrounding", "verb", False, "inside", "role"),
        Relation("pointing at", "verb", False, None, "role"),
        Relation("covering", "verb", False, "covered by"),
        Relation("covered by", "verb", False, "covering"),
        Relation("next to", "spatial", True, "next to"),
        Relation("near", "spatial", True, "near"),
    )
}
"""The first world's relations: those of every layout but ``support``. Code that enumerates a world's relations
(foils, word lists) takes them from :meth:`vlcomp.world.scene.WorldConfig.relations`; code that looks a phrase up
uses :data:`ALL_RELATIONS`."""

SUPPORT_RELATION_TABLE: dict[str, Relation] = {
    r.phrase: r
    for r in (
        Relation("sitting on", "spatial", False, None, "role"),
        Relation("hanging from", "verb", False, None, "role"),
    )
}
"""Relations only the support layout creates (a small object and a bar); not in the first world's vocabulary
(:func:`world_words` version 2)."""

SUPPORT_RELATIONS: tuple[str, ...] = tuple(SUPPORT_RELATION_TABLE)


def support_shapes(relations: Iterable[str]) -> tuple[str, ...]:
    """The flat support shapes a world with the relation inventory ``relations`` shows: :data:`SUPPORT_SHAPES` when
    it has the support relations (only the ``support`` layout places a bar, and always with an object on it or
    under it), else none (the first world)."""
    relations = set(relations)
    return SUPPORT_SHAPES if any(r in relations for r in SUPPORT_RELATIONS) else ()

ALL_RELATIONS: dict[str, Relation] = {**RELATIONS, **SUPPORT_RELATION_TABLE}
"""Every relation any world can show, for looking a phrase up."""

SYMMETRIC_RELATIONS: tuple[str, ...] = tuple(p for p, r in RELATIONS.items() if r.symmetric)

CAPTION_WORDS: tuple[str, ...] = (
    "a", "an", "the", "is", "are", "and", "with", "of", "there", "two", "three", "shapes", "shape", "object",
    "objects", "picture", "photo", "image", "on", "in", "background", "sits", "placed", "one", "it", "has",
    "colors", "colours", "containing", "showing", "some", "to", "left", "right", "above", "below", "front",
    "behind", "inside", "surrounding", "pointing", "at", "covering", "covered", "by", "next", "near", "not",
    "no", "without", "clipart", "icon", "drawing", "simple", "graphic", "black", "gray", "that", "which",
    "art", "of", "this", "what", "looks", "like", "can", "be", "seen", "here", "we", "see",
)
"""Function and template words used by the caption styles (the tokenizer vocabulary adds the concepts)."""


COUNT_WORDS: tuple[str, ...] = ("one", "two", "three", "four")
"""Number words a caption can use to count the objects of a scene (``world.captions.count_prob``)."""

NEGATION_WORDS: tuple[str, ...] = ("no", "not", "without")
"""Negation words a caption can use (``world.captions.negation_prob``; CoN-CLIP's three)."""


def world_words(version: int = 1) -> list[str]:
    """Every word a toy caption can contain, in a fixed order (the tokenizer's vocabulary).

    ``version`` 1 is the first world's vocabulary, whose ids every model trained on it depends on; version 2 appends
    the words of the knobs added later (bars and their relations, the extended synonyms, "four"), so the ids of
    version 1's words are the same in both."""
    if version not in (1, 2):
        raise ValueError(f"world vocabulary version {version!r}: expected 1 or 2")
    words: list[str] = []
    groups = [
        SHAPES,
        tuple(s + "s" for s in SHAPES),
        tuple(COLOURS),
        tuple(SIZES),
        tuple(w for ws in SYNONYMS.values() for w in ws),
        MATERIALS,
        STATES,
        tuple(BACKGROUNDS),
        tuple(w for r in RELATIONS for w in r.split()),
        CAPTION_WORDS,
        # last, so the ids of the words above do not depend on them (the vocabulary always holds them, whether
        # or not world.web_only_* puts them in the web split)
        WEB_ONLY_SHAPES,
        tuple(s + "s" for s in WEB_ONLY_SHAPES),
        tuple(WEB_ONLY_COLOURS),
    ]
    if version == 2:
        groups += [
            SUPPORT_SHAPES,
            tuple(s + "s" for s in SUPPORT_SHAPES),
            tuple(w for r in SUPPORT_RELATIONS for w in r.split()),
            tuple(w for ws in EXTENDED_SYNONYMS.values() for w in ws),
            COUNT_WORDS,
            NEGATION_WORDS,
            ("but",),
        ]
    for group in groups:
        for w in group:
            if w not in words:
                words.append(w)
    return words
