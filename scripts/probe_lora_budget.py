"""TSVLC LoRA budget probe: does the toy's LoRA fine-tune move the tiny model at all, and what would move it?

Fine-tunes a TSVLC method (default RB+LLM Negs and the CLIP+LoRA baseline) from the pipeline's base of chain b0
(``models/base/b0``) on the pipeline's mined data (``data/mined/<generator>``), for each ``--lrs`` x ``--epochs``,
with the method's LoRA settings, optionally another LoRA ``--alpha``; then scores VL-CheckList and the ELEVATER twin
(``data/benchmarks``) and records the training curve's first and last negatives loss. Each row of
``calibration/tsvlc_lora_budget.csv`` is one run: one seed (the pipeline's b0 fine-tuning seed), one torch thread, a
screening tool: no spread, and nothing in the pipeline reads it.

Needs a finished pipeline run (``make repro``). Usage:

  python scripts/probe_lora_budget.py --methods tsvlc_rbllm tsvlc_lora --lrs 0.01 0.03 --epochs 3 9
"""

from __future__ import annotations

from vlcomp.determinism import pin_environment

pin_environment()  # the stages' CPU kernel pin, before torch runs anything: rows comparable with theirs

import argparse  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402
from dataclasses import replace  # noqa: E402
from pathlib import Path  # noqa: E402

import pandas as pd  # noqa: E402
import torch  # noqa: E402

from vlcomp.config import chain_seed, load_params, section  # noqa: E402
from vlcomp.eval.run import score_benchmarks  # noqa: E402
from vlcomp.io import atomic_path  # noqa: E402
from vlcomp.methods import method_config  # noqa: E402
from vlcomp.models.scorers import toy_scorer  # noqa: E402
from vlcomp.seeding import derive_seed  # noqa: E402
from vlcomp.text.tokenizer import get_tokenizer  # noqa: E402
from vlcomp.train.finetune import FinetuneData, finetune_config, finetune_one, training_split, with_weights  # noqa: E402
from vlcomp.train.recipes import model_spec  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "calibration" / "tsvlc_lora_budget.csv"
KEYS = {"object": "vlchecklist/object/avg", "attribute": "vlchecklist/attribute/avg",
        "relation": "vlchecklist/relation/avg", "zs": "zeroshot/elevater/mean_acc"}


def run_one(params: dict, method_name: str, lr: float, epochs: float, alpha: float | None) -> dict:
    method = method_config(params, method_name)
    if alpha is not None and method.tuning.lora is not None:
        method = replace(method, tuning=replace(method.tuning, lora=replace(method.tuning.lora, alpha=alpha)))
    cfg = finetune_config(section(params, "finetune"))
    base = with_weights(model_spec(params, "b0"), REPO / "models" / "base" / "b0" / "model.pt")
    mined = REPO / "data" / "mined" / method.generator
    positives = REPO / "data" / "mined" / (method.positives_from or method.generator)
    data = FinetuneData(REPO / "data" / "world", mined, cfg, method, training_split(params, method), positives)
    seed = derive_seed(chain_seed(params, "b0"), "finetune", 0)
    t0 = time.time()
    model, history = finetune_one(base, data, method, cfg.train_config(lr, epochs), seed, f"{method_name}-b0s0")
    train_s = time.time() - t0
    scorer = toy_scorer(method_name, model.eval(), get_tokenizer(base.tokenizer, base.arch, base.context_length))
    metrics = score_benchmarks(scorer, ["vlchecklist", "zeroshot_elevater"], REPO / "data" / "benchmarks")
    neg = [h["negatives_loss"] for h in history if "negatives_loss" in h]
    lora = method.tuning.lora
    return {"method": method_name, "lr": lr, "epochs": epochs, "steps": history[-1].get("step", len(history)),
            "lora_alpha": lora.alpha if lora else "", "lora_rank": lora.rank if lora else "",
            "negatives_loss_first": neg[0] if neg else "", "negatives_loss_last": neg[-1] if neg else "",
            **{k: metrics.get(key) for k, key in KEYS.items()}, "train_s": round(train_s, 1)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--methods", nargs="+", default=["tsvlc_rbllm", "tsvlc_lora"])
    p.add_argument("--lrs", nargs="+", type=float, default=[0.01, 0.03])
    p.add_argument("--epochs", nargs="+", type=float, default=[3.0])
    p.add_argument("--alpha", type=float, default=None, help="LoRA alpha instead of the method's (scaling alpha/r)")
    args = p.parse_args()
    torch.set_num_threads(1)
    os.chdir(REPO)
    params = load_params(REPO / "params.yaml")
    rows = []
    for m in args.methods:
        for lr in args.lrs:
            for ep in args.epochs:
                row = run_one(params, m, lr, ep, args.alpha)
                print(row, flush=True)
                rows.append(row)
    df = pd.DataFrame(rows)
    if OUT.exists():
        df = pd.concat([pd.read_csv(OUT), df], ignore_index=True)
    with atomic_path(OUT) as tmp:
        df.to_csv(tmp, index=False)
    print(f"{len(rows)} rows appended to {OUT}")


if __name__ == "__main__":
    main()
