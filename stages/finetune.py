"""Stage `finetune@<variant>` (train one variant) and `select_lr@<method>` (pick its learning rate)."""

from __future__ import annotations

from pathlib import Path

from _common import parser, run
from vlcomp.config import load_params, section
from vlcomp.io import atomic_dir, read_json, write_json
from vlcomp.models.factory import save_checkpoint
from vlcomp.tracking import stage_run
from vlcomp.train.finetune import FinetuneData, finetune_config, finetune_one, select_lr, with_weights
from vlcomp.train.recipes import method_config, model_spec, variant_config


def main() -> None:
    p = parser(__doc__)
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--variant")
    mode.add_argument("--select-lr", metavar="METHOD")
    p.add_argument("--world", required=True)
    p.add_argument("--base", required=True)
    p.add_argument("--mined", required=True)
    p.add_argument("--lr-dir")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    params = load_params(args.params)
    cfg = finetune_config(section(params, "finetune"))
    base = with_weights(model_spec(params), Path(args.base) / "model.pt")
    profile = params["profile"]

    if args.select_lr:
        name = args.select_lr
        method = method_config(params, name)
        data = FinetuneData(args.world, args.mined, cfg)
        used = {"finetune": section(params, "finetune"), f"methods.{name}": section(params, f"methods.{name}")}
        with stage_run(f"select_lr@{name}", experiment="aro", profile=profile, paper=method.paper, method=name,
                       seed=0, params=used) as tr:
            def log(lr, m):
                tr.log_metrics({f"lr_sweep/{k}": v for k, v in m.items()} | {"lr_sweep/lr": lr})

            result = select_lr(base, data, method, cfg, 0, name, on_result=log)
            with atomic_dir(args.out) as tmp:
                write_json(tmp / "selection.json", result)
            tr.log_metrics({"selected_lr": result["selected_lr"]})
        return

    if not args.lr_dir:
        p.error("--variant needs --lr-dir")
    variant = variant_config(params, args.variant)
    method = method_config(params, variant.method)
    lr = read_json(Path(args.lr_dir) / "selection.json")["selected_lr"]
    tcfg = cfg.train_config(lr, cfg.epochs)
    data = FinetuneData(args.world, args.mined, cfg)
    used = {"finetune": section(params, "finetune"), f"methods.{variant.method}": section(params, f"methods.{variant.method}"),
            f"variants.{args.variant}": section(params, f"variants.{args.variant}"), "selected_lr": lr}
    with stage_run(f"finetune@{args.variant}", experiment="aro", profile=profile, paper=method.paper,
                   method=variant.method, seed=variant.seed, params=used) as tr:
        model, history = finetune_one(base, data, method, tcfg, variant.seed, args.variant,
                                      on_log=lambda s, r: tr.log_metrics({f"train/{k}": v for k, v in r.items()}, step=s))
        with atomic_dir(args.out) as tmp:
            save_checkpoint(model, tmp / "model.pt")
            write_json(tmp / "history.json", history)
            write_json(tmp / "model.json", {"arch": base.arch, "tokenizer": base.tokenizer,
                                            "context_length": base.context_length, "method": variant.method,
                                            "seed": variant.seed, "lr": lr, "n_rows": len(data.rows)})


if __name__ == "__main__":
    run(main)
