"""TSVLC's printed numbers (catalog ``tsvlc.md`` §4.2-4.4: Tables 1a-1g, 2 and 3), transcribed once, as
printed.

Every cell keeps the exact printed text (``"80.93%"``, ``"+6.6%"``, ``"+11.05"``: Table 1d prints three deltas
without a ``%``) and parses it to a fraction (``80.93%`` -> ``0.8093``), the unit of the toy metrics. Each
printed row names the toy method it stands for (a ``methods`` key of params; ``clip`` for the chains' un-fine-tuned
default base, ``clip_vit`` / ``clip_cyclip`` for the other base models' un-fine-tuned evaluations,
:func:`vlcomp.config.base_method`), or None where the toy has no counterpart.

:func:`table3_check` is the catalog's Table-3-vs-Table-1a consistency check (§4.4, [DERIVED]): Table 3's mean
of the 5 Attribute subtypes and of the 2 Relation subtypes against Table 1a's Attribute and Relation, and the
two tables' zero-shot values.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import pandas as pd

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

_NUMBER = re.compile(r"^[+-]?\d+(\.\d+)?%?$")


def percent_fraction(text: str) -> float:
    """A printed percentage as a fraction: ``"80.93%"`` -> 0.8093, ``"+11.05"`` -> 0.1105 (Table 1d prints
    some deltas without ``%``); NaN for ``""``."""
    if not text:
        return math.nan
    if not _NUMBER.match(text):
        raise ValueError(f"not a printed percentage: {text!r}")
    return float(text.rstrip("%")) / 100.0


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


def _t1(artifact: str, section: str, train: str, model: str, pre: bool, arch: str, method: str | None,
        *cells: tuple[str, str] | str) -> Row:
    parsed = [Cell(c) if isinstance(c, str) else Cell(*c) for c in cells]
    return Row(artifact, section, train, model, pre, arch, method,
               dict(zip([cid for _, cid, _ in T1_COLUMNS], parsed, strict=True)))


# Table 1 (catalog §4.2), every section, transcribed exactly (deltas included).
TABLE1: tuple[Row, ...] = (
    _t1("TSVLC-T1a", "(a)", "CC3M", "CLIP [57]", True, "ViT-B/32", "clip", "81.58%", "67.60%", "63.05%",
        "56.37%"),
    _t1("TSVLC-T1a", "(a)", "CC3M", "CLIP + LoRA", True, "ViT-B/32", "tsvlc_lora", ("80.93%", "-0.66%"),
        ("66.28%", "-1.32%"), ("55.52%", "-7.53%"), ("56.41%", "+0.04%")),
    _t1("TSVLC-T1a", "(a)", "CC3M", "CLIP + Ours RB Neg", True, "ViT-B/32", "tsvlc_rb", ("83.89%", "+2.30%"),
        ("73.35%", "+5.75%"), ("75.33%", "+12.28%"), ("54.32%", "-2.05%")),
    _t1("TSVLC-T1a", "(a)", "CC3M", "CLIP + Ours LLM Neg", True, "ViT-B/32", "tsvlc_llm",
        ("84.44%", "+2.85%"), ("71.63%", "+4.03%"), ("74.82%", "+11.77%"), ("55.60%", "-0.77%")),
    _t1("TSVLC-T1a", "(a)", "CC3M", "CLIP + Ours RB+LLM Negs", True, "ViT-B/32", "tsvlc_rbllm",
        ("85.09%", "+3.50%"), ("73.90%", "+6.30%"), ("78.72%", "+15.67%"), ("54.66%", "-1.71%")),
    _t1("TSVLC-T1a", "(a)", "CC3M", "CLIP + Ours Combined", True, "ViT-B/32", "tsvlc_combined",
        ("85.00%", "+3.42%"), ("71.97%", "+4.37%"), ("68.95%", "+5.90%"), ("54.77%", "-1.60%")),
    _t1("TSVLC-T1b", "(b)", "CC3M", "CLIP [57]", True, "ViT-B/16", "clip_vit", "82.91%", "67.32%", "61.80%",
        "60.00%"),
    _t1("TSVLC-T1b", "(b)", "CC3M", "CLIP + Ours RB+LLM Negs", True, "ViT-B/16", "tsvlc_vit_rbllm", ("85.82%", "+2.91%"),
        ("73.92%", "+6.6%"), ("77.40%", "+15.6%"), ("59.37%", "-0.63%")),
    _t1("TSVLC-T1b", "(b)", "CC3M", "CLIP + Ours Combined", True, "ViT-B/16", "tsvlc_vit_combined", ("84.75%", "+1.84%"),
        ("71.18%", "+3.86%"), ("69.68%", "+7.88%"), ("59.87%", "-0.13%")),
    _t1("TSVLC-T1c", "(c)", "CC3M", "CLIP", False, "ViT-B/32", "tsvlc_scratch_clip", "71.17%", "57.86%", "45.20%", "21.96%"),
    _t1("TSVLC-T1c", "(c)", "CC3M", "CLIP + Ours Combined", False, "ViT-B/32", "tsvlc_scratch_combined", ("71.79%", "+0.62%"),
        ("63.29%", "+5.43%"), ("58.13%", "+12.93%"), ("20.96%", "-1.00%")),
    _t1("TSVLC-T1d", "(d)", "CC3M", "CLIP [57]", False, "ViT-B/16", "tsvlc_vit_scratch_clip", "64.01%", "54.27%", "41.57%",
        "15.49%"),
    _t1("TSVLC-T1d", "(d)", "CC3M", "CLIP + Ours RB+LLM Negs", False, "ViT-B/16", "tsvlc_vit_scratch_rbllm", ("73.11%", "+9.1%"),
        ("65.32%", "+11.05"), ("71.93%", "+30.36"), ("20.78%", "+5.29%")),
    _t1("TSVLC-T1d", "(d)", "CC3M", "CLIP + Ours Combined", False, "ViT-B/16", "tsvlc_vit_scratch_combined", ("72.99%", "+8.98%"),
        ("63.01%", "+8.74%"), ("62.95%", "+21.38"), ("20.61%", "+5.12%")),
    _t1("TSVLC-T1e", "(e)", "CC3M", "CyCLIP [19]", True, "R50", "clip_cyclip", "73.49%", "59.33%", "53.83%", "26.00%"),
    _t1("TSVLC-T1e", "(e)", "CC3M", "CyCLIP + LoRA", True, "R50", "tsvlc_cyclip_lora", ("73.30%", "-0.19%"),
        ("58.89%", "-0.44%"), ("53.03%", "-0.80%"), ("26.30%", "+0.30%")),
    _t1("TSVLC-T1e", "(e)", "CC3M", "CyCLIP + Ours Combined", True, "R50", "tsvlc_cyclip_combined", ("74.20%", "+0.71%"),
        ("63.52%", "+4.20%"), ("59.47%", "+5.63%"), ("26.31%", "+0.31%")),
    _t1("TSVLC-T1f", "(f)", "CC3M", "CyCLIP", False, "R50", "tsvlc_cyclip_scratch", "69.41%", "57.59%", "53.70%", "21.02%"),
    _t1("TSVLC-T1f", "(f)", "CC3M", "CyCLIP + Ours Combined", False, "R50", "tsvlc_cyclip_scratch_combined", ("71.50%", "+2.09%"),
        ("65.69%", "+8.10%"), ("70.20%", "+16.50%"), ("20.44%", "-0.42%")),
    _t1("TSVLC-T1g", "(g)", "LAION", "CLIP [57]", True, "ViT-B/32", "clip", "81.58%", "67.6%", "63.05%",
        "56.37%"),
    _t1("TSVLC-T1g", "(g)", "LAION", "CLIP + LoRA", True, "ViT-B/32", "tsvlc_laion_lora", ("82.18%", "+0.60%"),
        ("68.48%", "+0.88%"), ("62.72%", "-0.33%"), ("57.15%", "+0.78%")),
    _t1("TSVLC-T1g", "(g)", "LAION", "CLIP + Ours Combined", True, "ViT-B/32", "tsvlc_laion_combined", ("82.54%", "+0.96%"),
        ("69.64%", "+2.04%"), ("66.05%", "+3.00%"), ("56.71%", "+0.34%")),
)

#: Table 2 (catalog §4.3): rows 2 and 4 repeat Table 1a.
TABLE2: tuple[Row, ...] = (
    _t1("TSVLC-T2", "", "CC3M", "CLIP [57]", True, "ViT-B/32", "clip", "81.58%", "67.60%", "63.05%",
        "56.37%"),
    _t1("TSVLC-T2", "", "CC3M", "CLIP +LoRA", True, "ViT-B/32", "tsvlc_lora", ("80.93%", "-0.66%"),
        ("66.28%", "-1.32%"), ("55.52%", "-7.53%"), ("56.41%", "+0.04%")),
    _t1("TSVLC-T2", "", "CC3M", "w/o Neg Loss", True, "ViT-B/32", "tsvlc_noneg", ("82.27%", "+0.69%"),
        ("67.58%", "-0.02%"), ("55.17%", "-7.88%"), ("55.37%", "-1.00%")),
    _t1("TSVLC-T2", "", "CC3M", "Ours RB+LLM Negs", True, "ViT-B/32", "tsvlc_rbllm", ("85.09%", "+3.50%"),
        ("73.90%", "+6.30%"), ("78.72%", "+15.67%"), ("54.66%", "-1.71%")),
)


def _t3(model: str, method: str, *texts: str) -> Row:
    return Row("TSVLC-T3", "", "CC3M", model, True, "ViT-B/32", method,
               dict(zip([cid for _, cid, _ in T3_COLUMNS], map(Cell, texts), strict=True)))


#: Table 3 (catalog §4.4): the 7 subtypes and zero-shot; no deltas printed.
TABLE3: tuple[Row, ...] = (
    _t3("Ours Pos", "tsvlc_pos", "72.35%", "69.25%", "69.80%", "59.35%", "66.08%", "70.97%", "39.20%",
        "55.37%"),
    _t3("Ours RB Neg", "tsvlc_rb", "78.45%", "83.20%", "69.50%", "65.95%", "69.66%", "75.97%", "74.70%",
        "54.66%"),
    _t3("Ours LLM Neg", "tsvlc_llm", "76.00%", "79.70%", "72.75%", "61.35%", "68.36%", "77.23%", "72.40%",
        "55.05%"),
    _t3("Ours RB+LLM Negs", "tsvlc_rbllm", "79.25%", "84.25%", "72.15%", "64.05%", "69.82%", "79.03%",
        "78.40%", "54.66%"),
    _t3("Ours Combined", "tsvlc_combined", "77.45%", "77.35%", "73.35%", "62.30%", "69.39%", "74.70%",
        "63.20%", "54.77%"),
)

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
