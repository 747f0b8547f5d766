"""Stage `benchmarks`: every input the benchmarks of `evaluate.benchmarks` read, checked, in one manifest.

Toy profile: every twin of `benchmarks.twins` is built from the world in its benchmark's released file format,
images as PNG files beside it (vlcomp.twins). Real profile: the released files of `real_inputs`. In both, the
ARO text perturbations (Order options, shuffled retrieval captions) are materialised once, every benchmark is
prepared (every record validated) and every image looked for before any model is scored (vlcomp.eval.inputs)."""

from __future__ import annotations

from _common import parser, run
from vlcomp.config import load_params, section
from vlcomp.eval.inputs import evaluation_benchmarks
from vlcomp.io import atomic_dir, write_tree_digest
from vlcomp.tracking import ALL_PAPERS, TRAINING_EXPERIMENT, stage_run


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--world", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--digest", help="write the output folder's digest here (vlcomp.io.tree_digest): the file the "
                   "evaluation and report stages depend on instead of the folder's thousands of files")
    args = p.parse_args()
    params = load_params(args.params)
    names = evaluation_benchmarks(params)
    seed = section(params, "root_seed")
    used = {"benchmarks": section(params, "benchmarks"), "evaluate.benchmarks": names, "root_seed": seed,
            "nlp.spacy_model": section(params, "nlp.spacy_model")}
    if params["profile"] == "real":
        from vlcomp.profiles.real.benchmarks import build_benchmarks

        used["real_inputs"] = section(params, "real_inputs")
    else:
        from vlcomp.profiles.toy.benchmarks import build_benchmarks
    with stage_run("benchmarks", experiment=TRAINING_EXPERIMENT, profile=params["profile"], paper=ALL_PAPERS, seed=seed,
                   params=used) as tr:
        with atomic_dir(args.out) as tmp:
            manifest = build_benchmarks(params, args.world, tmp, names)
        if args.digest:
            write_tree_digest(args.out, args.digest)
        tr.log_metrics({f"benchmarks/{k}/n_items": v["n_items"] for k, v in manifest["benchmarks"].items()})


if __name__ == "__main__":
    run(main)
