"""Which seed design buys the most certainty per CPU-minute: base seeds (whole chains) or fine-tuning seeds?

Reads a workspace that ran a full grid (``base_seeds`` B >= 2 x ``seeds`` S >= 2 per method, e.g. the overlay
``--grid`` below writes) and splits each ledger quantity's variance into a base-seed part (pretraining, mining, LR
selection) and a fine-tuning-seed part (:func:`vlcomp.metrics.stats.variance_components`). The cost of a chain and
of a fine-tuning run comes from the stages' run records (``runs/<stage>.json``: the CPU seconds of one-thread
stages, unaffected by whatever else shares the cores). For each candidate design (bases x fine-tuning seeds) it reports the standard error of each
method's mean and of each NegCLIP - CLIP difference (paired by base), and the CPU-minutes the design costs.

Usage:
  python scripts/seed_design.py --grid OVERLAY.yaml           # write the grid overlay (3 x 3) to run elsewhere
  python scripts/seed_design.py WORKSPACE [--out calibration/seed_design.csv]

Each row of the CSV is one (quantity, design); ``se`` is the standard error of the design's mean, ``cpu_min`` the
CPU-minutes of the chain and fine-tuning stages it runs (world, benchmarks and reports are the same for every
design and left out).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from pathlib import Path

import numpy as np
import yaml

from vlcomp.benchmarks.retrieval import metric_key as retrieval_key
from vlcomp.metrics.stats import design_variance, variance_components

GRID = {"base_seeds": [0, 1, 2], "_replace": ["seeds"], "seeds": {"clip_ft": [0, 1, 2], "negclip": [0, 1, 2]}}
DESIGNS = ((1, 3), (3, 1), (2, 2), (3, 3), (4, 1), (6, 1))
QUANTITIES = {
    "VG-R": "aro/vg_relation/macro_acc",
    "VG-A": "aro/vg_attribution/macro_acc",
    "COCO-Order": "aro/coco_order/acc",
    "Flickr30k-Order": "aro/flickr30k_order/acc",
    "COCO i2t R@1": retrieval_key("coco", "none", "i2t/recall_at_1"),
    "CIFAR10 twin": "zeroshot/cifar10/acc",
}


def _read(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: cannot read ({e})") from None


def grid_tables(ws: Path) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], list[str]]:
    """``({method: [B, S, Q]}, {"clip": [B, Q]}, bases)`` from a grid workspace's metrics and params."""
    params = yaml.safe_load((ws / "params.yaml").read_text())
    bases, variants = list(params["bases"]), params["variants"]
    keys = list(QUANTITIES.values())

    def values(model: str) -> list[float]:
        m = _read(ws / "metrics" / model / "metrics.json")
        missing = [k for k in keys if k not in m]
        if missing:
            raise ValueError(f"{ws / 'metrics' / model / 'metrics.json'}: missing {missing}")
        return [m[k] for k in keys]

    clip = np.array([values(f"clip-{b}") for b in bases])
    tuned: dict[str, np.ndarray] = {}
    for method in sorted({v["method"] for v in variants.values()}):
        seeds = sorted({v["seed"] for v in variants.values() if v["method"] == method})
        table = [[values(f"{method}-{b}s{s}") for s in seeds] for b in bases]
        tuned[method] = np.array(table)
    return tuned, {"clip": clip}, bases


def stage_seconds(ws: Path, stage: str) -> float:
    rec = _read(ws / "runs" / f"{stage}.json")
    if rec.get("status") != "finished":
        raise ValueError(f"{ws / 'runs' / (stage + '.json')}: status {rec.get('status')!r}, not a finished run")
    return float(rec["cpu_seconds"])


def costs(ws: Path, bases: list[str], methods: list[str]) -> tuple[float, dict[str, float]]:
    """(CPU-seconds of one chain's own stages, {method: CPU-seconds of one fine-tuning run + its evaluation}),
    averaged over the grid's runs."""
    params = yaml.safe_load((ws / "params.yaml").read_text())
    chain = []
    for b in bases:
        stages = [f"pretrain@{b}", f"evaluate_base@{b}"]
        stages += [f"mine@{k}" for k, v in params["mining"].items() if v.get("base") == b]
        stages += [f"select_lr@{k}" for k, v in params["selections"].items() if v["base"] == b]
        chain.append(sum(stage_seconds(ws, s) for s in stages))
    per_run = {m: float(np.mean([stage_seconds(ws, f"finetune@{v}") + stage_seconds(ws, f"evaluate@{v}")
                                 for v, spec in params["variants"].items() if spec["method"] == m]))
               for m in methods}
    return float(np.mean(chain)), per_run


def rows(ws: Path) -> list[dict]:
    tuned, base, bases = grid_tables(ws)
    chain_s, run_s = costs(ws, bases, list(tuned))
    names = list(QUANTITIES)
    out = []

    def emit(quantity: str, who: str, s2b: float, s2f: float, n_values: str) -> None:
        for nb, nf in DESIGNS:
            cpu_s = nb * (chain_s + nf * sum(run_s.values()))
            var = design_variance(s2b, s2f, nb, nf)
            out.append({"quantity": quantity, "of": who, "sigma_base": round(math.sqrt(s2b), 5),
                        "sigma_finetune": round(math.sqrt(s2f), 5), "grid": n_values, "bases": nb,
                        "finetune_seeds": nf, "se": round(math.sqrt(var), 5), "cpu_min": round(cpu_s / 60, 1),
                        "var_x_cpu_min": round(var * cpu_s / 60, 8)})

    clip = base["clip"]
    for q, name in enumerate(names):
        s2 = float(np.var(clip[:, q], ddof=1))
        emit(name, "clip", s2, 0.0, f"{len(bases)} bases")
        for method, table in tuned.items():
            s2b, s2f = variance_components(table[:, :, q])
            emit(name, method, s2b, s2f, f"{table.shape[0]}x{table.shape[1]}")
            diff = table[:, :, q] - clip[:, None, q]  # paired by base: the same chain's CLIP
            s2b, s2f = variance_components(diff)
            emit(name, f"{method} - clip", s2b, s2f, f"{table.shape[0]}x{table.shape[1]}")
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("workspace", nargs="?", type=Path)
    p.add_argument("--grid", type=Path, help="write the 3 x 3 grid overlay here and stop")
    p.add_argument("--out", type=Path, default=Path("calibration/seed_design.csv"))
    args = p.parse_args()
    if args.grid:
        args.grid.write_text(yaml.safe_dump(GRID, sort_keys=False))
        print(f"wrote {args.grid}")
        return
    if not args.workspace:
        p.error("give a grid WORKSPACE (or --grid OVERLAY)")
    try:
        table = rows(args.workspace)
    except (ValueError, KeyError, FileNotFoundError) as e:
        sys.exit(f"error: {e}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(table[0]))
        w.writeheader()
        w.writerows(table)
    print(f"wrote {args.out} ({len(table)} rows)")


if __name__ == "__main__":
    main()
