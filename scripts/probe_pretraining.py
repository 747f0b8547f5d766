"""Pretraining-competence probe (P4 of the toy-world issue, first part): does longer contrastive pretraining on the
web split teach the base to see shapes?

P1 (``scripts/probe_perception.py``) found that the toy image tower learns shapes under supervision (0.66 small-object
accuracy at 20k samples at today's sizes, 0.95 with x2 objects) while a linear probe on the pipeline's base reaches
0.25: the base was pretrained for ``pretrain.epochs`` (2) epochs of the 30,000-image web split, 60k samples. This
probe pretrains the chain-b0 base exactly as the ``pretrain`` stage does (:func:`vlcomp.profiles.toy.pretrain.base_model`,
same seed, recipe and data) for several lengths (``--epochs``), and scores each on P1's held-out single-object images
(today's object sizes):

- ``zs_small`` / ``zs_large``: zero-shot shape accuracy (8 shapes, the zero-shot twins' 4 prompt templates averaged);
- ``lin_small`` / ``lin_large``: a linear probe on its frozen image features (P1's ``base-linear``, 10,240 images).

The 2-epoch run repeats the stage's recipe; it is not bitwise the stage's model when the thread count differs.

The world is the ``--world`` folder's (``world``: the pipeline's ``data/world``; another, e.g. a candidate world from
``scripts/make_world.py`` with its ``--params``, names its rows by its folder): only the pretraining length changes. One row per length is written to ``--out`` (rows with
the same length and seed are replaced); ``seconds`` and ``git_commit`` are the only fields that are not a function
of the seed.

``--epochs 0`` scores the base's random initialisation (the untrained reference). ``--save DIR`` writes each trained
model to ``DIR/e<epochs>/model.pt`` (the starting points of the plasticity half of P4, ``scripts/probe_plasticity.py
--base DIR/e<epochs>``).

Usage: python scripts/probe_pretraining.py --epochs 0 2 4 8 [--threads 2]
"""

from __future__ import annotations

from vlcomp.determinism import pin_environment

pin_environment()  # the stages' CPU kernel pin, before torch runs anything

import argparse  # noqa: E402
import copy  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402
from probe_perception import accuracy, fit_linear, merge_rows, sample_images  # noqa: E402 (scripts/ is on sys.path)

from vlcomp.config import chain_seed, load_params  # noqa: E402
from vlcomp.models.encode import encode_images, encode_texts  # noqa: E402
from vlcomp.models.factory import create_model, save_checkpoint  # noqa: E402
from vlcomp.profiles.toy.pretrain import base_model  # noqa: E402
from vlcomp.seeding import derive_seed, np_rng  # noqa: E402
from vlcomp.text.tokenizer import get_tokenizer  # noqa: E402
from vlcomp.tracking import git_commit  # noqa: E402
from vlcomp.train.recipes import model_spec  # noqa: E402
from vlcomp.twins.zeroshot import TEMPLATES  # noqa: E402
from vlcomp.world.concepts import SHAPES, SIZES  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
LINEAR_SAMPLES = 10240
N_EVAL = 800


@torch.no_grad()
def zero_shot(model, tokenizer, images: np.ndarray, labels: np.ndarray) -> float:
    """Shape accuracy: each image against the 8 shapes' prompt-averaged text features."""
    feats = []
    for shape in SHAPES:
        t = encode_texts(model, tokenizer, [tpl.format(c=shape) for tpl in TEMPLATES]).mean(0)
        feats.append(t / t.norm())
    logits = encode_images(model, images) @ torch.stack(feats).T
    return accuracy(logits, labels)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--epochs", type=float, nargs="+", required=True, help="pretraining lengths (params: 2)")
    p.add_argument("--params", default=str(REPO / "params.yaml"))
    p.add_argument("--world", default=str(REPO / "data" / "world"))
    p.add_argument("--base", default="b0", help="the chain whose seed and recipe are used")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", default=str(REPO / "calibration" / "world_pretraining.csv"))
    p.add_argument("--save", default="", help="write each model to SAVE/e<epochs>/model.pt")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    params = load_params(args.params)
    seed = chain_seed(params, args.base)
    spec = model_spec(params, args.base)
    tokenizer = get_tokenizer(spec.tokenizer, spec.arch, spec.context_length)
    size = params["world"]["image_size"]
    evalsets = {s: sample_images(np_rng(0, "perception", "eval", s), N_EVAL, size, 1.0, s)[:2] for s in SIZES}
    xtr, ytr, _ = sample_images(np_rng(0, "perception", "train"), LINEAR_SAMPLES, size, 1.0)
    rows = []
    for epochs in args.epochs:
        t0 = time.time()
        if epochs == 0:  # the base's random init (the one base_model starts from): the untrained reference
            model, history = create_model(spec, init_seed=derive_seed(seed, "pretrain", "init")), []
        else:
            run_params = copy.deepcopy(params)
            run_params["pretrain"]["epochs"] = epochs
            model, history, _ = base_model(run_params, args.world, base=args.base, seed=seed)
        if args.save:
            save_checkpoint(model, Path(args.save) / f"e{epochs:g}" / "model.pt")
        model.eval()
        ftr = encode_images(model, xtr)
        mean, std = ftr.mean(0), ftr.std(0) + 1e-6
        head = fit_linear((ftr - mean) / std, ytr, 0)
        steps = int(history[-1]["step"]) if history else 0
        row = {"probe": "P4", "world": Path(args.world).name, "base": args.base, "seed": seed, "arch": spec.arch, "epochs": epochs, "steps": steps,
               "samples": steps * int(params["pretrain"]["batch_size"]),
               "final_loss": round(float(history[-1]["contrastive_loss"]), 4) if history else np.nan}
        for s, (xe, ye) in evalsets.items():
            row[f"zs_{s}"] = zero_shot(model, tokenizer, xe, ye)
            with torch.no_grad():
                row[f"lin_{s}"] = accuracy(head((encode_images(model, xe) - mean) / std), ye)
        row |= {"chance": round(1 / len(SHAPES), 4), "seconds": round(time.time() - t0, 1),
                "git_commit": git_commit(REPO)}
        print(row, flush=True)
        rows.append(row)
        merge_rows(Path(args.out), pd.DataFrame([row]), {k: row[k] for k in ("probe", "world", "base", "seed", "epochs")})


if __name__ == "__main__":
    main()
