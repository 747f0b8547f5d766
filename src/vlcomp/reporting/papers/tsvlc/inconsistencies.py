"""The TSVLC paper's own inconsistencies and ambiguities (catalog ``tsvlc.md`` §5 "Inconsistencies and errors
in the paper", with the §4.2-4.4 delta checks and AMBIGUOUS notes about the tables), transcribed once with the
report artifacts each one concerns, so that every table and figure shows the ones about it beside it.

The record type is ARO's (:class:`vlcomp.reporting.papers.aro.inconsistencies.Inconsistency`); ``number`` is
the position in this list (the catalog's §5 list is unnumbered), ``where`` the place in the paper.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..aro.inconsistencies import Inconsistency

CATALOG = "tsvlc.md §5"

INCONSISTENCIES: tuple[Inconsistency, ...] = (
    Inconsistency(1, "Sec. 4.2 says every CLIP experiment uses ViT-B/32, but Table 1b and 1d use ViT-B/16",
                     "Sec. 4.2, Table 1b/d", ("TSVLC-T1b", "TSVLC-T1d")),
    Inconsistency(2, "Sec. 4.3 says all methods share the architecture and the OpenAI initialisation, but "
                     "CyCLIP uses R50 with CyCLIP weights",
                     "Sec. 4.3, Table 1e/f", ("TSVLC-T1e", "TSVLC-T1f")),
    Inconsistency(3, "The contributions claim \"up to 13% from scratch, 15% fine-tuning\"; Table 1d shows "
                     "+30.36 (Relation, from scratch B/16) and 1f +16.50",
                     "Sec. 1", ("TSVLC-T1d", "TSVLC-T1f")),
    Inconsistency(4, "Table 1f: ZS delta printed -0.42 where 20.44 - 21.02 = -0.58 (the caption repeats "
                     "0.42%)", "Table 1f", ("TSVLC-T1f",)),
    Inconsistency(5, "ZS of RB Neg and LLM Neg: Table 1a says 54.32 / 55.60, Table 3 says 54.66 / 55.05 (the "
                     "SVLC columns agree)", "Tables 1a, 3", ("TSVLC-T1a", "TSVLC-T3")),
    Inconsistency(6, "Table 2 \"w/o Neg Loss\" ZS (55.37) equals Table 3 \"Ours Pos\" ZS (55.37); "
                     "possibly a copy error", "Tables 2, 3", ("TSVLC-T2", "TSVLC-T3")),
    Inconsistency(7, "Table 1's caption cites a 0.77% ZS drop for (a): that is the LLM Neg row; the best-SVLC"
                     " row (RB+LLM) drops 1.71", "Table 1 caption", ("TSVLC-T1a", "TSVLC-C4")),
    Inconsistency(8, "Table 1's caption says \"fine-tuned for 5 epochs as detailed in Sec. 3.3\", but the "
                     "epochs are given in Sec. 4.2", "Table 1 caption", ("TSVLC-T1a",)),
    Inconsistency(9, "\"7 types of SVLCs\" vs the 2 + 5 + 2 = 9 subtypes listed (the 7 are presumably the 5 "
                     "Attribute + 2 Relation subtypes of Table 3 and Figs. 3-4)",
                     "Sec. 4.1", ("TSVLC-T3", "TSVLC-F3", "TSVLC-F4")),
    Inconsistency(10, "VL-Checklist is cited twice, as [82] and [83]", "references", ("TSVLC-S1",)),
    Inconsistency(11, "\"ViT-32B\" / \"ViT/32-B\" in the Fig. 3-4 captions and Sec. 4.2 mean ViT-B/32",
                      "Figs. 3-4, Sec. 4.2", ("TSVLC-F3", "TSVLC-F4")),
    Inconsistency(12, "The claim that full fine-tuning without LoRA is much worse comes with no numbers",
                      "Table 1 caption", ("TSVLC-C5",)),
    Inconsistency(13, "The LAION subset size and schedule are not given; Sec. 4.5's \"LAION-9B\" is "
                      "presumably a typo", "Sec. 4.2, 4.5", ("TSVLC-T1g",)),
    Inconsistency(14, "Deltas off by 0.01 against the printed values (rounding of unrounded numbers): (a) "
                      "Object LoRA -0.65 recomputed vs -0.66 printed, RB +2.31 vs +2.30, LLM +2.86 vs +2.85, "
                      "RB+LLM +3.51 vs +3.50", "Table 1a, Table 2", ("TSVLC-T1a", "TSVLC-T2")),
    Inconsistency(15, "(e) Combined deltas off by 0.01: Attribute +4.19 recomputed vs +4.20, Relation +5.64 "
                      "vs +5.63; (e) deltas are against the un-fine-tuned CyCLIP, not CyCLIP+LoRA",
                      "Table 1e", ("TSVLC-T1e",)),
    Inconsistency(16, "(d) prints three deltas without a % sign (+11.05, +30.36, +21.38)",
                      "Table 1d", ("TSVLC-T1d",)),
    Inconsistency(17, "The text extraction lost the \"(g)\" label on the LAION rows; the caption defines it",
                      "Table 1g", ("TSVLC-T1g",)),
    Inconsistency(18, "AMBIGUOUS: which negatives \"w/o Neg Loss\" used is not said (most likely RB+LLM, as "
                      "here)", "Table 2", ("TSVLC-T2", "TSVLC-C2")),
    Inconsistency(19, "AMBIGUOUS: Object is presumably the unweighted mean of the 6 object subtypes; the "
                      "paper never prints them", "Sec. 4.1, Table 1", ("TSVLC-T1a", "TSVLC-S1")),
    Inconsistency(20, "The plot type of Figs. 3-4 is not stated; the reference repo's radar code (7 spokes, a"
                      " radial scale per spoke) makes a radar very likely",
                      "Figs. 3-4", ("TSVLC-F3", "TSVLC-F4")),
    Inconsistency(21, "\"Ours Pos\" R-Spatial is 39.20%, below the 50% chance level of a two-way choice",
                      "Table 3", ("TSVLC-T3",)),
)


def concerning(artifacts: Iterable[str]) -> list[Inconsistency]:
    """The inconsistencies about any of ``artifacts``, in list order."""
    wanted = set(artifacts)
    return [i for i in INCONSISTENCIES if wanted & set(i.artifacts)]


def notes(artifacts: Iterable[str]) -> list[str]:
    """One line per inconsistency about ``artifacts``, to show under their table or figure (none: empty)."""
    return [f"*Paper inconsistency ({CATALOG} #{i.number}, {i.where}):* {i.issue}."
            for i in concerning(artifacts)]
