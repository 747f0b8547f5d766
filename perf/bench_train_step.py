"""Training throughput, A/B interleaved step by step: samples/s of one fine-tuning step of a method at the
default batch, 1 thread, old code (a git revision) against this checkout.

Back-to-back runs on a 2-core machine drift by about +-8 %, so the two sides run *interleaved*: one worker
process per side (each with its side's ``src`` first on PYTHONPATH) trains the same method on the same
batches (same data, same seed) through the public ``vlcomp.train.finetune.finetune_one``, and blocks after
every step until the driver lets it take the next; the driver alternates A, B, A, B, ... so both sides see the
same machine state. A step is timed inside its worker from the moment it is let go to the loop's per-step
log callback (``log_every=1``): batch assembly, image and token lookup, forward, loss, backward, AdamW.

    .venv/bin/python perf/bench_train_step.py --base 900d543 --workspace /tmp/fresh --method negclip \
        --steps 25 --warmup 5 --out perf/results/bench_train_step.json

``--workspace``: a workspace of a default `make repro` (its data/world, data/mined/negclip and models/base); each
side reads its own repository's params.yaml (the finetune recipe and the method, in that code's schema).
Reports the median step time and samples/s of each side over the steps after the warm-up, and the ratio.
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
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

WORKER = r"""
import json, sys, time
import torch
torch.set_num_threads(1)
from pathlib import Path
from vlcomp.config import load_params, section
from vlcomp.train.finetune import FinetuneData, finetune_config, finetune_one, with_weights
from vlcomp.train.recipes import model_spec
from vlcomp.train.loop import TrainConfig
try:  # the method registry (vlcomp.methods) since the named-block batches; train.recipes before
    from vlcomp.methods import method_config
except ImportError:
    from vlcomp.train.recipes import method_config
import inspect

ws, method_name, steps, params_file = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
params = load_params(params_file)  # the side's own params.yaml (the methods schema follows the code)
cfg = finetune_config(section(params, "finetune"))
base = with_weights(model_spec(params), ws / "models/base/model.pt")
method = method_config(params, method_name)
extra = [method] if "method" in inspect.signature(FinetuneData).parameters else []
if "split" in inspect.signature(FinetuneData).parameters:  # the split moved from finetune.split to the generator's
    extra.append(section(params, f"mine.{method.generator}.split"))
data = FinetuneData(ws / "data/world", ws / "data/mined/negclip", cfg, *extra)
n_rows = len(data.rows)
tcfg = TrainConfig(lr=1e-4, epochs=steps * cfg.batch_size / (n_rows // cfg.batch_size * cfg.batch_size),
                   batch_size=cfg.batch_size, warmup_steps=cfg.warmup_steps, weight_decay=cfg.weight_decay, log_every=1)
state = {"t": time.perf_counter()}

def on_log(step, rec):
    dt = time.perf_counter() - state["t"]
    print(json.dumps({"step": step, "seconds": dt}), flush=True)
    if sys.stdin.readline().strip() != "go":
        sys.exit(0)
    state["t"] = time.perf_counter()

print(json.dumps({"ready": True, "batch_size": cfg.batch_size, "rows": n_rows}), flush=True)
sys.stdin.readline()
state["t"] = time.perf_counter()
finetune_one(base, data, method, tcfg, 0, "bench", on_log=on_log)
"""


def _worker(src: Path, ws: Path, method: str, steps: int) -> subprocess.Popen:
    """A worker with ``src`` first on PYTHONPATH, reading the data of ``ws`` and the params of ``src/../params.yaml``."""
    env = {**os.environ, "PYTHONPATH": str(src), "VLCOMP_THREADS": "1", "OMP_NUM_THREADS": "1",
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.Popen([sys.executable, "-c", WORKER, str(ws), method, str(steps), str(src.parent / "params.yaml")],
                            env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=1)


def _line(proc: subprocess.Popen) -> dict:
    line = proc.stdout.readline()
    if not line:
        raise SystemExit(f"worker exited early (code {proc.wait()})")
    return json.loads(line)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base", required=True, help="git revision of the A side")
    p.add_argument("--workspace", type=Path, required=True)
    p.add_argument("--method", default="negclip")
    p.add_argument("--steps", type=int, default=25)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    ws = args.workspace.resolve()
    root = Path(tempfile.mkdtemp(prefix="vlcomp-bench-train-"))
    tree = root / "base-tree"
    subprocess.run(["git", "worktree", "add", "-q", "--detach", str(tree), args.base], check=True, cwd=REPO)
    procs = {}
    try:
        procs = {"A": _worker(tree / "src", ws, args.method, args.steps),
                 "B": _worker(REPO / "src", ws, args.method, args.steps)}
        info = {s: _line(pr) for s, pr in procs.items()}
        times: dict[str, list[float]] = {"A": [], "B": []}
        for _ in range(args.steps):
            for s, pr in procs.items():  # A then B: each side takes one step while the other waits
                pr.stdin.write("go\n")
                pr.stdin.flush()
                times[s].append(_line(pr)["seconds"])
        for pr in procs.values():
            pr.stdin.write("stop\n")
            pr.stdin.flush()
            pr.wait(timeout=60)
    finally:
        for pr in procs.values():
            if pr.poll() is None:
                pr.kill()
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, check=False)
        shutil.rmtree(root, ignore_errors=True)
    b = info["A"]["batch_size"]
    res = {}
    for s in ("A", "B"):
        kept = times[s][args.warmup:]
        med = statistics.median(kept)
        res[s] = {"median_step_s": round(med, 4), "samples_per_s": round(b / med, 1), "steps_timed": len(kept),
                  "all_step_s": [round(t, 4) for t in times[s]]}
    ratio = res["B"]["samples_per_s"] / res["A"]["samples_per_s"]
    out = {"what": f"{args.method} fine-tuning step, batch {b}, 1 thread, interleaved A/B",
           "A": {"code": f"git {args.base}", **res["A"]}, "B": {"code": "this checkout", **res["B"]},
           "B_over_A_samples_per_s": round(ratio, 4), "warmup_steps": args.warmup, "rows": info["A"]["rows"],
           "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "processor": platform.processor(),
                       "python": sys.version.split()[0]}}
    print(json.dumps(out, indent=1) if not args.out else
          f"A {res['A']['samples_per_s']} samples/s, B {res['B']['samples_per_s']} samples/s, B/A = {ratio:.3f}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
