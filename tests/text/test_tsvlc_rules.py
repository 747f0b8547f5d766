"""TSVLC rule-based negatives: list transcription, whole-token matching, one-span replacement, determinism."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from vlcomp.text.tsvlc_rules import (
    PAPER_WORD_LISTS,
    Span,
    find_spans,
    rb_negatives,
    rb_negatives_batch,
    toy_word_lists,
)
from vlcomp.world.concepts import ALL_COLOURS, MATERIALS, RELATIONS, STATES

PAPER = PAPER_WORD_LISTS


def _diff(a: str, b: str) -> list[tuple[int, str, str]]:
    """Token positions where two same-length captions differ."""
    ta, tb = a.split(), b.split()
    assert len(ta) == len(tb), (a, b)
    return [(i, x, y) for i, (x, y) in enumerate(zip(ta, tb, strict=True)) if x != y]


# --- word lists ------------------------------------------------------------------------------------------


def test_paper_list_counts():
    counts = {t: len(ws) for t, ws in PAPER.items()}
    # state: 48 parsed entries in the reference, one of them the merged "stainedgood"; "stained" is already a
    # separate entry, so the fix replaces "stainedgood" by "good" and the count stays 48.
    assert counts == {"color": 34, "material": 71, "size": 104, "state": 48, "action": 47}
    assert list(PAPER) == ["color", "material", "size", "state", "action"]
    for t, ws in PAPER.items():
        assert len(set(ws)) == len(ws), t  # no duplicates
        assert all(w == w.strip() and w == w.lower() for w in ws), t


def test_paper_list_bug_fixes():
    assert "bamboo" in PAPER["material"] and "bamboo " not in PAPER["material"]
    assert PAPER["material"].index("bamboo") == 7  # in place, between "plastic" and "stone"
    assert "stainedgood" not in PAPER["state"]
    assert PAPER["state"].count("stained") == 1
    assert PAPER["state"][PAPER["state"].index("fresh") + 1] == "good"


def test_paper_list_spot_checks():
    assert PAPER["color"][:3] == ("teal", "brown", "green") and PAPER["color"][-1] == "amber"
    assert PAPER["size"][:2] == ("long", "old") and PAPER["size"][-1] == "vast"
    assert PAPER["state"][0] == "tinted" and PAPER["state"][-1] == "able"
    assert PAPER["action"][0] == "above" and PAPER["action"][-1] == "with"
    multi = {w for ws in PAPER.values() for w in ws if " " in w}
    assert {"in front of", "attached to", "carbon dioxide", "man-made fibers", "on back of"} <= multi
    assert sum(" " in w for w in PAPER["action"]) == 20  # the catalog's count of multi-word action entries


def test_toy_lists():
    toy = toy_word_lists()
    assert list(toy) == ["color", "material", "size", "state", "action"]
    assert set(ALL_COLOURS) == set(toy["color"]) and {"pink", "brown"} <= set(toy["color"])
    assert toy["material"] == MATERIALS
    assert toy["state"] == STATES
    assert toy["size"] == ("small", "large", "big", "little")
    assert toy["action"] == tuple(RELATIONS)
    assert "to the left of" in toy["action"] and "pointing at" in toy["action"]
    assert toy_word_lists() == toy  # deterministic


# --- matching --------------------------------------------------------------------------------------------


def test_whole_tokens_only():
    # "tan" is a substring of "standing", "red" of "covered": the reference's type test would see both
    assert find_spans("a man standing", PAPER) == []
    assert [s.type for s in find_spans("a car covered in snow", PAPER)] == ["action"]  # "covered in"
    assert find_spans("a car covered in snow", PAPER)[0] == Span("action", 2, 4, "covered in")
    assert rb_negatives("a man standing", PAPER, np.random.default_rng(0)) == []


def test_longest_entry_wins():
    spans = find_spans("a man standing in front of a car", PAPER)
    assert spans == [Span("action", 3, 6, "in front of")]


def test_multiword_needs_no_inner_punctuation():
    assert Span("action", 3, 6, "in front of") not in find_spans("a man standing in front, of a car", PAPER)
    # the words are still matched one by one
    assert [s.entry for s in find_spans("a man standing in front, of a car", PAPER)] == ["in", "of"]


def test_case_and_punctuation():
    assert find_spans("A Red car.", PAPER) == [Span("color", 1, 2, "red")]
    assert find_spans("(red), blue!", PAPER) == [Span("color", 0, 1, "red"), Span("color", 1, 2, "blue")]


def test_word_in_two_lists_gives_a_span_of_each_type():
    spans = find_spans("a white car", PAPER)
    assert spans == [Span("color", 1, 2, "white"), Span("state", 1, 2, "white")]


# --- generation ------------------------------------------------------------------------------------------


def test_punctuation_kept():
    lists = {"color": ("red", "blue")}
    rng = np.random.default_rng(0)
    assert rb_negatives("a red car.", lists, rng) == [("a blue car.", "color")]
    assert rb_negatives("a car, red.", lists, rng) == [("a car, blue.", "color")]
    assert rb_negatives('a "red" car', lists, rng) == [('a "blue" car', "color")]


def test_capitalisation():
    lists = {"color": ("red", "blue")}
    rng = np.random.default_rng(0)
    assert rb_negatives("Red car.", lists, rng) == [("Blue car.", "color")]  # sentence start
    assert rb_negatives("A car. Red bus.", lists, rng) == [("A car. Blue bus.", "color")]
    assert rb_negatives("The car is Red", lists, rng) == [("The car is blue", "color")]  # mid-sentence
    assert rb_negatives("A RED CAR", lists, rng) == [("A blue CAR", "color")]


def test_multiword_replacement_both_ways():
    lists = {"action": ("on", "in front of")}
    rng = np.random.default_rng(0)
    assert rb_negatives("a cat on a mat", lists, rng) == [("a cat in front of a mat", "action")]
    assert rb_negatives("a cat in front of a mat", lists, rng) == [("a cat on a mat", "action")]


def test_only_one_occurrence_replaced():
    caption = "a red car and a red bus"
    for seed in range(50):
        ((neg, typ),) = rb_negatives(caption, PAPER, np.random.default_rng(seed))
        assert typ == "color"
        d = _diff(caption, neg)
        assert len(d) == 1 and d[0][0] in (1, 5) and d[0][1] == "red"
        assert neg.split().count("red") == 1


def test_replacement_never_a_word_of_that_type_in_the_caption():
    caption = "a red car and a blue bus"
    seen = set()
    for seed in range(200):
        ((neg, _),) = rb_negatives(caption, PAPER, np.random.default_rng(seed))
        ((_, old, new),) = _diff(caption, neg)
        assert old in ("red", "blue") and new not in ("red", "blue") and new in PAPER["color"]
        seen.add(new)
    assert len(seen) > 20  # drawn over the list
    # entries inside a longer span count as present too ("in", "of" inside "in front of")
    caption = "a man standing in front of a car"
    for neg, _ in rb_negatives(caption, PAPER, np.random.default_rng(0), k=40):
        middle = neg[len("a man standing ") : -len(" a car")]
        assert middle not in ("in", "of", "in front of") and middle in PAPER["action"]


def test_k_distinct():
    out = rb_negatives("a red car", PAPER, np.random.default_rng(0), k=5)
    assert len(out) == 5 and len({n for n, _ in out}) == 5
    assert {t for _, t in out} == {"color"}
    assert all(n != "a red car" for n, _ in out)


def test_fewer_than_k_when_exhausted():
    out = rb_negatives("a small circle", toy_word_lists(), np.random.default_rng(0), k=10)
    assert sorted(out) == [("a big circle", "size"), ("a large circle", "size"), ("a little circle", "size")]


def test_no_match_gives_empty():
    assert rb_negatives("a dog chasing a cat", {"color": ("red", "blue")}, np.random.default_rng(0), k=3) == []
    assert rb_negatives("", PAPER, np.random.default_rng(0)) == []
    # every entry of the only matching type already present: nothing to swap in
    assert rb_negatives("a red and blue car", {"color": ("red", "blue")}, np.random.default_rng(0)) == []


def test_determinism():
    caps = ["a tiny red car parked on the street", "a white dog with a wooden stick", "a man riding a horse"]
    a = rb_negatives_batch(caps, PAPER, np.random.default_rng(7), k=2)
    b = rb_negatives_batch(caps, PAPER, np.random.default_rng(7), k=2)
    c = rb_negatives_batch(caps, PAPER, np.random.default_rng(8), k=2)
    assert a == b
    assert a != c


def test_batch_equals_sequential_calls():
    caps = ["a red car", "nothing here", "a big dog in front of a house", "a small circle"]
    rng = np.random.default_rng(3)
    seq = [rb_negatives(c, PAPER, rng, k=2) for c in caps]
    assert rb_negatives_batch(caps, PAPER, np.random.default_rng(3), k=2) == seq
    assert seq[1] == []


def test_type_uniform_among_present_types():
    caption = "a tiny red car"  # "tiny": size only; "red": colour only
    assert {s.type for s in find_spans(caption, PAPER)} == {"size", "color"}
    rng = np.random.default_rng(0)
    counts = Counter(t for ((_, t),) in rb_negatives_batch([caption] * 2000, PAPER, rng, k=1))
    assert set(counts) == {"size", "color"}
    assert abs(counts["color"] / 2000 - 0.5) < 0.04


def test_span_chosen_uniformly_within_type():
    caption = "a red car and a red bus"
    rng = np.random.default_rng(1)
    pos = Counter(_diff(caption, n)[0][0] for ((n, _),) in rb_negatives_batch([caption] * 2000, PAPER, rng))
    assert abs(pos[1] / 2000 - 0.5) < 0.04


# --- validation ------------------------------------------------------------------------------------------


def test_validation():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="'size'.*empty"):
        rb_negatives("a red car", {"color": ("red",), "size": ()}, rng)
    with pytest.raises(ValueError, match="caption must be a str"):
        rb_negatives(None, PAPER, rng)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"captions\[1\]"):
        rb_negatives_batch(["a red car", 3], PAPER, rng)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="'color'.*list/tuple"):
        rb_negatives("a red car", {"color": "red"}, rng)
    with pytest.raises(ValueError, match="k must be a positive int"):
        rb_negatives("a red car", PAPER, rng, k=0)
    with pytest.raises(ValueError, match="rng"):
        rb_negatives("a red car", PAPER, 0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="lists is empty"):
        find_spans("a red car", {})
    with pytest.raises(ValueError, match="'color'.*edge"):
        find_spans("a red car", {"color": ("red.",)})
    with pytest.raises(ValueError, match="caption must be a str"):
        find_spans(b"a red car", PAPER)  # type: ignore[arg-type]
