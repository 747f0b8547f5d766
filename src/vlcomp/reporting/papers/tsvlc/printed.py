"""TSVLC's printed numbers (catalog ``tsvlc.md`` §4.2-4.4: Tables 1a-1g, 2 and 3) as printed: the view of
``vlcomp/data/printed/tsvlc.csv`` (:mod:`vlcomp.reporting.printed_values`) the report reads.

Every cell keeps the exact printed text (``"80.93%"``, ``"+6.6%"``, ``"+11.05"``: Table 1d prints three deltas
without a ``%``) and parses it to a fraction (``80.93%`` -> ``0.8093``), the unit of the toy metrics. Each
printed row names the toy method it stands for (a ``methods`` key of params; ``clip`` for the chains' un-fine-tuned
default base, ``clip_vit`` / ``clip_cyclip`` for the other base models' un-fine-tuned evaluations,
:func:`vlcomp.config.base_method`), or None where the toy has no counterpart. In the file, a cell is the row whose
``metric`` is its column's toy key (:data:`T1_COLUMNS`, :data:`T3_COLUMNS`) and its delta the row whose key ends in
``/delta``; the printed row is the file's ``group`` (its name and setting,
:func:`vlcomp.reporting.printed_values.tsvlc_row`), its toy method the ``model``, and a Table 1 row's section the
artifact's letter.

:func:`table3_check` is the catalog's Table-3-vs-Table-1a consistency check (§4.4, [DERIVED]): Table 3's mean
of the 5 Attribute subtypes and of the 2 Relation subtypes against Table 1a's Attribute and Relation, and the
two tables' zero-shot values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from ...printed_values import DELTA_SUFFIX, PERCENT, data_file, load_printed, printed_value, tsvlc_row

CATALOG = "tsvlc.md"

#: Table 1 / Table 2 columns: (column label, column id, toy metric key)
T1_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("Object", "object", "vlchecklist/object/avg"),
    ("Attribute", "attribute", "vlchecklist/attribute/avg"),
    ("Relation", "relation", "vlchecklist/relation/avg"),
    ("21 ZS Tasks Avg", "zs", "zeroshot/elevater/mean_acc"),
)
#: Table 3 columns (the 7 Attribute / Relation subtypes of Figs. 3-4, then zero-shot): (label, id, toy key)
T3_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("A-Color", "attribute/color", "vlchecklist/attribute/color"),
    ("A-Material", "attribute/material", "vlchecklist/attribute/material"),
    ("A-Size", "attribute/size", "vlchecklist/attribute/size"),
    ("A-State", "attribute/state", "vlchecklist/attribute/state"),
    ("A-Action", "attribute/action", "vlchecklist/attribute/action"),
    ("R-Action", "relation/action", "vlchecklist/relation/action"),
    ("R-Spatial", "relation/spatial", "vlchecklist/relation/spatial"),
    ("21 ZS Tasks Avg", "zs", "zeroshot/elevater/mean_acc"),
)
ATTRIBUTE_SUBTYPES = ("attribute/color", "attribute/material", "attribute/size", "attribute/state",
                      "attribute/action")
RELATION_SUBTYPES = ("relation/action", "relation/spatial")
#: The artifacts of the printed tables and each one's columns.
TABLE_COLUMNS: dict[str, tuple[tuple[str, str, str], ...]] = {
    **{f"TSVLC-T1{s}": T1_COLUMNS for s in "abcdefg"}, "TSVLC-T2": T1_COLUMNS, "TSVLC-T3": T3_COLUMNS}
#: The benchmarks of the tables' cells (the file's ``dataset``) and the prefix of their toy keys.
KEY_PREFIX: dict[str, str] = {"vlchecklist": "vlchecklist/", "zeroshot_elevater": "zeroshot/elevater/"}


def percent_fraction(text: str) -> float:
    """A printed percentage as a fraction (:func:`vlcomp.reporting.printed_values.printed_value`): ``"80.93%"`` ->
    0.8093, ``"+11.05"`` -> 0.1105 (Table 1d prints some deltas without ``%``); NaN for ``""`` (none printed)."""
    return printed_value(text, PERCENT) if text else math.nan


@dataclass(frozen=True)
class Cell:
    """One printed cell: the value and its delta as printed (``""``: no delta printed)."""

    text: str
    delta: str = ""

    @property
    def value(self) -> float:
        return percent_fraction(self.text)

    @property
    def delta_value(self) -> float:
        return percent_fraction(self.delta)

    @property
    def shown(self) -> str:
        """As the paper prints it: ``85.09% (+3.50%)``."""
        return f"{self.text} ({self.delta})" if self.delta else self.text


@dataclass(frozen=True)
class Row:
    """One printed row: where it is (``artifact``, Table 1's ``section``), its setting, the paper's row name,
    the toy method it stands for (None: no toy counterpart yet) and its cells by column id."""

    artifact: str
    section: str
    train: str
    model: str  # the paper's row name, as printed
    pre: bool  # pretrained init (fine-tuned, checkmark) or trained from scratch (cross)
    arch: str
    method: str | None
    cells: dict[str, Cell] = field(default_factory=dict)


def _check_row(row: dict[str, str]) -> str | None:
    """What is wrong with one row of ``tsvlc.csv`` by the printed tables' layout, or None (the schema is
    :mod:`vlcomp.reporting.printed_values`'s to check)."""
    artifact, dataset, metric = row["artifact"], row["dataset"], row["metric"]
    if artifact not in TABLE_COLUMNS:
        return f"unknown artifact {artifact!r}; known: {', '.join(TABLE_COLUMNS)}"
    key = metric.removesuffix(DELTA_SUFFIX)
    if key not in {k for _, _, k in TABLE_COLUMNS[artifact]}:
        return f"metric {metric!r} is no column of {artifact} (a toy key, or one + {DELTA_SUFFIX!r})"
    if dataset not in KEY_PREFIX or not key.startswith(KEY_PREFIX[dataset]):
        return f"dataset {dataset!r} is not the benchmark of {key!r} (one of {', '.join(KEY_PREFIX)})"
    if row["std"]:
        return "std must be empty (TSVLC prints no ±)"
    return None


def _rows(printed: pd.DataFrame, source_name: str) -> tuple[Row, ...]:
    """The printed rows, in the file's order: one per (artifact, group), every column's cell by column id."""
    rows = []
    for (artifact, group), found in printed.groupby(["artifact", "group"], sort=False):
        setting, methods = tsvlc_row(group), set(found["model"])
        where = f"{source_name}: {artifact} row {setting['row']!r}"
        if len(methods) != 1:
            raise ValueError(f"{where}: its cells name different toy methods {sorted(methods)}")
        texts = dict(zip(found["metric"], found["text"], strict=True))
        missing = [key for _, _, key in TABLE_COLUMNS[artifact] if key not in texts]
        if missing:
            raise ValueError(f"{where}: no printed value for {missing}")
        cells = {cid: Cell(texts[key], texts.get(key + DELTA_SUFFIX, "")) for _, cid, key in TABLE_COLUMNS[artifact]}
        section = f"({artifact[-1]})" if artifact.startswith("TSVLC-T1") else ""
        rows.append(Row(artifact, section, setting["train"], setting["row"], setting["init"] == "pretrained",
                        setting["arch"], methods.pop() or None, cells))
    return tuple(rows)


_ROWS = _rows(load_printed("tsvlc", check_row=_check_row), f"vlcomp/data/{data_file('tsvlc')}")
#: Table 1 (catalog §4.2), every section, as printed (deltas included).
TABLE1: tuple[Row, ...] = tuple(r for r in _ROWS if r.artifact.startswith("TSVLC-T1"))
#: Table 2 (catalog §4.3): rows 2 and 4 repeat Table 1a.
TABLE2: tuple[Row, ...] = tuple(r for r in _ROWS if r.artifact == "TSVLC-T2")
#: Table 3 (catalog §4.4): the 7 subtypes and zero-shot; no deltas printed.
TABLE3: tuple[Row, ...] = tuple(r for r in _ROWS if r.artifact == "TSVLC-T3")

#: Table 1's sections and the toy setting that stands for each (TSVLC-T1a..T1g): (title, what the toy runs).
SECTIONS: dict[str, tuple[str, str]] = {
    "TSVLC-T1a": ("CC3M, LoRA fine-tuning, ViT-B/32", "the chains' default base (toy-rn16), LoRA on the cc3m twin"),
    "TSVLC-T1b": ("CC3M, LoRA fine-tuning, ViT-B/16",
                  "a second architecture (base model `vit`: toy-vit-p8, pretrained like the default base), LoRA "
                  "on the cc3m twin"),
    "TSVLC-T1c": ("CC3M, from scratch, ViT-B/32",
                  "the default architecture randomly initialised, every weight trained on the cc3m twin for "
                  "twice the fine-tuning length, no LoRA"),
    "TSVLC-T1d": ("CC3M, from scratch, ViT-B/16", "as (c) on the second architecture (toy-vit-p8)"),
    "TSVLC-T1e": ("CC3M, LoRA fine-tuning, CyCLIP R50",
                  "base model `cyclip`: the default architecture pretrained with CyCLIP's cyclic losses added; "
                  "LoRA with the same losses added"),
    "TSVLC-T1f": ("CC3M, from scratch, CyCLIP R50", "as (c) with CyCLIP's cyclic losses added"),
    "TSVLC-T1g": ("LAION, LoRA fine-tuning, ViT-B/32",
                  "the default base, LoRA on the laion twin (a noisier web corpus), its own RB+LLM negatives and "
                  "positives"),
}


def rows_of(table: tuple[Row, ...], artifact: str) -> list[Row]:
    return [r for r in table if r.artifact == artifact]


def printed_row(table: tuple[Row, ...], artifact: str, method: str) -> Row | None:
    """The printed row of ``artifact`` standing for toy ``method``, or None."""
    found = [r for r in table if r.artifact == artifact and r.method == method]
    return found[0] if found else None


def printed_frame(rows: list[Row], columns: tuple[tuple[str, str, str], ...],
                  status: dict[str, str] | None = None) -> pd.DataFrame:
    """Printed rows as a table for reading: setting, the paper's row name, each cell as printed (value and
    delta), and a ``status`` column when given (artifact -> status)."""
    out = []
    for r in rows:
        row = {"artifact": r.artifact, "section": r.section, "train data": r.train, "model (paper)": r.model,
               "pre": "✓" if r.pre else "✗", "arch": r.arch}
        row |= {label: r.cells[cid].shown if cid in r.cells else "" for label, cid, _ in columns}
        if status is not None:
            row["status"] = status.get(r.artifact, "")
        out.append(row)
    return pd.DataFrame(out)


# --------------------------------------------------------------------------- the Table 3 vs Table 1a check

#: Two printed numbers "agree" when they differ by at most half a unit of the last printed digit (percent
#: points: 0.005), plus float noise: Table 3's means are rounded to two decimals in Table 1a (78.715 ->
#: 78.72).
CONSISTENCY_TOLERANCE = 0.005 + 1e-9


def _pct(text: str) -> float:
    return float(text.rstrip("%"))


def table3_check() -> pd.DataFrame:
    """Per Table 3 row: the mean of its 5 Attribute and of its 2 Relation subtypes (percent, unrounded)
    against Table 1a's Attribute / Relation, and its zero-shot against Table 1a's, each with ``agree`` (within
    :data:`CONSISTENCY_TOLERANCE`) or ``not in T1a``."""
    rows = []
    for r in TABLE3:
        t1 = printed_row(TABLE1, "TSVLC-T1a", r.method) if r.method else None
        attr = sum(_pct(r.cells[c].text) for c in ATTRIBUTE_SUBTYPES) / len(ATTRIBUTE_SUBTYPES)
        rel = sum(_pct(r.cells[c].text) for c in RELATION_SUBTYPES) / len(RELATION_SUBTYPES)
        zs = _pct(r.cells["zs"].text)
        row = {"row (Table 3)": r.model, "method": r.method, "T3 Attribute mean of 5": attr,
               "T1a Attribute": math.nan, "Attribute agrees": "not in T1a", "T3 Relation mean of 2": rel,
               "T1a Relation": math.nan, "Relation agrees": "not in T1a", "T3 ZS": zs, "T1a ZS": math.nan,
               "ZS agrees": "not in T1a"}
        if t1 is not None:
            for name, ours, cid in (("Attribute", attr, "attribute"), ("Relation", rel, "relation"),
                                    ("ZS", zs, "zs")):
                printed = _pct(t1.cells[cid].text)
                row[f"T1a {name}"] = printed
                row[f"{name} agrees"] = "yes" if abs(ours - printed) <= CONSISTENCY_TOLERANCE else "NO"
        rows.append(row)
    return pd.DataFrame(rows)
