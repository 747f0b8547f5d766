"""The Hard Positives paper's own inconsistencies and ambiguities (the catalog's AMBIGUOUS notes and arithmetic
checks, ``hard_positives.md`` §2-§5), transcribed once with the report artifacts each concerns, so that every table
and figure shows the ones about it beside it. The record type is ARO's; ``number`` is the position in this list."""

from __future__ import annotations

from collections.abc import Iterable

from ..aro.inconsistencies import Inconsistency

CATALOG = "hard_positives.md"

INCONSISTENCIES: tuple[Inconsistency, ...] = (
    Inconsistency(1, "REPLACE pools Relations and Attributes instance-weighted (16,868 + 10,575), but two Table 1 "
                     "cells are Table 7's Attributes-only values: DAC-SAM's row (pooled 88.3 / 58.2 / 31.7 vs "
                     "printed 86.9 / 55.9 / 32.5) and Our HN's REPLACE brittleness (pooled 22.5, printed 21.0); a "
                     "pooled DAC-SAM Aug of 58.2 would tie or beat Our HP+HN's 58.0",
                  "Tables 1, 7 (§2.4)", ("HP-T1", "HP-T7", "HP-C8")),
    Inconsistency(2, "A few Δ values are off by 0.1 against the rounded Orig / Aug (computed before rounding): CLIP "
                     "REPLACE (14.8 recomputed, -14.9 printed), NegCLIP REPLACE, SVLC SWAP, Swap-only SWAP",
                  "Table 1", ("HP-T1", "HP-T3", "HP-N1")),
    Inconsistency(3, "Table 2 prints DAC-LLM's and Ours' mean s(c) on REPLACE as 0.160 / 0.232, Table 9 as 0.157 / "
                     "0.231 (the text rounds it '0.23 to 0.16')", "Tables 2, 9", ("HP-T2", "HP-T9")),
    Inconsistency(4, "The text states 24 REPLACE attributes and 10,575 instances, Tables 5-6 list 23 summing to "
                     "10,572 (the catalog: 3 substring artefacts, 'covered' and 'wetsuit', explain the gap)",
                  "§2.2, Tables 5-6", ("HP-T5", "HP-T6", "HP-D1")),
    Inconsistency(5, "The released REPLACE positives were made by plain substring replacement: 'whiteboard' -> "
                     "'ivoryboard', 'covered' -> 'covecrimson', doubled relation replacements ('window within "
                     "building within scene'); the toy replaces whole words of a closed vocabulary",
                  "released data (§2.2)", ("HP-T4", "HP-T5", "HP-T6", "HP-D1")),
    Inconsistency(6, "Table 7's human row (97 Relations, 100 Attributes) looks copied from Table 1's REPLACE / SWAP "
                     "columns; no Relations / Attributes split of the human study is described", "Table 7",
                  ("HP-T7",)),
    Inconsistency(7, "Table 7: SVLC's Attributes brittleness 37.3 is bold but not the group minimum; the caption "
                     "defines groups (a)-(c) while the extraction labels a (d)", "Table 7", ("HP-T7",)),
    Inconsistency(8, "'24.7' (the prior models' average Attributes drop against HP+HN's 6.7) does not reproduce: "
                     "the 7 prior models' mean is 25.1, with CLIP 24.4, the pooled REPLACE mean 24.4",
                  "§5.2 / Table 7", ("HP-N4", "HP-T7")),
    Inconsistency(9, "RoBERTa-CLIP: the released wrapper tokenises every caption with OpenAI's clip.tokenize, which "
                     "is wrong for a RoBERTa text encoder; Table 8(c) may reflect that", "Table 8", ("HP-T8",)),
    Inconsistency(10, "Figure 1's text extraction mixes the columns (the repository's teaser.jpg gives the full "
                      "table: CLIP / Hard-Negative Finetuned / Ours)", "Figure 1", ("HP-F1",)),
    Inconsistency(11, "'Fewer than 15 words' (§3.1) vs 'we filter out captions of greater than 15 words' (appendix): "
                      "a 15-word caption's status is open (the toy: strict, < 15)", "§3.1, App. C", ("HP-D3",)),
    Inconsistency(12, "How one hard positive is chosen when a caption has both a SWAP and a REPLACE one is not "
                      "described (App. D.1 is referred to but silent); which CREPE negative types are used, and how "
                      "Swap-only / Replace-only restrict them, is not stated", "§3.1-3.2",
                  ("HP-D3", "HP-D4", "HP-M3", "HP-M4")),
    Inconsistency(13, "The paper gives no loss formula; whether negatives stay in the contrastive loss at w_HN = 0 "
                      "and the hard-positive weight are not stated; TSVLC's code parses the negatives weight as an "
                      "int, so 0.25-0.75 came from a modified copy", "§3.4", ("HP-M2", "HP-M5")),
    Inconsistency(14, "VTAB is the mean over '20 tasks' with no task list; §5.2 also names CIFAR-10 / 100, which "
                      "Table 10 does not report; COCO 2017 train (the fine-tuning data) contains most of the Karpathy "
                      "5k test images COCO retrieval uses (a possible overlap)", "Table 10, §2.5, §5 item 10",
                  ("HP-T10", "HP-C7")),
    Inconsistency(15, "The human estimate ('about 99%') is the mean of 97 and 100 (98.5)", "abstract", ("HP-N1",)),
)


def concerning(artifacts: Iterable[str]) -> list[Inconsistency]:
    wanted = set(artifacts)
    return [i for i in INCONSISTENCIES if wanted & set(i.artifacts)]


def notes(artifacts: Iterable[str]) -> list[str]:
    """One line per inconsistency about ``artifacts``, to show under their table or figure."""
    return [f"*Paper inconsistency ({CATALOG} #{i.number}, {i.where}):* {i.issue}." for i in concerning(artifacts)]
