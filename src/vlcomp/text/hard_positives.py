"""Hard positives for training (Kamath et al., "The Hard Positive Truth about Vision-Language Compositionality",
ECCV 2024; catalog ``hard_positives.md`` §3.1, §5 items 9-13): a second caption of an image made by a *minimal*
edit that keeps the meaning, of one of two types:

- ``swap``: the words around "and" in the other order ("three giraffes and two antelope" -> "two antelopes and
  three giraffes"); only for captions that contain the word "and" and have fewer than ``max_words`` (15) words;
- ``replace``: one word replaced with a synonym ("a field that ha a bunch of sheep" -> "a meadow that has ...").

Two implementations behind one per-caption interface (``positive(caption, scene, rng) -> (positive, type) |
None``, plus a batched call that equals one-at-a-time calls with the same generator):

- :class:`HardPositiveRules` (toy profile): exact rules on the toy world's captions, checked on the scene graph;
- :class:`LlmHardPositives` (paper profile): the authors' prompts on a causal LM (:data:`SWAP_TEMPLATE`,
  :data:`REPLACE_TEMPLATE`), greedy, batched with :class:`vlcomp.text.analogy.LlmAnalogies`' machinery.

Plus the diagnostic of the flaw the paper exploits (:func:`negclip_collisions`): NegCLIP's swap rules, which
make *negatives* by exchanging two phrases or tokens, can write a caption's hard positive ("a red circle and a
blue square" -> "a blue square and a red circle" is NegCLIP's ``np_swap`` negative and the paper's SWAP positive).

**The toy rules** (every output keeps the caption's meaning on the exact scene graph):

====================  =========================================================================================
``swap/reorder``      :func:`vlcomp.text.analogy.reorder_rule` (reused, not reimplemented): the conjuncts of an
                      "X and Y [and Z]" noun-phrase list (and the web styles' comma / attribute lists) in another
                      order, each object keeping its attributes
``replace/synonym``   one word or phrase of the caption replaced with a synonym of the world's synonym table
                      (``SYNONYM_SETS[synonyms]``, both directions: "square" -> "box" and "box" -> "square", "next
                      to" <-> "beside", "below" <-> "under" / "beneath"), matched on word boundaries; the occurrence
                      is drawn uniformly, then the replacement among the other words of its group
``replace/converse``  :func:`vlcomp.text.analogy.converse_rule` (reused): "<np A> <rel> <np B>" -> "<np B>
                      <converse(rel)> <np A>" when the scene graph holds both facts
====================  =========================================================================================

The paper's LLM replaces objects too (square -> box is a training positive); the converse is the toy stand-in for
its relation replacements ("behind" -> "to the rear of") that keep the meaning and change the relation word.

**The canonical view.** ``parse_toy_caption`` reads the first world's words: not the extended synonyms (box,
rhombus, violet, over, under, beneath, beside) nor the count prefix of the second world ("two shapes: ...").
So the rules that parse (reorder, converse) run on a *canonical view* of the caption: the count prefix is set
aside (it is true of the scene whatever follows) and every synonym is written as the word it stands for; the
output's noun phrases are then written back as the caption wrote them (a "violet box" stays a "violet box" when it
moves), and the prefix is put back. On the second world's ``coco_train`` this raises the share of captions the
parser reads from 72 % to 99.5 %. A converse writes the plain converse phrase ("beneath" -> "above").

AMBIGUOUS choices, and what is done here:

- *"fewer than 15 words"* (§3.1: the appendix also says "we filter out captions of greater than 15 words", which
  would keep 15-word captions): strict, ``n_words < max_words``, as the main text says. Words are whitespace
  tokens with at least one letter or digit (a Flickr-style " ." is not a word); "and" is matched as a whole word,
  in any case.
- *A caption with both types* (§3.1: the appendix subsamples one hard positive per caption and does not say how
  when both exist): the type is drawn uniformly (one draw, ``swap`` first in :data:`TYPES` order); the generator's
  summary counts how often each type was chosen among such captions.
- *Which replacement* when a caption allows both replace rules: the rule is drawn uniformly among those that
  apply (synonym first), then the rule's own draws. A draw order fixed caption by caption (type, rule, rule's
  draws) makes the batched call equal one-at-a-time calls.
- *Swap candidates the exact rules refuse*: a relation caption with an "and"-joined third object ("a heart
  beneath an arrow and a star": the star is only *with* the others in the toy world's semantics) passes the
  paper's filter, but no reorder keeps its meaning, so it gets no swap positive (the paper's LLM would swap
  "arrow" and "star" and change the meaning). The summary counts the paper's filter and the real candidates
  apart. Captions with a negated clause ("... and no star") are not parsed either (0.5 % of the second world's).
- ``types`` restricts the positives to one type for the paper's Swap-only / Replace-only rows (the generator
  restricts the negatives the same way).

**LLM prompts** (catalog §3.1; the released ``generate_hard_positives.py``): the released script's templates are
used verbatim, because they made the released files: the 5-shot SWAP prompt (each sentence on one line, a blank
line between shot pairs) and the zero-shot REPLACE template of the script, which differs slightly from the paper's
Appendix C text (:data:`PAPER_REPLACE_TEMPLATE`, selectable). As in the script the filled prompt is ``.strip()``-ed
(so it ends in "Output:" without the trailing space) and no chat template is applied. The caption is put in with
``str.replace`` (the script's ``str.format`` fails on a caption with braces). Deviations, documented: greedy
decoding (the script leaves Llama-2-chat's default sampling on, so its outputs are not reproducible); the
continuation is cut to its first non-empty line and stripped, and an empty continuation or one equal to the caption
(whitespace-normalised) is no positive (the script writes the raw generation, no filtering).
"""

from __future__ import annotations

import re
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..world.captions import SYNONYM_SETS
from ..world.concepts import ALL_RELATIONS, COUNT_WORDS, RELATIONS
from .analogy import (
    LlmAnalogies,
    ToyCaption,
    converse_rule,
    parse_toy_caption,
    reorder_rule,
)
from .perturb import _check_captions, _check_rng

if TYPE_CHECKING:
    from spacy.tokens import Doc

    from ..world.scene import Scene

TYPES: tuple[str, ...] = ("swap", "replace")
"""The paper's two hard-positive types, in the order of the uniform draw between them."""
RULES: dict[str, tuple[str, ...]] = {"swap": ("reorder",), "replace": ("synonym", "converse")}
"""The toy rules of each type, in the order of the uniform draw among those that apply."""
DEFAULT_MAX_WORDS = 15

SWAP_TEMPLATE = """Swap the words around the word "and" in a sentence without changing the meaning. Only respond with the changed sentence.

Input: three giraffes and two antelope
Output: two antelopes and three giraffes

Input: a blue and white stained glass clock shows the time
Output: a white and blue stained glass clock shows the time

Input: a mixture of rice and broccoli are put together
Output: a mixture of broccoli and rice are put together

Input: a bathroom with a sink, toilet and shower
Output: a bathroom with a sink, shower and toilet

Input: there is a man wearing glasses and holding a wine bottle
Output: there is a man holding a wine bottle and wearing glasses

Input: {example}
Output: """
"""The released script's ``SWAP_TEMPLATE`` (5-shot), verbatim."""

REPLACE_TEMPLATE = """Replace one word in the input sentence with a synonym, without changing the meaning of the sentence. Only output the changed sentence.
Input: {example}
Output: """
"""The released script's ``REPLACE_TEMPLATE`` (zero-shot), verbatim: the default."""

PAPER_REPLACE_TEMPLATE = """Replace one word in this sentence with a synonym, without changing the meaning of the sentence. Only output the changed sentence.

{example}"""
"""The paper's Appendix C REPLACE prompt (line breaks of the PDF extraction removed), for comparison."""

REPLACE_TEMPLATES: dict[str, str] = {"released": REPLACE_TEMPLATE, "paper": PAPER_REPLACE_TEMPLATE}

_AND = re.compile(r"\band\b", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z0-9]")
_COUNT_PREFIX = re.compile(r"^(?:" + "|".join(COUNT_WORDS) + r") shapes?: ", re.IGNORECASE)


# --------------------------------------------------------------------------------------------------------------
# Caption tests and the synonym table
# --------------------------------------------------------------------------------------------------------------


def n_words(caption: str) -> int:
    """Whitespace tokens with at least one letter or digit (a detached " ." is not a word)."""
    return sum(bool(_WORD.search(t)) for t in caption.split())


def has_and(caption: str) -> bool:
    """The caption contains the word "and" (whole word, any case)."""
    return _AND.search(caption) is not None


def swap_eligible(caption: str, max_words: int = DEFAULT_MAX_WORDS) -> bool:
    """The paper's SWAP filter: contains "and" and has fewer than ``max_words`` words (strict; see the module
    notes)."""
    return has_and(caption) and n_words(caption) < max_words


def split_count_prefix(caption: str) -> tuple[str, str]:
    """``("two shapes: ", rest)`` for a caption that starts by counting the objects
    (``world.captions.count_prob``), else ``("", caption)``."""
    m = _COUNT_PREFIX.match(caption)
    return (m.group(0), caption[m.end():]) if m else ("", caption)


def synonym_groups(synonyms: str) -> dict[str, tuple[str, ...]]:
    """Word or phrase -> its group (the table's word first, then its synonyms), for the table
    ``SYNONYM_SETS[synonyms]`` (``base``: large/big, small/little; ``extended``: shapes, colours, relations too)."""
    if synonyms not in SYNONYM_SETS:
        raise ValueError(f"synonyms={synonyms!r}: must be one of {sorted(SYNONYM_SETS)}")
    groups: dict[str, tuple[str, ...]] = {}
    for word, syns in SYNONYM_SETS[synonyms].items():
        for w in (word, *syns):
            groups[w] = (word, *syns)
    return groups


def _same_text(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


def word_pattern(words: Iterable[str]) -> re.Pattern[str]:
    """A case-insensitive pattern matching any of ``words`` (phrases too) on word boundaries, longest first."""
    alts = sorted(words, key=len, reverse=True)
    return re.compile(r"\b(" + "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in alts) + r")\b", re.IGNORECASE)


def _cased(word: str, like: str) -> str:
    return word[:1].upper() + word[1:] if like[:1].isupper() else word


# --------------------------------------------------------------------------------------------------------------
# The canonical view (for the parsing rules)
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _View:
    """A caption as ``parse_toy_caption`` can read it: ``prefix`` (a count prefix, set aside), ``canon`` (the
    parsed canonical text, synonyms written as the words they stand for), and the canonical / surface words of
    the body aligned one to one (``surface`` is "" for the second word of a two-word canonical phrase)."""

    prefix: str
    canon: ToyCaption
    words: tuple[str, ...]
    surface: tuple[str, ...]


def _core(word: str) -> str:
    return word.rstrip(",")


def _find(words: Sequence[str], target: Sequence[str], start: int) -> int | None:
    n = len(target)
    for k in range(start, len(words) - n + 1):
        if all(_core(words[k + j]) == target[j] for j in range(n)):
            return k
    return None


class _Canonical:
    """The canonical view of captions for one synonym table and relation inventory."""

    def __init__(self, synonyms: str, relations: tuple[str, ...]) -> None:
        self.to_word = {s: w for w, ss in SYNONYM_SETS[synonyms].items() for s in ss}
        self.pattern = word_pattern(self.to_word) if self.to_word else None
        self.relations = relations

    def view(self, caption: str) -> _View | None:
        prefix, body = split_count_prefix(caption)
        canon_text = body if self.pattern is None else self.pattern.sub(
            lambda m: _cased(self.to_word[" ".join(m.group(1).lower().split())], m.group(1)), body)
        canon = parse_toy_caption(canon_text, self.relations)
        if canon.parsed is None:
            return None
        surface: list[str] = []
        for tok in parse_toy_caption(body, self.relations).body.split():
            word = self.to_word.get(_core(tok))
            surface += [tok] + [""] * (len(word.split()) - 1 if word else 0)
        words = tuple(canon.body.split())
        if len(words) != len(surface):
            return None
        return _View(prefix, canon, words, tuple(surface))

    def restore(self, view: _View, out: str) -> str | None:
        """A rule's canonical output with every noun phrase (and list item) written as the caption wrote it, and
        the count prefix put back; None if the output does not parse back (never for the rules used)."""
        parsed_in, parsed_out = view.canon.parsed, parse_toy_caption(out, self.relations).parsed
        if parsed_out is None or type(parsed_out) is not type(parsed_in):
            return None
        surfaces, pos = [], 0
        for np_ in parsed_in.nps:
            target = np_.words()
            k = _find(view.words, target, pos)
            if k is None:
                return None
            body = [_core(view.surface[j]) for j in range(k + (np_.det is not None), k + len(target))]
            surfaces.append(replace(np_, attrs=tuple(body[:-1]), shape=body[-1]))
            pos = k + len(target)
        unused = list(range(len(parsed_in.nps)))
        nps = []
        for np_ in parsed_out.nps:
            i = next((i for i in unused if parsed_in.nps[i] == np_), None)
            if i is None:
                return None
            unused.remove(i)
            nps.append(surfaces[i])
        updates: dict[str, Any] = {"nps": tuple(nps)} if nps else {}
        queues: dict[str, deque[str]] = {}
        for w, s in zip(view.words, view.surface, strict=True):
            if _core(w) != _core(s) and s:
                queues.setdefault(_core(w), deque()).append(_core(s))
        for field in ("attrs", "items", "shapes"):  # the list fields of ListCaption / CommaCaption / ClipartCaption
            if field in type(parsed_out).__dataclass_fields__:
                items = getattr(parsed_out, field)
                updates[field] = tuple(queues[w].popleft() if queues.get(w) else w for w in items)
        return view.prefix + view.canon.render(replace(parsed_out, **updates))


# --------------------------------------------------------------------------------------------------------------
# The toy rules
# --------------------------------------------------------------------------------------------------------------

Draw = Callable[[np.random.Generator], "str | None"]
"""A rule that applies: a function drawing its output (None only when the output equals the caption)."""


@dataclass(frozen=True)
class HardPositive:
    """One hard positive: its text, its type (:data:`TYPES`) and the rule that made it (:data:`RULES`; ``llm``
    or ``released`` for the paper profile's)."""

    text: str
    type: str
    rule: str


def check_types(types: object, where: str = "types") -> tuple[str, ...]:
    """``types`` as a tuple in :data:`TYPES` order; an error naming ``where`` unless it is a non-empty list of
    known, distinct types."""
    if isinstance(types, str) or not isinstance(types, Sequence) or not types:
        raise ValueError(f"{where}={types!r}: must be a non-empty list of {list(TYPES)}")
    bad = [t for t in types if t not in TYPES]
    if bad or len(set(types)) != len(types):
        raise ValueError(f"{where}={list(types)!r}: must be distinct types of {list(TYPES)}")
    return tuple(t for t in TYPES if t in types)


def choose(options: Mapping[str, Sequence[tuple[str, Draw]]], rng: np.random.Generator) -> HardPositive | None:
    """The draw of one caption: ``options`` maps each type that applies to its rules that apply (in order). A type
    uniformly (no draw when only one applies), a rule of it uniformly, then the rule's own draws."""
    kinds = [t for t in TYPES if options.get(t)]
    if not kinds:
        return None
    kind = kinds[int(rng.integers(len(kinds)))] if len(kinds) > 1 else kinds[0]
    rules = options[kind]
    name, draw = rules[int(rng.integers(len(rules)))] if len(rules) > 1 else rules[0]
    out = draw(rng)
    return None if out is None else HardPositive(out, kind, name)


class HardPositiveRules:
    """The toy hard-positive rules (toy profile), exact on the scene graph; see the module notes.

    ``types``: the types to make (default both); ``max_words``: the SWAP filter's bound (strict); ``synonyms``:
    the world's synonym table (``world.captions.synonyms``: ``base`` or ``extended``); ``relations``: the
    relation inventory of the captions' world (``WorldConfig.relations`` or its phrases; default the first
    world's), what the parser reads."""

    def __init__(self, *, types: Sequence[str] = TYPES, max_words: int = DEFAULT_MAX_WORDS, synonyms: str = "base",
                 relations: Iterable[str] = RELATIONS) -> None:
        self.types = check_types(types)
        if isinstance(max_words, bool) or not isinstance(max_words, int) or max_words < 2:
            raise ValueError(f"max_words={max_words!r}: must be an int >= 2")
        self.max_words = max_words
        self.groups = synonym_groups(synonyms)
        self.synonyms = synonyms
        self.relations = tuple(relations)
        unknown = [p for p in self.relations if p not in ALL_RELATIONS]
        if unknown:
            raise ValueError(f"relations: unknown {unknown} (known: {', '.join(ALL_RELATIONS)})")
        self._pattern = word_pattern(self.groups)
        self._canonical = _Canonical(synonyms, self.relations)

    # ---- the rules: each returns a draw or None
    def synonym(self, caption: str) -> Draw | None:
        """One occurrence of a word of the synonym table (drawn) replaced with another word of its group (drawn)."""
        hits = list(self._pattern.finditer(caption))
        if not hits:
            return None

        def draw(rng: np.random.Generator) -> str:
            m = hits[int(rng.integers(len(hits)))] if len(hits) > 1 else hits[0]
            said = " ".join(m.group(1).lower().split())
            others = [w for w in self.groups[said] if w != said]
            w = others[int(rng.integers(len(others)))] if len(others) > 1 else others[0]
            return caption[:m.start()] + _cased(w, m.group(1)) + caption[m.end():]

        return draw

    def _parsed_rule(self, rule: Callable, view: _View | None, scene: Scene | None) -> Draw | None:
        if view is None:
            return None
        inner = rule(view.canon, scene)
        if inner is None:
            return None
        return lambda rng: self._canonical.restore(view, inner(rng))

    def options(self, caption: str, scene: Scene | None = None) -> dict[str, list[tuple[str, Draw]]]:
        """Type -> the rules that apply to the caption (no random number drawn)."""
        swap = "swap" in self.types and swap_eligible(caption, self.max_words)
        converse = "replace" in self.types and scene is not None
        view = self._canonical.view(caption) if swap or converse else None
        out: dict[str, list[tuple[str, Draw]]] = {}
        if swap and (d := self._parsed_rule(reorder_rule, view, None)) is not None:
            out["swap"] = [("reorder", d)]
        if "replace" in self.types:
            rules = [(n, d) for n, d in (("synonym", self.synonym(caption)),
                                         ("converse", self._parsed_rule(converse_rule, view, scene) if converse
                                          else None)) if d is not None]
            if rules:
                out["replace"] = rules
        return out

    def detailed(self, caption: str, scene: Scene | None, rng: np.random.Generator,
                 options: Mapping[str, Sequence[tuple[str, Draw]]] | None = None) -> HardPositive | None:
        """The hard positive of one caption with its rule, or None. ``options``: :meth:`options` of the caption,
        when already computed."""
        got = choose(self.options(caption, scene) if options is None else options, rng)
        if got is None or _same_text(got.text, caption):
            return None
        return got

    def positive(self, caption: str, scene: Scene | None, rng: np.random.Generator) -> tuple[str, str] | None:
        """``(hard positive, type)`` of one caption, or None. ``scene``: its image's scene graph (None: the converse
        cannot be checked and does not apply)."""
        got = self.detailed(caption, scene, rng)
        return None if got is None else (got.text, got.type)

    def batch(self, captions: Sequence[str], scenes: Sequence[Scene | None] | None,
              rng: np.random.Generator) -> list[HardPositive | None]:
        """:meth:`detailed` caption by caption (equal to one-at-a-time calls with the same generator)."""
        captions = _check_captions(captions, "HardPositiveRules")
        _check_rng(rng, "HardPositiveRules")
        if scenes is not None and len(scenes) != len(captions):
            raise ValueError(f"HardPositiveRules: {len(captions)} captions but {len(scenes)} scenes")
        return [self.detailed(c, None if scenes is None else scenes[i], rng) for i, c in enumerate(captions)]

    def __call__(self, captions: Sequence[str], scenes: Sequence[Scene | None] | None,
                 rng: np.random.Generator) -> list[tuple[str, str] | None]:
        return [None if p is None else (p.text, p.type) for p in self.batch(captions, scenes, rng)]


def hard_positive(caption: str, scene: Scene | None, rng: np.random.Generator, **kwargs: Any) -> tuple[str, str] | None:
    """``HardPositiveRules(**kwargs).positive(caption, scene, rng)``."""
    return HardPositiveRules(**kwargs).positive(caption, scene, rng)


def hard_positives(captions: Sequence[str], scenes: Sequence[Scene | None] | None, rng: np.random.Generator,
                   **kwargs: Any) -> list[tuple[str, str] | None]:
    """``HardPositiveRules(**kwargs)(captions, scenes, rng)``: one-at-a-time calls of :func:`hard_positive`."""
    return HardPositiveRules(**kwargs)(captions, scenes, rng)


# --------------------------------------------------------------------------------------------------------------
# Paper profile: the authors' prompts on a causal LM, or their released generations
# --------------------------------------------------------------------------------------------------------------


def fill_template(template: str, caption: str) -> str:
    """The released script's prompt: the template with the caption in, ``.strip()``-ed."""
    return template.replace("{example}", caption).strip()


def clean_generation(text: str | None, caption: str) -> str | None:
    """The first non-empty line of a generation, stripped; None when there is none, when it is the literal
    ``None`` (the released swap file's line for a caption without "and") or when it equals the caption."""
    if text is None:
        return None
    line = next((s.strip() for s in text.splitlines() if s.strip()), "")
    if not line or line == "None" or _same_text(line, caption):
        return None
    return line


class _PromptedLm(LlmAnalogies):
    """:class:`~vlcomp.text.analogy.LlmAnalogies`' batching and greedy decoding with another prompt."""

    def __init__(self, model: Any, tokenizer: Any, template: str, **kwargs: Any) -> None:
        super().__init__(model, tokenizer, **kwargs)
        self.template = template

    def prompt(self, caption: str) -> str:
        return fill_template(self.template, caption)


class LlmHardPositives:
    """Hard positives from a causal LM with the authors' prompts (paper profile): SWAP for the captions of the
    paper's filter (:func:`swap_eligible`), REPLACE for all, the two ``max_new_tokens`` of the paper (20 and 30),
    greedy, left-padded batches of ``batch_size``. A caption with both a SWAP and a REPLACE generation gets one,
    the type drawn uniformly (:func:`choose`); the scene is not used (the LLM sees text only)."""

    def __init__(self, model: Any, tokenizer: Any, *, types: Sequence[str] = TYPES, max_words: int = DEFAULT_MAX_WORDS,
                 max_new_tokens_swap: int = 20, max_new_tokens_replace: int = 30, batch_size: int = 8,
                 replace_template: str = "released") -> None:
        self.types = check_types(types)
        if isinstance(max_words, bool) or not isinstance(max_words, int) or max_words < 2:
            raise ValueError(f"max_words={max_words!r}: must be an int >= 2")
        if replace_template not in REPLACE_TEMPLATES:
            raise ValueError(f"replace_template={replace_template!r}: must be one of {sorted(REPLACE_TEMPLATES)}")
        self.max_words = max_words
        self.lms = {
            "swap": _PromptedLm(model, tokenizer, SWAP_TEMPLATE, max_new_tokens=max_new_tokens_swap,
                                batch_size=batch_size),
            "replace": _PromptedLm(model, tokenizer, REPLACE_TEMPLATES[replace_template],
                                   max_new_tokens=max_new_tokens_replace, batch_size=batch_size),
        }

    def generations(self, captions: Sequence[str]) -> dict[str, list[str | None]]:
        """Type -> the cleaned generation per caption (None: not prompted, or nothing usable)."""
        captions = _check_captions(captions, "LlmHardPositives")
        out: dict[str, list[str | None]] = {}
        for kind in self.types:
            todo = [i for i, c in enumerate(captions) if kind == "replace" or swap_eligible(c, self.max_words)]
            got: list[str | None] = [None] * len(captions)
            for i, text in zip(todo, self.lms[kind].continuations([captions[i] for i in todo]), strict=True):
                got[i] = clean_generation(text, captions[i])
            out[kind] = got
        return out

    def batch(self, captions: Sequence[str], rng: np.random.Generator) -> list[HardPositive | None]:
        _check_rng(rng, "LlmHardPositives")
        return choose_generated(self.generations(captions), len(captions), rng, rule="llm")


def choose_generated(generated: Mapping[str, Sequence[str | None]], n: int, rng: np.random.Generator, *,
                     rule: str) -> list[HardPositive | None]:
    """One hard positive per caption from per-type generations (None: none of that type), the type drawn
    uniformly when both exist (:func:`choose`), caption by caption."""
    for kind, got in generated.items():
        if kind not in TYPES or len(got) != n:
            raise ValueError(f"choose_generated: {kind!r} has {len(got)} generations for {n} captions")
    out = []
    for i in range(n):
        options = {k: [(rule, (lambda rng, t=g[i]: t))] for k, g in generated.items() if g[i] is not None}
        out.append(choose(options, rng))
    return out


# --------------------------------------------------------------------------------------------------------------
# The flaw: NegCLIP's swap rules can write a hard positive as a *negative*
# --------------------------------------------------------------------------------------------------------------

_WORDS = re.compile(r"[a-z0-9]+")


def word_key(text: str) -> tuple[str, ...]:
    """The lower-cased letter/digit words of a text: how a NegCLIP output and a positive are compared (NegCLIP's
    outputs are lower-cased or re-spaced token texts, "a circle , a square")."""
    return tuple(_WORDS.findall(text.lower()))


def could_collide(caption: str, positive: str) -> bool:
    """Whether a NegCLIP swap of ``caption`` can equal ``positive`` at all: every swap rule permutes the caption's
    tokens, so only a positive with the same multiset of words can be one (a synonym or a converse of a
    non-symmetric relation never is). Exact pruning before parsing."""
    a, b = word_key(caption), word_key(positive)
    return a != b and Counter(a) == Counter(b)


def negclip_swap_outputs(doc: Doc, *, swaps: Sequence[str] | None = None, max_negatives: int | None = None) -> set[str]:
    """Every negative NegCLIP's swap rules (:mod:`vlcomp.text.negclip_swaps`) *could* write for a parsed caption:
    each rule applied to every pair of its candidates, deterministically, the outputs :func:`check_same` drops
    left out. ``max_negatives`` (default NegCLIP's 5) is honoured exactly: a rule's outputs count only when some
    draw lets fewer than ``max_negatives`` earlier rules survive (a rule *must* survive when all its pairs do).

    Uses the private helpers ``_swap_phrases`` and ``_swap_tokens`` of :mod:`vlcomp.text.negclip_swaps` (with a
    two-candidate list, whose draw can only pick that pair) so the swaps are exactly the module's."""
    from .negclip_swaps import (
        DEFAULT_SWAPS,
        MAX_NEGATIVES,
        _swap_phrases,
        _swap_tokens,
        check_same,
        verb_phrase_spans,
    )

    swaps = DEFAULT_SWAPS if swaps is None else tuple(swaps)
    max_negatives = MAX_NEGATIVES if max_negatives is None else max_negatives
    dummy = np.random.default_rng(0)  # a pair of two candidates: the draw cannot change which

    def phrase_outputs(spans) -> list[str | None]:
        return [_swap_phrases(doc.text, [spans[i], spans[j]], dummy)
                for i in range(len(spans)) for j in range(i + 1, len(spans))]

    def token_outputs(keep) -> list[str | None]:
        idx = [t.i for t in doc if keep(t)]
        return [_swap_tokens(doc, lambda t, a=a, b=b: t.i in (a, b), dummy)
                for n, a in enumerate(idx) for b in idx[n + 1:]]

    token_rules = {"nn_swap": lambda t: t.tag_ == "NN", "nns_swap": lambda t: t.tag_ == "NNS",
                   "adv_swap": lambda t: t.pos_ == "ADV", "adj_swap": lambda t: t.pos_ == "ADJ",
                   "verb_swap": lambda t: t.pos_ == "VERB"}
    out: set[str] = set()
    must = 0  # earlier rules that survive whatever they draw
    for name in swaps:
        if name == "np_swap":
            if not doc.has_annotation("DEP"):
                raise ValueError(f"np_swap needs a dependency parse: {doc.text!r}")
            cands = phrase_outputs([c for c in doc.noun_chunks if len(c.text.split()) > 2])
        elif name == "vp_swap":
            cands = phrase_outputs(verb_phrase_spans(doc))
        elif name in token_rules:
            cands = token_outputs(token_rules[name])
        else:
            raise ValueError(f"unknown swap rule {name!r}")
        kept = [c for c in cands if c is not None and not check_same(doc.text, c)]
        if must < max_negatives:
            out.update(kept)
        if cands and len(kept) == len(cands):
            must += 1
    return out


def negclip_collides(positive: str, doc: Doc, **kwargs: Any) -> bool:
    """Whether NegCLIP's swap rules could write ``positive`` as a negative of the parsed caption (compared by
    :func:`word_key`)."""
    key = word_key(positive)
    return any(word_key(o) == key for o in negclip_swap_outputs(doc, **kwargs))


def negclip_collisions(captions: Sequence[str], positives: Sequence[str | None], docs: Sequence[Doc | None],
                       **kwargs: Any) -> list[bool | None]:
    """Per caption: None without a positive, else whether NegCLIP could write it as a negative. ``docs[i]`` may be
    None where :func:`could_collide` is False (no parse needed there)."""
    if not len(captions) == len(positives) == len(docs):
        raise ValueError(f"negclip_collisions: {len(captions)} captions, {len(positives)} positives, "
                         f"{len(docs)} docs")
    out: list[bool | None] = []
    for c, p, d in zip(captions, positives, docs, strict=True):
        if p is None:
            out.append(None)
        elif not could_collide(c, p):
            out.append(False)
        else:
            if d is None or d.text != c:
                raise ValueError(f"negclip_collisions: no parse of {c!r:.80}")
            out.append(negclip_collides(p, d, **kwargs))
    return out
