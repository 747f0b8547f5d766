"""Item-level uncertainty for the claims ledger: a headline metric recomputed from the per-item tables the evaluate
stages write (``metrics/<model>/items/<table>.parquet``, :mod:`vlcomp.eval.run`), averaged over whole chains, and a
paired bootstrap over items of the difference between two methods.

An :class:`ItemMetric` states how a metric of ``metrics.json`` follows from one per-item table, in the benchmark's
own terms (:mod:`vlcomp.benchmarks`): the per-row score, the columns naming an item (rows sharing them, e.g. one
caption under several perturbation seeds, are averaged into one item), and for a macro average the group column,
the rows that leave it (VG-Relation's symmetric relations) and the smallest group kept (VG-Attribution: 25 cases,
or the ``aro_vga_min_count`` setting in the model's provenance). A VG-Relation macro of one relation kind
(``aro/vg_relation/{geometric,role}_macro_acc``, ARO Table 2's two halves) keeps only the cases whose relation is of
that kind (:func:`vlcomp.metrics.aro.relation_kind`, the benchmark's own split), so its bootstrap resamples those
cases alone and re-averages over that kind's relations. :func:`metric_value` recomputes the metric from the items;
the ledger uses an interval only where that equals the value in ``metrics.json``.

The bootstrap (:func:`paired_interval`) resamples items with replacement (``scipy.stats.bootstrap``, ``paired=True``:
the per-item difference and its group travel together) and recomputes the metric on every resample by its own
definition, so a macro average is re-averaged over the groups present in the resample with enough items. The
per-item difference of two methods is taken chain by chain (a fine-tuned chain ``b<k>s<s>`` against the base model
of its chain ``b<k>``, or against the other method's chain ``b<k>s<s>``) and averaged over the pairs; by linearity
its metric equals the mean over pairs of the metric differences (the value the ledger shows). Randomness is
injected (:class:`Bootstrap` ``seed``).

**Nested macros, stratified** (:class:`NestedMacro`: VL-CheckList's Object / Attribute / Relation / overall and the
ELEVATER twin's mean over tasks). Such a metric is a tree of unweighted means over a per-item 0/1 column: per
*stratum*, the innermost group (a VL-CheckList file, i.e. one subtype's items; an ELEVATER task), the mean over its
items, rounded as the benchmark rounds it (VL-CheckList's ``total_acc``: 4 decimals), then means over files of a
dataset, datasets of a category, categories of a group (VL-CheckList), or over tasks (ELEVATER). The SE of such an
aggregate over a redraw of test items is taken by a **stratified bootstrap**: items resampled with replacement
*within* each stratum, every stratum keeping its size (the benchmark fixes how many items a file or task has), the
same draws for every model of the comparison (paired over the same items), and the same nested macro recomputed per
resample. With every stratum and its size kept, the macro is a fixed linear combination
``sum_s w_s * round(mean_s)`` of the stratum means; the weights ``w`` are read off the benchmark's own aggregation
applied to indicator tables (:func:`macro_weights`), not restated here, and a model's table is checked to give the
benchmark's own value with them (:func:`stratified_scores`). A per-model derived metric that is a linear
combination of such keys (TSVLC's mean(Attribute, Relation), Relation - Attribute) has the combined weights
(:func:`combine_macros`). :func:`stratified_interval` gives the interval and the SE (the standard deviation of the
resampled value, ddof = 1, as scipy's ``standard_error``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..benchmarks.aro import ORDER_METRIC_NAME
from ..benchmarks.retrieval import RETRIEVAL_METRIC_NAME
from ..benchmarks.vlchecklist import aggregate_vlchecklist
from ..benchmarks.zeroshot import aggregate_suite
from ..formats.vlchecklist import ACC_DECIMALS as VLC_ACC_DECIMALS
from ..metrics.aro import VG_ATTRIBUTION_MIN_COUNT, VG_RELATION_MIN_COUNT, relation_kind

#: Defaults of the ledger's bootstrap: a 95 % percentile interval from 9,999 resamples (scipy's default count).
CONFIDENCE = 0.95
N_RESAMPLES = 9999
METHOD = "percentile"
#: Scratch memory bound: at most this many resampled values exist at once (``batch`` of scipy's bootstrap).
MAX_ELEMENTS = 1 << 22
#: The relation kinds of VG-Relation's per-kind macros (``aro/vg_relation/<kind>_macro_acc``).
RELATION_KINDS = ("geometric", "role")


@dataclass(frozen=True)
class ItemMetric:
    """How one metric follows from one per-item table: the mean over items of ``score`` (rows sharing the ``item``
    columns averaged first), or, with ``group``, the unweighted mean over groups of the per-group mean, over the
    groups with at least ``min_count`` items (``min_count_setting``: the provenance setting that overrides it);
    ``relation_kind``: only the rows whose group, a VG-Relation relation, is of that kind
    (:func:`vlcomp.metrics.aro.relation_kind`)."""

    table: str
    score: str
    item: tuple[str, ...]
    group: str | None = None
    min_count: int = 0
    min_count_setting: str | None = None
    drop: str | None = None  # a bool column: flagged rows leave the metric
    where: tuple[tuple[str, str], ...] = ()  # rows kept: column == value
    relation_kind: str | None = None  # rows kept: relation_kind(group) == this

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
    kinds = {f"aro/vg_relation/{kind}_macro_acc": kind for kind in RELATION_KINDS}
    if key in kinds:  # one half of ARO Table 2: that kind's cases, the macro over that kind's relations
        return ItemMetric("vg_relation", "correct", ("index",), group="relation", min_count=VG_RELATION_MIN_COUNT,
                          drop="excluded", relation_kind=kinds[key])
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
    if metric.relation_kind is not None:
        kind_of = {r: relation_kind(r) for r in df[metric.group].astype(str).unique()}
        df = df[df[metric.group].astype(str).map(kind_of) == metric.relation_kind]
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


# --------------------------------------------------------------------------- nested macros, stratified bootstrap

Aggregate = Callable[[Mapping[str, pd.DataFrame]], Mapping[str, float]]


@dataclass(frozen=True)
class NestedMacro:
    """A metric that is a nested macro average of a per-item 0/1 column ``score`` of table ``table``: per stratum
    (the ``stratum`` column: the innermost group) the mean over its items (rows sharing the ``item`` columns averaged
    first), rounded to ``decimals`` (None: not rounded), then the benchmark's tree of unweighted means, i.e.
    ``sum_s w_s * round(mean_s)``. ``terms``: the keys of the benchmark's ``aggregate`` and their coefficients (one
    key with 1; a derived metric, several); ``context``: columns constant within a stratum that ``aggregate`` reads
    (VL-CheckList's ``category`` / ``dataset``, used where the table has them); ``what``: the benchmark, its strata and
    its nesting, for the ledger's legend."""

    table: str
    score: str
    item: tuple[str, ...]
    stratum: str
    terms: tuple[tuple[str, float], ...]
    aggregate: Aggregate = field(compare=False, repr=False)
    context: tuple[str, ...] = ()
    decimals: int | None = None
    what: str = ""

    def same_items(self, other: NestedMacro) -> bool:
        """Whether ``other`` reads the same per-item column in the same strata (their terms may differ)."""
        return (self.table, self.score, self.item, self.stratum, self.context, self.decimals, self.what) == \
            (other.table, other.score, other.item, other.stratum, other.context, other.decimals, other.what)


VLC_WHAT = (f"VL-CheckList: items resampled within each file (one subtype's items, e.g. Relation_spatial_vg); a "
            f"file's accuracy rounded to {VLC_ACC_DECIMALS} decimals (the reference's total_acc), averaged over the "
            "files of a dataset, the datasets of a category and the categories of Object / Attribute / Relation "
            "(overall: CE-CLIP's 9 leaves)")
ELEVATER_WHAT = ("the ELEVATER twin: images resampled within each task; the unweighted mean over tasks of each task's "
                 "accuracy")


def nested_metric(key: str) -> NestedMacro | None:
    """The nested-macro definition of a ``metrics.json`` key, or None: VL-CheckList's keys (files, categories,
    groups, overall; not the wrong-image control) and the ELEVATER twin's (``mean_acc`` and per task)."""
    parts = key.split("/")
    if parts[0] == "vlchecklist" and len(parts) >= 2 and parts[1] != "wrong_image":
        return NestedMacro("vlchecklist", "correct", ("file", "index"), "file", ((key, 1.0),), aggregate_vlchecklist,
                           ("category", "dataset"), VLC_ACC_DECIMALS, VLC_WHAT)
    if parts[:2] == ["zeroshot", "elevater"] and (parts[2:] == ["mean_acc"] or (len(parts) == 4 and parts[3] == "acc")):
        return NestedMacro("zeroshot_elevater", "correct_standard", ("task", "label", "file"), "task", ((key, 1.0),),
                           partial(aggregate_suite, name="zeroshot_elevater"), (), None, ELEVATER_WHAT)
    return None


def combine_macros(parts: Sequence[tuple[NestedMacro, float]]) -> NestedMacro:
    """``sum(coef * metric)`` of nested macros of the same items (a per-model derived metric: its weights are the
    combination of the parts' weights)."""
    first = parts[0][0]
    for m, _ in parts:
        if not m.same_items(first):
            raise ValueError(f"cannot combine {m.table}/{m.score} by {m.stratum} with {first.table}/{first.score} by "
                             f"{first.stratum}")
    terms = tuple((k, c * coef) for m, coef in parts for k, c in m.terms)
    return NestedMacro(first.table, first.score, first.item, first.stratum, terms, first.aggregate, first.context,
                       first.decimals, first.what)


def macro_weights(metric: NestedMacro, strata: pd.DataFrame) -> np.ndarray:
    """The weight of each stratum in ``metric``: ``strata`` has one row per stratum (the ``stratum`` column and the
    ``context`` columns the table has, in the order wanted); ``metric.aggregate`` is run on indicator tables (one
    item per stratum: all wrong, then only stratum ``s`` right) and ``w_s`` is what stratum ``s`` adds, summed over
    ``metric.terms``. Raises ValueError when the aggregate gives no value of a term for these strata."""
    names = strata[metric.stratum].to_numpy()

    def run(right: np.ndarray) -> Mapping[str, float]:
        return metric.aggregate({metric.table: strata.assign(**{metric.score: right})})

    zero = run(np.zeros(len(names), bool))
    missing = [k for k, _ in metric.terms if k not in zero]
    if missing:
        raise ValueError(f"{metric.table}: the benchmark gives no {', '.join(missing)} for these "
                         f"{len(names)} {metric.stratum} strata")
    weights = np.zeros(len(names))
    for s in range(len(names)):
        out = run(np.arange(len(names)) == s)
        weights[s] = sum(c * (out[k] - zero[k]) for k, c in metric.terms)
    return weights


@dataclass(frozen=True)
class StratifiedScores:
    """One model's per-item scores of a nested macro: ``scores[i]`` for item ``index[i]``, items sorted by stratum
    (``codes[i]`` in ``0..S-1``, non-decreasing; ``strata`` the names), the strata's ``weights`` and the rounding
    (``decimals``)."""

    index: pd.Index
    scores: np.ndarray
    codes: np.ndarray
    strata: tuple[str, ...]
    weights: np.ndarray
    decimals: int | None

    @property
    def counts(self) -> np.ndarray:
        return np.bincount(self.codes, minlength=len(self.strata))


def stratum_starts(counts: np.ndarray) -> np.ndarray:
    """Where each stratum's items start, for items sorted by stratum with ``counts`` items each."""
    return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)


def stratum_means(values: np.ndarray, starts: np.ndarray, counts: np.ndarray, decimals: int | None) -> np.ndarray:
    """Per stratum the mean of ``values`` (``[..., N]``, strata contiguous from ``starts``), rounded to ``decimals``."""
    means = np.add.reduceat(np.asarray(values, dtype=np.float64), starts, axis=-1) / counts
    return means if decimals is None else np.round(means, decimals)


def nested_value(scores: StratifiedScores) -> float:
    """The metric of one model on all its items: ``sum_s w_s * round(mean_s)``."""
    counts = scores.counts
    return float(stratum_means(scores.scores, stratum_starts(counts), counts, scores.decimals) @ scores.weights)


@lru_cache(maxsize=256)
def _cached_weights(metric: NestedMacro, rows: tuple[tuple[str, ...], ...], columns: tuple[str, ...]) -> np.ndarray:
    out = macro_weights(metric, pd.DataFrame(list(rows), columns=list(columns)))
    out.setflags(write=False)
    return out


def read_stratum_table(folder: str | Path, metric: NestedMacro) -> pd.DataFrame:
    """The columns of ``<folder>/items/<table>.parquet`` that ``metric`` reads (its ``context`` columns where the
    table has them). Raises FileNotFoundError naming a missing file, ValueError on a missing column or no row."""
    path = Path(folder) / "items" / f"{metric.table}.parquet"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no per-item table")
    import pyarrow.parquet as pq

    have = pq.read_schema(path).names
    context = [c for c in metric.context if c in have]
    columns = list(dict.fromkeys([*metric.item, metric.stratum, metric.score, *context]))
    missing = [c for c in columns if c not in have]
    if missing:
        raise ValueError(f"{path}: lacks columns {missing}")
    df = pd.read_parquet(path, columns=columns)
    if df.empty:
        raise ValueError(f"{path}: no row")
    return df


def stratified_scores(df: pd.DataFrame, metric: NestedMacro, where: str = "") -> StratifiedScores:
    """Per-item scores of ``metric`` from its per-item table ``df`` (:func:`read_stratum_table`), with the strata's
    weights (:func:`macro_weights`, strata in the table's order), checked to give the benchmark's own aggregate of
    ``df``. ``where`` names the table in errors: an item in several strata, or a metric that is not a fixed nested
    macro of the strata (ValueError)."""
    from ..eval.common import as_bool

    context = [c for c in metric.context if c in df.columns]
    tagged = df.assign(_score=as_bool(df[metric.score]).astype(np.float64), _stratum=df[metric.stratum].astype(str))
    by = list(metric.item)
    per_item = tagged.groupby(by, sort=True).agg(score=("_score", "mean"), stratum=("_stratum", "first"),
                                                 n_strata=("_stratum", "nunique"))
    if (per_item["n_strata"] > 1).any():
        raise ValueError(f"{where}: an item of {by} spans several {metric.stratum!r} strata")
    names = list(dict.fromkeys(tagged["_stratum"]))  # the table's order: the order the aggregate sees
    codes = per_item["stratum"].map({n: i for i, n in enumerate(names)}).to_numpy(np.int64)
    order = np.argsort(codes, kind="stable")
    strata = tagged.drop_duplicates("_stratum")[["_stratum", *context]]
    rows = tuple(tuple(str(v) for v in r) for r in strata.itertuples(index=False))
    weights = _cached_weights(metric, rows, (metric.stratum, *context))
    out = StratifiedScores(per_item.index[order], per_item["score"].to_numpy()[order], codes[order], tuple(names),
                           weights, metric.decimals)
    bench = metric.aggregate({metric.table: df})
    want = float(sum(c * bench[k] for k, c in metric.terms))
    got = nested_value(out)
    if not np.isclose(got, want, rtol=0, atol=1e-9):
        raise ValueError(f"{where}: the strata's weights give {got:.6f}, the benchmark's aggregate {want:.6f}: not a "
                         "fixed nested macro of the strata")
    return out


def read_stratified_scores(folder: str | Path, metric: NestedMacro) -> StratifiedScores:
    """:func:`stratified_scores` of ``<folder>/items/<table>.parquet``."""
    return stratified_scores(read_stratum_table(folder, metric), metric,
                             str(Path(folder) / "items" / f"{metric.table}.parquet"))


def _same_strata(first: StratifiedScores, s: StratifiedScores) -> None:
    if not s.index.equals(first.index):
        raise ValueError("the models' per-item tables cover different items")
    if s.strata != first.strata or not np.array_equal(s.codes, first.codes):
        raise ValueError("the models' per-item tables put the items in different strata")
    if s.decimals != first.decimals or not np.allclose(s.weights, first.weights, rtol=0, atol=1e-12):
        raise ValueError("the models' strata have different weights")


@dataclass(frozen=True)
class Patterns:
    """Per stratum ``s``: the distinct columns of the models' per-item values in it (``values[s]``, ``[M, K_s]``),
    how many of its items have each (``freq[s]``) and the first item with each (``first[s]``, a position)."""

    values: tuple[np.ndarray, ...]
    freq: tuple[np.ndarray, ...]
    first: tuple[np.ndarray, ...]


def item_patterns(values: np.ndarray, counts: np.ndarray) -> Patterns:
    """:class:`Patterns` of ``values`` (``[M, N]``, items sorted by stratum, ``counts`` per stratum). A resample sees
    an item only through its column of values, so items sharing one are interchangeable: the statistic of a resample
    is a function of how many draws fell on each pattern."""
    vals, freq, first = [], [], []
    for start, n in zip(stratum_starts(counts), counts, strict=True):
        cols, idx, cnt = np.unique(values[:, start:start + n], axis=1, return_index=True, return_counts=True)
        vals.append(cols)
        freq.append(cnt.astype(np.int64))
        first.append(start + idx)
    return Patterns(tuple(vals), tuple(freq), tuple(first))


def stratified_counts(freq: Sequence[np.ndarray], rng: np.random.Generator, n_resamples: int,
                      batch: int) -> Iterator[list[np.ndarray]]:
    """Batches of at most ``batch`` stratified resamples, each batch a list over strata of ``[b, K_s]`` counts: how
    many of the ``n_s`` items drawn uniformly with replacement from stratum ``s`` have each pattern, i.e.
    ``rng.multinomial(n_s, freq_s / n_s, b)`` (the distribution of drawing ``n_s`` item positions, summarised by
    pattern), drawn stratum by stratum within a batch."""
    done = 0
    while done < n_resamples:
        b = min(batch, n_resamples - done)
        yield [rng.multinomial(int(f.sum()), f / f.sum(), size=b) for f in freq]
        done += b


def resample_statistic(patterns: Patterns, counts: Sequence[np.ndarray], weights: np.ndarray, decimals: int | None,
                       coefs: np.ndarray) -> np.ndarray:
    """``sum_m coefs[m] * sum_s w_s * round(mean_s of model m)`` of each resample given by its pattern ``counts``
    (:func:`stratified_counts`): ``[b]``."""
    total = np.zeros((len(counts[0]), len(coefs)))
    for s, c in enumerate(counts):
        n = patterns.freq[s].sum()
        means = (c @ patterns.values[s].T) / n  # [b, M]
        total += weights[s] * (means if decimals is None else np.round(means, decimals))
    return total @ coefs


def _rounding_is_exact(counts: np.ndarray, decimals: int | None) -> bool:
    """Whether every mean of ``n_s`` 0/1 items already has at most ``decimals`` decimals (n_s divides 10^decimals)."""
    return decimals is None or bool(np.all((10 ** decimals) % counts[counts > 0] == 0))


def stratified_setup(terms: Sequence[tuple[StratifiedScores, float]]) -> tuple[np.ndarray, np.ndarray, int | None]:
    """The models' per-item values ``[M, N]``, coefficients ``[M]`` and the rounding of ``sum(coef *
    metric(model))``, checked to cover the same items in the same strata. Where the rounding changes no stratum mean
    (0/1 items, ``n_s`` dividing ``10^decimals``) the models collapse into one column, the per-item combination, with
    no rounding: the statistic is then linear in the items."""
    if not terms:
        raise ValueError("no model to bootstrap")
    first = terms[0][0]
    for s, _ in terms[1:]:
        _same_strata(first, s)
    if first.scores.size < 2:
        raise ValueError(f"a bootstrap needs at least 2 items, got {first.scores.size}")
    values = np.stack([np.asarray(s.scores, np.float64) for s, _ in terms])
    coefs = np.array([c for _, c in terms], np.float64)
    binary = bool(np.all((values == 0) | (values == 1)))
    if binary and _rounding_is_exact(first.counts, first.decimals):
        return (coefs @ values)[None, :], np.ones(1), None
    return values, coefs, first.decimals


def stratified_distribution(terms: Sequence[tuple[StratifiedScores, float]], rng: np.random.Generator,
                            n_resamples: int, batch: int | None = None) -> tuple[float, np.ndarray]:
    """The value of ``sum(coef * metric(model))`` on all items and its ``n_resamples`` stratified bootstrap
    replicates: items drawn with replacement within each stratum, every stratum keeping its size, the same draws for
    every model (:func:`stratified_counts`), the nested macro recomputed per resample (:func:`resample_statistic`).
    ``batch``: resamples per batch of draws (default: as many as :data:`MAX_ELEMENTS` counts allow)."""
    values, coefs, decimals = stratified_setup(terms)
    first = terms[0][0]
    counts = first.counts
    value = float(coefs @ (stratum_means(values, stratum_starts(counts), counts, decimals) @ first.weights))
    patterns = item_patterns(values, counts)
    if batch is None:
        batch = max(1, min(n_resamples, MAX_ELEMENTS // sum(f.size for f in patterns.freq)))
    dist = np.concatenate([resample_statistic(patterns, c, first.weights, decimals, coefs)
                           for c in stratified_counts(patterns.freq, rng, n_resamples, batch)])
    return value, dist


def stratified_interval(terms: Sequence[tuple[StratifiedScores, float]], rng: np.random.Generator,
                        spec: Bootstrap) -> tuple[float, float, float]:
    """The stratified bootstrap interval of ``sum(coef * metric(model))`` (:func:`stratified_distribution`) and its
    standard error, the replicates' standard deviation (ddof = 1, as scipy's ``standard_error``): ``(low, high,
    se)``. ``spec.method``: ``percentile`` or ``basic`` (no BCa: its jackknife is not defined here)."""
    value, dist = stratified_distribution(terms, rng, spec.n_resamples)
    alpha = (1 - spec.confidence) / 2
    low, high = np.percentile(dist, [100 * alpha, 100 * (1 - alpha)])
    se = float(np.std(dist, ddof=1)) if dist.size > 1 else float("nan")
    if spec.method == "percentile":
        return float(low), float(high), se
    if spec.method == "basic":
        return float(2 * value - high), float(2 * value - low), se
    raise ValueError(f"the stratified bootstrap has no {spec.method!r} interval (percentile or basic)")
