"""CREPE-Negate (the Negate fold of CREPE-Productivity) on CREPE's released CSVs: each image region is scored
against ``[caption, *hard_negs]`` and the caption's rank is kept; Recall@1 per complexity (CREPE's metric).

CoN-CLIP uses CREPE-Negate only as fine-tuning data in its ablation and does not evaluate on it (conclip
catalog §2.6), so the scoring rule is CREPE's own (``get_one2many_rank`` / ``get_one2many_metrics``,
:mod:`vlcomp.formats.crepe`): options ``[caption, *hard_negs]`` with the caption first, cosine similarity of
the crop with each, rank of the caption under ``torch.argsort(descending=True)`` (equal scores in index order,
so a tie counts right: :data:`~vlcomp.formats.crepe.CREPE_TIE_RULE`; the strict rule is kept beside it),
``R@k = mean(rank < k)``. Rows with different numbers of hard negatives (CREPE's files have 5 each) are scored
as separate tasks into one table.

Metrics (``crepe/negate/...``):

- ``acc``: Recall@1 over every row of every complexity file read (micro average); ``acc_tie_counts_wrong``
  the same under the strict tie rule; ``recall_at_3``: Recall@3;
- ``macro_acc``: the mean of the per-complexity Recall@1 (CREPE plots Recall@1 against complexity and
  reports no single number; AMBIGUOUS which average a summary should use, so both);
- ``complexity/<n>/acc`` and ``complexity/<n>/n``: Recall@1 and rows per complexity file;
- ``chance``: the Recall@1 of a random ranking, ``mean(1 / (1 + #hard negatives))``; ``n``: rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..eval.common import checked, need, table
from ..eval.engine import ChoiceTask, first_by_key
from ..formats import crepe as crepe_ds
from .registry import Benchmark, register

PREFIX = "crepe/negate"


def image_roots(inputs: Mapping[str, Any]) -> tuple[Path, ...]:
    """``crepe_images``: one folder, or several searched in order (CREPE's ``VG_100K`` then ``VG_100K_2``) as a
    list or a mapping name -> folder (the form ``real_inputs`` resolves and the doctor checks); each must
    exist."""
    value = need(inputs, "crepe_images", "crepe_negate")
    if isinstance(value, str | Path):
        roots = [value]
    elif isinstance(value, Mapping):
        roots = list(value.values())
    else:
        roots = list(value) if isinstance(value, list | tuple) else []
    if not roots or not all(isinstance(r, str | Path) and str(r).strip() for r in roots):
        raise ValueError(f"crepe_negate: input 'crepe_images' must be a folder, or a list or mapping of folders, got {value!r}")
    out = tuple(Path(r) for r in roots)
    for r in out:
        if not r.is_dir():
            raise NotADirectoryError(f"crepe_negate: input 'crepe_images': {r} is not a directory")
    return out


def crepe_tasks(cases_by_complexity: Mapping[int, Sequence[crepe_ds.CrepeCase]], roots: Sequence[Path],
                prod_dir: str | Path) -> list[ChoiceTask]:
    """Every complexity, one task per number of hard negatives (one task when every row has the same, as CREPE's
    files do); an image is a crop keyed by (image folders, image id, box). All write the ``crepe_negate`` table."""
    cases = [c for n in sorted(cases_by_complexity) for c in cases_by_complexity[n]]
    by_count: dict[int, list[crepe_ds.CrepeCase]] = {}
    for c in cases:
        by_count.setdefault(len(c.hard_negs), []).append(c)
    roots = tuple(roots)
    single = len(by_count) == 1
    return [_task(group, roots, prod_dir, "crepe_negate" if single else f"crepe_negate ({k} hard negatives)")
            for k, group in sorted(by_count.items())]


def _task(cases: Sequence[crepe_ds.CrepeCase], roots: tuple[Path, ...], prod_dir: str | Path,
          name: str) -> ChoiceTask:
    keys = [(tuple(str(r) for r in roots), c.image_id, c.box) for c in cases]
    first = first_by_key(keys, cases)
    meta = pd.DataFrame({"complexity": [c.complexity for c in cases], "index": [c.index for c in cases],
                         "image_id": [c.image_id for c in cases], "caption": [c.caption for c in cases],
                         "n_negatives": [len(c.hard_negs) for c in cases]})
    return ChoiceTask(
        name=name, meta=meta, image_keys=keys, captions=[c.options for c in cases],
        load_image=lambda key: first[key].crop(roots, crepe_ds.negate_file(prod_dir, first[key].complexity)),
        finish=lambda m, s: {"crepe_negate": finish_crepe(m, s)},
        image_file=lambda key: first[key].image_file(roots),
    )


def finish_crepe(meta: pd.DataFrame, scores: np.ndarray) -> pd.DataFrame:
    """Per row: the caption's score, the best negative's, its rank under both tie rules, Recall@1."""
    df = meta.copy()
    df["score_pos"] = scores[:, 0].astype(np.float64)
    df["score_best_neg"] = scores[:, 1:].max(axis=1).astype(np.float64)
    df["rank"] = crepe_ds.caption_rank(scores, crepe_ds.CREPE_TIE_RULE)
    df["rank_tie_counts_wrong"] = crepe_ds.caption_rank(scores, crepe_ds.STRICT_TIE_RULE)
    df["correct"] = df["rank"] == 0
    return df


def prepare_crepe_negate(inputs: Mapping[str, Any]) -> list[ChoiceTask]:
    """Inputs: ``crepe_prod_dir`` (CREPE's ``--input-dir``: the ``prod_hard_negatives/`` folder holding
    ``negate/``), ``crepe_images`` (a folder, or a list or mapping of folders searched in order); optional
    ``crepe_complexities`` (default: every complexity 4..12 whose file exists)."""
    prod_dir = Path(str(need(inputs, "crepe_prod_dir", "crepe_negate")))
    if not prod_dir.is_dir():
        raise FileNotFoundError(f"crepe_negate: input 'crepe_prod_dir': {prod_dir} is not a directory")
    complexities = inputs.get("crepe_complexities")
    if complexities is not None and (not isinstance(complexities, list | tuple) or not complexities or any(
            isinstance(n, bool) or n not in crepe_ds.COMPLEXITIES for n in complexities)):
        raise ValueError(f"crepe_negate: input 'crepe_complexities' must list complexities in "
                         f"{crepe_ds.COMPLEXITIES[0]}..{crepe_ds.COMPLEXITIES[-1]}, got {complexities!r}")
    roots = image_roots(inputs)
    cases = crepe_ds.load_crepe(prod_dir, complexities)
    return crepe_tasks(cases, roots, prod_dir)


def aggregate_crepe_negate(tables: Mapping[str, pd.DataFrame]) -> dict[str, float]:
    df = table(tables, "crepe_negate", ("complexity", "n_negatives", "rank", "rank_tie_counts_wrong"))
    rank = df["rank"].to_numpy(dtype=np.int64)
    strict = df["rank_tie_counts_wrong"].to_numpy(dtype=np.int64)
    cx = df["complexity"].to_numpy(dtype=np.int64)
    per = {int(n): crepe_ds.recall_at(rank[cx == n], 1) for n in sorted(set(cx.tolist()))}
    out = {f"{PREFIX}/acc": crepe_ds.recall_at(rank, 1),
           f"{PREFIX}/acc_tie_counts_wrong": crepe_ds.recall_at(strict, 1),
           f"{PREFIX}/recall_at_3": crepe_ds.recall_at(rank, 3),
           f"{PREFIX}/macro_acc": float(np.mean(list(per.values()))),
           f"{PREFIX}/chance": float(np.mean(1.0 / (1.0 + df["n_negatives"].to_numpy(dtype=np.float64)))),
           f"{PREFIX}/n": len(df)}
    for n, acc in per.items():
        out[f"{PREFIX}/complexity/{n}/acc"] = acc
        out[f"{PREFIX}/complexity/{n}/n"] = int((cx == n).sum())
    return checked(out)


register(Benchmark("crepe_negate", "CREPE-Negate (CREPE-Productivity, Negate fold)", prepare_crepe_negate,
                   aggregate_crepe_negate, ("crepe_negate",),
                   headline=("crepe/negate/acc",)))
