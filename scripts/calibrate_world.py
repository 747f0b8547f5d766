"""World calibration sweep for the ARO slice: which world / pretraining / fine-tuning knobs make the toy show
the paper's phenomena? Runs the whole slice in-process at a reduced size for each configuration and appends
one row per (configuration, model) to a CSV that the ARO report shows ("World calibration").

Usage:
  python scripts/calibrate_world.py --config NAME [--config NAME ...] [--out calibration/aro_world.csv]
  python scripts/calibrate_world.py --list

Each configuration is an overlay on params.yaml (see CONFIGS), at the reduced sizes of SIZES; fine-tuning uses
the first LR of `finetune.lr_grid` (no selection). Single seed: a screening tool, not the reported result.
Rows record the git commit, the overlay and the wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import torch
import yaml

from vlcomp.config import build, load_params, merge_overlay, section
from vlcomp.eval.run import score_benchmarks
from vlcomp.generators import GENERATORS
from vlcomp.losses import get_loss
from vlcomp.methods import method_config
from vlcomp.models.factory import create_model, save_checkpoint
from vlcomp.models.scorers import toy_scorer
from vlcomp.profiles.toy.benchmarks import build_benchmarks
from vlcomp.seeding import derive_seed, np_rng
from vlcomp.text.nlp import load_spacy
from vlcomp.text.tokenizer import get_tokenizer
from vlcomp.tracking import git_commit
from vlcomp.train.data import BatchSampler, rows_from_annotations
from vlcomp.train.finetune import FinetuneData, finetune_config, finetune_one, training_split, with_weights
from vlcomp.train.loop import train
from vlcomp.train.recipes import model_spec, train_config
from vlcomp.world import Split, world_configs
from vlcomp.world.generate import generate_world

REPO = Path(__file__).resolve().parents[1]

SIZES = {"world": {"splits": {"web": {"n_images": 20000}, "coco_train": {"n_images": 3000},
                              "coco_val": {"n_images": 300}, "coco_test": {"n_images": 300},
                              "flickr_test": {"n_images": 100}, "vg_test": {"n_images": 1500}}},
         "benchmarks": {"order_seeds": 1, "shuffle_seeds": 1, "zeroshot_images_per_class": 5}}

CONFIGS: dict[str, dict] = {
    "default": {},
    "ft-1ep": {"finetune": {"epochs": 1}},
    "ft-6ep": {"finetune": {"epochs": 6}},
    "bind0.5": {"world": {"captions": {"web_bind_prob": 0.5}}},
    "bind0.5-rel0.2": {"world": {"captions": {"web_bind_prob": 0.5, "web_relation_prob": 0.2}}},
    "vit-p8": {"clip": {"arch": "toy-vit-p8"}},
    "2obj": {"world": {"max_objects": 2}},
    # session 2: the pretrained image tower loses plasticity with pretraining length (see the report)
    "pre1ep": {"pretrain": {"epochs": 1}},
    "pre1ep-ft6ep": {"pretrain": {"epochs": 1}, "finetune": {"epochs": 6}},
    "pre0.5ep": {"pretrain": {"epochs": 0.5}},
    # fewer stacked adjectives, so the gist's ADJ swaps land on colours more often
    "pre1ep-coloradj": {"pretrain": {"epochs": 1},
                        "world": {"captions": {"size_prob": 0.15, "material_prob": 0.15}}},
    "pre1ep-coloradj-ft6ep": {"pretrain": {"epochs": 1}, "finetune": {"epochs": 6},
                              "world": {"captions": {"size_prob": 0.15, "material_prob": 0.15}}},
    # COCO/Flickr twins that also name two objects joined by "and" (real COCO captions do; VG-A's template does)
    "and0.2": {"world": {"captions": {"and_prob": 0.2}}},
    "and0.2-pre1ep": {"pretrain": {"epochs": 1}, "world": {"captions": {"and_prob": 0.2}}},
    # session 3: real-world co-occurrence priors (typical colours per shape, typical vertical / depth order)
    "prior-c0.5-l0.8": {"world": {"colour_prior": 0.5, "layout_prior": 0.8}},
    "prior-c0.25-l0.5": {"world": {"colour_prior": 0.25, "layout_prior": 0.5}},
    # how often web pretraining *needs* binding: colour-swapped twin scenes with bound captions in one batch
    "twin0.2": {"world": {"splits": {"web": {"twin_prob": 0.2}}}},
    "twin0.5": {"world": {"splits": {"web": {"twin_prob": 0.5}}}},
    "twin0.5-pre6ep": {"pretrain": {"epochs": 6}, "world": {"splits": {"web": {"twin_prob": 0.5}}}},
    "twin0.5-prior-and0.5": {"world": {"colour_prior": 0.5, "layout_prior": 0.8, "captions": {"and_prob": 0.5},
                                       "splits": {"web": {"twin_prob": 0.5}}}},
    "twin0.5-prior-and0.5-pre2ep-ft1.5ep": {"pretrain": {"epochs": 2}, "finetune": {"epochs": 1.5},
                                     "world": {"colour_prior": 0.5, "layout_prior": 0.8, "captions": {"and_prob": 0.5},
                                               "splits": {"web": {"twin_prob": 0.5}}}},
}
EVAL_BENCHMARKS = ("vg_relation", "vg_attribution", "coco_order", "coco_retrieval", "zeroshot_aro")
KEYS = ("aro/vg_relation/macro_acc", "aro/vg_attribution/macro_acc", "aro/coco_order/acc",
        "retrieval/coco/i2t/recall_at_1", "retrieval/coco/shuffle/shuffle_all_words/i2t/recall_at_1",
        "zeroshot/cifar10/acc", "aro/vg_relation/wrong_image_macro_acc", "aro/vg_attribution/wrong_image_macro_acc")


def run_config(name: str, overlay: dict, workdir: Path) -> list[dict]:
    t0 = time.time()
    params = merge_overlay(merge_overlay(load_params(REPO / "params.yaml"), SIZES), overlay)
    seed = section(params, "root_seed")
    wcfg, ccfg, specs = world_configs(params)
    world = workdir / "world"
    generate_world(specs, wcfg, ccfg, seed, world)
    spec = model_spec(params)
    tok = get_tokenizer(spec.tokenizer, spec.arch, spec.context_length)
    pcfg = dict(section(params, "pretrain"))
    web = Split(world, pcfg.pop("split"))
    tcfg = train_config(pcfg, "pretrain")
    base = create_model(spec, init_seed=derive_seed(seed, "pretrain", "init"))
    train(base, tok, web.images, BatchSampler(rows_from_annotations(web.captions()), tcfg.batch_size,
                                                                       together=web.twins()),
          get_loss("clip"), tcfg, np_rng(seed, "pretrain", "batches"))
    save_checkpoint(base, workdir / "base.pt")
    mined = workdir / "mined"
    mined.mkdir()
    mcfg = build(GENERATORS.get("negclip").config, section(params, "mine.negclip"), "mine.negclip")
    GENERATORS.get("negclip").run(mcfg, world=world, model=base, nlp=load_spacy(section(params, "nlp.spacy_model")), seed=seed,
                 out_dir=mined)
    bench = workdir / "bench"
    bench.mkdir()
    build_benchmarks(params, world, bench, EVAL_BENCHMARKS)
    fcfg = finetune_config(section(params, "finetune"))
    models = {"clip": base}
    for method in ("clip_ft", "negclip"):
        m = method_config(params, method)
        data = FinetuneData(world, mined, fcfg, m, training_split(params, m))
        m, _ = finetune_one(with_weights(spec, workdir / "base.pt"), data, method_config(params, method),
                            fcfg.train_config(fcfg.lr_grid[0], fcfg.epochs), 0, f"calib/{method}")
        models[method] = m
    rows = []
    for mname, model in models.items():
        metrics = score_benchmarks(toy_scorer(mname, model, tok), list(EVAL_BENCHMARKS), bench, seed=seed)
        rows.append({"config": name, "model": mname, **{k: round(metrics.get(k, float("nan")), 4) for k in KEYS},
                     "overlay": json.dumps(overlay, sort_keys=True), "seconds": round(time.time() - t0),
                     "git_commit": git_commit(REPO)})
    return rows


def append_rows(out: Path, rows: list[dict]) -> None:
    """Add rows to the CSV, keeping the union of columns (older rows get empty cells for newer metrics);
    written to a temporary file and renamed, so an interrupted write never truncates earlier rows."""
    new = pd.DataFrame(rows)
    df = pd.concat([pd.read_csv(out), new], ignore_index=True) if out.exists() else new
    tmp = out.with_suffix(out.suffix + ".tmp")
    df.to_csv(tmp, index=False)
    os.replace(tmp, out)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", action="append", default=[])
    p.add_argument("--out", default=str(REPO / "calibration" / "aro_world.csv"))
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--list", action="store_true")
    args = p.parse_args()
    if args.list:
        print(yaml.safe_dump(CONFIGS, sort_keys=False))
        return
    torch.set_num_threads(args.threads)
    os.environ.setdefault("VLCOMP_TRACKING", "off")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for name in args.config:
        if name not in CONFIGS:
            sys.exit(f"unknown calibration config {name!r}; known: {', '.join(CONFIGS)}")
        with tempfile.TemporaryDirectory(prefix=f"calib-{name}-") as tmp:
            rows = run_config(name, CONFIGS[name], Path(tmp))
        append_rows(out, rows)
        for r in rows:
            print(r, flush=True)


if __name__ == "__main__":
    main()
