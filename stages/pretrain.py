"""Stage `pretrain@<base>`: the base model of one chain (params `bases.<base>`: the chain's default base `b<k>`, or
another base model `<family>-b<k>` with its own architecture and pretraining loss, `base_models.<family>`). Toy profile:
train the tiny CLIP from scratch on the world's web split, seeded from the chain's seed (vlcomp.profiles.toy.pretrain);
real profile: resolve the pretrained weights instead (OpenAI ViT-B/32, vlcomp.profiles.real.pretrain)."""

from __future__ import annotations

from _common import parser, run
from vlcomp.config import BASE_METHOD, chain_seed, load_params, section
from vlcomp.io import atomic_dir, without_timings, write_json, write_training_curve
from vlcomp.models.factory import save_checkpoint
from vlcomp.tracking import ALL_PAPERS, TRAINING_EXPERIMENT, stage_run
from vlcomp.train.recipes import model_spec


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--base", required=True, help="the chain (a key of params bases, e.g. b0)")
    p.add_argument("--world", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--plots", help="training-curve file for DVC plots (history without timings)")
    args = p.parse_args()
    params = load_params(args.params)
    seed = chain_seed(params, args.base)
    spec = model_spec(params, args.base)
    used = {"clip": section(params, "clip"), "root_seed": section(params, "root_seed"),
            f"bases.{args.base}": section(params, f"bases.{args.base}")}
    if params["profile"] == "real":
        from vlcomp.profiles.real.pretrain import base_model
    else:
        from vlcomp.profiles.toy.pretrain import base_model

        used["pretrain"] = section(params, "pretrain")
    with stage_run(f"pretrain@{args.base}", experiment=TRAINING_EXPERIMENT, profile=params["profile"], paper=ALL_PAPERS,
                   method=BASE_METHOD, base=args.base, params=used) as tr:
        model, history, trained_on = base_model(
            params, args.world, base=args.base, seed=seed, on_log=lambda step, rec: tr.log_metrics({f"train/{k}": v for k, v in rec.items()}, step=step))
        with atomic_dir(args.out) as tmp:
            save_checkpoint(model, tmp / "model.pt")
            write_json(tmp / "history.json", without_timings(history))  # timings: MLflow only
            write_json(tmp / "model.json", {"arch": spec.arch, "tokenizer": spec.tokenizer,
                                            "context_length": spec.context_length, "trained_on": trained_on,
                                            "base": args.base, "base_seed": section(params, f"bases.{args.base}.seed")})
        if args.plots:
            write_training_curve(args.plots, history)
        tr.log_metrics({"pretrain/n_parameters": float(sum(p.numel() for p in model.parameters()))})


if __name__ == "__main__":
    run(main)
