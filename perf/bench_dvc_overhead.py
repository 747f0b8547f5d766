"""What DVC costs around the stages: the no-op `dvc status` / `make repro`, and the fixed cost of one stage run.

A workspace is built from a checkout's pipeline (``--repo``, default this one; any earlier commit checked out with
``git worktree`` measures the layout before a change) with the toy profile's params, or a synthetic profile that
multiplies the chains (``--chains N``: base seeds 0..N-1; the headline methods run on every chain, the ablation
rows on the first) to reach a larger DAG (15 chains: 257 stages). No stage runs: every output is a stand-in committed with ``dvc commit`` (scripts/smoke.py), so the DAG's real
dependencies, params and locks are what DVC reads. Measured, medians of ``--rounds`` runs:

- ``status_s``: ``dvc status`` with every stage up to date;
- ``repro_noop_s``: ``python scripts/repro.py`` (what ``make repro`` runs) with every stage up to date;
- ``stage_dvc_s``: ``dvc repro --force --single-item`` of one stage of each kind whose command is replaced by one
  that only writes stand-ins of its outputs (DVC's whole per-stage cost: loading the pipeline files, hashing the dependencies, committing the outputs,
  rewriting the stage's lock);
- ``stage_imports_s``: ``python stages/<script>.py --help`` (the interpreter and every module-level import of the
  stage script; the rest of a stage's imports come with its work).

With ``--workspace DIR`` (a workspace where ``make repro`` has run: real outputs), the same no-op timings are taken
there, and ``--stage ADDRESS`` (repeatable) is re-run forced as it is: ``outside_the_stage_s`` is the wall time of
``dvc repro --force --single-item`` minus the stage's own seconds from its run record (``runs/<stage>.json``): DVC,
the interpreter and the imports around the stage's work.

Usage: python perf/bench_dvc_overhead.py [--repo PATH] [--chains N] [--rounds 5] [--out perf/results/dvc_overhead.json]
       python perf/bench_dvc_overhead.py --workspace DIR [--stage ADDRESS ...] [--rounds 3] [--out ...]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "scripts"))

from smoke import commit_all, stand_in_outputs  # noqa: E402


def _timed(cmd: list[str], cwd: Path, env: dict, rounds: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, env=env, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return round(statistics.median(times), 3), [round(t, 3) for t in times]


def _prepare(repo: Path, work: Path, chains: int | None, env: dict) -> None:
    """``repo``'s own scripts/smoke.py copies its pipeline into ``work`` with the toy params (or ``chains`` chains)."""
    overlay = "{}" if not chains else json.dumps({"base_seeds": list(range(chains))})
    code = ("import json, sys\nfrom pathlib import Path\nsys.path.insert(0, 'scripts')\nfrom smoke import prepare\n"
            "from vlcomp.config import profile_params\n"
            f"prepare(Path({str(work)!r}), profile_params('toy', '.', json.loads({overlay!r})))\n")
    subprocess.run([sys.executable, "-c", code], cwd=repo, env={**env, "PYTHONPATH": str(repo / "src")}, check=True,
                   capture_output=True)


def _stage_of_each_kind(work: Path, env: dict) -> dict[str, str]:
    names = subprocess.run(["dvc", "stage", "list", "--all", "--name-only"], cwd=work, env=env, check=True,
                           capture_output=True, text=True).stdout.split()
    out = {}
    for kind in ("evaluate_base", "evaluate", "finetune", "report"):
        hits = [n for n in names if n.rsplit(":", 1)[-1].startswith(kind + "@")]
        if hits:
            out[kind] = hits[0]
    return out


def _neutralise(work: Path, address: str) -> None:
    """Replace the command of ``address``'s stage group, in its pipeline file, by one that only writes stand-ins of
    the group's outputs (DVC deletes a stage's outputs before running it): DVC's cost around a stage that does no
    work."""
    import yaml

    path, _, name = address.rpartition(":")
    f = work / (path or "dvc.yaml")
    doc = yaml.safe_load(f.read_text())
    group = doc["stages"][name.split("@")[0]]
    body = group.get("do", group)
    outs = [next(iter(o)) if isinstance(o, dict) else o
            for key in ("outs", "metrics", "plots") for o in body.get(key) or []]
    steps = [(f"mkdir -p $(dirname {o}) && echo '{{}}' > {o}" if Path(o).suffix in (".json", ".sha256", ".html", ".csv")
              else f"mkdir -p {o} && echo x > {o}/stand-in") for o in outs]
    body["cmd"] = " && ".join(steps)
    f.write_text(yaml.safe_dump(doc, sort_keys=False, width=1000))


def measure(repo: Path, chains: int | None, rounds: int, imports: bool = True) -> dict:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
    work = Path(tempfile.mkdtemp(prefix="vlcomp-dvc-bench-"))
    try:
        _prepare(repo, work, chains, env)
        n_outs = stand_in_outputs(work, env)
        commit_all(work, env)
        stages = subprocess.run(["dvc", "stage", "list", "--all", "--name-only"], cwd=work, env=env, check=True,
                                capture_output=True, text=True).stdout.split()
        locks = sorted(work.rglob("dvc.lock"))
        res = {"repo": str(repo), "chains": chains, "stages": len(stages), "outputs": n_outs,
               "lock_files": len(locks), "lock_bytes_total": sum(f.stat().st_size for f in locks),
               "lock_bytes_max": max(f.stat().st_size for f in locks)}
        res["status_s"] = _timed(["dvc", "status"], work, env, rounds)
        repro = [sys.executable, str(repo / "scripts" / "repro.py"), "--jobs", "2"]
        res["repro_noop_s"] = _timed(repro, work, {**env, "PYTHONPATH": str(repo / "src")}, rounds)
        if imports:
            res["stage_imports_s"] = {s.stem: _timed([sys.executable, str(s), "--help"], work,
                                                     {**env, "PYTHONPATH": str(repo / "src")}, rounds)
                                      for s in sorted((work / "stages").glob("[a-z]*.py"))}
        res["stage_dvc_s"] = {}
        for kind, address in _stage_of_each_kind(work, env).items():
            _neutralise(work, address)
            med, runs = _timed(["dvc", "repro", "--force", "--single-item", address], work, env, rounds)
            res["stage_dvc_s"][kind] = {"stage": address, "median": med, "runs": runs}
        return res
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure_workspace(work: Path, stages: list[str], rounds: int) -> dict:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
    status = subprocess.run(["dvc", "status", "--json"], cwd=work, env=env, check=True, capture_output=True,
                            text=True).stdout
    if json.loads(status or "{}"):
        raise SystemExit(f"{work}: not up to date (dvc status lists stages); run make repro first")
    n = len(subprocess.run(["dvc", "stage", "list", "--all", "--name-only"], cwd=work, env=env, check=True,
                           capture_output=True, text=True).stdout.split())
    locks = sorted(work.rglob("dvc.lock"))
    res = {"workspace": str(work), "stages": n, "lock_files": len(locks),
           "lock_bytes_total": sum(f.stat().st_size for f in locks),
           "lock_bytes_max": max(f.stat().st_size for f in locks)}
    res["status_s"] = _timed(["dvc", "status"], work, env, rounds)
    res["repro_noop_s"] = _timed([sys.executable, str(work / "scripts" / "repro.py"), "--jobs", "2"], work, env, rounds)
    res["forced_stages"] = {}
    for address in stages:
        name = address.rpartition(":")[2]
        rows = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            subprocess.run(["dvc", "repro", "--force", "--single-item", address], cwd=work, env=env, check=True,
                           capture_output=True)
            total = time.perf_counter() - t0
            own = float(json.loads((work / "runs" / f"{name}.json").read_text())["seconds"])
            rows.append((round(total, 2), round(own, 2), round(total - own, 2)))
        res["forced_stages"][address] = {"outside_the_stage_s": round(statistics.median(r[2] for r in rows), 2),
                                         "runs_total_own_outside_s": rows}
    return res


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repo", default=str(HERE), help="the checkout whose pipeline is measured (default: this one)")
    p.add_argument("--chains", type=int, help="a synthetic profile with this many chains (default: the toy params)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--no-imports", action="store_true", help="skip the stage scripts' import timings")
    p.add_argument("--workspace", help="measure this workspace (real outputs, up to date) instead of a stand-in DAG")
    p.add_argument("--stage", action="append", default=[], help="with --workspace: re-run this stage forced")
    p.add_argument("--out", help="append the result to this JSON file (a list of runs)")
    args = p.parse_args()
    if args.workspace:
        res = measure_workspace(Path(args.workspace).resolve(), args.stage, args.rounds)
    else:
        res = measure(Path(args.repo).resolve(), args.chains, args.rounds, imports=not args.no_imports)
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), platform.machine()) if Path("/proc/cpuinfo").exists() else ""
    res["machine"] = {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
                      "date": time.strftime("%Y-%m-%d")}
    print(json.dumps(res, indent=2))
    if args.out:
        out = Path(args.out)
        runs = json.loads(out.read_text()) if out.is_file() else []
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps([*(runs if isinstance(runs, list) else [runs]), res], indent=2) + "\n")


if __name__ == "__main__":
    main()
