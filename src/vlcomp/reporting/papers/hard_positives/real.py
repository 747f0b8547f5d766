"""What the real profile's Hard Positives page reads beyond the toy page's tables.

The real profile scores the released checkpoints (``released_models``: CLIP ViT-B/32, NegCLIP, TSVLC's RB+LLM Negs
adapter standing for SVLC) on the released REPLACE / SWAP files. Its page (:data:`~.report.REAL_REPORT`) renders
the reproduced tables with the toy page's table code (:mod:`.toy`, over this profile's collected metrics: the
measured cells are headed *reproduced* there), the printed tables, and the released checkpoints next to the printed
numbers (:func:`vlcomp.reporting.released_values.released_table`). :class:`RealContext` holds both readings of the
metrics: the collected table and the metrics tree.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ...paper_values import COLUMNS as PAPER_VALUE_COLUMNS
from ...tree import REAL_PROFILE, MetricsTree, read_params, read_tree
from . import NAME
from . import printed as P
from . import toy as T


@dataclass(frozen=True)
class RealContext:
    toy: T.ReportContext
    tree: MetricsTree


def load_tree(metrics_dir: str | Path, params_path: str | Path, models_dir: str | Path = "models") -> MetricsTree:
    """The real profile's metrics tree (no printed-values file: the numbers are :mod:`.printed` and, for the
    released checkpoints, :mod:`vlcomp.reporting.released_values`, both views of ``hardpos.csv``)."""
    from .. import paper_scope

    empty = pd.DataFrame(columns=list(PAPER_VALUE_COLUMNS))
    models = paper_scope(read_params(params_path), NAME).models
    return read_tree(metrics_dir, params_path, models_dir, paper_values=empty, profile=REAL_PROFILE, models=models)


def load(metrics_dir: str, world_dir: str, benchmarks_dir: str, models_dir: str, params_path: str,
         mined_root: str) -> RealContext:
    return RealContext(T.load(metrics_dir, world_dir, benchmarks_dir, models_dir, params_path, mined_root),
                       load_tree(metrics_dir, params_path, models_dir))


def trains_hardpos(params: dict) -> bool:
    methods = params.get("methods") or {}
    return any((methods.get((v or {}).get("method")) or {}).get("paper") == NAME
               for v in (params.get("variants") or {}).values())


def intro_markdown(ctx: RealContext) -> str:
    tree = ctx.tree
    if trains_hardpos(tree.params or read_params(tree.params_path)):
        runs = ("The paper's rows are trained in this profile from the released base weights, one run per row as "
                "the paper's (no spread); the reproduced tables put them next to the printed values. ")
    else:
        runs = ("No Hard Positives method runs in these params: its rows read *not run*, so the tables show the "
                "paper's printed values and the released checkpoints' reproduced ones. ")
    return (f"**Profile:** `{tree.profile}`: real weights and real data. {runs}Metrics are read from "
            f"`{tree.metrics_dir}`.")


def deviations_markdown(ctx: RealContext) -> str:
    return "\n".join([
        "- **Runs.** One run per row, as the paper's: no spread, so this page compares each number with the printed "
        "one and judges no claim (the toy profile's ledger does, over its chains).",
        "- **Benchmarks.** The released REPLACE / SWAP pair files, scored with raw cosines and strict inequalities "
        "as `run_eval.py` (ties fail); REPLACE pooled over its two files.",
        "- **Zero-shot.** The real profile evaluates no zero-shot classification: Table 10's ImageNet and VTAB "
        "columns stay empty beside the printed values.",
    ])


def printed_tables() -> pd.DataFrame:
    """Tables 1, 3, 7, 8, 2, 9 and 10 as printed, one frame (the columns of each table side by side)."""
    frames = [P.printed_frame(rows) for rows in (P.TABLE1, P.TABLE3, P.TABLE7, P.TABLE8, P.TABLE2, P.TABLE9,
                                                 P.TABLE10)]
    return pd.concat(frames, ignore_index=True).fillna("")
