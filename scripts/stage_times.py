"""Wall time of every pipeline stage, from the MLflow runs the stages logged (newest run per stage).

Usage: python scripts/stage_times.py [--tracking-uri URI]
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--tracking-uri", default=os.environ.get("MLFLOW_TRACKING_URI", "sqlite:///mlflow.db"))
    args = p.parse_args()
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=args.tracking_uri)
    newest: dict[str, tuple[int, int]] = {}
    for exp in client.search_experiments():
        for run in client.search_runs([exp.experiment_id], max_results=10000):
            stage = run.data.tags.get("dvc_stage")
            if stage and run.info.end_time and (stage not in newest or run.info.start_time > newest[stage][0]):
                newest[stage] = (run.info.start_time, run.info.end_time)
    total = 0.0
    for stage, (start, end) in sorted(newest.items(), key=lambda kv: kv[1][0]):
        seconds = (end - start) / 1000
        total += seconds
        print(f"{stage:28s} {seconds:8.1f} s")
    print(f"{'sum of stage runs':28s} {total:8.1f} s  (process start-up and DVC overhead not included)")


if __name__ == "__main__":
    main()
