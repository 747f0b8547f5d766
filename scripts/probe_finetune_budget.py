"""Fine-tuning budget probe for the ARO slice: what do more epochs, or more fine-tuning images, buy?

Fine-tunes CLIP-FT and/or NegCLIP from the pipeline's base of chain b0 (``models/base/b0``) on a COCO twin of ``--n-images``
images for ``--epochs`` epochs at the LR the pipeline selected (``--lr`` overrides it), then scores the pipeline's benchmarks
(``data/benchmarks``). When ``--n-images`` differs from the pipeline's ``coco_train``, that split is generated
into a work folder (the other splits are linked) and mined with the pipeline's miner. Besides the ARO metrics,
``rel_swap_acc`` scores every relation caption of the form "A REL B" against its clean subject/object swap
"B REL A" on whole images, on ``coco_train`` (what NegCLIP trained on) and on ``coco_test``.

Single seed, one torch thread: a screening tool. Rows are appended to ``calibration/aro_finetune_budget.csv``.
Needs a finished pipeline run (``make repro``). Usage:

  python scripts/probe_finetune_budget.py --n-images 9000 --epochs 1 --methods negclip clip_ft
"""

from __future__ import annotations

from vlcomp.determinism import pin_environment

pin_environment()  # the stages' CPU kernel pin, before torch runs anything: rows comparable with theirs

import argparse  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402

from vlcomp.config import build, load_params, section  # noqa: E402
from vlcomp.eval.run import score_benchmarks  # noqa: E402
from vlcomp.generators.negclip import NegClipMineConfig  # noqa: E402
from vlcomp.generators.negclip import run as mine_negclip  # noqa: E402
from vlcomp.io import atomic_path, read_json  # noqa: E402
from vlcomp.methods import method_config  # noqa: E402
from vlcomp.models.encode import encode_images, encode_texts  # noqa: E402
from vlcomp.models.factory import create_model  # noqa: E402
from vlcomp.models.scorers import toy_scorer  # noqa: E402
from vlcomp.text.nlp import load_spacy  # noqa: E402
from vlcomp.text.tokenizer import get_tokenizer  # noqa: E402
from vlcomp.train.finetune import FinetuneData, finetune_config, finetune_one, training_split, with_weights  # noqa: E402
from vlcomp.train.recipes import model_spec  # noqa: E402
from vlcomp.world import Split, world_configs  # noqa: E402
from vlcomp.world.generate import generate_world  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
KEYS = ("aro/vg_relation/macro_acc", "aro/vg_relation/wrong_image_macro_acc", "aro/vg_relation/text_swap_cosine",
        "aro/vg_attribution/macro_acc", "aro/vg_attribution/wrong_image_macro_acc", "aro/coco_order/acc",
        "retrieval/coco/i2t/recall_at_1")
RELATIONS = ("to the left of", "to the right of", "above", "below", "in front of", "behind", "pointing at",
             "covering", "covered by", "inside")
_REL = re.compile(r"^(there is |)(.+?) (is |)(" + "|".join(RELATIONS) + r") (.+?)( on (?:a|an|the) .+ background|)$")


def relation_swaps(captions: list[dict], limit: int) -> list[tuple[int, str, str]]:
    """(image index, caption, its subject/object swap) for captions "A REL B" without a third object."""
    out = []
    for i, ann in enumerate(captions):
        for cap in ann["caption"]:
            m = _REL.match(cap)
            if m and " with " not in cap:
                lead, a, is_, rel, b, bg = m.groups()
                out.append((i, cap, f"{lead}{b} {is_}{rel} {a}{bg}"))
    return out[:limit]


def rel_swap_acc(model, tok, split: Split, limit: int = 3000) -> float:
    cases = relation_swaps(split.annotations(), limit)
    idx = sorted({c[0] for c in cases})
    pos = {j: k for k, j in enumerate(idx)}
    img = encode_images(model, np.asarray(split.images[idx]))[[pos[c[0]] for c in cases]]
    t_true = encode_texts(model, tok, [c[1] for c in cases])
    t_swap = encode_texts(model, tok, [c[2] for c in cases])
    return float(((img * t_true).sum(1) > (img * t_swap).sum(1)).float().mean())


def prepare_data(params: dict, n_images: int, work: Path) -> tuple[Path, Path]:
    """World and mined folders whose coco_train has ``n_images`` images."""
    world, mined = REPO / "data" / "world", REPO / "data" / "mined" / "negclip-b0"
    if n_images == params["world"]["splits"]["coco_train"]["n_images"]:
        return world, mined
    params["world"]["splits"]["coco_train"]["n_images"] = n_images
    wcfg, ccfg, specs = world_configs(params)
    new_world, new_mined = work / "world", work / "mined"
    new_world.mkdir(parents=True)
    new_mined.mkdir()
    for s in os.listdir(world):
        if s != "coco_train" and (world / s).is_dir():
            os.symlink(world / s, new_world / s)
    generate_world([s for s in specs if s.name == "coco_train"], wcfg, ccfg, params["root_seed"], new_world)
    base = create_model(with_weights(model_spec(params), REPO / "models" / "base" / "b0" / "model.pt"))
    mine_negclip(build(NegClipMineConfig, section(params, "mine.negclip"), "mine.negclip"), world=new_world,
                 model=base, nlp=load_spacy(section(params, "nlp.spacy_model")), seed=params["root_seed"],
                 out_dir=new_mined)
    return new_world, new_mined


def append(out: Path, rows: list[dict]) -> None:
    df = pd.DataFrame(rows)
    if out.exists():
        df = pd.concat([pd.read_csv(out), df], ignore_index=True)
    with atomic_path(out) as tmp:
        df.to_csv(tmp, index=False)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n-images", type=int, required=True)
    p.add_argument("--epochs", type=float, required=True)
    p.add_argument("--methods", nargs="+", default=["negclip", "clip_ft"])
    p.add_argument("--lr", type=float, help="fine-tuning LR (default: models/lr/<method>-b0/selection.json)")
    p.add_argument("--out", default=str(REPO / "calibration" / "aro_finetune_budget.csv"))
    args = p.parse_args()
    torch.set_num_threads(1)
    params = load_params(REPO / "params.yaml")
    spec = model_spec(params)
    tok = get_tokenizer(spec.tokenizer, spec.arch, spec.context_length)
    fcfg = finetune_config(section(params, "finetune"))
    rows = []
    with tempfile.TemporaryDirectory(prefix="vlcomp-budget-") as tmp:
        world, mined = prepare_data(params, args.n_images, Path(tmp))
        for method in args.methods:
            m = method_config(params, method)
            data = FinetuneData(world, mined, fcfg, m, training_split(params, m))
            lr = args.lr or read_json(REPO / "models" / "lr" / f"{method}-b0" / "selection.json")["selected_lr"]
            t0 = time.time()
            model, _ = finetune_one(with_weights(spec, REPO / "models" / "base" / "b0" / "model.pt"), data,
                                    method_config(params, method), fcfg.train_config(lr, args.epochs), 0,
                                    f"budget/{method}")
            seconds = time.time() - t0
            met = score_benchmarks(toy_scorer(method, model, tok), ["vg_relation", "vg_attribution", "coco_order",
                                                                    "coco_retrieval"], REPO / "data" / "benchmarks")
            rows.append({"config": f"n{args.n_images}-ep{args.epochs:g}", "model": method,
                         "coco_train_images": args.n_images, "epochs": args.epochs, "lr": lr,
                         "train_seconds": round(seconds),
                         **{k: round(met[k], 4) for k in KEYS},
                         "train_rel_swap_acc": round(rel_swap_acc(model, tok, Split(world, "coco_train")), 4),
                         "test_rel_swap_acc": round(rel_swap_acc(model, tok, Split(world, "coco_test")), 4),
                         "source": "probe (1 thread)"})
            print(rows[-1], flush=True)
    append(Path(args.out), rows)


if __name__ == "__main__":
    main()
