"""Hard Positives' training data (Kamath et al., ECCV 2024; catalog ``hard_positives.md`` §3.1-3.3, §5 items 9-13):
one hard positive and one CREPE-style hard negative per caption, for the HP+HN fine-tuning (3 texts per caption:
the original, its hard positive, its hard negative). A registered generator run once for every chain
(``mine@<name>``, ``reads: none``): the data are a property of the corpus, as the authors' released files are.

==================  ======  ==================================================================================
name                reads   writes
==================  ======  ==================================================================================
``hardpos``         none    ``positives`` (one per caption, or none), ``negatives`` (one per caption, or none),
                            ``negative_types`` (its category), and the extra ``positive_types.json``
==================  ======  ==================================================================================

The paper's Swap-only / Replace-only rows are further entries of ``mine`` with ``generator: hardpos`` and
``types: [swap]`` / ``[replace]`` (``mine.hardpos_swap: {generator: hardpos, split: coco_train, types: [swap]}``):
the registry finds this module by the name's prefix, but only the name ``hardpos`` is registered, so the
``generator`` key is needed. ``types`` restricts the positives *and* the negatives to that type.

**Positives** (``source``):

- ``scene`` (toy profile): :class:`vlcomp.text.hard_positives.HardPositiveRules`, exact on the scene graph (the
  conjunct reorder for SWAP; a synonym of the world's table or the converse relation for REPLACE). ``synonyms``
  must be the world's ``world.captions.synonyms``: the rules write the words of that table only (an ``extended``
  table on a ``base`` world would write words its tokenizer never saw). A caption of the split that uses a synonym
  the given table lacks is an error naming ``synonyms``; the other mismatch (``extended`` for a ``base`` world)
  cannot be seen in the captions and is the params' responsibility.
- ``llm`` (paper profile): :class:`vlcomp.text.hard_positives.LlmHardPositives` on the causal LM ``model`` (local
  files only, :func:`vlcomp.text.analogy.load_causal_lm`): the released script's SWAP (5-shot) and REPLACE
  templates, greedy, ``max_new_tokens`` 20 / 30, left-padded batches of ``batch_size``.
- ``released`` (paper profile): the authors' ``hard_positives_ft/replace_hp.jsonl`` (``replace_file``) and
  ``swap_hp.jsonl`` (``swap_file``), ``$VAR`` expanded: one line per caption of the input caption file, in its
  order (the authors': COCO **2017** train's ``captions_train2017.json``, 591,753 lines, line ``i`` = the file's
  ``annotations[i]``). How the lines meet the split's captions depends on the split:

  - a split indexed from COCO's own caption file (real profile, ``world.splits.<split>.format: coco_captions``,
    e.g. ``coco2017_train``) has ``annotation_order.json`` (:mod:`vlcomp.formats.coco_captions`): caption ``j`` of
    image ``k`` in ``captions.json`` gets line ``annotation_index[k][j]``, so each caption gets exactly its own
    line whatever the image grouping; the file must have one line per annotation of that file
    (``n_annotations``);
  - any other split (the toy world's, a Karpathy or TSV one) has no sidecar: line ``c`` goes to the split's flat
    caption ``c`` (image by image, caption by caption, as ``captions.json`` lists them), and the file must have one
    line per caption. BLIP's Karpathy train (the real profile's ``coco_train``: 2014 images, other captions, another
    order) cannot be aligned to the authors' files at all: use the ``coco2017_train`` split.

  The sidecar is read automatically (no parameter): the split knows where its captions came from, and the
  annotation file is named once, in ``world``. The released script writes each generation with ``json.dumps``, so
  a line is read as a JSON string; a line that is not JSON is taken as the bare text, and the Hugging Face
  pipeline's ``{"generated_text": ...}`` (or a list of one) is accepted too (the catalog does not give the shape;
  other JSON is an error naming the file and line). Lines end at a line feed only (the carriage return of a CRLF
  ending is dropped), not at the other line boundaries of ``str.splitlines`` (form feed, NEL, U+2028 ...), which a
  bare generation may hold and which would shift every later line. The literal ``None`` (bare, or the JSON string),
  JSON ``null`` and an empty line mean "no positive" (the swap file's line for a caption without "and"). A file
  with another number of lines than expected is an error naming the file, the parameter and both counts. The
  released generations are cleaned as the LLM's are (first non-empty line, stripped; equal to the caption: none).
  Alignment check in the summary (``released/...``, :func:`released_alignment`): how many swap lines are not
  ``None`` and how many of those fall on a caption without the word "and" (a few where the authors' "and" test
  differs from :func:`~vlcomp.text.hard_positives.has_and`), and how many replace lines keep less than half of
  their caption's words (a few where the LLM rewrote much of a short caption). Both are near 0 when the lines are
  aligned and most of the lines when they are not: read them after the first run on the real files.

A caption with both a SWAP and a REPLACE positive gets one, the type drawn uniformly (AMBIGUOUS, §3.1); the summary
counts the choice (``chosen_when_both/*``).

**Negatives** (``negatives_source``): one per caption (§3.2: "generated by the CREPE process, as in SugarCrepe").

- ``scene`` (toy profile): :func:`vlcomp.twins.sugarcrepe.negatives` with ``limit=1``, checked false on the scene
  graph; SWAP type = ``swap_obj`` / ``swap_att``, REPLACE type = ``replace_obj`` / ``replace_att`` /
  ``replace_rel`` (the paper does not say which CREPE types, nor how one is chosen per caption: AMBIGUOUS). Per
  caption, every category allowed by ``types`` draws one valid negative (in :data:`CREPE_CATEGORIES` order), and
  the category is drawn uniformly among those that gave one; ``negative_types`` records it ("replace_att"). The
  negative's type is drawn independently of the positive's (the paper generated them by separate processes). A
  count prefix ("two shapes: ") is set aside and put back (it is true of the scene, so the negative stays false);
  a caption the twin's parser cannot read (another style, a negated clause) gets no negative.
- ``rules`` (paper profile: real COCO has no scene graphs, and CREPE's generator is not available offline): a
  documented stand-in on the spaCy parses, SWAP type = NegCLIP's swap rules (:mod:`vlcomp.text.negclip_swaps`,
  categories ``swap/np_swap`` ...), REPLACE type = TSVLC's rule-based word lists (:mod:`vlcomp.text.tsvlc_rules`,
  ``word_lists`` as ``mine.tsvlc_rb`` has them, categories ``replace/color`` ...). Each rule / list draws one
  negative and the category is drawn uniformly among those that gave one. Not CREPE: no ``replace_obj``
  counterpart (TSVLC's noun list is unused by its code), and nothing checks a negative false (a TSVLC size swap
  big -> large is a synonym; a NegCLIP swap can be a hard positive, see below).

**The flaw, measured** (``negclip_collision/*``): for every caption with a positive, whether NegCLIP's own swap
rules could write that positive as a *negative* (every pair each rule could pick, enumerated deterministically:
:func:`vlcomp.text.hard_positives.negclip_swap_outputs`). A swap rule only permutes the caption's tokens, so a
positive with other words (a synonym, a non-symmetric converse) cannot collide and needs no parse; the others are
checked on the saved spaCy parses (``parsed``) or parsed with ``nlp``.

Outputs (the :data:`~vlcomp.generators.MINED` per-caption layout, ``[image][caption][...]``, an empty list when
none): ``positives.json`` (0 or 1 positive), ``negatives.json`` (0 or 1 negative), ``negative_types.json`` (its
category) and, not a mined name (methods never read it), ``positive_types.json``: ``swap`` or ``replace`` per
positive.

Summary (``mine/hardpos/...``, counts of captions unless a share):

=========================================  =====================================================================
``n_captions``                             captions of the split
``candidates/paper_swap_filter``           captions with "and" and fewer than ``max_words`` words
``candidates/{swap,replace,both,none}``    captions with a candidate of that type (``both``: of the two types;
                                           ``none``: of no enabled type)
``candidates/replace_{synonym,converse}``  source scene: captions where that REPLACE rule applies
``chosen/{swap,replace}``                  positives of each type
``chosen_when_both/{swap,replace}``        the uniform type draw, among the captions with both (AMBIGUOUS)
``rule/<type>_<rule>``                     positives by rule (``replace_synonym``, ``swap_llm``, ...)
``captions_with_{positive,negative}``      and ``share_with_{positive,negative}`` (of all captions)
``negatives/<category>``                   negatives by category
``negclip_collision/...``                  ``n_positives``, ``n_collide``, ``share`` (of the captions with a
                                           positive: NegCLIP's swaps could write it as a negative), and
                                           ``share_<type>`` (of the positives of that type)
``released/by_annotation_order``           source released: 1 when the lines were aligned through the split's
                                           ``annotation_order.json``, 0 by flat caption order
``released/swap_lines``                    source released, type swap: swap lines that are not "None"
``released/swap_lines_without_and``        of those, lines on a caption without the word "and" (alignment check)
``released/replace_lines``                 source released, type replace: replace lines that are not "None"
``released/replace_lines_unrelated``       of those, lines keeping less than half of their caption's distinct
                                           words (alignment check)
=========================================  =====================================================================
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from . import GENERATORS, Generator
from .tsvlc import WORD_LISTS, _flat, _reshape

if TYPE_CHECKING:
    from spacy.tokens import Doc

    from ..formats.coco_captions import AnnotationOrder
    from ..text.hard_positives import HardPositive
    from ..world.concepts import Relation
    from ..world.scene import Scene

NAME = "hardpos"
SOURCES = ("scene", "llm", "released")
NEGATIVE_SOURCES = ("scene", "rules")
CREPE_CATEGORIES: dict[str, tuple[str, ...]] = {
    "swap": ("swap_obj", "swap_att"),
    "replace": ("replace_obj", "replace_att", "replace_rel"),
}
"""SugarCrepe's categories of each hard-negative type (the CREPE types the paper's negatives stand for)."""
POSITIVE_TYPES_FILE = "positive_types.json"


def _positive_int(value: object, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name}={value!r}: must be an int >= 1")


@dataclass(frozen=True)
class HardPosConfig:
    """``mine.hardpos`` (and entries with ``generator: hardpos``) in params.yaml; see the module notes."""

    split: str
    source: str = "scene"  # scene (toy: exact rules) | llm (paper: the authors' prompts) | released (their files)
    types: tuple[str, ...] = ("swap", "replace")  # both, or one for the Swap-only / Replace-only rows
    max_words: int = 15  # SWAP filter: "and" and fewer than max_words words (strict)
    synonyms: str = "base"  # source scene: the world's world.captions.synonyms (base | extended)
    negatives_source: str = "scene"  # scene (toy: SugarCrepe edits checked on the scene graph) | rules (paper)
    word_lists: str = "paper"  # negatives_source rules: TSVLC's RB lists, "paper" or "toy"
    model: str | None = None  # source llm: a causal LM name or folder in the local cache
    max_new_tokens_swap: int = 20
    max_new_tokens_replace: int = 30
    batch_size: int = 8
    replace_template: str = "released"  # source llm: the released script's template or the paper's ("paper")
    replace_file: str | None = None  # source released: hard_positives_ft/replace_hp.jsonl
    swap_file: str | None = None  # source released: hard_positives_ft/swap_hp.jsonl

    def __post_init__(self) -> None:
        from ..text.hard_positives import REPLACE_TEMPLATES, check_types
        from ..world.captions import SYNONYM_SETS

        if self.source not in SOURCES:
            raise ValueError(f"source={self.source!r}: must be one of {SOURCES}")
        check_types(self.types, "types")
        if isinstance(self.max_words, bool) or not isinstance(self.max_words, int) or self.max_words < 2:
            raise ValueError(f"max_words={self.max_words!r}: must be an int >= 2")
        if self.synonyms not in SYNONYM_SETS:
            raise ValueError(f"synonyms={self.synonyms!r}: must be one of {sorted(SYNONYM_SETS)} (the world's "
                             "world.captions.synonyms)")
        if self.negatives_source not in NEGATIVE_SOURCES:
            raise ValueError(f"negatives_source={self.negatives_source!r}: must be one of {NEGATIVE_SOURCES}")
        if self.word_lists not in WORD_LISTS:
            raise ValueError(f"word_lists={self.word_lists!r}: must be one of {WORD_LISTS}")
        for name in ("max_new_tokens_swap", "max_new_tokens_replace", "batch_size"):
            _positive_int(getattr(self, name), name)
        if self.replace_template not in REPLACE_TEMPLATES:
            raise ValueError(f"replace_template={self.replace_template!r}: must be one of "
                             f"{sorted(REPLACE_TEMPLATES)}")
        if self.source == "llm" and not self.model:
            raise ValueError("model: source llm needs a causal LM name or folder")
        if self.source == "released":
            for kind, name in (("replace", "replace_file"), ("swap", "swap_file")):
                if kind in self.types and not getattr(self, name):
                    raise ValueError(f"{name}: source released with type {kind!r} needs the authors' file "
                                     f"(hard_positives_ft/{kind}_hp.jsonl)")

    @property
    def kinds(self) -> tuple[str, ...]:
        """``types`` in :data:`~vlcomp.text.hard_positives.TYPES` order."""
        from ..text.hard_positives import check_types

        return check_types(self.types)


# --------------------------------------------------------------------------------------------------------------
# Negatives
# --------------------------------------------------------------------------------------------------------------


def crepe_categories(types: Sequence[str]) -> tuple[str, ...]:
    """The SugarCrepe categories of ``types``, in :data:`CREPE_CATEGORIES` order."""
    return tuple(c for t in CREPE_CATEGORIES if t in types for c in CREPE_CATEGORIES[t])


def _pick(options: list[tuple[str, str]], rng: np.random.Generator) -> tuple[str, str] | None:
    if not options:
        return None
    return options[int(rng.integers(len(options)))] if len(options) > 1 else options[0]


def crepe_negative(caption: str, scene: Scene, rng: np.random.Generator, *, categories: Sequence[str],
                   relations: Mapping[str, Relation]) -> tuple[str, str] | None:
    """``(negative, category)`` of one caption, or None: each category (in order) draws one valid negative with
    :func:`vlcomp.twins.sugarcrepe.negatives` (``limit=1``: uniform among its valid ones), then the category is
    drawn uniformly among those that gave one. A count prefix is set aside and put back."""
    from ..text.hard_positives import split_count_prefix
    from ..twins.sugarcrepe import negatives

    prefix, body = split_count_prefix(caption)
    options = []
    for cat in categories:
        got = negatives(cat, body, scene, rng=rng, limit=1, relations=relations)
        if got:
            options.append((prefix + got[0], cat))
    return _pick(options, rng)


def rule_negative(doc: Doc, rng: np.random.Generator, *, types: Sequence[str],
                  lists: Mapping[str, Sequence[str]]) -> tuple[str, str] | None:
    """The ``rules`` stand-in for one parsed caption: every NegCLIP swap rule (SWAP type) and every TSVLC word list
    (REPLACE type) draws one negative, then the category (``swap/<rule>``, ``replace/<list>``) is drawn uniformly
    among those that gave one."""
    from ..text.negclip_swaps import DEFAULT_SWAPS, SWAP_RULES, check_same
    from ..text.tsvlc_rules import rb_negatives

    options: list[tuple[str, str]] = []
    if "swap" in types:
        for name in DEFAULT_SWAPS:
            cand = SWAP_RULES[name](doc, rng)
            if cand is not None and not check_same(doc.text, cand):
                options.append((cand, f"swap/{name}"))
    if "replace" in types:
        for kind, words in lists.items():
            got = rb_negatives(doc.text, {kind: words}, rng, 1)
            if got:
                options.append((got[0][0], f"replace/{kind}"))
    return _pick(options, rng)


# --------------------------------------------------------------------------------------------------------------
# Released files
# --------------------------------------------------------------------------------------------------------------


def decode_released_line(line: str, where: str) -> str | None:
    """One line of a released file: a JSON string (``json.dumps`` of the generation, as the script writes it), the
    pipeline's ``{"generated_text": ...}`` (or a list of one), or the bare text; None for ``None`` / ``null`` /
    an empty line. ``where``: "<file>:<line>" for the error on any other JSON."""
    text = line.strip()
    if text in ("", "None", "null"):
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return text
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, dict) and isinstance(value.get("generated_text"), str):
        value = value["generated_text"]
    if value is None:
        return None
    if isinstance(value, str):
        return None if value.strip() == "None" else value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return text  # a bare line that happens to be a JSON number
    raise ValueError(f"{where}: expected a JSON string (or the bare generation), got {type(value).__name__}: "
                     f"{text[:80]!r}")


def released_lines(path: Path) -> list[str]:
    """The lines of a released file, each ended by a line feed (a CRLF's carriage return dropped; a final line feed
    ends the last line, as ``str.splitlines``), never split at the other boundaries ``str.splitlines`` knows (form
    feed, NEL, U+2028 ...)."""
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def read_released(path: str | Path, n_captions: int, *, param: str, split: str,
                  order: AnnotationOrder | None = None) -> list[str | None]:
    """The lines of a released file (:func:`decode_released_line`), one per caption of the split in its flat
    order: line ``c`` for caption ``c`` when ``order`` is None, else line ``order.flat[c]`` (the file holds one line
    per annotation of the split's COCO caption file, in its order). A count mismatch is an error naming the file,
    the parameter and both counts."""
    from ..config import expand_path

    path = Path(expand_path(str(path), param))
    if not path.is_file():
        raise FileNotFoundError(f"{path}: released hard positives not found ({param})")
    lines = released_lines(path)
    if order is None and len(lines) != n_captions:
        raise ValueError(f"{path}: {len(lines)} lines, but split {split!r} has {n_captions} captions ({param}: one "
                         "line per caption, in the split's caption order)")
    if order is not None:
        if len(order.flat) != n_captions:
            raise ValueError(f"{order.path}: {len(order.flat)} captions, but split {split!r} has {n_captions}: a "
                             "stale sidecar, rerun the world stage")
        if len(lines) != order.n_annotations:
            raise ValueError(f"{path}: {len(lines)} lines, but the annotation file of split {split!r} "
                             f"({order.annotations}) has {order.n_annotations} captions ({param}: one line per "
                             f"caption of that file, in its 'annotations' order; {order.path})")
        lines = order.align(lines)
        return [decode_released_line(line, f"{path}:{p + 1}") for p, line in zip(order.flat, lines, strict=True)]
    return [decode_released_line(line, f"{path}:{i + 1}") for i, line in enumerate(lines)]


def caption_words_kept(line: str, caption: str) -> float:
    """The share of the caption's distinct words (lower-cased letters and digits) that the line also has."""
    from ..text.hard_positives import word_key

    words = set(word_key(caption))
    return len(words & set(word_key(line))) / max(1, len(words))


#: A released REPLACE line keeping less than this share of its caption's words is counted as unrelated to it.
UNRELATED_BELOW = 0.5


def released_alignment(kind: str, raw: Sequence[str | None], flat: Sequence[str]) -> dict[str, float]:
    """The alignment check of one released file against the captions it was given to (summary keys without the
    ``mine/hardpos/`` prefix): SWAP, the lines that are not "None" and how many fall on a caption without the word
    "and"; REPLACE, the lines and how many keep less than :data:`UNRELATED_BELOW` of their caption's words (a
    synonym swap keeps most of them). Both are near 0 when the lines are aligned and most lines when they are not."""
    from ..text.hard_positives import has_and

    pairs = [(t, c) for t, c in zip(raw, flat, strict=True) if t is not None]
    if kind == "swap":
        return {"released/swap_lines": float(len(pairs)),
                "released/swap_lines_without_and": float(sum(not has_and(c) for _, c in pairs))}
    return {"released/replace_lines": float(len(pairs)),
            "released/replace_lines_unrelated": float(sum(caption_words_kept(t, c) < UNRELATED_BELOW
                                                          for t, c in pairs))}


# --------------------------------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------------------------------


def check_synonyms(captions: Sequence[str], synonyms: str, split: str) -> None:
    """A caption that uses a synonym the table ``synonyms`` lacks means the table is not the world's: an error
    naming ``synonyms``."""
    from ..text.hard_positives import word_pattern
    from ..world.captions import SYNONYM_SETS

    table = {s for ss in SYNONYM_SETS[synonyms].values() for s in ss}
    other = {s for t in SYNONYM_SETS.values() for ss in t.values() for s in ss} - table
    if not other:
        return
    pattern = word_pattern(other)
    for i, c in enumerate(captions):
        m = pattern.search(c)
        if m:
            raise ValueError(f"synonyms={synonyms!r}: caption {i} of split {split!r} ({c!r}) says {m.group(1)!r}, "
                             "a synonym of another table: set it to the world's world.captions.synonyms")


def scene_positives(cfg: HardPosConfig, captions: Sequence[str], scenes: Sequence[Scene],
                    relations: Mapping[str, Relation], rng: np.random.Generator
                    ) -> tuple[list[HardPositive | None], list[dict[str, bool]]]:
    """Source ``scene``: the positives and, per caption, which types had a candidate."""
    from ..text.hard_positives import RULES, HardPositiveRules

    rules = HardPositiveRules(types=cfg.kinds, max_words=cfg.max_words, synonyms=cfg.synonyms, relations=relations)
    out, avail = [], []
    for c, sc in zip(captions, scenes, strict=True):
        options = rules.options(c, sc)
        have = {t: bool(options.get(t)) for t in cfg.kinds}
        if "replace" in cfg.kinds:
            have |= {f"replace_{n}": any(r == n for r, _ in options.get("replace", ())) for n in RULES["replace"]}
        avail.append(have)
        out.append(rules.detailed(c, sc, rng, options=options))
    return out, avail


def generated_positives(generated: Mapping[str, Sequence[str | None]], n: int, rule: str,
                        rng: np.random.Generator) -> tuple[list[HardPositive | None], list[dict[str, bool]]]:
    """Sources ``llm`` / ``released``: one per caption from the per-type generations."""
    from ..text.hard_positives import choose_generated

    avail = [{t: generated[t][i] is not None for t in generated} for i in range(n)]
    return choose_generated(generated, n, rng, rule=rule), avail


def _docs(flat: list[str], wanted: Sequence[int], nlp, parsed) -> dict[int, Doc]:
    """Parses of the captions ``wanted`` (indices into ``flat``): the saved ones, or ``nlp`` on those only."""
    from ..text.nlp import load_spacy
    from ..text.parsed import parse_captions, read_parses

    if not wanted:
        return {}
    nlp = nlp if nlp is not None else load_spacy()
    if parsed is not None:
        docs = read_parses(parsed, nlp, flat)
        return {i: docs[i] for i in wanted}
    return dict(zip(wanted, parse_captions([flat[i] for i in wanted], nlp), strict=True))


def summarise(flat: Sequence[str], positives: Sequence[HardPositive | None], avail: Sequence[dict[str, bool]],
              negatives: Sequence[tuple[str, str] | None], collisions: Sequence[bool | None], cfg: HardPosConfig
              ) -> dict[str, float]:
    """The run's summary, MLflow-safe keys ``mine/hardpos/...`` (counts, and shares of all captions unless said)."""
    from ..text.hard_positives import swap_eligible

    n = len(flat)
    k = f"mine/{NAME}"
    both = [("swap" in a and a["swap"]) and ("replace" in a and a["replace"]) for a in avail]
    out: dict[str, float] = {
        f"{k}/n_captions": float(n),
        f"{k}/candidates/paper_swap_filter": float(sum(swap_eligible(c, cfg.max_words) for c in flat)),
    }
    for t in cfg.kinds:
        out[f"{k}/candidates/{t}"] = float(sum(a.get(t, False) for a in avail))
    for name in ("replace_synonym", "replace_converse"):
        if any(name in a for a in avail):
            out[f"{k}/candidates/{name}"] = float(sum(a.get(name, False) for a in avail))
    out[f"{k}/candidates/both"] = float(sum(both))
    out[f"{k}/candidates/none"] = float(sum(not any(a.get(t, False) for t in cfg.kinds) for a in avail))
    chosen = Counter(p.type for p in positives if p is not None)
    when_both = Counter(p.type for p, b in zip(positives, both, strict=True) if b and p is not None)
    rules = Counter(f"{p.type}_{p.rule}" for p in positives if p is not None)
    for t in cfg.kinds:
        out[f"{k}/chosen/{t}"] = float(chosen[t])
        out[f"{k}/chosen_when_both/{t}"] = float(when_both[t])
    for r, v in sorted(rules.items()):
        out[f"{k}/rule/{r}"] = float(v)
    have_pos = sum(p is not None for p in positives)
    have_neg = sum(x is not None for x in negatives)
    out[f"{k}/captions_with_positive"] = float(have_pos)
    out[f"{k}/captions_with_negative"] = float(have_neg)
    out[f"{k}/share_with_positive"] = have_pos / max(1, n)
    out[f"{k}/share_with_negative"] = have_neg / max(1, n)
    for cat, v in sorted(Counter(x[1] for x in negatives if x is not None).items()):
        out[f"{k}/negatives/{cat}"] = float(v)
    checked = [(p, c) for p, c in zip(positives, collisions, strict=True) if p is not None and c is not None]
    hits = sum(c for _, c in checked)
    out[f"{k}/negclip_collision/n_positives"] = float(len(checked))
    out[f"{k}/negclip_collision/n_collide"] = float(hits)
    out[f"{k}/negclip_collision/share"] = hits / max(1, len(checked))
    for t in cfg.kinds:
        of = [c for p, c in checked if p.type == t]
        out[f"{k}/negclip_collision/share_{t}"] = sum(of) / max(1, len(of))
    return out


def run(cfg: HardPosConfig, *, world, model, nlp, seed: int, out_dir, parsed=None) -> dict:
    """Write ``positives.json``, ``negatives.json``, ``negative_types.json`` and ``positive_types.json`` for every
    caption of ``cfg.split`` into ``out_dir``; return the summary (:func:`summarise`)."""
    from ..io import write_json
    from ..seeding import np_rng
    from ..text.hard_positives import LlmHardPositives, could_collide, negclip_collisions
    from ..world import Split
    from .tsvlc import relations_of_scenes, split_relations, word_lists

    out_dir = Path(out_dir)
    split = Split(world, cfg.split)
    captions = split.captions()
    flat = _flat(captions)
    has_scenes = not split.is_indexed and (split.dir / "scenes.jsonl").exists()
    for name, value in (("source", cfg.source), ("negatives_source", cfg.negatives_source)):
        if value == "scene" and not has_scenes:
            raise ValueError(f"{name}=scene: split {cfg.split!r} ({split.dir}) has no scene graphs (a real-profile "
                             f"split); use {'llm or released' if name == 'source' else 'rules'}")
    scenes = split.scenes() if has_scenes and "scene" in (cfg.source, cfg.negatives_source) else None
    per_caption = None if scenes is None else [s for s, caps in zip(scenes, captions, strict=True) for _ in caps]
    relations = relations_of_scenes(scenes) if scenes is not None else split_relations(split)

    pos_rng = np_rng(seed, NAME, "positives")
    released_check: dict[str, float] = {}
    if cfg.source == "scene":
        check_synonyms(flat, cfg.synonyms, cfg.split)
        positives, avail = scene_positives(cfg, flat, per_caption, relations, pos_rng)
    elif cfg.source == "llm":
        from ..text.analogy import load_causal_lm

        lm, tokenizer = load_causal_lm(cfg.model)
        gen = LlmHardPositives(lm, tokenizer, types=cfg.kinds, max_words=cfg.max_words,
                               max_new_tokens_swap=cfg.max_new_tokens_swap,
                               max_new_tokens_replace=cfg.max_new_tokens_replace, batch_size=cfg.batch_size,
                               replace_template=cfg.replace_template)
        positives, avail = generated_positives(gen.generations(flat), len(flat), "llm", pos_rng)
    else:
        from ..formats.coco_captions import read_annotation_order
        from ..text.hard_positives import clean_generation

        order = read_annotation_order(split.dir, captions)
        generated = {}
        for kind in cfg.kinds:
            param = f"{kind}_file"
            raw = read_released(getattr(cfg, param), len(flat), param=param, split=cfg.split, order=order)
            generated[kind] = [clean_generation(t, c) for t, c in zip(raw, flat, strict=True)]
            released_check |= released_alignment(kind, raw, flat)
        released_check["released/by_annotation_order"] = float(order is not None)
        positives, avail = generated_positives(generated, len(flat), "released", pos_rng)

    neg_rng = np_rng(seed, NAME, "negatives")
    negatives: list[tuple[str, str] | None]
    docs: dict[int, Doc] = {}
    if cfg.negatives_source == "scene":
        cats = crepe_categories(cfg.kinds)
        negatives = [crepe_negative(c, sc, neg_rng, categories=cats, relations=relations)
                     for c, sc in zip(flat, per_caption, strict=True)]
    else:
        docs = _docs(flat, range(len(flat)), nlp, parsed)
        lists = word_lists(cfg.word_lists, relations)
        negatives = [rule_negative(docs[i], neg_rng, types=cfg.kinds, lists=lists) for i in range(len(flat))]

    texts = [None if p is None else p.text for p in positives]
    wanted = [i for i, t in enumerate(texts) if t is not None and could_collide(flat[i], t) and i not in docs]
    docs |= _docs(flat, wanted, nlp, parsed)
    collisions = negclip_collisions(flat, texts, [docs.get(i) for i in range(len(flat))])

    write_json(out_dir / "positives.json", _reshape([[] if t is None else [t] for t in texts], captions))
    write_json(out_dir / POSITIVE_TYPES_FILE, _reshape([[] if p is None else [p.type] for p in positives], captions))
    write_json(out_dir / "negatives.json", _reshape([[] if x is None else [x[0]] for x in negatives], captions))
    write_json(out_dir / "negative_types.json", _reshape([[] if x is None else [x[1]] for x in negatives], captions))
    summary = summarise(flat, positives, avail, negatives, collisions, cfg)
    return summary | {f"mine/{NAME}/{k}": v for k, v in released_check.items()}


GENERATORS.add("hardpos", Generator(HardPosConfig, run, writes=("positives", "negatives", "negative_types"), reads="none"))
