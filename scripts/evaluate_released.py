"""Evaluation-only reproduction in the paper profile: every model of `paper_evaluate.models` (specs in
`paper_models`) on every benchmark of `paper_evaluate.benchmarks` (files in `paper_inputs`).

Usage: python scripts/evaluate_released.py [--params FILE] [--models clip negclip]
                                           [--benchmarks sugarcrepe] [--out metrics/paper]
Outside DVC (a quick look at a few models or benchmarks); in the pipeline the same evaluation is the stage
`evaluate_released@<model>` of the paper profile. Default params: params.yaml if it is the paper profile, else
the paper profile (profiles/common.yaml + profiles/paper.yaml). Run `python -m vlcomp.doctor --profile paper` first: it checks every file and spec in seconds.
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

from vlcomp.config import load_params, profile_params  # noqa: E402
from vlcomp.profiles.paper.evaluate import evaluate_released  # noqa: E402
from vlcomp.tracking import stage_run  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--params", help="default: params.yaml when it is the paper profile, else the paper profile "
                                     "resolved from profiles/common.yaml + profiles/paper.yaml")
    p.add_argument("--models", nargs="*")
    p.add_argument("--benchmarks", nargs="*")
    p.add_argument("--out", default="metrics/paper")
    args = p.parse_args()
    path = args.params or "params.yaml"
    params = load_params(path)
    if args.params is None and params.get("profile") != "paper":
        params = profile_params("paper")

    def log_run(model, used):
        return stage_run(f"evaluate_released@{model}", experiment="paper-evaluate", profile="paper",
                         paper="all", method=model, params=used)

    try:
        results = evaluate_released(params, args.out, models=args.models, benchmarks=args.benchmarks,
                                    log_run=log_run)
    except (ValueError, FileNotFoundError) as e:
        sys.exit(f"error: {e}")
    for model, metrics in results.items():
        print(f"{model}: {len(metrics)} metrics -> {args.out}/{model}/metrics.json")


if __name__ == "__main__":
    main()
