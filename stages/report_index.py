"""Stage `report_index`: reports/index.html linking every paper's report with its claims-ledger verdicts, and the
cross-paper matrix (every evaluated model x the headline metric of every benchmark of `evaluate.benchmarks`, mean ±
spread over training seeds) as a table and a heatmap (reports/matrix/)."""

from __future__ import annotations

import html
import os
from pathlib import Path

from _common import parser, run
from vlcomp.io import atomic_path


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--reports", required=True, help="the folder of the papers' reports (reports/papers/<paper>/)")
    p.add_argument("--metrics", required=True, help="the evaluation outputs (metrics/<model>/metrics.json)")
    p.add_argument("--matrix", required=True, help="output folder of the matrix tables and heatmap")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    from vlcomp.config import load_params
    from vlcomp.eval.run import evaluation_benchmarks
    from vlcomp.reporting.collect import methods_of
    from vlcomp.reporting.matrix import not_expressible, not_expressible_html, write_matrix
    from vlcomp.reporting.papers import papers_of

    params = load_params(args.params)
    import pandas as pd

    items = []
    root = Path(args.reports)
    for paper in papers_of(params):  # every paper of params, in its order
        d = root / paper.name
        if not (d / "index.html").exists():
            raise FileNotFoundError(f"{d / 'index.html'}: report missing (run report@{paper.name})")
        verdicts = ""
        ledger = d / "tables" / "claims_ledger.csv"
        if ledger.exists():
            df = pd.read_csv(ledger)
            verdicts = ", ".join(f"({c}) {g['claim_held'].iloc[0]}" for c, g in df.groupby("claim"))
        link = Path(os.path.relpath(d, Path(args.out).parent)) / "index.html"
        items.append(f'<li><a href="{link.as_posix()}">{html.escape(paper.name)}</a> ({html.escape(paper.title)}): '
                     f'claims {html.escape(verdicts)}</li>')
    matrix = write_matrix(args.metrics, evaluation_benchmarks(params), args.matrix, methods_of(params))
    left_out = not_expressible()
    left_out.to_csv(Path(args.matrix) / "not_expressible.csv", index=False)
    if params["profile"] == "toy":
        matrix += not_expressible_html(left_out)
    body = ("<!doctype html><html><head><meta charset='utf-8'><title>vlcomp reports</title></head><body>"
            "<h1>vlcomp reports</h1><ul>" + "".join(items) + "</ul>" + matrix + "</body></html>\n")
    with atomic_path(args.out) as tmp:
        tmp.write_text(body)


if __name__ == "__main__":
    run(main)
