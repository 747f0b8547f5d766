"""ARO / NegCLIP (Yuksekgonul et al., ICLR 2023): catalog ``aro_negclip.md``."""

from __future__ import annotations

from ..ledger import aro_claims
from . import PAPERS, Paper

PAPERS.add("aro", Paper(
    name="aro",
    title="When and why vision-language models behave like bags-of-words, and what to do about it? (ARO, NegCLIP)",
    catalog="aro_negclip.md",
    methods=("clip_ft", "negclip"),
    benchmarks=("vg_relation", "vg_attribution", "coco_order", "flickr_order", "coco_retrieval", "flickr_retrieval",
                "zeroshot_aro"),
    artifacts=("ARO-D1", "ARO-D2", "ARO-D3", "ARO-D4", "ARO-M1", "ARO-M2", "ARO-T1", "ARO-F1", "ARO-T2", "ARO-X1",
               "ARO-X2", "ARO-F2", "ARO-T3", "ARO-T4", "ARO-T5", "ARO-F3", "ARO-T6"),
    claims=aro_claims,
))
