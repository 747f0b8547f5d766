"""Evaluation speed options of session 13, A/B on the real pipeline inputs: one base model scored on every benchmark
of `evaluate.benchmarks` (what an `evaluate_base@<chain>` stage computes), each side in a fresh worker process with
one torch thread under the CPU pin, sides interleaved round by round so both see the same machine state.

Sides:
- `before`: the evaluation as it was before session 13: NCHW image batches, every image-shuffle view reads and
  preprocesses its images again (``pixel_cache_mb=0``), images opened through PIL's own file reads;
- `after`: the defaults now: channels-last image batches (``evaluate.channels_last``), the image-shuffle views share
  the preprocessed images (``FeatureCache.pixels``), each image read in one call.

Reports per side the median scoring seconds over the timed rounds (and every round), and how many of the metrics
differ between the sides (channels-last moves features in the last bits; decisions may flip only on exact ties).

Usage: python perf/bench_eval_speed.py [--rounds 3] [--base b0] [--out perf/results/bench_eval_speed.json]
(run from the repository root after `make repro`: it reads data/benchmarks and models/base/<base>).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

WORKER = r"""
import io, json, sys, time
sys.path.insert(0, "stages")
import _common  # the CPU pin, as in every stage
from vlcomp.determinism import apply
apply()
from pathlib import Path
from vlcomp.config import load_params, section
from vlcomp.eval.engine import EngineOptions
from vlcomp.eval.inputs import read_manifest
from vlcomp.eval.inputs import evaluation_benchmarks
from vlcomp.eval.run import aggregate_tables
from vlcomp.benchmarks.registry import run_benchmarks
from vlcomp.profiles.toy.evaluate import checkpoint_scorer

side, base, out = sys.argv[1], sys.argv[2], sys.argv[3]
params = load_params("params.yaml")
before = side == "before"
params["evaluate"] = {**params["evaluate"], "channels_last": not before}
if before:  # PIL's own file reads, as open_image did before session 13
    import vlcomp.formats.records as records
    from PIL import Image

    def open_image(path, at):
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"{at}: image {path} not found")
        with Image.open(path) as im:
            im.load()
            return im.convert("RGB")

    records.open_image = open_image
    import importlib
    for name in ("vlcomp.benchmarks.aro", "vlcomp.benchmarks.retrieval", "vlcomp.benchmarks.vlchecklist",
                 "vlcomp.benchmarks.zeroshot", "vlcomp.eval.common", "vlcomp.formats.aro", "vlcomp.formats.ccneg",
                 "vlcomp.formats.crepe", "vlcomp.formats.hardpos"):  # every module that imports open_image by name
        mod = importlib.import_module(name)
        assert getattr(mod, "open_image", None) is not None, name
        mod.open_image = open_image
names = evaluation_benchmarks(params)
inputs = read_manifest("data/benchmarks", seed=section(params, "root_seed"))
scorer = checkpoint_scorer(params, f"clip-{base}", Path("models/base") / base)
options = EngineOptions(pixel_cache_mb=0 if before else 1024)
t0 = time.perf_counter()
tables = run_benchmarks(scorer, names, inputs, options)
seconds = time.perf_counter() - t0
metrics = aggregate_tables(tables, names, inputs)
Path(out).write_text(json.dumps({"seconds": seconds, "metrics": metrics}))
"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--base", default="b0")
    p.add_argument("--out", default="perf/results/bench_eval_speed.json")
    args = p.parse_args()
    sys.path.insert(0, "src")
    from vlcomp.determinism import apply, machine_record, pin_environment

    pin_environment()  # the workers' pin and thread count, so the machine record below describes them
    apply()

    tmp = Path(args.out).with_suffix(".tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    times: dict[str, list[float]] = {"before": [], "after": []}
    metrics: dict[str, dict] = {}
    loads = []
    for r in range(args.rounds):
        for side in (("before", "after") if r % 2 == 0 else ("after", "before")):
            f = tmp / f"{side}-{r}.json"
            subprocess.run([sys.executable, "-c", WORKER, side, args.base, str(f)], check=True,
                           env={**os.environ, "PYTHONPATH": "src"})
            res = json.loads(f.read_text())
            times[side].append(round(res["seconds"], 2))
            metrics[side] = res["metrics"]
            loads.append(os.getloadavg()[0])
            print(f"round {r} {side}: {res['seconds']:.1f} s", flush=True)
    a, b = metrics["before"], metrics["after"]
    differ = sorted(k for k in a if k in b and a[k] != b[k] and not (a[k] != a[k] and b[k] != b[k]))
    med = {s: statistics.median(v) for s, v in times.items()}
    result = {"what": __doc__.split("\n\n")[0], "machine": machine_record(), "base": args.base,
              "rounds": args.rounds, "seconds": times, "median_seconds": med,
              "speedup": round(med["before"] / med["after"], 3), "n_metrics": len(a),
              "metrics_that_differ": {k: [a[k], b[k]] for k in differ}, "load_avg_after_each_run": loads}
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    for f in tmp.iterdir():
        f.unlink()
    tmp.rmdir()
    print(json.dumps({k: result[k] for k in ("median_seconds", "speedup", "n_metrics")}),
          f"{len(differ)} metrics differ", flush=True)


if __name__ == "__main__":
    main()
