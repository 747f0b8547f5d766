"""MLflow tracking for DVC stages. DVC outputs are the source of truth; MLflow is the view.

- Store: ``MLFLOW_TRACKING_URI`` if set, else ``sqlite:///mlflow.db`` in the working directory (the repo
  root, where ``dvc repro`` runs stages).
- Every stage run carries the tags ``dvc_stage``, ``git_commit``, ``profile``, ``paper``, ``method``, ``seed``.
- Metric keys must be MLflow-safe (``aro/vg_relation/macro_acc``; never ``@``).
- ``VLCOMP_TRACKING=off`` disables logging (unit tests of stage logic use it).
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

SAFE_KEY = re.compile(r"^[A-Za-z0-9_\-./ ]+$")
DEFAULT_URI = "sqlite:///mlflow.db"


def tracking_uri() -> str:
    return os.environ.get("MLFLOW_TRACKING_URI", DEFAULT_URI)


def enabled() -> bool:
    return os.environ.get("VLCOMP_TRACKING", "on").lower() not in ("off", "0", "false")


def check_key(key: str) -> str:
    if not SAFE_KEY.match(key):
        raise ValueError(f"metric/param key {key!r} is not MLflow-safe (letters, digits, _ - . / and space only)")
    return key


def git_commit(cwd: str | Path = ".") -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, check=True)
        # DVC rewrites the dvc.lock files while the pipeline runs, so they never count as a dirty source tree
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                                ":(exclude,glob)**/dvc.lock"],
                               cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()
        return out.stdout.strip() + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, Mapping):
            out.update(flatten(v, key))
        else:
            out[key] = v
    return out


class StageRun:
    """Handle yielded by :func:`stage_run`; no-ops when tracking is off."""

    def __init__(self, active: bool) -> None:
        self.active = active
        self.run_id: str | None = None

    def log_params(self, params: Mapping[str, Any]) -> None:
        if self.active:
            import mlflow

            flat = {check_key(k): str(v)[:6000] for k, v in flatten(params).items()}
            items = list(flat.items())
            for i in range(0, len(items), 100):
                mlflow.log_params(dict(items[i : i + 100]))

    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        if self.active:
            import mlflow

            clean = {check_key(k): float(v) for k, v in metrics.items() if v is not None and v == v}
            mlflow.log_metrics(clean, step=step)

    def log_artifact(self, path: str | Path) -> None:
        if self.active and Path(path).exists():
            import mlflow

            mlflow.log_artifact(str(path))


#: The MLflow experiment of the stages that build and train (world, benchmarks, pretrain, mine@, select_lr@,
#: finetune@); each run's ``paper`` tag says which paper it serves (``all`` for stages every paper shares).
TRAINING_EXPERIMENT = "training"
#: The ``paper`` tag of a stage every paper shares (the world, the benchmarks, the base model).
ALL_PAPERS = "all"


def paper_tag(params: Mapping[str, Any], *, method: str | None = None, generator: str | None = None) -> str:
    """The ``paper`` tag of a stage: its method's ``paper`` (``methods.<m>.paper``), the papers of every method
    trained on a generator's output (comma-joined), or :data:`ALL_PAPERS` (the base model, shared stages)."""
    methods = params.get("methods") or {}
    if method is not None and method in methods:
        return str((methods[method] or {}).get("paper", ALL_PAPERS))
    if generator is not None:
        papers = sorted({str((m or {}).get("paper", ALL_PAPERS)) for m in methods.values()
                         if generator in ((m or {}).get("generator"), (m or {}).get("positives_from"))})
        return ",".join(papers) or ALL_PAPERS
    return ALL_PAPERS


#: The value of a run parameter that does not apply to a model (the base model's seed and learning rate, a released
#: checkpoint's): logged explicitly, so the compare view's parallel coordinates show it instead of inventing one.
NOT_APPLICABLE = "n/a"


def evaluation_params(model: str, method: str, base: str, seed: int | str | None, meta: Mapping[str, Any],
                      benchmarks: list[str]) -> dict[str, Any]:
    """The MLflow params of one evaluation run: ``model``, ``method``, ``base`` (the chain), ``seed`` (fine-tuning)
    and ``lr`` always present (the checkpoint's ``model.json`` values where it has them, else
    :data:`NOT_APPLICABLE`), the rest of ``meta``, ``benchmarks``."""
    out = {"model": model, "method": method or NOT_APPLICABLE, "base": base or NOT_APPLICABLE,
           "seed": NOT_APPLICABLE if seed in ("", None) else seed, "lr": NOT_APPLICABLE}
    return {**out, **meta, "benchmarks": benchmarks}


#: The MLflow experiment holding one run per evaluated model (every paper's benchmarks, the same metric keys), so
#: the UI's compare view is the cross-paper model x metric matrix.
EVALUATE_EXPERIMENT = "evaluate"


#: The experiment-type tag of MLflow 3 (shown, and editable, in the experiment's header). It does not choose the
#: page an experiment opens on: the UI's workflow type does (:data:`UI_QUERY`).
EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
EXPERIMENT_KIND = "custom_model_development"
#: MLflow 3's UI opens every experiment on its GenAI overview (traces, latency, tokens: empty here) unless its
#: workflow type is "Model training" (the toggle at the top left, remembered by the browser); this query string in
#: the URL selects it, so a link carrying it lands on the runs table (checked in headless Chromium by
#: tests/test_mlflow_ui_browser.py).
UI_QUERY = "workflowType=machine_learning"


def ui_url(base: str = "http://127.0.0.1:5000", experiment_id: str | None = None) -> str:
    """The MLflow UI link that opens on runs: the experiment list, or one experiment's runs table."""
    page = f"/experiments/{experiment_id}" if experiment_id is not None else "/experiments"
    return f"{base.rstrip('/')}/#{page}?{UI_QUERY}"


def use_experiment(name: str) -> str:
    """Make ``name`` the active MLflow experiment (created if missing), typed as a classic model-development
    experiment (:data:`EXPERIMENT_KIND_TAG`); returns its id. A type set by hand in the UI is left as it is."""
    import mlflow

    experiment = mlflow.set_experiment(name)
    if EXPERIMENT_KIND_TAG not in (experiment.tags or {}):
        mlflow.MlflowClient().set_experiment_tag(experiment.experiment_id, EXPERIMENT_KIND_TAG, EXPERIMENT_KIND)
    return experiment.experiment_id


#: Where each stage's run record goes (``runs/<stage>.json``: git commit, MLflow run id, machine, wall time). No
#: stage depends on it, so what varies from run to run (ids, times, the CPU) never enters a stage output.
RUNS_DIR = "runs"


def write_run_record(stage: str, record: Mapping[str, Any], root: str | Path = ".") -> Path:
    """``runs/<stage>.json`` under ``root``, replaced atomically (a view for people; the only reader is the
    parallel scheduler, which orders stages by their last wall time: :func:`vlcomp.parallel_repro.last_durations`)."""
    from .io import write_json

    path = Path(root) / RUNS_DIR / f"{stage}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    write_json(tmp, dict(record))
    tmp.replace(path)
    return path


@contextlib.contextmanager
def stage_run(stage: str, *, experiment: str, profile: str, paper: str, method: str = "", base: str = "",
              seed: int | str = "", params: Mapping[str, Any] | None = None) -> Iterator[StageRun]:
    """Open an MLflow run for one DVC stage, tagged for comparison across the whole pipeline; the machine the stage
    runs on (:func:`vlcomp.determinism.machine_record`) is logged as ``machine/*`` params. ``runs/<stage>.json``
    records the commit, the run id, the machine, the wall and CPU time and the outcome, tracking on or off."""
    from .determinism import machine_record

    machine, commit, t0, c0 = machine_record(), git_commit(), time.time(), time.process_time()
    record: dict[str, Any] = {"stage": stage, "git_commit": commit, "mlflow_run_id": None, "machine": machine}

    def finish(status: str) -> None:  # CPU seconds: the cost, whatever else shares the cores; wall seconds: the wait
        write_run_record(stage, {**record, "status": status, "seconds": round(time.time() - t0, 1),
                                 "cpu_seconds": round(time.process_time() - c0, 1)})

    if not enabled():
        try:
            yield StageRun(False)
        except BaseException:
            finish("failed")
            raise
        finish("finished")
        return
    import mlflow

    mlflow.set_tracking_uri(tracking_uri())
    use_experiment(experiment)
    tags = {"dvc_stage": stage, "git_commit": commit, "profile": profile, "paper": paper,
            "method": method, "base": base, "seed": str(seed)}
    with mlflow.start_run(run_name=stage, tags=tags) as run:
        handle = StageRun(True)
        handle.run_id = record["mlflow_run_id"] = run.info.run_id
        handle.log_params({f"machine/{k}": v for k, v in machine.items()})
        if params:
            handle.log_params(params)
        try:
            yield handle
        except BaseException:
            finish("failed")
            raise
        finish("finished")
