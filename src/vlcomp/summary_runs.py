"""One MLflow summary run per method in the experiment ``evaluate``, beside the per-model runs.

The experiment ``evaluate`` holds one run per evaluated model (``evaluate@<model>``), all with the same metric keys,
so its compare view is the model x metric matrix. A summary run adds, per method, the mean over its whole chains
under the SAME keys (so it lines up with the model runs in the compare view and its parallel coordinates) and the
spread under ``spread/<key>`` (sample standard deviation, ddof = 1, over the chains; absent for a single chain), with
``n_chains`` and the models it summarises as params. Tags: ``summary = true``, ``dvc_stage = summary@<method>``,
``method``, ``base = all``, ``seed = all``. Filter ``tags.summary = 'true'`` in the UI to see only these.

Written by the ``report_index`` stage after every evaluation (a view: no stage reads MLflow).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from .tracking import (
    EVALUATE_EXPERIMENT,
    StageRun,
    check_key,
    enabled,
    git_commit,
    paper_tag,
    tracking_uri,
    use_experiment,
)

SUMMARY_TAG = "summary"
SPREAD_PREFIX = "spread/"
ALL = "all"


def summary_payloads(long: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Per method: ``{"metrics": {key: mean, "spread/<key>": std, ...}, "params": {n_chains, models, spread}}`` from
    the long table of :func:`vlcomp.reporting.collect.collect` (one row per model and metric)."""
    out: dict[str, dict[str, Any]] = {}
    for method, sub in long.groupby("method", sort=False):
        models = sorted(sub["model"].unique())
        metrics: dict[str, float] = {}
        for key, vals in sub.groupby("key", sort=False)["value"]:
            v = vals.astype(float)
            if v.isna().all():
                continue
            metrics[check_key(str(key))] = float(v.mean())
            if v.notna().sum() > 1:
                metrics[check_key(SPREAD_PREFIX + str(key))] = float(v.std(ddof=1))
        out[str(method)] = {"metrics": {k: x for k, x in metrics.items() if math.isfinite(x)},
                            "params": {"n_chains": len(models), "models": ",".join(models),
                                       "spread": "sample std (ddof=1) over the method's whole chains "
                                                 "(base seed x fine-tuning seed; the base model: base seeds)"}}
    return out


def log_summaries(long: pd.DataFrame, *, profile: str, params: Mapping[str, Any] | None = None) -> list[str]:
    """Log one summary run per method to the experiment ``evaluate``; returns the run ids ([] with tracking off)."""
    if not enabled():
        return []
    import mlflow

    mlflow.set_tracking_uri(tracking_uri())
    use_experiment(EVALUATE_EXPERIMENT)
    ids = []
    for method, payload in summary_payloads(long).items():
        tags = {"dvc_stage": f"summary@{method}", SUMMARY_TAG: "true", "git_commit": git_commit(), "profile": profile,
                "paper": paper_tag(params or {}, method=method), "method": method, "base": ALL, "seed": ALL}
        with mlflow.start_run(run_name=f"summary@{method}", tags=tags) as run:
            handle = StageRun(True)
            handle.log_params({"method": method, "base": ALL, "seed": ALL, "lr": ALL, **payload["params"]})
            handle.log_metrics(payload["metrics"])
            ids.append(run.info.run_id)
    return ids
