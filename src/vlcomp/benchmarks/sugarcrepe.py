"""SugarCrepe on its released files (7 categories, string ids): one image, ``[caption, negative_caption]``;
strict ``>`` (a tie is wrong); per-category accuracy, and per group the micro (SugarCrepe paper) and macro
(CE-CLIP) averages. Keys ``sugarcrepe/<category>/acc``, ``sugarcrepe/<category>/n``, ``sugarcrepe/<group>/{micro,macro}_acc``.
All categories are scored in one pass, so a COCO image shared by several categories is encoded once. Every item is
also scored on another item's image (:func:`vlcomp.eval.common.wrong_image_control`, not part of SugarCrepe's
protocol): ``sugarcrepe/<category>/wrong_image_acc``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..eval.common import (
    as_bool,
    as_text,
    checked,
    finish_pair_controlled,
    grouped_loader,
    need_path,
    table,
    wrong_image_control,
)
from ..eval.engine import ChoiceTask
from ..formats import sugarcrepe as sugarcrepe_ds
from .registry import Benchmark, register


def sugarcrepe_task(cases_by_category: Mapping[str, Sequence[sugarcrepe_ds.SugarCrepeCase]],
                    images_dir: str | Path, sources: Mapping[str, str | Path] | None = None, *,
                    seed: int = 0) -> ChoiceTask:
    """All categories in one task; the image key is the COCO val2017 file path; the wrong-image control's
    derangement is drawn from ``seed``."""
    images_dir = Path(images_dir)
    rows = [(cat, c) for cat, cases in cases_by_category.items() for c in cases]
    for cat in cases_by_category:
        if cat not in sugarcrepe_ds.CATEGORIES:
            raise ValueError(f"sugarcrepe: unknown category {cat!r}; known: {', '.join(sugarcrepe_ds.CATEGORIES)}")
    keys = [str(images_dir / c.filename) for _, c in rows]
    load = grouped_loader(keys, rows, sources)

    meta = pd.DataFrame({"category": [cat for cat, _ in rows], "id": [c.id for _, c in rows],
                         "filename": [c.filename for _, c in rows], "caption": [c.caption for _, c in rows],
                         "negative_caption": [c.negative_caption for _, c in rows]})
    controls, wrong = wrong_image_control(keys, seed, "sugarcrepe")
    if wrong is not None:
        meta["wrong_image"] = wrong
    return ChoiceTask(
        name="sugarcrepe", meta=meta, image_keys=keys,
        captions=[(c.caption, c.negative_caption) for _, c in rows], load_image=load,
        finish=lambda m, s, extras=None: {"sugarcrepe": finish_pair_controlled(m, s, sugarcrepe_ds.correct, extras)},
        image_file=Path, naive_text_calls="per_caption", controls=controls,
    )


def prepare_sugarcrepe(inputs: Mapping[str, Any]) -> ChoiceTask:
    """Inputs: ``sugarcrepe_dir`` (the repo's ``data/``), ``coco_val2017_images``; optional
    ``sugarcrepe_categories`` (default all 7)."""
    data_dir = need_path(inputs, "sugarcrepe_dir", "sugarcrepe", directory=True)
    images = need_path(inputs, "coco_val2017_images", "sugarcrepe", directory=True)
    categories = tuple(inputs.get("sugarcrepe_categories") or sugarcrepe_ds.CATEGORIES)
    unknown = [c for c in categories if c not in sugarcrepe_ds.CATEGORIES]
    if unknown:
        raise ValueError(f"sugarcrepe: input 'sugarcrepe_categories' has unknown {unknown}; "
                         f"known: {', '.join(sugarcrepe_ds.CATEGORIES)}")
    cases = sugarcrepe_ds.load_all(data_dir, categories)
    return sugarcrepe_task(cases, images, {c: data_dir / f"{c}.json" for c in categories},
                           seed=int(inputs.get("seed") or 0))


def aggregate_sugarcrepe(tables: Mapping[str, pd.DataFrame]) -> dict[str, float]:
    df = table(tables, "sugarcrepe", ("category", "correct"))
    correct, cats = as_bool(df["correct"]), np.array(as_text(df["category"]), dtype=object)
    by_cat = {c: correct[cats == c] for c in sugarcrepe_ds.CATEGORIES if (cats == c).any()}
    acc = sugarcrepe_ds.group_accuracies(by_cat)
    out: dict[str, float] = {}
    for key, value in acc.items():
        if "/" in key:
            group, kind = key.split("/")
            out[f"sugarcrepe/{group}/{kind}_acc"] = value
        else:
            out[f"sugarcrepe/{key}/acc"] = value
            out[f"sugarcrepe/{key}/n"] = len(by_cat[key])
    if "wrong_correct" in df.columns:
        wrong = as_bool(df["wrong_correct"])
        out |= {f"sugarcrepe/{c}/wrong_image_acc": float(wrong[cats == c].mean()) for c in by_cat}
    return checked(out)


register(Benchmark("sugarcrepe", "SugarCrepe (7 categories)", prepare_sugarcrepe,
               aggregate_sugarcrepe, ("sugarcrepe",),
                   headline=("sugarcrepe/replace/micro_acc", "sugarcrepe/swap/micro_acc", "sugarcrepe/add/micro_acc")))
