"""The benchmark registry (both profiles): short names -> (prepare from inputs, batched + naive scoring,
aggregate from per-item tables).

A stage runs any list of them from params::

    tables = run_benchmarks(scorer, ["vg_relation", "sugarcrepe"], inputs)   # per-item DataFrames
    metrics = aggregate_tables(tables)                                       # MLflow-safe metric dict

``inputs`` is a flat mapping of file/folder paths and options (the ``real_inputs`` keys of params.yaml:
``aro_vg_relation``, ``aro_images``, ``coco_karpathy_test``, ...; each ``prepare_*`` docstring lists what it
reads). Every benchmark is prepared (annotations read and checked) before the first one is scored, so a bad
path or record fails in seconds. Image files are checked up front too (:class:`EngineOptions.check_images`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..eval.engine import EngineOptions, FeatureCache, Task, naive_task, score_task
from ..registry import Registry


@dataclass(frozen=True)
class Benchmark:
    name: str
    stands_for: str
    prepare: Callable[[Mapping[str, Any]], Task]  # inputs -> loaded, checked task
    aggregate: Callable[[Mapping[str, pd.DataFrame]], dict[str, float]]  # per-item tables -> metrics
    tables: tuple[str, ...]  # names of the per-item tables it writes and reads
    #: input keys the aggregate also reads (passed as keyword arguments when set), e.g. the VG-A minimum count
    settings: tuple[str, ...] = ()
    #: the metric keys that summarise it in the cross-paper model x benchmark matrix (reports/index.html)
    headline: tuple[str, ...] = ()

    def metrics(self, tables: Mapping[str, pd.DataFrame], inputs: Mapping[str, Any] | None = None) -> dict[str, float]:
        """The aggregate of the per-item tables, with the settings of ``inputs`` this benchmark reads."""
        kw = {k: inputs[k] for k in self.settings if inputs and inputs.get(k) is not None}
        return self.aggregate(tables, **kw)

    def run(self, scorer: Any, inputs: Mapping[str, Any], options: EngineOptions | None = None, *,
            cache: FeatureCache | None = None) -> dict[str, pd.DataFrame]:
        """Per-item tables, batched."""
        return score_task(scorer, self.prepare(inputs), options, cache=cache)

    def run_naive(self, scorer: Any, inputs: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
        """Per-item tables from the one-item-at-a-time reference loop (parity checks, benchmarks)."""
        return naive_task(scorer, self.prepare(inputs))


BENCHMARKS: Registry[Benchmark] = Registry("benchmark")


def register(bench: Benchmark) -> Benchmark:
    """Add a benchmark record to :data:`BENCHMARKS` under its own name (each benchmark module calls this)."""
    BENCHMARKS.add(bench.name, bench)
    return bench

def benchmarks_named(names: Iterable[str]) -> list[Benchmark]:
    if isinstance(names, str):
        raise ValueError(f"benchmark names must be a list, got the str {names!r}")
    names = list(names)
    if len(set(names)) != len(names):
        raise ValueError(f"benchmark names repeat: {names}")
    return [BENCHMARKS.get(n) for n in names]  # an unknown name raises, listing the known ones


def run_benchmarks(scorer: Any, names: Iterable[str], inputs: Mapping[str, Any],
                   options: EngineOptions | None = None, *, timings: bool = False):
    """Per-item tables of every named benchmark, batched. All are prepared first (a bad file fails before any
    scoring); a dual scorer's features are shared between them (one :class:`FeatureCache`). With ``timings``
    also returns the seconds each benchmark took (reported in provenance, never in a metric)."""
    import time

    benches = benchmarks_named(names)
    tasks = [b.prepare(inputs) for b in benches]
    cache = FeatureCache(scorer) if getattr(scorer, "kind", None) == "dual" else None
    tables: dict[str, pd.DataFrame] = {}
    seconds: dict[str, float] = {}
    for b, task in zip(benches, tasks, strict=True):
        t0 = time.perf_counter()
        new = score_task(scorer, task, options, cache=cache)
        seconds[b.name] = round(time.perf_counter() - t0, 2)
        clash = sorted(set(new) & set(tables))
        if clash:
            raise ValueError(f"benchmark {b.name!r} writes tables {clash} that another benchmark wrote")
        tables.update(new)
    return (tables, seconds) if timings else tables


def aggregate_tables(tables: Mapping[str, pd.DataFrame], names: Iterable[str] | None = None,
                     inputs: Mapping[str, Any] | None = None) -> dict[str, float]:
    """Metrics of every benchmark whose tables are all present (or of ``names``, which must be); ``inputs``
    supplies the settings some aggregates read (:attr:`Benchmark.settings`)."""
    benches = benchmarks_named(names) if names is not None else [BENCHMARKS.get(n) for n in BENCHMARKS]
    metrics: dict[str, float] = {}
    for b in benches:
        if names is not None or all(t in tables for t in b.tables):
            metrics.update(b.metrics(tables, inputs))
    return metrics
