"""What the real profile's TSVLC page reads beyond the toy page's tables.

The real profile trains TSVLC's rows (``profiles/real.yaml``: every row of Tables 1-3, one run each) on the real
corpora. Its page (:data:`~.report.REAL_REPORT`) renders the reproduced tables with the toy page's table code
(:mod:`.toy`, over this profile's collected metrics: the measured cells are headed *reproduced* there), the
printed tables, and the released TSVLC checkpoint next to the printed numbers
(:func:`vlcomp.reporting.released_values.released_table`, the table the ARO page shows). :class:`RealContext`
holds both readings of the metrics: the collected table and the metrics tree (released checkpoints, provenance).
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
    """The real profile's page context: the collected metrics (:class:`.toy.ReportContext`, the tables) and the
    metrics tree (the released checkpoint and the provenance)."""

    toy: T.ReportContext
    tree: MetricsTree


def load_tree(metrics_dir: str | Path, params_path: str | Path, models_dir: str | Path = "models") -> MetricsTree:
    """The real profile's metrics tree. Its models are matched with no printed-values file (the TSVLC numbers
    are :mod:`.printed` and, for the released checkpoint, :mod:`vlcomp.reporting.released_values`, both views of
    ``vlcomp/data/printed/tsvlc.csv``)."""
    empty = pd.DataFrame(columns=list(PAPER_VALUE_COLUMNS))
    from .. import paper_scope

    models = paper_scope(read_params(params_path), NAME).models
    return read_tree(metrics_dir, params_path, models_dir, paper_values=empty, profile=REAL_PROFILE, models=models)


def load(metrics_dir: str, world_dir: str, models_dir: str, params_path: str, mined_root: str) -> RealContext:
    return RealContext(T.load(metrics_dir, world_dir, models_dir, params_path, mined_root),
                       load_tree(metrics_dir, params_path, models_dir))


def trains_tsvlc(params: dict) -> bool:
    """Whether params run any TSVLC method (a ``variants`` entry of one)."""
    methods = params.get("methods") or {}
    return any((methods.get((v or {}).get("method")) or {}).get("paper") == NAME
               for v in (params.get("variants") or {}).values())


def intro_markdown(ctx: RealContext) -> str:
    tree = ctx.tree
    if trains_tsvlc(tree.params or read_params(tree.params_path)):
        runs = ("TSVLC's rows are trained in this profile on the real corpora (CC3M, LAION) from the released "
                "base weights, one run per row as the paper's (no spread: every reproduced cell is n = 1); "
                "the runs table says which are evaluated, the reproduced tables put them next to the printed "
                "values. ")
    else:
        runs = ("No TSVLC method runs in these params: every method reads *not run* in the runs table, so the "
                "tables show the paper's printed values only. ")
    return (f"**Profile:** `{tree.profile}`: real weights and real data. {runs}The released TSVLC checkpoint "
            "(the RB+LLM Negs LoRA adapter) is evaluated as it is and compared with the printed numbers. "
            f"Metrics are read from `{tree.metrics_dir}`.")


def deviations_markdown(ctx: RealContext) -> str:
    """What this profile does differently from the paper, from params."""
    params = ctx.toy.params
    seeds = params.get("seeds") or {}
    ours = [m for m in ctx.toy.all_methods.order if m in (params.get("methods") or {})]
    several = [m for m in ours if len(seeds.get(m) or []) > 1]
    return "\n".join([
        "- **Runs.** One run per row, as the paper's" + (f" (except {', '.join(several)})" if several else "")
        + ": no spread, so this page compares each number with the printed one and judges no claim (the toy "
        "profile's ledger does, over 3 chains).",
        "- **Recipe.** `profiles/real.yaml` sets the paper's (catalog §3.7): LoRA rows 5 epochs at 5e-6, 512 pairs "
        "a step, 10,000 warm-up steps; the AMBIGUOUS points it resolves (the full fine-tune's rate, the LAION "
        "subset, the LAION positives' LM) are stated beside each setting there.",
        "- **Zero-shot.** The ELEVATER suite has no real inputs yet: the 21-task zero-shot column stays empty "
        "beside the printed value.",
    ])


def printed_tables() -> pd.DataFrame:
    """Tables 1 (all sections) and 2 as printed."""
    return P.printed_frame([*P.TABLE1, *P.TABLE2], P.T1_COLUMNS)


def printed_t3() -> pd.DataFrame:
    """Table 3 (the subtypes) as printed."""
    return P.printed_frame(list(P.TABLE3), P.T3_COLUMNS)
