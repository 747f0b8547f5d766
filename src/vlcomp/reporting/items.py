"""Item-level uncertainty for the claims ledger: a headline metric recomputed from the per-item tables the evaluate
stages write (``metrics/<model>/items/<table>.parquet``, :mod:`vlcomp.eval.run`), averaged over whole chains, and a
paired bootstrap over items of the difference between two methods.

An :class:`ItemMetric` states how a metric of ``metrics.json`` follows from one per-item table, in the benchmark's
own terms (:mod:`vlcomp.benchmarks`): the per-row score, the columns naming an item (rows sharing them, e.g. one
caption under several perturbation seeds, are averaged into one item), and for a macro average the group column,
the rows that leave it (VG-Relation's symmetric relations) and the smallest group kept (VG-Attribution: 25 cases,
or the ``aro_vga_min_count`` setting in the model's provenance). :func:`metric_value` recomputes the metric from the
items; the ledger uses an interval only where that equals the value in ``metrics.json``.

The bootstrap (:func:`paired_interval`) resamples items with replacement (``scipy.stats.bootstrap``, ``paired=True``:
the per-item difference and its group travel together) and recomputes the metric on every resample by its own
definition, so a macro average is re-averaged over the groups present in the resample with enough items. The
per-item difference of two methods is taken chain by chain (a fine-tuned chain ``b<k>s<s>`` against the base model
of its chain ``b<k>``, or against the other method's chain ``b<k>s<s>``) and averaged over the pairs; by linearity
its metric equals the mean over pairs of the metric differences (the value the ledger shows). Randomness is
injected (:class:`Bootstrap` ``seed``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..benchmarks.aro import ORDER_METRIC_NAME
from ..benchmarks.retrieval import RETRIEVAL_METRIC_NAME
from ..metrics.aro import VG_ATTRIBUTION_MIN_COUNT, VG_RELATION_MIN_COUNT

#: Defaults of the ledger's bootstrap: a 95 % percentile interval from 9,999 resamples (scipy's default count).
CONFIDENCE = 0.95
N_RESAMPLES = 9999
METHOD = "percentile"
#: Scratch memory bound: at most this many resampled values exist at once (``batch`` of scipy's bootstrap).
MAX_ELEMENTS = 1 << 22


@dataclass(frozen=True)
class ItemMetric:
    """How one metric follows from one per-item table: the mean over items of ``score`` (rows sharing the ``item``
    columns averaged first), or, with ``group``, the unweighted mean over groups of the per-group mean, over the
    groups with at least ``min_count`` items (``min_count_setting``: the provenance setting that overrides it)."""

    table: str
    score: str
    item: tuple[str, ...]
    group: str | None = None
    min_count: int = 0
    min_count_setting: str | None = None
    drop: str | None = None  # a bool column: flagged rows leave the metric
    where: tuple[tuple[str, str], ...] = ()  # rows kept: column == value

    @property
    def columns(self) -> list[str]:
        cols = [*self.item, self.score, *(c for c, _ in self.where)]
        cols += [c for c in (self.group, self.drop) if c]
        return list(dict.fromkeys(cols))

    def groups_min(self, provenance: Mapping[str, Any] | None) -> int:
        """The smallest group kept in the macro, for a model of this provenance."""
        settings = (provenance or {}).get("settings") or {}
        if self.min_count_setting and settings.get(self.min_count_setting) is not None:
            return int(settings[self.min_count_setting])
        return self.min_count


def item_metric(key: str) -> ItemMetric | None:
    """The per-item definition of a ``metrics.json`` key (the ARO headline metrics the ledger compares), or None."""
    parts = key.split("/")
    if key == "aro/vg_relation/macro_acc":
        return ItemMetric("vg_relation", "correct", ("index",), group="relation", min_count=VG_RELATION_MIN_COUNT,
                          drop="excluded")
    if key == "aro/vg_attribution/macro_acc":
        return ItemMetric("vg_attribution", "correct", ("index",), group="pair", min_count=VG_ATTRIBUTION_MIN_COUNT,
                          min_count_setting="aro_vga_min_count")
    order = {metric: name for name, metric in ORDER_METRIC_NAME.items()}
    if len(parts) == 3 and parts[0] == "aro" and parts[1] in order and parts[2] == "acc":
        return ItemMetric(order[parts[1]], "correct", ("record", "caption_index"))  # mean over seeds per caption
    retrieval = {metric: name for name, metric in RETRIEVAL_METRIC_NAME.items()}
    if parts[0] == "retrieval" and len(parts) >= 4 and parts[1] in retrieval and parts[-1].startswith("recall_at_"):
        direction, hit = parts[-2], f"hit_{parts[-1].removeprefix('recall_at_')}"
        item = ("image_index",) if direction == "i2t" else ("text_index",)
        if len(parts) == 4:
            return ItemMetric(f"{retrieval[parts[1]]}_{direction}", hit, item)
        if len(parts) == 6 and parts[2] == "shuffle":  # mean over shuffle seeds per item
            return ItemMetric(f"{retrieval[parts[1]]}_shuffle_{direction}", hit, item, where=(("strategy", parts[3]),))
    if parts[0] == "zeroshot" and len(parts) == 3 and parts[1] not in ("conclip", "elevater"):
        if parts[2] == "acc":
            return ItemMetric("zeroshot_aro", "correct_standard", ("task", "label", "file"), where=(("task", parts[1]),))
        if parts[2].startswith("acc_"):  # one class group (benchmarks.zeroshot: class_groups.json)
            return ItemMetric("zeroshot_aro", "correct_standard", ("task", "label", "file"),
                              where=(("task", parts[1]), ("class_group", parts[2].removeprefix("acc_"))))
    return None


@dataclass(frozen=True)
class ItemScores:
    """One model's per-item scores of one metric: ``scores[i]`` for item ``index[i]`` (sorted), and its group
    (``groups[i]``, None for a plain mean); ``min_count`` the smallest group kept."""

    index: pd.Index
    scores: np.ndarray
    groups: np.ndarray | None
    min_count: int


def read_item_scores(folder: str | Path, metric: ItemMetric, provenance: Mapping[str, Any] | None = None) -> ItemScores:
    """Per-item scores of ``metric`` from ``<folder>/items/<table>.parquet``. Raises FileNotFoundError naming the
    file when it is missing, ValueError when a column is."""
    path = Path(folder) / "items" / f"{metric.table}.parquet"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no per-item table")
    import pyarrow.parquet as pq

    missing = [c for c in metric.columns if c not in pq.read_schema(path).names]
    if missing:
        raise ValueError(f"{path}: lacks columns {missing}")
    df = pd.read_parquet(path, columns=metric.columns)
    for column, wanted in metric.where:
        df = df[df[column].astype(str) == wanted]
    if metric.drop:
        df = df[~df[metric.drop].astype(bool)]
    if df.empty:
        raise ValueError(f"{path}: no row left for {metric}")
    df = df.assign(_score=df[metric.score].astype(np.float64))
    by = list(metric.item)
    per_item = df.groupby(by, sort=True)["_score"].mean()
    groups = None
    if metric.group:
        g = df.groupby(by, sort=True)[metric.group].agg(["first", "nunique"])
        if (g["nunique"] > 1).any():
            raise ValueError(f"{path}: an item of {by} spans several {metric.group!r} groups")
        groups = g["first"].astype(str).to_numpy()
    return ItemScores(per_item.index, per_item.to_numpy(), groups, metric.groups_min(provenance))


def group_codes(groups: np.ndarray | None) -> tuple[np.ndarray | None, int]:
    """Groups as integer codes ``0..G-1`` (sorted names) and G; ``(None, 0)`` for a plain mean."""
    if groups is None:
        return None, 0
    names, codes = np.unique(groups, return_inverse=True)
    return codes.astype(np.int64), len(names)


def macro_statistic(values: np.ndarray, codes: np.ndarray | None, n_groups: int, min_count: int = 0,
                    axis: int = -1) -> np.ndarray:
    """The metric of items ``values`` (``[..., N]``, vectorised over leading axes): their mean, or with group
    ``codes`` (same shape) the unweighted mean over groups of the per-group mean, over groups with at least
    ``max(min_count, 1)`` items. NaN where no group is kept."""
    values = np.moveaxis(np.asarray(values, dtype=np.float64), axis, -1)
    if codes is None:
        return values.mean(axis=-1)
    codes = np.moveaxis(np.asarray(codes), axis, -1)
    lead = values.shape[:-1]
    rows = int(np.prod(lead)) if lead else 1
    flat = (codes.reshape(rows, -1) + n_groups * np.arange(rows)[:, None]).ravel()  # [rows * N]
    sums = np.bincount(flat, weights=values.reshape(-1), minlength=rows * n_groups).reshape(rows, n_groups)
    counts = np.bincount(flat, minlength=rows * n_groups).reshape(rows, n_groups)
    kept = counts >= max(min_count, 1)  # [rows, G]
    means = np.divide(sums, counts, out=np.zeros_like(sums), where=kept)
    with np.errstate(invalid="ignore", divide="ignore"):
        macro = means.sum(axis=1) / kept.sum(axis=1)
    return macro.reshape(lead) if lead else macro[0]


def metric_value(scores: ItemScores) -> float:
    """The metric of one model (or of a per-item difference) on all its items."""
    codes, n_groups = group_codes(scores.groups)
    return float(macro_statistic(scores.scores, codes, n_groups, scores.min_count))


@dataclass(frozen=True)
class Bootstrap:
    """The ledger's bootstrap: ``seed`` (the root of every interval's random draws; the ledger derives a stream per
    condition), ``confidence``, ``n_resamples`` and scipy's ``method`` (``percentile``, ``basic`` or ``BCa``)."""

    seed: int
    confidence: float = CONFIDENCE
    n_resamples: int = N_RESAMPLES
    method: str = METHOD

    def describe(self) -> str:
        return (f"{self.confidence:.0%} {self.method} interval, paired bootstrap over items "
                f"(scipy.stats.bootstrap, {self.n_resamples:,} resamples, draws seeded from root_seed)")


def bootstrap_interval(diff: ItemScores, rng: np.random.Generator, spec: Bootstrap) -> tuple[float, float, float]:
    """The bootstrap interval of the metric of per-item values ``diff`` (a difference averaged over chain pairs, or
    one method's chain-averaged scores) and its standard error: items resampled with replacement, the metric
    recomputed per resample by :func:`macro_statistic`; ``(low, high, se)``, ``se`` the standard deviation of the
    resampled metric (scipy's ``standard_error``: the test-set standard error the ledger's power rule reads). A
    sample whose every resample gives the same value returns that value twice and an SE of 0."""
    from scipy import stats as sps  # imported here: scipy.stats costs seconds at import

    values = np.asarray(diff.scores, dtype=np.float64)
    codes, n_groups = group_codes(diff.groups)
    if values.size < 2:
        raise ValueError(f"a bootstrap needs at least 2 items, got {values.size}")
    if codes is None and np.all(values == values[0]):
        return float(values[0]), float(values[0]), 0.0
    codes = np.zeros(values.size, np.int64) if codes is None else codes
    grouped = diff.groups is not None

    def statistic(v: np.ndarray, c: np.ndarray, axis: int = -1) -> np.ndarray:
        return macro_statistic(v, c if grouped else None, n_groups, diff.min_count, axis=axis)

    batch = max(1, min(spec.n_resamples, MAX_ELEMENTS // values.size))
    res = sps.bootstrap((values, codes), statistic, n_resamples=spec.n_resamples, batch=batch, vectorized=True,
                        paired=True, confidence_level=spec.confidence, method=spec.method, rng=rng)
    return float(res.confidence_interval.low), float(res.confidence_interval.high), float(res.standard_error)


def paired_interval(diff: ItemScores, rng: np.random.Generator, spec: Bootstrap) -> tuple[float, float]:
    """:func:`bootstrap_interval` without the standard error."""
    low, high, _ = bootstrap_interval(diff, rng, spec)
    return low, high


def chain_average(pairs: Sequence[tuple[ItemScores, ItemScores | None]], where: str) -> ItemScores:
    """Per item, the mean over chain pairs of ``a - b`` (``b`` None: ``a`` alone). Every model must cover the same
    items in the same groups; ``where`` names the metric in the error."""
    first = pairs[0][0]
    total = np.zeros(len(first.scores))
    for a, b in pairs:
        for s in (a, b):
            if s is None:
                continue
            if not s.index.equals(first.index):
                raise ValueError(f"{where}: the models' per-item tables cover different items")
            if (s.groups is None) != (first.groups is None) or (s.groups is not None and
                                                                not np.array_equal(s.groups, first.groups)):
                raise ValueError(f"{where}: the models' per-item tables group the items differently")
            if s.min_count != first.min_count:
                raise ValueError(f"{where}: the models keep groups of different sizes ({s.min_count} vs "
                                 f"{first.min_count})")
        total += a.scores - (b.scores if b is not None else 0.0)
    return ItemScores(first.index, total / len(pairs), first.groups, first.min_count)
