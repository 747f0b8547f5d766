"""Collect evaluation outputs (DVC-tracked ``metrics/<model>/``) into tidy tables for reports."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

METHOD_ORDER = ("clip", "clip_ft", "negclip")
METHOD_LABEL = {"clip": "CLIP", "clip_ft": "CLIP-FT", "negclip": "NegCLIP", "xvlm": "X-VLM", "blip": "BLIP",
                "flava": "FLAVA", "chance": "chance"}


def collect(metrics_dir: str | Path) -> pd.DataFrame:
    """Long table: one row per (model dir, metric): model, method, seed, key, value, provenance columns."""
    rows = []
    for d in sorted(Path(metrics_dir).iterdir()):
        if not (d / "metrics.json").exists():
            continue
        with open(d / "metrics.json") as f:
            metrics = json.load(f)
        with open(d / "provenance.json") as f:
            prov = json.load(f)
        for key, value in metrics.items():
            rows.append({"model": prov["model"], "method": prov["method"], "seed": str(prov.get("seed", "")),
                         "key": key, "value": float(value), "git_commit": prov.get("git_commit", ""),
                         "mlflow_run_id": prov.get("mlflow_run_id") or "", "dvc_stage": prov.get("dvc_stage", "")})
    if not rows:
        raise FileNotFoundError(f"{metrics_dir}: no metrics.json under it (run the evaluate stages first)")
    return pd.DataFrame(rows)


def per_seed(long: pd.DataFrame, key: str) -> dict[str, np.ndarray]:
    """Values of one metric per method, one entry per training seed (CLIP: the single base model)."""
    sub = long[long["key"] == key]
    return {m: sub.loc[sub["method"] == m, "value"].to_numpy() for m in METHOD_ORDER if (sub["method"] == m).any()}


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
