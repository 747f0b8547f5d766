"""Hard Positives' tables in the toy report: each paper table row by row, the toy's cells (mean ± sample sd over the
row method's whole chains) next to the paper's printed cells (:mod:`.printed`).

A table is built long and numeric (:func:`paper_table`: one row per (table row, column) with ``mean``, ``spread``
and ``n`` over the row method's chains, the same for the per-model Aug - Orig (``delta_*``, the paper's red Δ,
from the model's own ``hardpos/<part>/delta``), the printed value and delta as numbers and as printed text, and
``difference`` = toy - paper; the CSV), then pivoted for reading (:func:`shown_wide`: one row per table row, its
kind, the runs it aggregates (``3 chains (b0, b1, b2)``, ``1 chain (b0)``), per column the toy cell
``46.8 ± 1.2 (Δ -14.9 ± 0.5)`` next to the printed ``46.8 (-14.9)``).

Row kinds (:data:`KINDS`): a toy method standing for the printed row (``toy``), a toy model chosen by a stated rule
to stand for a printed row the toy has no method for (``stand-in``: Table 2's DAC-LLM, Table 8's larger ResNet), a
row the paper prints and the toy has no counterpart for (``paper-only``: its printed cells, no toy cell), the
reference rows (``chance``: computed from the definitions, 50 / 33.3 / 33.3; ``human``: printed only, no human
study in the toy), a toy row the paper has no row for (``toy-only``), one not built yet (``not built``) and the
blind-text ceiling (``blind``: one deterministic value, :mod:`vlcomp.reporting.blind`). A cell without a toy value
says why (:func:`missing_reason`); nothing is ever filled in.

Units: Orig / Aug / Brittleness and zero-shot / retrieval are fractions in the metrics and percent on the page (x
100, one decimal), as printed; mean raw scores (Tables 2 and 9) are raw cosines (3 decimals); the CSVs keep the
metrics' units.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ...blind import BLIND_RUNS, BlindResult
from ...collect import NOT_RUN, Methods, chains, runs_label, value
from ...printed_values import PERCENT
from . import printed as P

TOY, STAND_IN, PAPER_ONLY, CHANCE, HUMAN = "toy", "stand-in", "paper-only", "chance", "human"
TOY_ONLY, NOT_BUILT, BLIND = "toy-only", "not built", "blind"
KINDS = (TOY, STAND_IN, PAPER_ONLY, CHANCE, HUMAN, TOY_ONLY, NOT_BUILT, BLIND)
#: Kinds whose toy cells are a method's runs.
RUN_KINDS = (TOY, STAND_IN, TOY_ONLY)
NO_METHOD = "not run (no such method in params)"
NOT_MEASURED = "not measured"
#: Why a cell of each kind without a run has no toy value (what the cell shows).
REASON = {PAPER_ONLY: "paper-only", HUMAN: "no toy human study", NOT_BUILT: "not built"}
DIGITS_PCT, DIGITS_SCORE = 1, 3

#: Random chance (catalog §2.4): the 3! = 6 orderings of (c, c_n, c_p) equally likely, ties impossible. Orig: c above
#: c_n in 3 of 6; Aug: c_n last in 2 of 6; Brittleness: c_n in the middle in 2 of 6.
CHANCE_VALUES: dict[str, float] = {"orig": 3 / 6, "aug": 2 / 6, "brittleness": 2 / 6, "delta": 2 / 6 - 3 / 6}
CHANCE_NOTE = ("computed: the 6 orderings of (c, c_n, c_p) equally likely (Orig 3/6, Aug 2/6, Brittleness 2/6)")
HUMAN_NOTE = ("no human study in the toy: its hard positives and negatives are exact on the scene graph (HP-N5), "
              "so an annotator who reads the scene graph scores 100 by construction")
PAPER_ONLY_NOTE = "paper-only: no toy counterpart (its printed cells only)"

LONG_COLUMNS = ("artifact", "row", "kind", "method", "paper_row", "group", "column", "metric_key", "unit", "runs",
                "mean", "spread", "n", "delta_mean", "delta_spread", "paper", "paper_text", "paper_delta",
                "paper_delta_text", "difference", "note")


@dataclass(frozen=True)
class RowSpec:
    """One row of a table: its label, kind, toy method ("" for none), printed row (None for none) and a note."""

    label: str
    kind: str
    method: str = ""
    printed: P.Row | None = None
    note: str = ""


def delta_key(key: str) -> str:
    """The per-model Aug - Orig key printed beside an Aug key (``hardpos/replace/aug`` -> ``.../delta``)."""
    return key.rsplit("/", 1)[0] + "/delta"


def chance_value(key: str) -> float:
    return CHANCE_VALUES.get(key.rsplit("/", 1)[-1], math.nan) if key.startswith("hardpos/") else math.nan


def printed_rows(rows: Sequence[P.Row], methods: Methods, stand_ins: Mapping[str, tuple[str, str, str]] | None = None
                 ) -> list[RowSpec]:
    """The printed rows as :class:`RowSpec`: a row naming a toy method is that method's (``toy``), ``chance`` /
    ``human`` the reference rows, a row without one ``paper-only`` unless ``stand_ins`` maps its printed name to
    (method, label, note) (``stand-in``; an empty method: ``not built``)."""
    out = []
    for r in rows:
        if r.method == "chance":
            out.append(RowSpec(r.name, CHANCE, "", r, CHANCE_NOTE))
        elif r.method == "human":
            out.append(RowSpec(r.name, HUMAN, "", r, HUMAN_NOTE))
        elif r.name in (stand_ins or {}):
            method, label, note = (stand_ins or {})[r.name]
            out.append(RowSpec(label, STAND_IN if method else NOT_BUILT, method, r, note))
        elif r.method:  # labelled by params; a method params lack by the printed name
            out.append(RowSpec(methods.label(r.method) if r.method in methods else r.name, TOY, r.method, r))
        else:
            out.append(RowSpec(r.name, PAPER_ONLY, "", r, PAPER_ONLY_NOTE))
    return out


def blind_rows(blind: Sequence[BlindResult]) -> list[RowSpec]:
    return [RowSpec(b.label, BLIND, b.name, None, BLIND_RUNS) for b in blind]


def missing_reason(kind: str, known: bool, ran: bool, found: bool) -> str:
    """What a toy cell without a value shows: the kind's reason, ``not run`` (the method has no run yet), ``not
    run (no such method in params)``, or ``not measured`` (its runs lack the metric)."""
    if kind in REASON:
        return REASON[kind]
    if not known:
        return NO_METHOD
    if not ran:
        return NOT_RUN
    return NOT_MEASURED if not found else ""


def paper_table(long: pd.DataFrame, summ: pd.DataFrame, methods: Methods, rows: Sequence[RowSpec],
                columns: P.Columns, artifact: str, blind: Sequence[BlindResult] = (),
                labels: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The long table (:data:`LONG_COLUMNS`) of ``rows`` x ``columns`` (:data:`.printed.Columns`: label, printed
    column id, toy key, delta key); ``labels`` renames columns (the VTAB stand-in)."""
    by_name = {b.name: b for b in blind}
    out = []
    for spec in rows:
        method = spec.method
        runs_kind = spec.kind in RUN_KINDS
        known = runs_kind and method in methods
        keys = [key for _, _, key, _ in columns]
        ran = chains(long, method, keys) if known else []
        other = chains(long, method) if known and not ran else []  # runs, but none with this table's metrics
        if spec.kind in RUN_KINDS:
            runs = runs_label(ran or other) if known else NO_METHOD
        elif spec.kind == CHANCE:
            runs = "computed"
        elif spec.kind == BLIND:
            runs = BLIND_RUNS
        else:
            runs = REASON[spec.kind]
        for label, cid, key, dkey in columns:
            cell = spec.printed.cells.get(cid) if spec.printed is not None else None
            paper = cell.value if cell else math.nan
            mean = spread = dmean = dspread = math.nan
            n: Any = pd.NA
            status = ""
            if runs_kind:
                found = chains(long, method, [key]) if ran else []
                if found:
                    mean, spread = value(summ, method, key), value(summ, method, key, "std")
                    n = int(value(summ, method, key, "n"))
                    if dkey and chains(long, method, [dkey]):
                        dmean, dspread = value(summ, method, dkey), value(summ, method, dkey, "std")
                status = missing_reason(spec.kind, known, bool(ran or other), bool(found))
            elif spec.kind == CHANCE:
                mean = chance_value(key)  # no delta: the paper prints none for chance
            elif spec.kind == BLIND:
                b = by_name[method]
                mean = b.value(key)
                dmean = b.value(dkey) if dkey else math.nan
                status = "" if not math.isnan(mean) else NOT_MEASURED
            else:
                status = REASON[spec.kind]
            out.append({"artifact": artifact, "row": spec.label, "kind": spec.kind, "method": method,
                        "paper_row": spec.printed.name if spec.printed is not None else "",
                        "group": spec.printed.section if spec.printed is not None else "",
                        "column": (labels or {}).get(label, label), "metric_key": key,
                        "unit": cell.unit if cell else P.unit_of(P.PAPER, key),
                        "runs": runs, "mean": mean, "spread": spread, "n": n, "delta_mean": dmean,
                        "delta_spread": dspread, "paper": paper, "paper_text": cell.text if cell else "",
                        "paper_delta": cell.delta_value if cell else math.nan,
                        "paper_delta_text": cell.delta if cell else "", "difference": mean - paper,
                        "note": "; ".join(filter(None, [status, spec.note]))})
    return pd.DataFrame(out, columns=list(LONG_COLUMNS)).astype({"n": "Int64"})


def number_text(mean: float, spread: float = math.nan, n: Any = pd.NA, unit: str = PERCENT,
                signed: bool = False) -> str:
    """A toy cell: percent with one decimal (``46.8``), or a raw score with three (``0.234``); ``± sd`` over n >= 2
    chains; empty for NaN."""
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return ""
    scale, digits = (100, DIGITS_PCT) if unit == PERCENT else (1, DIGITS_SCORE)
    sign = "+" if signed else ""
    text = f"{scale * mean:{sign}.{digits}f}"
    several = n is not pd.NA and n is not None and not (isinstance(n, float) and math.isnan(n)) and n >= 2
    if several and not (isinstance(spread, float) and math.isnan(spread)):
        text += f" ± {scale * spread:.{digits}f}"
    return text


def toy_cell(r: Mapping[str, Any]) -> str:
    """One long row's toy cell for reading (its value, with the Δ where the row has one; else why none)."""
    text = number_text(r["mean"], r["spread"], r["n"], r["unit"])
    if not text:
        return next((x for x in str(r["note"]).split("; ") if x), "missing")
    if not math.isnan(r["delta_mean"]):
        text += f" (Δ {number_text(r['delta_mean'], r['delta_spread'], r['n'], r['unit'], signed=True)})"
    return text


def paper_cell(r: Mapping[str, Any]) -> str:
    if not r["paper_text"]:
        return ""
    return f"{r['paper_text']} ({r['paper_delta_text']})" if r["paper_delta_text"] else r["paper_text"]


def shown_wide(long: pd.DataFrame, measured: str = "toy") -> pd.DataFrame:
    """For reading: one row per table row (group, row, kind, the paper's row name, runs), per column the toy cell
    (headed ``<column> (<measured>)``) next to the paper's as printed; a ``note`` column when a row has one."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for r in long.to_dict("records"):
        row = out.setdefault((r["row"], r["kind"]), {"group": r["group"], "row": r["row"], "kind": r["kind"],
                                                     "paper row": r["paper_row"], "runs": r["runs"]})
        unit = "%" if r["unit"] == PERCENT else "raw"
        row[f"{r['column']} ({measured}, {unit})"] = toy_cell(r)
        row[f"{r['column']} (paper)"] = paper_cell(r)
        notes = [x for x in str(r["note"]).split("; ") if x and x not in (NOT_RUN, NO_METHOD, *REASON.values())]
        if notes:
            row["note"] = "; ".join(dict.fromkeys(notes))
    df = pd.DataFrame(list(out.values())).fillna("")
    if "paper row" in df and (df["paper row"] == df["row"]).all():
        df = df.drop(columns=["paper row"])
    return df


# --------------------------------------------------------------------------- the paper's tables

#: Table 10's VTAB columns read the ELEVATER twin (its 21-task mean): labelled so.
T10_LABELS = {"VTAB Acc@1": "VTAB Acc@1 [toy: ELEVATER twin mean]",
              "VTAB Acc@5": "VTAB Acc@5 [toy: ELEVATER twin mean]",
              "IN-1k Acc@1": "IN-1k Acc@1 [toy: ImageNet twin]", "IN-1k Acc@5": "IN-1k Acc@5 [toy: ImageNet twin]"}


def main_table(long, summ, methods: Methods, artifact: str, blind: Sequence[BlindResult] = (),
               extra: Sequence[RowSpec] = (), stand_ins: Mapping[str, tuple[str, str, str]] | None = None
               ) -> pd.DataFrame:
    """One of the printed tables (HP-T1, T2, T3, T7, T8, T9, T10) over its printed rows (``stand_ins`` for the
    rows the toy has no method for), ``extra`` rows and the blind ceilings."""
    rows = printed_rows(P.rows_of(artifact), methods, stand_ins)
    reference = [r for r in rows if r.kind in (CHANCE, HUMAN)]
    body = [r for r in rows if r.kind not in (CHANCE, HUMAN)]
    rows = [*body, *extra, *reference, *(blind_rows(blind) if artifact in BLIND_TABLES else [])]
    return paper_table(long, summ, methods, rows, P.TABLE_COLUMNS[artifact], artifact,
                       blind if artifact in BLIND_TABLES else (), T10_LABELS if artifact == "HP-T10" else None)


#: The tables with Orig / Aug / Brittleness columns, where the blind-text reader has values.
BLIND_TABLES = ("HP-T1", "HP-T3", "HP-T7", "HP-T8")
