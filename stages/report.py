"""Stage `report@<paper>`: execute notebooks/<paper>.py with papermill for params' profile (one template per paper,
its cells tagged by profile) and render HTML with nbconvert; copy its claims ledger to ``--claims`` (tracked by git,
``cache: false``: the committed record of the verdicts that docs/results.md is generated from; a page without a
ledger, as the real profile's, writes the header only)."""

from __future__ import annotations

import argparse
from pathlib import Path

from _common import parser, run
from vlcomp.config import load_params
from vlcomp.io import atomic_dir
from vlcomp.reporting.notebook import render_report, report_template
from vlcomp.tracking import stage_run


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--paper", required=True)
    p.add_argument("--metrics", required=True)
    p.add_argument("--world", required=True)
    p.add_argument("--benchmarks", required=True)
    p.add_argument("--models", required=True)
    p.add_argument("--calibration", default="calibration", help="the calibration folder (calibration/<paper>_world.csv ...)")
    p.add_argument("--mined", default="data/mined", help="the generators' outputs (data/mined/<generator>/)")
    p.add_argument("--out", required=True)
    p.add_argument("--claims", required=True, help="where the claims ledger CSV is copied (claims/<paper>.csv)")
    args = p.parse_args()
    params = load_params(args.params)
    from vlcomp.reporting.papers import papers_of

    papers_of(params, only=args.paper)  # a paper params list, its methods defined (only this paper's module loaded)
    notebook = report_template(args.paper)
    parameters = notebook_parameters(args, params["profile"])
    with stage_run(f"report@{args.paper}", experiment=args.paper, profile=params["profile"], paper=args.paper) as tr:
        with atomic_dir(args.out) as tmp:
            render_report(notebook, tmp, {**parameters, "out_dir": str(tmp)}, final_dir=args.out)
            ledger = tmp / "tables" / "claims_ledger.csv"
            if ledger.exists():
                tr.log_metrics(ledger_metrics(ledger))
            write_claims(ledger, Path(args.claims))
        tr.log_artifact(Path(args.out) / "index.html")


def notebook_parameters(args: argparse.Namespace, profile: str) -> dict[str, str]:
    """The template's parameters (all but ``out_dir``), the same set for both profiles: each profile's sections
    read the inputs they need and ignore the rest (the real profile reads no world, benchmarks, calibration or
    mined data)."""
    return {"profile": profile, "metrics_dir": args.metrics, "world_dir": args.world,
            "benchmarks_dir": args.benchmarks, "models_dir": args.models, "params_path": args.params,
            "calibration_csv": str(Path(args.calibration) / f"{args.paper}_world.csv"), "mined_root": args.mined}


def ledger_metrics(path: Path) -> dict[str, float]:
    """``ledger/<claim>/held`` and ``ledger/<claim>/underpowered`` = 1.0 or 0.0 for each claim of the ledger
    table (a claim neither held nor underpowered is not held)."""
    import pandas as pd

    from vlcomp.reporting.ledger import HELD, UNDERPOWERED

    df = pd.read_csv(path)
    out = {}
    for c, g in df.groupby("claim"):
        out[f"ledger/{c}/held"] = float((g["claim_held"] == HELD).all())
        out[f"ledger/{c}/underpowered"] = float((g["claim_held"] == UNDERPOWERED).all())
    return out


def write_claims(ledger: Path, target: Path) -> None:
    """Copy the report's claims ledger to ``target`` atomically; without one, a file with the ledger's header."""
    from vlcomp.io import atomic_path
    from vlcomp.reporting.ledger import LEDGER_COLUMNS

    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target) as tmp:
        if ledger.exists():
            tmp.write_bytes(ledger.read_bytes())
        else:
            tmp.write_text(",".join(LEDGER_COLUMNS) + "\n")


if __name__ == "__main__":
    run(main)
