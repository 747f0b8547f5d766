"""The metrics tree as one long table (one row per model and metric) and its statistics over training seeds, for
the toy report's tables, the claims ledger and the cross-paper matrix; and the methods a report shows.

The files are read by :mod:`vlcomp.reporting.tree` (the one reader of ``metrics/<model>/``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .tree import BASE_METHOD, model_dirs, read_metrics, read_provenance

#: models the reports show that are no method of params: the base model, the papers' other models (their printed
#: numbers only) and chance rows
REFERENCE_LABELS = {BASE_METHOD: "CLIP", "xvlm": "X-VLM", "blip": "BLIP", "flava": "FLAVA", "chance": "chance"}


@dataclass(frozen=True)
class Methods:
    """The methods a report shows, in order (the base model first, then ``methods`` of params in their order),
    with their labels (``methods.<name>.label``; a method without one is shown by its name)."""

    order: tuple[str, ...]
    labels: Mapping[str, str] = field(default_factory=dict)

    def label(self, method: str) -> str:
        return self.labels.get(method, REFERENCE_LABELS.get(method, method))

    def __iter__(self):
        return iter(self.order)

    def __contains__(self, method: object) -> bool:
        return method in self.order


def methods_of(params: Mapping, paper: str | None = None) -> Methods:
    """The base model and every method of ``params`` (those of ``paper`` only, when given), in params order."""
    ms = params.get("methods") or {}
    chosen = [m for m, v in ms.items() if paper is None or (v or {}).get("paper", "aro") == paper]
    return Methods((BASE_METHOD, *chosen), {m: (ms[m] or {}).get("label") or m for m in chosen})


def collect(metrics_dir: str | Path) -> pd.DataFrame:
    """Long table: one row per (model dir, metric): model, method, seed, key, value, provenance columns."""
    rows = []
    for d in model_dirs(metrics_dir):
        prov = read_provenance(d / "provenance.json")
        if prov is None:
            raise FileNotFoundError(f"{d / 'provenance.json'}: missing (every metrics.json has its provenance)")
        for key, value in read_metrics(d / "metrics.json").items():
            rows.append({"model": prov["model"], "method": prov["method"], "seed": str(prov.get("seed", "")),
                         "key": key, "value": value, "git_commit": prov.get("git_commit", ""),
                         "mlflow_run_id": prov.get("mlflow_run_id") or "", "dvc_stage": prov.get("dvc_stage", "")})
    if not rows:
        raise FileNotFoundError(f"{metrics_dir}: no metrics.json under it (run the evaluate stages first)")
    return pd.DataFrame(rows)


def per_seed(long: pd.DataFrame, key: str) -> dict[str, np.ndarray]:
    """Values of one metric per method present, one entry per training seed (CLIP: the single base model)."""
    sub = long[long["key"] == key]
    return {m: g["value"].to_numpy() for m, g in sub.groupby("method", sort=False)}


def summary(long: pd.DataFrame) -> pd.DataFrame:
    """Mean, std (ddof=1; 0 for one seed), min, max and n over training seeds, per method and metric."""
    g = long.groupby(["method", "key"])["value"]
    out = g.agg(["mean", "min", "max", "count"]).rename(columns={"count": "n_seeds"})
    out["std"] = g.std(ddof=1).fillna(0.0)
    return out.reset_index()


def value(summ: pd.DataFrame, method: str, key: str, stat: str = "mean") -> float:
    row = summ[(summ["method"] == method) & (summ["key"] == key)]
    return float(row[stat].iloc[0]) if len(row) else float("nan")


def provenance(long: pd.DataFrame) -> pd.DataFrame:
    """One row per evaluated model: DVC stage, git commit, MLflow run id."""
    cols = ["model", "method", "seed", "dvc_stage", "git_commit", "mlflow_run_id"]
    return long[cols].drop_duplicates().sort_values(["method", "seed"]).reset_index(drop=True)
