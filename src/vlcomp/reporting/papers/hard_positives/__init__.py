"""The Hard Positive Truth about Vision-Language Compositionality (Kamath et al., ECCV 2024; catalog
``hard_positives.md``): the registry entry and the report's logic.

The package registers the paper and holds everything ``notebooks/hard_positives.py`` calls:

- :mod:`.printed`: every printed number of Tables 1-10 and of Figures 1 and 3's score tables (exact text and toy-unit
  values), and the catalog's derived numbers HP-N1..N4 and the REPLACE pooling check;
- :mod:`.claims`: the claims ledger's C1-C8 (issue 28's (a)-(g) and the REPLACE headline) and their thresholds (the
  entry's ``claims``);
- :mod:`.tables`: the paper tables over the collected metrics (mean ± sd over whole chains, the model's own
  Aug - Orig, next to the printed cells; paper-only, chance, human, stand-in rows);
- :mod:`.scores`: what the REPLACE / SWAP item tables give (mean raw scores, ties, the per-item definitions of the
  ``hardpos/...`` keys for the ledger's bootstrap, the items of Figures 1 and 3);
- :mod:`.words`: Tables 4-6 (the toy's replacement map and its frequencies in the twin's files);
- :mod:`.derived`: HP-N1-N5 on the toy; :mod:`.data`: HP-D1-D4 and HP-M1-M6; :mod:`.figures`: the image cards;
- :mod:`.toy`: the toy-profile tables, figures and ledger; :mod:`.report`: the pages, declared for
  :mod:`vlcomp.reporting.scaffold`; :mod:`.real`: the real profile's sections;
- :mod:`.inconsistencies`: the paper's own inconsistencies, shown beside the tables they concern.
"""

from __future__ import annotations

from .. import PAPERS, Paper
from .claims import hardpos_claims

NAME = "hard_positives"

#: The catalog IDs the report renders (catalog §6, every ID), and the ledger's claims.
ARTIFACTS = (*(f"HP-D{i}" for i in range(1, 5)), *(f"HP-M{i}" for i in range(1, 7)),
             *(f"HP-T{i}" for i in range(1, 11)), *(f"HP-F{i}" for i in range(1, 5)),
             *(f"HP-N{i}" for i in range(1, 6)), *(f"HP-C{i}" for i in range(1, 9)))

PAPERS.add(NAME, Paper(
    name=NAME,
    title="The Hard Positive Truth about Vision-Language Compositionality (Hard Positives)",
    catalog="hard_positives.md",
    benchmarks=("replace", "swap", "zeroshot_aro", "zeroshot_elevater", "coco_retrieval", "flickr_retrieval"),
    artifacts=ARTIFACTS,
    claims=hardpos_claims,
    cross_papers=("aro",),  # CLIP-FT (CLIP-COCO) and NegCLIP
    cross_methods=("tsvlc_rbllm", "tsvlc_combined"),  # TSVLC's RB+LLM Negs (SVLC) and Combined (SVLC+Pos)
))
