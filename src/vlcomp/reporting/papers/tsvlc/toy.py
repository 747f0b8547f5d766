"""The toy-profile tables, figures and ledger of the TSVLC report, over the collected metrics, the toy world and
the generators' outputs; the page that shows them is declared in :mod:`.report` and rendered by
:mod:`vlcomp.reporting.scaffold` (the notebook holds no logic of its own).

Every table is a :class:`vlcomp.reporting.render.Table`: numbers for its CSV, text for reading, a legend line
generated from the data (what ``±`` is over and n, :func:`vlcomp.reporting.collect.spread_legend`) and the
paper's own inconsistencies about it (:mod:`.inconsistencies`). A model not evaluated yet shows as ``not
run``; a missing input file (mined data, item tables) gives None, and the page shows a sentence naming the file,
never an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ....world import Split
from ... import world_change as WC
from ...blind import BlindResult, ceiling_long, ceiling_notes, ceiling_wide, read_blind
from ...collect import (
    LONG_COLUMNS,
    Methods,
    chains,
    collect,
    methods_of,
    provenance,
    runs_summary,
    spread_legend,
    summary,
)
from ...items import Bootstrap
from ...ledger import Claim, Evidence, report_ledger
from ...render import Figure, Table
from ...tree import BASE_METHOD, PROVENANCE_LEGEND, TOY_PROFILE, read_params
from . import NAME, claims, examples, figures, tables
from . import printed as P
from .inconsistencies import notes as paper_notes

#: The main models of the per-file and per-task tables and of S4 (Fig. 3's series).
MAIN = figures.F3_SERIES
#: S4 compares these two (catalog: RB+LLM right where CLIP+LoRA is wrong, and the reverse).
S4_PAIR = ("tsvlc_rbllm", "tsvlc_lora")
SINGLE = "A row marked *1 chain (b0)* is a single run: no spread."
DELTA_LEGEND = ("{cells} cells in percent (the metrics' fractions x 100): mean ± sample sd over the row's "
                "chains; (Δ ...) = the model minus CLIP of its own chain (`clip-b<k>`), computed per chain, "
                "then mean ± sd. Paper cells as printed, deltas against the un-fine-tuned CLIP of the "
                "section.")


@dataclass
class ReportContext:
    long: pd.DataFrame  # collect() plus the derived per-model metrics (deltas vs CLIP, the claims' means)
    summ: pd.DataFrame  # statistics over whole chains (collect.summary)
    params: dict
    methods: Methods  # CLIP and the TSVLC methods of params, in params order, with their labels
    cross: tuple[str, ...]  # the ARO methods of params (cross-evaluation rows)
    world_dir: Path
    models_dir: Path
    metrics_dir: Path
    mined_root: Path
    blind: tuple[BlindResult, ...] = ()  # the blind-text ceilings (metrics/blind/<name>/): reference rows, no method
    first_world: Path = Path("calibration/first_world")  # the first world's snapshot (scripts/snapshot_first_world.py)
    built_ledger: tuple[list[Claim], Table] | None = field(default=None, repr=False)  # :func:`ledger`, once

    @property
    def profile(self) -> str:
        return self.params.get("profile", TOY_PROFILE)

    @property
    def all_methods(self) -> Methods:
        """The TSVLC methods, then the cross-evaluated ARO ones, then the other base models' un-fine-tuned
        evaluations (``clip_vit``, ``clip_cyclip``: Table 1b / 1e's first rows); labels of all."""
        aro = methods_of(self.params, "aro")
        bases = claims.base_model_labels(self.params)
        return Methods((*self.methods.order, *self.cross, *bases), {**aro.labels, **self.methods.labels, **bases})

    @property
    def measured(self) -> str:
        """What the tables call this pipeline's values: ``toy`` in the toy profile, ``reproduced`` in the real
        profile (real data and weights)."""
        return "toy" if self.profile == TOY_PROFILE else "reproduced"

    def wide(self, long: pd.DataFrame, deltas: bool = True) -> pd.DataFrame:
        return tables.shown_wide(long, deltas=deltas, measured=self.measured)

    @property
    def seed(self) -> int:
        return int(self.params.get("root_seed", 0))

    def legend(self, keys: list[str], shown: list[str]) -> str:
        return spread_legend(self.long, self.all_methods, keys, shown, single=SINGLE)


def table_keys() -> list[str]:
    return list(dict.fromkeys(k for _, _, k in (*P.T1_COLUMNS, *P.T3_COLUMNS)))


def load(metrics_dir: str, world_dir: str, models_dir: str, params_path: str,
         mined_root: str, first_world: str = "calibration/first_world") -> ReportContext:
    """The collected metrics with the derived per-model metrics (each model minus CLIP of its chain; the
    claims' means and differences); an empty table when nothing is evaluated yet (every row then reads ``not
    run``). ``first_world``: the first world's snapshot, for the "what changed and why" section."""
    params = read_params(params_path)
    try:
        from .. import paper_scope

        long = collect(metrics_dir, params, paper_scope(params, NAME).models)
    except FileNotFoundError:
        long = pd.DataFrame(columns=list(LONG_COLUMNS))
    long = claims.with_claim_metrics(long)
    keys = [*table_keys(), claims.SVLC_MEAN, claims.VLC_MEAN]
    long = tables.with_delta_vs_base(long, keys)
    aro = methods_of(params, "aro")
    return ReportContext(long, summary(long), params, methods_of(params, NAME), tuple(aro.order[1:]),
                         Path(world_dir), Path(models_dir), Path(metrics_dir), Path(mined_root),
                         tuple(read_blind(metrics_dir, params)), Path(first_world))


def _present(ctx: ReportContext, methods: list[str] | tuple[str, ...]) -> bool:
    return any(chains(ctx.long, m) for m in methods)


def intro_markdown(ctx: ReportContext) -> str:
    """The profile and what its numbers are (the runs each row aggregates over are the page's runs table)."""
    parts = [f"**Profile:** `{ctx.profile}`. "]
    if ctx.profile == TOY_PROFILE:
        parts.append("Every number labelled *toy* comes from the procedurally generated world and tiny "
                     "CLIPs pretrained from scratch in this pipeline, fine-tuned on the `cc3m` split (the "
                     "CC3M stand-in) with LoRA adapters and TSVLC's losses; it tests the paper's claims in "
                     "a controlled setting and is not expected to match the paper's magnitudes. Toy values "
                     "are shown in percent next to the paper's. ")

    parts.append("Every method row aggregates over the whole-chain runs of the runs table below; ± is the "
                 "sample standard deviation over those runs everywhere; a row run on one chain only has no spread "
                 "and says *1 chain (b0)*.")
    if not _present(ctx, ctx.methods.order[1:]):
        parts.append(" **No TSVLC model is evaluated yet**: every TSVLC cell reads *not run* until the "
                     "pipeline's TSVLC stages have run; the paper's printed values are shown already.")
    return "".join(parts)


# --------------------------------------------------------------------------- claims


def evidence(ctx: ReportContext) -> Evidence:
    return Evidence(ctx.long, ctx.metrics_dir, Bootstrap(seed=ctx.seed))


def claim_list(ctx: ReportContext, ev: Evidence | None = None):
    from .. import PAPERS

    lora = claims.lora_methods(ctx.params) or None
    return PAPERS.get(NAME).claims(ev or evidence(ctx), ctx.all_methods, lora,
                                   references=claims.reference_methods(ctx.params))


def ledger(ctx: ReportContext) -> tuple[list[Claim], Table]:
    """The claims and the ledger table (one row per condition, :func:`vlcomp.reporting.ledger.report_ledger`),
    with the thresholds and the paper's inconsistencies about the claims under it; built once per context (the
    page and the "what changed" section both show it)."""
    if ctx.built_ledger is not None:
        return ctx.built_ledger
    ev = evidence(ctx)
    cl = claim_list(ctx, ev)
    constants = ("Thresholds (`vlcomp.reporting.papers.tsvlc.claims`): ZS drop at most "
                 f"{claims.ZS_DROP_MAX:g} (C4); 'little' = below {claims.LITTLE_FRACTION:.3g} of the "
                 f"separate loss's gain (C2); '> 0' = at least {claims.STRICT:g} (a tie is no gain). A "
                 "condition whose method ran on chain b0 only has n = 1.")
    ctx.built_ledger = (cl, report_ledger(ev, cl, ctx.all_methods,
                                          [constants, *paper_notes(("TSVLC-C4", "TSVLC-C5", "TSVLC-C2"))]))
    return ctx.built_ledger


# --------------------------------------------------------------------------- what changed and why


WORLD_CHANGE_TEXT = (
    "**Why the world changed.** The project's second toy world (`docs/world_v2.md`) sets each knob from a mechanism "
    "requirement or an external statistic, fixed before any model was scored on it; *Knobs and candidate values* "
    "there gives every value and its source, and its pre-registered predictions. For TSVLC:\n\n"
    "- `world.layout_probs` (a fifth layout, *support*) and `world.contain_inner_scale`: role-asymmetric relations "
    "(*sitting on*, *hanging from*, *inside*, *surrounding*) in every split, so the CC3M twin's captions and "
    "VL-CheckList's Relation items hold relations whose swap is implausible as text.\n"
    "- `world.colour_prior`: a colour no longer stands in for a shape (VL-CheckList Attribute and Object).\n"
    "- `world.captions.synonyms` and `clip.tokenizer`: a synonym per class where English has one, and a tokenizer "
    "that knows the new words (the rule-based negatives' and the positives' word lists grow with them).\n"
    "- `world.captions.negation_prob`, `world.captions.count_prob`: negation and number words at their rates in "
    "real COCO captions.\n"
    "- `pretrain.epochs`: a base that sees shapes (the competence gate).\n"
    "- `benchmarks.twins.*`: evaluation sets nearer the reference's sizes, so the claims' margins can be "
    "resolved.\n\n"
    "Not changed yet: the CC3M and LAION twins' binding, relation and noise rates (`world.splits.cc3m`, "
    "`world.splits.laion`): no published alt-text statistic was at hand, so pre-registered prediction 3 (CLIP+LoRA "
    "must not gain VL-CheckList Relation) can only be tested once they are set. The first table lists every "
    "setting that differs between the two worlds' `params.yaml` (read from both files, not restated here); the "
    "second puts the first world's claims beside this run's.")


def world_change_markdown(ctx: ReportContext) -> str:
    """The fixed text of the "what changed and why" section: the knobs that changed and why."""
    return WORLD_CHANGE_TEXT


def first_world_missing(ctx: ReportContext) -> str:
    return WC.missing_text(ctx.first_world)


def world_change_settings(ctx: ReportContext) -> Table | None:
    """Every setting of the world, the base recipe, TSVLC's methods and generators and the benchmark twins that
    differs between the first world's ``params.yaml`` (the snapshot's) and this run's."""
    return WC.settings_change(ctx.first_world / "params.yaml", ctx.params,
                              ["world", "clip", "pretrain", *WC.own_sections(ctx.params, ctx.methods.order),
                               "benchmarks"])


def world_change_claims(ctx: ReportContext) -> Table | None:
    """Every claim and condition of the first world's ledger (``claims_tsvlc.csv``) beside this run's."""
    return WC.claims_change(ctx.first_world / "claims_tsvlc.csv", ledger(ctx)[1].data)


# --------------------------------------------------------------------------- the paper's tables


def _keys(long: pd.DataFrame) -> list[str]:
    return [k for k in dict.fromkeys(long["metric_key"]) if k]


def _shown_methods(long: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(long["method"]))


def t1a(ctx: ReportContext) -> Table:
    long = tables.with_blind(tables.table_t1a(ctx.long, ctx.summ, ctx.all_methods, ctx.cross), ctx.blind,
                             P.T1_COLUMNS, {"artifact": "TSVLC-T1a"})
    cross = ", ".join(ctx.all_methods.label(m) for m in ctx.cross)
    extra = [f"*Cross-evaluation rows* ({cross}): {tables.CROSS}; they run the same VL-CheckList and "
             "ELEVATER twins."] if ctx.cross else []
    return Table(long, ctx.wide(long), ctx.legend(_keys(long), _shown_methods(long)),
                 [DELTA_LEGEND.format(cells=ctx.measured.capitalize()), *extra, *_blind_note(ctx),
                  *paper_notes(("TSVLC-T1a",))])


SECTION_ARTIFACTS = tuple(a for a in P.SECTIONS if a != "TSVLC-T1a")


def section_markdown(artifact: str, toy: bool = True) -> str:
    """The section's title line; with ``toy``, the toy setting that stands for it."""
    title, setting = P.SECTIONS[artifact]
    return f"**{artifact}, Table 1{artifact[-1]}: {title}.**" + (f" The toy: {setting}." if toy else "")


def t1_section(ctx: ReportContext, artifact: str) -> Table:
    """TSVLC-T1b..T1g: one section of Table 1, deltas against the section's first row on the same chain."""
    long = tables.with_blind(tables.table_t1_section(ctx.long, ctx.summ, ctx.all_methods, artifact), ctx.blind,
                             P.T1_COLUMNS, {"artifact": artifact})
    baseline = ctx.all_methods.label(long["method"].iloc[0]) if len(long) else "?"
    return Table(long, ctx.wide(long), ctx.legend(_keys(long), _shown_methods(long)),
                 [f"{ctx.measured.capitalize()} cells in percent; (Δ ...) = the row minus the section's first row ({baseline}) on the same "
                  "chain, as the paper's deltas are against its section's baseline. Every row of this section "
                  "runs on chain b0 only (one seed: an ablation-grade row, no spread) unless its runs column "
                  "says otherwise.", *_blind_note(ctx), *paper_notes((artifact,))])


def t2(ctx: ReportContext) -> Table:
    long = tables.with_blind(tables.table_t2(ctx.long, ctx.summ, ctx.all_methods), ctx.blind, P.T1_COLUMNS,
                             {"artifact": "TSVLC-T2"})
    return Table(long, ctx.wide(long), ctx.legend(_keys(long), _shown_methods(long)),
                 [DELTA_LEGEND.format(cells=ctx.measured.capitalize()), "*w/o Neg Loss* here: the RB+LLM negatives appended to the contrastive "
                  "loss's image->text columns, no separate negatives loss (`loss_args`).", *_blind_note(ctx),
                  *paper_notes(("TSVLC-T2",))])


def t3(ctx: ReportContext) -> Table:
    long = tables.with_blind(tables.table_t3(ctx.long, ctx.summ, ctx.all_methods), ctx.blind, P.T3_COLUMNS,
                             {"artifact": "TSVLC-T3"})
    return Table(long, ctx.wide(long, deltas=False), ctx.legend(_keys(long), _shown_methods(long)),
                 [f"{ctx.measured.capitalize()} cells in percent: mean ± sample sd over the row's chains; paper cells as printed "
                  "(Table 3 prints no deltas).", *_blind_note(ctx), *paper_notes(("TSVLC-T3",))])


def t3_check(ctx: ReportContext) -> tuple[Table, Table]:
    """The catalog's Table-3-vs-Table-1a check on the printed numbers, and the same identity on the toy
    metrics."""
    return t3_printed_check(), t3_toy_check(ctx)


def t3_printed_check() -> Table:
    """Table 3 against Table 1a on the printed numbers (catalog §4.4)."""
    printed = Table(P.table3_check(), legend=(
        "Printed numbers only (percent): Table 3's unweighted mean of its 5 Attribute / 2 Relation subtypes "
        "against Table 1a's Attribute / Relation, and the two tables' ZS; *agrees* = within "
        f"{P.CONSISTENCY_TOLERANCE:.3f} points (half a unit of the last printed digit). No spread: "
        "arithmetic on printed values."),
        notes=paper_notes(("TSVLC-T3",))[:1])
    return printed


def t3_toy_check(ctx: ReportContext) -> Table:
    """The same aggregation identity on the toy's VL-CheckList metrics."""
    return Table(tables.toy_aggregation_check(ctx.long), legend=(
        "The toy's VL-CheckList aggregates under the same rule, checked on every evaluated model (TSVLC and "
        "ARO models, all chains): the largest |group average - unweighted mean of its subtypes|. 0 means the "
        "benchmark aggregates as the catalog derives (Object: the 6 object subtypes, AMBIGUOUS in the "
        "paper)."))


# --------------------------------------------------------------------------- figures


def figure(ctx: ReportContext, name: str = "TSVLC-F3") -> Figure:
    """TSVLC-F3 or TSVLC-F4 with the legend line (what the vertices are over) and the notes under it."""
    if name == "TSVLC-F4":
        return _fig4(ctx)
    if name != "TSVLC-F3":
        raise ValueError(f"unknown figure {name!r}")
    f = figures.figure3(ctx.summ, ctx.all_methods)
    keys = [k for _, _, k in figures.SPOKES]
    runs = runs_summary(ctx.long, ctx.all_methods, keys, figures.F3_SERIES) or "no toy value yet"
    legend = f"Polygon vertices: means over whole-chain runs (no error bars on a radar): {runs}."
    return Figure(f, legend,
                  ["One radial scale on every spoke, starting at 0 (the reference code scales each "
                   "spoke separately); dashed ring: chance (50 %). The values are in TSVLC-T3's table "
                   f"(CLIP and CLIP+LoRA as reference rows). Paper panel: {figures.NOT_PRINTED}.",
                   *paper_notes(("TSVLC-F3",))])


def _fig4(ctx: ReportContext) -> Figure:
    f = figures.figure4(ctx.summ, ctx.all_methods)
    keys = [k for _, _, k in figures.SPOKES]
    runs = runs_summary(ctx.long, ctx.all_methods, keys, figures.F4_SERIES) or "no toy value yet"
    legend = f"Polygon vertices: the from-scratch runs' values (no error bars on a radar): {runs}."
    return Figure(f, legend,
                  ["One radial scale on every spoke, starting at 0, as TSVLC-F3; dashed ring: chance (50 %). "
                   f"No paper panel: {figures.F4_NOT_PRINTED} (the catalog: the from-scratch RB+LLM model of "
                   "the figure appears in no table). The values are in TSVLC-T1c's runs and the per-subtype "
                   "metrics of the same models.", *paper_notes(("TSVLC-F4",))])


F1_F2_TEXT = ("**TSVLC-F1 / F2 (schematics, optional)** are not redrawn. Fig. 1 contrasts the plain "
              "contrastive loss with the added SVLC losses; Fig. 2 shows the three text manipulations, whose "
              "implementation is shown by TSVLC-S2 (rule-based and unmasking negatives) and TSVLC-S3 (the "
              "analogy prompt and positives).")


# --------------------------------------------------------------------------- supplementary-equivalent


def s1(ctx: ReportContext) -> Table | None:
    """TSVLC-S1: per result file, the main models' accuracies; None when no model has per-file keys."""
    if not tables.file_keys(ctx.long):
        return None
    shown = [m for m in MAIN if m == BASE_METHOD or m in ctx.methods]
    df = tables.table_s1(ctx.long, ctx.summ, ctx.all_methods, shown)
    sources = sorted({s for s in df["source"] if s})
    return Table(df, tables.s1_shown(df), ctx.legend(_keys(df), shown),
                 [f"The toy VL-CheckList twin has {len(sources)} source dataset ({', '.join(sources)}), the "
                  "VG stand-in: the per-source table (VG / SWiG / VAW / HAKE in the paper's supplementary) "
                  "is the per-file table of that one source; a subtype's score is the mean of its files.",
                  *paper_notes(("TSVLC-S1",))])


def wrong_image(ctx: ReportContext) -> Table:
    shown = list(ctx.all_methods.order)
    long = tables.with_blind(tables.table_wrong_image(ctx.long, ctx.summ, ctx.all_methods, shown), ctx.blind,
                             tables.WRONG_IMAGE_COLUMNS, {"artifact": "wrong-image control"})
    return Table(long, tables.shown_wide(long, deltas=False), ctx.legend(_keys(long), shown),
                 ["Not a paper artifact. Each item is also scored with another item's image (a seeded "
                  "derangement); accuracy that survives the wrong image comes from the text alone (a prior "
                  "over which caption is plausible), the rest is read off the image.", *_blind_note(ctx)])


def blind_ceiling(ctx: ReportContext) -> Table | None:
    """Every choice benchmark: the blind-text ceiling beside the main methods' (and the cross-evaluated ARO
    methods') own-image and wrong-image scores, in percent (:func:`vlcomp.reporting.blind.ceiling_long`); None
    when no blind reader has run."""
    if not ctx.blind:
        return None
    shown = [m for m in MAIN if m == BASE_METHOD or m in ctx.methods] + list(ctx.cross)
    long = ceiling_long(ctx.summ, ctx.all_methods, shown, ctx.blind, ctx.params["evaluate"]["benchmarks"])
    keys = [k for k in dict.fromkeys(long["metric_key"]) if k]
    return Table(long, ceiling_wide(long, _pct_runs), ctx.legend(keys, shown) + " Percent; (n=1): that method's "
                 "run on chain b0 alone was scored on this benchmark.", ceiling_notes(ctx.blind))


def _pct_runs(mean: float, spread: float, n: float) -> str:
    """A percent cell that says when it is a single run (the ceiling table has no runs column)."""
    text = tables.pct(mean, spread, n)
    return f"{text} (n=1)" if text and n == 1 else text


def _blind_note(ctx: ReportContext) -> list[str]:
    """The line under a table with a blind-text ceiling row."""
    if not ctx.blind:
        return []
    return [f"*{ctx.blind[0].label}*: a text-only reader of the scene-graph counts of split `{ctx.blind[0].split}` "
            "(no image, no training; section *Blind-text ceiling*), one deterministic value: no spread, no delta."]


def zeroshot_tasks(ctx: ReportContext) -> Table:
    shown = [m for m in MAIN if m == BASE_METHOD or m in ctx.methods]
    df = tables.table_zeroshot_tasks(ctx.long, ctx.summ, ctx.all_methods, shown)
    keys = [f"zeroshot/elevater/{t}/acc" for t in df["task"]]
    return Table(df, legend=ctx.legend(keys, shown) + " Percent; the paper prints only the 21-task mean.")


def _captions(ctx: ReportContext, generator: str) -> list[list[str]] | None:
    split = ((ctx.params.get("mine") or {}).get(generator) or {}).get("split", "cc3m")
    try:
        return Split(ctx.world_dir, split).captions()
    except FileNotFoundError:
        return None


def word_lists() -> Table:
    return Table(examples.word_lists_table(), legend=(
        "The paper's lists are the reference repository's (its supplementary with the lists is not in the "
        "paper text), with two data bugs fixed ('bamboo ' and 'stainedgood'); the toy's are the world's "
        "vocabulary (`vlcomp.text.tsvlc_rules.toy_word_lists`). The toy training uses the toy lists "
        "(`mine.tsvlc_rb.word_lists`). Word lists, not measurements: no spread."))


def generator_summary(ctx: ReportContext) -> Table:
    df = examples.generator_summary(ctx.mined_root)
    return Table(df, legend="From each generator's `summary.json` (`mine@<generator>`, run once for "
                 "every chain, seeded from `root_seed`): counts over the `cc3m` split's captions, no "
                 "spread. A type share is that type's fraction of all generated candidates (`rb/<list>`: "
                 "rule-based, `unmask/<POS>`: masked-LM fill).")


def negative_examples(ctx: ReportContext, generator: str, n: int = 8) -> Table | None:
    captions = _captions(ctx, generator)
    if captions is None:
        return None
    df = examples.negative_examples(ctx.mined_root, generator, captions, ctx.seed, n)
    if df is None:
        return None
    where = examples.generator_dir(ctx.mined_root, generator)
    return Table(df, legend=f"{len(df)} captions with a negative, drawn uniformly (seeded from `root_seed`) "
                 f"from `{where}`; the first candidate of each (the sampler draws one of them at every "
                 "visit). Examples, no spread.")


def missing_mined(ctx: ReportContext, generator: str) -> str:
    split = ((ctx.params.get("mine") or {}).get(generator) or {}).get("split", "cc3m")
    return (f"No output of `mine@{generator}` yet "
            f"(`{examples.generator_dir(ctx.mined_root, generator)}`), or no `{split}` split under "
            f"`{ctx.world_dir}`.")


def prompt_markdown() -> str:
    from ....text.analogy import PROMPT_TEMPLATE

    return ("The reference's 4-shot prompt (catalog §3.5, from its `BloomGen` class), verbatim; "
            "`{caption}` is the caption to paraphrase, the continuation up to the first '.' is the "
            "positive. The real profile prompts a causal LM with it; **the toy does not**: its positives "
            f"are scene-graph-exact paraphrases.\n\n```text\n{PROMPT_TEMPLATE}\n```")


def positives(ctx: ReportContext, n: int = 8) -> Table | None:
    captions = _captions(ctx, examples.ANALOGY_GENERATOR)
    if captions is None:
        return None
    got = examples.positive_examples(ctx.mined_root, captions, ctx.seed, n)
    if got is None:
        return None
    df, summ = got
    share = summ.get(f"mine/{examples.ANALOGY_GENERATOR}/share_with_positive")
    have = f" {share:.1%} of the split's captions have a positive." if share is not None else ""
    return Table(df, legend=f"{len(df)} captions with a positive, drawn uniformly (seeded from "
                 f"`root_seed`).{have} Examples, no spread.")


def s4(ctx: ReportContext, n: int = 8) -> tuple[str, list[tuple[str, Table]]] | None:
    """TSVLC-S4: on the first chain both S4 methods ran, the per-file outcome counts and up to ``n`` items
    where RB+LLM Negs is right and CLIP+LoRA wrong, and the reverse; None when either has no item table."""
    a, b = S4_PAIR
    ca, cb = chains(ctx.long, a), chains(ctx.long, b)
    common = [c for c in ca if any(d.base == c.base and d.seed == c.seed for d in cb)]
    if not common:
        return None
    chain = common[0]
    name = {m: ctx.long[(ctx.long["method"] == m) & (ctx.long["base"] == chain.base)
                       & (ctx.long["seed"] == chain.seed)]["model"].iloc[0] for m in S4_PAIR}
    items = {m: examples.read_items(ctx.metrics_dir, name[m]) for m in S4_PAIR}
    if any(v is None for v in items.values()):
        return None
    la, lb = ctx.all_methods.label(a), ctx.all_methods.label(b)
    m = examples.discordant(items[a], items[b])
    head = (f"Chain {chain.label}: `{name[a]}` ({la}) against `{name[b]}` ({lb}) on the same VL-CheckList "
            "items (their per-item tables). Margin = score(positive) - score(negative); an item is right "
            "when its margin is > 0.")
    legend = ("One item per file in turn, the largest margin of the model that is right first (a fixed "
              f"order, not a draw). Chain {chain.label} only: examples, no spread.")
    named = {"margin_a": f"{la} margin", "margin_b": f"{lb} margin"}

    def shown(a_right: bool) -> pd.DataFrame:
        return examples.examples(m, a_right, n).drop(columns=["correct_a", "correct_b"]).rename(columns=named)

    parts = [("Outcomes per file", Table(examples.outcome_counts(m, la, lb), legend=f"Item counts on chain "
                                         f"{chain.label}: a single run, no spread.")),
             (f"{la} right, {lb} wrong (successes)", Table(shown(True), legend=legend)),
             (f"{lb} right, {la} wrong (failures)", Table(shown(False), legend=legend))]
    return head, parts


# --------------------------------------------------------------------------- provenance, choices


def provenance_table(ctx: ReportContext) -> Table:
    shown = set(ctx.all_methods.order)
    df = provenance(ctx.long) if len(ctx.long) else pd.DataFrame()
    if len(df):
        df = df[df["method"].isin(shown)].reset_index(drop=True)
    return Table(df, legend=PROVENANCE_LEGEND)


def chains_markdown(ctx: ReportContext) -> str:
    """Which TSVLC methods run on every chain and which on the first only (params ``seeds``)."""
    seeds = ctx.params.get("seeds") or {}
    first = [m for m in ctx.methods.order[1:]
             if isinstance(seeds.get(m), dict) and seeds[m].get("chains") == "first"]
    every = [m for m in ctx.methods.order[1:] if m not in first]
    label, n = ctx.methods.label, len(ctx.params.get("bases") or {})
    return (f"{', '.join(map(label, every)) or 'none'} on every base seed ({n} chains); "
            f"{', '.join(map(label, first)) or 'none'} on the first chain only (params "
            "`seeds.<method>.chains: first`), marked *1 chain (b0)* and without spread.")


def deviations_markdown(ctx: ReportContext) -> str:
    mine = ctx.params.get("mine") or {}
    rb, mix = mine.get("tsvlc_rb") or {}, mine.get("tsvlc_mix") or {}
    lora = (((ctx.params.get("methods") or {}).get("tsvlc_lora") or {}).get("tuning") or {}).get("lora") or {}
    twins = (ctx.params.get("benchmarks") or {}).get("twins") or {}
    per_file = (twins.get("vlchecklist") or {}).get("items_per_file", "?")
    return "\n".join([
        "- **Corpus**: the `cc3m` split of the toy world (web-style captions with more bindings and "
        "relations) stands for CC3M; the base is the chain's tiny CLIP pretrained on the `web` split, "
        "standing for OpenAI CLIP.",
        f"- **LoRA**: rank {lora.get('rank', '?')}, alpha {lora.get('alpha', '?')} (scaling alpha/r), on "
        f"{', '.join(lora.get('layers', []))} of the {' and '.join(lora.get('towers', []))} towers; every "
        "base weight frozen, the temperature included (the reference's `mark_only_lora_as_trainable`).",
        f"- **Negatives offline**: each caption gets up to {rb.get('candidates', '?')} candidate negatives "
        "once (`mine@<generator>`) and the sampler draws one per visit, standing for the reference's "
        f"online draw; RB+LLM mixes the two kinds by a coin per slot (rb_share {mix.get('rb_share', '?')}). "
        "The toy's RB lists are the world's vocabulary; the LLM is a small masked LM trained on the world's "
        "captions (`train_mlm`).",
        "- **Positives**: scene-graph-exact paraphrases of the toy captions (labelled so in S3), not LLM "
        "output.",
        f"- **VL-CheckList**: one source dataset (the VG stand-in), {per_file} items per file; subtype = "
        "mean of its files, Attribute = mean of 5 subtypes, Relation = mean of 2, Object = mean of 6.",
        "- **Zero-shot**: the ELEVATER twin, 21 concept-combination tasks of the toy world (per-task table "
        "above); its mean stands for the 21-task ELEVATER average.",
        f"- **Chains**: {chains_markdown(ctx)}",
        "- **Table 1(b)-(g), Fig. 4**: "
        + "; ".join(f"({a[-1]}) {P.SECTIONS[a][1]}" for a in SECTION_ARTIFACTS)
        + ". From-scratch rows train at the pretraining rate (one rate, no sweep); the LoRA rows at the rate swept "
        "for CLIP+LoRA. Each runs on chain b0 only (one seed), marked so.",
    ])
