"""The cross-paper matrix: every evaluated model x the headline metric of every benchmark it was scored on.

Rows are methods (CLIP, CLIP-FT, NegCLIP, ...), columns the headline keys each benchmark record declares
(:attr:`vlcomp.benchmarks.Benchmark.headline`), cells the mean over the method's whole-chain runs with the sample
std over them and their number (:func:`vlcomp.reporting.collect.summary`, the one statistic over chains); a second
table lists every model (one row per chain). It is read from the ``metrics.json`` files (the DVC outputs), never
from MLflow; the MLflow experiment ``evaluate`` holds the same keys per model, so its compare view shows the same
matrix per run.

Each blind-text ceiling (:mod:`vlcomp.reporting.blind`: a text-only reader of the scene-graph counts, no image, no
training) is one more row, last, on the choice benchmarks it scores: one value per cell, no spread, no n; it is no
model, so the per-model table leaves it out.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .blind import BlindResult, matrix_rows
from .collect import Methods, chains, spread_legend, summary
from .render import cell
from .tree import BASE_METHOD

NO_METHODS = Methods((BASE_METHOD,))
TABLE_ATTRS = "border='1' cellspacing='0' cellpadding='3' style='font-size:11px;border-collapse:collapse'"


def headline_columns(benchmarks: Sequence[str]) -> list[tuple[str, str]]:
    """``(benchmark, metric key)`` of every headline metric of ``benchmarks`` (registry order kept)."""
    from ..benchmarks import BENCHMARKS

    return [(b, k) for b in benchmarks for k in BENCHMARKS.get(b).headline]


def _method_order(present: Sequence[str], methods: Methods, last: Sequence[str] = ()) -> list[str]:
    """The report's method order (params), then any other method present, by name, then ``last`` (the blind
    readers) present."""
    known = [m for m in methods.order if m in present]
    others = sorted(m for m in set(present) if m not in known and m not in last)
    return known + others + [m for m in last if m in present]


def _in_order(matrix: pd.DataFrame, methods: Methods) -> list[str]:
    """The methods of a :func:`model_matrix` in the report's order (:func:`_method_order`), its reference rows (the
    blind readers: no n, they are no runs) last."""
    present = matrix["method"].unique().tolist()
    reference = [m for m in present if matrix.loc[matrix["method"] == m, "n"].isna().all()]
    return _method_order(present, methods, reference)


def _with_blind_labels(methods: Methods, blind: Sequence[BlindResult]) -> Methods:
    return Methods(methods.order, {**methods.labels, **{b.name: b.label for b in blind}}) if blind else methods


def model_matrix(long: pd.DataFrame, columns: Sequence[tuple[str, str]], methods: Methods = NO_METHODS,
                 blind: Sequence[BlindResult] = ()) -> pd.DataFrame:
    """Long table (``collect``) -> one row per (method, metric) of :func:`vlcomp.reporting.collect.summary` (mean,
    std over whole chains: NaN for a single run, n chains, min, max); only the ``columns`` keys, in their order;
    then the ``blind`` readers' rows (their value, no std, no n: :func:`vlcomp.reporting.blind.matrix_rows`)."""
    keys = [k for _, k in columns]
    bench_of = {k: b for b, k in columns}
    out = summary(long[long["key"].isin(keys)])
    extra = matrix_rows(blind, keys)
    if len(extra):
        out = pd.concat([out, extra[out.columns]], ignore_index=True).astype({"n": "Int64"})
    out["benchmark"] = out["key"].map(bench_of)
    order = {k: i for i, k in enumerate(keys)}
    rank = {m: i for i, m in enumerate(_method_order(out["method"].unique().tolist(), methods,
                                                     [b.name for b in blind]))}
    out = out.sort_values(by=["method", "key"], key=lambda s: s.map(rank if s.name == "method" else order))
    return out[["method", "benchmark", "key", "mean", "std", "n", "min", "max"]].reset_index(drop=True)


def _lookup(matrix: pd.DataFrame, method: str, key: str) -> pd.Series | None:
    hit = matrix[(matrix["method"] == method) & (matrix["key"] == key)]
    return None if hit.empty else hit.iloc[0]


def wide(matrix: pd.DataFrame, columns: Sequence[tuple[str, str]], methods: Methods = NO_METHODS) -> pd.DataFrame:
    """Methods x metrics for reading: ``mean ± std`` (``(n=1)`` for a single run); a metric a method lacks is
    empty."""
    rows = []
    for m in _in_order(matrix, methods):
        row = {"model": methods.label(m)}
        for _, k in columns:
            r = _lookup(matrix, m, k)
            row[k] = "" if r is None else cell(r["mean"], r["std"], r["n"])
        rows.append(row)
    return pd.DataFrame(rows, columns=["model", *(k for _, k in columns)])


def wide_means(matrix: pd.DataFrame, columns: Sequence[tuple[str, str]], methods: Methods = NO_METHODS) -> pd.DataFrame:
    """Methods x metrics, numeric: the means (spreads and n are in the long matrix)."""
    rows = []
    for m in _in_order(matrix, methods):
        row = {"method": m}
        for _, k in columns:
            r = _lookup(matrix, m, k)
            row[k] = np.nan if r is None else r["mean"]
        rows.append(row)
    return pd.DataFrame(rows, columns=["method", *(k for _, k in columns)])


def per_model(long: pd.DataFrame, columns: Sequence[tuple[str, str]], methods: Methods = NO_METHODS) -> pd.DataFrame:
    """Every evaluated model (one row per chain) x the headline metrics, numeric; models by method order, then
    chain."""
    keys = [k for _, k in columns]
    sub = long[long["key"].isin(keys)]
    rows = []
    for m in _method_order(long["method"].unique().tolist(), methods):
        for c in chains(long, m):
            g = sub[(sub["method"] == m) & (sub["base"] == c.base) & (sub["seed"] == c.seed)]
            model = long[(long["method"] == m) & (long["base"] == c.base) & (long["seed"] == c.seed)]["model"].iloc[0]
            vals = dict(zip(g["key"], g["value"], strict=True))
            rows.append({"model": model, "method": m, "base_seed": c.base_seed, "seed": c.seed,
                         **{k: vals.get(k, np.nan) for k in keys}})
    return pd.DataFrame(rows, columns=["model", "method", "base_seed", "seed", *keys])


def heatmap_png(matrix: pd.DataFrame, columns: Sequence[tuple[str, str]], methods: Methods = NO_METHODS) -> bytes:
    """PNG bytes of the mean values (methods x metrics), annotated; byte-stable (no software/date metadata)."""
    import matplotlib

    matrix_methods = _in_order(matrix, methods)
    keys = [k for _, k in columns]
    grid = np.full((len(matrix_methods), len(keys)), np.nan)
    for i, m in enumerate(matrix_methods):
        for j, k in enumerate(keys):
            r = _lookup(matrix, m, k)
            if r is not None:
                grid[i, j] = r["mean"]
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(8, 0.55 * len(keys) + 2), 1.0 + 0.55 * len(matrix_methods)))
    im = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(keys)), keys, rotation=70, ha="right", fontsize=7)
    ax.set_yticks(range(len(matrix_methods)), [methods.label(m) for m in matrix_methods], fontsize=8)
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            if grid[i, j] == grid[i, j]:
                ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", fontsize=6,
                        color="white" if grid[i, j] < 0.6 else "black")
    fig.colorbar(im, ax=ax, fraction=0.02)
    ax.set_title("every model x every benchmark (headline metrics; mean over whole-chain runs)")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def _table_html(df: pd.DataFrame, header_titles: dict[str, str] | None = None) -> str:
    titles = header_titles or {}
    head = "".join(f"<th title='{html.escape(titles.get(c, ''))}'>{html.escape(str(c))}</th>" for c in df.columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape('' if pd.isna(v) else (f'{v:.3f}' if isinstance(v, float) else str(v)))}</td>"
                                    for v in r) + "</tr>" for r in df.itertuples(index=False))
    return f"<div style='overflow-x:auto'><table {TABLE_ATTRS}><tr>{head}</tr>{body}</table></div>"


def matrix_html(matrix: pd.DataFrame, columns: Sequence[tuple[str, str]], png: bytes, legend: str,
                models: pd.DataFrame | None = None, methods: Methods = NO_METHODS) -> str:
    """The index page's section: the heatmap (embedded, offline), the method table with its legend, and the
    per-model table (folded)."""
    titles = {k: b for b, k in columns}
    img = base64.b64encode(png).decode()
    out = ("<h2>Every model on every benchmark</h2>"
           "<p>Headline metric of each benchmark (the keys of <code>metrics/&lt;model&gt;/metrics.json</code> and of "
           "the MLflow experiment <code>evaluate</code>). CSVs (numbers only): <code>matrix/matrix.csv</code> (per "
           "method and metric: mean, std, n, min, max), <code>matrix/matrix_wide.csv</code> (the means), "
           "<code>matrix/models.csv</code> (every model).</p>"
           f"<img style='max-width:100%' alt='model x benchmark heatmap' src='data:image/png;base64,{img}'/>"
           + _table_html(wide(matrix, columns, methods), titles)
           + f"<p style='font-size:12px'>{html.escape(legend)}</p>")
    if models is not None and len(models):
        out += ("<details><summary>Every evaluated model (one row per whole-chain run)</summary>"
                + _table_html(models, titles) + "</details>")
    return out


def write_matrix(long: pd.DataFrame, benchmarks: Sequence[str], out_dir: str | Path,
                 methods: Methods = NO_METHODS, blind: Sequence[BlindResult] = ()) -> str:
    """``out_dir/matrix.csv`` (long, numeric), ``matrix_wide.csv`` (means), ``models.csv`` (every model),
    ``matrix.png``; returns the HTML section. Methods in ``methods``' order and with its labels (the stage passes
    ``methods_of(params)``), then one row per ``blind`` reader (:func:`vlcomp.reporting.blind.read_blind`)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    columns = headline_columns(benchmarks)
    methods = _with_blind_labels(methods, blind)
    matrix = model_matrix(long, columns, methods, blind)
    matrix.to_csv(out / "matrix.csv", index=False, float_format="%.6f")
    wide_means(matrix, columns, methods).to_csv(out / "matrix_wide.csv", index=False, float_format="%.6f")
    models = per_model(long, columns, methods)
    models.to_csv(out / "models.csv", index=False, float_format="%.6f")
    png = heatmap_png(matrix, columns, methods)
    (out / "matrix.png").write_bytes(png)
    legend = spread_legend(long[long["key"].isin([k for _, k in columns])], methods,
                           shown=[m for m in _in_order(matrix, methods) if m not in {b.name for b in blind}])
    if blind:
        legend += (f" {blind[0].label}: a text-only reader of the scene-graph counts of split `{blind[0].split}`, "
                   "no image, no training (metrics/blind/); one value per cell, no spread; empty on the benchmarks "
                   "that are no choice between captions (retrieval, zero-shot).")
    return matrix_html(matrix, columns, png, legend, models, methods)


def not_expressible() -> pd.DataFrame:
    """What each toy twin leaves out because the world cannot express it (the twin modules' ``NOT_EXPRESSIBLE``)."""
    import importlib
    import pkgutil

    from .. import twins

    rows = []
    for mod in pkgutil.iter_modules(twins.__path__):
        if mod.name.startswith("_"):
            continue
        m = importlib.import_module(f"{twins.__name__}.{mod.name}")
        rows += [{"twin": mod.name, "part": part, "why": why} for part, why in getattr(m, "NOT_EXPRESSIBLE", ())]
    return pd.DataFrame(rows, columns=["twin", "part", "why"])


def not_expressible_html(df: pd.DataFrame) -> str:
    body = "".join(f"<tr><td>{html.escape(r.twin)}</td><td>{html.escape(r.part)}</td><td>{html.escape(r.why)}</td></tr>"
                   for r in df.itertuples())
    return ("<h2>What the toy twins cannot express</h2><p>Parts of the papers' benchmarks that the toy world has no "
            "words or scenes for; they are left out of the twins (toy profile only; the real profile reads the "
            f"released files whole).</p><table {TABLE_ATTRS}>"
            f"<tr><th>twin</th><th>left out</th><th>why</th></tr>{body}</table>")
