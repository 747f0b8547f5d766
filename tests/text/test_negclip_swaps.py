"""NegCLIP swap negatives: paper examples, check_same, determinism, batch/naive parity, real captions."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from vlcomp.text.negclip_swaps import (
    DEFAULT_SWAPS,
    SWAP_RULES,
    TSV_SWAPS,
    check_same,
    mine_negatives,
    negatives_for_doc,
    nn_swap,
    np_swap,
    verb_phrases,
    vp_swap,
)
from vlcomp.text.nlp import load_spacy

REAL_CAPTIONS = (
    Path(__file__).resolve().parents[2].parent / "shared" / "real_samples" / "coco_karpathy_test.json"
)

HORSE = "The horse is eating the grass and the zebra is drinking the water"
CAT = "A black cat sitting on a desk"


@pytest.mark.parametrize(
    ("original", "candidate", "same"),
    [
        ("A cat sits on a mat.", "A cat sits on a mat .", True),  # token-joined period
        ("A cat, a dog.", "A cat , a dog", True),
        ("A  cat sits ", " A cat sits", True),  # whitespace runs and ends
        ("A cat sits.", "a cat sits.", False),  # case-sensitive, as in ARO's valid_neg_clip.tsv
        ("A cat sits on a mat.", "A mat sits on a cat .", False),
        ("A cat's toy", "A cat 's toy", False),  # only "." and "," are removed
    ],
)
def test_check_same(original: str, candidate: str, same: bool) -> None:
    assert check_same(original, candidate) is same


def test_registry_names() -> None:
    assert list(SWAP_RULES) == ["np_swap", "vp_swap", "nn_swap", "nns_swap", "adv_swap", "adj_swap"]
    assert DEFAULT_SWAPS == tuple(SWAP_RULES)


def test_argument_errors() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="swap_nonsense"):
        mine_negatives(["a cat"], rng, docs=[], swaps=["np_swap", "swap_nonsense"])
    with pytest.raises(ValueError, match="numpy.random.Generator"):
        mine_negatives(["a cat"], 0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"captions\[0\]"):
        mine_negatives([None], rng)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="max_negatives"):
        mine_negatives(["a cat"], rng, max_negatives=0)


@pytest.fixture(scope="module")
def nlp():
    return load_spacy()


@pytest.mark.spacy
def test_paper_horse_zebra_example(nlp) -> None:
    vp_neg = "the horse is drinking the grass and the zebra is eating the water"
    nn_neg = "The zebra is eating the grass and the horse is drinking the water"
    assert verb_phrases(nlp(HORSE)) == ["is eating", "is drinking"]
    seen_noun_swap = 0
    for seed in range(60):
        negs = mine_negatives([HORSE], np.random.default_rng(seed), nlp)[0]
        # exactly two verb phrases, so the verb-phrase swap is always the paper's (lowercased)
        assert vp_neg in negs
        # the NN swap exchanges two of horse/grass/zebra/water and leaves every other token in place
        token_swaps = [n for n in negs if n != vp_neg]
        assert len(token_swaps) == 1
        diff = [(a, b) for a, b in zip(HORSE.split(), token_swaps[0].split(), strict=True) if a != b]
        assert len(diff) == 2 and diff[0] == diff[1][::-1]
        assert {a for a, _ in diff} <= {"horse", "grass", "zebra", "water"}
        seen_noun_swap += nn_neg in negs
    assert 0 < seen_noun_swap < 60  # a random pair (1 in 6), not always the first two


@pytest.mark.spacy
def test_paper_black_cat_example(nlp) -> None:
    for seed in range(10):
        assert mine_negatives([CAT], np.random.default_rng(seed), nlp) == [["A black desk sitting on a cat"]]


@pytest.mark.spacy
def test_noun_phrase_swap_keeps_spacing_and_lowercases(nlp) -> None:
    # row 2 of ARO's temp_data/valid_neg_clip.tsv: only two noun chunks have more than 2 words
    doc = nlp("A little girl holding a kitten next to a blue fence.")
    for seed in range(5):
        assert (
            np_swap(doc, np.random.default_rng(seed))
            == "a blue fence holding a kitten next to a little girl."
        )
    # row 35: the double space of the caption is kept by the string-level swap
    doc = nlp("A street sign that reads broadway on  a traffic light.")
    assert np_swap(doc, np.random.default_rng(0)) == "a traffic light that reads broadway on  a street sign."
    assert np_swap(nlp(CAT), np.random.default_rng(0)) is None  # "a desk" has 2 words only


@pytest.mark.spacy
def test_tsv_variant_reproduces_valid_tsv_verb_swap(nlp) -> None:
    caption = (
        "Two cows overlooking a mountain range and one is looking in the opposite direction of the other one."
    )
    negs = mine_negatives([caption], np.random.default_rng(0), nlp, swaps=TSV_SWAPS)[0]
    # row 49 of valid_neg_clip.tsv
    assert (
        "Two cows looking a mountain range and one is overlooking in the opposite direction of the other one ."
        in negs
    )
    # the default (gist) verb-phrase swap moves the whole "is looking" span instead
    assert vp_swap(nlp(caption), np.random.default_rng(0)) == (
        "two cows is looking a mountain range and one overlooking in the opposite direction of the other one."
    )


@pytest.mark.spacy
def test_check_same_rejects_identical_swaps(nlp) -> None:
    doc = nlp("A man and a man.")
    assert nn_swap(doc, np.random.default_rng(0)) == "A man and a man ."  # swapping equal tokens
    assert negatives_for_doc(doc, np.random.default_rng(0), swaps=["nn_swap"]) == []
    assert mine_negatives(["A man and a man.", "", "Pizza"], np.random.default_rng(0), nlp) == [[], [], []]


@pytest.mark.spacy
def test_a_swap_rule_without_candidates_draws_nothing(nlp) -> None:
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    assert nn_swap(nlp("A dog runs."), rng) is None
    assert rng.bit_generator.state == state


@pytest.mark.spacy
def test_max_negatives_keeps_swap_order(nlp) -> None:
    caption = "A small white dog quickly chases a big black cat slowly across the green grass"
    all_negs = mine_negatives([caption], np.random.default_rng(1), nlp, max_negatives=5)[0]
    assert 2 <= len(all_negs) <= 5
    assert mine_negatives([caption], np.random.default_rng(1), nlp, max_negatives=1)[0] == all_negs[:1]


CAPTIONS = [
    HORSE,
    CAT,
    "A gray chair and a black chair sit in a room near a lamp.",
    "Large elephant rubbing itself up against a large tree. ",
    "Two people are slowly walking and happily talking on a very long beach.",
    "A man riding a wave on top of a surfboard.",
    "Pizza",
    "",
]


@pytest.mark.spacy
def test_deterministic_per_seed(nlp) -> None:
    a = mine_negatives(CAPTIONS, np.random.default_rng(5), nlp)
    assert a == mine_negatives(CAPTIONS, np.random.default_rng(5), nlp)
    assert a != mine_negatives(CAPTIONS, np.random.default_rng(6), nlp)


@pytest.mark.spacy
def test_batch_equals_naive_loop(nlp) -> None:
    full = load_spacy(exclude=())  # the gist parses with the full pipeline, one caption at a time
    for swaps in (DEFAULT_SWAPS, TSV_SWAPS):
        rng = np.random.default_rng(42)
        naive = [negatives_for_doc(full(c), rng, swaps=swaps) for c in CAPTIONS]
        batched = mine_negatives(
            CAPTIONS, np.random.default_rng(42), nlp, swaps=swaps, batch_size=3
        )
        assert batched == naive
    docs = list(nlp.pipe(CAPTIONS))
    assert mine_negatives(CAPTIONS, np.random.default_rng(42), docs=docs) == mine_negatives(
        CAPTIONS, np.random.default_rng(42), nlp
    )
    with pytest.raises(ValueError, match="docs given"):
        mine_negatives(CAPTIONS, np.random.default_rng(0), docs=docs[:2])
    with pytest.raises(ValueError, match=r"docs\[0\]"):
        mine_negatives(CAPTIONS, np.random.default_rng(0), docs=docs[::-1])


@pytest.mark.spacy
@pytest.mark.realdata
def test_miner_on_real_captions(nlp) -> None:
    if not REAL_CAPTIONS.exists():
        pytest.skip(f"real COCO captions not found at {REAL_CAPTIONS}")
    records = json.loads(REAL_CAPTIONS.read_text())
    captions = [c for r in records for c in r["caption"]][:200]
    negs = mine_negatives(captions, np.random.default_rng(0), nlp)
    assert len(negs) == 200
    for caption, n in zip(captions, negs, strict=True):
        assert len(n) <= 5
        assert not any(check_same(caption, x) for x in n)
        for x in n:  # every negative is a rearrangement: same characters once case and spaces are ignored
            assert Counter(x.lower().replace(" ", "")) == Counter(caption.lower().replace(" ", ""))
    kept = sum(bool(n) for n in negs)
    assert kept >= 150, kept  # most COCO captions have two nouns to swap
    assert sum(len(n) for n in negs) / kept > 1.2


# ------------------------------------------------------------------ defects of the gist's placeholder swap, fixed


class _Span:
    """The three attributes of a spaCy Span that the phrase swap reads."""

    def __init__(self, text: str, phrase: str, occurrence: int = 0) -> None:
        start = -1
        for _ in range(occurrence + 1):
            start = text.index(phrase, start + 1)
        self.text, self.start_char, self.end_char = phrase, start, start + len(phrase)


def test_phrase_swap_exchanges_the_spans_not_every_occurrence() -> None:
    from vlcomp.text.negclip_swaps import _swap_phrases

    text = "Customers sit at a table while a waiter is sitting nearby"
    spans = [_Span(text, "Customers sit"), _Span(text, "sitting")]
    # the gist's str.replace also hit the "sit" inside "sitting": "...is customers sitting..." -> "sittingting"
    assert _swap_phrases(text, spans, np.random.default_rng(0)) == \
        "sitting at a table while a waiter is customers sit nearby"
    text = "A truck filled with hay and a man's flatbed"
    spans = [_Span(text, "filled"), _Span(text, "'s flatbed")]
    assert _swap_phrases(text, spans, np.random.default_rng(0)) == "a truck 's flatbed with hay and a manfilled"


def test_phrase_swap_of_equal_texts_is_no_candidate() -> None:
    from vlcomp.text.negclip_swaps import _swap_phrases

    text = "A big red dog chases a big red dog."
    spans = [_Span(text, "A big red dog"), _Span(text, "a big red dog")]
    assert _swap_phrases(text, spans, np.random.default_rng(0)) is None  # was the caption itself, lowercased


@pytest.mark.spacy
def test_equal_noun_phrases_give_no_negative(nlp) -> None:
    doc = nlp("A big red dog chases a big red dog.")
    assert np_swap(doc, np.random.default_rng(0)) is None
    assert negatives_for_doc(doc, np.random.default_rng(0), swaps=["np_swap"]) == []


@pytest.mark.spacy
def test_phrase_swaps_keep_every_character_on_real_captions(nlp) -> None:
    """A span swap only moves text: the negative has the lowercased caption's characters, exactly."""
    if not REAL_CAPTIONS.exists():
        pytest.skip(f"{REAL_CAPTIONS} not present")
    records = json.loads(REAL_CAPTIONS.read_text())
    captions = [c for r in records[:150] for c in (r["caption"] if isinstance(r["caption"], list) else [r["caption"]])]
    checked = 0
    for doc in nlp.pipe(captions):
        for gen in (np_swap, vp_swap):
            out = gen(doc, np.random.default_rng(0))
            if out is not None:
                assert Counter(out) == Counter(doc.text.lower()), (doc.text, out)
                checked += 1
    assert checked > 50


@pytest.mark.spacy
def test_the_miner_honours_max_negatives_above_five(nlp) -> None:
    from vlcomp.generators.negclip import mine_captions

    caption = "The old man slowly walks the big brown dog while two young girls quickly ride their red bikes past the tall trees"
    six = mine_negatives([caption], np.random.default_rng(1), nlp, max_negatives=6)[0]
    assert len(six) == 6  # every one of the 6 swap rules has candidates here
    assert mine_captions([[caption]], nlp, np.random.default_rng(1), max_negatives=6) == [[six]]
    assert mine_captions([[caption]], nlp, np.random.default_rng(1), max_negatives=5) == [[six[:5]]]
