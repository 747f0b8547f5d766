"""Stage `evaluate_released@<model>` (real profile): a released checkpoint of `released_models` (OpenAI CLIP, NegCLIP,
CE-CLIP, CoN-CLIP, TSVLC, BLIP, FLAVA) on every benchmark of `evaluate.benchmarks` (inputs from the benchmarks stage's
manifest), scored with each paper's rules; per-item tables, metrics.json derived from them, provenance.json. The toy profile has no released
checkpoints (`released_models: {}`), so DVC generates no such stage there."""

from __future__ import annotations

from _common import parser, run
from vlcomp.config import load_params, section
from vlcomp.tracking import ALL_PAPERS, EVALUATE_EXPERIMENT, stage_run


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--model", required=True, help="a key of released_models")
    p.add_argument("--benchmarks", required=True, help="the benchmarks stage output (manifest.json)")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    params = load_params(args.params)
    if params["profile"] != "real":
        raise ValueError(f"{args.params}: evaluate_released runs in the real profile only (profile: "
                         f"{params['profile']}); switch with `python -m vlcomp.profiles real`")
    from vlcomp.device import resolve_device
    from vlcomp.eval.inputs import evaluation_benchmarks, read_manifest
    from vlcomp.eval.run import evaluate_scorer
    from vlcomp.profiles.real.zoo import build_scorer

    spec = section(params, f"released_models.{args.model}")
    names = evaluation_benchmarks(params)
    inputs = read_manifest(args.benchmarks, seed=section(params, "root_seed"))
    device = resolve_device(str(section(params, "real_evaluate.device")), param="real_evaluate.device")
    scorer = build_scorer(args.model, spec, device=device)
    used = {"model": args.model, "spec": dict(scorer.spec), "benchmarks": names, "device": device}
    with stage_run(f"evaluate_released@{args.model}", experiment=EVALUATE_EXPERIMENT, profile="real", paper=ALL_PAPERS,
                   method=args.model, params=used) as tr:
        evaluate_scorer(scorer, names, inputs, args.out, {**used, "profile": "real", "source": "released",
                                                          "dvc_stage": f"evaluate_released@{args.model}"}, tr)


if __name__ == "__main__":
    run(main)
