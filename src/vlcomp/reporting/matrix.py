"""The cross-paper matrix: every evaluated model x the headline metric of every benchmark it was scored on.

Rows are methods (CLIP, CLIP-FT, NegCLIP, ...; released checkpoints too when present), columns the headline keys
each benchmark record declares (:attr:`vlcomp.benchmarks.Benchmark.headline`), cells the mean over the method's
training seeds with the sample std over those seeds and their number. It is read from the ``metrics.json`` files
(the DVC outputs), never from MLflow; the MLflow experiment ``evaluate`` holds the same keys per model, so its
compare view shows the same matrix per run.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .collect import Methods
from .tree import BASE_METHOD

NO_METHODS = Methods((BASE_METHOD,))


def headline_columns(benchmarks: Sequence[str]) -> list[tuple[str, str]]:
    """``(benchmark, metric key)`` of every headline metric of ``benchmarks`` (registry order kept)."""
    from ..benchmarks import BENCHMARKS

    return [(b, k) for b in benchmarks for k in BENCHMARKS.get(b).headline]


def _method_order(present: Sequence[str], methods: Methods) -> list[str]:
    """The report's method order (params), then any other method present, by name."""
    known = [m for m in methods.order if m in present]
    return known + sorted(m for m in set(present) if m not in known)


def model_matrix(long: pd.DataFrame, columns: Sequence[tuple[str, str]], methods: Methods = NO_METHODS) -> pd.DataFrame:
    """Long table (``collect``) -> one row per (method, metric): mean, std (ddof=1 over training seeds; 0 for one
    model), n (models / seeds), min, max; only the ``columns`` keys, in their order."""
    keys = [k for _, k in columns]
    bench_of = {k: b for b, k in columns}
    sub = long[long["key"].isin(keys)]
    g = sub.groupby(["method", "key"])["value"]
    out = g.agg(["mean", "min", "max", "count"]).rename(columns={"count": "n"}).reset_index()
    out["std"] = g.std(ddof=1).fillna(0.0).to_numpy()
    out["benchmark"] = out["key"].map(bench_of)
    order = {k: i for i, k in enumerate(keys)}
    rank = {m: i for i, m in enumerate(_method_order(out["method"].unique().tolist(), methods))}
    out = out.sort_values(by=["method", "key"], key=lambda s: s.map(rank if s.name == "method" else order))
    return out[["method", "benchmark", "key", "mean", "std", "n", "min", "max"]].reset_index(drop=True)


def wide(matrix: pd.DataFrame, columns: Sequence[tuple[str, str]], methods: Methods = NO_METHODS) -> pd.DataFrame:
    """Methods x metrics, cells ``mean ± std (n)``; a metric a method lacks shows ``--``."""
    rows = []
    for m in _method_order(matrix["method"].unique().tolist(), methods):
        row = {"model": methods.label(m)}
        for _, k in columns:
            hit = matrix[(matrix["method"] == m) & (matrix["key"] == k)]
            if hit.empty:
                row[k] = "--"
            else:
                r = hit.iloc[0]
                row[k] = f"{r['mean']:.3f} ± {r['std']:.3f} (n={int(r['n'])})" if r["n"] > 1 else f"{r['mean']:.3f}"
        rows.append(row)
    return pd.DataFrame(rows)


def heatmap_png(matrix: pd.DataFrame, columns: Sequence[tuple[str, str]], methods: Methods = NO_METHODS) -> bytes:
    """PNG bytes of the mean values (methods x metrics), annotated; byte-stable (no software/date metadata)."""
    import matplotlib

    matrix_methods = _method_order(matrix["method"].unique().tolist(), methods)
    keys = [k for _, k in columns]
    grid = np.full((len(matrix_methods), len(keys)), np.nan)
    for i, m in enumerate(matrix_methods):
        for j, k in enumerate(keys):
            hit = matrix[(matrix["method"] == m) & (matrix["key"] == k)]
            if len(hit):
                grid[i, j] = hit["mean"].iloc[0]
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
    ax.set_title("every model x every benchmark (headline metrics; mean over training seeds)")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def matrix_html(matrix: pd.DataFrame, columns: Sequence[tuple[str, str]], png: bytes,
                methods: Methods = NO_METHODS) -> str:
    """The index page's section: the heatmap (embedded, offline) and the table."""
    table = wide(matrix, columns, methods)
    head = "".join(f"<th title='{html.escape(b)}'>{html.escape(k)}</th>" for b, k in columns)
    body = "".join("<tr><th>" + html.escape(r["model"]) + "</th>"
                   + "".join(f"<td>{html.escape(str(r[k]))}</td>" for _, k in columns) + "</tr>"
                   for _, r in table.iterrows())
    img = base64.b64encode(png).decode()
    return ("<h2>Every model on every benchmark</h2>"
            "<p>Headline metric of each benchmark (the keys of <code>metrics/&lt;model&gt;/metrics.json</code> and of "
            "the MLflow experiment <code>evaluate</code>): mean ± sample std over training seeds (n = seeds; a "
            "single model shows its value). Toy-profile numbers: see each paper's report for what they stand for.</p>"
            f"<img alt='model x benchmark heatmap' src='data:image/png;base64,{img}'/>"
            f"<div style='overflow-x:auto'><table border='1' cellspacing='0' cellpadding='3' style='font-size:11px'>"
            f"<tr><th>model</th>{head}</tr>{body}</table></div>")


def write_matrix(metrics_dir: str | Path, benchmarks: Sequence[str], out_dir: str | Path,
                 methods: Methods = NO_METHODS) -> str:
    """``out_dir/matrix.csv`` (long), ``matrix_wide.csv``, ``matrix.png``; returns the HTML section. Methods in
    ``methods``' order and with its labels (the stage passes ``methods_of(params)``)."""
    from .collect import collect

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    columns = headline_columns(benchmarks)
    long = collect(metrics_dir)
    matrix = model_matrix(long, columns, methods)
    matrix.to_csv(out / "matrix.csv", index=False, float_format="%.6f")
    wide(matrix, columns, methods).to_csv(out / "matrix_wide.csv", index=False)
    png = heatmap_png(matrix, columns, methods)
    (out / "matrix.png").write_bytes(png)
    return matrix_html(matrix, columns, png, methods)


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
            "words or scenes for; they are left out of the twins (toy profile only; the paper profile reads the "
            "released files whole).</p><table border='1' cellspacing='0' cellpadding='3' style='font-size:11px'>"
            f"<tr><th>twin</th><th>left out</th><th>why</th></tr>{body}</table>")
