"""Stage `pretrain`: contrastive pretraining of the tiny base CLIP from random init on the web split; in the paper
profile, resolve the pretrained weights instead (OpenAI ViT-B/32, vlcomp.paper.pretrain)."""

from __future__ import annotations

from _common import parser, run
from vlcomp.config import load_params, section
from vlcomp.io import atomic_dir, without_timings, write_json, write_training_curve
from vlcomp.losses import get_loss
from vlcomp.models.factory import create_model, save_checkpoint
from vlcomp.seeding import derive_seed, np_rng
from vlcomp.text.tokenizer import get_tokenizer
from vlcomp.tracking import ALL_PAPERS, TRAINING_EXPERIMENT, stage_run
from vlcomp.train.data import BatchSampler, rows_from_annotations
from vlcomp.train.loop import train
from vlcomp.train.recipes import model_spec, train_config
from vlcomp.world import Split


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--world", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--plots", help="training-curve file for DVC plots (history without timings)")
    args = p.parse_args()
    params = load_params(args.params)
    seed = section(params, "base.seed")
    spec = model_spec(params)
    if params["profile"] == "paper":
        from vlcomp.paper.pretrain import resolve_base

        used = {"model": section(params, "model"), "base.seed": seed}
        with stage_run("pretrain", experiment=TRAINING_EXPERIMENT, profile="paper", paper=ALL_PAPERS, method="clip", seed=seed,
                       params=used) as tr:
            model = resolve_base(spec)
            with atomic_dir(args.out) as tmp:
                save_checkpoint(model, tmp / "model.pt")
                write_json(tmp / "history.json", [])
                write_json(tmp / "model.json", {"arch": spec.arch, "tokenizer": spec.tokenizer,
                                                "context_length": spec.context_length,
                                                "trained_on": f"resolved: {spec.weights}"})
            if args.plots:
                write_training_curve(args.plots, [])
            tr.log_metrics({"pretrain/n_parameters": float(sum(p.numel() for p in model.parameters()))})
        return
    pcfg = dict(section(params, "pretrain"))
    split_name = pcfg.pop("split")
    cfg = train_config(pcfg, "pretrain")
    split = Split(args.world, split_name)
    rows = rows_from_annotations(split.captions())
    tokenizer = get_tokenizer(spec.tokenizer, spec.arch, spec.context_length)
    used = {"model": section(params, "model"), "pretrain": section(params, "pretrain"), "base.seed": seed}
    with stage_run("pretrain", experiment=TRAINING_EXPERIMENT, profile=params["profile"], paper=ALL_PAPERS, method="clip",
                   seed=seed, params=used) as tr:
        model = create_model(spec, init_seed=derive_seed(seed, "pretrain", "init"))
        history = train(model, tokenizer, split.images, BatchSampler(rows, cfg.batch_size, together=split.twins()), get_loss("clip"), cfg,
                        np_rng(seed, "pretrain", "batches"),
                        on_log=lambda step, rec: tr.log_metrics({f"train/{k}": v for k, v in rec.items()}, step=step))
        with atomic_dir(args.out) as tmp:
            save_checkpoint(model, tmp / "model.pt")
            write_json(tmp / "history.json", without_timings(history))  # timings: MLflow only
            write_json(tmp / "model.json", {"arch": spec.arch, "tokenizer": spec.tokenizer,
                                            "context_length": spec.context_length, "trained_on": split_name})
        if args.plots:
            write_training_curve(args.plots, history)


if __name__ == "__main__":
    run(main)
