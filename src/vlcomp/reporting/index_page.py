"""``reports/index.html``, the landing page: the papers and their reports with the claims-ledger verdicts, what the
pipeline ran (profile, chains, models), the model x metric matrix (:mod:`vlcomp.reporting.matrix`), and where the
run records and the MLflow UI are. Everything on it is read from the stage outputs and params (no timestamps, no
environment), so the same inputs give the same page.
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..tracking import DEFAULT_URI, EVALUATE_EXPERIMENT, RUNS_DIR, TRAINING_EXPERIMENT, ui_url
from .collect import Methods
from .tree import Chain, chain_of, expected_pipeline_models, run_record_fields

STYLE = ("body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1200px;padding:0 1em;color:#222}"
         "table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:3px 6px;text-align:left;font-size:12px}"
         "code{background:#f3f3f3;padding:0 3px}.held{color:#17692e;font-weight:600}"
         ".not{color:#a11;font-weight:600}h2{margin-top:1.6em}")


@dataclass(frozen=True)
class PaperReport:
    """One paper's entry: its registry name and title, the link to its report (relative to the page), and the
    claims ledger's verdicts (claim id -> ``held`` / ``not held``; empty: the report has no ledger)."""

    name: str
    title: str
    link: str
    verdicts: Mapping[str, str]


def paper_report(name: str, title: str, report_dir: str | Path, page: str | Path) -> PaperReport:
    """A paper's entry from its report folder (``index.html`` and ``tables/claims_ledger.csv``); raises
    FileNotFoundError naming the report when it is missing."""
    report_dir = Path(report_dir)
    if not (report_dir / "index.html").exists():
        raise FileNotFoundError(f"{report_dir / 'index.html'}: report missing (run report@{name})")
    verdicts: dict[str, str] = {}
    ledger = report_dir / "tables" / "claims_ledger.csv"
    if ledger.exists():
        df = pd.read_csv(ledger)
        verdicts = {str(c): str(g["claim_held"].iloc[0]) for c, g in df.groupby("claim", sort=True)}
    link = Path(os.path.relpath(report_dir, Path(page).parent)) / "index.html"
    return PaperReport(name, title, link.as_posix(), verdicts)


def _verdicts_html(verdicts: Mapping[str, str]) -> str:
    if not verdicts:
        return "no claims ledger"
    return ", ".join(f"({html.escape(c)}) <span class='{'held' if v == 'held' else 'not'}'>{html.escape(v)}</span>"
                     for c, v in verdicts.items())


def papers_html(papers: Sequence[PaperReport]) -> str:
    rows = "".join(f"<tr><td><a href='{html.escape(p.link)}'>{html.escape(p.name)}</a></td><td>{html.escape(p.title)}"
                   f"</td><td>{_verdicts_html(p.verdicts)}</td></tr>" for p in papers)
    return ("<h2 id='papers'>Papers</h2><p>Each report puts every table and figure of the paper next to the paper's printed "
            "numbers (self-contained HTML; tables also as CSV, Markdown and LaTeX under its <code>tables/</code>). "
            "A claim is <em>held</em> only if it holds on every whole-chain run (see each report's ledger).</p>"
            f"<table><tr><th>paper</th><th>title</th><th>claims ledger</th></tr>{rows}</table>")


def runs_table(params: Mapping[str, Any], long: pd.DataFrame) -> pd.DataFrame:
    """One row per pipeline model params expect (:func:`vlcomp.reporting.tree.expected_pipeline_models`) and per
    model evaluated: its chain, whether its metrics exist, its DVC stage and where its run record is."""
    present = long.drop_duplicates("model").set_index("model")
    rows = []
    for name in dict.fromkeys([*expected_pipeline_models(params), *present.index]):
        if name in present.index:
            r = present.loc[name]
            chain, stage = Chain(r["method"], r["base"], r["base_seed"], r["seed"]), str(r["dvc_stage"])
        else:
            chain, stage = chain_of(name, None, params), ""
        rows.append({"model": name, "method": chain.method, "base seed": chain.base_seed,
                     "fine-tune seed": chain.seed, "metrics": "present" if name in present.index else "missing",
                     "dvc stage": stage, **run_record_fields(stage)})
    return pd.DataFrame(rows)


def _table(df: pd.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape('' if pd.isna(v) else str(v))}</td>" for v in r) + "</tr>"
                   for r in df.itertuples(index=False))
    return f"<div style='overflow-x:auto'><table><tr>{head}</tr>{body}</table></div>"


def ran_html(params: Mapping[str, Any], long: pd.DataFrame, methods: Methods, benchmarks: Sequence[str],
             ignored: Sequence[str] = ()) -> str:
    """What the pipeline ran: profile, base seeds and benchmarks; the runs each method's rows aggregate over, as a
    table (:func:`vlcomp.reporting.scaffold.runs_table`); the models; and the metrics folders left out because
    params no longer define them (:func:`vlcomp.reporting.collect.ignored_models`)."""
    from .render import table_html
    from .scaffold import runs_table as method_runs

    bases = params.get("base_seeds")
    return ("<h2 id='ran'>What the pipeline ran</h2>"
            f"<p>Profile <code>{html.escape(str(params.get('profile')))}</code>; base seeds (params "
            f"<code>base_seeds</code>) <code>{html.escape(', '.join(map(str, bases)) if bases else 'none: one base')}"
            f"</code>; {len(benchmarks)} benchmarks (<code>evaluate.benchmarks</code>). A whole chain is pretrain (the "
            "base model <code>clip-b&lt;k&gt;</code>) -&gt; training data -&gt; LR selection -&gt; fine-tune "
            "(<code>&lt;method&gt;-b&lt;k&gt;s&lt;s&gt;</code>); the fine-tuning seeds and which chains each method "
            "runs on are params <code>seeds</code>. Every method row aggregates over its chains:</p>"
            + table_html(method_runs(long, methods)) + "<p>Every model params expect, and its run record:</p>"
            + _table(runs_table(params, long)) + _ignored_html(ignored))


def _ignored_html(ignored: Sequence[str]) -> str:
    if not ignored:
        return ""
    names = ", ".join(f"<code>metrics/{html.escape(n)}</code>" for n in ignored)
    return (f"<p>Left out of every table: {names}: no base or variant of params has that name (the output of a "
            "removed or renamed row, which DVC leaves in the workspace; delete it or restore the row).</p>")


def mlflow_html() -> str:
    """Where the run records live: MLflow (UI, store, experiments, filters) and ``runs/<stage>.json``."""
    url = ui_url()
    return ("<h2 id='records'>Run records and the MLflow UI</h2><ul>"
            f"<li><code>make ui</code>, then open <a href='{html.escape(url)}'>{html.escape(url)}</a> (the runs table "
            f"of each experiment). Store: <code>{DEFAULT_URI}</code> in the repository root unless "
            "<code>MLFLOW_TRACKING_URI</code> is set.</li>"
            f"<li>Experiment <code>{EVALUATE_EXPERIMENT}</code>: one run per evaluated model, the same metric keys as "
            "the matrix; filter one model's run with <code>tags.dvc_stage = 'evaluate@&lt;model&gt;'</code> (base "
            "models: <code>evaluate_base@b&lt;k&gt;</code>), select runs and press <em>Compare</em>.</li>"
            f"<li>Experiment <code>{TRAINING_EXPERIMENT}</code>: world, pretraining, mining, LR selection and "
            "fine-tuning runs, tagged <code>dvc_stage</code>, <code>paper</code>, <code>method</code>, "
            "<code>seed</code>.</li>"
            f"<li><code>{RUNS_DIR}/&lt;dvc_stage&gt;.json</code>: each stage run's git commit, MLflow run id, machine "
            "and wall time (no stage and no report reads it; <code>provenance.json</code> holds deterministic fields "
            "only).</li>"
            "<li>DVC's own views: <code>dvc metrics show</code>, <code>dvc plots show</code>.</li></ul>")


def landing_page(papers: Sequence[PaperReport], params: Mapping[str, Any], long: pd.DataFrame, methods: Methods,
                 benchmarks: Sequence[str], matrix_section: str, extra: str = "", ignored: Sequence[str] = ()) -> str:
    """The whole page (``matrix_section``: :func:`vlcomp.reporting.matrix.write_matrix`'s HTML; ``extra``: more
    sections, e.g. what the toy twins cannot express; ``ignored``: metrics folders params no longer define)."""
    return ("<!doctype html><html><head><meta charset='utf-8'><title>vlcomp reports</title>"
            f"<style>{STYLE}</style></head><body><h1>vlcomp: reproduction reports</h1>"
            "<p>Compositionality papers on CLIP-style models, reproduced by one DVC pipeline; every number here is "
            "read from its stage outputs (<code>metrics/&lt;model&gt;/metrics.json</code>).</p>"
            + papers_html(papers) + ran_html(params, long, methods, benchmarks, ignored) + matrix_section + mlflow_html()
            + extra + "</body></html>\n")
