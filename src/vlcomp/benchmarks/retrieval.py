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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..eval.common import as_bool, checked, need_path, table
from ..eval.engine import RetrievalTask
from ..formats.karpathy import load_karpathy
from ..formats.records import open_image, where
from ..metrics.retrieval import hits_from_ranks, recall_key, retrieval_ranks
from .registry import Benchmark, register

KS: tuple[int, ...] = (1, 5, 10)
#: Metric prefix of each retrieval benchmark.
RETRIEVAL_METRIC_NAME = {"coco_retrieval": "coco", "flickr_retrieval": "flickr30k"}


def retrieval_task(records: Sequence[Mapping[str, Any]], images_dir: str | Path, source: str | Path,
                   name: str) -> RetrievalTask:
    """A retrieval task over Karpathy records (already cleaned: ``load_karpathy(clean=True)``)."""
    if name not in RETRIEVAL_METRIC_NAME:
        raise ValueError(f"retrieval benchmark name must be one of {sorted(RETRIEVAL_METRIC_NAME)}, got {name!r}")
    images_dir = Path(images_dir)
    keys = [str(images_dir / r["image"]) for r in records]
    record_of = {k: i for i, k in enumerate(keys)}
    texts = [c for r in records for c in r["caption"]]
    text_to_image = np.array([i for i, r in enumerate(records) for _ in r["caption"]], dtype=np.int64)
    image_meta = pd.DataFrame({"image_index": np.arange(len(records)), "image": [r["image"] for r in records]})
    text_meta = pd.DataFrame({"text_index": np.arange(len(texts)), "image_index": text_to_image, "caption": texts})
    return RetrievalTask(
        name=name, image_meta=image_meta, text_meta=text_meta, image_keys=keys, texts=texts,
        text_to_image=text_to_image, load_image=lambda key: open_image(key, where(source, record_of[key])),
        finish=lambda im, tm, i2t, t2i: finish_retrieval(name, im, tm, i2t, t2i), image_file=Path,
    )


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


def _prepare(inputs: Mapping[str, Any], name: str, ann_key: str, images_key: str) -> RetrievalTask:
    path = need_path(inputs, ann_key, name)
    images = need_path(inputs, images_key, name, directory=True)
    return retrieval_task(load_karpathy(path, clean=True), images, path, name)


def prepare_coco_retrieval(inputs: Mapping[str, Any]) -> RetrievalTask:
    """Inputs: ``coco_karpathy_test``, ``coco_images``."""
    return _prepare(inputs, "coco_retrieval", "coco_karpathy_test", "coco_images")


def prepare_flickr_retrieval(inputs: Mapping[str, Any]) -> RetrievalTask:
    """Inputs: ``flickr_karpathy_test``, ``flickr_images``."""
    return _prepare(inputs, "flickr_retrieval", "flickr_karpathy_test", "flickr_images")


def aggregate_retrieval(tables: Mapping[str, pd.DataFrame], name: str) -> dict[str, float]:
    out = {}
    for direction in ("i2t", "t2i"):
        df = table(tables, f"{name}_{direction}", tuple(f"hit_{k}" for k in KS))
        for k in KS:
            out[f"retrieval/{RETRIEVAL_METRIC_NAME[name]}/{recall_key(direction, k)}"] = float(
                as_bool(df[f"hit_{k}"]).mean())
    return checked(out)


register(Benchmark("coco_retrieval", "COCO Karpathy test retrieval", prepare_coco_retrieval,
               partial(aggregate_retrieval, name="coco_retrieval"),
               ("coco_retrieval_i2t", "coco_retrieval_t2i")))
register(Benchmark("flickr_retrieval", "Flickr30k Karpathy test retrieval", prepare_flickr_retrieval,
               partial(aggregate_retrieval, name="flickr_retrieval"),
               ("flickr_retrieval_i2t", "flickr_retrieval_t2i")))
