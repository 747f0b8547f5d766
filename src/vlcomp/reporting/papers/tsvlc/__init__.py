"""TSVLC (Doveh et al., CVPR 2023, "Teaching Structured Vision & Language Concepts to Vision & Language
Models"): the registry entry and the report's logic.

The package registers the paper (catalog ``tsvlc.md``) and holds everything ``notebooks/tsvlc.py`` calls:

- :mod:`.printed`: the printed Tables 1a-1g, 2 and 3 (exact text and fractions) and the Table-3-vs-Table-1a
  check;
- :mod:`.claims`: the claims ledger's C1-C5 and their thresholds (the entry's ``claims``);
- :mod:`.tables`, :mod:`.figures`, :mod:`.examples`: the toy report's tables (mean ± sd over whole-chain runs,
  deltas against CLIP of the same chain, next to the printed value), the Fig. 3 and Fig. 4 radars, and the word lists,
  generated negatives / positives and qualitative VL-CheckList items;
- :mod:`.toy`: the toy-profile tables, figures and ledger; :mod:`.report`: the toy report page, declared for
  :mod:`vlcomp.reporting.scaffold`; :mod:`.paper`: the real profile's sections;
- :mod:`.inconsistencies`: the paper's own inconsistencies (catalog §5), shown beside the tables they concern.
"""

from __future__ import annotations

from .. import PAPERS, Paper
from .claims import tsvlc_claims

NAME = "tsvlc"

#: The catalog IDs the report renders.
ARTIFACTS = ("TSVLC-T1a", "TSVLC-T1b", "TSVLC-T1c", "TSVLC-T1d", "TSVLC-T1e", "TSVLC-T1f", "TSVLC-T1g",
             "TSVLC-T2", "TSVLC-T3", "TSVLC-F1", "TSVLC-F2", "TSVLC-F3", "TSVLC-F4", "TSVLC-S1", "TSVLC-S2",
             "TSVLC-S3", "TSVLC-S4", "TSVLC-D1", "TSVLC-D2", "TSVLC-D3", "TSVLC-D4", "TSVLC-M",
             *(f"TSVLC-C{i}" for i in range(1, 6)))  # catalog §6, every ID

PAPERS.add(NAME, Paper(
    name=NAME,
    title="Teaching Structured Vision & Language Concepts to Vision & Language Models (TSVLC)",
    catalog="tsvlc.md",
    benchmarks=("vlchecklist", "zeroshot_elevater"),
    artifacts=ARTIFACTS,
    claims=tsvlc_claims,
    calibration=("first_world/claims_tsvlc.csv", "first_world/params.yaml"),  # the "what changed" section
    cross_papers=("aro",),  # Table 1a's ARO rows (CLIP-FT, NegCLIP), cross-evaluated on TSVLC's benchmarks
))
