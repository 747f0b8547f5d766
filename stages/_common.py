"""Shared argv handling for the thin stage entry points, and the CPU pin every stage runs under.

Imported first by every stage, before anything imports torch: the kernel pin and the thread count
(:mod:`vlcomp.determinism`) make a stage's outputs the same bits on every machine of a kind.
"""

from __future__ import annotations

import argparse
import os
import sys

from vlcomp.determinism import apply, pin_environment

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
pin_environment()


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--params", default="params.yaml", help="params file (default: params.yaml)")
    return p


def run(main) -> None:
    """Run a stage's main() pinned (kernels, threads); a user mistake (ValueError/FileNotFoundError) ends with one
    clear line."""
    try:
        apply()
        main()
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
