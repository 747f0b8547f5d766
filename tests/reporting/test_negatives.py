"""Negative kinds, on hand-made captions."""

from __future__ import annotations

import pytest

from vlcomp.reporting.papers.aro.negatives import negative_composition, negative_kind

CAP = "a large red circle to the left of a small blue square"


@pytest.mark.parametrize(("neg", "kind"), [
    ("a large blue circle to the left of a small red square", "colour swap"),
    ("a large red square to the left of a small blue circle", "shape swap"),
    ("a small red circle to the left of a large blue square", "other attribute swap"),
    ("a red large circle to the left of a small blue square", "other attribute swap"),
    ("a large red circle to the of left a small blue square", "other"),
    ("a small blue square to the left of a large red circle", "other"),  # whole NPs: colours and shapes move
    ("a large red circle to the left of a blue square", "not a permutation"),
])
def test_negative_kind(neg: str, kind: str) -> None:
    assert negative_kind(CAP, neg) == kind


def test_negative_composition_counts_and_shares() -> None:
    caps = [[CAP, "a red circle"]]
    negs = [[["a large blue circle to the left of a small red square", "a large red square to the left of a small blue circle",
              "a small red circle to the left of a large blue square"], []]]
    df = negative_composition(caps, negs).set_index("kind")
    assert df.loc["colour swap", "negatives"] == 1 and df.loc["shape swap", "negatives"] == 1
    assert df.loc["colour swap", "share of negatives"] == pytest.approx(1 / 3, abs=1e-4)
    assert df.loc["colour swap", "share of captions with one"] == 0.5  # 1 of 2 captions
    assert df["negatives"].sum() == 3
