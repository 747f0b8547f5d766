"""The paper profile's evaluation engine: the released benchmark files, scored on any ``ImageTextScorer``.

- :mod:`.engine` - batched multiple-choice scoring (each unique image and caption encoded once; cross scorers
  through batched ``score_pairs``), retrieval (dual matrix, or ITC top-k re-ranking), and the naive
  one-item-at-a-time reference loops.
- :mod:`.aro`, :mod:`.retrieval`, :mod:`.twochoice`, :mod:`.hardpos` - one runner per benchmark format: a
  task built from the released files, per-item tables, and an aggregate from those tables alone.
- :mod:`.suite` - the registry (:data:`PAPER_BENCHMARKS`), :func:`run_benchmarks`, :func:`aggregate_tables`.
"""

from __future__ import annotations

from .engine import (
    ChoiceTask,
    EngineOptions,
    FeatureCache,
    RetrievalTask,
    naive_choice_scores,
    naive_retrieval_scores,
    naive_task,
    retrieval_scores,
    score_choices,
    score_task,
)
from .suite import PAPER_BENCHMARKS, PaperBenchmark, aggregate_tables, run_benchmarks

__all__ = [
    "PAPER_BENCHMARKS", "ChoiceTask", "EngineOptions", "FeatureCache", "PaperBenchmark", "RetrievalTask",
    "aggregate_tables", "naive_choice_scores", "naive_retrieval_scores", "naive_task", "retrieval_scores",
    "run_benchmarks", "score_choices", "score_task",
]
