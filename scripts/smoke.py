"""Run the whole DAG at smoke size (profiles/common.yaml + profiles/toy.yaml + params.smoke.yaml) in a temporary workspace.

Usage: python scripts/smoke.py [--workdir DIR] [--keep] [--jobs N]
Every stage runs once, the report included; numbers from it mean nothing. With --jobs N > 1 the stages run
through the parallel scheduler that `make repro` uses (vlcomp.parallel_repro), else through plain `dvc repro`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from vlcomp.config import profile_params, read_layer

REPO = Path(__file__).resolve().parents[1]
COPY = ("dvc.yaml", "pipelines", "profiles", "params.smoke.yaml", "stages", "notebooks", "src", "calibration")


def prepare(workdir: Path, params: dict | None = None) -> None:
    """Copy the pipeline into ``workdir`` with ``params`` as its params.yaml (default: the toy profile with the
    smoke overlay) and make it a git + DVC repository."""
    for name in COPY:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, workdir / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "dvc.lock"))
        else:
            shutil.copy2(src, workdir / name)
    if params is None:
        params = profile_params("toy", REPO, read_layer(REPO / "params.smoke.yaml"))
    (workdir / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    from vlcomp.dag import write_pipelines

    write_pipelines(params, workdir)  # the per-paper pipeline files of these params (their chains and runs)
    env = {**os.environ, "GIT_AUTHOR_NAME": "smoke", "GIT_AUTHOR_EMAIL": "smoke@vlcomp.invalid",
           "GIT_COMMITTER_NAME": "smoke", "GIT_COMMITTER_EMAIL": "smoke@vlcomp.invalid"}
    for cmd in (["git", "init", "-q"], ["dvc", "init", "-q"], ["dvc", "config", "core.analytics", "false"],
                ["dvc", "config", "core.check_update", "false"], ["git", "add", "-A"],
                ["git", "commit", "-qm", "smoke workspace"]):
        subprocess.run(cmd, cwd=workdir, check=True, env=env)


def stand_in_outputs(workdir: Path, env: dict[str, str] | None = None) -> int:
    """A stand-in for every stage output of ``workdir``'s DAG (a small file, or a folder holding one), so that
    ``dvc commit`` can record every stage as up to date without running any: the DAG's structure (dependencies,
    locks, status) is then measured or tested as it is, in seconds. Returns the number of outputs."""
    code = ("import json\nfrom dvc.repo import Repo\nwith Repo('.') as r:\n"
            "    print(json.dumps([str(o.fs_path) for s in r.index.stages for o in s.outs]))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=workdir, env=env, check=True, capture_output=True,
                         text=True).stdout
    paths = json.loads(out)
    for path in paths:
        p = Path(path)
        if p.suffix in (".json", ".sha256", ".html", ".csv"):
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("{}\n")
        else:
            p.mkdir(parents=True, exist_ok=True)
            (p / "stand-in").write_text("x\n")
    return len(paths)


def commit_all(workdir: Path, env: dict[str, str] | None = None) -> None:
    """``dvc commit --force`` of every stage, twice: the second pass records the .gitignore files the first one
    wrote into folders that other stages depend on."""
    for _ in range(2):
        subprocess.run(["dvc", "commit", "--force", "--quiet"], cwd=workdir, env=env, check=True)


def run(workdir: Path, jobs: int = 1) -> float:
    env = {**os.environ, "MLFLOW_TRACKING_URI": f"sqlite:///{workdir / 'mlflow.db'}", "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "MLFLOW_DISABLE_TELEMETRY": "true",
           "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
    t0 = time.time()
    if jobs > 1:
        from vlcomp.parallel_repro import repro

        repro(workdir, jobs=jobs, env=env)
    else:
        subprocess.run(["dvc", "repro"], cwd=workdir, check=True, env=env)
    return time.time() - t0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--workdir")
    p.add_argument("--keep", action="store_true")
    p.add_argument("--jobs", type=int, default=1, help="stages at a time (>1: the parallel scheduler)")
    args = p.parse_args()
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="vlcomp-smoke-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        prepare(workdir)
        seconds = run(workdir, args.jobs)
        print(f"smoke dvc repro: {seconds:.0f} s in {workdir}")
        if not (workdir / "reports" / "papers" / "aro" / "index.html").exists():
            sys.exit("smoke: reports/papers/aro/index.html was not produced")
    finally:
        if not args.keep and not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
