"""Stage `evaluate_base` / `evaluate@<variant>`: one model of the pipeline on every benchmark of
`evaluate.benchmarks`, read from the `benchmarks` stage's manifest, through the one engine (vlcomp.eval); per-item
tables, metrics.json derived from them, provenance.json. The toy profile scores its tiny CLIP with the toy's own
preprocessing (squash + resize, vlcomp.profiles.toy.evaluate); the real profile rebuilds the model through the model zoo (vlcomp.profiles.real.evaluate)."""

from __future__ import annotations

from pathlib import Path

from _common import parser, run
from vlcomp.config import base_method, load_params, section
from vlcomp.device import resolve_device
from vlcomp.eval.inputs import evaluation_benchmarks, read_manifest
from vlcomp.eval.run import evaluate_scorer
from vlcomp.io import read_json
from vlcomp.tracking import EVALUATE_EXPERIMENT, evaluation_params, paper_tag, stage_run


def pipeline_scorer(params: dict, name: str, ckpt: Path):
    """The scorer of a pipeline model directory (``model.json`` + ``model.pt``) in the active profile."""
    if params["profile"] == "real":
        from vlcomp.profiles.real.evaluate import checkpoint_scorer

        return checkpoint_scorer(name, ckpt, resolve_device(str(section(params, "real_evaluate.device")),
                                                            param="real_evaluate.device"))
    from vlcomp.profiles.toy.evaluate import checkpoint_scorer

    return checkpoint_scorer(params, name, ckpt)


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--stage", required=True, help="the DVC stage name, for the MLflow tag (evaluate@negclip-b0s0)")
    p.add_argument("--model", required=True, help="model name (a base model clip-b0, or a variant such as negclip-b0s0)")
    p.add_argument("--method", help="the variant's method (default, for a base model: vlcomp.config.base_method)")
    p.add_argument("--base", required=True, help="the model's chain (a key of params bases, e.g. b0)")
    p.add_argument("--seed", type=int, default=None, help="the fine-tuning seed (none for a base model)")
    p.add_argument("--checkpoint", required=True, help="directory with model.pt and model.json")
    p.add_argument("--benchmarks", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    params = load_params(args.params)
    args.method = args.method or base_method(params, args.base)
    ckpt = Path(args.checkpoint)
    meta = read_json(ckpt / "model.json")
    names = (evaluation_benchmarks(params, base=args.base) if args.seed is None
             else evaluation_benchmarks(params, variant=args.model))
    inputs = read_manifest(args.benchmarks, seed=section(params, "root_seed"))
    scorer = pipeline_scorer(params, args.model, ckpt)
    if args.base not in section(params, "bases"):
        raise ValueError(f"--base {args.base!r}: not a key of params bases ({', '.join(section(params, 'bases'))})")
    used = evaluation_params(args.model, args.method, args.base, args.seed, meta, names)
    with stage_run(args.stage, experiment=EVALUATE_EXPERIMENT, profile=params["profile"],
                   paper=paper_tag(params, method=args.method), method=args.method,
                   base=args.base, seed=used["seed"], params=used) as tr:
        evaluate_scorer(scorer, names, inputs, args.out, {
            "model": args.model, "method": args.method, "base": args.base, "seed": args.seed, "checkpoint": str(ckpt),
            "source": "pipeline", "benchmarks": names, "profile": params["profile"],
            "dvc_stage": args.stage}, tr)


if __name__ == "__main__":
    run(main)
