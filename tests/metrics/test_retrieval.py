"""Recall@K in both directions: definitions, tie rule, chunking, parity with naive loops."""

from __future__ import annotations

import numpy as np
import pytest

from vlcomp.metrics import check_metric_keys
from vlcomp.metrics.retrieval import (
    RETRIEVAL_TIE_RULE,
    hits_from_ranks,
    recall_at_k,
    recall_from_hits,
    recall_key,
    retrieval_hits,
    retrieval_ranks,
    target_ranks,
)


def _naive_hits(scores: np.ndarray, text_to_image: np.ndarray, ks: tuple[int, ...]) -> dict[str, np.ndarray]:
    """Python loops with an explicit stable descending sort (ties: lower index first)."""
    n_images, n_texts = scores.shape
    img2txt = {i: {j for j in range(n_texts) if text_to_image[j] == i} for i in range(n_images)}
    out: dict[str, list[bool]] = {}
    for k in ks:
        out[f"i2t/recall_at_{k}"] = [
            bool(img2txt[i] & set(np.argsort(-scores[i], kind="stable")[:k].tolist()))
            for i in range(n_images)
        ]
        out[f"t2i/recall_at_{k}"] = [
            int(text_to_image[j]) in np.argsort(-scores[:, j], kind="stable")[:k].tolist()
            for j in range(n_texts)
        ]
    return {key: np.array(v) for key, v in out.items()}


def _reference_aro_recall(scores: np.ndarray, text_to_image: np.ndarray) -> dict[str, float]:
    """The ARO ``evaluate_scores`` loops (np.argsort(...)[-5:]); only tie-free inputs are comparable."""
    n_images, n_texts = scores.shape
    img2txt = {i: [j for j in range(n_texts) if text_to_image[j] == i] for i in range(n_images)}
    t1, t5, i1, i5 = [], [], [], []
    for i in range(n_images):
        top5 = np.argsort(scores[i])[-5:]
        t1.append(len(set(img2txt[i]) & set(top5[-1:])) > 0)
        t5.append(len(set(img2txt[i]) & set(top5)) > 0)
    for j in range(n_texts):
        top5 = np.argsort(scores[:, j])[-5:]
        i1.append(text_to_image[j] in top5[-1:])
        i5.append(text_to_image[j] in top5)
    return {
        "i2t/recall_at_1": float(np.mean(t1)),
        "i2t/recall_at_5": float(np.mean(t5)),
        "t2i/recall_at_1": float(np.mean(i1)),
        "t2i/recall_at_5": float(np.mean(i5)),
    }


def _coco_like(rng: np.random.Generator, n_images: int, caps_per_image: int = 5) -> np.ndarray:
    text_to_image = np.repeat(np.arange(n_images), caps_per_image)
    return text_to_image


def test_tie_rule_is_pinned() -> None:
    assert RETRIEVAL_TIE_RULE == "stable_descending_lower_index_first"


def test_ties_rank_lower_index_first() -> None:
    # image 0 ties with every caption; its only GT caption is index 2, so two tied captions rank above it.
    scores = np.array([[0.5, 0.5, 0.5], [0.0, 0.0, 0.0]])
    ranks = retrieval_ranks(scores, np.array([1, 1, 0]))
    assert ranks["i2t"].tolist() == [2, 0]
    # image 1 (captions 0 and 1, all tied at 0.0): best GT is caption 0 -> rank 0.
    # text->image: column 2 = [0.5, 0.0] -> image 0 first; columns 0/1 -> image 0 first, so image 1 is rank 1.
    assert ranks["t2i"].tolist() == [1, 1, 0]
    hits = hits_from_ranks(ranks, ks=(1, 2, 3))
    assert hits["i2t/recall_at_1"].tolist() == [False, True]
    assert hits["i2t/recall_at_3"].tolist() == [True, True]
    # all-tied column: caption of image 0 hits at 1, caption of image 1 does not.
    zero = retrieval_hits(np.zeros((2, 2)), np.array([0, 1]), ks=(1,))
    assert zero["t2i/recall_at_1"].tolist() == [True, False]
    assert zero["i2t/recall_at_1"].tolist() == [True, False]


def test_target_ranks_matches_stable_argsort() -> None:
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 3, size=(6, 9)).astype(np.float32)
    rows = rng.integers(0, 6, size=40)
    cols = rng.integers(0, 9, size=40)
    expected = [
        int(np.where(np.argsort(-scores[r], kind="stable") == c)[0][0])
        for r, c in zip(rows, cols, strict=True)
    ]
    assert target_ranks(scores, rows, cols, max_block_elems=10).tolist() == expected


@pytest.mark.parametrize("max_block_elems", [1, 17, 1 << 24])
def test_parity_with_naive_loop_on_planted_ties(max_block_elems: int) -> None:
    rng = np.random.default_rng(123)
    n_images = 40
    text_to_image = rng.permutation(_coco_like(rng, n_images))  # captions not grouped by image
    scores = rng.normal(size=(n_images, text_to_image.size)).astype(np.float32)
    scores = np.round(scores, 1)  # many exact ties
    scores[:, 7] = scores[:, 3]  # duplicated caption column
    scores[5] = scores[9]  # duplicated image row
    scores[:, 11] = scores[:, 11].max()  # a column tied at the top
    ks = (1, 5, 10)
    got = retrieval_hits(scores, text_to_image, ks=ks, max_block_elems=max_block_elems)
    want = _naive_hits(scores, text_to_image, ks)
    assert got.keys() == want.keys()
    for key in want:
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)


def test_matches_aro_reference_loop_without_ties() -> None:
    rng = np.random.default_rng(7)
    text_to_image = _coco_like(rng, 30)
    scores = rng.normal(size=(30, text_to_image.size)) + 0.8 * (
        np.arange(30)[:, None] == text_to_image[None, :]
    )
    got = recall_at_k(scores, text_to_image)
    want = _reference_aro_recall(scores, text_to_image)
    assert got == pytest.approx(want)
    assert 0.0 < got["i2t/recall_at_1"] < 1.0  # non-trivial


def test_uneven_captions_and_image_without_caption() -> None:
    # image 2 has no caption: never a hit (the reference's any() over an empty set is False).
    scores = np.array([[0.9, 0.1, 0.8], [0.2, 0.7, 0.1], [1.0, 1.0, 1.0]])
    text_to_image = np.array([0, 1, 0])
    hits = retrieval_hits(scores, text_to_image, ks=(1,))
    assert hits["i2t/recall_at_1"].tolist() == [True, True, False]
    assert hits["t2i/recall_at_1"].tolist() == [False, False, False]  # image 2 scores 1.0 everywhere
    assert retrieval_ranks(scores, text_to_image)["i2t"][2] == 3


def test_separate_t2i_scores() -> None:
    scores = np.eye(3)
    scores_t2i = np.eye(3)[::-1].copy()
    got = recall_at_k(scores, np.arange(3), ks=(1,), scores_t2i=scores_t2i)
    assert got == {"i2t/recall_at_1": 1.0, "t2i/recall_at_1": pytest.approx(1 / 3)}


def test_recall_from_hits_and_keys() -> None:
    rng = np.random.default_rng(3)
    text_to_image = _coco_like(rng, 12, caps_per_image=3)
    scores = rng.normal(size=(12, 36))
    hits = retrieval_hits(scores, text_to_image, ks=(1, 5))
    assert hits["i2t/recall_at_1"].shape == (12,) and hits["t2i/recall_at_5"].shape == (36,)
    recalls = recall_from_hits(hits)
    assert recalls == recall_at_k(scores, text_to_image, ks=(1, 5))
    assert recalls["t2i/recall_at_1"] == pytest.approx(hits["t2i/recall_at_1"].mean())
    assert list(recalls) == ["i2t/recall_at_1", "i2t/recall_at_5", "t2i/recall_at_1", "t2i/recall_at_5"]
    check_metric_keys(recalls)
    assert all("@" not in k for k in recalls)
    assert recall_key("i2t", 10) == "i2t/recall_at_10"


def test_recall_is_monotone_in_k_and_perfect_on_identity() -> None:
    rng = np.random.default_rng(5)
    scores = rng.normal(size=(20, 60))
    rec = recall_at_k(scores, _coco_like(rng, 20, 3), ks=(1, 5, 10, 60))
    assert rec["i2t/recall_at_1"] <= rec["i2t/recall_at_5"] <= rec["i2t/recall_at_10"] <= 1.0
    assert rec["t2i/recall_at_60"] == 1.0
    perfect = recall_at_k(np.eye(4), np.arange(4))
    assert set(perfect.values()) == {1.0}


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"scores": np.zeros((2, 3)), "text_to_image": np.array([0, 1])}, "text_to_image"),
        ({"scores": np.zeros((2, 3)), "text_to_image": np.array([0, 1, 2])}, "text_to_image"),
        ({"scores": np.zeros((2, 3)), "text_to_image": np.array([0.0, 1.0, 1.0])}, "text_to_image"),
        ({"scores": np.zeros(3), "text_to_image": np.array([0, 1, 1])}, "scores"),
        ({"scores": np.array([[np.nan, 0, 0], [0, 0, 0]]), "text_to_image": np.array([0, 1, 1])}, "NaN"),
        ({"scores": np.zeros((2, 3)), "text_to_image": np.array([0, 1, 1]), "ks": (0,)}, "ks"),
        (
            {
                "scores": np.zeros((2, 3)),
                "text_to_image": np.array([0, 1, 1]),
                "scores_t2i": np.zeros((3, 2)),
            },
            "scores_t2i",
        ),
    ],
)
def test_bad_input_raises(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        recall_at_k(**kwargs)
