"""Replay the pipeline's DVC outputs into an MLflow store, so losing ``mlflow.db`` loses nothing.

DVC outputs are the source of truth; MLflow is a view of them. This rebuilds the view from the files the stages
wrote (``scripts/replay_mlflow.py``): one run per stage output found, in the experiments the stages use, with the
stage tags (``dvc_stage``, ``git_commit``, ``profile``, ``paper``, ``method``, ``base``, ``seed``) plus
``replayed=true``.

=======================================  ===================  ==============================================
output                                   run                  logged
=======================================  ===================  ==============================================
``data/world/summary.json``              ``world``            its numbers as metrics
``data/benchmarks/summary.json``         ``benchmarks``       its numbers as metrics
``models/base/<b>/{model,history}.json`` ``pretrain@<b>``     model.json as params, history as stepped metrics
``data/parsed/<split>/summary.json``     ``parse@<split>``    its caption count as a metric
``data/mined/<g>-<b>/summary.json``      ``mine@<g>-<b>``     its numbers as metrics
``models/lr/<m>-<b>/selection.json``     ``select_lr@<m>-<b>`` grid metrics ``lr_<lr>/<metric>``, selected_lr
``models/finetune/<v>/{model,history}``  ``finetune@<v>``     as pretrain
``metrics/<model>/metrics.json``         its ``dvc_stage``    metrics; provenance.json as params and tags
``metrics/blind/<name>/metrics.json``    its ``dvc_stage``    metrics; provenance.json as params (method tag: name)
=======================================  ===================  ==============================================

A stage already present in the target store (same experiment and ``dvc_stage`` tag) is skipped, so a replay
can be rerun safely; ``force=True`` logs it again.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config import BASE_METHOD
from .tracking import (
    EVALUATE_EXPERIMENT,
    NOT_APPLICABLE,
    TRAINING_EXPERIMENT,
    StageRun,
    check_key,
    flatten,
    git_commit,
    paper_tag,
    use_experiment,
)


@dataclass
class ReplayRun:
    experiment: str
    stage: str
    tags: dict[str, str]
    params: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    history: list[dict[str, float]] = field(default_factory=list)  # stepped metrics ("step" key)


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON ({e.msg} at line {e.lineno})") from None


def _numbers(d: dict, prefix: str = "") -> dict[str, float]:
    out = {}
    for k, v in flatten(d, prefix).items():
        if isinstance(v, bool):
            continue
        if isinstance(v, int | float) and math.isfinite(v):
            out[check_key(k.replace(".", "/"))] = float(v)
    return out


def _finite(d: dict[str, Any]) -> dict[str, float]:
    return {k: v for k, v in d.items() if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)}


def collect(root: str | Path, *, profile: str, params: dict[str, Any] | None = None) -> list[ReplayRun]:
    """Every replayable stage output under ``root`` (a workspace after ``dvc repro`` / ``dvc pull``), tagged as
    the stages tag their runs (``paper`` from ``params``' methods, see ``tracking.paper_tag``; default: the
    workspace's params.yaml)."""
    root = Path(root)
    commit = git_commit(root)
    if params is None:
        import yaml

        path = root / "params.yaml"
        params = yaml.safe_load(path.read_text()) if path.exists() else {}

    def tags(stage: str, method: str = "", base: str = "", seed: object = "", *, of_method: str | None = None,
             of_generator: str | None = None) -> dict[str, str]:
        paper = paper_tag(params, method=of_method, generator=of_generator)
        return {"dvc_stage": stage, "git_commit": commit, "profile": profile, "paper": paper,
                "method": method, "base": base, "seed": str(seed), "replayed": "true"}

    runs: list[ReplayRun] = []
    for stage, path in (("world", root / "data/world/summary.json"),
                        ("benchmarks", root / "data/benchmarks/summary.json")):
        if path.exists():
            runs.append(ReplayRun(TRAINING_EXPERIMENT, stage, tags(stage), metrics=_numbers(_read(path))))
    for base in sorted((root / "models/base").glob("*/")):
        if (base / "model.json").exists():
            stage = f"pretrain@{base.name}"
            runs.append(ReplayRun(TRAINING_EXPERIMENT, stage, tags(stage, BASE_METHOD, base.name),
                                  params=_read(base / "model.json"),
                                  history=_read(base / "history.json") if (base / "history.json").exists() else []))
    for d in sorted((root / "data/parsed").glob("*/")):
        if (d / "summary.json").exists():
            summary = _read(d / "summary.json")
            runs.append(ReplayRun(TRAINING_EXPERIMENT, f"parse@{d.name}", tags(f"parse@{d.name}"),
                                  metrics={"parse/n_captions": float(summary.get("n_captions", 0))}))
    mining, selections = params.get("mining") or {}, params.get("selections") or {}
    for d in sorted((root / "data/mined").glob("*/")):
        if (d / "summary.json").exists():
            spec = mining.get(d.name) or {}
            runs.append(ReplayRun(TRAINING_EXPERIMENT, f"mine@{d.name}",
                                  tags(f"mine@{d.name}", spec.get("generator", ""), spec.get("base", ""),
                                       of_generator=spec.get("generator", d.name)),
                                  metrics=_numbers(_read(d / "summary.json"))))
    for d in sorted((root / "models/lr").glob("*/")):
        if (d / "selection.json").exists():
            sel = _read(d / "selection.json")
            metrics = {check_key(f"lr_{lr}/{k}"): float(v) for lr, m in sel.get("grid", {}).items()
                       for k, v in m.items()}
            metrics["selected_lr"] = float(sel["selected_lr"])
            spec = selections.get(d.name) or {}
            method = spec.get("method", d.name)
            runs.append(ReplayRun(TRAINING_EXPERIMENT, f"select_lr@{d.name}",
                                  tags(f"select_lr@{d.name}", method, spec.get("base", ""), of_method=method),
                                  params={k: v for k, v in sel.items() if k != "grid"}, metrics=metrics))
    for d in sorted((root / "models/finetune").glob("*/")):
        if (d / "model.json").exists():
            meta = _read(d / "model.json")
            method = meta.get("method", "")
            runs.append(ReplayRun(TRAINING_EXPERIMENT, f"finetune@{d.name}",
                                  tags(f"finetune@{d.name}", method, meta.get("base", ""), meta.get("seed", ""),
                                       of_method=method),
                                  params=meta,
                                  history=_read(d / "history.json") if (d / "history.json").exists() else []))
    for d in sorted((root / "metrics").glob("*/")):
        if not (d / "metrics.json").exists():
            continue
        prov = _read(d / "provenance.json") if (d / "provenance.json").exists() else {}
        stage = prov.get("dvc_stage", f"evaluate@{d.name}")
        seed = prov.get("seed")
        t = tags(stage, prov.get("method", ""), prov.get("base", ""), NOT_APPLICABLE if seed in (None, "") else seed,
                 of_method=prov.get("method", ""))
        if prov.get("git_commit"):  # outputs of before the run records moved to runs/ carried it
            t["git_commit"] = prov["git_commit"]
        runs.append(ReplayRun(EVALUATE_EXPERIMENT, stage, t, params=prov, metrics=_read(d / "metrics.json")))
    for d in sorted((root / "metrics" / "blind").glob("*/")):  # the blind-text ceilings: no method, no chain
        if (d / "metrics.json").exists():
            prov = _read(d / "provenance.json") if (d / "provenance.json").exists() else {}
            stage = prov.get("dvc_stage", f"evaluate_blind@{d.name}")
            runs.append(ReplayRun(EVALUATE_EXPERIMENT, stage, tags(stage, d.name, "", ""), params=prov,
                                  metrics=_read(d / "metrics.json")))
    return runs


def _existing(client, experiment: str, stage: str) -> bool:
    exp = client.get_experiment_by_name(experiment)
    if exp is None:
        return False
    found = client.search_runs([exp.experiment_id], filter_string=f"tags.dvc_stage = '{stage}'", max_results=1)
    return bool(found)


def replay(runs: list[ReplayRun], tracking_uri: str, *, force: bool = False) -> Iterator[tuple[str, str]]:
    """Log ``runs`` to ``tracking_uri``; yields ``(stage, "logged" | "skipped")``."""
    import mlflow
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=tracking_uri)
    mlflow.set_tracking_uri(tracking_uri)
    for run in runs:
        if not force and _existing(client, run.experiment, run.stage):
            yield run.stage, "skipped"
            continue
        use_experiment(run.experiment)
        with mlflow.start_run(run_name=run.stage, tags=run.tags):
            handle = StageRun(True)  # the stages' own param / metric logging (chunking, key checks, NaN drop)
            handle.log_params(run.params)
            handle.log_metrics(_finite(run.metrics))
            for rec in run.history:
                handle.log_metrics(_finite({k: v for k, v in rec.items() if k != "step"}), step=int(rec.get("step", 0)))
        yield run.stage, "logged"
