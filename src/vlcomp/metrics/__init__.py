"""Evaluation metrics: pure functions from per-item scores to per-item results to aggregates.

Modules:

- ``aro``: ARO pick-the-right-caption decisions (with each paper's tie rule) and macro accuracies.
- ``retrieval``: image<->text Recall@K with per-item hits and an explicit tie rule.
- ``classification``: top-1 and balanced (mean per-class) accuracy from logits.
- ``stats``: mean ± std over seeds, SEM, bootstrap and Wilson confidence intervals.

Every metric dict produced here uses MLflow-safe keys: only letters, digits, ``_``, ``/``, ``.`` and ``-``
(no spaces, no ``@``), e.g. ``t2i/recall_at_1``; :func:`check_metric_keys` enforces that.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

METRIC_KEY_PATTERN = re.compile(r"^[A-Za-z0-9_./-]+$")


def is_metric_key(key: str) -> bool:
    """True if ``key`` only uses letters, digits, ``_``, ``/``, ``.`` and ``-`` (safe as an MLflow key)."""
    return bool(METRIC_KEY_PATTERN.match(key))


def check_metric_keys(keys: Iterable[str]) -> None:
    """Raise ValueError naming the first key that is not MLflow-safe (see :func:`is_metric_key`)."""
    for key in keys:
        if not is_metric_key(key):
            raise ValueError(
                f"metric key {key!r} is not MLflow-safe: use only letters, digits, '_', '/', '.', '-'"
            )


__all__ = ["METRIC_KEY_PATTERN", "check_metric_keys", "is_metric_key"]
