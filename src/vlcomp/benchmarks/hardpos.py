"""The Hard Positives benchmarks REPLACE and SWAP (Kamath et al., ECCV 2024) on their aligned pair files.

Each item is one image with the captions ``[c_n, c, c_n, c_p]``: the reference's two passes, ``data/`` scoring
``[false, true] = [c_n, c]`` and ``swapped_data/`` scoring ``[c_n, c_p]``. The batched engine encodes ``c_n``
once, so ``s_n_swapped == s_n`` exactly; the naive loop scores it twice, as ``run_eval.py``. Scores are raw
cosines. REPLACE images are whole (``image_path`` relative to the hard_positives checkout); SWAP images are
VG-Attribution crops (``image_path`` relative to ARO's images folder; SWAP's ``data/`` file *is* ARO's VG-A
file, so with a shared :class:`~vlcomp.eval.engine.FeatureCache` its crops and captions are not
encoded again after ``vg_attribution``).

Per-item tables ``replace`` (column ``part``: ``replace_att`` / ``replace_rel``) and ``swap``: ``s_c``, ``s_n``,
``s_p``, ``s_n_swapped`` and the outcome masks ``orig``, ``aug``, ``brittle``
(:func:`vlcomp.formats.hardpos.outcomes`). Keys ``hardpos/<part>/{orig, aug, brittleness, delta, n}`` for
``replace_att``, ``replace_rel``, ``replace`` (pooled, instance-weighted: the paper's REPLACE) and ``swap``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..eval.common import as_bool, as_text, checked, need_path, table
from ..eval.engine import ChoiceTask, first_by_key
from ..formats import hardpos as hp_ds
from .registry import Benchmark, register

REPLACE_PARTS = ("replace_att", "replace_rel")


def hardpos_task(name: str, cases_by_part: Mapping[str, Sequence[hp_ds.HardPositiveCase]], images_root: str | Path,
                 sources: Mapping[str, str | Path] | None = None) -> ChoiceTask:
    """``name`` is ``replace`` or ``swap``; ``cases_by_part`` maps ``replace_att`` / ``replace_rel`` / ``swap``
    to loaded cases. The image key is (root, image path, box or None)."""
    if name not in ("replace", "swap"):
        raise ValueError(f"hard-positive benchmark must be 'replace' or 'swap', got {name!r}")
    images_root, sources = Path(images_root), sources or {}
    rows = [(part, c) for part, cases in cases_by_part.items() for c in cases]
    keys = [(str(images_root), c.image_path, c.box) for _, c in rows]
    first = first_by_key(keys, rows)

    def load(key):
        part, case = first[key]
        return case.open_image(images_root, sources.get(part, part))

    meta = pd.DataFrame({"part": [p for p, _ in rows], "index": [c.index for _, c in rows],
                         "image_path": [c.image_path for _, c in rows],
                         "caption": [c.caption for _, c in rows], "positive": [c.positive for _, c in rows],
                         "negative": [c.negative for _, c in rows]})
    if name == "replace":
        meta["image_id"] = [c.image_id for _, c in rows]
    else:
        for n, b in enumerate(("bbox_x", "bbox_y", "bbox_w", "bbox_h")):
            meta[b] = [c.box[n] for _, c in rows]
    return ChoiceTask(
        name=name, meta=meta, image_keys=keys,
        captions=[(c.negative, c.caption, c.negative, c.positive) for _, c in rows], load_image=load,
        finish=lambda m, s: {name: finish_hardpos(m, s)}, image_file=lambda key: Path(key[0]) / key[1],
    )


def finish_hardpos(meta: pd.DataFrame, scores: np.ndarray) -> pd.DataFrame:
    df = meta.copy()
    s = scores.astype(np.float64)
    df["s_n"], df["s_c"], df["s_n_swapped"], df["s_p"] = s[:, 0], s[:, 1], s[:, 2], s[:, 3]
    o = hp_ds.outcomes(s[:, 1], s[:, 0], s[:, 3], s[:, 2])
    df["orig"], df["aug"], df["brittle"] = o["orig"], o["aug"], o["brittle"]
    return df


def prepare_replace(inputs: Mapping[str, Any]) -> ChoiceTask:
    """Inputs: ``hard_positives_dir`` (checkout with ``data/`` and ``swapped_data/``); optional
    ``hard_positives_images`` (root of the REPLACE ``image_path``s; default the checkout)."""
    root = need_path(inputs, "hard_positives_dir", "replace", directory=True)
    images = Path(inputs.get("hard_positives_images") or root)
    cases = {p: hp_ds.load_benchmark(root, p) for p in REPLACE_PARTS}
    sources = {p: root / hp_ds.DATA_DIR / hp_ds.BENCHMARKS[p][0] for p in REPLACE_PARTS}
    return hardpos_task("replace", cases, images, sources)


def prepare_swap(inputs: Mapping[str, Any]) -> ChoiceTask:
    """Inputs: ``hard_positives_dir``, ``aro_images`` (the SWAP crops come from ARO's VG images)."""
    root = need_path(inputs, "hard_positives_dir", "swap", directory=True)
    images = need_path(inputs, "aro_images", "swap", directory=True)
    return hardpos_task("swap", {"swap": hp_ds.load_benchmark(root, "swap")}, images,
                        {"swap": root / hp_ds.DATA_DIR / hp_ds.BENCHMARKS["swap"][0]})


def _part_metrics(df: pd.DataFrame) -> dict[str, float]:
    """:func:`vlcomp.formats.hardpos.metrics` from the saved per-case outcomes (decided on full-precision
    scores), so a table saved with rounded scores gives the same numbers."""
    orig, aug, brittle = (float(as_bool(df[c]).mean()) for c in ("orig", "aug", "brittle"))
    return {"orig": orig, "aug": aug, "brittleness": brittle, "delta": aug - orig, "n": len(df)}


def aggregate_hardpos(tables: Mapping[str, pd.DataFrame], name: str) -> dict[str, float]:
    df = table(tables, name, ("part", "orig", "aug", "brittle"))
    parts = np.array(as_text(df["part"]), dtype=object)
    results = {p: _part_metrics(df[parts == p]) for p in dict.fromkeys(parts.tolist())}
    if name == "replace" and all(p in results for p in REPLACE_PARTS):
        results["replace"] = hp_ds.pooled({p: results[p] for p in REPLACE_PARTS})
    return checked({f"hardpos/{part}/{k}": v for part, m in results.items() for k, v in m.items()})


register(Benchmark("replace", "Hard Positives REPLACE (attributes + relations)", prepare_replace,
               partial(aggregate_hardpos, name="replace"), ("replace",),
                   headline=("hardpos/replace/orig", "hardpos/replace/aug")))
register(Benchmark("swap", "Hard Positives SWAP", prepare_swap,
               partial(aggregate_hardpos, name="swap"), ("swap",),
                   headline=("hardpos/swap/orig", "hardpos/swap/aug")))
