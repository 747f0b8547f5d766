"""Stage `world`: generate the toy world's splits (images, scene graphs, captions); in the paper profile, index
the real caption files and their images (vlcomp.paper.world)."""

from __future__ import annotations

import os
import time

from _common import parser, run
from vlcomp.config import load_params, section
from vlcomp.io import atomic_dir, write_json
from vlcomp.tracking import ALL_PAPERS, TRAINING_EXPERIMENT, stage_run
from vlcomp.world import world_configs
from vlcomp.world.generate import generate_world


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    params = load_params(args.params)
    seed = section(params, "base.seed")
    used = {"world": section(params, "world"), "base.seed": seed}
    if params["profile"] == "paper":
        from vlcomp.paper.world import index_world

        with stage_run("world", experiment=TRAINING_EXPERIMENT, profile="paper", paper=ALL_PAPERS, seed=seed, params=used) as tr:
            with atomic_dir(args.out) as tmp:
                summary = index_world(section(params, "world"), tmp)
                write_json(tmp / "summary.json", summary)
            tr.log_metrics({f"world/{k}/{m}": v[m] for k, v in summary.items() for m in ("n_images", "n_captions")})
        return
    wcfg, ccfg, specs = world_configs(params)
    with stage_run("world", experiment=TRAINING_EXPERIMENT, profile=params["profile"], paper=ALL_PAPERS, seed=seed, params=used) as tr:
        t0 = time.time()
        with atomic_dir(args.out) as tmp:
            summary = generate_world(specs, wcfg, ccfg, seed, tmp, workers=os.cpu_count() or 1)
            write_json(tmp / "summary.json", summary)
        tr.log_metrics({f"world/{k}/n_images": v["n_images"] for k, v in summary.items()}
                       | {"world/seconds": time.time() - t0})


if __name__ == "__main__":
    run(main)
