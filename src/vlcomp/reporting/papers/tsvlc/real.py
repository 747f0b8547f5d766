"""The real-profile sections of ``notebooks/tsvlc.py`` that only that profile has.

The real profile trains TSVLC's rows (``profiles/real.yaml``: every row of Tables 1-3, one run each) on the real
corpora: the report lists per method how many of its models are evaluated (:func:`methods_status`), renders the
reproduced tables with the toy report's table code (:mod:`.toy`: the measured cells are headed *reproduced*
there), and puts the released TSVLC checkpoint next to the printed numbers
(:func:`vlcomp.reporting.released_values.released_section`, the same section the ARO report shows).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...paper_values import COLUMNS as PAPER_VALUE_COLUMNS
from ...tree import PIPELINE, REAL_PROFILE, MetricsTree, read_params, read_tree
from . import NAME
from . import printed as P

NOT_RUN = "not run in this profile (no variant of this method in params)"


def load(metrics_dir: str | Path, params_path: str | Path, models_dir: str | Path = "models") -> MetricsTree:
    """The real profile's metrics tree. Its models are matched with no printed-values file (the TSVLC numbers
    are :mod:`.printed` and, for the released checkpoint, :mod:`vlcomp.reporting.released_values`, both views of
    ``vlcomp/data/printed/tsvlc.csv``)."""
    empty = pd.DataFrame(columns=list(PAPER_VALUE_COLUMNS))
    from .. import paper_scope

    models = paper_scope(read_params(params_path), NAME).models
    return read_tree(metrics_dir, params_path, models_dir, paper_values=empty, profile=REAL_PROFILE, models=models)


def methods_status(tree: MetricsTree) -> pd.DataFrame:
    """Per TSVLC method of params: its label and how many of its models this profile has evaluated."""
    params = tree.params or read_params(tree.params_path)
    rows = []
    for m, spec in (params.get("methods") or {}).items():
        if (spec or {}).get("paper") != NAME:
            continue
        present = [x.name for x in tree.present(PIPELINE) if x.method == m]
        expected = [v for v, s in (params.get("variants") or {}).items() if (s or {}).get("method") == m]
        status = (f"{len(present)} of {len(expected)} models evaluated" if expected else NOT_RUN)
        rows.append({"method": m, "label": (spec or {}).get("label", m), "models": ", ".join(present),
                     "status": status})
    return pd.DataFrame(rows, columns=["method", "label", "models", "status"])


def trains_tsvlc(tree: MetricsTree) -> bool:
    """Whether params run any TSVLC method (a ``variants`` entry of one)."""
    params = tree.params or read_params(tree.params_path)
    methods = params.get("methods") or {}
    return any((methods.get((v or {}).get("method")) or {}).get("paper") == NAME
               for v in (params.get("variants") or {}).values())


def intro_markdown(tree: MetricsTree) -> str:
    if trains_tsvlc(tree):
        runs = ("TSVLC's rows are trained in this profile on the real corpora (CC3M, LAION) from the released "
                "base weights, one run per row as the paper's (no spread: every reproduced cell is n = 1); "
                "the status list says which are evaluated, the reproduced tables put them next to the printed "
                "values. ")
    else:
        runs = ("No TSVLC method runs in these params: the methods below are not run, so their tables show the "
                "paper's printed values only. ")
    return (f"**Profile:** `{tree.profile}`: real weights and real data. {runs}The released TSVLC checkpoint "
            "(the RB+LLM Negs LoRA adapter) is evaluated as it is and compared with the printed numbers. "
            f"Metrics are read from `{tree.metrics_dir}`.")


def printed_tables() -> pd.DataFrame:
    """Tables 1 (all sections) and 2 as printed, and Table 3 (the subtypes) as printed."""
    return P.printed_frame([*P.TABLE1, *P.TABLE2], P.T1_COLUMNS)


def printed_t3() -> pd.DataFrame:
    return P.printed_frame(list(P.TABLE3), P.T3_COLUMNS)
