"""COCO / Flickr30k Karpathy-test image<->text retrieval (ARO Tables 3-4, CE-CLIP / Hard Positives downstream).

Captions go through BLIP's ``pre_caption(30)`` (``load_karpathy(clean=True)``), as ARO's retrieval datasets.
Scores come from :func:`vlcomp.eval.engine.retrieval_scores` (dual matrix; BLIP-style ITC top-k re-ranking
for cross scorers). Ranks and hits use :mod:`vlcomp.metrics.retrieval` (stable descending order: among equal
scores the lower index ranks first).

Per-item tables: ``<name>_i2t`` (one row per image: ``rank`` of its best ground-truth caption, ``hit_1/5/10``,
``gt_score`` = its best ground-truth caption's score, ``top_text`` = index of its top-ranked caption) and
``<name>_t2i`` (one row per caption: ``rank`` of its image, hits, ``gt_score``, ``top_image``). Keys
``retrieval/{coco,flickr30k}/{i2t,t2i}/recall_at_{1,5,10}`` (i2t = ARO's "Text R@K", averaged over images;
t2i = "Image R@K", averaged over captions).

ARO Table 4's shuffled retrieval, in both profiles: with ``<name>_shuffles`` (a folder
``<strategy>/seed<s>.json`` of shuffled captions, materialised by the ``benchmarks`` stage,
:mod:`vlcomp.benchmarks.materialise`) the benchmark also scores every text shuffle of :data:`TEXT_STRATEGIES`
(images clean) and, for as many seeds, every image shuffle of :data:`IMAGE_STRATEGIES` (captions clean; the
patches of the model-preprocessed image permuted, :mod:`vlcomp.perturb_image`, generator
``torch_gen(seed, "evaluate", "image_shuffle", <coco|flickr>, strategy, s)``). Tables ``<name>_shuffle_i2t`` /
``<name>_shuffle_t2i`` (columns ``strategy``, ``side``, ``seed`` + the clean tables' columns); keys
``retrieval/<ds>/shuffle/<strategy>/{i2t,t2i}/recall_at_{1,5,10}`` (mean over perturbation seeds) and ``..._std``
(their sample std).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..eval.common import as_bool, checked, need_path, table
from ..eval.engine import ImagePerturbedScorer, RetrievalTask
from ..formats.karpathy import load_karpathy
from ..formats.records import RecordError, open_image, read_json_strict, where
from ..metrics.retrieval import hits_from_ranks, recall_key, retrieval_ranks
from ..metrics.stats import mean_std
from ..seeding import torch_gen
from .registry import Benchmark, register

KS: tuple[int, ...] = (1, 5, 10)
#: Metric prefix of each retrieval benchmark.
RETRIEVAL_METRIC_NAME = {"coco_retrieval": "coco", "flickr_retrieval": "flickr30k"}
#: Short name in seeding keys (the toy's historical ``coco`` / ``flickr``).
RETRIEVAL_SHORT = {"coco_retrieval": "coco", "flickr_retrieval": "flickr"}
#: ARO Table 4's caption shuffles (:class:`vlcomp.text.perturb.TextShuffler` kinds) and image shuffles.
TEXT_STRATEGIES = ("shuffle_nouns_and_adj", "shuffle_all_words", "shuffle_allbut_nouns_and_adj",
                   "shuffle_trigrams", "shuffle_within_trigrams")
IMAGE_STRATEGIES = ("shuffle_rows_4", "shuffle_cols_4", "shuffle_patches_9")


def metric_key(dataset: str, strategy: str, metric: str) -> str:
    """The MLflow key of a retrieval metric (``metric`` like ``i2t/recall_at_1``): ``retrieval/<ds>/<metric>`` for
    the clean captions and images (``strategy == "none"``), ``retrieval/<ds>/shuffle/<strategy>/<metric>`` for a
    shuffle. ``dataset`` is the metric name (``coco`` / ``flickr30k``)."""
    if strategy == "none":
        return f"retrieval/{dataset}/{metric}"
    return f"retrieval/{dataset}/shuffle/{strategy}/{metric}"


def retrieval_task(records: Sequence[Mapping[str, Any]], images_dir: str | Path, source: str | Path,
                   name: str, *, texts: Sequence[str] | None = None, shuffle: tuple[str, str, int] | None = None,
                   scorer_view=None) -> RetrievalTask:
    """A retrieval task over Karpathy records (already cleaned: ``load_karpathy(clean=True)``). ``texts``
    replaces the captions (a text shuffle, same order); ``shuffle = (strategy, side, seed)`` names the variant
    (its tables are ``<name>_shuffle_*``); ``scorer_view`` wraps the scorer (an image shuffle)."""
    if name not in RETRIEVAL_METRIC_NAME:
        raise ValueError(f"retrieval benchmark name must be one of {sorted(RETRIEVAL_METRIC_NAME)}, got {name!r}")
    images_dir = Path(images_dir)
    keys = [str(images_dir / r["image"]) for r in records]
    record_of = {k: i for i, k in enumerate(keys)}
    clean = [c for r in records for c in r["caption"]]
    texts = clean if texts is None else list(texts)
    if len(texts) != len(clean):
        raise ValueError(f"{name}: {len(texts)} shuffled captions for {len(clean)} captions")
    text_to_image = np.array([i for i, r in enumerate(records) for _ in r["caption"]], dtype=np.int64)
    image_meta = pd.DataFrame({"image_index": np.arange(len(records)), "image": [r["image"] for r in records]})
    text_meta = pd.DataFrame({"text_index": np.arange(len(texts)), "image_index": text_to_image, "caption": texts})

    def finish(im, tm, i2t, t2i):
        tables = finish_retrieval(name, im, tm, i2t, t2i)
        if shuffle is None:
            return tables
        strategy, side, seed = shuffle
        out = {}
        for direction in ("i2t", "t2i"):
            df = tables[f"{name}_{direction}"]
            df.insert(0, "seed", seed)
            df.insert(0, "side", side)
            df.insert(0, "strategy", strategy)
            out[f"{name}_shuffle_{direction}"] = df
        return out

    return RetrievalTask(
        name=name if shuffle is None else f"{name}/{shuffle[0]}/seed{shuffle[2]}", image_meta=image_meta,
        text_meta=text_meta, image_keys=keys, texts=texts, text_to_image=text_to_image,
        load_image=lambda key: open_image(key, where(source, record_of[key])), finish=finish, image_file=Path,
        scorer_view=scorer_view,
    )


def read_shuffles(folder: str | Path, n_texts: int) -> dict[tuple[str, int], list[str]]:
    """``{(strategy, seed): captions}`` from ``<folder>/<strategy>/seed<s>.json`` (lists of ``n_texts`` strings)."""
    folder = Path(folder)
    out = {}
    for strategy in TEXT_STRATEGIES:
        files = sorted((folder / strategy).glob("seed*.json"))
        if not files:
            raise RecordError(f"{folder / strategy}: no seed<s>.json files of shuffled captions")
        for f in files:
            if not f.stem[4:].isdigit():
                raise RecordError(f"{f}: expected a file name seed<int>.json")
            data = read_json_strict(f)
            if (not isinstance(data, list) or len(data) != n_texts
                    or not all(isinstance(t, str) and t.strip() for t in data)):
                raise RecordError(f"{f}: expected a list of {n_texts} non-empty captions (one per Karpathy caption)")
            out[(strategy, int(f.stem[4:]))] = data
    return out


def image_shuffle_view(name: str, strategy: str, seed: int, base_seed: int):
    """The scorer wrapper of one image shuffle: ARO's block permutation of the preprocessed image, with a
    generator of its own (drawn image by image in order, so chunking does not matter)."""
    from ..perturb_image import IMAGE_PERTURBATIONS

    fn = IMAGE_PERTURBATIONS[strategy]

    def view(scorer):
        gen = torch_gen(base_seed, "evaluate", "image_shuffle", RETRIEVAL_SHORT[name], strategy, seed)
        return ImagePerturbedScorer(scorer, lambda x: fn(x, gen=gen), f"{strategy}/seed{seed}")

    return view


def finish_retrieval(name: str, image_meta: pd.DataFrame, text_meta: pd.DataFrame, scores_i2t: np.ndarray,
                     scores_t2i: np.ndarray) -> dict[str, pd.DataFrame]:
    t2img = text_meta["image_index"].to_numpy(dtype=np.int64)
    ranks = retrieval_ranks(scores_i2t, t2img, scores_t2i=scores_t2i)
    hits = hits_from_ranks(ranks, KS)
    n_img, n_txt = scores_i2t.shape
    gt = scores_i2t[t2img, np.arange(n_txt)]  # [T] score of each caption in its own image's row
    best_gt = np.full(n_img, -np.inf)
    np.maximum.at(best_gt, t2img, gt)
    i2t = image_meta.copy()
    i2t["rank"] = ranks["i2t"]
    i2t["gt_score"] = best_gt
    i2t["top_text"] = np.argmax(scores_i2t, axis=1)  # first maximum = the stable-descending top
    t2i = text_meta.copy()
    t2i["rank"] = ranks["t2i"]
    t2i["gt_score"] = scores_t2i[t2img, np.arange(n_txt)].astype(np.float64)
    t2i["top_image"] = np.argmax(scores_t2i, axis=0)
    for k in KS:
        i2t[f"hit_{k}"] = hits[recall_key("i2t", k)]
        t2i[f"hit_{k}"] = hits[recall_key("t2i", k)]
    return {f"{name}_i2t": i2t, f"{name}_t2i": t2i}


def _prepare(inputs: Mapping[str, Any], name: str, ann_key: str, images_key: str) -> list[RetrievalTask]:
    path = need_path(inputs, ann_key, name)
    images = need_path(inputs, images_key, name, directory=True)
    records = load_karpathy(path, clean=True)
    tasks = [retrieval_task(records, images, path, name)]
    if inputs.get(f"{name}_shuffles"):
        n_texts = sum(len(r["caption"]) for r in records)
        shuffles = read_shuffles(need_path(inputs, f"{name}_shuffles", name, directory=True), n_texts)
        tasks += [retrieval_task(records, images, path, name, texts=t, shuffle=(st, "text", s))
                  for (st, s), t in shuffles.items()]
        seeds = sorted({s for _, s in shuffles})
        base_seed = int(inputs.get("seed") or 0)
        tasks += [retrieval_task(records, images, path, name, shuffle=(st, "image", s),
                                 scorer_view=image_shuffle_view(name, st, s, base_seed))
                  for st in IMAGE_STRATEGIES for s in seeds]
    return tasks


def prepare_coco_retrieval(inputs: Mapping[str, Any]) -> list[RetrievalTask]:
    """Inputs: ``coco_karpathy_test``, ``coco_images``; optional ``coco_retrieval_shuffles``, ``seed``."""
    return _prepare(inputs, "coco_retrieval", "coco_karpathy_test", "coco_images")


def prepare_flickr_retrieval(inputs: Mapping[str, Any]) -> list[RetrievalTask]:
    """Inputs: ``flickr_karpathy_test``, ``flickr_images``; optional ``flickr_retrieval_shuffles``, ``seed``."""
    return _prepare(inputs, "flickr_retrieval", "flickr_karpathy_test", "flickr_images")


def aggregate_retrieval(tables: Mapping[str, pd.DataFrame], name: str) -> dict[str, float]:
    ds = RETRIEVAL_METRIC_NAME[name]
    out = {}
    for direction in ("i2t", "t2i"):
        df = table(tables, f"{name}_{direction}", tuple(f"hit_{k}" for k in KS))
        for k in KS:
            out[metric_key(ds, "none", recall_key(direction, k))] = float(as_bool(df[f"hit_{k}"]).mean())
        if f"{name}_shuffle_{direction}" not in tables:
            continue
        sh = table(tables, f"{name}_shuffle_{direction}", ("strategy", "seed", *(f"hit_{k}" for k in KS)))
        for k in KS:
            hits = pd.Series(as_bool(sh[f"hit_{k}"]), index=sh.index)
            per_seed = hits.groupby([sh["strategy"], sh["seed"]]).mean()
            for strategy, sub in per_seed.groupby(level=0):
                m, sd = mean_std(sub.to_numpy())
                out[metric_key(ds, strategy, recall_key(direction, k))] = m
                out[metric_key(ds, strategy, recall_key(direction, k)) + "_std"] = sd
    return checked(out)


register(Benchmark("coco_retrieval", "COCO Karpathy test retrieval", prepare_coco_retrieval,
               partial(aggregate_retrieval, name="coco_retrieval"),
               ("coco_retrieval_i2t", "coco_retrieval_t2i"),
                   headline=("retrieval/coco/i2t/recall_at_1", "retrieval/coco/t2i/recall_at_1")))
register(Benchmark("flickr_retrieval", "Flickr30k Karpathy test retrieval", prepare_flickr_retrieval,
               partial(aggregate_retrieval, name="flickr_retrieval"),
               ("flickr_retrieval_i2t", "flickr_retrieval_t2i"),
                   headline=("retrieval/flickr30k/i2t/recall_at_1", "retrieval/flickr30k/t2i/recall_at_1")))
