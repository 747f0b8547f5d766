"""Evaluation-only reproduction in the real profile: every model of `real_evaluate.models` (specs in
`released_models`) on every benchmark of `real_evaluate.benchmarks` (files in `real_inputs`).

Usage: python scripts/evaluate_released.py [--params FILE] [--models clip negclip]
                                           [--benchmarks sugarcrepe] [--out metrics/real]
Outside DVC (a quick look at a few models or benchmarks); in the pipeline the same evaluation is the stage
`evaluate_released@<model>` of the real profile. Default params: params.yaml if it is the real profile, else
the real profile (profiles/common.yaml + profiles/real.yaml). Run `python -m vlcomp.doctor --profile real` first: it checks every file and spec in seconds.
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

from vlcomp.config import load_params, profile_params  # noqa: E402
from vlcomp.profiles.real.evaluate import evaluate_released  # noqa: E402
from vlcomp.tracking import stage_run  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--params", help="default: params.yaml when it is the real profile, else the real profile "
                                     "resolved from profiles/common.yaml + profiles/real.yaml")
    p.add_argument("--models", nargs="*")
    p.add_argument("--benchmarks", nargs="*")
    p.add_argument("--out", default="metrics/real")
    args = p.parse_args()
    path = args.params or "params.yaml"
    params = load_params(path)
    if args.params is None and params.get("profile") != "real":
        params = profile_params("real")

    def log_run(model, used):
        return stage_run(f"evaluate_released@{model}", experiment="real-evaluate", profile="real",
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
