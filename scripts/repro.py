"""`dvc repro` with independent stages side by side (see vlcomp.parallel_repro). `make repro` runs this.

Usage: python scripts/repro.py [--jobs N] [STAGE ...]   (N: default one per core)
"""

from __future__ import annotations

import argparse
import os

from vlcomp.parallel_repro import repro


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("targets", nargs="*", help="stages to reproduce with their dependencies (default: all)")
    p.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1,
                   help="stages at a time (default: one per core; each stage runs VLCOMP_THREADS torch threads, default 1)")
    p.add_argument("--dvc", default="dvc", help="the dvc executable")
    args = p.parse_args()
    if args.jobs < 1:
        p.error(f"--jobs={args.jobs}: must be >= 1")
    repro(".", jobs=args.jobs, targets=args.targets or None, dvc=args.dvc)


if __name__ == "__main__":
    main()
