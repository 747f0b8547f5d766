"""pre_caption (ARO/BLIP caption cleaning) and the punkt-free word tokenizer."""

from __future__ import annotations

import nltk
import pytest

from vlcomp.text.nlp import load_spacy, word_tokenize
from vlcomp.text.preprocess import pre_caption


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # each of . ! " ( ) * # : ; ~ becomes a space, runs of spaces collapse, ends are stripped
        ('A man (in a hat) said: "Hello!"  ~ok~ ', "a man in a hat said hello ok"),
        ("Two #1 dogs; *very* cute.", "two 1 dogs very cute"),
        # commas, apostrophes, hyphens, question marks and slashes are kept
        ("A dog's toy-box, right? Yes/no", "a dog's toy-box, right? yes/no"),
        # a real Karpathy-test caption with inner periods and a trailing newline
        (
            "A building front at the corner of N. Astor and E. Division St.\n",
            "a building front at the corner of n astor and e division st",
        ),
        (
            "  A view of a city through a building corridor. . ",
            "a view of a city through a building corridor",
        ),
        ("", ""),
    ],
)
def test_pre_caption_concrete(raw: str, expected: str) -> None:
    assert pre_caption(raw) == expected


def test_pre_caption_quirks_kept_from_reference() -> None:
    # a single tab/newline between words is not a run of 2+ whitespace characters: kept as is
    assert pre_caption("a\tb") == "a\tb"
    assert pre_caption("a\nb") == "a\nb"
    # two whitespace characters of any kind collapse to one space
    assert pre_caption("a \tb") == "a b"


def test_pre_caption_truncates_to_max_words() -> None:
    words = [f"w{i}" for i in range(35)]
    assert pre_caption(" ".join(words)) == " ".join(words[:30])
    assert pre_caption("one two three four", max_words=3) == "one two three"
    assert pre_caption("one two three", max_words=3) == "one two three"


def test_pre_caption_is_idempotent() -> None:
    once = pre_caption('A (very) "big" dog!!  runs: fast ~ ')
    assert pre_caption(once) == once


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_pre_caption_rejects_bad_max_words(bad: object) -> None:
    with pytest.raises(ValueError, match="max_words"):
        pre_caption("a dog", max_words=bad)  # type: ignore[arg-type]


def test_pre_caption_rejects_non_str() -> None:
    with pytest.raises(ValueError, match="pre_caption"):
        pre_caption(["a dog"])  # type: ignore[arg-type]


def test_word_tokenize_matches_treebank_rules() -> None:
    assert word_tokenize("A man's dog, isn't it?") == ["A", "man", "'s", "dog", ",", "is", "n't", "it", "?"]
    assert word_tokenize("A cat on a mat.") == ["A", "cat", "on", "a", "mat", "."]
    assert word_tokenize("") == []


@pytest.mark.parametrize(
    "caption",
    ["A man's dog, isn't it?", "Two dogs (brown) play in the snow.", 'a cat "sleeping" on a sofa ', "x"],
)
def test_word_tokenize_equals_nltk_single_sentence(caption: str) -> None:
    # nltk.word_tokenize with preserve_line=True skips punkt and is exactly the single-sentence case
    assert word_tokenize(caption) == nltk.word_tokenize(caption, preserve_line=True)


def test_word_tokenize_documented_multi_sentence_divergence() -> None:
    # punkt would split "dog." into "dog", "."; without punkt only the final period is split off
    assert word_tokenize("A dog. It runs.") == ["A", "dog.", "It", "runs", "."]


def test_word_tokenize_rejects_non_str() -> None:
    with pytest.raises(ValueError, match="word_tokenize"):
        word_tokenize(None)  # type: ignore[arg-type]


def test_load_spacy_missing_pipeline_names_it() -> None:
    with pytest.raises(ValueError, match="no_such_pipeline_xyz.*not installed"):
        load_spacy("no_such_pipeline_xyz")


@pytest.mark.spacy
def test_load_spacy_is_cached_and_trimmed() -> None:
    nlp = load_spacy()
    assert load_spacy() is nlp
    assert {"tagger", "parser", "attribute_ruler"} <= set(nlp.pipe_names)
    assert "ner" not in nlp.pipe_names and "lemmatizer" not in nlp.pipe_names
    full = load_spacy(exclude=())
    assert full is not nlp and "ner" in full.pipe_names
