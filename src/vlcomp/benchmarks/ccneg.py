"""CC-Neg (CoN-CLIP) on its released ``ccneg_preprocessed.pt``: ``[true, negated with commas deleted]``; the paper's
strict rule and the released code's ``>=`` side by side; accuracy by K and by negation word.

AMBIGUOUS: the evaluation split (last 40,000 records) by default; ``ccneg_split: all`` runs the whole file (the
paper's Table 2 and figures).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..eval.common import as_bool, as_text, checked, finish_pair, need_path, table
from ..eval.engine import ChoiceTask, first_by_key
from ..formats import ccneg as ccneg_ds
from .registry import Benchmark, register


def ccneg_task(cases: Sequence[ccneg_ds.CCNegCase], images_root: str | Path, source: str | Path = "") -> ChoiceTask:
    """Captions ``[true, negated with commas deleted]`` (what the model sees); the raw negated caption stays
    in the table (its negation words define the subsets)."""
    images_root = Path(images_root)
    keys = [str(c.image_file(images_root)) for c in cases]
    first = first_by_key(keys, cases)
    meta = pd.DataFrame({"index": [c.index for c in cases], "image_path": [c.image_path for c in cases],
                         "k": pd.array([c.k for c in cases], dtype="Int64"), "caption": [c.caption for c in cases],
                         "negated_caption": [c.negated_caption for c in cases]})
    return ChoiceTask(
        name="ccneg", meta=meta, image_keys=keys, captions=[(c.caption, c.negated_for_model) for c in cases],
        load_image=lambda key: first[key].open_image(images_root, source),
        finish=lambda m, s: {"ccneg": finish_ccneg(m, s)}, image_file=Path,
    )


def finish_ccneg(meta: pd.DataFrame, scores: np.ndarray) -> pd.DataFrame:
    df = finish_pair(meta, scores, lambda p, n: ccneg_ds.correct(p, n, ccneg_ds.PAPER_TIE_RULE))
    df["correct_code_tie_rule"] = ccneg_ds.correct(scores[:, 0], scores[:, 1], ccneg_ds.CODE_TIE_RULE)
    return df


def prepare_ccneg(inputs: Mapping[str, Any]) -> ChoiceTask:
    """Inputs: ``ccneg_annotations`` (``ccneg_preprocessed.pt``), ``ccneg_images`` (the root replacing
    ``/workspace/datasets/cc3m/``); optional ``ccneg_split`` (``eval`` default, or ``all``), ``ccneg_n_eval``."""
    path = need_path(inputs, "ccneg_annotations", "ccneg")
    images = need_path(inputs, "ccneg_images", "ccneg", directory=True)
    split = inputs.get("ccneg_split") or "eval"
    if split not in ("eval", "all"):
        raise ValueError(f"ccneg: input 'ccneg_split' must be 'eval' or 'all', got {split!r}")
    cases = ccneg_ds.load_ccneg(path)
    if split == "eval":
        cases = ccneg_ds.eval_split(cases, int(inputs.get("ccneg_n_eval") or ccneg_ds.EVAL_SIZE))
    return ccneg_task(cases, images, path)


def _cases_from_table(df: pd.DataFrame) -> list[ccneg_ds.CCNegCase]:
    ks = [None if pd.isna(k) else int(k) for k in df["k"]]
    return [ccneg_ds.CCNegCase(int(i), "", "", neg, k)
            for i, neg, k in zip(df["index"], as_text(df["negated_caption"]), ks, strict=True)]


def aggregate_ccneg(tables: Mapping[str, pd.DataFrame]) -> dict[str, float]:
    df = table(tables, "ccneg", ("index", "k", "negated_caption", "correct", "correct_code_tie_rule"))
    cases = _cases_from_table(df)
    acc = ccneg_ds.accuracies(as_bool(df["correct"]), cases)
    sizes = ccneg_ds.subset_sizes(cases)
    out = {"ccneg/acc": acc.pop("overall"), "ccneg/n": sizes.pop("overall"),
           "ccneg/acc_code_tie_rule": float(as_bool(df["correct_code_tie_rule"]).mean())}
    out |= {f"ccneg/{name}/acc": a for name, a in acc.items()}
    out |= {f"ccneg/{name}/n": n for name, n in sizes.items()}
    return checked(out)


register(Benchmark("ccneg", "CC-Neg (CoN-CLIP)", prepare_ccneg, aggregate_ccneg, ("ccneg",),
                   headline=("ccneg/acc",)))
