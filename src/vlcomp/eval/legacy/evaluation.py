"""Run the benchmark suite on one model; save per-item scores and the metrics derived from them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .toy_suite import BENCHMARKS, EvalContext


def evaluate_model(ctx: EvalContext, names: list[str] | None = None) -> dict[str, pd.DataFrame]:
    """Per-item tables of every benchmark (or of ``names``)."""
    items: dict[str, pd.DataFrame] = {}
    for name in names or BENCHMARKS.names():
        items.update(BENCHMARKS.get(name).score(ctx))
    return items


def write_items(out: Path, items: dict[str, pd.DataFrame]) -> None:
    (out / "items").mkdir(parents=True, exist_ok=True)
    for name, df in items.items():
        df.to_csv(out / "items" / f"{name}.csv.gz", index=False, float_format="%.6g",
                  compression={"method": "gzip", "mtime": 0})


def read_items(metrics_dir: str | Path) -> dict[str, pd.DataFrame]:
    d = Path(metrics_dir) / "items"
    if not d.is_dir():
        raise FileNotFoundError(f"{d}: no per-item scores (run the evaluate stage)")
    return {p.name.removesuffix(".csv.gz"): pd.read_csv(p) for p in sorted(d.glob("*.csv.gz"))}


def aggregate_items(items: dict[str, pd.DataFrame], settings: dict) -> dict[str, float]:
    """Every metric, derived from per-item tables alone (what the evaluate stage writes to metrics.json).

    ``settings`` is the benchmark build's ``settings.json`` (e.g. the VG-A minimum pair count)."""
    metrics: dict[str, float] = {}
    for name in BENCHMARKS.names():
        bench = BENCHMARKS.get(name)
        if all(t in items for t in bench.tables):  # a partial evaluation saves only some benchmarks' tables
            metrics.update(bench.aggregate(items, settings))
    return metrics
