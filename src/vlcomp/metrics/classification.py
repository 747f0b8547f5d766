"""Zero-shot (or linear-probe) classification accuracy from logits.

Definitions:

- prediction ``pred[i] = argmax_c logits[i, c]``; **tie rule** (:data:`CLASSIFICATION_TIE_RULE`): like
  ``np.argmax``/``torch.argmax`` the *first* (lowest-index) maximum wins, so a tie is correct only when
  the label is the lowest tied class.
- ``top1_accuracy`` = mean over items of ``pred == label`` (micro).
- ``balanced_accuracy`` = unweighted mean over classes of per-class recall (accuracy among items of that
  class); classes with no item are skipped.
- ``true_rank[i]`` = the label's position (1 = first) when the classes of row ``i`` are ordered by logit, highest
  first, ties in index order (the same tie rule: rank 1 is exactly ``pred == label``):
  ``1 + #{c: logits[i, c] > logits[i, y]} + #{c < y: logits[i, c] == logits[i, y]}``. Top-k accuracy (the
  Hard Positives paper's Acc@5, CLIP_benchmark's ``topk``) is the mean of ``true_rank <= k``; with fewer than k
  classes every item counts as correct.
"""

from __future__ import annotations

import numpy as np

CLASSIFICATION_TIE_RULE = "argmax_first_max"


def predict(logits: np.ndarray) -> np.ndarray:
    """Predicted class ``[N]`` = index of the first maximum of each row of ``logits [N, C]``."""
    logits = _check_logits(logits)
    return np.argmax(logits, axis=1)


def top1_correct(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per-item correctness ``[N]`` (bool): ``argmax(logits[i]) == labels[i]`` with the first max winning."""
    logits = _check_logits(logits)
    labels = _check_labels(labels, logits.shape[0], n_classes=logits.shape[1])
    return predict(logits) == labels


def true_rank(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The label's rank ``[N]`` (int64, 1 = first) among the classes of each row, highest logit first, ties in
    index order (:data:`CLASSIFICATION_TIE_RULE`)."""
    logits = _check_logits(logits)
    labels = _check_labels(labels, logits.shape[0], n_classes=logits.shape[1])
    own = np.take_along_axis(logits, labels[:, None], axis=1)  # [N, 1]
    earlier = np.arange(logits.shape[1])[None, :] < labels[:, None]  # [N, C]
    return 1 + (logits > own).sum(axis=1) + ((logits == own) & earlier).sum(axis=1)


def top1_accuracy(logits: np.ndarray, labels: np.ndarray) -> float:
    """Top-1 accuracy: the fraction of items whose first-max prediction equals the label."""
    correct = top1_correct(logits, labels)
    if correct.size == 0:
        raise ValueError("logits has no rows")
    return float(correct.mean())


def per_class_accuracy(correct: np.ndarray, labels: np.ndarray, n_classes: int | None = None) -> np.ndarray:
    """Accuracy of each class ``[n_classes]`` (float; ``nan`` for classes with no item)."""
    correct = np.asarray(correct)
    if correct.ndim != 1 or correct.dtype != np.bool_:
        raise ValueError(f"correct must be a 1-D bool array, got shape {correct.shape} dtype {correct.dtype}")
    labels = _check_labels(labels, correct.shape[0], n_classes=n_classes)
    if n_classes is None:
        n_classes = int(labels.max()) + 1 if labels.size else 0
    totals = np.bincount(labels, minlength=n_classes).astype(np.float64)  # [C]
    hits = np.bincount(labels, weights=correct.astype(np.float64), minlength=n_classes)  # [C]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(totals > 0, hits / np.maximum(totals, 1), np.nan)


def balanced_accuracy(correct: np.ndarray, labels: np.ndarray, n_classes: int | None = None) -> float:
    """Balanced accuracy: unweighted mean of per-class accuracy over classes that have at least one item."""
    per_class = per_class_accuracy(correct, labels, n_classes)
    if np.isnan(per_class).all():
        raise ValueError("no class has any item")
    return float(np.nanmean(per_class))


def classification_metrics(logits: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """``{"top1_accuracy", "balanced_accuracy"}`` (MLflow-safe keys) from logits ``[N, C]`` and labels ``[N]``."""
    correct = top1_correct(logits, labels)
    if correct.size == 0:
        raise ValueError("logits has no rows")
    n_classes = np.asarray(logits).shape[1]
    return {
        "top1_accuracy": float(correct.mean()),
        "balanced_accuracy": balanced_accuracy(correct, labels, n_classes),
    }


def _check_logits(logits: np.ndarray) -> np.ndarray:
    logits = np.asarray(logits)
    if logits.ndim != 2 or logits.shape[1] < 1:
        raise ValueError(f"logits must have shape [N, C] with C >= 1, got shape {logits.shape}")
    if not np.issubdtype(logits.dtype, np.number):
        raise ValueError(f"logits must be numeric, got dtype {logits.dtype}")
    if np.issubdtype(logits.dtype, np.floating) and np.isnan(logits).any():
        raise ValueError("logits contains NaN")
    return logits


def _check_labels(labels: np.ndarray, n: int, n_classes: int | None) -> np.ndarray:
    labels = np.asarray(labels)
    if labels.shape != (n,):
        raise ValueError(f"labels must have shape [{n}], got shape {labels.shape}")
    if not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(f"labels must be integers, got dtype {labels.dtype}")
    if n and labels.min() < 0:
        raise ValueError(f"labels must be >= 0, got min {labels.min()}")
    if n_classes is not None and n and labels.max() >= n_classes:
        raise ValueError(f"labels must be < n_classes={n_classes}, got max {labels.max()}")
    return labels.astype(np.int64, copy=False)
