"""The whole DAG at smoke size (params.yaml + params.smoke.yaml): every stage runs once, the report included."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.spacy
def test_smoke_pipeline(tmp_path):
    work = tmp_path / "ws"
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
           "VLCOMP_TRACKING": "on"}
    subprocess.run([sys.executable, str(REPO / "scripts" / "smoke.py"), "--workdir", str(work),
                    "--jobs", "2"], check=True, env=env)

    report = work / "reports" / "papers" / "aro"
    html = (report / "index.html").read_text()
    for artifact in ("ARO-T1", "ARO-T2", "ARO-T3", "ARO-T4", "ARO-T5", "ARO-T6", "ARO-X1", "ARO-X2", "ARO-F1",
                     "ARO-F2", "ARO-F3", "Claims ledger"):
        assert artifact in html, artifact
    assert "Traceback" not in html
    for name in ("ARO-T6", "ARO-T2", "claims_ledger"):
        for ext in ("md", "csv", "tex"):
            assert (report / "tables" / f"{name}.{ext}").stat().st_size > 0
    for name in ("ARO-F1", "ARO-F2", "ARO-F3"):
        assert (report / "figures" / f"{name}.png").stat().st_size > 0
        assert (report / "figures" / f"{name}.pdf").stat().st_size > 0

    models = sorted(p.name for p in (work / "metrics").iterdir() if p.is_dir())
    assert models == ["clip", "clip_ft-s0", "negclip-s0", "negclip-s1"]
    metrics = json.loads((work / "metrics" / "negclip-s0" / "metrics.json").read_text())
    assert 0 <= metrics["aro/vg_relation/macro_acc"] <= 1
    assert all("@" not in k for k in metrics)

    # every benchmark of every paper, for every model: the same keys, the cross-paper matrix in the index
    from vlcomp.benchmarks import BENCHMARKS
    from vlcomp.config import load_params

    names = load_params(work / "params.yaml")["evaluate"]["benchmarks"]
    assert {"sugarcrepe", "valse", "vlchecklist", "ccneg", "crepe_negate", "replace", "swap", "zeroshot_conclip",
            "zeroshot_elevater"} <= set(names)
    keys = [set(json.loads((work / "metrics" / m / "metrics.json").read_text())) for m in models]
    assert all(k == keys[0] for k in keys)
    for b in names:
        assert set(BENCHMARKS.get(b).headline) <= keys[0], b
    index = (work / "reports" / "index.html").read_text()
    assert "Every model on every benchmark" in index and "data:image/png;base64," in index
    assert (work / "reports" / "matrix" / "matrix.csv").stat().st_size > 0

    # DVC-native results: dvc metrics show lists every model's ARO metrics; the training curves are plots
    shown = subprocess.run(["dvc", "metrics", "show", "--json"], cwd=work, env=env, capture_output=True, text=True,
                           check=True).stdout
    data = json.loads(shown)
    files = next(iter(data.values()))["data"]
    for m in models:
        got = files[f"metrics/{m}/metrics.json"]["data"]
        assert 0 <= got["aro/vg_relation/macro_acc"] <= 1, m
    plots = subprocess.run(["dvc", "plots", "show", "--json"], cwd=work, env=env, capture_output=True, text=True,
                           check=True).stdout
    assert "plots/finetune/negclip-s0.json" in plots and "plots/pretrain.json" in plots

    # stage outputs are pure functions of their inputs: no timing in a training history, no temporary name in
    # a checkpoint (torch.save names an archive's records after the file it writes)
    from vlcomp.io import TIMING_FIELDS

    for hist in [work / "models" / "base" / "history.json", *(work / "models" / "finetune").glob("*/history.json")]:
        assert not any(TIMING_FIELDS & set(rec) for rec in json.loads(hist.read_text())), hist
    import zipfile

    for pt in [work / "models" / "base" / "model.pt", *(work / "models" / "finetune").glob("*/model.pt")]:
        assert all(n.startswith("archive/") for n in zipfile.ZipFile(pt).namelist()), pt

    # nothing changed: a second repro runs no stage
    out = subprocess.run(["dvc", "repro"], cwd=work, env=env, capture_output=True, text=True, check=True).stdout
    assert "Running stage" not in out

    # a forced re-run of pretraining and mining rewrites the same bytes: dvc.lock unchanged, nothing downstream
    # stale. Same torch thread count as the smoke run's scheduler gave each stage (cpus // jobs): a different count
    # changes float reduction order, hence the last bits (vlcomp.parallel_repro)
    lock = (work / "dvc.lock").read_bytes()
    same_threads = {**env, "VLCOMP_THREADS": str(max(1, (os.cpu_count() or 1) // 2))}
    for stage in ("pretrain", "mine@negclip"):
        subprocess.run(["dvc", "repro", "--force", "--single-item", stage], cwd=work, env=same_threads,
                       capture_output=True, text=True, check=True)
    assert (work / "dvc.lock").read_bytes() == lock
    status = subprocess.run(["dvc", "status"], cwd=work, env=env, capture_output=True, text=True, check=True).stdout
    assert "up to date" in status, status

    # every stage logged an MLflow run with the required tags
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{work / 'mlflow.db'}")
    stages = set()
    for exp in client.search_experiments():
        for run in client.search_runs([exp.experiment_id]):
            assert {"dvc_stage", "git_commit", "profile", "paper", "method", "seed"} <= set(run.data.tags)
            stages.add(run.data.tags["dvc_stage"])
    assert {"world", "pretrain", "mine@negclip", "select_lr@negclip", "finetune@negclip-s1", "benchmarks",
            "evaluate_base", "evaluate@negclip-s0", "report@aro"} <= stages
