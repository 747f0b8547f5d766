"""Top-1 and balanced accuracy from logits, with the first-max tie rule."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from vlcomp.metrics import check_metric_keys
from vlcomp.metrics.classification import (
    CLASSIFICATION_TIE_RULE,
    balanced_accuracy,
    classification_metrics,
    per_class_accuracy,
    predict,
    top1_accuracy,
    top1_correct,
)


def test_tie_rule_is_first_max() -> None:
    assert CLASSIFICATION_TIE_RULE == "argmax_first_max"
    logits = np.array([[1.0, 1.0, 0.0], [0.0, 2.0, 2.0], [3.0, 3.0, 3.0]])
    assert predict(logits).tolist() == [0, 1, 0]
    np.testing.assert_array_equal(top1_correct(logits, np.array([1, 1, 2])), [False, True, False])


def test_matches_numpy_and_torch_argmax_with_ties() -> None:
    rng = np.random.default_rng(0)
    logits = rng.integers(0, 3, size=(300, 4)).astype(np.float32)
    labels = rng.integers(0, 4, size=300)
    want = np.argmax(logits, 1) == labels
    np.testing.assert_array_equal(top1_correct(logits, labels), want)
    np.testing.assert_array_equal(
        top1_correct(logits, labels), torch.from_numpy(logits).argmax(1).numpy() == labels
    )
    assert top1_accuracy(logits, labels) == pytest.approx(want.mean())


def test_balanced_accuracy_hand_example() -> None:
    # class 0: 3 items, 3 right; class 1: 1 item, 0 right -> balanced 0.5, top-1 0.75.
    logits = np.array([[2.0, 0.0], [2.0, 0.0], [2.0, 0.0], [2.0, 0.0]])
    labels = np.array([0, 0, 0, 1])
    metrics = classification_metrics(logits, labels)
    assert metrics == {"top1_accuracy": 0.75, "balanced_accuracy": 0.5}
    check_metric_keys(metrics)


def test_per_class_accuracy_skips_empty_classes() -> None:
    correct = np.array([True, False, True])
    labels = np.array([0, 0, 2])
    per_class = per_class_accuracy(correct, labels, n_classes=4)
    np.testing.assert_allclose(per_class, [0.5, np.nan, 1.0, np.nan])
    assert balanced_accuracy(correct, labels, n_classes=4) == pytest.approx(0.75)
    assert balanced_accuracy(correct, labels) == pytest.approx(0.75)


@pytest.mark.parametrize(
    ("logits", "labels", "match"),
    [
        (np.zeros((3,)), np.zeros(3, dtype=int), "logits"),
        (np.zeros((3, 2)), np.zeros(2, dtype=int), "labels"),
        (np.zeros((3, 2)), np.array([0, 1, 2]), "labels"),
        (np.zeros((3, 2)), np.array([0.0, 1.0, 1.0]), "labels"),
        (np.array([[np.nan, 0.0]]), np.array([0]), "NaN"),
    ],
)
def test_bad_input_raises(logits: np.ndarray, labels: np.ndarray, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        top1_correct(logits, labels)


def test_true_rank_by_hand() -> None:
    from vlcomp.metrics.classification import true_rank

    logits = np.array([[0.1, 0.9, 0.5, 0.3],
                       [0.2, 0.2, 0.2, 0.1],   # a three-way tie: index order decides
                       [0.2, 0.2, 0.2, 0.1],
                       [0.0, 0.0, 0.0, 0.7]])
    labels = np.array([2, 0, 2, 1])
    # row 0: 0.9 > 0.5 -> rank 2; row 1: first of the tie -> 1; row 2: third of the tie -> 3; row 3: 0.7 above,
    # then the tie 0, 1 -> rank 3
    assert true_rank(logits, labels).tolist() == [2, 1, 3, 3]
    assert ((true_rank(logits, labels) == 1) == top1_correct(logits, labels)).all()


def test_true_rank_matches_a_naive_stable_sort() -> None:
    from vlcomp.metrics.classification import true_rank

    rng = np.random.default_rng(0)
    logits = rng.integers(0, 4, size=(300, 7)).astype(np.float32)  # many ties
    labels = rng.integers(0, 7, size=300)
    naive = []
    for row, y in zip(logits, labels):
        order = sorted(range(len(row)), key=lambda c: (-row[c], c))
        naive.append(order.index(y) + 1)
    assert true_rank(logits, labels).tolist() == naive
    assert ((true_rank(logits, labels) == 1) == top1_correct(logits, labels)).all()
