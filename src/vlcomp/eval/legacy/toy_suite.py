"""The ARO evaluation suite: one registry record per benchmark (what it stands for, how it is scored, how
its per-item scores aggregate into metrics).

Every benchmark's ``score`` returns per-item tables (pandas DataFrames, saved by the evaluate stage) and its
``aggregate`` derives the metrics dict from those tables alone, so metrics can always be recomputed from
the saved per-item scores. Metric keys are MLflow-safe.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ...io import read_json, read_npy
from ...metrics.aro import (
    ORDER_CORRECT_INDEX,
    ORDER_TIE_RULE,
    VG_ATTRIBUTION_MIN_COUNT,
    VG_CORRECT_INDEX,
    VG_RELATION_MIN_COUNT,
    VG_TIE_RULE,
    group_macro,
    macro_accuracy,
    pick_correct,
)
from ...metrics.retrieval import retrieval_hits
from ...metrics.stats import mean_std
from ...models.encode import encode_images, encode_texts
from ...perturb_image import IMAGE_PERTURBATIONS
from ...registry import Registry
from ...seeding import np_rng, torch_gen
from ...twins.aro_vg import crop
from ...world import Split
from .build import IMAGE_STRATEGIES, RETRIEVAL_SPLITS, TEXT_STRATEGIES, VG_SPLIT


@dataclass
class EvalContext:
    """What a scorer needs, plus per-model caches so each unique caption and each (split, perturbation) image
    set is encoded once per model, whichever benchmarks ask for it."""

    model: torch.nn.Module
    tokenizer: object
    bench_dir: Path
    world_dir: Path
    seed: int
    batch_size: int = 256
    _text_cache: dict[str, torch.Tensor] = field(default_factory=dict, repr=False)
    _image_cache: dict[str, torch.Tensor] = field(default_factory=dict, repr=False)
    _crop_cache: dict[tuple, torch.Tensor] = field(default_factory=dict, repr=False)
    n_encoded_texts: int = 0
    n_encoded_crops: int = 0

    def texts(self, texts: list[str]) -> torch.Tensor:
        """Features [N, D] of ``texts``; strings already encoded for this model are not encoded again."""
        new = sorted({t for t in texts if t not in self._text_cache})
        if new:
            feats = encode_texts(self.model, self.tokenizer, new)
            self._text_cache.update(zip(new, feats, strict=True))
            self.n_encoded_texts += len(new)
        return torch.stack([self._text_cache[t] for t in texts]) if texts else torch.zeros(0, 0)

    def crops(self, keys: list[tuple], images: list[np.ndarray]) -> torch.Tensor:
        """Features [N, D] of image crops identified by ``keys`` (image, box); a crop already encoded for this
        model (VG-R and VG-A share most union boxes) is not encoded again."""
        new = {}
        for k, im in zip(keys, images, strict=True):
            if k not in self._crop_cache and k not in new:
                new[k] = im
        if new:
            feats = encode_images(self.model, list(new.values()), batch_size=self.batch_size)
            self._crop_cache.update(zip(new, feats, strict=True))
            self.n_encoded_crops += len(new)
        return torch.stack([self._crop_cache[k] for k in keys])

    def split_images(self, split: Split, key: str = "none", perturb=None) -> torch.Tensor:
        """Features of every image of a world split (optionally perturbed), encoded once per (split, key)."""
        name = f"{split.name}/{key}"
        if name not in self._image_cache:
            self._image_cache[name] = encode_images(self.model, split.images, batch_size=self.batch_size,
                                                    perturb=perturb)
        return self._image_cache[name]


@dataclass(frozen=True)
class Benchmark:
    name: str
    stands_for: str
    score: Callable[[EvalContext], dict[str, pd.DataFrame]]
    aggregate: Callable[[dict[str, pd.DataFrame], dict], dict[str, float]]  # (items, benchmark settings)
    tables: tuple[str, ...]  # names of the per-item tables ``score`` returns and ``aggregate`` reads


BENCHMARKS: Registry[Benchmark] = Registry("benchmark")


def _key(text: str) -> str:
    return text.replace(" ", "_")


def derangement(n: int, rng: np.random.Generator) -> np.ndarray:
    """A random permutation of ``range(n)`` with no fixed point (``n >= 2``): walk a random cycle order."""
    if n < 2:
        raise ValueError(f"a derangement needs at least 2 items, got {n}")
    order = rng.permutation(n)
    out = np.empty(n, dtype=np.int64)
    out[order] = np.roll(order, -1)
    return out


def _pair_scores(ctx: EvalContext, images: list[np.ndarray], options: list[list[str]],
                 image_of: tuple[np.ndarray, ...] = (), keys: list[tuple] | None = None) -> list[np.ndarray]:
    """Cosine score of each case's image with each of its L caption options: [N, L]; then, for each index array in
    ``image_of``, the scores when case ``n`` is scored against image ``image_of[k][n]`` instead of its own.
    Images (by ``keys`` when given: equal keys are the same image) and captions are encoded once."""
    if keys is None:
        fi = encode_images(ctx.model, images, batch_size=ctx.batch_size)  # [N, D]
    else:
        fi = ctx.crops(keys, images)
    n, n_opt = len(options), len(options[0])
    ft = ctx.texts([o for opts in options for o in opts]).view(n, n_opt, -1)  # [N, L, D]
    return [torch.einsum("nd,nld->nl", fi if idx is None else fi[torch.as_tensor(idx)], ft).numpy()
            for idx in (None, *image_of)]


def _vg_scores(ctx: EvalContext, name: str, records: list[dict], images: list[np.ndarray]) -> dict[str, np.ndarray]:
    """Scores of [false, true] with each case's own image, and with another case's image (a seeded derangement:
    the wrong-image control). Accuracy that survives the wrong image comes from the text side alone, a language
    prior over which caption is plausible, not from looking at the image."""
    options = [[r["false_caption"], r["true_caption"]] for r in records]
    wrong = derangement(len(records), np_rng(ctx.seed, "evaluate", "wrong_image", name))
    keys = [(r["image_path"], r["bbox_x"], r["bbox_y"], r["bbox_w"], r["bbox_h"]) for r in records]
    scores, wrong_scores = _pair_scores(ctx, images, options, image_of=(wrong,), keys=keys)
    # how far the text tower puts a caption from its swap (1 = the same embedding: no image can separate them)
    text_cos = (ctx.texts([o[0] for o in options]) * ctx.texts([o[1] for o in options])).sum(-1).numpy()
    return {"score_false": scores[:, 0], "score_true": scores[:, 1], "text_cosine": text_cos,
            "correct": pick_correct(scores, VG_CORRECT_INDEX, VG_TIE_RULE),
            "wrong_image": wrong, "wrong_score_false": wrong_scores[:, 0], "wrong_score_true": wrong_scores[:, 1],
            "wrong_correct": pick_correct(wrong_scores, VG_CORRECT_INDEX, VG_TIE_RULE)}


def _vg_records(ctx: EvalContext, name: str) -> tuple[list[dict], list[np.ndarray]]:
    records = read_json(ctx.bench_dir / f"{name}.json")
    split = Split(ctx.world_dir, VG_SPLIT)
    index = {a["image"]: i for i, a in enumerate(split.annotations())}
    images = []
    for i, rec in enumerate(records):
        if rec["image_path"] not in index:
            raise ValueError(f"{ctx.bench_dir / f'{name}.json'}: record {i}: image {rec['image_path']!r} not in {VG_SPLIT}")
        images.append(crop(split.images[index[rec["image_path"]]], rec))
    return records, images


# --- VG-Relation -----------------------------------------------------------------------------------------
def score_vg_relation(ctx: EvalContext) -> dict[str, pd.DataFrame]:
    records, images = _vg_records(ctx, "vg_relation")
    excluded = (ctx.bench_dir / "vg_relation_excluded.txt").read_text().split("\n")
    groups = read_json(ctx.bench_dir / "vg_relation_groups.json")
    items = pd.DataFrame({
        "relation": [r["relation_name"] for r in records],
        **_vg_scores(ctx, "vg_relation", records, images),
        "excluded": [r["relation_name"] in excluded for r in records],
        "group": [groups.get(r["relation_name"], "") for r in records],
    })
    return {"vg_relation": items}


def aggregate_vg_relation(items: dict[str, pd.DataFrame], settings: dict) -> dict[str, float]:
    df = items["vg_relation"]
    macro, per = macro_accuracy(df["correct"].to_numpy(), df["relation"].tolist(), min_count=VG_RELATION_MIN_COUNT,
                                exclude=set(df.loc[df["excluded"], "relation"]))
    wrong, _ = macro_accuracy(df["wrong_correct"].to_numpy(), df["relation"].tolist(),
                              min_count=VG_RELATION_MIN_COUNT, exclude=set(df.loc[df["excluded"], "relation"]))
    group_of = dict(zip(df["relation"], df["group"], strict=False))
    sub = group_macro(per, {g: s for g, s in group_of.items() if s})
    out = {"aro/vg_relation/macro_acc": macro, "aro/vg_relation/n_relations": float(len(per)),
           "aro/vg_relation/n_cases": float((~df["excluded"]).sum()),
           "aro/vg_relation/micro_acc": float(df.loc[~df["excluded"], "correct"].mean()),
           "aro/vg_relation/wrong_image_macro_acc": wrong,
           "aro/vg_relation/text_swap_cosine": float(df.loc[~df["excluded"], "text_cosine"].mean())}
    out |= {f"aro/vg_relation/{g}_macro_acc": v for g, v in sub.items()}
    out |= {f"aro/vg_relation/rel/{_key(r.group)}/acc": float(r.accuracy) for r in per.itertuples()}
    return out


# --- VG-Attribution --------------------------------------------------------------------------------------
def score_vg_attribution(ctx: EvalContext) -> dict[str, pd.DataFrame]:
    records, images = _vg_records(ctx, "vg_attribution")
    items = pd.DataFrame({
        "pair": [f"{r['attributes'][0]}_{r['attributes'][1]}" for r in records],
        "kind": [r.get("attribute_kind", "") for r in records],
        **_vg_scores(ctx, "vg_attribution", records, images),
    })
    return {"vg_attribution": items}


def aggregate_vg_attribution(items: dict[str, pd.DataFrame], settings: dict) -> dict[str, float]:
    df = items["vg_attribution"]
    min_count = int(settings.get("vga_min_count", VG_ATTRIBUTION_MIN_COUNT))
    macro, per = macro_accuracy(df["correct"].to_numpy(), df["pair"].tolist(), min_count=min_count)
    wrong, _ = macro_accuracy(df["wrong_correct"].to_numpy(), df["pair"].tolist(), min_count=min_count)
    out = {"aro/vg_attribution/macro_acc": macro, "aro/vg_attribution/wrong_image_macro_acc": wrong,
           "aro/vg_attribution/text_swap_cosine": float(df["text_cosine"].mean()),
           "aro/vg_attribution/n_pairs": float(len(per)),
           "aro/vg_attribution/n_cases": float(len(df)), "aro/vg_attribution/micro_acc": float(df["correct"].mean())}
    for kind, sub in df.groupby("kind"):
        out[f"aro/vg_attribution/kind/{kind}/micro_acc"] = float(sub["correct"].mean())
    return out


# --- COCO-Order / Flickr30k-Order ------------------------------------------------------------------------
def _score_order(ctx: EvalContext, short: str) -> dict[str, pd.DataFrame]:
    split = Split(ctx.world_dir, RETRIEVAL_SPLITS[short])
    index = {a["image"]: i for i, a in enumerate(split.annotations())}
    frames = []
    seed_files = sorted((ctx.bench_dir / "order" / short).glob("seed*.json"), key=lambda p: int(p.stem[4:]))
    fi_all = ctx.split_images(split)
    for path in seed_files:
        cases = read_json(path)
        img = torch.as_tensor([index[c["image"]] for c in cases])
        n_opt = len(cases[0]["caption_options"])
        ft = ctx.texts([o for c in cases for o in c["caption_options"]])
        scores = torch.einsum("nd,nld->nl", fi_all[img], ft.view(len(cases), n_opt, -1)).numpy()
        df = pd.DataFrame(scores, columns=[f"score_{j}" for j in range(n_opt)])
        df.insert(0, "seed", int(path.stem[4:]))
        df["correct"] = pick_correct(scores, ORDER_CORRECT_INDEX, ORDER_TIE_RULE)
        df["tie"] = scores[:, 0] == np.delete(scores, 0, axis=1).max(axis=1)
        frames.append(df)
    return {f"{short}_order": pd.concat(frames, ignore_index=True)}


def _aggregate_order(items: dict[str, pd.DataFrame], settings: dict, short: str) -> dict[str, float]:
    df = items[f"{short}_order"]
    per_seed = df.groupby("seed")["correct"].mean()
    m, s = mean_std(per_seed.to_numpy())
    name = "coco_order" if short == "coco" else "flickr30k_order"
    return {f"aro/{name}/acc": m, f"aro/{name}/acc_std": s, f"aro/{name}/n_seeds": float(len(per_seed)),
            f"aro/{name}/tie_rate": float(df["tie"].mean())}


# --- Retrieval with caption and image shuffles -----------------------------------------------------------
def _score_retrieval(ctx: EvalContext, short: str) -> dict[str, pd.DataFrame]:
    split = Split(ctx.world_dir, RETRIEVAL_SPLITS[short])
    ann = split.annotations()
    text_to_image = np.asarray([i for i, a in enumerate(ann) for _ in a["caption"]])
    base_dir = ctx.bench_dir / "retrieval" / short
    fi = ctx.split_images(split)
    clean = read_json(base_dir / "none" / "seed0.json")
    ft_clean = ctx.texts(clean)
    i2t, t2i = [], []

    def add(strategy: str, side: str, seed: int, img_f: torch.Tensor, txt_f: torch.Tensor) -> None:
        hits = retrieval_hits((img_f @ txt_f.T).numpy(), text_to_image, ks=(1, 5))
        i2t.append(pd.DataFrame({"strategy": strategy, "side": side, "seed": seed, "image": np.arange(len(ann)),
                                 "hit_1": hits["i2t/recall_at_1"], "hit_5": hits["i2t/recall_at_5"]}))
        t2i.append(pd.DataFrame({"strategy": strategy, "side": side, "seed": seed, "caption": np.arange(len(clean)),
                                 "hit_1": hits["t2i/recall_at_1"], "hit_5": hits["t2i/recall_at_5"]}))

    add("none", "none", 0, fi, ft_clean)
    for strategy in TEXT_STRATEGIES:
        for path in sorted((base_dir / strategy).glob("seed*.json")):
            add(strategy, "text", int(path.stem[4:]), fi, ctx.texts(read_json(path)))
    n_seeds = len(list((base_dir / TEXT_STRATEGIES[0]).glob("seed*.json")))
    for strategy in IMAGE_STRATEGIES:
        fn = IMAGE_PERTURBATIONS[strategy]
        for s in range(n_seeds):
            gen = torch_gen(ctx.seed, "evaluate", "image_shuffle", short, strategy, s)
            f = ctx.split_images(split, f"{strategy}/seed{s}", perturb=lambda x, g=gen, fn=fn: fn(x, gen=g))
            add(strategy, "image", s, f, ft_clean)
    return {f"{short}_retrieval_i2t": pd.concat(i2t, ignore_index=True),
            f"{short}_retrieval_t2i": pd.concat(t2i, ignore_index=True)}


def _aggregate_retrieval(items: dict[str, pd.DataFrame], settings: dict, short: str) -> dict[str, float]:
    name = "coco" if short == "coco" else "flickr30k"
    out = {}
    for direction in ("i2t", "t2i"):
        df = items[f"{short}_retrieval_{direction}"]
        per_seed = df.groupby(["strategy", "seed"])[["hit_1", "hit_5"]].mean()
        for strategy, sub in per_seed.groupby(level="strategy"):
            for k in (1, 5):
                m, s = mean_std(sub[f"hit_{k}"].to_numpy())
                out[f"retrieval/{name}/{strategy}/{direction}/recall_at_{k}"] = m
                out[f"retrieval/{name}/{strategy}/{direction}/recall_at_{k}_std"] = s
    return out


# --- Zero-shot classification twins ----------------------------------------------------------------------
def score_zeroshot(ctx: EvalContext) -> dict[str, pd.DataFrame]:
    frames = []
    for task_dir in sorted((ctx.bench_dir / "zeroshot").iterdir()):
        meta = read_json(task_dir / "classes.json")
        images = read_npy(task_dir / "images.npy", dtype="uint8", ndim=4)
        labels = read_npy(task_dir / "labels.npy", ndim=1)
        fi = encode_images(ctx.model, images, batch_size=ctx.batch_size)
        prompts = [t.format(c) for c in meta["classes"] for t in meta["templates"]]
        ft = ctx.texts(prompts).view(len(meta["classes"]), len(meta["templates"]), -1)
        cls = torch.nn.functional.normalize(ft.mean(1), dim=-1)  # [C, D] prompt ensemble
        pred = (fi @ cls.T).argmax(1).numpy()
        frames.append(pd.DataFrame({"task": task_dir.name, "label": labels, "pred": pred, "correct": pred == labels}))
    return {"zeroshot": pd.concat(frames, ignore_index=True)}


def aggregate_zeroshot(items: dict[str, pd.DataFrame], settings: dict) -> dict[str, float]:
    return {f"zeroshot/{task}/acc": float(sub["correct"].mean()) for task, sub in items["zeroshot"].groupby("task")}


BENCHMARKS.add("vg_relation", Benchmark("vg_relation", "ARO VG-Relation (GQA/VG scene graphs)",
                                        score_vg_relation, aggregate_vg_relation, ("vg_relation",)))
BENCHMARKS.add("vg_attribution", Benchmark("vg_attribution", "ARO VG-Attribution", score_vg_attribution,
                                           aggregate_vg_attribution, ("vg_attribution",)))
for _short, _name, _what in (("coco", "coco", "COCO"), ("flickr", "flickr30k", "Flickr30k")):
    BENCHMARKS.add(f"{_name}_order", Benchmark(f"{_name}_order", f"ARO {_what}-Order (Karpathy test)",
                                               lambda ctx, s=_short: _score_order(ctx, s),
                                               lambda items, settings, s=_short: _aggregate_order(items, settings, s),
                                               (f"{_short}_order",)))
    BENCHMARKS.add(f"{_name}_retrieval", Benchmark(f"{_name}_retrieval", f"{_what} Karpathy test retrieval",
                                                   lambda ctx, s=_short: _score_retrieval(ctx, s),
                                                   lambda items, settings, s=_short: _aggregate_retrieval(items, settings, s),
                                                   (f"{_short}_retrieval_i2t", f"{_short}_retrieval_t2i")))
BENCHMARKS.add("zeroshot", Benchmark("zeroshot", "CIFAR10 / CIFAR100 / ImageNet zero-shot", score_zeroshot,
                                     aggregate_zeroshot, ("zeroshot",)))
