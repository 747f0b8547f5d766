"""ARO / NegCLIP (Yuksekgonul et al., ICLR 2023): the registry entry and the report's logic.

The package registers the paper (catalog ``aro_negclip.md``) and holds everything ``notebooks/aro.py`` calls for
this paper, for both profiles:

- :mod:`.claims`: the claims ledger's four claims and their thresholds (the entry's ``claims``);
- :mod:`.tables`, :mod:`.figures`, :mod:`.artifacts`, :mod:`.negatives`: the toy report's tables (mean ± std over
  whole-chain runs next to the printed value), Figures 1-3, the datasets and checkpoints the pipeline built, the
  kinds of the mined NegCLIP negatives;
- :mod:`.toy`: the toy-profile tables, figures and ledger, over the collected metrics and the toy world;
- :mod:`.report`: the toy report page, declared for :mod:`vlcomp.reporting.scaffold` (sections, parts, artifacts);
- :mod:`.comparison`: the real-profile sections' long comparison tables over the metrics tree;
- :mod:`.inconsistencies`: the paper's own inconsistencies (catalog §6), shown beside the tables they concern.
"""

from __future__ import annotations

from .. import PAPERS, Paper
from .claims import aro_claims

NAME = "aro"

PAPERS.add(NAME, Paper(
    name=NAME,
    title="When and why vision-language models behave like bags-of-words, and what to do about it? (ARO, NegCLIP)",
    catalog="aro_negclip.md",
    benchmarks=("vg_relation", "vg_attribution", "coco_order", "flickr_order", "coco_retrieval", "flickr_retrieval",
                "zeroshot_aro"),
    artifacts=("ARO-D1", "ARO-D2", "ARO-D3", "ARO-D4", "ARO-M1", "ARO-M2", "ARO-T1", "ARO-F1", "ARO-T2", "ARO-X1",
               "ARO-X2", "ARO-F2", "ARO-T3", "ARO-T4", "ARO-T5", "ARO-F3", "ARO-T6"),
    claims=aro_claims,
    calibration=("batchnorm_summary.csv", "coco_caption_stats.csv", "first_world/claims_aro.csv",
                 "first_world/params.yaml", "first_world/summary.csv", "plasticity.csv", "prior_uptake.csv",
                 "relation_probe.csv", "seed_design.csv", "world_base_gate.csv", "world_perception.csv",
                 "world_pretraining.csv"),
))
