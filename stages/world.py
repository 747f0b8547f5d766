"""Stage `world`: generate the toy world's splits (images, scene graphs, captions); in the real profile, index
the real caption files and their images (vlcomp.profiles.real.world)."""

from __future__ import annotations

import time

from _common import parser, run
from vlcomp.config import load_params, section
from vlcomp.io import atomic_dir, write_json
from vlcomp.tracking import ALL_PAPERS, TRAINING_EXPERIMENT, stage_run


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    params = load_params(args.params)
    if params["profile"] == "real":
        from vlcomp.profiles.real.world import build_world
    else:
        from vlcomp.profiles.toy.world import build_world
    seed = section(params, "root_seed")
    used = {"world": section(params, "world"), "root_seed": seed}
    with stage_run("world", experiment=TRAINING_EXPERIMENT, profile=params["profile"], paper=ALL_PAPERS, seed=seed,
                   params=used) as tr:
        t0 = time.time()
        with atomic_dir(args.out) as tmp:
            summary = build_world(params, tmp)
            write_json(tmp / "summary.json", summary)
        tr.log_metrics({f"world/{k}/{m}": v[m] for k, v in summary.items() for m in ("n_images", "n_captions") if m in v}
                       | {"world/seconds": time.time() - t0})


if __name__ == "__main__":
    run(main)
