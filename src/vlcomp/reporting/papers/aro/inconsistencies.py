"""The ARO paper's own inconsistencies and ambiguities (catalog ``aro_negclip.md`` §6), transcribed once with the
report artifacts each one concerns, so that every table and figure shows the ones about it beside it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

CATALOG = "aro_negclip.md §6"


@dataclass(frozen=True)
class Inconsistency:
    number: int  # the catalog's row number
    issue: str
    where: str  # where in the paper (the catalog's column)
    artifacts: tuple[str, ...]  # report artifacts it concerns (catalog §7 IDs)


INCONSISTENCIES: tuple[Inconsistency, ...] = (
    Inconsistency(1, '"48 relations" / 23,937 cases vs 45 relations / 21,917 listed samples in Table 2',
                  "§2.1, Table 2", ("ARO-T2", "ARO-D1")),
    Inconsistency(2, "Order task seeds: 5 (main text) vs 3 (Table 5 caption, reproducibility statement)", "§2.3",
                  ("ARO-T5", "ARO-F1", "ARO-D3")),
    Inconsistency(3, 'Error bars: "standard error" (main text §3.1) vs "standard deviations" (Table 3/4/5 captions)',
                  "§2.4", ("ARO-T3", "ARO-T4", "ARO-T5", "ARO-F1", "ARO-F2")),
    Inconsistency(4, 'NegCLIP VG-R baseline: text says "from 63%"; Table 6 CLIP = 0.59 (0.63 is CLIP-FT)',
                  "§4 text, Table 6", ("ARO-T6",)),
    Inconsistency(5, "NegCLIP VG-R 0.8 (Table 2) vs 0.81 (Table 6); CLIP-FT 0.64 vs 0.63", "Tables 2, 6",
                  ("ARO-T2", "ARO-T6", "ARO-X2")),
    Inconsistency(6, "Flava VG-R 25% (text) vs 0.24 (Table 2)", "§2.3 text", ("ARO-T2", "ARO-F1")),
    Inconsistency(7, "Figure 1: caption says 81% for horse/grass; extraction shows 78% next to horse/grass and 81% "
                     "next to road/house", "Fig. 1", ("ARO-F1",)),
    Inconsistency(8, 'Order test-case count: "6,000" (Fig. 1) vs one case per caption in code (~30k)', "Fig. 1",
                  ("ARO-F1", "ARO-T5", "ARO-D3")),
    Inconsistency(9, 'Table 1 "shuffle trigrams" example not reproducible with left-aligned trigram chunking',
                  "Table 1", ("ARO-T1",)),
    Inconsistency(10, 'Batch size "N = 1024" vs README batch 256 (512×1024 matrix)', "C.3", ("ARO-M1", "ARO-M2")),
    Inconsistency(11, 'Radford et al. batch size written as "32,000" (CLIP actually used 32,768)', "C.3",
                  ("ARO-M1", "ARO-M2")),
    Inconsistency(12, "Downstream classification protocol (zero-shot vs linear probe) unstated; CLIP values match "
                      "linear probe", "Table 6", ("ARO-T6", "ARO-F3")),
    Inconsistency(13, "X-VLM checkpoint for VG tasks unstated (BLIP's is: COCO-finetuned)", "App. B",
                  ("ARO-T2", "ARO-X1", "ARO-F1")),
    Inconsistency(14, 'Main text cites tables as "Appendix 3,4" and "Appendix 5" (meaning Tables 3, 4, 5) and '
                      '"Appendix Table 2"', "§2.3, §3.1", ("ARO-T2", "ARO-T3", "ARO-T4", "ARO-T5")),
)


def concerning(artifacts: Iterable[str]) -> list[Inconsistency]:
    """The inconsistencies about any of ``artifacts``, in catalog order."""
    wanted = set(artifacts)
    return [i for i in INCONSISTENCIES if wanted & set(i.artifacts)]


def notes(artifacts: Iterable[str]) -> list[str]:
    """One line per inconsistency about ``artifacts``, to show under their table or figure (none: empty)."""
    return [f"*Paper inconsistency ({CATALOG} #{i.number}, {i.where}):* {i.issue}." for i in concerning(artifacts)]
