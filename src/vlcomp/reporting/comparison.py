"""Reproduced values next to a paper's printed ones: long comparison tables over a metrics tree, and how they are
shown and written.

A comparison table is long: one row per (table row, model) with ``reproduced``, ``paper`` (the printed value),
``difference`` (reproduced - paper) and the provenance columns of :mod:`vlcomp.reporting.tree`; a pipeline method
(the base model included) with two or more whole-chain runs also gets a mean row (source :data:`CHAIN_MEAN`: mean
and sample std over its chains, :func:`chain_legend` says over which).
A missing model or metric leaves an empty cell and a ``note``; no number is ever filled in. Each paper's module
under :mod:`vlcomp.reporting.papers` says which rows its tables have and which printed number each row is compared
with; :func:`table` makes a long table the report :class:`~vlcomp.reporting.render.Table` a page shows (its
:func:`wide_view`, the long form in the CSV).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .collect import SPREAD, runs_phrase
from .paper_values import lookup
from .render import Table, number
from .tree import NOTE_METRIC_MISSING, NOTE_MODEL_MISSING, PIPELINE, PROVENANCE_COLUMNS, RELEASED, ModelResult

CHAIN_MEAN = "pipeline mean"  # the source of a method's mean row over its whole-chain runs
NOTE_NOT_EVALUATED = "no benchmark of this workspace scores it"
NOTE_NO_PAPER = "the paper prints no value for this model"


@dataclass(frozen=True)
class PaperCell:
    value: float
    std: float  # NaN when the paper prints none
    ref: str  # "ARO-T5 (Table 5)"


def paper_cell(paper_values: pd.DataFrame, artifact: str, dataset: str, model: str, metric: str,
               group: str = "") -> PaperCell | None:
    """One printed number of :mod:`vlcomp.reporting.paper_values`, or None."""
    v = lookup(paper_values, artifact, dataset, model, metric, group)
    if v is None:
        return None
    s = lookup(paper_values, artifact, dataset, model, metric, group, column="std")
    p = paper_values
    row = p[(p["artifact"] == artifact) & (p["dataset"] == dataset) & (p["model"] == model)
            & (p["metric"] == metric) & (p["group"] == group)].iloc[0]
    return PaperCell(v, math.nan if s is None else s, f"{artifact} ({row['source']})")


def first_paper_cell(paper_values: pd.DataFrame, artifacts: Iterable[str], dataset: str, model: str, metric: str,
                     group: str = "") -> PaperCell | None:
    """The first artifact in ``artifacts`` that prints this cell (e.g. Table 5 with its std before Table 6)."""
    for artifact in artifacts:
        cell = paper_cell(paper_values, artifact, dataset, model, metric, group)
        if cell is not None:
            return cell
    return None


# --------------------------------------------------------------------------- comparison rows

PaperFn = Callable[[str], PaperCell | None]


def _row(m: ModelResult, fields: Mapping[str, Any], key: str | None, cell: PaperCell | None,
         extra: Mapping[str, Any]) -> dict[str, Any]:
    reproduced = m.value(key)
    notes = []
    if key is None:
        notes.append(NOTE_NOT_EVALUATED)
    elif not m.present:
        notes.append(NOTE_MODEL_MISSING)
    elif math.isnan(reproduced):
        notes.append(NOTE_METRIC_MISSING)
    if cell is None:
        notes.append(NOTE_NO_PAPER)
    paper = cell.value if cell else math.nan
    return {**fields, "model": m.name, "source": m.source, "method": m.method, "base": m.base, "seed": m.seed,
            "paper_model": m.paper_model, "metric_key": key or "", "reproduced": reproduced, **extra,
            "std_over_chains": math.nan, "n_chains": 1 if m.source == PIPELINE else math.nan,
            "paper": paper, "paper_std": cell.std if cell else math.nan, "paper_ref": cell.ref if cell else "",
            "difference": reproduced - paper, "note": "; ".join(notes), **m.provenance_fields()}


def _joined(values: Iterable[str]) -> str:
    return ", ".join(dict.fromkeys(v for v in values if v))


#: Columns every comparison row has (the rest are table fields or per-table extras).
_BASE_KEYS = frozenset({"model", "source", "method", "base", "seed", "paper_model", "metric_key", "reproduced",
                        "std_over_chains", "n_chains", "paper", "paper_std", "paper_ref", "difference", "note",
                        *PROVENANCE_COLUMNS})


def _chain_means(models: list[ModelResult], rows: list[dict[str, Any]], fields: Mapping[str, Any],
                 paper_fn: PaperFn) -> list[dict[str, Any]]:
    """One mean row per pipeline method with a value on two or more whole-chain runs (its models)."""
    chain_of = {m.name: m.chain for m in models}
    by_method: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r["source"] == PIPELINE and not math.isnan(r["reproduced"]):
            by_method.setdefault(r["method"], []).append(r)
    out = []
    for method, members in by_method.items():
        if len(members) < 2:
            continue
        vals = np.array([r["reproduced"] for r in members])
        mean = float(vals.mean())
        pm = members[0]["paper_model"]
        cell = paper_fn(pm) if pm else None
        paper = cell.value if cell else math.nan
        runs = [chain_of[r["model"]] for r in members]
        out.append({**fields, "model": f"{method} (mean over {len(vals)} chains)", "source": CHAIN_MEAN,
                    "method": method, "base": ",".join(dict.fromkeys(c.base for c in runs)),
                    "seed": ",".join(c.label for c in runs), "paper_model": pm, "metric_key": members[0]["metric_key"],
                    "reproduced": mean, **{k: math.nan for k in members[0] if k not in _BASE_KEYS and k not in fields},
                    "std_over_chains": float(vals.std(ddof=1)), "n_chains": len(vals),
                    "paper": paper, "paper_std": cell.std if cell else math.nan, "paper_ref": cell.ref if cell else "",
                    "difference": mean - paper,
                    "note": f"mean over {runs_phrase(runs)}" + ("" if cell else f"; {NOTE_NO_PAPER}"),
                    **{c: _joined(r[c] for r in members) for c in PROVENANCE_COLUMNS}})
    return out


def comparison_rows(models: Iterable[ModelResult], fields: Mapping[str, Any], key: str | None, paper_fn: PaperFn,
                    extra: Callable[[ModelResult], Mapping[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Rows of one table row (``fields``) for every model: pipeline models, their seed means, released ones.
    ``paper_fn`` maps a model's ``paper_model`` to its printed cell; ``extra`` adds per-model columns."""
    models = list(models)

    def rows_of(source: str) -> list[dict[str, Any]]:
        return [_row(m, fields, key, paper_fn(m.paper_model) if m.paper_model else None,
                     extra(m) if extra else {}) for m in models if m.source == source]

    pipe = rows_of(PIPELINE)
    return pipe + _chain_means(models, pipe, fields, paper_fn) + rows_of(RELEASED)


def comparison_frame(rows: list[dict[str, Any]], fields: Iterable[str], extra: Iterable[str] = ()) -> pd.DataFrame:
    """The rows of :func:`comparison_rows` as a table: ``fields``, the model columns, ``extra``, the comparison
    and provenance columns."""
    cols = [*fields, "model", "source", "method", "base", "seed", "paper_model", "metric_key", "reproduced", *extra,
            "std_over_chains", "n_chains", "paper", "paper_std", "paper_ref", "difference", "note",
            *PROVENANCE_COLUMNS]
    return pd.DataFrame(rows, columns=cols)


def wide_view(long: pd.DataFrame, index: Iterable[str]) -> pd.DataFrame:
    """A readable pivot of a long comparison table: one row per ``index`` value, one reproduced column per
    model (``<model> (<source>)``) and one ``paper: <model>`` column per paper model."""
    index = list(index)
    rows: dict[tuple, dict[str, Any]] = {}
    for r in long.to_dict("records"):
        row = rows.setdefault(tuple(str(r[c]) for c in index), {c: r[c] for c in index})  # NaN keys: one row
        row[f"{r['model']} ({r['source']})"] = r["reproduced"]
        if r["source"] == CHAIN_MEAN:
            row[f"{r['model']} (std over chains)"] = r["std_over_chains"]
        pcol = f"paper: {r['paper_model']}"
        if r["paper_model"] and (pcol not in row or pd.isna(row[pcol])):
            row[pcol] = r["paper"]
    models = list(dict.fromkeys(col for m, s in zip(long["model"], long["source"], strict=True)
                                for col in (f"{m} ({s})", *([f"{m} (std over chains)"] * (s == CHAIN_MEAN)))))
    papers = list(dict.fromkeys(f"paper: {m}" for m in long["paper_model"] if m))
    return pd.DataFrame(list(rows.values()), columns=[*index, *models, *papers])


# --------------------------------------------------------------------------- as a report table


def note_lines(df: pd.DataFrame) -> list[str]:
    """One line per distinct note of a long table, naming the models (and row counts) it applies to."""
    if df.empty or "note" not in df:
        return []
    by_note: dict[str, dict[str, int]] = {}
    for model, note in zip(df["model"], df["note"], strict=True):
        for n in filter(None, str(note).split("; ")):
            if n.startswith("mean over"):
                continue
            by_note.setdefault(n, {})
            by_note[n][model] = by_note[n].get(model, 0) + 1
    return [f"*Note — {n}*: " + ", ".join(f"`{m}` ({c} row{'s' * (c > 1)})" for m, c in counts.items())
            for n, counts in by_note.items()]


def is_count_column(column: str) -> bool:
    """Counts are named ``n_<what>`` or ``<prefix>_n_<what>`` (``n_chains``, ``paper_n_samples``)."""
    return column.startswith("n_") or "_n_" in column


def _fmt(column: str, v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, int | float | np.number) and not isinstance(v, bool):
        return str(int(v)) if is_count_column(column) else number(float(v), signed=column == "difference")
    return str(v)


def formatted(df: pd.DataFrame) -> pd.DataFrame:
    """Every cell as text: 3 decimals (signed for ``difference``), counts as ints, an empty cell for NaN."""
    return pd.DataFrame({c: [_fmt(c, v) for v in df[c]] for c in df.columns}, columns=df.columns)


def text_table(df: pd.DataFrame, legend: str, notes: Iterable[str] = ()) -> Table:
    """A table that is no comparison (an inventory, printed values): its numbers in the CSV, :func:`formatted`
    for reading, the legend and notes under it."""
    return Table(df, formatted(df), legend=legend, notes=tuple(notes))


def chain_legend(df: pd.DataFrame) -> str:
    """The line under a comparison table: what its mean rows' spread is over and n, per method, from the rows."""
    if df.empty or "source" not in df or not (df["source"] == PIPELINE).any():
        return "Released checkpoints: one model each, no spread." if len(df) else ""
    means = df[df["source"] == CHAIN_MEAN]
    if means.empty:
        return "Every pipeline row is a single whole-chain run (one model): no mean row, no spread."
    per = {m: " or ".join(dict.fromkeys(n.split("; ")[0].removeprefix("mean over ") for n in g["note"]))
           for m, g in means.groupby("method", sort=False)}
    return (f"*{CHAIN_MEAN}* rows: mean and {SPREAD} (`std_over_chains`, n = `n_chains`) over whole-chain runs "
            "(pretrain -> mining -> LR selection -> fine-tune), one model per run: "
            + "; ".join(f"{m}: {what}" for m, what in per.items()) + ". Other pipeline rows are single runs.")


LONG_FORM = ("The CSV holds the long form: one row per (table row, model) with `reproduced`, `std_over_chains`, "
             "`n_chains`, `paper`, `difference` (reproduced - paper), `note` and the provenance columns.")


def table(long: pd.DataFrame, index: Iterable[str] | None = None, legend: str | None = None,
          notes: Iterable[str] = ()) -> Table:
    """A long comparison table as a report :class:`~vlcomp.reporting.render.Table`: the CSV keeps ``long`` (every
    number with its provenance); the page, Markdown and LaTeX show its :func:`wide_view` over ``index`` (or
    ``long`` itself), :func:`formatted`; under it the legend (``legend``, else :func:`chain_legend`), ``notes``
    (e.g. the paper's own inconsistencies about it) and one line per row note (:func:`note_lines`)."""
    wide = index is not None and not long.empty
    shown = formatted(wide_view(long, index) if wide else long)
    below = [*([LONG_FORM] if wide else []), *notes, *note_lines(long)]
    return Table(long, shown, legend=chain_legend(long) if legend is None else legend, notes=tuple(below))
