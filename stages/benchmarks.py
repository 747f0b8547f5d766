"""Stage `benchmarks`: build every ARO benchmark twin from the world (toy profile)."""

from __future__ import annotations

from _common import parser, run
from vlcomp.benchmarks.build import BenchmarksConfig, build_all
from vlcomp.config import build, load_params, section
from vlcomp.io import atomic_dir, write_json
from vlcomp.text.perturb import TextShuffler
from vlcomp.tracking import stage_run
from vlcomp.world import world_configs


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--world", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    params = load_params(args.params)
    cfg = build(BenchmarksConfig, section(params, "benchmarks"), "benchmarks")
    wcfg, _, _ = world_configs(params)
    seed = section(params, "base.seed")
    shuffler = TextShuffler(spacy_model=section(params, "nlp.spacy_model"))
    used = {"benchmarks": section(params, "benchmarks"), "base.seed": seed,
            "nlp.spacy_model": section(params, "nlp.spacy_model")}
    with stage_run("benchmarks", experiment="aro", profile=params["profile"], paper="aro", seed=seed,
                   params=used) as tr:
        with atomic_dir(args.out) as tmp:
            summary = build_all(args.world, tmp, cfg, wcfg, shuffler, seed)
            write_json(tmp / "summary.json", summary)
        tr.log_metrics({f"benchmarks/{k}": v for k, v in summary.items()})


if __name__ == "__main__":
    run(main)
