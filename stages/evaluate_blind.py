"""Stage `evaluate_blind@<name>`: the blind-text ceiling `blind.<name>` (a text-only reader that knows only the
scene-graph co-occurrence counts of one world split; no training, no image) on every choice benchmark of
`evaluate.benchmarks`, through the one engine (vlcomp.eval.blind): per-item tables, metrics.json derived from them,
provenance.json, under metrics/blind/<name>/ (not a model folder: reports show it as one reference row). Retrieval
and zero-shot classification are skipped (no choice between captions). Toy profile only: the real profile's splits
have no scene graphs, and its `blind` is empty."""

from __future__ import annotations

from _common import parser, run
from vlcomp.config import load_params, section
from vlcomp.eval.blind import BLIND_SUBDIR, blind_config, blind_scorer, evaluate_blind
from vlcomp.eval.inputs import evaluation_benchmarks, read_manifest
from vlcomp.tracking import ALL_PAPERS, EVALUATE_EXPERIMENT, stage_run


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--name", required=True, help="the blind reader, a key of params blind (blind-text)")
    p.add_argument("--world", required=True, help="the world stage's output (the split whose scene graphs are counted)")
    p.add_argument("--benchmarks", required=True)
    p.add_argument("--out", required=True, help=f"output folder (metrics/{BLIND_SUBDIR}/<name>)")
    args = p.parse_args()
    params = load_params(args.params)
    cfg = blind_config(params, args.name)
    names = evaluation_benchmarks(params)
    inputs = read_manifest(args.benchmarks, seed=section(params, "root_seed"))
    scorer = blind_scorer(params, args.name, args.world)
    stage = f"evaluate_blind@{args.name}"
    used = {"model": args.name, "split": cfg.split, "smoothing": cfg.smoothing, "benchmarks": names}
    with stage_run(stage, experiment=EVALUATE_EXPERIMENT, profile=params["profile"], paper=ALL_PAPERS,
                   method=args.name, params=used) as tr:
        evaluate_blind(scorer, names, inputs, args.out, {
            "model": args.name, "source": "blind", "split": cfg.split, "profile": params["profile"],
            "dvc_stage": stage}, tr)


if __name__ == "__main__":
    run(main)
