"""Stage `evaluate@<model>`: every ARO benchmark on one model; per-item scores + metrics.json. In the paper profile the
model runs the papers' released-format benchmarks of `paper_evaluate.benchmarks` (vlcomp.paper.evaluate)."""

from __future__ import annotations

import time
from pathlib import Path

from _common import parser, run
from vlcomp.config import load_params, section
from vlcomp.eval.toy_suite import EvalContext
from vlcomp.evaluation import aggregate_items, evaluate_model, read_items, write_items
from vlcomp.io import atomic_dir, read_json, write_json
from vlcomp.models.factory import ModelSpec, create_model
from vlcomp.text.tokenizer import get_tokenizer
from vlcomp.tracking import git_commit, stage_run


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--stage", required=True, help="the DVC stage name, for the MLflow tag (evaluate@negclip-s0)")
    p.add_argument("--model", required=True, help="model name (clip, or a variant such as negclip-s0)")
    p.add_argument("--method", default="clip")
    p.add_argument("--seed", default="")
    p.add_argument("--checkpoint", required=True, help="directory with model.pt and model.json")
    p.add_argument("--benchmarks", required=True)
    p.add_argument("--world", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    params = load_params(args.params)
    ckpt = Path(args.checkpoint)
    meta = read_json(ckpt / "model.json")
    if params["profile"] == "paper":
        from vlcomp.eval.run import evaluate_scorer
        from vlcomp.paper.evaluate import checkpoint_scorer, evaluation_settings

        names, inputs, device = evaluation_settings(params)
        scorer = checkpoint_scorer(args.model, ckpt, device)
        used = {"model": args.model, **meta, "benchmarks": names, "device": device}
        with stage_run(args.stage, experiment="aro-evaluate", profile="paper", paper="aro", method=args.method,
                       seed=args.seed, params=used) as tr:
            evaluate_scorer(scorer, names, inputs, args.out, {
                "model": args.model, "method": args.method, "seed": args.seed, "checkpoint": str(ckpt),
                "source": "pipeline", "benchmarks": names, "device": device, "git_commit": git_commit(),
                "dvc_stage": args.stage}, tr)
        return
    spec = ModelSpec(meta["arch"], str(ckpt / "model.pt"), meta["tokenizer"], meta["context_length"])
    model = create_model(spec)
    tokenizer = get_tokenizer(spec.tokenizer, spec.arch, spec.context_length)
    seed = section(params, "base.seed")
    ctx = EvalContext(model, tokenizer, Path(args.benchmarks), Path(args.world), seed,
                      batch_size=section(params, "evaluate.batch_size"))
    with stage_run(args.stage, experiment="aro-evaluate", profile=params["profile"], paper="aro",
                   method=args.method, seed=args.seed, params={"model": args.model, **meta}) as tr:
        t0 = time.time()
        items = evaluate_model(ctx)
        settings = read_json(Path(args.benchmarks) / "settings.json")
        with atomic_dir(args.out) as tmp:
            write_items(tmp, items)
            metrics = aggregate_items(read_items(tmp), settings)  # metrics.json is derived from the saved per-item scores
            write_json(tmp / "metrics.json", metrics)
            write_json(tmp / "provenance.json", {
                "model": args.model, "method": args.method, "seed": args.seed, "checkpoint": str(ckpt),
                "benchmarks": args.benchmarks, "git_commit": git_commit(), "profile": params["profile"], "dvc_stage": args.stage,
                "mlflow_run_id": tr.run_id, "n_items": {k: len(v) for k, v in items.items()},
                "n_unique_texts_encoded": ctx.n_encoded_texts,
                "n_unique_crops_encoded": ctx.n_encoded_crops, "seconds": round(time.time() - t0, 1)})
        tr.log_metrics(metrics)


if __name__ == "__main__":
    run(main)
