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
@pytest.mark.pipeline
@pytest.mark.spacy
def test_smoke_pipeline(tmp_path):
    work = tmp_path / "ws"
    audit = tmp_path / "imports"
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
           "VLCOMP_TRACKING": "on", "VLCOMP_IMPORT_AUDIT": str(audit)}
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

    # the blind-text ceiling's folder (metrics/blind/<name>/) sits beside the models' and is none of them
    blind = json.loads((work / "metrics" / "blind" / "blind-text" / "metrics.json").read_text())
    assert 0 <= blind["aro/vg_relation/macro_acc"] <= 1 and "zeroshot/cifar10/acc" not in blind
    every = sorted(p.name for p in (work / "metrics").iterdir() if p.is_dir() and p.name != "blind")
    # TSVLC's other base model (vit-b0) and its from-scratch row are scored on their own benchmarks only, and so is
    # the larger ResNet base (rn32-b0: no method starts from it; REPLACE / SWAP, Hard Positives' Table 8)
    own = ["clip-rn32-b0", "clip-vit-b0", "tsvlc_vit_scratch_combined-vit-b0s0"]
    models = [m for m in every if m not in own]
    assert models == ["clip-b0", "clip-b1", "clip_ft-b0s0", "clip_ft-b1s0", "negclip-b0s0", "negclip-b1s0",
                      "tsvlc_combined-b0s0"] and sorted(set(every) - set(models)) == own
    metrics = json.loads((work / "metrics" / "negclip-b0s0" / "metrics.json").read_text())
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
    for m in own:
        got = set(json.loads((work / "metrics" / m / "metrics.json").read_text()))
        want = {"hardpos/replace/orig", "hardpos/swap/aug"} if m == "clip-rn32-b0" else {
            "vlchecklist/relation/avg", "zeroshot/elevater/mean_acc"}
        assert got < keys[0] and want <= got, m
    assert not any(k.startswith(("aro/", "vlchecklist/")) for k in json.loads(
        (work / "metrics" / "clip-rn32-b0" / "metrics.json").read_text())), "rn32-b0: REPLACE / SWAP only"
    tsvlc = (work / "reports" / "papers" / "tsvlc" / "index.html").read_text()
    assert "Traceback" not in tsvlc and all(f"TSVLC-T1{s}" in tsvlc for s in "abcdefg")
    assert (work / "reports" / "papers" / "tsvlc" / "figures" / "TSVLC-F4.png").stat().st_size > 0
    index = (work / "reports" / "index.html").read_text()
    assert "Every model on every benchmark" in index and "data:image/png;base64," in index
    assert (work / "reports" / "matrix" / "matrix.csv").stat().st_size > 0
    from chromium import CHROMIUM, check_report_page  # tests/ is on sys.path (rootdir conftest)

    if CHROMIUM is not None:  # .ci/run installs it: each page reads at a glance in a 1400 x 900 window
        for page, first in ((report / "index.html", ("verdicts",)),
                            (work / "reports" / "papers" / "tsvlc" / "index.html", ("verdicts",)),
                            (work / "reports" / "index.html", ("papers",))):
            check_report_page(page, tmp_path / "layout", first)

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
    assert "plots/finetune/negclip-b1s0.json" in plots and "plots/pretrain/b1.json" in plots

    # two chains really differ: each base seed pretrains its own base, each chain fine-tunes from its own
    import hashlib

    def digest(path: Path) -> str:
        return hashlib.md5(path.read_bytes()).hexdigest()

    assert digest(work / "models/base/b0/model.pt") != digest(work / "models/base/b1/model.pt")
    assert digest(work / "models/finetune/negclip-b0s0/model.pt") != digest(work / "models/finetune/negclip-b1s0/model.pt")

    # stage outputs are pure functions of their inputs: no timing in a training history, no temporary name in
    # a checkpoint (torch.save names an archive's records after the file it writes)
    from vlcomp.io import TIMING_FIELDS

    for hist in [*(work / "models" / "base").glob("*/history.json"), *(work / "models" / "finetune").glob("*/history.json")]:
        assert not any(TIMING_FIELDS & set(rec) for rec in json.loads(hist.read_text())), hist
    import zipfile

    for pt in [*(work / "models" / "base").glob("*/model.pt"), *(work / "models" / "finetune").glob("*/model.pt")]:
        assert all(n.startswith("archive/") for n in zipfile.ZipFile(pt).namelist()), pt

    # nothing changed: a second repro runs no stage
    out = subprocess.run(["dvc", "repro"], cwd=work, env=env, capture_output=True, text=True, check=True).stdout
    assert "Running stage" not in out

    # a forced re-run of pretraining, mining and an evaluation (a plain `dvc repro`, not the scheduler: every stage
    # pins its kernels and threads itself, vlcomp.determinism) rewrites the same bytes: dvc.lock unchanged, nothing
    # downstream stale. The run-specific record (commit, MLflow run id, machine) is in runs/, which no stage reads
    locks = {f: f.read_bytes() for f in work.rglob("dvc.lock")}
    assert len(locks) > 2  # the root lock, each paper's and each method's
    plain = {k: v for k, v in env.items() if k != "VLCOMP_THREADS"}
    for stage in ("pretrain@b1", "pipelines/aro/dvc.yaml:mine@negclip-b1",
                  "pipelines/aro/negclip/dvc.yaml:evaluate@negclip-b0s0"):
        subprocess.run(["dvc", "repro", "--force", "--single-item", stage], cwd=work, env=plain,
                       capture_output=True, text=True, check=True)
    assert {f: f.read_bytes() for f in work.rglob("dvc.lock")} == locks
    status = subprocess.run(["dvc", "status"], cwd=work, env=env, capture_output=True, text=True, check=True).stdout
    assert "up to date" in status, status
    record = json.loads((work / "runs" / "evaluate@negclip-b0s0.json").read_text())
    assert record["status"] == "finished" and record["mlflow_run_id"] and record["machine"]["cpu_pin"] == "on"
    assert record["machine"]["torch_threads"] == 1 and record["machine"]["torch_capability"] in ("AVX2", "DEFAULT")
    assert record["machine"]["mkl_cbwr"] == "COMPATIBLE"
    assert record["machine"]["mkl_cbwr_in_force"] in ("COMPATIBLE", "")  # "": a torch without MKL
    prov = json.loads((work / "metrics" / "negclip-b0s0" / "provenance.json").read_text())
    assert not {"git_commit", "mlflow_run_id"} & set(prov) and (prov["base"], prov["seed"]) == ("b0", 0)

    # every stage logged an MLflow run with the required tags
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{work / 'mlflow.db'}")
    stages = set()
    for exp in client.search_experiments():
        for run in client.search_runs([exp.experiment_id]):
            assert {"dvc_stage", "git_commit", "profile", "paper", "method", "base", "seed"} <= set(run.data.tags)
            if run.data.tags.get("summary") != "true":  # a summary run aggregates runs; it ran on no machine
                assert run.data.params.get("machine/cpu_pin") == "on", run.data.tags["dvc_stage"]
            stages.add(run.data.tags["dvc_stage"])
    assert {"world", "pretrain@b0", "pretrain@b1", "mine@negclip-b1", "select_lr@negclip-b0", "finetune@negclip-b1s0",
            "benchmarks", "evaluate_base@b0", "evaluate_base@b1", "evaluate@negclip-b0s0", "report@aro",
            "summary@clip", "summary@clip_ft", "summary@negclip", "train_mlm", "mine@tsvlc_rb",
            "mine@tsvlc_unmask", "mine@tsvlc_mix", "mine@tsvlc_analogy", "select_lr@tsvlc_lora-b0",
            "finetune@tsvlc_combined-b0s0", "evaluate@tsvlc_combined-b0s0"} <= stages

    # TSVLC's generators wrote their outputs; the Combined run read its negatives from one, positives from another
    for name, files in (("tsvlc_rb", ("negatives.json", "negative_types.json")), ("tsvlc_analogy", ("positives.json",)),
                        ("tsvlc_unmask", ("negatives.json",)), ("tsvlc_mix", ("negatives.json",))):
        for f in files:
            assert (work / "data" / "mined" / name / f).stat().st_size > 0, (name, f)
    assert (work / "models" / "mlm" / "config.json").is_file()

    # every library module a stage process imported is one of its declared dependencies (vlcomp.dag's static graph,
    # plugins by name included, held to what the real run imported)
    from dvc.repo import Repo

    with Repo(str(work)) as repo:
        declared = {s.cmd.split(" ", 1)[1]: [str(d.def_path) for d in s.deps] for s in repo.index.stages}
    records = [json.loads(f.read_text()) for f in sorted(audit.glob("*.json"))]
    assert len(records) >= len(declared) - 1  # every stage ran (its process recorded its imports)
    for rec in records:
        deps = declared[" ".join(rec["argv"])]
        missing = [m for m in rec["modules"] if not any(m == d or m.startswith(d.rstrip("/") + "/") for d in deps)]
        assert not missing, f"{' '.join(rec['argv'])}: imported {missing} without declaring them"
