"""What DVC spends per stage outside the stage's own command, on this repository's dvc.lock.

Every `dvc repro --single-item <stage>` (what `make repro` starts per stage) parses dvc.lock with ruamel.yaml's safe
loader several times, and once more with its round-trip loader before writing the stage's entry back. With 101 stages
dvc.lock is about half a megabyte, so the parser decides the per-stage overhead: ruamel.yaml's C parser
(`ruamel.yaml.clib`, in requirements.txt since session 16) against its pure-Python one, same file, same data.

Each measurement is the median of `--rounds` fresh parses in this process (the file read once). Also timed: one
forced `dvc repro --single-item` of a small stage end to end (`--stage`; optional, it reruns that stage, whose
outputs are deterministic and end up the same), against that stage's own wall time from its run record.

Usage: python perf/bench_dvc_overhead.py [--rounds 5] [--stage evaluate@tsvlc_rb-b0s0]
       [--out perf/results/bench_dvc_overhead.json]   (from the repository root, after `make repro`)
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _median_seconds(fn, rounds: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), [round(t, 3) for t in times]


def parse_timings(text: str, rounds: int) -> dict:
    import io

    from ruamel.yaml import YAML

    c_parser = YAML(typ="safe")
    out = {"c_parser_available": c_parser.Parser.__module__ != "ruamel.yaml.parser"}
    pure = YAML(typ="safe", pure=True)
    assert c_parser.load(text) == pure.load(text), "the two parsers disagree on dvc.lock"
    for name, fn in (("safe_load_c", lambda: c_parser.load(text)), ("safe_load_pure", lambda: pure.load(text)),
                     ("roundtrip_load", lambda: YAML(typ="rt").load(text))):
        med, every = _median_seconds(fn, rounds)
        out[name] = {"median_s": round(med, 3), "runs_s": every}
    doc = YAML(typ="rt").load(text)
    med, every = _median_seconds(lambda: YAML().dump(doc, io.StringIO()), rounds)
    out["roundtrip_dump"] = {"median_s": round(med, 3), "runs_s": every}
    out["speedup_safe_load"] = round(out["safe_load_pure"]["median_s"] / out["safe_load_c"]["median_s"], 2)
    return out


def forced_stage(stage: str) -> dict:
    t0 = time.perf_counter()
    subprocess.run(["dvc", "repro", "--force", "--single-item", stage], check=True, capture_output=True)
    total = time.perf_counter() - t0
    record = json.loads((Path("runs") / f"{stage}.json").read_text())
    return {"stage": stage, "dvc_repro_s": round(total, 1), "stage_own_s": record["seconds"],
            "outside_the_stage_s": round(total - record["seconds"], 1)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--lock", default="dvc.lock")
    p.add_argument("--stage", help="also time one forced `dvc repro --single-item STAGE`")
    p.add_argument("--out", default="perf/results/bench_dvc_overhead.json")
    args = p.parse_args()
    text = Path(args.lock).read_text()
    import yaml

    result = {"machine": {"cpu": platform.processor() or platform.machine(), "python": sys.version.split()[0]},
              "lock_bytes": len(text.encode()),
              "lock_stages": len((yaml.load(text, Loader=yaml.CSafeLoader) or {}).get("stages", {})),
              "rounds": args.rounds, "parse": parse_timings(text, args.rounds)}
    if args.stage:
        result["forced_stage"] = forced_stage(args.stage)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
