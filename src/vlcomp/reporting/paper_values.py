"""Printed paper values, transcribed once into a packaged long-format CSV.

One row per printed number: ``artifact, dataset, model, group, metric, value, std, source, note``.
``value``/``std`` are parsed to floats (``std`` is NaN when the paper prints none); the exact printed
text of the value (e.g. ``"0.8"`` vs ``"0.80"``) is kept in the extra column ``value_text``.
"""

from __future__ import annotations

import csv
import importlib.resources
import math
import re
from collections.abc import Callable, Iterable, Iterator

import pandas as pd

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

PAPER_FILES: dict[str, str] = {"aro": "aro_paper_values.csv"}

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
    """Return a description of what is wrong with one CSV row, or None if it is valid."""
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
    if not _NUMBER.fullmatch(row["value"]):
        return f"value {row['value']!r} is not a plain decimal number"
    value = float(row["value"])
    if metric == "n_samples":
        if "." in row["value"] or value <= 0:
            return f"n_samples must be a positive integer, got {row['value']!r}"
    elif not 0.0 <= value <= 1.0:
        return f"value {value} outside [0, 1]"
    if row["std"] and (not _NUMBER.fullmatch(row["std"]) or not 0.0 <= float(row["std"]) <= 1.0):
        return f"std {row['std']!r} is not a decimal in [0, 1]"
    if not row["source"]:
        return "empty source"
    if art in _STRATEGIES_BY_ARTIFACT and group not in _STRATEGIES_BY_ARTIFACT[art]:
        return f"group {group!r} is not a strategy of {art}"
    if art == "ARO-T2" and metric == "macro_acc" and group not in MACRO_GROUPS:
        return f"Table 2 macro row needs group in {MACRO_GROUPS}, got {group!r}"
    if art == "ARO-T2" and metric != "macro_acc" and group in ("", *MACRO_GROUPS):
        return f"Table 2 per-relation row needs a relation name as group, got {group!r}"
    if art == "ARO-X2" and group not in ("spatial", "verbs"):
        return f"ARO-X2 needs group 'spatial' or 'verbs', got {group!r}"
    return None


def checked_rows(lines: Iterable[str], source_name: str, columns: tuple[str, ...], key_columns: Iterable[str],
                 check_row: Callable[[dict[str, str]], str | None], *,
                 header_where: str = "header") -> Iterator[dict[str, str]]:
    """The rows of a transcribed-values CSV, each checked by ``check_row`` (a problem description or None) and
    unique on ``key_columns``; a bad header or row raises ValueError naming ``source_name`` and the row."""
    reader = csv.DictReader(lines)
    if tuple(reader.fieldnames or ()) != columns:
        raise ValueError(f"{source_name}: {header_where}: columns {reader.fieldnames} != expected {list(columns)}")
    key_columns = tuple(key_columns)
    seen: dict[tuple[str, ...], int] = {}
    for row in reader:
        lineno = reader.line_num
        if None in row or any(v is None for v in row.values()):
            raise ValueError(f"{source_name}: row {lineno}: expected {len(columns)} fields")
        problem = check_row(row)
        if problem:
            raise ValueError(f"{source_name}: row {lineno}: {problem}")
        key = tuple(row[c] for c in key_columns)
        if key in seen:
            raise ValueError(f"{source_name}: row {lineno}: duplicate of row {seen[key]} {key}")
        seen[key] = lineno
        yield row


def parse_paper_values(lines: Iterable[str], source_name: str) -> pd.DataFrame:
    """Parse and validate paper-value CSV text; raise ValueError naming ``source_name`` and the row."""
    records = [{**row, "value": float(row["value"]), "std": float(row["std"]) if row["std"] else math.nan,
                "value_text": row["value"]}
               for row in checked_rows(lines, source_name, COLUMNS, ("artifact", "dataset", "model", "group", "metric"),
                                       _check_row)]
    df = pd.DataFrame.from_records(records, columns=[*COLUMNS, "value_text"])
    return df.astype({"value": "float64", "std": "float64"})


def load_paper_values(paper: str = "aro") -> pd.DataFrame:
    """Load the packaged printed values of ``paper`` (``vlcomp/data/<paper>_paper_values.csv``)."""
    if paper not in PAPER_FILES:
        raise ValueError(f"unknown paper {paper!r}; known: {sorted(PAPER_FILES)}")
    resource = importlib.resources.files("vlcomp").joinpath("data", PAPER_FILES[paper])
    with resource.open("r", encoding="utf-8", newline="") as f:
        return parse_paper_values(f, f"vlcomp/data/{PAPER_FILES[paper]}")


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
