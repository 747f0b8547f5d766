"""TSVLC rule-based (RB) negatives: swap one list word of a caption for another word of the same list.

TSVLC §3.1.1 (Doveh et al., CVPR 2023) teaches "structured" concepts (attributes, states, relations) with
one-word negatives built by rules: for each concept type there is a word list (colour, material, size, state,
action/relation); a caption is scanned for list words, one is picked at random and replaced by a random *other*
word of the same list ("A big brown dog" -> "A big yellow dog"). No antonyms, no WordNet, no synonym filter:
any other list member, drawn uniformly, is a negative. Each negative feeds the per-sample two-way loss of
Eq. 3 (image against {its caption, its negative}); captions with no list word get no negative.

The paper's supplementary (which held the word lists) is not in the text; the lists and the algorithm come
from the reference repository ``SivanDoveh/TSVLC``, ``src/SVLC_learning/{*_list.py, negs_and_pos.py}``
(catalog ``tsvlc.md`` §3.3 and §5 item 9). What the reference ``Negatives.create_negs`` does:

1. a type is "present" when ``any(entry in caption)``: a **substring** test on the raw string;
2. one present type is drawn uniformly (``color`` when none is present);
3. candidates are the list entries equal to a whitespace token of the caption (``caption.split()``),
   case-sensitive and with punctuation glued on; if there are none the sample gets **no negative**;
4. the replacement is drawn uniformly from ``set(list) - set(candidates)`` and applied with
   ``caption.replace(old, new)``.

Defects of the reference, documented here and **not** copied:

- *Substring type test.* "tan" is in "standing", "red" in "covered", "on"/"in" in almost any caption, so a
  type can be chosen although no word of it is in the caption; that draw then gives no negative (the reference
  does not fall back to another type). Here a type is eligible only when it has a whole-token match, and the
  type is drawn uniformly among those, so a caption with any match always gets a negative.
- *``str.replace`` on all occurrences*, also inside longer words: "a red car and a red bus" changes both
  ``red``, and replacing "red" would turn "covered" into "cove<new>". The paper says the negative differs in
  one word; here exactly one matched span is replaced, at its own position.
- *Multi-word entries never match* in step 3 ("in front of", "attached to", "carbon dioxide", "man-made
  fibers" are not single tokens), so most reference "action" negatives come from bare prepositions
  (on, in, of, with). Here an entry matches a run of consecutive tokens, longest entry first.
- *Punctuation and case*: "red," or "Red" never match ``caption.split()`` in the reference. Here matching is
  case-insensitive and ignores punctuation at the edges of a token (kept in the output).
- *Data bugs in the lists* (fixed in :data:`PAPER_WORD_LISTS`): ``'bamboo '`` has a trailing space (it could
  never equal a token), and a missing comma in ``state_list`` concatenates ``"stained" "good"`` into
  ``"stainedgood"``.
- (minor) the replacement is drawn from a Python ``set``, whose order depends on ``PYTHONHASHSEED``, so the
  reference is not reproducible across processes even with a fixed ``random`` seed; here the pool keeps list
  order and the randomness is an injected ``np.random.Generator``.

Matching, as done here (:func:`find_spans`):

- the caption is split on whitespace; each token's *core* is the token without leading/trailing punctuation
  (``string.punctuation`` and typographic quotes/dashes), compared lower-cased;
- a list entry matches when its words equal the cores of consecutive tokens, with no punctuation *between*
  them ("in front, of" does not match "in front of");
- within a type, overlapping matches are resolved longest first (then leftmost): "in front of" wins over
  "in" and "of", so the spans of one type do not overlap. Types are matched independently, as in the
  reference: a word in two lists (``white`` is a colour and a state, ``gold`` a colour and a material) gives a
  span of each type.

Generation (:func:`rb_negatives`), per draw: a type uniformly among the types with at least one span (and at
least one possible replacement), a span of that type uniformly, a replacement uniformly from that type's list
minus every entry matched anywhere in the caption (also entries inside a longer span: for "standing in front
of a car" neither "in front of" nor "in" nor "of" is a replacement, as the reference excludes every present
token). The replacement is lower-case unless the replaced word was capitalised at a sentence start (first
token, or after a token ending in . ! ?), where its first letter is upper-cased; everything outside the span
(other tokens, whitespace, the span's edge punctuation) is kept as it is. With ``k > 1`` the draws are
repeated until ``k`` distinct negative captions are found, the possible ones are exhausted, or
``_MAX_ATTEMPTS_PER_NEGATIVE * k`` draws are spent; unlike the reference (one type per caption for all its
``num_negs`` negatives), the type is redrawn for each negative. With ``k = 1`` (the reference default) the
procedure is the reference's with the defects above removed.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from vlcomp.world.concepts import ALL_COLOURS, MATERIALS, RELATIONS, SIZES, STATES, SYNONYMS, Relation

from .perturb import _check_captions, _check_rng

# The reference repository's lists (SivanDoveh/TSVLC, src/SVLC_learning/*_list.py, commit 051718a), in their
# file order, with two data bugs fixed:
# - material: 'bamboo ' (trailing space, could never equal a whitespace token) -> 'bamboo';
# - state: a missing comma after "stained" concatenates "stained" "good" into "stainedgood". "stained" is
#   already in the list a few entries earlier, so only "good" is put back, in place of "stainedgood"
#   (48 entries before and after the fix).
# Multi-word entries are kept: they are matched here (the reference never matched them).
PAPER_WORD_LISTS: dict[str, tuple[str, ...]] = {
    "color": (
        "teal", "brown", "green", "black", "silver", "white", "yellow", "purple", "gray", "blue", "orange",
        "red", "blond", "concrete", "cream", "beige", "tan", "pink", "maroon", "olive", "violet", "charcoal",
        "bronze", "gold", "navy", "coral", "burgundy", "mauve", "peach", "rust", "cyan", "clay", "ruby", "amber",
    ),
    "material": (
        "rubber", "metal", "denim", "wooden", "cloth", "silk", "plastic", "bamboo", "stone", "wicker", "brick",
        "smooth", "steel", "iron", "silver", "wool", "gold", "glass", "helium", "hydrogen", "ice", "lace",
        "lead", "alloy", "aluminum", "asbestos", "ash", "brass", "bronze", "carbon dioxide", "cardboard",
        "cement", "chalk", "charcoal", "clay", "coal", "copper", "cotton", "dust", "fiberglass", "gas",
        "leather", "linen", "magnesium", "man-made fibers", "marble", "mercury", "mortar", "mud", "nickel",
        "nitrogen", "nylon", "oil", "oxygen", "paper", "paraffin", "petrol", "plaster", "platinum",
        "polyester", "sand", "slate", "smoke", "soil", "steam", "straw", "tin", "uranium", "water", "wood",
        "zinc",
    ),
    "size": (
        "long", "old", "extended", "light", "hefty", "scraggy", "heavy", "scanty", "broad", "little", "stout",
        "curvy", "miniature", "thickset", "emaciated", "minute", "tiny", "illimitable", "sizable", "bulky",
        "mammoth", "strapping", "enormous", "obese", "towering", "fleshy", "petite", "underweight", "compact",
        "measly", "teensy", "grand", "puny", "expansive", "oversize", "trim", "beefy", "lanky", "slender",
        "gaunt", "pocket-size", "wee", "cubby", "mini", "thick", "full-size", "pint-size", "unlimited",
        "elfin", "minuscule", "thin", "epic", "outsized", "trifling", "huge", "scrawny", "giant", "portly",
        "wide", "brawny", "limitless", "stocky", "big", "large", "slim", "immense", "skimpy", "immeasurable",
        "skeletal", "colossal", "meager", "tall", "gigantic", "pudgy", "extensive", "overweight", "tubby",
        "cosmic", "microscopic", "teeny", "boundless", "life-size", "squat", "fat", "paltry", "undersized",
        "bony", "lean", "small", "chunky", "massive", "sturdy", "great", "rotund", "endless", "narrow",
        "titanic", "hulking", "short", "infinitesimal", "skinny", "gargantuan", "plump", "vast",
    ),
    "state": (
        "tinted", "dust", "dirty", "flip", "calm", "burnt", "sad", "dry", "sunny", "old", "young", "broken",
        "stormy", "overcast", "unhappy", "cloudless", "adult", "wet", "foggy", "curly", "stained", "rough",
        "pale", "white", "fresh", "good", "new", "first", "last", "long", "great", "little", "own", "other",
        "right", "big", "high", "different", "small", "large", "next", "early", "important", "few", "public",
        "bad", "same", "able",
    ),
    "action": (
        "above", "across", "against", "along", "attached to", "behind", "belonging to", "between", "carrying",
        "covered in", "covering", "eating", "flying in", "for", "from", "growing on", "hanging from", "has",
        "holding", "in", "in front of", "laying on", "looking at", "lying on", "made of", "mounted on", "near",
        "of", "on", "on back of", "over", "painted on", "parked on", "part of", "playing", "riding", "says",
        "sitting on", "standing on", "under", "using", "walking in", "walking on", "watching", "wearing",
        "wears", "with",
    ),
}
"""The TSVLC reference word lists by concept type (see the comment above for the two fixes). The reference's
type order is ``color, action, material, size, state``; the order here only changes which random number picks
which type, not the distribution."""

#: Draws allowed per requested negative before :func:`rb_negatives` gives up looking for distinct ones.
_MAX_ATTEMPTS_PER_NEGATIVE = 20

#: Characters stripped from the edges of a token before matching (kept in the output).
_PUNCT = string.punctuation + "\u201c\u201d\u2018\u2019\u00ab\u00bb\u2026\u2013\u2014"
_SENTENCE_END = (".", "!", "?")


def toy_word_lists(relations: Mapping[str, Relation] | Sequence[str] = RELATIONS) -> dict[str, tuple[str, ...]]:
    """The five TSVLC types over the toy world's vocabulary (:mod:`vlcomp.world.concepts`), in a fixed order.

    ``relations``: the relation inventory of the world whose captions are edited (``WorldConfig.relations``, or
    its phrases); default the first world's (:data:`RELATIONS`).

    - ``color``: every colour the renderer knows (:data:`ALL_COLOURS`, web-only colours included);
    - ``material``: :data:`MATERIALS` (surface textures);
    - ``size``: the keys of :data:`SIZES` and then their :data:`SYNONYMS` (``big``, ``little``). Like the
      paper's list, which holds both ``big`` and ``large``, this makes some negatives synonyms of the original
      ("a small circle" -> "a little circle"), i.e. false negatives. That is faithful to the method, which has
      no synonym filter;
    - ``state``: :data:`STATES`;
    - ``action``: every relation phrase of ``relations`` (multi-word: "to the left of", "pointing at"; a support
      world adds "sitting on", "hanging from"), playing the role of the paper's ``action`` list (VG-style
      predicates, spatial and verb).
    """
    size_words = list(SIZES)
    for key, syns in SYNONYMS.items():
        if key in SIZES:
            size_words.extend(w for w in syns if w not in size_words)
    return {
        "color": tuple(ALL_COLOURS),
        "material": tuple(MATERIALS),
        "size": tuple(size_words),
        "state": tuple(STATES),
        "action": tuple(relations),
    }


@dataclass(frozen=True)
class Span:
    """A list entry matched in a caption: tokens ``start`` (inclusive) to ``end`` (exclusive) of
    ``caption.split()``, of concept ``type``; ``entry`` is the list entry (lower-case, single-spaced)."""

    type: str
    start: int
    end: int
    entry: str


@dataclass(frozen=True)
class _Token:
    core: str  # lower-cased, edge punctuation removed
    raw_core: str  # as written
    start: int  # character offsets of the core in the caption
    end: int
    lead: bool  # punctuation before the core
    trail: bool  # punctuation after the core
    sentence_end: bool  # the whole token ends with . ! ?


@dataclass(frozen=True)
class _TypeList:
    name: str
    entries: tuple[str, ...]  # distinct normalised entries, in list order
    by_first: dict[str, tuple[tuple[int, tuple[str, ...]], ...]]  # first word -> (entry index, words)


def _tokenise(caption: str) -> list[_Token]:
    tokens: list[_Token] = []
    for m in re.finditer(r"\S+", caption):
        tok = m.group()
        left = tok.lstrip(_PUNCT)
        core = left.rstrip(_PUNCT)
        n_lead = len(tok) - len(left)
        start = m.start() + n_lead
        tokens.append(
            _Token(
                core=core.lower(),
                raw_core=core,
                start=start,
                end=start + len(core),
                lead=n_lead > 0,
                trail=len(left) > len(core),
                sentence_end=tok.endswith(_SENTENCE_END),
            )
        )
    return tokens


def _compile(lists: object, where: str) -> list[_TypeList]:
    """Validate ``lists`` and index each type's entries by their first word."""
    if not isinstance(lists, Mapping):
        raise ValueError(f"{where}: lists must be a dict of type -> word list, got {type(lists).__name__}")
    if not lists:
        raise ValueError(f"{where}: lists is empty (no concept type to draw negatives from)")
    out: list[_TypeList] = []
    for name, words in lists.items():
        if not isinstance(name, str):
            raise ValueError(f"{where}: list type names must be str, got {name!r}")
        if isinstance(words, str) or not isinstance(words, Sequence):
            raise ValueError(
                f"{where}: lists[{name!r}] must be a list/tuple of str, got {type(words).__name__} {words!r}"
            )
        if len(words) == 0:
            raise ValueError(f"{where}: lists[{name!r}] is empty")
        entries: list[str] = []
        index: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
        for w in words:
            if not isinstance(w, str) or not w.split():
                raise ValueError(f"{where}: lists[{name!r}] has an entry that is not a non-blank str: {w!r}")
            key = tuple(p.lower() for p in w.split())
            bad = [p for p in key if p.strip(_PUNCT) != p]
            if bad:
                raise ValueError(
                    f"{where}: lists[{name!r}] entry {w!r} has punctuation at the edge of a word ({bad}); "
                    "tokens are matched without edge punctuation, so it could never match"
                )
            entry = " ".join(key)
            if entry in entries:
                continue
            index.setdefault(key[0], []).append((len(entries), key))
            entries.append(entry)
        out.append(_TypeList(name, tuple(entries), {k: tuple(v) for k, v in index.items()}))
    return out


def _check_caption(caption: object, where: str) -> str:
    if not isinstance(caption, str):
        raise ValueError(f"{where}: caption must be a str, got {type(caption).__name__}: {caption!r}")
    return caption


def _raw_matches(tokens: Sequence[_Token], tl: _TypeList) -> list[tuple[int, int, int]]:
    """Every (start, end, entry index) where an entry of ``tl`` matches consecutive tokens (overlaps kept)."""
    found: list[tuple[int, int, int]] = []
    n = len(tokens)
    for i, tok in enumerate(tokens):
        for idx, words in tl.by_first.get(tok.core, ()):
            end = i + len(words)
            if end > n:
                continue
            if all(
                tokens[i + j].core == words[j] and not tokens[i + j - 1].trail and not tokens[i + j].lead
                for j in range(1, len(words))
            ):
                found.append((i, end, idx))
    return found


def _resolve_overlaps(matches: Sequence[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Longest first (then leftmost), dropping matches that overlap a kept one; returned in caption order."""
    kept: list[tuple[int, int, int]] = []
    for m in sorted(matches, key=lambda m: (m[0] - m[1], m[0])):
        if all(m[1] <= k[0] or k[1] <= m[0] for k in kept):
            kept.append(m)
    return sorted(kept)


def _find(tokens: Sequence[_Token], compiled: Sequence[_TypeList]) -> list[tuple[_TypeList, list, set[int]]]:
    """Per type with a match: (type, its non-overlapping spans, indices of every entry matched anywhere)."""
    out = []
    for tl in compiled:
        raw = _raw_matches(tokens, tl)
        if raw:
            out.append((tl, _resolve_overlaps(raw), {idx for _, _, idx in raw}))
    return out


def find_spans(caption: str, lists: Mapping[str, Sequence[str]]) -> list[Span]:
    """The list entries matched in ``caption`` (whole tokens, longest entry first within a type).

    Sorted by start token, then by the order of the types in ``lists``. Spans of one type never overlap;
    spans of different types can cover the same tokens (a word that is in two lists).
    """
    caption = _check_caption(caption, "find_spans")
    compiled = _compile(lists, "find_spans")
    spans = [
        Span(tl.name, s, e, tl.entries[idx])
        for tl, kept, _ in _find(_tokenise(caption), compiled)
        for s, e, idx in kept
    ]
    order = {tl.name: i for i, tl in enumerate(compiled)}
    return sorted(spans, key=lambda sp: (sp.start, order[sp.type]))


def _substitute(caption: str, tokens: Sequence[_Token], start: int, end: int, replacement: str) -> str:
    """Replace the cores of tokens ``start..end`` (and what lies between them) by ``replacement``."""
    first = tokens[start]
    at_sentence_start = start == 0 or tokens[start - 1].sentence_end
    if at_sentence_start and first.raw_core[:1].isupper():
        replacement = replacement[:1].upper() + replacement[1:]
    return caption[: first.start] + replacement + caption[tokens[end - 1].end :]


def _rb_negatives(
    caption: str, compiled: Sequence[_TypeList], rng: np.random.Generator, k: int
) -> list[tuple[str, str]]:
    tokens = _tokenise(caption)
    options = []  # (type name, spans, replacement pool)
    for tl, spans, present in _find(tokens, compiled):
        pool = [e for i, e in enumerate(tl.entries) if i not in present]
        if pool:  # a type whose every entry is already in the caption has nothing to swap in
            options.append((tl.name, spans, pool))
    if not options:
        return []
    # an upper bound on the distinct negatives (two types sharing a word can give the same caption)
    target = min(k, sum(len(spans) * len(pool) for _, spans, pool in options))
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for _ in range(_MAX_ATTEMPTS_PER_NEGATIVE * k):
        if len(out) >= target:
            break
        name, spans, pool = options[int(rng.integers(len(options)))]
        start, end, _ = spans[int(rng.integers(len(spans)))]
        replacement = pool[int(rng.integers(len(pool)))]
        negative = _substitute(caption, tokens, start, end, replacement)
        if negative not in seen:
            seen.add(negative)
            out.append((negative, name))
    return out


def _check_k(k: object, where: str) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"{where}: k must be a positive int, got {k!r}")
    return int(k)


def rb_negatives(
    caption: str, lists: Mapping[str, Sequence[str]], rng: np.random.Generator, k: int = 1
) -> list[tuple[str, str]]:
    """Up to ``k`` distinct RB negatives of ``caption`` as (negative caption, concept type) pairs.

    ``[]`` when no list entry matches (the caller drops the sample from the negatives loss, as the reference
    does). Fewer than ``k`` when fewer distinct negatives exist or are found within the draw budget. See the
    module docstring for the draw order and the differences from the reference.
    """
    caption = _check_caption(caption, "rb_negatives")
    compiled = _compile(lists, "rb_negatives")
    _check_rng(rng, "rb_negatives")
    k = _check_k(k, "rb_negatives")
    return _rb_negatives(caption, compiled, rng, k)


def rb_negatives_batch(
    captions: Sequence[str], lists: Mapping[str, Sequence[str]], rng: np.random.Generator, k: int = 1
) -> list[list[tuple[str, str]]]:
    """:func:`rb_negatives` for each caption in order, with ``lists`` validated once.

    Random numbers are drawn caption by caption, so the result equals
    ``[rb_negatives(c, lists, rng, k) for c in captions]`` and is a pure function of the rng state.
    """
    captions = _check_captions(captions, "rb_negatives_batch")
    compiled = _compile(lists, "rb_negatives_batch")
    _check_rng(rng, "rb_negatives_batch")
    k = _check_k(k, "rb_negatives_batch")
    return [_rb_negatives(c, compiled, rng, k) for c in captions]
