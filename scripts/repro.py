"""`dvc repro` with independent stages side by side (see vlcomp.parallel_repro). `make repro` runs this.

Usage: python scripts/repro.py [--jobs N] [--grace S] [TARGET ...]   (N: default one per core)

A TARGET is a stage address as DVC prints it from the repository root (`finetune@negclip-b0s0` for the root
dvc.yaml, `pipelines/aro/dvc.yaml:finetune@negclip-b0s0` for another), a stage name only one dvc.yaml defines, or
a dvc.yaml path (all its stages); each is reproduced with what it depends on (default: the whole pipeline).
Ctrl-C or SIGTERM stops the run: nothing new starts, the running stages get the signal (SIGKILL after S seconds,
default 60, or at a second signal), they are not committed, and the exit status is 130 (SIGINT) or 143 (SIGTERM);
run again to continue from the interrupted stages.
"""

from __future__ import annotations

import argparse
import os
import sys

from vlcomp.parallel_repro import GRACE_SECONDS, TargetError, repro


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("targets", nargs="*", help="stages to reproduce with their dependencies (default: all)")
    p.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1,
                   help="stages at a time (default: one per core; each stage runs VLCOMP_THREADS torch threads, default 1)")
    p.add_argument("--grace", type=float, default=GRACE_SECONDS,
                   help="seconds interrupted stages get to exit before SIGKILL (default: %(default)s)")
    p.add_argument("--dvc", default="dvc", help="the dvc executable")
    args = p.parse_args()
    if args.jobs < 1:
        p.error(f"--jobs={args.jobs}: must be >= 1")
    try:
        repro(".", jobs=args.jobs, targets=args.targets or None, dvc=args.dvc, grace=args.grace)
    except TargetError as e:  # an unknown or ambiguous target
        p.exit(2, f"{p.prog}: error: {e}\n")
    except KeyboardInterrupt:  # Ctrl-C before any stage started (reading the status or the DAG)
        sys.exit(130)


if __name__ == "__main__":
    main()
