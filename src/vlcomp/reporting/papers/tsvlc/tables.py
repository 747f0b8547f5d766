"""TSVLC's tables in the toy report: each from the collected metrics, next to the paper's printed values.

A table is built long and numeric (:func:`paper_table`: one row per (table row, column) with ``mean``,
``spread`` and ``n`` over the row method's whole chains, the per-chain difference to CLIP of the same chain
(``delta_*``), the chains it aggregates, the printed value and delta as fractions and as printed text, and
``difference`` = toy - paper; the CSV), then pivoted for reading (:func:`shown_wide`: one row per table row, a
``runs`` column saying ``3 chains (b0, b1, b2)``, ``1 chain (b0)`` or ``not run``, and per column a toy cell
in percent ``84.2 ± 1.3 (Δ +2.1 ± 0.4)``, no spread for a single chain, next to the paper's cell as printed
``85.09% (+3.50%)``).

The toy values are fractions in [0, 1] like every metric of the workspace; the tables show them in percent (x
100, one decimal) beside the paper's percentages; the CSVs keep fractions.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...blind import BLIND_RUNS, BlindResult
from ...collect import NOT_RUN, Methods, chains, runs_label, value
from ...tree import BASE_METHOD
from . import printed as P

DELTA_PREFIX = "tsvlc/delta_vs_clip/"
NO_METHOD = "not run (no such method in params)"
NOT_MEASURED = "metric missing from the model's metrics.json"
CROSS = "cross-evaluation (an ARO method, fine-tuned on the COCO twin): not a row of the paper"
#: Columns of every long table after the table's own fields.
LONG_COLUMNS = ("row", "method", "paper_row", "column", "metric_key", "runs", "mean", "spread", "n",
                "delta_mean", "delta_spread", "paper", "paper_text", "paper_delta", "paper_delta_text",
                "difference", "note")
DIGITS = 1  # toy percentages: one decimal


def delta_key(key: str) -> str:
    """The per-model derived metric "model minus CLIP of its own chain" of ``key``."""
    return f"{DELTA_PREFIX}{key}"


def with_delta_vs_base(long: pd.DataFrame, keys: Iterable[str]) -> pd.DataFrame:
    """``long`` plus, for every fine-tuned model (a fine-tuning seed) and each of ``keys`` it has,
    :func:`delta_key` = its value minus that of its base's un-fine-tuned model (same ``base``: ``clip-b<k>``, or
    ``clip-vit-b0`` for a run on another base model), so a delta's spread over chains is computed like any other
    metric's. A model whose base model lacks the key gets none."""
    keys = list(keys)
    sub = long[long["key"].isin(keys)]
    is_base = (sub["seed"] == "") & (sub["base"] != "")
    base = {(b, k): v for b, k, v in zip(sub.loc[is_base, "base"], sub.loc[is_base, "key"], sub.loc[is_base, "value"],
                                         strict=True)}
    rows = []
    for r in sub[~is_base].to_dict("records"):
        ref = base.get((r["base"], r["key"]))
        if ref is not None and r["seed"] != "":
            rows.append({**r, "key": delta_key(r["key"]), "value": r["value"] - ref})
    return pd.concat([long, pd.DataFrame(rows, columns=long.columns)], ignore_index=True) if rows else long


def pct(mean: float, spread: float = math.nan, n: float = math.nan, signed: bool = False) -> str:
    """A toy cell in percent: ``84.2 ± 1.3`` over n >= 2 chains, ``84.2`` for one chain (its row says so);
    empty for NaN."""
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return ""
    sign = "+" if signed else ""
    text = f"{100 * mean:{sign}.{DIGITS}f}"
    if n == n and n is not None and n >= 2 and spread == spread:
        text += f" ± {100 * spread:.{DIGITS}f}"
    return text


def paper_table(long: pd.DataFrame, summ: pd.DataFrame, methods: Methods,
                rows: Sequence[tuple[str, P.Row | None, str]], columns: Sequence[tuple[str, str, str]],
                fields: dict[str, Any] | None = None, deltas: bool = True) -> pd.DataFrame:
    """The long table of a paper table: ``rows`` are (method, its printed row or None, note), ``columns``
    (label, printed column id, toy key). ``deltas``: also the per-chain difference to CLIP of the same chain
    (:func:`with_delta_vs_base` must have added it to ``long`` / ``summ``)."""
    out = []
    for method, prow, note in rows:
        known = method == BASE_METHOD or method in methods
        ran = chains(long, method, [key for _, _, key in columns]) if known else []
        for label, cid, key in columns:
            found = chains(long, method, [key]) if ran else []
            n = value(summ, method, key, "n") if found else 0
            mean = value(summ, method, key) if found else math.nan
            cell = prow.cells.get(cid) if prow is not None else None
            paper = cell.value if cell else math.nan
            dkey = delta_key(key) if deltas and method != BASE_METHOD and found else ""
            status = NOT_MEASURED if ran and not found else "" if found else (NOT_RUN if known else NO_METHOD)
            out.append({**(fields or {}), "row": methods.label(method), "method": method,
                        "paper_row": prow.model if prow else "", "column": label, "metric_key": key,
                        "runs": runs_label(ran) if known else NO_METHOD, "mean": mean,
                        "spread": value(summ, method, key, "std") if found else math.nan, "n": n,
                        "delta_mean": value(summ, method, dkey) if dkey else math.nan,
                        "delta_spread": value(summ, method, dkey, "std") if dkey else math.nan,
                        "paper": paper, "paper_text": cell.text if cell else "",
                        "paper_delta": cell.delta_value if cell else math.nan,
                        "paper_delta_text": cell.delta if cell else "",
                        "difference": mean - paper, "note": "; ".join(filter(None, [status, note]))})
    df = pd.DataFrame(out, columns=[*(fields or {}), *LONG_COLUMNS])
    return df.astype({"n": "Int64"})


def shown_wide(long: pd.DataFrame, deltas: bool = True, measured: str = "toy") -> pd.DataFrame:
    """For reading: one row per table row (``row``, the paper's row name, ``runs``), per column a measured cell
    (headed ``<column> (<measured>, %)``: ``toy``, or ``reproduced`` in the real profile) in percent (mean ± sd
    over chains and, with ``deltas``, ``(Δ mean ± sd)`` vs CLIP of the same chain; ``not run``) and the paper's
    cell as printed; a ``note`` column when any row has one."""
    out: dict[str, dict[str, Any]] = {}
    labels = list(dict.fromkeys(long["column"]))
    has_paper = {c: bool((long.loc[long["column"] == c, "paper_text"] != "").any()) for c in labels}
    for r in long.to_dict("records"):
        row = out.setdefault(r["method"], {"row": r["row"], "paper row": r["paper_row"], "runs": r["runs"]})
        n = r["n"] if r["n"] is not pd.NA else 0
        if r["runs"].startswith(NOT_RUN):
            toy = NOT_RUN
        else:
            toy = pct(r["mean"], r["spread"], n)
            if deltas and toy and not math.isnan(r["delta_mean"]):
                toy += f" (Δ {pct(r['delta_mean'], r['delta_spread'], n, signed=True)})"
        row[f"{r['column']} ({measured}, %)"] = toy
        if has_paper[r["column"]]:
            row[f"{r['column']} (paper)"] = (f"{r['paper_text']} ({r['paper_delta_text']})"
                                             if r["paper_delta_text"] else r["paper_text"])
        notes = [x for x in str(r["note"]).split("; ") if x and not x.startswith(NOT_RUN)]
        if notes:
            row["note"] = "; ".join(notes)
    df = pd.DataFrame(list(out.values())).fillna("")
    return df.drop(columns=["paper row"]) if "paper row" in df and (df["paper row"] == "").all() else df


# --------------------------------------------------------------------------- the paper's tables

#: T1a's rows: the printed rows with a toy method, in the paper's order
def t1a_rows(cross: Iterable[str] = ()) -> list[tuple[str, P.Row | None, str]]:
    rows = [(r.method, r, "") for r in P.rows_of(P.TABLE1, "TSVLC-T1a") if r.method]
    return rows + [(m, None, CROSS) for m in cross]


def t2_rows() -> list[tuple[str, P.Row | None, str]]:
    return [(r.method, r, "") for r in P.TABLE2 if r.method]


def with_blind(long: pd.DataFrame, blind: Sequence[BlindResult], columns: Sequence[tuple[str, str, str]],
               fields: dict[str, Any] | None = None) -> pd.DataFrame:
    """``long`` (a :func:`paper_table`) plus one row per blind-text reader (:mod:`vlcomp.reporting.blind`: the
    scene-graph counts of one split, no image, no training): its value of each column's key, no spread, no delta,
    no paper value. Unchanged without readers."""
    rows = [{**(fields or {}), "row": b.label, "method": b.name, "paper_row": "", "column": label, "metric_key": key,
             "runs": BLIND_RUNS, "mean": b.value(key), "spread": math.nan, "n": pd.NA, "delta_mean": math.nan,
             "delta_spread": math.nan, "paper": math.nan, "paper_text": "", "paper_delta": math.nan,
             "paper_delta_text": "", "difference": math.nan, "note": ""}
            for b in blind for label, _, key in columns]
    if not rows:
        return long
    return pd.concat([long, pd.DataFrame(rows, columns=long.columns)], ignore_index=True).astype({"n": "Int64"})


T3_REFERENCE = "toy reference row: the paper prints no per-subtype values for it (Fig. 3 only)"


def t3_rows() -> list[tuple[str, P.Row | None, str]]:
    """Table 3's rows, then CLIP and CLIP+LoRA as reference rows (the other two series of Fig. 3)."""
    return [(r.method, r, "") for r in P.TABLE3 if r.method] + [(BASE_METHOD, None, T3_REFERENCE),
                                                               (P.TABLE1[1].method, None, T3_REFERENCE)]


def table_t1a(long, summ, methods: Methods, cross: Iterable[str] = ()) -> pd.DataFrame:
    return paper_table(long, summ, methods, t1a_rows(cross), P.T1_COLUMNS, {"artifact": "TSVLC-T1a"})


def table_t2(long, summ, methods: Methods) -> pd.DataFrame:
    return paper_table(long, summ, methods, t2_rows(), P.T1_COLUMNS, {"artifact": "TSVLC-T2"})


def table_t3(long, summ, methods: Methods) -> pd.DataFrame:
    return paper_table(long, summ, methods, t3_rows(), P.T3_COLUMNS, {"artifact": "TSVLC-T3"}, deltas=False)


def section_deltas(long: pd.DataFrame, method: str, baseline: str, key: str) -> list[float]:
    """Per chain, ``method``'s ``key`` minus the section baseline's on the same chain (same base seed: a run on
    base ``vit-b0`` pairs with ``clip-vit-b0`` or a from-scratch baseline of chain b0), in base-seed order."""
    sub = long[long["key"] == key]
    ref = {}
    for bs, v in zip(sub.loc[sub["method"] == baseline, "base_seed"], sub.loc[sub["method"] == baseline, "value"],
                     strict=True):
        ref.setdefault(bs, float(v))
    rows = sub[sub["method"] == method]
    return [float(v) - ref[bs] for bs, v in sorted(zip(rows["base_seed"], rows["value"], strict=True),
                                                   key=lambda t: str(t[0])) if bs in ref]


def table_t1_section(long, summ, methods: Methods, artifact: str) -> pd.DataFrame:
    """TSVLC-T1b..T1g: one section of Table 1, its rows' toy values next to the printed ones; deltas against the
    section's first row (its baseline, as the paper's), paired per chain (:func:`section_deltas`)."""
    rows = [(r.method, r, "") for r in P.rows_of(P.TABLE1, artifact)]
    title, toy = P.SECTIONS[artifact]
    df = paper_table(long, summ, methods, rows, P.T1_COLUMNS, {"artifact": artifact}, deltas=False)
    baseline = rows[0][0]
    for i, r in df.iterrows():
        if r["method"] == baseline or math.isnan(r["mean"]):
            continue
        d = section_deltas(long, r["method"], baseline, r["metric_key"])
        if d:
            df.at[i, "delta_mean"] = float(np.mean(d))
            df.at[i, "delta_spread"] = float(np.std(d, ddof=1)) if len(d) > 1 else math.nan
    return df


def toy_aggregation_check(long: pd.DataFrame) -> pd.DataFrame:
    """The toy side of the Table-3-vs-Table-1a check: for each group, the largest |group avg - unweighted mean
    of its subtypes| over every evaluated model (0 up to float rounding: the benchmark aggregates as the
    catalog derives), and how many models have all the keys."""
    objects = ("large", "medium", "small", "center", "mid", "margin")
    groups = (("Attribute", P.T1_COLUMNS[1][2], [f"vlchecklist/{s}" for s in P.ATTRIBUTE_SUBTYPES]),
              ("Relation", P.T1_COLUMNS[2][2], [f"vlchecklist/{s}" for s in P.RELATION_SUBTYPES]),
              ("Object", P.T1_COLUMNS[0][2], [f"vlchecklist/object/{s}" for s in objects]))
    rows = []
    for name, avg, parts in groups:
        diffs = []
        for _, g in long[long["key"].isin([avg, *parts])].groupby("model", sort=True):
            vals = dict(zip(g["key"], g["value"], strict=True))
            if avg in vals and all(p in vals for p in parts):
                diffs.append(abs(vals[avg] - float(np.mean([vals[p] for p in parts]))))
        rows.append({"group": name, "subtypes": len(parts), "models checked": len(diffs),
                     "max |avg - mean of subtypes|": max(diffs) if diffs else math.nan})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- not paper tables


WRONG_IMAGE_COLUMNS = tuple(
    (f"{g} {what}", g.lower(), key) for g in ("Object", "Attribute", "Relation")
    for what, key in (("own image", f"vlchecklist/{g.lower()}/avg"),
                      ("wrong image", f"vlchecklist/wrong_image/{g.lower()}/avg")))


def table_wrong_image(long, summ, methods: Methods, shown: Sequence[str]) -> pd.DataFrame:
    """VL-CheckList with each item's own image and with another item's image (not a paper artifact): what
    survives the wrong image is a text prior over which caption is plausible."""
    rows = [(m, None, "") for m in shown]
    return paper_table(long, summ, methods, rows, WRONG_IMAGE_COLUMNS, {"artifact": "wrong-image control"},
                       deltas=False)


def table_zeroshot_tasks(long, summ, methods: Methods, shown: Sequence[str]) -> pd.DataFrame:
    """The ELEVATER twin per task (the paper prints only the 21-task mean): one row per task, one toy column
    per method (mean ± sd over chains, percent)."""
    from ....twins.zeroshot import SUITES

    rows = []
    for task, spec in SUITES["zeroshot_elevater"].items():
        key = f"zeroshot/elevater/{task}/acc"
        row: dict[str, Any] = {"task": task, "stands for": spec.stands_for}
        for m in shown:
            found = chains(long, m, [key])
            row[f"{methods.label(m)} (toy, %)"] = (pct(value(summ, m, key), value(summ, m, key, "std"),
                                                       value(summ, m, key, "n")) if found else NOT_RUN)
        rows.append(row)
    return pd.DataFrame(rows)


def file_keys(long: pd.DataFrame) -> list[str]:
    """Every per-file VL-CheckList result key (``vlchecklist/file/<file>/acc``) in the metrics, sorted."""
    return sorted({k for k in long["key"].unique()
                   if k.startswith("vlchecklist/file/") and k.endswith("/acc")})


SOURCES = ("vg", "swig", "vaw", "hake")


def file_source(file: str) -> str:
    """The VL-CheckList source dataset of a result file (``Attribute_color_vg`` -> ``vg``,
    ``Object_Size_large_vg_obj`` -> ``vg``); "" when none is named."""
    parts = file.split("_")
    return next((p for p in parts if p in SOURCES), "")


def table_s1(long, summ, methods: Methods, shown: Sequence[str]) -> pd.DataFrame:
    """TSVLC-S1, long: per result file, the accuracy of each shown method (mean, sd, n over chains)."""
    out = []
    for key in file_keys(long):
        file = key.removeprefix("vlchecklist/file/").removesuffix("/acc")
        group = file.split("_")[0]
        for m in shown:
            found = chains(long, m, [key])
            out.append({"artifact": "TSVLC-S1", "group": group, "file": file, "source": file_source(file),
                        "row": methods.label(m), "method": m, "metric_key": key, "runs": runs_label(found),
                        "mean": value(summ, m, key) if found else math.nan,
                        "spread": value(summ, m, key, "std") if found else math.nan,
                        "n": value(summ, m, key, "n") if found else 0})
    columns = ["artifact", "group", "file", "source", "row", "method", "metric_key", "runs", "mean", "spread",
               "n"]
    return pd.DataFrame(out, columns=columns).astype({"n": "Int64"})


def s1_shown(df: pd.DataFrame) -> pd.DataFrame:
    """One row per file, one toy column per method (percent; ``not run``)."""
    out: dict[str, dict[str, Any]] = {}
    for r in df.to_dict("records"):
        row = out.setdefault(r["file"], {"group": r["group"], "file": r["file"], "source": r["source"]})
        row[f"{r['row']} (toy, %)"] = NOT_RUN if r["runs"] == NOT_RUN else pct(r["mean"], r["spread"], r["n"])
    return pd.DataFrame(list(out.values()))
