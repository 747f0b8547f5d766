"""Stage `finetune@<variant>` (train one variant, params `variants.<variant>`) and `select_lr@<method>-<base>` (pick a
method's learning rate on one chain's base model and mined data, params `selections.<method>-<base>`). Both draw their
randomness from the chain's seed (vlcomp.config.chain_seed) and the run's name.

Runs alone (`dvc repro`) or under torchrun (`torchrun --nproc_per_node N stages/finetune.py --variant ...`):
every rank trains on its shard of each global batch (vlcomp.distributed), rank 0 alone logs to MLflow and
writes the outputs. With `finetune.checkpoint_every` > 0 the training state is saved atomically to
`checkpoints/finetune@<variant>/` and a killed run resumes from it when the stage is run again (bitwise the
same result as an uninterrupted run); the folder is removed once the stage's outputs are written.
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

from _common import parser, run
from vlcomp.config import chain_seed, load_params, section
from vlcomp.device import resolve_device
from vlcomp.distributed import init_from_env, is_main
from vlcomp.io import atomic_dir, read_json, without_timings, write_json, write_training_curve
from vlcomp.methods import method_config, variant_config
from vlcomp.models.factory import save_checkpoint
from vlcomp.seeding import derive_seed
from vlcomp.tracking import TRAINING_EXPERIMENT, StageRun, stage_run
from vlcomp.train.finetune import (
    FinetuneData,
    finetune_config,
    finetune_one,
    lr_grid,
    select_lr,
    training_split,
    with_weights,
)
from vlcomp.train.recipes import model_spec


def main() -> None:
    p = parser(__doc__)
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--variant")
    mode.add_argument("--select-lr", metavar="SELECTION", help="a key of params selections, e.g. negclip-b0")
    p.add_argument("--world", required=True)
    p.add_argument("--base", required=True)
    p.add_argument("--mined", required=True)
    p.add_argument("--mined-positives", help="the folder of methods.<m>.positives_from's output (default: --mined)")
    p.add_argument("--lr-dir")
    p.add_argument("--out", required=True)
    p.add_argument("--plots", help="training-curve file for DVC plots (history without timings)")
    args = p.parse_args()
    params = load_params(args.params)
    cfg = finetune_config(section(params, "finetune"))
    profile = params["profile"]

    if args.select_lr:
        key = args.select_lr
        sel = section(params, f"selections.{key}")
        name = sel["method"]
        method = method_config(params, name)
        base = with_weights(model_spec(params, sel["base"]), Path(args.base) / "model.pt")
        # a one-rate grid selects that rate without a run: no data to load
        data = (FinetuneData(args.world, args.mined, cfg, method, training_split(params, method), args.mined_positives)
                if len(lr_grid(method, cfg)) > 1 else None)
        used = {"finetune": section(params, "finetune"), f"methods.{name}": section(params, f"methods.{name}"),
                f"selections.{key}": sel, f"bases.{sel['base']}": section(params, f"bases.{sel['base']}")}
        with stage_run(f"select_lr@{key}", experiment=TRAINING_EXPERIMENT, profile=profile, paper=method.paper, method=name,
                       base=sel["base"], params=used) as tr:
            def log(lr, m):
                tr.log_metrics({f"lr_sweep/{k}": v for k, v in m.items()} | {"lr_sweep/lr": lr})

            result = select_lr(base, data, method, cfg, chain_seed(params, sel["base"]), key, on_result=log,
                               device=resolve_device(cfg.device, param="finetune.device"))
            with atomic_dir(args.out) as tmp:
                write_json(tmp / "selection.json", result)
            tr.log_metrics({"selected_lr": result["selected_lr"]})
        return

    if not args.lr_dir:
        p.error("--variant needs --lr-dir")
    init_from_env()  # a no-op unless launched by torchrun
    main_rank = is_main()
    device = resolve_device(cfg.device, param="finetune.device")
    ckpt_dir = Path("checkpoints") / f"finetune@{args.variant}"
    variant = variant_config(params, args.variant)
    method = method_config(params, variant.method)
    base = with_weights(model_spec(params, variant.base), Path(args.base) / "model.pt")
    lr = read_json(Path(args.lr_dir) / "selection.json")["selected_lr"]
    tcfg = cfg.train_config(lr, method.epochs or cfg.epochs, method)
    data = FinetuneData(args.world, args.mined, cfg, method, training_split(params, method), args.mined_positives)
    used = {"finetune": section(params, "finetune"), f"methods.{variant.method}": section(params, f"methods.{variant.method}"),
            f"variants.{args.variant}": section(params, f"variants.{args.variant}"), "selected_lr": lr,
            f"bases.{variant.base}": section(params, f"bases.{variant.base}")}
    tracked = (stage_run(f"finetune@{args.variant}", experiment=TRAINING_EXPERIMENT, profile=profile, paper=method.paper,
                         method=variant.method, base=variant.base, seed=variant.seed, params=used)
               if main_rank else contextlib.nullcontext(StageRun(False)))
    with tracked as tr:
        seed = derive_seed(chain_seed(params, variant.base), "finetune", variant.seed)
        model, history = finetune_one(base, data, method, tcfg, seed, args.variant,
                                      on_log=lambda s, r: tr.log_metrics({f"train/{k}": v for k, v in r.items()}, step=s),
                                      checkpoint_dir=ckpt_dir if cfg.checkpoint_every else None,
                                      checkpoint_every=cfg.checkpoint_every, resume=bool(cfg.checkpoint_every),
                                      device=device)
        if not main_rank:
            return
        model = model.cpu()
        with atomic_dir(args.out) as tmp:
            save_checkpoint(model, tmp / "model.pt")
            write_json(tmp / "history.json", without_timings(history))  # timings: MLflow only
            write_json(tmp / "model.json", {"arch": base.arch, "tokenizer": base.tokenizer,
                                            "context_length": base.context_length, "method": variant.method,
                                            "base": variant.base, "seed": variant.seed, "lr": lr, "n_rows": len(data.rows),
                                            **({"init": method.init} if method.init != "base" else {})})
        if args.plots:
            write_training_curve(args.plots, history)
        shutil.rmtree(ckpt_dir, ignore_errors=True)  # the outputs are in place; the resume state is spent


if __name__ == "__main__":
    run(main)
