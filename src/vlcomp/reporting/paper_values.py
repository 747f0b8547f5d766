"""ARO's printed values: the view of :mod:`.printed_values` the ARO report reads.

The numbers are transcribed once in ``vlcomp/data/printed/aro.csv`` (the schema every paper shares,
:mod:`.printed_values`); ARO prints fractions, so each ``value`` is its printed ``text``. This view checks the
rows against ARO's vocabulary (artifacts, datasets, models, metrics, Table 2's relations and sections, Tables 3-4's
strategies) and returns them in the columns the report code reads: ``artifact, dataset, model, group, metric,
value, std, source, note`` (:data:`COLUMNS`), ``value``/``std`` as floats (``std`` NaN when the paper prints none),
and the exact printed text of the value (e.g. ``"0.8"`` vs ``"0.80"``) in the extra column ``value_text``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

import pandas as pd

from .printed_values import checked_rows as checked_rows  # re-exported: its home was this module
from .printed_values import data_file, load_printed, parse_printed

COLUMNS: tuple[str, ...] = (
    "artifact",
    "dataset",
    "model",
    "group",
    "metric",
    "value",
    "std",
    "source",
    "note",
)

#: Paper -> its packaged file under ``vlcomp/data`` (the papers this view reads).
PAPER_FILES: dict[str, str] = {"aro": data_file("aro")}

ARTIFACTS = frozenset({"ARO-T2", "ARO-T3", "ARO-T4", "ARO-T5", "ARO-T6", "ARO-X1", "ARO-X2", "ARO-F1"})
DATASETS = frozenset(
    {
        "vg_relation",
        "vg_attribution",
        "coco_order",
        "flickr30k_order",
        "coco",
        "flickr30k",
        "cifar10",
        "cifar100",
        "imagenet",
    }
)
MODELS = frozenset({"clip", "negclip", "clip_ft", "xvlm", "blip", "flava", "chance"})
METRICS = frozenset(
    {
        "macro_acc",
        "acc",
        "n_samples",
        "i2t/recall_at_1",
        "i2t/recall_at_5",
        "t2i/recall_at_1",
        "t2i/recall_at_5",
    }
)
TEXT_STRATEGIES: tuple[str, ...] = (
    "none",
    "shuffle_nouns_and_adj",
    "shuffle_all_words",
    "shuffle_allbut_nouns_and_adj",
    "shuffle_trigrams",
    "shuffle_within_trigrams",
)
IMAGE_STRATEGIES: tuple[str, ...] = ("none", "shuffle_rows_4", "shuffle_cols_4", "shuffle_patches_9")
MACRO_GROUPS: tuple[str, ...] = ("overall", "spatial", "verbs")

# Section headings of Table 2 ("Spatial Relationships" / "Verbs"); every other listed relation is a verb.
TABLE2_SPATIAL_RELATIONS: tuple[str, ...] = (
    "above",
    "at",
    "behind",
    "below",
    "beneath",
    "in",
    "in front of",
    "inside",
    "on",
    "on top of",
    "to the left of",
    "to the right of",
    "under",
)

_STRATEGIES_BY_ARTIFACT = {"ARO-T3": frozenset(TEXT_STRATEGIES), "ARO-T4": frozenset(IMAGE_STRATEGIES)}
_NUMBER = re.compile(r"\d+(\.\d+)?")


def table2_section(relation: str) -> str:
    """Return ``"spatial"`` or ``"verbs"``: the Table 2 section a relation is listed under."""
    return "spatial" if relation in TABLE2_SPATIAL_RELATIONS else "verbs"


def _check_row(row: dict[str, str]) -> str | None:
    """What is wrong with one row of ``aro.csv`` by ARO's vocabulary, or None (the schema is
    :mod:`.printed_values`'s to check)."""
    art, ds, model, group, metric = (row[c] for c in ("artifact", "dataset", "model", "group", "metric"))
    if art not in ARTIFACTS:
        return f"unknown artifact {art!r}"
    if ds not in DATASETS:
        return f"unknown dataset {ds!r}"
    if metric not in METRICS:
        return f"unknown metric {metric!r}"
    if metric == "n_samples":
        if model != "":
            return f"n_samples rows must have an empty model, got {model!r}"
    elif model not in MODELS:
        return f"unknown model {model!r}"
    if not _NUMBER.fullmatch(row["text"]):
        return f"text {row['text']!r} is not a plain decimal number"
    value = float(row["value"])
    if metric == "n_samples":
        if "." in row["text"] or value <= 0:
            return f"n_samples must be a positive integer, got {row['text']!r}"
    elif not 0.0 <= value <= 1.0:
        return f"value {value} outside [0, 1]"
    if row["std"] and not 0.0 <= float(row["std"]) <= 1.0:
        return f"std {row['std']!r} is not a decimal in [0, 1]"
    if art in _STRATEGIES_BY_ARTIFACT and group not in _STRATEGIES_BY_ARTIFACT[art]:
        return f"group {group!r} is not a strategy of {art}"
    if art == "ARO-T2" and metric == "macro_acc" and group not in MACRO_GROUPS:
        return f"Table 2 macro row needs group in {MACRO_GROUPS}, got {group!r}"
    if art == "ARO-T2" and metric != "macro_acc" and group in ("", *MACRO_GROUPS):
        return f"Table 2 per-relation row needs a relation name as group, got {group!r}"
    if art == "ARO-X2" and group not in ("spatial", "verbs"):
        return f"ARO-X2 needs group 'spatial' or 'verbs', got {group!r}"
    return None


def _view(printed: pd.DataFrame) -> pd.DataFrame:
    """The loader's rows in this view's columns (:data:`COLUMNS`, then ``value_text``)."""
    return printed.rename(columns={"text": "value_text"})[[*COLUMNS, "value_text"]]


def parse_paper_values(lines: Iterable[str], source_name: str) -> pd.DataFrame:
    """Parse and check ARO printed-values CSV text (the :mod:`.printed_values` schema); raise ValueError naming
    ``source_name`` and the line."""
    return _view(parse_printed(lines, source_name, "aro", _check_row))


def load_paper_values(paper: str = "aro") -> pd.DataFrame:
    """Load the packaged printed values of ``paper`` (``vlcomp/data/printed/<paper>.csv``)."""
    if paper not in PAPER_FILES:
        raise ValueError(f"unknown paper {paper!r}; known: {sorted(PAPER_FILES)}")
    return _view(load_printed(paper, check_row=_check_row))


def lookup(
    df: pd.DataFrame,
    artifact: str,
    dataset: str,
    model: str,
    metric: str,
    group: str = "",
    *,
    column: str = "value",
) -> float | None:
    """Return the printed ``value`` (or ``std`` via ``column``) of one cell, or None if absent/unprinted."""
    if column not in ("value", "std"):
        raise ValueError(f"column must be 'value' or 'std', got {column!r}")
    mask = (
        (df["artifact"] == artifact)
        & (df["dataset"] == dataset)
        & (df["model"] == model)
        & (df["metric"] == metric)
        & (df["group"] == group)
    )
    hits = df.loc[mask, column]
    if len(hits) == 0:
        return None
    if len(hits) > 1:
        raise ValueError(f"{len(hits)} rows match {(artifact, dataset, model, metric, group)}")
    out = float(hits.iloc[0])
    return None if math.isnan(out) else out
