"""The TSVLC report pages, declared for :mod:`vlcomp.reporting.scaffold`: their sections in reading order, the
catalog artifacts each part renders, the artifacts covered elsewhere (the generators, LoRA, the checkpoints, the
optional schematics), and the intro of each section. :data:`REPORT` is the toy profile's page (tables, figures and
ledger built by :mod:`.toy`); :data:`REAL_REPORT` the real profile's (the same tables over its runs, the printed
tables, the released checkpoint; :mod:`.real`). ``notebooks/tsvlc.py`` calls
:func:`vlcomp.reporting.scaffold.display_page` with the one of its profile.
"""

from __future__ import annotations

from ... import comparison as C
from ... import released_values as RV
from ... import tree as TR
from ...blind import CEILING_INTRO as BLIND_INTRO
from ...render import Table
from ...scaffold import NO_VERDICTS_REAL, TOY_ONLY, Covered, Part, Report, Section, rendered_elsewhere
from ...world_change import world_change_section
from . import NAME
from . import real as RP
from . import toy as T
from .inconsistencies import notes

GENERATORS = ("tsvlc_rb", "tsvlc_unmask", "tsvlc_mix")


def _t1_section(artifact: str) -> Part:
    """One of Table 1(b)-(g): its title and toy setting, then the table."""
    return Part(artifact, lambda ctx: [("", T.section_markdown(artifact)), ("", T.t1_section(ctx, artifact))],
                (artifact,))


def _s4(ctx: T.ReportContext):
    got = T.s4(ctx)
    if got is None:
        return None
    head, parts = got
    return [("", head), *parts]


SECTIONS = (
    Section("TSVLC-T1a — CC3M LoRA fine-tuning (Table 1a)", (Part("TSVLC-T1a", T.t1a, ("TSVLC-T1a",)),),
            ('VL-CheckList Object / Attribute / Relation and the 21-task zero-shot mean. Toy cells: mean ± spread '
            "over the row's chains with the delta to CLIP of the same chain; paper cells as printed. The CSV "
            'holds one numeric row per model and column (fractions).')),
    world_change_section(
        T.world_change_markdown, T.world_change_settings, T.world_change_claims, T.first_world_missing,
        ("The project moved from its first toy world to a second one (`docs/world_v2.md`). The first world's "
         "outputs are kept in `calibration/first_world/` (`scripts/snapshot_first_world.py`); while this run's "
         "outputs are still the first world's, both sides show the same world.")),
    Section("TSVLC-T1b – T1g — the other settings of Table 1", tuple(_t1_section(a) for a in T.SECTION_ARTIFACTS),
            ('A second architecture (ViT-B/16), training from scratch, CyCLIP and LAION, each section under the '
            "toy setting that stands for it. Deltas against the section's first row on the same chain, as the "
            "paper's.")),
    Section("TSVLC-T2 — a separate negatives loss vs negatives in the contrastive loss (Table 2)",
            (Part("TSVLC-T2", T.t2, ("TSVLC-T2",)),)),
    Section("TSVLC-T3 — component analysis on the Attribute and Relation subtypes (Table 3)",
            (Part("TSVLC-T3", T.t3, ("TSVLC-T3",)),),
            ("The five rows of Table 3, then CLIP and CLIP+LoRA as reference rows (Fig. 3's other two series).")),
    Section("Table 3 against Table 1a (catalog §4.4)",
            (Part("TSVLC-T3_vs_T1a", lambda ctx: T.t3_printed_check()),
             Part("TSVLC-T3_toy_aggregation", T.t3_toy_check)),
            ('Attribute = unweighted mean of the 5 Attribute subtypes, Relation = mean of the 2 Relation subtypes: '
            "on the printed numbers, then the same identity on the toy's metrics."), level=3),
    Section("TSVLC-F3 — CC3M fine-tuning, detailed (Fig. 3, radar)",
            (Part("TSVLC-F3", lambda ctx: T.figure(ctx, "TSVLC-F3"), ("TSVLC-F3",)),)),
    Section("TSVLC-F4 — CC3M from scratch, detailed (Fig. 4)",
            (Part("TSVLC-F4", lambda ctx: T.figure(ctx, "TSVLC-F4"), ("TSVLC-F4",)),)),
    Section("TSVLC-S1 — VL-CheckList per source dataset and file",
            (Part("TSVLC-S1", T.s1, ("TSVLC-S1",),
                  missing="No per-file VL-CheckList results yet (`vlchecklist/file/<file>/acc`)."),)),
    Section("Zero-shot per task and the wrong-image control",
            (Part("zeroshot_elevater_tasks", T.zeroshot_tasks), Part("wrong_image_control", T.wrong_image)),
            ('Not paper artifacts. The ELEVATER twin per task (the paper prints only the 21-task mean), and '
            "VL-CheckList scored with each item's own image and with another item's image.")),
    Section("Blind-text ceiling: every choice benchmark, own image, wrong image and a text-only reader",
            (Part("blind_ceiling", T.blind_ceiling,
                  missing="No blind-text ceiling yet (params `blind`; stage `evaluate_blind@<name>`)."),),
            BLIND_INTRO),
    Section("TSVLC-S2 — rule-based and unmasking negatives",
            (Part("TSVLC-S2_word_lists", lambda ctx: T.word_lists(), ("TSVLC-S2",)),
             Part("TSVLC-S2_generators", T.generator_summary),
             *(Part(f"TSVLC-S2_{g}", lambda ctx, g=g: T.negative_examples(ctx, g), title=f"Examples of `{g}`",
                    missing=lambda ctx, g=g: T.missing_mined(ctx, g)) for g in GENERATORS)),
            ("The word lists (the paper's and the toy's), what each generator produced, and examples drawn from "
            'its output.')),
    Section("TSVLC-S3 — the analogy prompt and positives",
            (Part("TSVLC-S3_prompt", lambda ctx: T.prompt_markdown()),
             Part("TSVLC-S3", T.positives, ("TSVLC-S3",), missing=lambda ctx: T.missing_mined(ctx, "tsvlc_analogy")))),
    Section("TSVLC-S4 — qualitative successes and failures",
            (Part("TSVLC-S4", _s4, ("TSVLC-S4",),
                  missing="No per-item VL-CheckList tables of RB+LLM Negs and CLIP+LoRA on a common chain yet "
                  "(`metrics/<model>/items/vlchecklist.parquet`)."),),
            ('VL-CheckList items where RB+LLM Negs is right and CLIP+LoRA wrong, and the reverse.')),
    Section("TSVLC-F1 / F2 — schematics (optional)", (Part("TSVLC-F1_F2", lambda ctx: T.F1_F2_TEXT),)),
)

COVERED = (
    Covered("TSVLC-F1", "Fig. 1 schematic (optional)", "not drawn (a schematic; short text)"),
    Covered("TSVLC-F2", "Fig. 2 pipeline schematic (optional)", "not drawn; its content is TSVLC-S2 / S3"),
    Covered("TSVLC-D1", "RB negative generator", "pipeline: mine@tsvlc_rb (examples in S2)"),
    Covered("TSVLC-D2", "LLM-unmasking negative generator", "pipeline: mine@tsvlc_unmask / tsvlc_mix (S2)"),
    Covered("TSVLC-D3", "analogy positives", "pipeline: mine@tsvlc_analogy (toy: scene paraphrases; S3)"),
    Covered("TSVLC-D4", "LoRA adapters (r = 4)", "pipeline: methods.<m>.tuning.lora (see Deviations)"),
    Covered("TSVLC-M", "checkpoints and evaluations", "pipeline: models/finetune, metrics/ (see Provenance)"),
)

REPORT = Report(
    paper=NAME,
    title="TSVLC — reproduction report",
    intro=('Doveh et al., *Teaching Structured Vision & Language Concepts to Vision & Language Models* (CVPR '
            '2023). Every table and figure of the paper (artifact list in the catalog `tsvlc.md`, §6) is '
            "regenerated below from this pipeline's DVC outputs, next to the paper's printed numbers. A line "
            "under each table and figure says what its spread is over and n; the paper's own inconsistencies "
            '(catalog §5) are shown beside the tables they concern. All logic lives in '
            '`vlcomp.reporting.papers.tsvlc`.'),
    headline="TSVLC-T1a",
    sections=SECTIONS,
    ledger=T.ledger,
    methods=lambda ctx: ctx.all_methods,
    deviations=T.deviations_markdown,
    provenance=T.provenance_table,
    covered=COVERED,
    status=T.intro_markdown,
)


# --------------------------------------------------------------------------- the real profile's page



def _printed(df, artifacts: tuple[str, ...]) -> Table:
    return C.text_table(df, "Printed values only, as printed.", notes(list(artifacts)))


REAL_SECTIONS = (
    Section("TSVLC-T1a — CC3M LoRA fine-tuning (Table 1a), reproduced",
            (Part("TSVLC-T1a", lambda ctx: T.t1a(ctx.toy), ("TSVLC-T1a",)),),
            ("The toy page's tables over this profile's runs: reproduced cells (one run per row: n = 1) next to the "
             "printed ones; rows whose models are not evaluated read *not run*.")),
    Section("TSVLC-T1b – T1g — the other settings of Table 1, reproduced",
            tuple(Part(a, lambda ctx, a=a: [("", T.section_markdown(a, toy=False)), ("", T.t1_section(ctx.toy, a))],
                       (a,)) for a in T.SECTION_ARTIFACTS)),
    Section("TSVLC-T2 — a separate negatives loss vs negatives in the contrastive loss (Table 2), reproduced",
            (Part("TSVLC-T2", lambda ctx: T.t2(ctx.toy), ("TSVLC-T2",)),)),
    Section("TSVLC-T3 — component analysis on the Attribute and Relation subtypes (Table 3), reproduced",
            (Part("TSVLC-T3", lambda ctx: T.t3(ctx.toy), ("TSVLC-T3",)),)),
    Section("TSVLC-F3 / F4 — CC3M fine-tuning and from scratch, detailed (Figs. 3 and 4), reproduced",
            (Part("TSVLC-F3", lambda ctx: T.figure(ctx.toy, "TSVLC-F3"), ("TSVLC-F3",)),
             Part("TSVLC-F4", lambda ctx: T.figure(ctx.toy, "TSVLC-F4"), ("TSVLC-F4",)))),
    Section("TSVLC-S1 — VL-CheckList per source dataset and file",
            (Part("TSVLC-S1", lambda ctx: T.s1(ctx.toy), ("TSVLC-S1",),
                  missing="No per-file VL-CheckList results yet (`vlchecklist/file/<file>/acc`)."),)),
    Section("The printed tables",
            (Part("TSVLC-T1_T2_printed", lambda ctx: _printed(RP.printed_tables(), ("TSVLC-T1a", "TSVLC-T2"))),
             Part("TSVLC-T3_printed", lambda ctx: _printed(RP.printed_t3(), ("TSVLC-T3",))),
             Part("TSVLC-T3_vs_T1a", lambda ctx: T.t3_printed_check())),
            ("Tables 1 (every section), 2 and 3 as printed, and the check that Table 3's subtypes average to Table "
             "1a's Attribute and Relation columns (catalog §4.4).")),
    Section("TSVLC — released checkpoint next to the paper's numbers",
            (Part("tsvlc_released", lambda ctx: RV.released_table(ctx.tree, "tsvlc")),),
            ("VL-CheckList Object / Attribute / Relation (TSVLC-T1a, T1g, T2) and the seven Attribute / Relation "
             "subtypes (TSVLC-T3) for CLIP ViT-B/32 and the LoRA variant RB+LLM Negs, the adapter the `tsvlc` "
             "checkpoint loads.")),
)

REAL_REPORT = Report(
    paper=NAME,
    title="TSVLC — reproduction report, real profile",
    intro=("Doveh et al., *Teaching Structured Vision & Language Concepts to Vision & Language Models* (CVPR 2023). "
           "The real profile trains TSVLC's rows on the real corpora from the released weights and scores them on "
           "the released benchmark files: the tables below put them next to the paper's printed tables and compare "
           "the released TSVLC checkpoint with them. All logic lives in `vlcomp.reporting.papers.tsvlc` and "
           "`vlcomp.reporting.released_values`."),
    headline="TSVLC-T1a",
    sections=REAL_SECTIONS,
    ledger=None,
    no_ledger=NO_VERDICTS_REAL,
    methods=lambda ctx: ctx.toy.all_methods,
    long=lambda ctx: ctx.toy.long,
    deviations=RP.deviations_markdown,
    provenance=lambda ctx: Table(TR.provenance_table(ctx.tree), legend=TR.PROVENANCE_LEGEND),
    covered=(*COVERED, *rendered_elsewhere(REPORT, REAL_SECTIONS, TOY_ONLY, skip=COVERED)),
    status=RP.intro_markdown,
)
