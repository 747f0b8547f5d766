"""SugarCrepe's 7 released files (``data/<category>.json``; refcode catalog §3.1) and its scoring rules (§3.3).

Each file is a JSON object keyed by string ids, ``{"0": {"filename", "caption", "negative_caption"}, ...}``. The
ids are **not contiguous** (``swap_obj.json`` has no "108"; iterating ``range(len)`` crashed CLIP_benchmark),
so cases keep their ids. Captions are kept raw (positives can carry trailing spaces; the reference tokenises
them as they are). A case is correct iff ``score(positive) > score(negative)``: a tie counts as wrong.

File names are COCO val2017 names, 12 digits + ``.jpg``; a toy twin (:mod:`vlcomp.twins.sugarcrepe`) names its
rendered scenes the same way with ``.png``, so both extensions are accepted. :func:`write_category` writes the
released layout byte for byte (``json.dumps(indent=4)`` + newline, ids in the given order).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..io import atomic_path
from .records import RecordError, keyed_records, pairwise_correct, text, where

CATEGORIES = ("add_att", "add_obj", "replace_att", "replace_obj", "replace_rel", "swap_att", "swap_obj")
#: The paper's groups (Table: REPLACE / SWAP / ADD).
GROUPS = {"replace": ("replace_obj", "replace_att", "replace_rel"), "swap": ("swap_obj", "swap_att"),
          "add": ("add_obj", "add_att")}
_COCO_FILE = re.compile(r"^\d{12}\.(jpg|png)$")
"""A COCO val2017 file name (``000000085329.jpg``), or the same name as PNG (a toy twin's rendered scene)."""


@dataclass(frozen=True)
class SugarCrepeCase:
    id: str
    filename: str
    caption: str
    negative_caption: str


def load_category(path: str | Path) -> list[SugarCrepeCase]:
    """Every case of one category file, in file order, validated (fields, types, empty captions, COCO val2017
    file names: 12 digits + ``.jpg``, or ``.png`` for a toy twin; duplicate ids)."""
    path = Path(path)
    data = keyed_records(path, "case id")
    cases = []
    for key, rec in data.items():
        at = where(path, repr(key))
        filename = text(rec, "filename", at)
        if not _COCO_FILE.match(filename):
            raise RecordError(f"{at}: field 'filename' {filename!r} is not a COCO val2017 file name "
                              "(12 digits + .jpg, or + .png for a toy twin)")
        cases.append(SugarCrepeCase(key, filename, text(rec, "caption", at), text(rec, "negative_caption", at)))
    return cases


def load_all(data_dir: str | Path, categories: tuple[str, ...] = CATEGORIES) -> dict[str, list[SugarCrepeCase]]:
    data_dir = Path(data_dir)
    return {c: load_category(data_dir / f"{c}.json") for c in categories}


def write_category(path: str | Path, cases: Sequence[SugarCrepeCase]) -> Path:
    """One category file in the released layout: a JSON object keyed by the case ids in the given order, each
    value ``{"filename", "caption", "negative_caption"}`` (captions as they are), 4-space indent and a final
    newline, as the sugar-crepe repository's ``data/*.json``. Ids must be unique (they need not be contiguous)."""
    path = Path(path)
    data: dict[str, dict[str, str]] = {}
    for c in cases:
        if c.id in data:
            raise ValueError(f"{path}: case id {c.id!r} repeats")
        for name in ("id", "filename", "caption", "negative_caption"):
            if not isinstance(getattr(c, name), str) or not getattr(c, name).strip():
                raise ValueError(f"{path}: record {c.id!r}: field {name!r} must be a non-empty string")
        if not _COCO_FILE.match(c.filename):
            raise ValueError(f"{path}: record {c.id!r}: filename {c.filename!r} is not a COCO val2017 file name")
        data[c.id] = {"filename": c.filename, "caption": c.caption, "negative_caption": c.negative_caption}
    if not data:
        raise ValueError(f"{path}: no cases to write (the loader refuses an empty category)")
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as f:
        f.write(json.dumps(data, indent=4) + "\n")
    return path


def write_all(data_dir: str | Path, cases_by_category: Mapping[str, Sequence[SugarCrepeCase]]) -> dict[str, Path]:
    """``data_dir/<category>.json`` for every category given (names checked against :data:`CATEGORIES`)."""
    unknown = [c for c in cases_by_category if c not in CATEGORIES]
    if unknown:
        raise ValueError(f"sugarcrepe: unknown categories {unknown}; known: {', '.join(CATEGORIES)}")
    data_dir = Path(data_dir)
    return {cat: write_category(data_dir / f"{cat}.json", cases) for cat, cases in cases_by_category.items()}


def correct(pos_scores: np.ndarray, neg_scores: np.ndarray) -> np.ndarray:
    """Per case: ``pos > neg`` (strict; a tie is wrong), as ``main_eval.py::text_retrieval``. A NaN score is an
    error (the reference would count it wrong silently; a NaN means a broken model, not a wrong answer)."""
    return pairwise_correct(pos_scores, neg_scores, names="SugarCrepe positive and negative")


def group_accuracies(correct_by_category: Mapping[str, np.ndarray]) -> dict[str, float]:
    """Per-category accuracy and, per group, the **micro** average (the SugarCrepe paper's REPLACE/SWAP/ADD:
    cases pooled, confirmed in sugar-crepe issue #3) and the **macro** average (mean of the categories' accuracies,
    CE-CLIP's table). Keys: ``<category>``, ``<group>/micro``, ``<group>/macro``; groups with a missing category
    are left out."""
    out: dict[str, float] = {}
    for cat, c in correct_by_category.items():
        c = np.asarray(c, dtype=bool)
        if c.size == 0:
            raise ValueError(f"category {cat!r} has no cases")
        out[cat] = float(c.mean())
    for group, cats in GROUPS.items():
        if all(cat in correct_by_category for cat in cats):
            pooled = np.concatenate([np.asarray(correct_by_category[cat], dtype=bool) for cat in cats])
            out[f"{group}/micro"] = float(pooled.mean())
            out[f"{group}/macro"] = float(np.mean([out[cat] for cat in cats]))
    return out
