"""Generate a toy world (or some of its splits) from the profile's params with ``--set`` overlays, outside the
pipeline, for the probes of the toy-world issue (e.g. P2's clean two-object world, or a candidate world before it
becomes the default). Nothing is logged; the folder has the world stage's layout, so the probes' ``--world`` reads it.

Usage:
  python scripts/make_world.py --out /tmp/world_clean --splits coco_train,coco_test \\
      --set world.min_objects=2 --set world.max_objects=2 --set "world.layout_probs=[1,0,0,0,0]" \\
      --set world.colour_prior=0 --set world.layout_prior=0
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

from caption_statistics import parse_sets  # noqa: E402

from vlcomp.config import profile_params  # noqa: E402
from vlcomp.io import atomic_dir, write_json  # noqa: E402
from vlcomp.profiles.toy.world import build_world  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--profile", default="toy")
    p.add_argument("--splits", default="", help="comma-separated split names (default: every split of the params)")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--params-out", default="", help="also write the params used (the probes' --params)")
    args = p.parse_args(argv)
    params = profile_params(args.profile, REPO, parse_sets(args.sets))
    if args.params_out:
        Path(args.params_out).write_text(yaml.safe_dump(params, sort_keys=False))
    if args.splits:
        want = args.splits.split(",")
        have = params["world"]["splits"]
        missing = [s for s in want if s not in have]
        if missing:
            raise SystemExit(f"--splits: unknown {missing}; the params have {sorted(have)}")
        params["world"]["splits"] = {s: have[s] for s in want}
    with atomic_dir(args.out) as tmp:
        summary = build_world(params, tmp)
        write_json(tmp / "summary.json", summary)
    print({k: v.get("n_images") for k, v in summary.items() if isinstance(v, dict)})


if __name__ == "__main__":
    main()
