"""Plasticity probe: can hard-negative fine-tuning still teach attribute binding to a pretrained toy CLIP?

Why this exists: in the default world, NegCLIP fine-tuning from the web-pretrained base leaves VG-Attribution
near chance (0.52), even though its mined negatives include colour swaps. This probe isolates the cause with
clean hard negatives on the COCO-twin scenes (50% subject/object swaps "a c2 s2 REL a c1 s1", 50% colour
swaps "a c2 s1 REL a c1 s2", one per caption, B images x 2B texts, NegCLIP's loss without hard images) and
measures, on coco_test scenes, the true caption against its colour swap (``col_rel``; ``col_and``: the same
swap in VG-A's template "the c1 s1 and the c2 s2", on the whole image) and against its subject/object swap
(``rel_any``; ``rel_lr`` restricted to left/right/above/below). At the last step it also scores the pipeline's
VG-Attribution twin (``vga_macro``, and ``vga_colour`` on its colour cases), which adds the union-box crop.
``--colour-share`` sets the share of colour swaps among the hard negatives (the rest are subject/object swaps);
``--colour-share 0`` is the relation-only probe (every hard negative a subject/object swap). At the last step it
also scores the pipeline's VG-Relation twin (``vgr_macro``) and its wrong-image control (``vgr_wrong_image``).
``--nouns bare`` trains on bare shape nouns ("a circle above a square" against "a square above a circle", VG-R's
form; implies ``--colour-share 0``): the shape-only relation probe (P2 from ``scratch``, the plasticity half of P4
from a pretrained ``--base``). With colour-named training captions (``--nouns colour``, the default) a model can
key relations to colours, and ``rel_any`` measures transfer to bare nouns instead.

Starting points (``--start``):
  scratch          random init;
  pretrain:N       N steps of web pretraining (batch 256, CLIP loss, lr 1e-3, cosine) from random init;
  base             the pipeline's `models/base/b0` checkpoint (chain b0);
  base-fresh-image the base with its image tower re-initialised (text tower kept);
  base-fresh-text  the base with its text tower re-initialised (image tower kept).

Each run appends one row per evaluation point to ``--out`` (CSV); ``base_model`` the name of the ``--base`` folder for the ``base*`` starts (``b0``: the pipeline's;
``e16``/``e32``: ``scripts/probe_pretraining.py --save``); ``world`` is the name of the ``--world`` folder
(``world``: the pipeline's ``data/world``; others from ``scripts/make_world.py``). One torch thread per run by default, so two
runs can share the 2-core machine. Steps are counted (not seconds), so a row is reproducible from its seed.

Usage: python scripts/probe_plasticity.py --start base --steps 600 [--world data/world] [--base models/base/b0]
"""

from __future__ import annotations

from vlcomp.determinism import pin_environment

pin_environment()  # the stages' CPU kernel pin, before torch runs anything: rows comparable with theirs

import argparse  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from vlcomp.benchmarks import BENCHMARKS  # noqa: E402
from vlcomp.eval.inputs import read_manifest  # noqa: E402
from vlcomp.io import atomic_path, read_json  # noqa: E402
from vlcomp.models.encode import clip_forward, encode_images, encode_texts  # noqa: E402
from vlcomp.models.factory import ModelSpec, create_model, to_tensor  # noqa: E402
from vlcomp.models.scorers import toy_scorer  # noqa: E402
from vlcomp.seeding import derive_seed, np_rng  # noqa: E402
from vlcomp.text.tokenizer import get_tokenizer  # noqa: E402
from vlcomp.tracking import git_commit  # noqa: E402
from vlcomp.train.loop import lr_at  # noqa: E402
from vlcomp.world import Split  # noqa: E402
from vlcomp.world.concepts import ALL_RELATIONS  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SPATIAL = ("to the left of", "to the right of", "above", "below")


def facts(split: Split) -> list[tuple[int, object, str, object]]:
    """(image index, subject, relation, object) for asymmetric relations between different shapes."""
    out = []
    for i, sc in enumerate(split.scenes()):
        for s, rel, o in sc.relations:
            a, b = sc.obj(s), sc.obj(o)
            if not ALL_RELATIONS[rel].symmetric and a.shape != b.shape:
                out.append((i, a, rel, b))
    return out


def caption(a, rel: str, b, colour: bool = True) -> str:
    np_ = (lambda o: f"{o.colour} {o.shape}") if colour else (lambda o: o.shape)
    return f"a {np_(a)} {rel} a {np_(b)}"


def tests(split: Split) -> dict[str, list[tuple[int, str, str]]]:
    f = facts(split)
    return {
        "col_rel": [(i, caption(a, r, b), f"a {b.colour} {a.shape} {r} a {a.colour} {b.shape}")
                    for i, a, r, b in f if a.colour != b.colour],
        # the VG-A template ("the c1 s1 and the c2 s2") on the whole image: template transfer without the crop
        "col_and": [(i, f"the {a.colour} {a.shape} and the {b.colour} {b.shape}",
                     f"the {b.colour} {a.shape} and the {a.colour} {b.shape}") for i, a, r, b in f if a.colour != b.colour],
        "rel_any": [(i, caption(a, r, b, False), caption(b, r, a, False)) for i, a, r, b in f],
        "rel_lr": [(i, caption(a, r, b, False), caption(b, r, a, False)) for i, a, r, b in f if r in SPATIAL],
    }


@torch.no_grad()
def evaluate(model, tok, images, cases) -> dict[str, float]:
    fi = encode_images(model, images)
    out = {}
    for name, rows in cases.items():
        idx = [r[0] for r in rows]
        ft, ff = encode_texts(model, tok, [r[1] for r in rows]), encode_texts(model, tok, [r[2] for r in rows])
        out[name] = round(float(((fi[idx] * ft).sum(1) > (fi[idx] * ff).sum(1)).float().mean()), 4)
    return out


def vga_scores(model, tok, bench: Path, world: Path, seed: int) -> dict[str, float]:
    """The pipeline's VG-Attribution twin (macro accuracy, and accuracy on its colour cases)."""
    model.eval()
    b = BENCHMARKS.get("vg_attribution")
    inputs = read_manifest(bench, seed=seed)
    items = b.run(toy_scorer("probe", model, tok), inputs)
    macro = b.metrics(items, inputs)["aro/vg_attribution/macro_acc"]
    df = items["vg_attribution"]
    # the twin's records carry the attribute kind (a toy extra field; ARO's loader ignores it)
    kind = [r.get("attribute_kind", "") for r in read_json(inputs["aro_vg_attribution"])]
    colour = df["index"].map(lambda i: kind[int(i)] == "colour").to_numpy(dtype=bool)
    return {"vga_macro": round(float(macro), 4), "vga_colour": round(float(df.loc[colour, "correct"].mean()), 4)}


def vgr_scores(model, tok, bench: Path, seed: int) -> dict[str, float]:
    """The pipeline's VG-Relation twin: macro accuracy and the same with every case scored on another case's image."""
    model.eval()
    b = BENCHMARKS.get("vg_relation")
    inputs = read_manifest(bench, seed=seed)
    m = b.metrics(b.run(toy_scorer("probe", model, tok), inputs), inputs)
    return {"vgr_macro": round(float(m["aro/vg_relation/macro_acc"]), 4),
            "vgr_wrong_image": round(float(m["aro/vg_relation/wrong_image_macro_acc"]), 4)}


def start_model(start: str, arch: str, base: Path, seed: int, world: Path, tok,
                tokenizer: str = "world") -> tuple[torch.nn.Module, int]:
    spec = ModelSpec(arch, None, tokenizer, 32)
    fresh = create_model(spec, init_seed=derive_seed(seed, "probe", "init"))
    if start == "scratch":
        return fresh, 0
    if start.startswith("pretrain:"):
        steps = int(start.split(":")[1])
        pretrain(fresh, tok, Split(world, "web"), steps, np_rng(seed, "probe", "pretrain"))
        return fresh, steps * 256
    model = create_model(ModelSpec(arch, str(base / "model.pt"), tokenizer, 32))
    if start in ("base-fresh-image", "base-fresh-text"):
        sd, fs = model.state_dict(), fresh.state_dict()
        for k in sd:
            is_image = k.startswith("visual.")
            if (start == "base-fresh-image" and is_image) or (start == "base-fresh-text" and not is_image and k != "logit_scale"):
                sd[k] = fs[k]
        model.load_state_dict(sd)
    elif start != "base":
        raise SystemExit(f"--start {start!r}: expected scratch, pretrain:N, base, base-fresh-image or base-fresh-text")
    return model, -1


def _opt(model, lr):
    return torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-6, weight_decay=0.1)


def pretrain(model, tok, web: Split, steps: int, rng: np.random.Generator, lr: float = 1e-3) -> None:
    caps = [c[0] for c in web.captions()]
    images = web.images
    opt = _opt(model, lr)
    model.train()
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = lr_at(step, steps, lr, 100)
        idx = rng.choice(len(caps), 256, replace=False)
        out = clip_forward(model, to_tensor(images[np.sort(idx)], 48), tok([caps[k] for k in np.sort(idx)]))
        logits = out["logit_scale"] * out["image_features"] @ out["text_features"].T
        y = torch.arange(len(idx))
        loss = (F.cross_entropy(logits, y) + F.cross_entropy(logits.T, y)) / 2
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        with torch.no_grad():
            model.logit_scale.clamp_(0, math.log(100))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--start", required=True)
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--eval-every", type=int, default=150)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--arch", default="toy-rn16")
    p.add_argument("--world", default=str(REPO / "data" / "world"))
    p.add_argument("--base", default=str(REPO / "models" / "base" / "b0"))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--colour-share", type=float, default=0.5,
                   help="share of hard negatives that are colour swaps (the rest: subject/object swaps)")
    p.add_argument("--tokenizer", default="world", help="world (the first world) or world-v2 (a candidate world's)")
    p.add_argument("--nouns", choices=("colour", "bare"), default="colour",
                   help="noun phrases of the training captions and negatives (bare: shape nouns only)")
    p.add_argument("--benchmarks", default=str(REPO / "data" / "benchmarks"),
                   help="the pipeline's benchmarks folder: VG-Attribution is scored at the last step ('' to skip)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", default=str(REPO / "calibration" / "plasticity.csv"))
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    if args.nouns == "bare":
        args.colour_share = 0.0  # bare nouns have no colours to swap
    world = Path(args.world)
    tok = get_tokenizer(args.tokenizer, args.arch, 32)
    model, pre_samples = start_model(args.start, args.arch, Path(args.base), args.seed, world, tok, args.tokenizer)
    train_split, test_split = Split(world, "coco_train"), Split(world, "coco_test")
    train_facts, cases = facts(train_split), tests(test_split)
    images = train_split.images
    rng = np_rng(args.seed, "probe", "finetune")
    opt = _opt(model, args.lr)
    rows, hn_window, t0 = [], [], time.time()

    def record(step: int) -> None:
        model.eval()
        res = evaluate(model, tok, test_split.images, cases)
        model.train()
        if step == args.steps and args.benchmarks:
            res.update(vga_scores(model, tok, Path(args.benchmarks), world, args.seed))
            res.update(vgr_scores(model, tok, Path(args.benchmarks), args.seed))
        rows.append({"start": args.start, "base_model": Path(args.base).name if args.start.startswith("base") else "",
                     "world": world.name, "nouns": args.nouns, "colour_share": args.colour_share, "pretrain_samples": pre_samples, "arch": args.arch, "lr": args.lr,
                     "seed": args.seed, "step": step, "samples": step * args.batch_size, **res,
                     "train_hn_acc": round(float(np.mean(hn_window)), 4) if hn_window else float("nan"),
                     "seconds": round(time.time() - t0, 1), "git_commit": git_commit(REPO)})
        print(rows[-1], flush=True)
        hn_window.clear()

    record(0)
    model.train()
    B = args.batch_size
    for step in range(args.steps):
        for g in opt.param_groups:
            g["lr"] = lr_at(step, args.steps, args.lr, 50)
        batch = [train_facts[k] for k in np.sort(rng.choice(len(train_facts), B, replace=False))]
        caps, negs = [], []
        for _, a, r, b in batch:
            colour_neg = f"a {b.colour} {a.shape} {r} a {a.colour} {b.shape}"
            use_colour = a.colour != b.colour and rng.random() < args.colour_share
            bare = args.nouns == "bare"
            caps.append(caption(a, r, b, not bare))
            negs.append(colour_neg if use_colour else caption(b, r, a, not bare))
        out = clip_forward(model, to_tensor(images[[b[0] for b in batch]], 48), tok(caps + negs))
        logits = out["logit_scale"] * out["image_features"] @ out["text_features"].T  # [B, 2B]
        y = torch.arange(B)
        loss = (F.cross_entropy(logits, y) + F.cross_entropy(logits[:, :B].T, y)) / 2
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        with torch.no_grad():
            model.logit_scale.clamp_(0, math.log(100))
            hn_window.append(float((logits[y, y] > logits[y, y + B]).float().mean()))
        if (step + 1) % args.eval_every == 0 or step + 1 == args.steps:
            record(step + 1)
    out_path = Path(args.out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    df = pd.DataFrame(rows)
    if out_path.exists():
        old = pd.read_csv(out_path)
        if "colour_share" not in old:
            old.insert(1, "colour_share", 0.5)  # rows before the option: one of (colour swap, NP swap) uniformly
        if "base_model" not in old:  # rows before the column: bases were the pipeline's models/base/b0
            old.insert(1, "base_model", old["start"].map(lambda s: "b0" if str(s).startswith("base") else ""))
        if "world" not in old:
            old.insert(1, "world", "world")  # rows before the option: the pipeline's data/world
        if "nouns" not in old:
            old.insert(1, "nouns", "colour")  # rows before the option: colour-named training captions
        df = pd.concat([old, df], ignore_index=True)
    with atomic_path(out_path) as tmp:
        df.to_csv(tmp, index=False)


if __name__ == "__main__":
    main()
