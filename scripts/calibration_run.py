"""A full-size calibration row: the real pipeline (every stage, whole chains) on a params overlay, in a
workspace of its own, summarised into ``calibration/aro_world_full.csv``.

``scripts/calibrate_world.py`` screens configurations in-process at reduced sizes and one seed; this runs one
configuration exactly as ``make repro`` would (same stages, sizes, LR selection and evaluation), on every chain
of ``base_seeds`` (or ``--base-seeds``), so its numbers carry the whole-chain spread and can be set beside the
default's. The workspace is a copy of the repository's tracked and unignored files (uncommitted edits included)
with ``params.yaml`` rendered from the profile plus the overlay; its outputs stay there (rerunning reuses them
through DVC). Only the evaluation stages are reproduced (no reports).

One row per (configuration, model): ``config, model, method, base, seed`` and the metrics of :data:`KEYS`, plus
``overlay`` (JSON), ``cpu_minutes`` (the configuration's CPU time over all its stages, from ``runs/*.json``;
the same on each of its rows), ``wall_minutes`` and ``git_commit``. Rows of the same ``config`` are replaced.

Usage:
  python scripts/calibration_run.py --config NAME [--set KEY=VALUE ...] [--base-seeds 0,1,2]
      [--workspace DIR] [--jobs N] [--out calibration/aro_world_full.csv]
  python scripts/calibration_run.py --config NAME --collect-only --workspace DIR   (summarise a finished run)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

from caption_statistics import parse_sets  # noqa: E402

from vlcomp.config import profile_params  # noqa: E402
from vlcomp.profiles.switch import render  # noqa: E402
from vlcomp.tracking import git_commit  # noqa: E402

#: what a calibration row records of each model (the issue's list: relations with their control, attribution,
#: order, retrieval, and the other papers' relation benchmarks)
KEYS = ("aro/vg_relation/macro_acc", "aro/vg_relation/wrong_image_macro_acc", "aro/vg_attribution/macro_acc",
        "aro/vg_attribution/wrong_image_macro_acc", "aro/coco_order/acc", "retrieval/coco/i2t/recall_at_1",
        "sugarcrepe/replace_rel/acc", "sugarcrepe/swap_obj/acc", "sugarcrepe/swap_att/acc", "valse/relations/acc",
        "valse/actant-swap/acc", "vlchecklist/relation/avg", "zeroshot/cifar10/acc")


def copy_workspace(dst: Path) -> None:
    """The repository's tracked and unignored files (as they are in the working tree) copied to ``dst``."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                           check=True, capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = REPO / rel
        if src.is_file():
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / rel)
    for f in dst.rglob("dvc.lock"):  # a fresh configuration: nothing is known to be up to date
        f.unlink()


def prepare(ws: Path, overlay: dict[str, Any], base_seeds: list[int] | None) -> dict[str, Any]:
    """Create (or refresh the code of) workspace ``ws`` and write its ``params.yaml``; return those params."""
    fresh = not (ws / ".dvc").is_dir()
    if fresh:
        ws.mkdir(parents=True, exist_ok=True)
        copy_workspace(ws)
        subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
        subprocess.run(["dvc", "init", "-q", "--force"], cwd=ws, check=True)
    layers = [overlay] + ([{"base_seeds": base_seeds}] if base_seeds is not None else [])
    params = profile_params("toy", REPO, *layers)
    (ws / "params.yaml").write_text(render(params))
    from vlcomp.dag import write_pipelines

    write_pipelines(params, ws)  # the per-paper pipeline files of this configuration
    return params


def run(ws: Path, jobs: int) -> float:
    """Reproduce every evaluation stage of ``ws``; returns the wall seconds."""
    dag = subprocess.run(["dvc", "stage", "list", "--all", "--name-only"], cwd=ws, check=True, capture_output=True,
                         text=True).stdout.split()
    targets = [s for s in dag if s.rsplit(":", 1)[-1].startswith(("evaluate@", "evaluate_base@"))]
    if not targets:
        raise SystemExit(f"{ws}: no evaluate stages in dvc.yaml")
    env = {**os.environ, "PYTHONPATH": str(ws / "src"), "MLFLOW_TRACKING_URI": f"sqlite:///{ws / 'mlflow.db'}"}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, str(ws / "scripts" / "repro.py"), "--jobs", str(jobs), *targets], cwd=ws,
                   env=env, check=True)
    return time.perf_counter() - t0


def collect(ws: Path, config: str, overlay: dict[str, Any], wall_s: float | None) -> pd.DataFrame:
    """One row per evaluated model of ``ws`` (``metrics/*/``), with the configuration's CPU minutes."""
    rows = []
    for mdir in sorted((ws / "metrics").iterdir()):
        metrics_file, prov_file = mdir / "metrics.json", mdir / "provenance.json"
        if not metrics_file.is_file() or not prov_file.is_file():
            continue
        metrics, prov = json.loads(metrics_file.read_text()), json.loads(prov_file.read_text())
        rows.append({"config": config, "model": mdir.name, "method": prov.get("method"), "base": prov.get("base"),
                     "seed": prov.get("seed"), **{k: metrics.get(k) for k in KEYS}})
    if not rows:
        raise SystemExit(f"{ws / 'metrics'}: no evaluated model (run without --collect-only first)")
    records = [json.loads(p.read_text()) for p in sorted((ws / "runs").glob("*.json"))]
    cpu = sum(r.get("cpu_seconds") or 0.0 for r in records)
    commit = next((r["git_commit"] for r in records if r.get("git_commit") not in (None, "", "unknown")), "")
    return pd.DataFrame(rows).assign(overlay=json.dumps(overlay, sort_keys=True), cpu_minutes=round(cpu / 60, 1),
                                     wall_minutes=round(wall_s / 60, 1) if wall_s else None, git_commit=commit)


def write_rows(out: Path, rows: pd.DataFrame) -> None:
    """Append ``rows`` to ``out``, replacing earlier rows of the same configuration."""
    if out.exists():
        old = pd.read_csv(out)
        rows = pd.concat([old[~old["config"].isin(rows["config"].unique())], rows], ignore_index=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    rows.to_csv(tmp, index=False, float_format="%.6g")
    tmp.replace(out)  # never a half-written table


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", required=True, help="the row's name (e.g. default, layout-twins)")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--base-seeds", default=None, help="comma-separated base seeds (default: the profile's)")
    p.add_argument("--workspace", type=Path, default=None, help="default: ../vlcomp-calibration/<config>")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--out", type=Path, default=REPO / "calibration" / "aro_world_full.csv")
    p.add_argument("--collect-only", action="store_true")
    args = p.parse_args()
    source_commit = git_commit(REPO)  # what the workspace copies ("-dirty": with uncommitted edits)
    overlay = parse_sets(args.sets)
    bases = [int(s) for s in args.base_seeds.split(",")] if args.base_seeds else None
    ws = (args.workspace or REPO.parent / "vlcomp-calibration" / args.config).resolve()
    wall = None
    if not args.collect_only:
        prepare(ws, overlay, bases)
        wall = run(ws, args.jobs)
    rows = collect(ws, args.config, overlay, wall)
    if not rows["git_commit"].iloc[0]:  # the workspace is a copy without history: the code it copied
        rows["git_commit"] = source_commit
    write_rows(args.out, rows)
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(rows.drop(columns=["overlay", "git_commit"]).round(3).to_string(index=False))


if __name__ == "__main__":
    main()
