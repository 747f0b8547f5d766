"""How much of a `make repro` run was the stages' own work, and how much the cost around them (DVC, the
interpreter, imports): from the scheduler's log (`scripts/repro.py`: one ``done <stage> (<s> s)`` line per stage,
the stage's wall time inside `dvc repro`) and each stage's run record (`runs/<stage>.json`: ``seconds`` of the
stage's own code, ``cpu_seconds``).

Usage: python perf/pipeline_overhead.py --log repro.log --runs WORKSPACE/runs [--out perf/results/X.json]
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from pathlib import Path

_DONE = re.compile(r"^\[\s*([\d.]+) s\] done\s+(\S+) \(([\d.]+) s\)")


def stage_name(address: str) -> str:
    """``pipelines/aro/negclip/dvc.yaml:finetune@negclip-b0s0`` -> ``finetune@negclip-b0s0`` (the run record's
    name)."""
    return address.rsplit(":", 1)[-1]


def read_log(path: Path) -> tuple[dict[str, float], float]:
    """Per stage, its wall time as the scheduler measured it; and the run's end (the last ``done`` time)."""
    stages, end = {}, 0.0
    for line in path.read_text().splitlines():
        m = _DONE.match(line)
        if m:
            stages[stage_name(m.group(2))] = float(m.group(3))
            end = max(end, float(m.group(1)))
    if not stages:
        raise ValueError(f"{path}: no 'done <stage> (<s> s)' line (not a scripts/repro.py log?)")
    return stages, end


def breakdown(log: Path, runs: Path) -> dict:
    """Totals, per stage family and per stage; the overhead sums cover the stages with a run record."""
    stages, end = read_log(log)
    rows, families = [], defaultdict(lambda: {"stages": 0, "dag_s": 0.0, "own_s": 0.0})
    unrecorded = {}  # stages that write no run record (the report index): their wall time only
    for name, dag in sorted(stages.items()):
        record = runs / f"{name}.json"
        if not record.exists():
            unrecorded[name] = dag
            continue
        rec = json.loads(record.read_text())
        own = float(rec["seconds"])
        rows.append({"stage": name, "dag_s": dag, "own_s": own, "cpu_s": rec.get("cpu_seconds"),
                     "overhead_s": round(dag - own, 1)})
        fam = families[name.split("@", 1)[0]]
        fam["stages"] += 1
        fam["dag_s"] = round(fam["dag_s"] + dag, 1)
        fam["own_s"] = round(fam["own_s"] + own, 1)
    dag_total = sum(r["dag_s"] for r in rows)
    own_total = sum(r["own_s"] for r in rows)
    overheads = sorted(r["overhead_s"] for r in rows)
    return {"stages": len(rows) + len(unrecorded), "wall_s": end, "stage_runs_s": round(dag_total, 1), "own_s": round(own_total, 1),
            "overhead_s": round(dag_total - own_total, 1),
            "overhead_share": round((dag_total - own_total) / dag_total, 3),
            "overhead_per_stage_median_s": overheads[len(overheads) // 2],
            "families": dict(sorted(families.items())), "without_run_record": unrecorded, "rows": rows}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--log", type=Path, required=True, help="scripts/repro.py's output")
    p.add_argument("--runs", type=Path, required=True, help="the workspace's runs/ folder")
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    out = breakdown(args.log, args.runs)
    print(f"{out['stages']} stages, wall {out['wall_s'] / 60:.1f} min; stage runs {out['stage_runs_s']:.0f} s, "
          f"own {out['own_s']:.0f} s, around them {out['overhead_s']:.0f} s ({out['overhead_share']:.0%}; "
          f"median {out['overhead_per_stage_median_s']:.1f} s a stage)")
    for fam, f in out["families"].items():
        print(f"  {fam:16s} {f['stages']:3d} stages  DAG {f['dag_s']:7.0f} s  own {f['own_s']:7.0f} s")
    if args.out:
        args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
