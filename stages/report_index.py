"""Stage `report_index`: reports/index.html linking every paper's report with its claims-ledger verdicts."""

from __future__ import annotations

import html
from pathlib import Path

from _common import parser, run
from vlcomp.io import atomic_path


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--reports", nargs="+", required=True, help="report directories (reports/aro ...)")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    import pandas as pd

    items = []
    for d in map(Path, args.reports):
        if not (d / "index.html").exists():
            raise FileNotFoundError(f"{d / 'index.html'}: report missing (run report@{d.name})")
        verdicts = ""
        ledger = d / "tables" / "claims_ledger.csv"
        if ledger.exists():
            df = pd.read_csv(ledger)
            verdicts = ", ".join(f"({c}) {g['claim_held'].iloc[0]}" for c, g in df.groupby("claim"))
        items.append(f'<li><a href="{d.name}/index.html">{html.escape(d.name)}</a>: claims {html.escape(verdicts)}</li>')
    body = ("<!doctype html><html><head><meta charset='utf-8'><title>vlcomp reports</title></head><body>"
            "<h1>vlcomp reports</h1><ul>" + "".join(items) + "</ul></body></html>\n")
    with atomic_path(args.out) as tmp:
        tmp.write_text(body)


if __name__ == "__main__":
    run(main)
