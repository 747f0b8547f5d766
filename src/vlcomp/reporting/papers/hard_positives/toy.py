"""The toy-profile tables, figures and ledger of the Hard Positives report, over the collected metrics, the REPLACE /
SWAP item tables, the twins' files and the generator's outputs; the page that shows them is declared in
:mod:`.report` and rendered by :mod:`vlcomp.reporting.scaffold` (the notebook holds no logic of its own).

Every table is a :class:`vlcomp.reporting.render.Table`: numbers for its CSV, text for reading, a legend generated
from the data (what ``±`` is over and n, :func:`vlcomp.reporting.collect.spread_legend`) and the paper's own
inconsistencies about it (:mod:`.inconsistencies`). A model not evaluated yet reads ``not run``; a missing input file
(an item table, the twins, the generator's summary) gives None and the page names the file.

Rows the toy shows (:data:`CROSS_LABELS`): the paper's own methods (``methods.<m>.paper: hard_positives``), CLIP
(the un-fine-tuned base of each chain, ``clip-b<k>``), and from the papers it cross-evaluates ARO's CLIP-FT (the
paper's CLIP-COCO control) and NegCLIP, TSVLC's RB+LLM Negs (standing for SVLC) and Combined (SVLC+Pos), and the
other base models (Table 8's ladder).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ....seeding import np_rng
from ...blind import BlindResult, read_blind
from ...collect import LONG_COLUMNS, Methods, chains, collect, methods_of, provenance, spread_legend, summary
from ...items import Bootstrap
from ...ledger import Claim, report_ledger
from ...render import Figure, Table
from ...tree import BASE_METHOD, PROVENANCE_LEGEND, TOY_PROFILE, read_params
from . import NAME, data, derived, figures, scores, tables, words
from . import claims as K
from . import printed as P
from .inconsistencies import notes as paper_notes

#: The cross-evaluated methods the page shows, with the labels that say what each stands for here.
CROSS_LABELS: dict[str, str] = {
    "clip_ft": "CLIP-COCO [toy: ARO's CLIP-FT]", "negclip": "NegCLIP",
    "tsvlc_rbllm": "SVLC [toy: TSVLC RB+LLM Negs]", "tsvlc_combined": "SVLC+Pos [toy: TSVLC Combined]",
}
#: Base-model families (params ``base_models``) -> labels (Table 8's ladder).
BASE_LABELS: dict[str, str] = {"vit": "CLIP, toy ViT base", "cyclip": "CLIP, toy CyCLIP base"}
SINGLE = "A row marked *1 chain (b0)* is a single run: no spread."
CELLS = ("Toy cells in percent (the metrics' fractions x 100): mean ± sample sd over the row's whole chains; (Δ ...) "
         "= the model's own Aug - Orig, per chain, then mean ± sd (the paper's red Δ). Paper cells as printed.")
KIND_LEGEND = ("*kind*: toy = a toy method standing for the printed row; stand-in = a toy model chosen by a stated "
               "rule for a row the toy has no method for; paper-only = printed values only (no toy counterpart); "
               "chance = computed from the metric's definition; human = printed only; toy-only = a toy row the "
               "paper has none for; not built = no such model in params yet; blind = the blind-text ceiling (counts "
               "of one split, no image, one value).")


@dataclass
class ReportContext:
    long: pd.DataFrame  # collect() plus the item-table metrics (scores.with_item_metrics)
    summ: pd.DataFrame  # statistics over whole chains (collect.summary)
    params: dict
    methods: Methods  # CLIP and the paper's methods, params order
    world_dir: Path
    benchmarks_dir: Path
    models_dir: Path
    metrics_dir: Path
    mined_root: Path
    blind: tuple[BlindResult, ...] = ()
    built_ledger: tuple[list[Claim], Table] | None = field(default=None, repr=False)

    @property
    def profile(self) -> str:
        return self.params.get("profile", TOY_PROFILE)

    @property
    def measured(self) -> str:
        return "toy" if self.profile == TOY_PROFILE else "reproduced"

    @property
    def seed(self) -> int:
        return int(self.params.get("root_seed", 0))

    @property
    def all_methods(self) -> Methods:
        return report_methods(self.params, self.methods)

    def legend(self, keys: list[str], shown: list[str]) -> str:
        return spread_legend(self.long, self.all_methods, keys, shown, single=SINGLE)

    def wide(self, long: pd.DataFrame) -> pd.DataFrame:
        return tables.shown_wide(long, self.measured)


def report_methods(params: dict, methods: Methods) -> Methods:
    """The report's rows: CLIP and the paper's methods (``methods``), the cross-evaluated rows of
    :data:`CROSS_LABELS` params have, and the other base models' evaluations (``clip_<family>``), with their labels
    (:data:`BASE_LABELS`, else the family's name and architecture)."""
    ms = params.get("methods") or {}
    families = params.get("base_models") or {}
    cross = [m for m in CROSS_LABELS if m in ms]
    bases = [f"{BASE_METHOD}_{f}" for f in families]

    def base_label(family: str) -> str:
        arch = (families[family] or {}).get("arch")
        return BASE_LABELS.get(family, f"CLIP, base model {family}" + (f" ({arch})" if arch else ""))

    labels = {**methods.labels, **{m: CROSS_LABELS[m] for m in cross},
              **{f"{BASE_METHOD}_{f}": base_label(f) for f in families}}
    return Methods((*methods.order, *cross, *bases), labels)


def load(metrics_dir: str, world_dir: str, benchmarks_dir: str, models_dir: str, params_path: str,
         mined_root: str) -> ReportContext:
    """The collected metrics of the paper's scope with the item-table metrics (mean raw scores, ties); an empty
    table when nothing is evaluated yet (every row then reads ``not run``)."""
    params = read_params(params_path)
    try:
        from .. import paper_scope

        long = collect(metrics_dir, params, paper_scope(params, NAME).models)
    except FileNotFoundError:
        long = pd.DataFrame(columns=list(LONG_COLUMNS))
    long = scores.with_item_metrics(long, metrics_dir)
    return ReportContext(long, summary(long), params, methods_of(params, NAME), Path(world_dir),
                         Path(benchmarks_dir), Path(models_dir), Path(metrics_dir), Path(mined_root),
                         tuple(read_blind(metrics_dir, params)))


def _present(ctx: ReportContext, methods) -> bool:
    return any(chains(ctx.long, m) for m in methods)


def intro_markdown(ctx: ReportContext) -> str:
    parts = [f"**Profile:** `{ctx.profile}`. "]
    if ctx.profile == TOY_PROFILE:
        parts.append("Every number labelled *toy* comes from the procedurally generated world and the tiny CLIPs "
                     "pretrained from scratch in this pipeline (the stand-in for CLIP ViT-B/32), fine-tuned on the "
                     "`coco_train` split (the COCO stand-in) with the hard positives and CREPE-style hard negatives "
                     "of the `hardpos` generator, and scored on the REPLACE / SWAP twins built from the `vg_test` "
                     "scenes. It tests the paper's claims in a controlled setting; it is not expected to match the "
                     "paper's magnitudes. ")
    parts.append("Every method row aggregates over the whole-chain runs of the runs table; ± is the sample standard "
                 "deviation over those runs everywhere; a row run on one chain only has no spread and says *1 chain "
                 "(b0)*. Rows the toy has no counterpart for show the paper's printed values only (*paper-only*).")
    if not _present(ctx, ctx.methods.order[1:]):
        parts.append(" **No Hard Positives model is evaluated yet**: every cell of the paper's own methods reads "
                     "*not run* until the pipeline's `hard_positives` stages have run; the printed values are shown "
                     "already.")
    return "".join(parts)


# --------------------------------------------------------------------------- the paper's tables


def _keys(long: pd.DataFrame) -> list[str]:
    return [k for k in dict.fromkeys(long["metric_key"]) if k]


def _shown(long: pd.DataFrame) -> list[str]:
    return [m for m in dict.fromkeys(long.loc[long["kind"].isin(tables.RUN_KINDS), "method"]) if m]


def _table(ctx: ReportContext, long: pd.DataFrame, artifact: str, extra: list[str] = ()) -> Table:
    lines = [CELLS if artifact not in ("HP-T2", "HP-T9") else
             "Toy cells: mean raw cosine (no logit scale) over the items, then mean ± sample sd over the row's "
             "chains. Paper cells as printed.", KIND_LEGEND, *extra, *paper_notes((artifact,)),
             *(f"*Table note:* {n}" for n in P.TABLE_NOTES.get(artifact, ()))]
    return Table(long, ctx.wide(long), ctx.legend(_keys(long), _shown(long)), lines)


def hn_stand_in(ctx: ReportContext) -> str | None:
    """The toy's most brittle prior hard-negative model on REPLACE (:func:`.scores.most_brittle` over
    :data:`.claims.PRIOR` present): what stands for DAC-LLM (Table 2, Figures 1 and 3)."""
    return scores.most_brittle(ctx.summ, [m for m in K.PRIOR if m in ctx.all_methods])


STAND_IN_RULE = ("*Stand-in for DAC-LLM*: the toy's prior hard-negative model (NegCLIP, SVLC, SVLC+Pos) with the "
                 "highest REPLACE brittleness (mean over its chains), as DAC-LLM is the paper's most brittle model on "
                 "REPLACE (40.1, Table 1); chosen by this rule from the metrics.")


def t1(ctx: ReportContext) -> Table:
    long = tables.main_table(ctx.long, ctx.summ, ctx.all_methods, "HP-T1", ctx.blind)
    return _table(ctx, long, "HP-T1")


def t3(ctx: ReportContext) -> Table:
    long = tables.main_table(ctx.long, ctx.summ, ctx.all_methods, "HP-T3", ctx.blind)
    return _table(ctx, long, "HP-T3", ["w_HN per row: `methods.<m>.loss_weights.negatives_loss` (section *Methods*); "
                                       "every row but CLIP, Our HN and Our HP+HN runs on chain b0 only."])


def t7(ctx: ReportContext) -> Table:
    long = tables.main_table(ctx.long, ctx.summ, ctx.all_methods, "HP-T7", ctx.blind)
    return _table(ctx, long, "HP-T7")


def larger_resnet(ctx: ReportContext) -> str:
    """The base model standing for Table 8's larger ResNet: a ``base_models`` family whose ``arch`` is a toy ResNet
    other than the default base's (``clip.arch``); "" when params have none."""
    default = ((ctx.params.get("clip") or {}).get("arch")) or ""
    for family, spec in (ctx.params.get("base_models") or {}).items():
        arch = str((spec or {}).get("arch") or "")
        if arch.startswith("toy-rn") and arch != default:
            return f"{BASE_METHOD}_{family}"
    return ""


def t8(ctx: ReportContext) -> Table:
    big = larger_resnet(ctx)
    stand = {"CLIP-RN50x64": (big, f"{ctx.all_methods.label(big)} [stand-in: a larger ResNet]" if big else
                              "larger toy ResNet base [not built]",
                              "" if big else "not built: params define no larger toy ResNet base (base_models)")}
    extra = [tables.RowSpec(ctx.all_methods.label(f"{BASE_METHOD}_cyclip"), tables.TOY_ONLY, f"{BASE_METHOD}_cyclip",
                            None, "toy-only: the CyCLIP-loss base (another pretraining objective); no paper row")
             ] if f"{BASE_METHOD}_cyclip" in ctx.all_methods else []
    long = tables.main_table(ctx.long, ctx.summ, ctx.all_methods, "HP-T8", ctx.blind, extra, stand)
    return _table(ctx, long, "HP-T8", [
        "The toy's base ladder: CLIP (the default toy ResNet, `clip.arch`), the toy ViT base (standing for CLIP "
        "ViT-B/16), the CyCLIP-loss base (toy-only) and a larger toy ResNet (standing for the RN50x64 row; not "
        "built until params define it). OpenCLIP, RoBERTa-CLIP, DataComp and XVLM have no toy counterpart. A base "
        "whose `base_models.<family>.benchmarks` leave out REPLACE / SWAP reads *not measured*."])


def t2(ctx: ReportContext) -> Table:
    hn = hn_stand_in(ctx)
    label = f"{ctx.all_methods.label(hn)} [stand-in for DAC-LLM]" if hn else "DAC-LLM stand-in [no prior model run]"
    stand = {"DAC-LLM": (hn or "", label, "stand-in: the most brittle prior hard-negative model on REPLACE" if hn else
                         "not built: no prior hard-negative model has REPLACE metrics")}
    long = tables.main_table(ctx.long, ctx.summ, ctx.all_methods, "HP-T2", stand_ins=stand)
    return _table(ctx, long, "HP-T2", [STAND_IN_RULE, "Means over all REPLACE items (Relations and Attributes), as "
                                       "the released code averages; from each model's item table."])


def t9(ctx: ReportContext) -> Table:
    extra = [tables.RowSpec(ctx.all_methods.label(K.HN), tables.TOY_ONLY, K.HN, None,
                            "toy-only: Our HN is not a column of Table 9")] if K.HN in ctx.all_methods else []
    long = tables.main_table(ctx.long, ctx.summ, ctx.all_methods, "HP-T9", extra=extra)
    return _table(ctx, long, "HP-T9", ["Mean s(c) over each benchmark's items, from the item tables."])


def t10(ctx: ReportContext) -> Table:
    long = tables.main_table(ctx.long, ctx.summ, ctx.all_methods, "HP-T10")
    return _table(ctx, long, "HP-T10", [
        "Stand-ins: *IN-1k* = the toy ImageNet twin (`zeroshot_aro`, task imagenet; Acc@5 from the true class's "
        "rank); *VTAB* = the ELEVATER twin's mean over its 21 tasks (the paper's 20 VTAB tasks are not listed); "
        "COCO / Flickr30k = the toy Karpathy twins; Image R@1 = text-to-image, Text R@1 = image-to-text."])


SCORE_KEYS = tuple(f"hardpos/{b}/{m}" for b in ("replace", "swap") for m in (*scores.SCORE_MEASURES, "ties"))


def scores_and_ties(ctx: ReportContext) -> Table:
    """Not a paper table: every shown method's mean raw scores of c, c_n, c_p and its tie count on REPLACE and
    SWAP, from the item tables (Appendix D.2 of the paper has the full score table; the released code prints ties
    apart)."""
    shown = [m for m in ctx.all_methods.order if chains(ctx.long, m, SCORE_KEYS)]
    rows = []
    for m in shown:
        row = {"method": ctx.all_methods.label(m), "runs": tables.runs_label(chains(ctx.long, m, SCORE_KEYS))}
        for k in SCORE_KEYS:
            b, measure = k.split("/")[1:]
            got = chains(ctx.long, m, [k])
            mean, sd = (scores_value(ctx, m, k, "mean"), scores_value(ctx, m, k, "std")) if got else (math.nan,) * 2
            n = len(got)
            if measure == "ties":
                row[f"{b.upper()} ties"] = "" if not got else (f"{mean:.1f}" + (f" ± {sd:.1f}" if n > 1 else ""))
            else:
                row[f"{b.upper()} {measure}"] = tables.number_text(mean, sd, n, P.unit_of(P.PAPER, k))
        rows.append(row)
    df = pd.DataFrame(rows)
    long = ctx.long[ctx.long["key"].isin(SCORE_KEYS) & ctx.long["method"].isin(shown)]
    data = long.pivot_table(index=["method", "model"], columns="key", values="value").reset_index() if len(long) \
        else pd.DataFrame()
    return Table(data, df, ctx.legend(list(SCORE_KEYS), shown) if shown else "No item table read yet: no spread.",
                 ["Per model from its item tables: the mean raw cosine of c, c_n and c_p over the benchmark's items, "
                  "and the ties: items with s(c) = s(c_n) or s(c_p) = s(c_n) (the swapped pass's c_n score), which "
                  "fail Orig or Aug. Then mean ± sample sd over the method's chains. The CSV holds one row per "
                  "model."])


GAP_LABELS = {"c_minus_p": "s(c) - s(c_p)", "abs_c_minus_p": "|s(c) - s(c_p)|", "c_minus_n": "s(c) - s(c_n)",
              "p_above_c": "share s(c_p) > s(c)"}


def positive_gaps(ctx: ReportContext) -> Table:
    """Not a paper table: the probe behind claim (b), per model from its REPLACE and SWAP item tables
    (``hardpos/<benchmark>/<gap>`` of :func:`.scores.item_metrics`), then mean ± sample sd over the method's
    chains."""
    keys = [f"hardpos/{t}/{g}" for t in scores.TABLES for g in scores.GAP_MEASURES]
    long = ctx.long[ctx.long["key"].isin(keys) & ctx.long["method"].isin(ctx.all_methods.order)]
    long = long.assign(benchmark=long["key"].str.split("/").str[1], gap=long["key"].str.split("/").str[2])
    order = {m: i for i, m in enumerate(ctx.all_methods.order)}
    data = (long.pivot_table(index=["method", "model", "benchmark"], columns="gap", values="value").reset_index()
            if len(long) else pd.DataFrame(columns=["method", "model", "benchmark"]))
    data = data.reindex(columns=["method", "model", "benchmark", *scores.GAP_MEASURES])
    data = data.assign(_o=data["method"].map(order)).sort_values(["_o", "model", "benchmark"], kind="stable")
    data = data.drop(columns="_o").reset_index(drop=True)
    data.columns.name = None
    rows = []
    for m in dict.fromkeys(data["method"]):
        row = {"method": ctx.all_methods.label(m), "runs": tables.runs_label(chains(ctx.long, m))}
        for table in scores.TABLES:
            for g in scores.GAP_MEASURES:
                k, unit = f"hardpos/{table}/{g}", tables.PERCENT if g == "p_above_c" else "raw"
                n = len(chains(ctx.long, m, [k]))  # mean and spread over the chains: the summary's, as every table's
                row[f"{table.upper()} {GAP_LABELS[g]}"] = tables.number_text(
                    scores_value(ctx, m, k, "mean") if n else math.nan,
                    scores_value(ctx, m, k, "std") if n > 1 else math.nan, n, unit, signed=g in ("c_minus_p", "c_minus_n"))
        rows.append(row)
    shown = list(dict.fromkeys(data["method"]))
    return Table(data, pd.DataFrame(rows), ctx.legend(list(SCORE_KEYS), shown) if shown else
                 "No item table read yet: no spread.",
                 ["Per model from its item tables (REPLACE pools Attributes and Relations): the mean over items of "
                  "s(c) - s(c_p), of |s(c) - s(c_p)|, of s(c) - s(c_n) (raw cosines), and the share of items whose "
                  "hard positive outscores the original (percent); then mean ± sample sd over the method's chains. "
                  "The paper explains brittleness by hard-negative training pushing meaning-preserving rewrites "
                  "down with the negatives: s(c) - s(c_p) would grow and c_p would fall below c_n. Claim (b) holds "
                  "only where that happens. The CSV holds one row per model and benchmark."])


def scores_value(ctx: ReportContext, method: str, key: str, stat: str) -> float:
    row = ctx.summ[(ctx.summ["method"] == method) & (ctx.summ["key"] == key)]
    return float(row[stat].iloc[0]) if len(row) else math.nan


def pooling_checks(ctx: ReportContext) -> list:
    """The catalog's REPLACE pooling check and delta check on the printed tables, and the pooling identity on the
    toy's metrics (``replace`` = instance-weighted mean of ``replace_att`` and ``replace_rel``)."""
    toy = []
    for model, g in ctx.long.groupby("model", sort=True):
        v = dict(zip(g["key"], g["value"], strict=True))
        for measure in ("orig", "aug", "brittleness"):
            ks = [f"hardpos/{p}/{x}" for p in ("replace_att", "replace_rel") for x in (measure, "n")]
            if all(k in v for k in ks) and f"hardpos/replace/{measure}" in v:
                n_a, n_r = v["hardpos/replace_att/n"], v["hardpos/replace_rel/n"]
                pooled = (v[f"hardpos/replace_att/{measure}"] * n_a + v[f"hardpos/replace_rel/{measure}"] * n_r) \
                    / (n_a + n_r)
                toy.append({"model": model, "measure": measure, "pooled": pooled,
                            "replace": v[f"hardpos/replace/{measure}"],
                            "|difference|": abs(pooled - v[f"hardpos/replace/{measure}"])})
    tdf = pd.DataFrame(toy, columns=["model", "measure", "pooled", "replace", "|difference|"])
    summary_row = pd.DataFrame([{"models checked": tdf["model"].nunique(),
                                 "max |pooled - replace|": tdf["|difference|"].max() if len(tdf) else math.nan}])
    return [("Printed: Table 7 re-pooled against Table 1", Table(P.replace_pooling_check(), legend=(
                "Printed numbers only: (Relations x 16,868 + Attributes x 10,575) / 27,443 against Table 1's "
                "REPLACE; agrees = within 0.1 points; equals_attributes = Table 1 prints the Attributes value. No "
                "spread: arithmetic on printed values."), notes=paper_notes(("HP-C8",))[:1])),
            ("Printed: every Δ against Aug - Orig of the rounded values", Table(P.delta_check(
                (*P.TABLE1, *P.TABLE3, *P.TABLE7, *P.TABLE8)), legend="Printed numbers only; off = the printed Δ "
                "differs from the difference of the printed (rounded) values.")),
            ("Toy: the pooling identity on every evaluated model", Table(summary_row, legend=(
                "The toy's REPLACE is pooled over its items (instance-weighted, the paper's rule); 0 up to float "
                "rounding.")))]


# --------------------------------------------------------------------------- Tables 4-6


def _hardpos_root(ctx: ReportContext) -> tuple[Path, Path] | None:
    from ....eval.inputs import read_manifest

    try:
        inputs = read_manifest(ctx.benchmarks_dir)
    except FileNotFoundError:
        return None
    if "hard_positives_dir" not in inputs:
        return None
    return Path(inputs["hard_positives_dir"]), Path(inputs.get("aro_images") or inputs["hard_positives_dir"])


def word_tables(ctx: ReportContext, artifact: str) -> list | None:
    """One of HP-T4 / T5 / T6: the toy's map entries of its word types with their frequencies in the REPLACE twin,
    the paper's table as printed, and what the world cannot express; None without the twin's files."""
    roots = _hardpos_root(ctx)
    if roots is None:
        return None
    hp_map = words.toy_map(ctx.params)
    try:
        freq = words.frequencies(roots[0], hp_map)
    except FileNotFoundError:
        return None
    toy = words.toy_word_table(freq, artifact)
    setting = words.synonyms_setting(ctx.params)
    what = {"HP-T4": "relations", "HP-T5": "colours (the paper's Table 5: actions and colours)",
            "HP-T6": "sizes (the paper's Table 6: sizes and states)"}[artifact]
    toy_legend = (f"The toy's fixed map (`hard_positive_map('{setting}')` of `world.captions.synonyms`), its {what}; "
                  "frequency = items of the REPLACE twin's files whose hard positive that entry makes "
                  "(`vlcomp.formats.hardpos.load_benchmark`), with the first such item's O / HP / HN. Counts of one "
                  "twin: no spread.")
    printed = words.printed_word_table(artifact)
    out = [(f"Toy: the map's {what.split(' (')[0]} and their frequency", Table(toy, legend=toy_legend)),
           ("Paper: as printed (frequency in the released REPLACE files; one example each)",
            Table(printed, legend="Printed values only, as printed; the example captions from the catalog.",
                  notes=paper_notes((artifact,)))),
           ("What the toy world cannot express", Table(words.not_expressible(artifact), legend=(
               "From `vlcomp.twins.hardpos.NOT_EXPRESSIBLE`: the paper's word types with no counterpart in the "
               "closed vocabulary.")))]
    if artifact == "HP-T6":
        out.append(("Printed frequencies summed per type, against the stated set sizes",
                    Table(P.frequency_sums(), legend="Printed numbers only (catalog §2.2: 23 listed attributes sum "
                                                     "to 10,572, the text says 24 and 10,575).")))
    return out


def missing_twin(ctx: ReportContext) -> str:
    return (f"No REPLACE / SWAP twin under `{ctx.benchmarks_dir}` yet (`manifest.json` input `hard_positives_dir`; "
            "stage `benchmarks`).")


# --------------------------------------------------------------------------- Figures


def _chain_models(ctx: ReportContext, method: str) -> str | None:
    """``method``'s model on its first chain (b0 for the default bases), or None when it has no run."""
    found = chains(ctx.long, method)
    if not found:
        return None
    c = found[0]
    sub = ctx.long[(ctx.long["method"] == method) & (ctx.long["base"] == c.base) & (ctx.long["seed"] == c.seed)]
    return str(sub["model"].iloc[0])


def figure_models(ctx: ReportContext) -> list[tuple[str, str, str]] | None:
    """(method, label, model on chain b0) of CLIP, the DAC-LLM stand-in and HP+HN; None when one has no run."""
    hn = hn_stand_in(ctx)
    out = []
    for m in (BASE_METHOD, hn, K.HPHN):
        model = _chain_models(ctx, m) if m else None
        if model is None:
            return None
        out.append((m, ctx.all_methods.label(m), model))
    return out


def _selection(ctx: ReportContext):
    got = figure_models(ctx)
    if got is None:
        return None
    tables_by = {}
    for t in scores.TABLES:
        read = [scores.read_items(ctx.metrics_dir, model, t) for _, _, model in got]
        if all(x is not None for x in read):
            tables_by[t] = read
    if not tables_by:
        return None
    return got, tables_by, scores.select(tables_by)


def score_figure(ctx: ReportContext, artifact: str) -> list | None:
    """HP-F1 or HP-F3: per slot, the chosen item's score table (toy), the paper's printed table beside, and one
    figure of the items' cards; None without the three models' item tables on chain b0."""
    sel = _selection(ctx)
    if sel is None:
        return None
    got, tables_by, chosen = sel
    labels = [label for _, label, _ in got]
    examples = [e for e, ex in P.FIGURE_EXAMPLES.items() if ex.artifact == artifact]
    roots = _hardpos_root(ctx)
    blocks: list = [("", scores.SELECTION_RULE + " Models: " + ", ".join(f"{label} (`{model}`)"
                                                                            for _, label, model in got)
                     + ". " + STAND_IN_RULE)]
    cards = []
    slots = [s for s in chosen if s["artifact"] == artifact]
    for slot, example in zip(slots, examples, strict=True):
        pos = slot["position"]
        if slot["index"] is None:
            blocks.append((f"{pos}: no item on chain b0 has the pattern", "Pattern: " + slot["pattern"] + "."))
        else:
            three = tables_by[slot["table"]]
            df = scores.score_rows(three, labels, slot["part"], slot["index"])
            blocks.append((f"{pos} (toy): {slot['part']} item {slot['index']}", Table(
                df, legend=f"Raw cosines (no logit scale) of the three models on chain b0, from their item tables. "
                           f"Pattern: {slot['pattern']}. One item: no spread.")))
            row = three[0][(three[0]["part"] == slot["part"]) & (three[0]["index"] == slot["index"])].iloc[0]
            image = figures.load_image(row, *roots) if roots else None
            short = dict(zip(labels, ("CLIP", "HN model", "HP+HN"), strict=True))
            cards.append(figures.Card(f"{pos}: {slot['part']} #{slot['index']}", image, [*figures.score_lines(
                [("c", row["caption"]), ("c_n", row["negative"]), ("c_p", row["positive"])],
                {short[label]: list(df[label]) for label in labels}), f"HN model = {labels[1]}"]))
        blocks.append((f"{pos} (paper, as printed)", Table(P.figure_frame(example), legend=(
            f"Printed scores ({P.FIGURE_EXAMPLES[example].kind}); the paper's hard-negative column is "
            f"{'DAC-LLM' if artifact == 'HP-F3' else 'a DAC model (variant unspecified)'}."),
            notes=paper_notes((artifact,)))))
    if cards:
        fig = figures.cards_figure(cards, columns=2 if len(cards) > 1 else 1)
        blocks.append(("", Figure(fig, legend="The chosen items' images from the twin (SWAP cropped to its box, as "
                                              "scored) and the three models' raw scores on chain b0. One run each: "
                                              "no spread.")))
    return blocks


def missing_items(ctx: ReportContext) -> str:
    return ("No REPLACE / SWAP item tables of CLIP, the DAC-LLM stand-in and Our HP+HN on chain b0 yet "
            "(`metrics/<model>/items/{replace,swap}.parquet`).")


def _cases(ctx: ReportContext):
    from ....formats.hardpos import load_benchmark

    roots = _hardpos_root(ctx)
    if roots is None:
        return None
    try:
        return roots, {p: load_benchmark(roots[0], p) for p in ("replace_att", "replace_rel", "swap")}
    except FileNotFoundError:
        return None


def _card(case, part: str, roots, title: str) -> figures.Card:
    row = {"part": part, "index": case.index, "image_path": case.image_path, "caption": case.caption,
           "positive": case.positive, "negative": case.negative, "image_id": case.image_id}
    if case.box is not None:
        row |= dict(zip(("bbox_x", "bbox_y", "bbox_w", "bbox_h"), case.box, strict=True))
    return figures.Card(title, figures.load_image(row, *roots),
                        figures.caption_lines(case.caption, case.negative, case.positive))


PART_NAMES = {"replace_att": "REPLACE Attributes", "replace_rel": "REPLACE Relations", "swap": "SWAP"}


def f2(ctx: ReportContext) -> list | None:
    """HP-F2: the example cards of the two sets, with their sizes: item 0 of each part's file (a fixed rule)."""
    got = _cases(ctx)
    if got is None:
        return None
    roots, cases = got
    cards = [_card(cases[p][0], p, roots, f"{PART_NAMES[p]} (x{len(cases[p]):,})") for p in cases]
    paper = pd.DataFrame([
        {"card": "REPLACE (x27,443)", "c": "fabric on black table", "c_n": "fabric on white table",
         "c_p": "fabric on ebony table"},
        {"card": "SWAP (x28,748)", "c": "the black cat and the carpeted floor",
         "c_n": "the carpeted cat and the black floor", "c_p": "the carpeted floor and the black cat"}])
    return [("", Figure(figures.cards_figure(cards, columns=3), legend=(
                "Item 0 of each twin file (a fixed rule, not a choice by eye), its image as scored (SWAP: cropped to "
                "its box) and its three captions; x N = the part's size in the twin. No scores, no spread."))),
            ("Paper's cards (text of the repository's dataset_figure.jpg)", Table(paper, legend=(
                "As the catalog transcribes them; images not reproduced.")))]


F4_COUNTS = (("replace_rel", 2), ("replace_att", 1), ("swap", 3))


def f4(ctx: ReportContext) -> list | None:
    """HP-F4: random samples (2 REPLACE Relations, 1 Attributes, as the paper's; 3 SWAP, the paper's number is
    lost), drawn without replacement with a generator seeded from ``root_seed``."""
    got = _cases(ctx)
    if got is None:
        return None
    roots, cases = got
    rng = np_rng(ctx.seed, "report", NAME, "F4")
    cards, rows = [], []
    for part, k in F4_COUNTS:
        picked = sorted(rng.choice(len(cases[part]), size=min(k, len(cases[part])), replace=False).tolist())
        for i in picked:
            c = cases[part][i]
            cards.append(_card(c, part, roots, f"{PART_NAMES[part]} #{c.index}"))
            rows.append({"part": part, "index": c.index, "c": c.caption, "c_n": c.negative, "c_p": c.positive,
                         "image": c.image_path})
    return [("", Figure(figures.cards_figure(cards, columns=3), legend=(
                "Random samples of the twins, drawn without replacement (numpy, seeded from root_seed and "
                "'report/hard_positives/F4'): 2 REPLACE Relations + 1 Attributes as the paper's, 3 SWAP (the paper's "
                "count did not survive the extraction). Samples, no spread."))),
            ("The samples", Table(pd.DataFrame(rows), legend="The drawn items, as in the twin's files."))]


# --------------------------------------------------------------------------- in-text numbers, data, methods


def numbers(ctx: ReportContext) -> Table:
    df = derived.derived_table(ctx.summ, ctx.all_methods)
    return Table(df, derived.shown(df), legend=(
        "Toy: the paper's arithmetic over the toy's rows, on the chain means (drops = -(Aug - Orig) in points; s(c) "
        "reductions in raw cosine); prior models = NegCLIP, SVLC, SVLC+Pos (the toy has no CREPE or DAC); "
        "toy: over = the rows and their chains. Printed = the paper's number; catalog = the catalog's "
        "recomputation from the printed tables (`printed.derived_numbers`)."),
        notes=paper_notes(("HP-N1", "HP-N4")))


def n5(ctx: ReportContext) -> str:
    return derived.N5_TEXT


def twins(ctx: ReportContext) -> Table | None:
    df = data.twin_sizes(ctx.benchmarks_dir)
    if df is None:
        return None
    shown = df.astype(object)
    shown["toy images"] = [f"{int(v):,}" if pd.notna(v) else ("not counted (the manifest counts REPLACE's images)"
                                                              if p == "SWAP" else "counted for the pooled set")
                           for p, v in zip(df["part"], df["toy images"], strict=True)]
    return Table(df, shown, legend=("Counted in the twins' pair files (`<benchmarks>/hardpos`); images from the benchmarks "
                             "manifest. The twin keeps the paper's Relations : Attributes ratio (the pooled REPLACE "
                             "weighs the parts as the paper does). Counts: no spread."),
                 notes=paper_notes(("HP-D1",)))


def generator(ctx: ReportContext) -> Table | None:
    df = data.generator_table(ctx.mined_root, ctx.params)
    if df is None:
        return None
    missing = data.missing_summaries(ctx.mined_root, ctx.params)
    return Table(df, data.generator_shown(df, ctx.mined_root, ctx.params), legend=("From each `mine@<key>` run of the `hardpos` generator: `data/mined/<key>/summary.json` "
                             "(also logged to MLflow, experiment of the mine stage), keys `mine/hardpos/...`; shares "
                             "of all captions unless said. Run once for every chain: no spread."
                             + (f" Not produced yet: {', '.join(missing)}." if missing else "")),
                 notes=paper_notes(("HP-D3", "HP-D4")))


def missing_generator(ctx: ReportContext) -> str:
    return ("No `mine` entry of the `hardpos` generator in params yet (`mine.<g>` with `generator: hardpos`, run by "
            "`mining.<key>`), so there is no training-data summary to show.")


def methods_section(ctx: ReportContext) -> list:
    return [("", Table(data.methods_table(ctx.params), legend=(
                "As params define them (`methods.<m>`); `not in params`: the method is not defined yet. Settings: "
                "no spread."), notes=paper_notes(("HP-M2", "HP-M5")))),
            ("The loss (the catalog §3.4 reconstruction, `vlcomp.losses.hardpos`)", data.loss_markdown()),
            ("AMBIGUOUS choices", data.ambiguous_markdown(ctx.params))]


# --------------------------------------------------------------------------- claims


def evidence(ctx: ReportContext) -> scores.HardPosEvidence:
    return scores.HardPosEvidence(ctx.long, ctx.metrics_dir, Bootstrap(seed=ctx.seed))


def ledger(ctx: ReportContext) -> tuple[list[Claim], Table]:
    if ctx.built_ledger is not None:
        return ctx.built_ledger
    from .. import PAPERS

    ev = evidence(ctx)
    cl = PAPERS.get(NAME).claims(ev, ctx.all_methods)
    ids = [f"HP-{c.id}" for c in cl]
    ctx.built_ledger = (cl, report_ledger(ev, cl, ctx.all_methods, [K.THRESHOLDS, *paper_notes(ids)]))
    return ctx.built_ledger


# --------------------------------------------------------------------------- provenance, deviations


def provenance_table(ctx: ReportContext) -> Table:
    shown = set(ctx.all_methods.order)
    df = provenance(ctx.long) if len(ctx.long) else pd.DataFrame()
    if len(df):
        df = df[df["method"].isin(shown)].reset_index(drop=True)
    return Table(df, legend=PROVENANCE_LEGEND)


def deviations_markdown(ctx: ReportContext) -> str:
    twins_opts = ((ctx.params.get("benchmarks") or {}).get("twins") or {}).get("hardpos") or {}
    seeds = ctx.params.get("seeds") or {}
    first = [ctx.all_methods.label(m) for m in ctx.methods.order[1:]
             if isinstance(seeds.get(m), dict) and seeds[m].get("chains") == "first"]
    return "\n".join([
        "- **Benchmarks**: REPLACE and SWAP are toy twins of the released files (`vlcomp.twins.hardpos`), built from "
        f"the `vg_test` scenes: REPLACE {twins_opts.get('replace_att_items', '?')} Attributes + "
        f"{twins_opts.get('replace_rel_items', '?')} Relations items (the paper's ratio), SWAP = the ARO "
        "VG-Attribution twin with its phrases reordered. Their hard positives are exact on the scene graph.",
        f"- **Replacement map**: the world's synonyms (`world.captions.synonyms: {words.synonyms_setting(ctx.params)}`"
        ") where they exist, the converse relation with the arguments swapped elsewhere (HP-T4-T6).",
        "- **Models**: the chain's tiny CLIP (`clip.arch`) stands for CLIP ViT-B/32; the paper's methods fine-tune it "
        "on the `coco_train` twin with the `hardpos` generator's positives and negatives (HP-D3 / D4) and the "
        "reconstructed loss (HP-M).",
        "- **Prior hard-negative models**: NegCLIP (ARO's) and TSVLC's RB+LLM Negs / Combined for SVLC / SVLC+Pos; "
        "CREPE and DAC have no toy counterpart (paper-only rows); DAC-LLM's role in Table 2 and Figures 1 / 3 is "
        "taken by the most brittle of the toy's prior models on REPLACE (a stated rule).",
        "- **Chains**: every method on every base seed unless params run it on the first chain only"
        + (f" ({', '.join(first)}: *1 chain (b0)*, no spread)" if first else "") + ".",
        "- **Table 10**: the ImageNet twin for IN-1k, the ELEVATER twin's mean for VTAB, the Karpathy twins for "
        "COCO / Flickr30k retrieval.",
        "- **Human estimate**: not run (HP-N5).",
    ])
