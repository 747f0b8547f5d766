"""Rebuild the MLflow view from the DVC outputs of this workspace (see vlcomp.replay).

Usage: python scripts/replay_mlflow.py [--tracking-uri URI] [--force]
Default target: $MLFLOW_TRACKING_URI, else sqlite:///mlflow.db. Stages already in the store are skipped.
Run `dvc pull` (or `dvc checkout`) first so the outputs are in the workspace.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

from vlcomp.replay import collect, replay
from vlcomp.tracking import tracking_uri


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--root", default=".", help="workspace with the DVC outputs (default: .)")
    p.add_argument("--tracking-uri", default=None)
    p.add_argument("--force", action="store_true", help="log stages that are already in the store again")
    args = p.parse_args()
    root = Path(args.root)
    params = yaml.safe_load((root / "params.yaml").read_text())
    runs = collect(root, profile=params.get("profile", "toy"), params=params)
    if not runs:
        raise SystemExit(f"{root}: no DVC stage outputs found (run `dvc pull` or `make repro` first)")
    uri = args.tracking_uri or tracking_uri()
    counts: dict[str, int] = {}
    for stage, what in replay(runs, uri, force=args.force):
        counts[what] = counts.get(what, 0) + 1
        print(f"{what:8s} {stage}")
    print(f"replayed into {uri}: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))


if __name__ == "__main__":
    main()
