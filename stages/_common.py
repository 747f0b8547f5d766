"""Shared argv handling for the thin stage entry points."""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--params", default="params.yaml", help="params file (default: params.yaml)")
    return p


def run(main) -> None:
    """Run a stage's main(); a user mistake (ValueError/FileNotFoundError) ends with one clear line."""
    import torch

    torch.set_num_threads(int(os.environ.get("VLCOMP_THREADS", os.cpu_count() or 1)))
    try:
        main()
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
