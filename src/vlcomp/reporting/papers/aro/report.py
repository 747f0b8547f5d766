"""The ARO / NegCLIP report pages, declared for :mod:`vlcomp.reporting.scaffold`: their sections in reading order,
the catalog artifacts each part renders, and the intro of each section. :data:`REPORT` is the toy profile's page
(tables, figures and ledger built by :mod:`.toy`); :data:`REAL_REPORT` the real profile's (long comparison tables
over the metrics tree, built by :mod:`.real`, and the released checkpoints next to the five papers' printed
numbers). The scaffold writes and renders them (``notebooks/aro.py`` calls
:func:`vlcomp.reporting.scaffold.display_page` with the one of its profile).
"""

from __future__ import annotations

from pathlib import Path

from ... import comparison as C
from ... import probes
from ... import released_values as RV
from ... import tree as TR
from ...blind import CEILING_INTRO as BLIND_INTRO
from ...collect import methods_of
from ...render import Table
from ...scaffold import NO_VERDICTS_REAL, TOY_ONLY, Part, Report, Section, rendered_elsewhere, tree_runs_table
from ...world_change import world_change_section
from . import NAME
from . import real as A
from . import toy as T
from .inconsistencies import notes


def _beside(ctx: T.ReportContext, file: str) -> Path:
    """A probe's or calibration's CSV, beside the world-calibration sweep's (``calibration/``)."""
    return ctx.calibration_csv.parent / file


def _missing(file: str, command: str, what: str):
    return lambda ctx: f"No {what} at `{_beside(ctx, file)}` yet (run `{command}`)."


def _probe_section(title: str, part: str, table, file: str, command: str, what: str, text: str) -> Section:
    """A mechanism probe's section: ``table`` (a :mod:`vlcomp.reporting.probes` reader) on ``calibration/<file>``,
    or a note naming the command that writes it."""
    return Section(title, (Part(part, lambda ctx: table(_beside(ctx, file)), missing=_missing(file, command, what)),),
                   text, level=3)


SECTIONS = (
    Section("ARO-T6 — CLIP vs CLIP-FT vs NegCLIP (Table 6)", (Part("ARO-T6", T.t6, ("ARO-T6",)),),
            ('Toy cells: mean ± spread over whole-chain runs; "paper": the printed value. The CSV holds one '
            'numeric row per task and model (mean, spread, n, paper value, difference).')),
    Section("What each toy twin stands for", (Part("stands_for", T.stands_for_table),)),
    world_change_section(
        T.world_change_markdown, T.world_change_settings, T.world_change_claims, T.first_world_missing,
        ("The project moved from its first toy world to a second one (`docs/world_v2.md`). The first world's "
         "outputs are kept in `calibration/first_world/` (`scripts/snapshot_first_world.py`: its claims ledgers, "
         "its params and its base and fine-tuned models' headline rows); while this run's outputs are still the "
         "first world's, both sides show the same world."),
        (Part("world_change_base", T.world_change_base, title="Base models (CLIP)", missing=T.first_world_missing),)),
    Section("ARO-F3 — Figure 3 (radar)", (Part("ARO-F3", lambda ctx: T.figure(ctx, "ARO-F3"), ("ARO-F3",)),)),
    Section("ARO-D1–D4, ARO-M1/M2 — the datasets and checkpoints this run built",
            (Part("ARO-D_M_artifacts", lambda ctx: T.artifacts(ctx, T.mined_dir(ctx, ctx.mined_root)),
                  ("ARO-D1", "ARO-D2", "ARO-D3", "ARO-D4", "ARO-M1", "ARO-M2")),),
            ('Counted from the stage outputs, next to the sizes the paper states. The toy world is far smaller '
            'than VG and COCO, so the counts are not meant to match; the rows record the conventions (one Order '
            'case per caption, captions without a negative dropped, K nearest-neighbour images) and where each '
            'artifact lives.')),
    Section("ARO-T1 — the order perturbations (Table 1), on the paper's example sentence",
            (Part("ARO-T1", T.t1, ("ARO-T1",)),),
            ("One sample per perturbation from this pipeline's spaCy + trigram code.")),
    Section("ARO-F1 — the ARO overview (Figure 1)", (Part("ARO-F1", lambda ctx: T.figure(ctx, "ARO-F1"), ("ARO-F1",)),)),
    Section("ARO-T2 — VG-Relation per relation (Table 2)", (Part("ARO-T2", T.t2, ("ARO-T2",)),),
            ("The toy world has its own relations; a paper column is filled where the paper's Table 2 has the same "
            'relation. Symmetric relations are kept in the benchmark file and excluded from the macro average, as '
            "the ARO code does. Toy and paper columns follow one model order: the report's methods, then the "
            'models the paper alone prints.')),
    Section("ARO-X2 — VG-Relation, spatial vs verbs (in-text numbers)", (Part("ARO-X2", T.x2, ("ARO-X2",)),)),
    Section("Claim (e) — VG-Relation by relation kind, own image and wrong image",
            (Part("relation_kind", T.relation_kind_table),),
            ("ARO Table 2 split by relation kind (`vlcomp.metrics.aro.relation_kind`): *geometric* relations (left, "
             "right, above, below, behind, in front of, ...), where either object can take either role, and "
             "*role-asymmetric* ones (on, wearing, holding; the toy's pointing at, inside, sitting on ...), where the "
             "swapped caption is implausible as text. Claim (e) in the ledger tests NegCLIP's gain on each half; "
             "this table adds the wrong-image control per kind (pre-registered prediction 2, `docs/world_v2.md`).")),
    Section("ARO-X1 — VG-Attribution macro accuracy (in-text numbers)", (Part("ARO-X1", T.x1, ("ARO-X1",)),)),
    Section("Wrong-image control: how much of VG-R / VG-A and the relation benchmarks is read off the image?",
            (Part("wrong_image_control", T.wrong_image),),
            ('Not a paper artifact. Each VG case is scored twice: with its own image, and with the image of '
            'another case (a seeded derangement); so is every item of SugarCrepe, VALSE and VL-CheckList (a '
            'derangement of their distinct images, so no item keeps its own; the rows below are their relation '
            'subsets). Accuracy that survives the wrong image comes from the text side alone, a prior over which '
            'caption is plausible; "own - wrong" is what the model reads off the image. Real VG has strong priors '
            '("the grass is green", "the cup is on the table"); the toy world has them only through '
            '`world.colour_prior` and `world.layout_prior` (see World calibration and Deviations).')),
    Section("Blind-text ceiling: every choice benchmark, own image, wrong image and a text-only reader",
            (Part("blind_ceiling", T.blind_ceiling,
                  missing="No blind-text ceiling yet (params `blind`; stage `evaluate_blind@<name>`)."),),
            BLIND_INTRO),
    Section("Forgetting: zero-shot on concepts the COCO twin never shows",
            (Part("forgetting", T.forgetting,
                  missing="The world has no web-only concepts (`world.web_only_*` empty)."),),
            ('Not a paper artifact. Real COCO shows 80 object classes, web data far more, so fine-tuning on COCO '
            'can forget what the base knew of the rest. The toy world has the same structure: '
            "`world.web_only_shapes` and `world.web_only_colours` appear in the web split only, and ARO-T6's "
            'zero-shot twins draw from the full web vocabulary (CIFAR10 twin: 10 shapes, 2 web-only; CIFAR100 '
            'twin: 10 colours x 10 shapes, 36 classes naming a web-only concept). Accuracy on the COCO classes is '
            'what fine-tuning also teaches; on the web-only classes, what it can only keep or forget. Chance is 1 '
            '/ number of classes of the task (10, 100, 300).')),
    Section("ARO-T5 — Pick-the-Right-Caption / Order (Table 5)", (Part("ARO-T5", T.t5, ("ARO-T5",)),)),
    Section("ARO-F2 — retrieval without order information (Figure 2)",
            (Part("ARO-F2", lambda ctx: T.figure(ctx, "ARO-F2"), ("ARO-F2",)),)),
    Section("ARO-T3 — retrieval with shuffled captions (Table 3)", (Part("ARO-T3", T.t3, ("ARO-T3",)),)),
    Section("ARO-T4 — retrieval with shuffled images (Table 4)", (Part("ARO-T4", T.t4, ("ARO-T4",)),)),
    Section("Training curves and learning-rate selection",
            (Part("lr_selection", T.lr_selection), Part("training_curves", lambda ctx: T.figure(ctx, "training_curves")))),
    Section("World calibration",
            (Part("world_calibration_summary", lambda ctx: T.calibration_markdown(ctx.calibration_csv)),
             Part("world_calibration", lambda ctx: T.calibration_table(ctx.calibration_csv, ctx.params),
                  missing="")),  # calibration_markdown says so
            ("Which world, pretraining and fine-tuning knobs make the toy show the paper's phenomena? Rows come "
            'from `scripts/calibrate_world.py` (single seed, reduced splits; a screening tool), each labelled by '
            "the configuration it ran: the params of the commit it ran at plus its overlay (the sweep's own name "
            "for it is the last column), with how the overlay compares with today's `params.yaml`. The defaults "
            'in `params.yaml` were chosen from it.' "\n\n"
            "Session-3 rows: the `world.colour_prior` / `world.layout_prior` overlays turn on the world's "
            'co-occurrence priors (typical colour per shape, typical vertical and depth order; these two rows ran '
            'with a first version that picked colours before the layout fixed the container and arrow shapes, so '
            'their typical-colour rate was about 0.51 instead of 0.56 at `colour_prior` 0.5). '
            '`world.splits.web.twin_prob` overlays pretrain with colour-swapped twin scenes with bound captions '
            'kept in one batch, so that web pretraining *needs* binding for that share of images. Neither moved '
            'the base off chance on VG-A nor gave NegCLIP a clear margin on its own; together with 50% '
            "conjunction captions (`world.captions.and_prob=0.5`) NegCLIP's VG-A gain appeared. The sweep entry "
            '`twin0.5-layout1-*` also made *layout twins* (two objects trade places, relation captions; '
            '`world.splits.web.twin_layout_share`, off by default): it lifted both fine-tuned models on VG-R, '
            'NegCLIP no more than CLIP-FT. Its full-size row is below.')),
    Section("Caption statistics: real COCO captions beside the COCO twin",
            (Part("caption_statistics", lambda ctx: T.caption_stats_table(_beside(ctx, "coco_caption_stats.csv")),
                  missing="No caption statistics yet (run `python scripts/caption_statistics.py`)."),),
            ("`scripts/caption_statistics.py` runs the project's own parser and NegCLIP miner on the real COCO "
            "Karpathy test captions and on the COCO twin's fine-tuning captions. The twin's caption knobs "
            '(`world.captions.and_prob`, `extra_prob`, `extra_and_prob`, `detailed_*_prob`) were chosen from '
            'these statistics alone (the knob screen of `--search`, nearest to the real shares), before any model '
            'was trained or scored on the new world. The column `twin_overlay` is the twin under the overlay '
            'named under the table: the previous defaults, for comparison.'), level=3),
    Section("Full-size calibration rows, over whole chains",
            (Part("world_calibration_full", lambda ctx: T.full_calibration_table(_beside(ctx, "aro_world_full.csv")),
                  missing="No full-size calibration rows yet (run `python scripts/calibration_run.py --config "
                  "NAME`)."),),
            ('`scripts/calibration_run.py` runs the whole pipeline (every stage, full size, its own LR selection) '
            'on a params overlay, on every chain, so a row carries the same whole-chain spread as the headline '
            "tables. The `default` row is today's `params.yaml`; other rows name their overlay (e.g. layout twins "
            'in web pretraining). Every VG-R number sits beside its wrong-image control.'), level=3),
    Section("Seed design: where the variance comes from",
            (Part("seed_design", lambda ctx: T.seed_design_table(_beside(ctx, "seed_design.csv")),
                  missing="No seed-design table yet (run `python scripts/seed_design.py WORKSPACE`)."),),
            ("`scripts/seed_design.py` splits each headline quantity's variance over a grid of base seeds x "
            'fine-tuning seeds into a between-base and a within-base (fine-tuning) component, and prices each '
            'design by its CPU time. The default `base_seeds` x `seeds` was chosen from it (README "Seeds").'), level=3),
    Section("Fine-tuning budget: more epochs, or more images?",
            (Part("finetune_budget", lambda ctx: T.budget_table(_beside(ctx, "aro_finetune_budget.csv")),
                  missing=_missing("aro_finetune_budget.csv", "python scripts/probe_finetune_budget.py",
                                   "budget-probe results")),),
            ("`scripts/probe_finetune_budget.py` fine-tunes from the pipeline's base (these rows: session 3's "
            'base, trained with 2 threads, and its selected LR 5e-4; the `lr` column), single seed, one thread, '
            "at full benchmark size. `n3000-ep3` rows are the session-3 pipeline's seed-0 models (its default "
            "then); `n3000-ep12` trains 4x longer on the same 3,000 images; `n9000-ep1` spends the default's "
            'compute on 3x the images; `n36000-ep1` spends the 12-epoch compute on 12x the images. `train '
            'rel-swap acc` / `test rel-swap acc` score relation captions "A REL B" against "B REL A" on whole '
            '`coco_train` / `coco_test` images. Findings: (1) at a fixed compute, more distinct images beat more '
            'epochs on VG-A, Order and retrieval, so the default became 9,000 images x 1 epoch; (2) VG-R stays at '
            'chance in every budget. With 12 epochs NegCLIP separates the swapped captions in its text tower '
            "(VG-R text cosine 0.92) and fits the training scenes' relation swaps (0.69), but not new scenes "
            '(0.53): it memorises relations of the 3,000 training images instead of learning to read layout, and '
            '12x the images (0.52, and 0.54 with the wrong image) does not change that.'), level=3),
    Section("Plasticity probe: why NegCLIP did not fix binding in the session-2 world",
            (Part("plasticity_probe", lambda ctx: T.probe_blocks(_beside(ctx, "plasticity.csv")),
                  missing=_missing("plasticity.csv", "python scripts/probe_plasticity.py", "plasticity-probe results")),),
            ("In the session-2 default world (before conjunction captions, twins and priors), NegCLIP's VG-A "
            'stayed near chance although its mined negatives included colour swaps. `scripts/probe_plasticity.py` '
            'isolates the causes: it fine-tunes from different starting points with *clean* hard negatives (one '
            'per caption; `colour_share` of them colour swaps, the rest subject/object swaps) on the COCO-twin '
            'scenes, and scores on `coco_test` the true caption against its colour swap in the training template '
            '(`col_rel`) and in VG-A\'s template "the c1 s1 and the c2 s2" on the whole image (`col_and`), and '
            'against its subject/object swap (`rel_any`; `rel_lr` for left/right/above/below). At the last step '
            "it scores the pipeline's VG-A twin (`vga_macro`, `vga_colour`: union-box crops, VG-A template). "
            '`pretrain:N` starts are N steps (batch 256) of web pretraining from random init; `base-fresh-image` '
            "is the pipeline's base with its image tower re-initialised (text tower kept). Single seed per start, "
            'one CPU thread each.'), level=3),
    Section("Relation probe (P2, and the plasticity half of P4): can relations be learned at all?",
            (Part("relation_probe", lambda ctx: T.probe_blocks(_beside(ctx, "relation_probe.csv")),
                  missing=_missing("relation_probe.csv", "python scripts/probe_plasticity.py --colour-share 0 --out "
                                   "calibration/relation_probe.csv", "relation-probe results")),),
            ('The same probe with `colour_share` 0: every hard negative is the subject/object swap of its caption '
            '("a s2 REL a s1" against "a s1 REL a s2", colours named), the relation-only counterpart of the '
            "binding probe above, from the pipeline's base (chain b0) and, for comparison, from random init. "
            "Rows with `nouns` *bare* train on VG-R's own form, bare shape nouns (\"a circle above a square\" "
            "against \"a square above a circle\"), so no colour can stand in for a shape: from random init in a "
            "clean two-object world (`world_clean`) and in the COCO twin (P2), and from bases pretrained for longer "
            "(`base_model` e16 / e32: `scripts/probe_pretraining.py --save`; the plasticity half of P4). "
            '`rel_any` / `rel_lr` score the swap on whole `coco_test` images; at the last step `vgr_macro` is the '
            "pipeline's VG-Relation twin and `vgr_wrong_image` its wrong-image control. Single seed per start, "
            'one CPU thread each (`calibration/relation_probe.csv`).'), level=3),
    _probe_section("P1 — perception: can the image tower tell a single object's shape?",
                   "perception_probe", probes.perception, "world_perception.csv",
                   "python scripts/probe_perception.py --mode scratch", "perception-probe results",
                   ("The first of the world issue's mechanism probes. Every base scores near chance zero-shot on single "
             "objects (the CIFAR10 twin), so before the world changes, `scripts/probe_perception.py` asks whether "
             "the pipeline's image tower can tell the 8 COCO-twin shapes of a single object at all: trained "
             "*supervised* from scratch on the shape label (a linear head, fresh images each step), at today's "
             "object sizes and at enlarged ones (`objects x1.5`, `x2`) and a larger render; and with a linear "
             "probe on the frozen base's features (what contrastive pretraining left in them). Colours, materials, "
             "positions and backgrounds are drawn at random, independent of shape.")),
    _probe_section("P4 — does longer pretraining teach the base to see shapes?",
                   "pretraining_probe", probes.pretraining, "world_pretraining.csv",
                   "python scripts/probe_pretraining.py --epochs 0 2 4 8", "pretraining-probe results",
                   ("P1 shows the tower can learn shapes and the base did not. `scripts/probe_pretraining.py` pretrains "
             "chain b0's base exactly as the `pretrain` stage does, on today's world, for several lengths, and "
             "scores each on P1's single-object images: zero-shot (the gate for a base that sees shapes) and with a "
             "linear probe on its frozen features.")),
    _probe_section("The base gate: does a base see shapes and still behave like a bag of words?",
                   "base_gate_probe", probes.base_gate, "world_base_gate.csv",
                   "python scripts/probe_base_gate.py --base models/base/b0", "base-gate results",
                   ("ARO's claims need a base that sees the objects (or no fine-tune can ground a relation) and still "
             "scores near chance on the VG twins (the bag-of-words behaviour NegCLIP is meant to fix). "
             "`scripts/probe_base_gate.py` scores candidate bases on the benchmarks of their own world.")),
    _probe_section("P3 — can the models take up the world's priors?",
                   "prior_uptake_probe", probes.prior_uptake, "prior_uptake.csv",
                   "python scripts/probe_priors.py", "prior-uptake results",
                   ("A text-only reader that knows the world's co-occurrence counts beats chance on both VG twins (the "
             "blind-text ceiling), yet every model's wrong-image control sits at chance. `scripts/probe_priors.py` "
             "separates \"the text tower cannot learn the prior\" from \"the fine-tune is too short, or the image "
             "side dominates\".")),
    _probe_section("BatchNorm statistics as a noise source",
                   "batchnorm_probe", probes.batchnorm, "batchnorm_summary.csv",
                   "python scripts/probe_batchnorm.py --models ...", "BatchNorm-probe results",
                   ("The toy ResNet towers evaluate with running statistics left by their last training batches. "
             "`scripts/probe_batchnorm.py` scores every chain's checkpoints both ways, so the spread that comes from "
             "those statistics can be read off.")),
    Section("What the mined negatives ask for",
            (Part("negative_composition",
                  lambda ctx: T.negative_composition(ctx, ctx.world_dir, T.mined_dir(ctx, ctx.mined_root))),),
            ("Each NegCLIP negative of the COCO twin, classified by the words the gist's swap moved (see "
            '`vlcomp.reporting.papers.aro.negatives`): only colours (attribute binding, the VG-A skill), only '
            'shape nouns (subject/object roles, the VG-R skill), other attribute words, or anything else.'), level=3),
)

REPORT = Report(
    paper=NAME,
    title="ARO / NegCLIP — reproduction report",
    intro=('Yuksekgonul et al., *When and why vision-language models behave like bags-of-words, and what to do '
            'about it?* (ICLR 2023). Every table and figure of the paper (artifact list in the catalog, §7) is '
            "regenerated below from this pipeline's DVC outputs, next to the paper's printed numbers. A line "
            "under each table and figure says what its spread is over and n; the paper's own inconsistencies "
            '(catalog §6) are shown beside the tables they concern. All logic lives in `vlcomp.reporting`.'),
    headline="ARO-T6",
    sections=SECTIONS,
    ledger=T.ledger,
    methods=lambda ctx: ctx.methods,
    deviations=T.deviations_markdown,
    provenance=T.provenance_table,
    status=T.intro_markdown,
)


# --------------------------------------------------------------------------- the real profile's page



def _compare(build, index: tuple[str, ...] | None, artifacts: tuple[str, ...]):
    """A part's builder: ``build(tree)``'s long comparison table, shown as its wide view over ``index``, with the
    paper's inconsistencies about ``artifacts`` under it."""
    return lambda tree: C.table(build(tree), index=index, notes=notes(artifacts))


REAL_SECTIONS = (
    Section("ARO-T6 — CLIP vs CLIP-FT vs NegCLIP (Table 6)",
            (Part("ARO-T6", _compare(A.t6, ("group", "task"), ("ARO-T6",)), ("ARO-T6",)),),
            ("Compositional tasks, retrieval R@1, and the zero-shot classification rows (reproduced when their image "
             "folders are given, else the paper's value beside an empty cell). Columns: the reproduced value per "
             "model, then the paper's value per paper model.")),
    Section("ARO-T2 — VG-Relation per relation (Table 2)",
            (Part("ARO-T2", _compare(A.t2, ("section", "relation", "paper_n_samples"), ("ARO-T2", "ARO-X2")),
                  ("ARO-T2", "ARO-X2")),),
            ("The macro rows (overall; spatial and verbs: the in-text ARO-X2 numbers) for every model, then accuracy "
             "per relation for every model present. Relations the ARO code excludes as symmetric have no "
             "reproduced value.")),
    Section("ARO-X1 — VG-Attribution macro accuracy (in-text numbers)",
            (Part("ARO-X1", _compare(A.x1, None, ("ARO-X1",)), ("ARO-X1",)),)),
    Section("ARO-T5 / T6 — COCO-Order and Flickr30k-Order",
            (Part("ARO-order", _compare(A.order_table, None, ("ARO-T5",)), ("ARO-T5",)),),
            ("Accuracy is the mean over order (perturbation) seeds and `std_over_order_seeds` its std over them, a "
             "separate quantity; mean rows give the std over whole-chain runs (`std_over_chains`). Paper: Table 5 "
             "(mean ± std over its perturbation seeds) where printed, else Table 6.")),
    Section("Released checkpoints on every benchmark",
            (Part("released_all_benchmarks", lambda tree: C.text_table(
                TR.released_wide(tree), "Released checkpoints: one model each, no spread.",
                [f"*Note:* {RV.OTHER_PAPERS_NOTE}"])),),
            "One row per released checkpoint, one column per headline metric found in their metrics."),
    *(Section(f"{RV.title(paper)} — released checkpoints next to the paper's numbers",
              (Part(f"{paper}_released", lambda tree, paper=paper: RV.released_table(tree, paper)),), intro, level=3)
      for paper, intro in (
          ("ceclip", "Zhang et al., CVPR 2024: ARO and VALSE (CE-T1), VL-CheckList (CE-T2), SugarCrepe (CE-T3), the "
                     "CLIP row of the loss ablation (CE-T4) and the compositional scores and COCO R@5 of CE-T5, for "
                     "CLIP, NegCLIP, CE-CLIP and BLIP. One row per printed metric: the reproduced value of every "
                     "model mapping to the paper's model (released checkpoints by name, pipeline models by method), "
                     "then the printed value (`paper: <model>`)."),
          ("conclip", "Singh et al.: CC-Neg accuracy on the full set (CONCLIP-T2, comparable only with "
                      "`ccneg_split: all`) and the 40k held-out split (CONCLIP-T3), by negation word and K "
                      "(CONCLIP-T7 to T12), SugarCREPE (CONCLIP-T5, T6, T14), and the in-text \"no\" numbers "
                      "(CONCLIP-N1), for CLIP, NegCLIP, FLAVA, BLIP and CoN-CLIP (ViT-B/32)."),
          ("tsvlc", "Doveh et al., CVPR 2023: VL-CheckList Object / Attribute / Relation (TSVLC-T1a, T1g, T2) and the "
                    "seven Attribute / Relation subtypes (TSVLC-T3) for CLIP ViT-B/32 and the LoRA variant RB+LLM "
                    "Negs, the adapter the `tsvlc` checkpoint loads. TSVLC-T3 columns are mapped through the "
                    "evaluation code's shifted labels (see the notes)."),
          ("hardpos", "Kamath et al., ECCV 2024: REPLACE and SWAP Orig / Aug / Aug - Orig / Brittleness (HP-T1, T3, "
                      "T8), REPLACE split into Relations and Attributes (HP-T7), and CLIP's COCO / Flickr30k R@1 "
                      "(HP-T10), for CLIP, NegCLIP and SVLC (= the `tsvlc` checkpoint)."))),
    Section("This pipeline's models on the same benchmarks",
            (Part("pipeline_all_benchmarks", lambda tree: C.text_table(
                TR.benchmarks_wide(tree, (TR.PIPELINE,)),
                "One row per pipeline model (one whole-chain run each): no spread.")),),
            "The base model and the fine-tuned variants on the same released-format benchmarks (not a table of the "
            "paper).", level=3),
    Section("Ignored folders",
            (Part("ignored_folders", lambda tree: C.text_table(TR.ignored_table(tree), "Folders, not measurements: no spread.")),),
            "A metrics.json whose provenance is not real-profile is not part of the tree."),
)

REAL_REPORT = Report(
    paper=NAME,
    title="ARO / NegCLIP — reproduction report, real profile",
    intro=("Yuksekgonul et al., *When and why vision-language models behave like bags-of-words, and what to do "
           "about it?* (ICLR 2023). The real profile runs real weights on the released data: OpenAI CLIP ViT-B/32, "
           "the CLIP-FT and NegCLIP variants fine-tuned by this pipeline, and the papers' released checkpoints. "
           "Every number is read from the DVC metrics tree, next to the paper's printed numbers; the released "
           "checkpoints are also compared with the printed numbers of the CE-CLIP, CoN-CLIP, TSVLC and "
           "Hard-Positives papers. All logic lives in `vlcomp.reporting` (`papers.aro.real`, `released_values`)."),
    headline="ARO-T6",
    sections=REAL_SECTIONS,
    ledger=None,
    no_ledger=NO_VERDICTS_REAL,
    methods=lambda tree: methods_of(tree.params or {}, NAME),
    runs=tree_runs_table,
    deviations=A.deviations_markdown,
    provenance=lambda tree: Table(TR.provenance_table(tree), legend=TR.PROVENANCE_LEGEND),
    covered=rendered_elsewhere(REPORT, REAL_SECTIONS, TOY_ONLY),
    status=A.intro_markdown,
)
