"""Record this machine's numerics fingerprint, or compare it with a recording (vlcomp.fingerprint;
docs/fingerprint.md).

Usage:
  python scripts/fingerprint.py --out FILE                      # run the battery, write the recording to FILE
  python scripts/fingerprint.py --record                        # ... to calibration/fingerprint/<cpu kind>.json
  python scripts/fingerprint.py --compare FILE [--out FILE2]    # run it, print the ops that depart from FILE
  python scripts/fingerprint.py --compare FILE --current FILE2  # compare two recordings, run nothing

The battery runs under the stages' CPU pin and thread count (vlcomp.determinism.apply, before any torch work), so
a recording stands for what the stages compute on this CPU kind. ``VLCOMP_CPU_PIN=off`` lifts the pin, as for the
stages (then set ``ATEN_CPU_CAPABILITY`` / ``ONEDNN_MAX_CPU_ISA`` / ``MKL_CBWR`` yourself to try another pin);
``VLCOMP_THREADS`` sets the threads. Run it in a fresh process: a pin set after torch ran an operation is refused.

``--compare`` reports and exits 0 whether or not ops depart (departures across CPU kinds are expected; the
report says which kernels are behind them). A malformed recording exits 2 naming the file.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from vlcomp.determinism import (
    DEFAULT_THREADS,
    PIN_SWITCH,
    THREADS_ENV,
    apply,
    pin_enabled,
    pin_environment,
    thread_count,
)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
pin_environment()  # before anything imports torch, as the stages do (stages/_common.py)

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", help="write this run's recording (JSON) here")
    p.add_argument("--record", action="store_true",
                   help="write it to calibration/fingerprint/<cpu kind>.json (the committed recording)")
    p.add_argument("--compare", metavar="FILE", help="a recording to compare this run (or --current) with")
    p.add_argument("--current", metavar="FILE", help="with --compare: compare this recording instead of running")
    args = p.parse_args()
    if args.current and not args.compare:
        p.error("--current needs --compare")
    if args.current and (args.out or args.record):
        p.error("--current runs nothing, so there is nothing to write (drop --out / --record)")
    try:
        run(args)
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)


def run(args: argparse.Namespace) -> None:
    if args.current:
        from vlcomp import fingerprint as fp

        reference, current = fp.load_recording(args.compare), fp.load_recording(args.current)
        print(fp.report(fp.compare(reference, current), reference, current))
        return
    if args.record and (not pin_enabled() or thread_count() != DEFAULT_THREADS):
        raise ValueError(f"--record writes the committed recording of the stages' default pin and "
                         f"{DEFAULT_THREADS} thread(s); this run has {PIN_SWITCH}={os.environ.get(PIN_SWITCH)!r}, "
                         f"{THREADS_ENV}={os.environ.get(THREADS_ENV)!r} (use --out for other settings)")
    apply()  # the kernel pin (unless VLCOMP_CPU_PIN=off) and the thread count, checked
    from vlcomp import fingerprint as fp

    reference = fp.load_recording(args.compare) if args.compare else None  # a bad file fails before the run
    recording = fp.run_battery()
    print(f"cpu kind: {fp.kind_text(recording['cpu_kind'])}")
    print(f"numerics: {recording['numerics']}")
    for name, digest in recording["ops"].items():
        print(f"  {name:24s} {digest[:16]}  {recording['timings'][name]:8.3f} s wall, "
              f"{recording['cpu_seconds'][name]:8.3f} s CPU")
    for name, losses in recording["losses"].items():
        print(f"  {name} losses: {' '.join(losses)}")
    if args.out:
        fp.write_recording(recording, args.out)
        print(f"wrote {args.out}")
    if args.record:
        path = fp.recording_path(ROOT, recording["cpu_kind"])
        fp.write_recording(recording, path)
        print(f"wrote {path.relative_to(ROOT)}")
    if reference is not None:
        print(fp.report(fp.compare(reference, recording), reference, recording))


if __name__ == "__main__":
    main()
