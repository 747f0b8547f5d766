"""TSVLC analogy positives (TSVLC Sec. 3.1.3; catalog ``tsvlc.md`` §3.5): a second caption of an image with
different wording and the same meaning ("a woman standing left to a sitting cat" <-> "a cat sitting to the right
of a standing woman"), used as the positive of the text-text / image-text similarity terms.

One interface, two implementations, so the ``tsvlc_analogy`` generator (stage ``mine@``) can call either by profile:

- :class:`AnalogyGenerator` (protocol): ``gen(captions, scenes) -> list[str | None]``, one entry per caption.
  ``None`` means "no positive for this caption"; the training side then uses the **original caption** as its
  positive, as the reference does (an image without a positive file gets its own caption).
- :class:`LlmAnalogies` (real profile): few-shot prompting of a causal LM with the reference's 4-shot prompt
  (:data:`PROMPT_TEMPLATE`, verbatim), greedy decoding, the continuation cut at the first ``'.'``.
- :class:`SceneParaphrases` (toy profile): scene-graph-exact paraphrases of the toy world's captions: the
  converse of a stated relation (checked against the scene graph), attributes moved into a relative clause,
  reordered conjuncts / comma lists, size synonyms. The rules are listed in :data:`RULES`.

**Provenance, to be labelled as such in reports.** The toy positives are exact by construction: each rule keeps
the caption's content words (shapes, colours, sizes modulo :data:`~vlcomp.world.concepts.SYNONYMS`, materials,
states), and a converse relation is emitted only when the scene graph holds it. The paper's positives are LLM
output and can be wrong (a changed relation, a dropped or invented object, a copy of a few-shot example); nothing
here checks them beyond the two reference rules (empty / unchanged -> no positive).

Reference behaviour and what is done here (catalog §3.5):

- *Which BLOOM* is **AMBIGUOUS**: the released positives were probably made with the full BLOOM-176B
  (``bloom_model.py`` streams it block by block, greedy argmax), while the prompt comes from a commented-out
  ``BloomGen`` class that loads ``bigscience/bloom-560m``. The real profile takes the model name from params and
  loads it with :func:`load_causal_lm` (offline, local files only).
- *Length*: the reference used ``max_length=150`` for the whole sequence (prompt included); here the budget is
  ``max_new_tokens`` for the continuation alone (40 by default; the 4-shot prompt alone is ~100 BLOOM tokens, so
  150 in total left ~50 for the answer).
- *Continuation*: the reference took the decoded text after the prompt; here the newly generated token ids are
  decoded on their own (``skip_special_tokens=True``), which is the same text without depending on the
  tokenizer round-tripping the prompt exactly. It is cut at the first ``'.'`` and stripped.
- *Failure*: the reference wrote ``'invalid'`` when generation failed; here an empty continuation, or one equal
  to the caption (whitespace-normalised), gives None. Errors of the model itself (out of memory, bad inputs) are
  raised, not turned into a missing positive.
- *Batching*: prompts are left-padded (decoder-only batched generation); greedy decoding with ``do_sample=False``
  is deterministic, and batched output equals one-at-a-time output (checked in the tests).
- *Caption cleaning* (LAION: letters only) is the caller's: the captions are prompted as given.
- How the positives enter the loss (direction, weighting) is the losses' concern, not this module's.

The toy rules (each a small function; those that apply to a caption are drawn uniformly with the injected
``numpy.random.Generator``, and exactly one is applied):

==================  ===========================================================================================
``converse``        "<np A> [is|sits|placed] <rel> <np B> ..." -> "<np B> ... <converse(rel)> <np A> ...", when
                    the relation has a converse and the scene graph holds both facts between the two objects
                    (named by shape: shapes are unique in a scene). "pointing at" has no converse.
``clause``          "a large red circle" -> "a circle that is red and large" (attribute order drawn); not for a
                    noun phrase directly followed by "and" (avoids "red and a square")
``reorder``         "X and Y [and Z]" noun-phrase lists, the comma lists and attribute lists of unbound web
                    captions, "clipart of X and Y in P and Q": one list, permuted to a different order
``synonym``         one size word swapped with its synonym (large <-> big, small <-> little)
==================  ===========================================================================================

No rule applies -> None. Every output uses only words of :func:`vlcomp.world.concepts.world_words` ("that",
"is", "and" included; version 2 for a support world's bars and relations), so the toy tokenizer knows them. Without
a scene for a caption, ``converse`` cannot be checked and does not apply. Random numbers are drawn caption by
caption (one draw for the rule when more than one applies, then the rule's own draws), so a batch call equals the
same calls one caption at a time.

The parser reads the relation phrases of the world the captions come from (``relations``: ``WorldConfig.relations``
or its phrases; default the first world's, :data:`~vlcomp.world.concepts.RELATIONS`), and the bar as a shape noun
only when that world has the support relations, so a first-world parse is exactly what it always was.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from ..world.concepts import (
    ALL_COLOURS,
    ALL_RELATIONS,
    BACKGROUNDS,
    MATERIALS,
    RELATIONS,
    SHAPES,
    SIZES,
    STATES,
    SUPPORT_RELATIONS,
    SUPPORT_SHAPES,
    SYNONYMS,
    WEB_ONLY_SHAPES,
)
from .perturb import _check_captions

if TYPE_CHECKING:
    from ..world.scene import Scene

PROMPT_TEMPLATE = (
    "a woman standing left to a sitting cat is semantic similar to a cat standing right to a woman. "
    "a baby crying to the right of a box is semantic similar to a box placed to the left of a crying baby. "
    "a man sitting to the right of a dog is semantic similar to a dog sitting to the left of a man. "
    "a blue boat is semantic similar to a boat that is blue. {caption} is semantic similar to "
)
"""The reference's 4-shot prompt (``BloomGen``, catalog §3.5), verbatim, trailing space included."""


@runtime_checkable
class AnalogyGenerator(Protocol):
    """``gen(captions, scenes)``: one positive per caption, or None (then the caption itself is the positive at
    training time, as in the reference). ``scenes``: the scene graph of each caption's image (toy profile), or
    None."""

    def __call__(self, captions: list[str], scenes: list | None = None) -> list[str | None]: ...


def _same_text(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


# --------------------------------------------------------------------------------------------------------------
# Real profile: LLM few-shot prompting
# --------------------------------------------------------------------------------------------------------------


def build_prompt(caption: str) -> str:
    """The reference prompt for one caption: :data:`PROMPT_TEMPLATE` with ``{caption}`` filled in."""
    return PROMPT_TEMPLATE.replace("{caption}", caption)


def cut_continuation(text: str, caption: str) -> str | None:
    """The reference's post-processing: the continuation up to the first ``'.'``, stripped; None (the
    reference's ``'invalid'``) when that is empty or equal to the caption."""
    out = text.split(".", 1)[0].strip()
    if not out or _same_text(out, caption):
        return None
    return out


def load_causal_lm(name_or_path: str | Path, *, dtype: Any = None) -> tuple[Any, Any]:
    """``(model, tokenizer)`` of a causal LM from a local directory or the local HF cache (never the network:
    ``local_files_only=True``), the model in eval mode. ``dtype``: e.g. ``torch.bfloat16`` (None: as saved).

    A model that is not available locally is a :class:`FileNotFoundError` naming it; one that does not load (not
    a causal LM, missing or mismatched weights, a broken tokenizer) a :class:`ValueError` naming it."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    name = str(name_or_path)
    if not name:
        raise ValueError("load_causal_lm: empty model name")
    looks_local = Path(name).is_absolute() or name.startswith((".", "~")) or Path(name).exists()
    if looks_local and not Path(name).expanduser().is_dir():
        raise FileNotFoundError(f"causal LM {name!r}: directory not found")
    kwargs: dict[str, Any] = {"local_files_only": True}
    if dtype is not None:
        kwargs["dtype"] = dtype
    try:
        tokenizer = AutoTokenizer.from_pretrained(name, local_files_only=True)
        model, info = AutoModelForCausalLM.from_pretrained(name, output_loading_info=True, **kwargs)
    except OSError as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise FileNotFoundError(
            f"causal LM {name!r}: not available locally (offline, local files only; save it with "
            f"save_pretrained or put it in the HF cache first): {first}") from None
    except Exception as e:  # noqa: BLE001 - ValueError / KeyError / safetensors errors for a bad directory
        first = str(e).splitlines()[0] if str(e) else ""
        raise ValueError(f"causal LM {name!r}: cannot load ({type(e).__name__}: {first})") from None
    bad = {"missing": list(info.get("missing_keys", ())),
           "mismatched": [str(m[0] if isinstance(m, tuple) else m) for m in info.get("mismatched_keys", ())]}
    if any(bad.values()):
        detail = "; ".join(f"{k} {v[:5]}" for k, v in bad.items() if v)
        raise ValueError(f"causal LM {name!r}: weights do not fit the model ({detail})")
    return model.eval(), tokenizer


class LlmAnalogies:
    """Analogy positives from a causal LM (real profile): the reference's 4-shot prompt, greedy decoding.

    ``model``: a transformers causal LM (``generate``); ``tokenizer``: its tokenizer (a pad token, or else an eos
    token used for padding). Prompts are left-padded in batches of ``batch_size``; at most ``max_new_tokens`` are
    generated per caption. The model is put in eval mode. ``scenes`` is ignored (an LLM sees text only)."""

    def __init__(self, model: Any, tokenizer: Any, *, max_new_tokens: int = 40, batch_size: int = 8) -> None:
        for name, v in (("max_new_tokens", max_new_tokens), ("batch_size", batch_size)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"LlmAnalogies: {name} must be a positive int, got {v!r}")
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        if pad is None:
            raise ValueError("LlmAnalogies: the tokenizer has neither a pad nor an eos token to pad with")
        self.model = model.eval() if hasattr(model, "eval") else model
        self.tokenizer = tokenizer
        self.max_new_tokens = max_new_tokens
        self.batch_size = batch_size
        self.pad_token_id = int(pad)

    def prompt(self, caption: str) -> str:
        return build_prompt(caption)

    def continuations(self, captions: list[str]) -> list[str]:
        """The decoded continuation of each caption's prompt, before :func:`cut_continuation`."""
        import torch

        captions = _check_captions(captions, "LlmAnalogies")
        out: list[str] = []
        for start in range(0, len(captions), self.batch_size):
            prompts = [self.prompt(c) for c in captions[start:start + self.batch_size]]
            ids = [list(x) for x in self.tokenizer(prompts)["input_ids"]]
            width = max(len(x) for x in ids)
            input_ids = torch.tensor([[self.pad_token_id] * (width - len(x)) + x for x in ids], dtype=torch.long)
            mask = torch.tensor([[0] * (width - len(x)) + [1] * len(x) for x in ids], dtype=torch.long)
            with torch.inference_mode():
                seqs = self.model.generate(input_ids=input_ids, attention_mask=mask, do_sample=False,
                                           num_beams=1, max_new_tokens=self.max_new_tokens,
                                           pad_token_id=self.pad_token_id)
            for row in seqs:
                out.append(self.tokenizer.decode(row[width:].tolist(), skip_special_tokens=True))
        return out

    def __call__(self, captions: list[str], scenes: list | None = None) -> list[str | None]:
        captions = _check_captions(captions, "LlmAnalogies")
        return [cut_continuation(t, c) for t, c in zip(self.continuations(captions), captions, strict=True)]


# --------------------------------------------------------------------------------------------------------------
# Toy profile: scene-graph-exact paraphrases
# --------------------------------------------------------------------------------------------------------------

_SHAPES = frozenset(SHAPES + WEB_ONLY_SHAPES)
_SIZE_WORDS = frozenset(list(SIZES) + [w for ws in SYNONYMS.values() for w in ws])
_ATTRS = frozenset(_SIZE_WORDS | set(ALL_COLOURS) | set(MATERIALS) | set(STATES))
_SYNONYM_GROUPS: dict[str, tuple[str, ...]] = {}
for _w, _ws in SYNONYMS.items():
    for _x in (_w, *_ws):
        _SYNONYM_GROUPS[_x] = (_w, *_ws)
_SYNONYM_RE = re.compile(r"\b(" + "|".join(sorted(_SYNONYM_GROUPS, key=len, reverse=True)) + r")\b")
RelTokens = tuple[tuple[tuple[str, ...], str], ...]


@lru_cache(maxsize=16)
def _vocabulary(phrases: tuple[str, ...]) -> tuple[RelTokens, frozenset[str]]:
    """``(relation tokens, longest first; shape nouns)`` of a world with the relation phrases ``phrases``: the bar
    is a shape only in a world with the support relations."""
    tokens = tuple(sorted(((tuple(p.split()), p) for p in phrases), key=lambda t: -len(t[0])))
    shapes = _SHAPES | frozenset(SUPPORT_SHAPES) if any(p in SUPPORT_RELATIONS for p in phrases) else _SHAPES
    return tokens, shapes


#: The first world's relation tokens, longest first.
_REL_TOKENS, _ = _vocabulary(tuple(RELATIONS))
_PREFIXES = (("there", "is"), ("we", "see"))
_VERBS = ("is", "sits", "placed")
_TAIL = re.compile(r"\s*\.\s*$")


@dataclass(frozen=True)
class NounPhrase:
    """``det`` ("a" for the indefinite article, a/an chosen on rendering; "the"; or None), attributes, shape.
    ``clause``: when set, the attributes are rendered as "<shape> that is <clause>" instead of before it."""

    det: str | None
    attrs: tuple[str, ...]
    shape: str
    clause: tuple[str, ...] | None = None

    def words(self) -> list[str]:
        if self.clause is None:
            body = [*self.attrs, self.shape]
        else:
            joined = (" and ".join(self.clause) if len(self.clause) <= 2
                      else ", ".join(self.clause[:-1]) + " and " + self.clause[-1])
            body = [self.shape, "that", "is", *joined.split()]
        if self.det is None:
            return body
        det = self.det if self.det == "the" else ("an" if body[0][0] in "aeiou" else "a")
        return [det, *body]


@dataclass(frozen=True)
class RelationCaption:
    """``[prefix] <np 0> [verb] <relation> <np 1> [on a <bg> background] [(with|and) <np 2>]``."""

    prefix: tuple[str, ...]
    verb: tuple[str, ...]
    relation: str
    background: tuple[str, ...]
    joiner: str | None
    nps: tuple[NounPhrase, ...]

    def words(self) -> list[str]:
        w = [*self.prefix, *self.nps[0].words(), *self.verb, *self.relation.split(), *self.nps[1].words(),
             *self.background]
        if self.joiner is not None:
            w += [self.joiner, *self.nps[2].words()]
        return w

    def followed_by_and(self, i: int) -> bool:
        return i == 1 and self.joiner == "and" and not self.background


@dataclass(frozen=True)
class ListCaption:
    """Noun phrases joined by "and" (one: a single noun phrase), optionally ", <attribute words>" after them
    (``attrs``, an unbound web caption)."""

    nps: tuple[NounPhrase, ...]
    attrs: tuple[str, ...] = ()

    def words(self) -> list[str]:
        w: list[str] = []
        for i, np_ in enumerate(self.nps):
            w += (["and"] if i else []) + np_.words()
        if self.attrs:
            w[-1] += ","
            w += list(self.attrs)
        return w

    def followed_by_and(self, i: int) -> bool:
        return i < len(self.nps) - 1


@dataclass(frozen=True)
class CommaCaption:
    """An unbound web caption "circle, square, blue, dotted" (shapes and attributes, no binding)."""

    items: tuple[str, ...]
    nps: tuple[NounPhrase, ...] = ()

    def words(self) -> list[str]:
        return [w + "," for w in self.items[:-1]] + [self.items[-1]]

    def followed_by_and(self, i: int) -> bool:
        return False


@dataclass(frozen=True)
class ClipartCaption:
    """An unbound web caption "clipart of <shape> and <shape> in <attr> and <attr>"."""

    shapes: tuple[str, ...]
    attrs: tuple[str, ...]
    nps: tuple[NounPhrase, ...] = ()

    def words(self) -> list[str]:
        return ["clipart", "of", *" and ".join(self.shapes).split(), "in", *" and ".join(self.attrs).split()]

    def followed_by_and(self, i: int) -> bool:
        return False


Parsed = RelationCaption | ListCaption | CommaCaption | ClipartCaption


@dataclass(frozen=True)
class ToyCaption:
    """A toy caption split into its case, its body (lower case, no final period) and final period."""

    text: str
    capital: bool
    body: str
    tail: str
    parsed: Parsed | None

    def render(self, parsed: Parsed) -> str:
        body = " ".join(parsed.words())
        if self.capital:
            body = body[:1].upper() + body[1:]
        return body + self.tail


def _parse_np(words: Sequence[str], i: int, shapes: frozenset[str] = _SHAPES) -> tuple[NounPhrase, int] | None:
    det = None
    if i < len(words) and words[i] in ("a", "an", "the"):
        det = "the" if words[i] == "the" else "a"
        i += 1
    j = i
    while j < len(words) and words[j] in _ATTRS:
        j += 1
    if j < len(words) and words[j] in shapes:
        return NounPhrase(det, tuple(words[i:j]), words[j]), j + 1
    return None


def _parse_np_list(words: Sequence[str], shapes: frozenset[str] = _SHAPES) -> tuple[NounPhrase, ...] | None:
    nps, i = [], 0
    while True:
        got = _parse_np(words, i, shapes)
        if got is None:
            return None
        nps.append(got[0])
        i = got[1]
        if i == len(words):
            return tuple(nps)
        if words[i] != "and":
            return None
        i += 1


def _parse_relation(words: Sequence[str], rel_tokens: RelTokens = _REL_TOKENS,
                    shapes: frozenset[str] = _SHAPES) -> RelationCaption | None:
    prefix: tuple[str, ...] = ()
    for p in _PREFIXES:
        if tuple(words[:len(p)]) == p:
            prefix = p
    got = _parse_np(words, len(prefix), shapes)
    if got is None:
        return None
    a, i = got
    verb: tuple[str, ...] = (words[i],) if i < len(words) and words[i] in _VERBS else ()
    i += len(verb)
    for toks, phrase in rel_tokens:
        if tuple(words[i:i + len(toks)]) == toks:
            relation, i = phrase, i + len(toks)
            break
    else:
        return None
    got = _parse_np(words, i, shapes)
    if got is None:
        return None
    b, i = got
    background: tuple[str, ...] = ()
    bg = tuple(words[i:i + 4])
    if len(bg) == 4 and bg[0] == "on" and bg[1] in ("a", "an") and bg[2] in BACKGROUNDS and bg[3] == "background":
        background, i = bg, i + 4
    joiner, nps = None, (a, b)
    if i < len(words) and words[i] in ("with", "and"):
        got = _parse_np(words, i + 1, shapes)
        if got is None or got[1] != len(words):
            return None
        joiner, nps, i = words[i], (a, b, got[0]), got[1]
    if i != len(words):
        return None
    return RelationCaption(prefix, verb, relation, background, joiner, nps)


def _parse_unbound(body: str, nouns: frozenset[str] = _SHAPES) -> Parsed | None:
    """The web split's unbound styles (see :func:`vlcomp.world.captions.web_caption`)."""
    if "," in body:
        head, _, rest = body.partition(", ")
        attrs = tuple(rest.split())
        nps = _parse_np_list(head.split(), nouns) if " " in head else None
        if nps is not None and attrs and all(w in _ATTRS for w in attrs) and "," not in rest:
            return ListCaption(nps, attrs)
        items = tuple(x.strip() for x in body.split(","))
        if all(x in nouns or x in _ATTRS for x in items):
            return CommaCaption(items)
        return None
    words = body.split()
    if words[:2] == ["clipart", "of"] and "in" in words:
        k = words.index("in")
        shapes, attrs = words[2:k], words[k + 1:]
        if (shapes and attrs and shapes[1::2] == ["and"] * (len(shapes) // 2)
                and attrs[1::2] == ["and"] * (len(attrs) // 2) and len(shapes) % 2 == len(attrs) % 2 == 1):
            shapes, attrs = shapes[::2], attrs[::2]
            if all(s in nouns for s in shapes) and all(a in _ATTRS for a in attrs):
                return ClipartCaption(tuple(shapes), tuple(attrs))
    return None


def parse_toy_caption(caption: str, relations: Iterable[str] = RELATIONS) -> ToyCaption:
    """Split and parse a toy caption (any of the world's styles); ``parsed`` is None when it does not fit.
    ``relations``: the relation phrases of the caption's world (a ``WorldConfig.relations`` mapping or its
    phrases; default the first world's)."""
    rel_tokens, shapes = _vocabulary(tuple(relations))
    tail_match = _TAIL.search(caption)
    tail = tail_match.group(0) if tail_match else ""
    body = caption[:len(caption) - len(tail)] if tail else caption
    capital = body[:1].isupper()
    body = body.strip().lower()
    parsed: Parsed | None = None
    if body:
        words = body.split()
        if "," in body or words[:1] == ["clipart"]:
            parsed = _parse_unbound(body, shapes)
        else:
            nps = _parse_np_list(words, shapes)
            parsed = ListCaption(nps) if nps is not None else _parse_relation(words, rel_tokens, shapes)
    toy = ToyCaption(caption, capital, body, tail, parsed)
    if parsed is not None and toy.render(parsed) != caption:  # not in the generator's exact form
        toy = replace(toy, parsed=None)
    return toy


Rule = Callable[[ToyCaption, "Scene | None"], "Callable[[np.random.Generator], str] | None"]
"""A rule: ``rule(caption, scene)`` is None when it does not apply, else a function drawing the paraphrase."""


def _shape_ids(scene: Scene) -> dict[str, int] | None:
    ids: dict[str, int] = {}
    for o in scene.objects:
        if o.shape in ids:
            return None  # shapes must be unique to name an object by its shape
        ids[o.shape] = o.id
    return ids


def converse_rule(cap: ToyCaption, scene: Scene | None) -> Callable[[np.random.Generator], str] | None:
    """"<np A> <rel> <np B>" -> "<np B> <converse(rel)> <np A>", when the scene graph holds both facts."""
    p = cap.parsed
    if not isinstance(p, RelationCaption) or scene is None:
        return None
    conv = ALL_RELATIONS[p.relation].converse
    ids = _shape_ids(scene)
    if conv is None or ids is None:
        return None
    a, b = (ids.get(n.shape) for n in p.nps[:2])
    if a is None or b is None or a == b:
        return None
    facts = set(scene.relations)
    if (a, p.relation, b) not in facts or (b, conv, a) not in facts:
        return None
    out = cap.render(replace(p, relation=conv, nps=(p.nps[1], p.nps[0], *p.nps[2:])))
    return lambda rng: out


def clause_rule(cap: ToyCaption, scene: Scene | None) -> Callable[[np.random.Generator], str] | None:
    """"a large red circle" -> "a circle that is red and large" (one noun phrase with attributes, drawn; its
    attribute order drawn); not for a noun phrase followed by "and"."""
    p = cap.parsed
    if p is None:
        return None
    eligible = [i for i, n in enumerate(p.nps) if n.attrs and not p.followed_by_and(i)]
    if not eligible:
        return None

    def draw(rng: np.random.Generator) -> str:
        i = eligible[int(rng.integers(len(eligible)))] if len(eligible) > 1 else eligible[0]
        n = p.nps[i]
        order = [n.attrs[k] for k in rng.permutation(len(n.attrs))] if len(n.attrs) > 1 else list(n.attrs)
        nps = list(p.nps)
        nps[i] = replace(n, attrs=(), clause=tuple(order))
        return cap.render(replace(p, nps=tuple(nps)))

    return draw


def _lists(p: Parsed) -> list[tuple[str, tuple]]:
    """The reorderable lists of a parse: (field name, items)."""
    if isinstance(p, ListCaption):
        return [("nps", p.nps), ("attrs", p.attrs)]
    if isinstance(p, CommaCaption):
        return [("items", p.items)]
    if isinstance(p, ClipartCaption):
        return [("shapes", p.shapes), ("attrs", p.attrs)]
    return []


def _shuffle_differently(items: tuple, rng: np.random.Generator) -> tuple:
    """A uniformly drawn arrangement of ``items`` different from the given one (needs two distinct items)."""
    while True:
        new = tuple(items[k] for k in rng.permutation(len(items)))
        if new != items:
            return new


def reorder_rule(cap: ToyCaption, scene: Scene | None) -> Callable[[np.random.Generator], str] | None:
    """Conjuncts "X and Y [and Z]" / comma lists / attribute lists: one list (drawn) in a different order."""
    p = cap.parsed
    if p is None:
        return None
    lists = [(f, items) for f, items in _lists(p) if len(set(items)) > 1]
    if not lists:
        return None

    def draw(rng: np.random.Generator) -> str:
        f, items = lists[int(rng.integers(len(lists)))] if len(lists) > 1 else lists[0]
        return cap.render(replace(p, **{f: _shuffle_differently(items, rng)}))

    return draw


def synonym_rule(cap: ToyCaption, scene: Scene | None) -> Callable[[np.random.Generator], str] | None:
    """One size word (drawn) swapped with a synonym (drawn): large <-> big, small <-> little."""
    hits = list(_SYNONYM_RE.finditer(cap.text))
    if not hits:
        return None

    def draw(rng: np.random.Generator) -> str:
        m = hits[int(rng.integers(len(hits)))] if len(hits) > 1 else hits[0]
        others = [w for w in _SYNONYM_GROUPS[m.group(1)] if w != m.group(1)]
        w = others[int(rng.integers(len(others)))] if len(others) > 1 else others[0]
        return cap.text[:m.start()] + w + cap.text[m.end():]

    return draw


RULES: dict[str, Rule] = {
    "converse": converse_rule,
    "clause": clause_rule,
    "reorder": reorder_rule,
    "synonym": synonym_rule,
}
"""The toy paraphrase rules, in the order used for the uniform draw among those that apply."""


class SceneParaphrases:
    """Scene-graph-exact paraphrases of toy captions (toy profile), behind :class:`AnalogyGenerator`.

    ``rng``: a seed or a ``numpy.random.Generator`` (one stream, consumed caption by caption: calling the same
    instance again continues the stream). ``rules``: names of :data:`RULES` to use (default: all).
    ``relations``: the relation inventory of the captions' world (``WorldConfig.relations`` or its phrases; default
    the first world's), what :func:`parse_toy_caption` reads."""

    def __init__(self, rng: int | np.random.Generator, *, rules: Sequence[str] | None = None,
                 relations: Iterable[str] = RELATIONS) -> None:
        if isinstance(rng, np.random.Generator):
            self.rng = rng
        elif isinstance(rng, int | np.integer) and not isinstance(rng, bool):
            self.rng = np.random.default_rng(int(rng))
        else:
            raise ValueError(f"SceneParaphrases: rng must be a seed or a numpy.random.Generator, got {rng!r}")
        names = list(RULES) if rules is None else list(rules)
        unknown = [r for r in names if r not in RULES]
        if unknown or not names:
            raise ValueError(f"SceneParaphrases: unknown rules {unknown} (known: {', '.join(RULES)})")
        self.rules = {r: RULES[r] for r in RULES if r in names}
        self.relations = tuple(relations)
        unknown = [p for p in self.relations if p not in ALL_RELATIONS]
        if unknown:
            raise ValueError(f"SceneParaphrases: unknown relations {unknown} (known: {', '.join(ALL_RELATIONS)})")

    def paraphrase(self, caption: str, scene: Scene | None = None) -> tuple[str, str] | None:
        """``(paraphrase, rule name)`` for one caption, or None when no rule applies."""
        cap = parse_toy_caption(caption, self.relations)
        options = [(name, d) for name, rule in self.rules.items() if (d := rule(cap, scene)) is not None]
        if not options:
            return None
        name, draw = options[int(self.rng.integers(len(options)))] if len(options) > 1 else options[0]
        out = draw(self.rng)
        if _same_text(out, caption):  # every rule changes the text; kept as a guard
            return None
        return out, name

    def __call__(self, captions: list[str], scenes: list | None = None) -> list[str | None]:
        captions = _check_captions(captions, "SceneParaphrases")
        if scenes is not None and len(scenes) != len(captions):
            raise ValueError(f"SceneParaphrases: {len(captions)} captions but {len(scenes)} scenes")
        out: list[str | None] = []
        for i, c in enumerate(captions):
            got = self.paraphrase(c, None if scenes is None else scenes[i])
            out.append(None if got is None else got[0])
        return out
