"""The Hard Positives report pages, declared for :mod:`vlcomp.reporting.scaffold`: their sections in reading order,
the catalog artifacts each part renders, and the intro of each section. :data:`REPORT` is the toy profile's page
(tables, figures and ledger built by :mod:`.toy`); :data:`REAL_REPORT` the real profile's (the same tables over its
runs, the printed tables, the released checkpoints next to the printed numbers; :mod:`.real`).
``notebooks/hard_positives.py`` calls :func:`vlcomp.reporting.scaffold.display_page` with the one of its profile.
"""

from __future__ import annotations

from ... import comparison as C
from ... import released_values as RV
from ... import tree as TR
from ...render import Table
from ...scaffold import NO_VERDICTS_REAL, TOY_ONLY, Part, Report, Section, rendered_elsewhere
from . import NAME
from . import real as RP
from . import toy as T

SECTIONS = (
    Section("HP-T1 — Orig / Aug / Brittleness on REPLACE and SWAP (Table 1)", (Part("HP-T1", T.t1, ("HP-T1",)),),
            ("CLIP, the prior hard-negative models the toy has (NegCLIP, SVLC, SVLC+Pos), the paper's four models, "
             "random chance and the human estimate. Toy cells: mean ± spread over the row's chains with the model's "
             "own Aug - Orig; paper cells as printed. The CSV holds one numeric row per row and column.")),
    Section("HP-T7 — REPLACE split into Relations and Attributes (Table 7)", (Part("HP-T7", T.t7, ("HP-T7",)),)),
    Section("REPLACE pooling and the printed deltas (catalog §2.4, Table 1 notes)",
            (Part("HP-pooling", T.pooling_checks),),
            ("Table 1's REPLACE is Table 7's two parts pooled over instances, but for two cells; the printed deltas "
             "against the printed values; the same pooling on the toy's metrics."), level=3),
    Section("HP-T3 — the hard-negative loss weight (Table 3)", (Part("HP-T3", T.t3, ("HP-T3",)),)),
    Section("HP-T2 / HP-T9 — mean raw scores of the captions (Tables 2 and 9)",
            (Part("HP-T2", T.t2, ("HP-T2",), title="Table 2: mean s(c), s(c_n), s(c_p) on REPLACE"),
             Part("HP-T9", T.t9, ("HP-T9",), title="Table 9: mean s(c) on REPLACE and SWAP"),
             Part("HP-scores_ties", T.scores_and_ties, title="Every model: mean raw scores and ties (item tables)"),
             Part("HP-positive_gaps", T.positive_gaps,
                  title="Where the hard positive sits: the probe behind claim (b) (item tables)")),
            ("Raw cosine similarities without the logit scale, averaged over each model's items (its item table), "
             "then over chains.")),
    Section("HP-T8 — other base models (Table 8)", (Part("HP-T8", T.t8, ("HP-T8",)),)),
    Section("HP-T10 — standard zero-shot and retrieval (Table 10)", (Part("HP-T10", T.t10, ("HP-T10",)),)),
    Section("HP-T4 – T6 — the REPLACE replacement map and its frequencies (Tables 4-6)",
            tuple(Part(a, lambda ctx, a=a: T.word_tables(ctx, a), (a,), title=t, missing=T.missing_twin)
                  for a, t in (("HP-T4", "Table 4: relations"), ("HP-T5", "Table 5: actions and colours"),
                               ("HP-T6", "Table 6: sizes and states"))),
            ("The toy's fixed map, each entry's frequency counted in the REPLACE twin's files, next to the paper's "
             "tables; the word types the world cannot express.")),
    Section("HP-F1 / HP-F3 — qualitative score tables (Figures 1 and 3)",
            (Part("HP-F1", lambda ctx: T.score_figure(ctx, "HP-F1"), ("HP-F1",), title="Figure 1 (teaser)",
                  missing=T.missing_items),
             Part("HP-F3", lambda ctx: T.score_figure(ctx, "HP-F3"), ("HP-F3",), title="Figure 3 (2 x 2 grid)",
                  missing=T.missing_items)),
            ("Real items of the twins chosen by a stated rule on chain b0, their three models' raw scores, next to "
             "the paper's printed score tables.")),
    Section("HP-F2 / HP-F4 — the sets' example cards and random samples (Figures 2 and 4)",
            (Part("HP-F2", T.f2, ("HP-F2",), title="Figure 2: example cards", missing=T.missing_twin),
             Part("HP-F4", T.f4, ("HP-F4",), title="Figure 4: random samples", missing=T.missing_twin))),
    Section("HP-N1 – N5 — the paper's in-text numbers",
            (Part("HP-N1_N4", T.numbers, ("HP-N1", "HP-N2", "HP-N3", "HP-N4")),
             Part("HP-N5", T.n5, ("HP-N5",))),
            ("Each in-text number recomputed on the toy's rows, next to the printed number and the catalog's "
             "recomputation from the printed tables (HP-N4's '24.7' does not reproduce: its candidates).")),
    Section("HP-D1 – D4 — the data",
            (Part("HP-D1_D2", T.twins, ("HP-D1", "HP-D2"), title="The REPLACE and SWAP twins",
                  missing=T.missing_twin),
             Part("HP-D3_D4", T.generator, ("HP-D3", "HP-D4"), title="The training data: hard positives and "
                  "negatives of the `hardpos` generator", missing=T.missing_generator))),
    Section("HP-M1 – M6 — the methods and the loss",
            (Part("HP-M", T.methods_section, ("HP-M1", "HP-M2", "HP-M3", "HP-M4", "HP-M5", "HP-M6")),)),
)

REPORT = Report(
    paper=NAME,
    title="The Hard Positive Truth about Vision-Language Compositionality — reproduction report",
    intro=("Kamath et al., *The Hard Positive Truth about Vision-Language Compositionality* (ECCV 2024). Every table "
           "and figure of the paper (artifact list in the catalog `hard_positives.md`, §6) is regenerated below from "
           "this pipeline's DVC outputs, next to the paper's printed numbers. A line under each table and figure "
           "says what its spread is over and n; the paper's own inconsistencies are shown beside the tables they "
           "concern. All logic lives in `vlcomp.reporting.papers.hard_positives`."),
    headline="HP-T1",
    sections=SECTIONS,
    ledger=T.ledger,
    methods=lambda ctx: ctx.all_methods,
    deviations=T.deviations_markdown,
    provenance=T.provenance_table,
    status=T.intro_markdown,
)


# --------------------------------------------------------------------------- the real profile's page


def _printed(df, artifacts: tuple[str, ...]) -> Table:
    from .inconsistencies import notes

    return C.text_table(df, "Printed values only, as printed.", notes(list(artifacts)))


REAL_SECTIONS = (
    Section("HP-T1 — Orig / Aug / Brittleness on REPLACE and SWAP (Table 1), reproduced",
            (Part("HP-T1", lambda ctx: T.t1(ctx.toy), ("HP-T1",)),),
            ("The toy page's tables over this profile's runs: reproduced cells (one run per row: n = 1) next to the "
             "printed ones; rows whose models are not evaluated read *not run*.")),
    Section("HP-T7 — REPLACE Relations / Attributes (Table 7), reproduced",
            (Part("HP-T7", lambda ctx: T.t7(ctx.toy), ("HP-T7",)),)),
    Section("HP-T3 — the hard-negative loss weight (Table 3), reproduced",
            (Part("HP-T3", lambda ctx: T.t3(ctx.toy), ("HP-T3",)),)),
    Section("HP-T10 — standard zero-shot and retrieval (Table 10), reproduced",
            (Part("HP-T10", lambda ctx: T.t10(ctx.toy), ("HP-T10",)),)),
    Section("The printed tables",
            (Part("HP-printed", lambda ctx: _printed(RP.printed_tables(), ("HP-T1", "HP-T7", "HP-T8"))),
             Part("HP-pooling", lambda ctx: T.pooling_checks(ctx.toy))),
            ("Every printed table of the paper with Orig / Aug / Brittleness, mean scores or standard tasks, as "
             "printed, and the catalog's checks on them.")),
    Section("Hard Positives — released checkpoints next to the paper's numbers",
            (Part("hardpos_released", lambda ctx: RV.released_table(ctx.tree, "hardpos")),),
            ("REPLACE / SWAP (Tables 1, 3, 8, 7) and COCO / Flickr30k retrieval (Table 10) of the released CLIP "
             "ViT-B/32, NegCLIP and SVLC (TSVLC's RB+LLM Negs adapter, what `tsvlc` loads).")),
)

REAL_REPORT = Report(
    paper=NAME,
    title="The Hard Positive Truth about Vision-Language Compositionality — reproduction report, real profile",
    intro=("Kamath et al., *The Hard Positive Truth about Vision-Language Compositionality* (ECCV 2024). The real "
           "profile scores the released checkpoints on the released REPLACE and SWAP files and compares them with "
           "the paper's printed numbers; rows it trains are shown next to the printed tables. All logic lives in "
           "`vlcomp.reporting.papers.hard_positives` and `vlcomp.reporting.released_values`."),
    headline="HP-T1",
    sections=REAL_SECTIONS,
    ledger=None,
    no_ledger=NO_VERDICTS_REAL,
    methods=lambda ctx: ctx.toy.all_methods,
    long=lambda ctx: ctx.toy.long,
    deviations=RP.deviations_markdown,
    provenance=lambda ctx: Table(TR.provenance_table(ctx.tree), legend=TR.PROVENANCE_LEGEND),
    covered=rendered_elsewhere(REPORT, REAL_SECTIONS, TOY_ONLY),
    status=RP.intro_markdown,
)
