"""Stage `benchmarks`: build every ARO benchmark twin from the world (toy profile); in the paper profile, load and
check every released benchmark file and its images before any GPU time (vlcomp.paper.benchmarks)."""

from __future__ import annotations

from _common import parser, run
from vlcomp.config import build, load_params, section
from vlcomp.io import atomic_dir, write_json
from vlcomp.text.perturb import TextShuffler
from vlcomp.tracking import stage_run
from vlcomp.twins.build import BenchmarksConfig, build_all
from vlcomp.world import world_configs


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--world", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    params = load_params(args.params)
    if params["profile"] == "paper":
        from vlcomp.paper.benchmarks import check_benchmarks
        from vlcomp.paper.evaluate import evaluation_settings

        names, inputs, _ = evaluation_settings(params)
        used = {"paper_evaluate.benchmarks": names, "paper_inputs": section(params, "paper_inputs")}
        with stage_run("benchmarks", experiment="aro", profile="paper", paper="aro", params=used) as tr:
            with atomic_dir(args.out) as tmp:
                manifest = check_benchmarks(names, inputs)
                write_json(tmp / "manifest.json", manifest)
            tr.log_metrics({f"benchmarks/{k}/n_items": v["n_items"] for k, v in manifest["benchmarks"].items()})
        return
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
