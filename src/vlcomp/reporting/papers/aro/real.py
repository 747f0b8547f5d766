"""ARO's tables on the real profile's page: long comparison tables over the metrics tree
(:mod:`vlcomp.reporting.tree`, rows built by :mod:`vlcomp.reporting.comparison`), next to ARO's printed numbers.
The page is declared in :mod:`.report` (:data:`~.report.REAL_REPORT`).

:func:`load` reads the real profile's tree matched with ARO's printed values; :func:`t6`, :func:`t2`,
:func:`x1` and :func:`order_table` are Tables 6, 2, the in-text VG-Attribution numbers and Tables 5 / 6's Order
rows; :func:`intro_markdown` says where the numbers come from, :func:`deviations_markdown` what this profile
does differently. Metric keys are those of :mod:`vlcomp.benchmarks`.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd

from ....benchmarks.aro import ORDER_METRIC_NAME
from ....benchmarks.retrieval import RETRIEVAL_METRIC_NAME
from ....config import BASE_METHOD
from ....eval.common import key_part
from ....metrics.aro import VG_RELATION_GROUP_OF
from ...collect import methods_of
from ...comparison import comparison_frame, comparison_rows, first_paper_cell, paper_cell
from ...paper_values import MACRO_GROUPS, PAPER_FILES, load_paper_values, lookup
from ...tree import (
    PIPELINE,
    REAL_PROFILE,
    RELEASED,
    RELEASED_SUBDIR,
    MetricsTree,
    ModelResult,
    read_params,
    read_tree,
)
from . import NAME
from .tables import T6_ROWS

VG_DATASETS: tuple[str, ...] = ("vg_relation", "vg_attribution")
VG_R = "aro/vg_relation"
REL_KEY = re.compile(rf"^{VG_R}/rel/(?P<rel>.+)/acc$")
#: ARO Table 6's zero-shot datasets (benchmark ``zeroshot_aro``)
ZEROSHOT_ARO_TASKS = ("cifar10", "cifar100", "imagenet")


def load(metrics_dir: str | Path, params_path: str | Path, models_dir: str | Path = "models") -> MetricsTree:
    """The real profile's metrics tree, its models matched with ARO's printed values."""
    from .. import paper_scope

    models = paper_scope(read_params(params_path), NAME).models
    return read_tree(metrics_dir, params_path, models_dir, paper_values=load_paper_values(NAME),
                     profile=REAL_PROFILE, models=models)


def _released(tree: MetricsTree) -> list[ModelResult]:
    return [m for m in tree.models if m.source == RELEASED]


def intro_markdown(tree: MetricsTree) -> str:
    """The real profile's introduction to ARO's tables: where the numbers come from (ARO's printed values among
    them), ARO's methods, and how many folders were ignored. Which models are present or missing is the page's
    runs table (:func:`vlcomp.reporting.scaffold.tree_runs_table`)."""
    params = tree.params or {}
    ours = methods_of(params, NAME)  # the base model, then ARO's methods of params
    methods = {m: (params.get("methods") or {})[m] for m in ours.order if m != BASE_METHOD}
    lines = [
        f"**Profile:** `{tree.profile}`: real weights and real data. The base model (`{BASE_METHOD}-b<k>`, one per "
        "base seed) is OpenAI CLIP as resolved by the pretrain stage, ARO's fine-tuned variants (NegCLIP, CLIP-FT) "
        "are trained by this pipeline on it (whole chains: base -> mining -> LR selection -> fine-tune), and the "
        "released checkpoints are the papers' own weights evaluated as they are; all are scored on the released "
        "benchmark files by `vlcomp.benchmarks`. Reproduced numbers are read from "
        f"`{tree.metrics_dir}/<model>/metrics.json` (source *pipeline*) and "
        f"`{tree.metrics_dir}/{RELEASED_SUBDIR}/<model>/metrics.json` (source *released*); the paper's numbers "
        f"from `vlcomp/data/{PAPER_FILES[NAME]}` (the other papers' from their own files beside it, "
        "`vlcomp/data/printed/<paper>.csv`). *difference* = reproduced - paper.",
        "",
    ]
    if not tree.present():
        lines += [f"**No {tree.profile}-profile metrics found under `{tree.metrics_dir}`.** No folder there has a "
                  f"`provenance.json` with `\"profile\": \"{tree.profile}\"`, so every reproduced cell below is "
                  "empty (run the real profile's evaluate stages and `scripts/evaluate_released.py` first).", ""]
    n_pipe, n_rel = len(tree.models) - len(_released(tree)), len(_released(tree))
    lines.append(f"- Evaluated: {len(tree.present(PIPELINE))} of {n_pipe} pipeline models and "
                 f"{len(tree.present(RELEASED))} of {n_rel} released checkpoints (the runs table names them).")
    if methods:
        lines.append("- ARO's fine-tuning methods (params `methods`): " + "; ".join(
            f"`{name}` ({', '.join(f'{k}={v}' for k, v in (spec or {}).items())})" for name, spec in methods.items())
            + ". A method (the base model included) with two or more whole-chain runs also gets a mean row: mean ± "
            "sample std over its chains (base seed x fine-tuning seed).")
    if not tree.params:
        lines.append(f"- No params read from `{tree.params_path}` (missing or empty): no variants or released "
                     "checkpoints are expected, only folders found are listed.")
    if tree.ignored:
        lines.append(f"- {len(tree.ignored)} folder{'s' * (len(tree.ignored) > 1)} with a metrics.json ignored "
                     f"(not {tree.profile}-profile): [ignored folders](#ignored_folders).")
    return "\n".join(lines)


def deviations_markdown(tree: MetricsTree) -> str:
    """What this profile does differently from the paper, from params."""
    params = tree.params or {}
    seeds = params.get("seeds") or {}
    ft = params.get("finetune") or {}
    ours = [m for m in methods_of(params, NAME).order if m != BASE_METHOD]
    runs = ", ".join(f"`{m}`: {len(seeds.get(m) or [])} fine-tuning seed(s)" for m in ours) or "none in params"
    return "\n".join([
        f"- **Runs.** One whole chain per row unless params say otherwise ({runs}; base seeds "
        f"{params.get('base_seeds', [0])}). A row of one run has no spread, so this page compares each number with "
        "the printed one and judges no claim (the toy profile's ledger does, over 3 chains).",
        f"- **Learning rate.** Selected by COCO-val retrieval over `finetune.lr_grid` = {ft.get('lr_grid', '?')} "
        f"({ft.get('sweep_epochs', '?')} sweep epochs), then {ft.get('epochs', '?')} epochs at batch "
        f"{ft.get('batch_size', '?')}: the paper's grid and length (catalog, the NegCLIP recipe).",
        "- **Zero-shot rows of Table 6** are reproduced only when `real_inputs` gives image-folder exports of "
        "CIFAR10 / CIFAR100 / ImageNet; otherwise their cells stay empty beside the printed value.",
        "- **Symmetric relations** are kept in VG-Relation and excluded from its macro average, as the ARO code does "
        "(ARO-X2 in the notes under Table 2).",
    ])


def metric_key(dataset: str, metric: str) -> str | None:
    """The :mod:`vlcomp.benchmarks` key of a printed (dataset, metric); None for a dataset no benchmark scores."""
    if dataset in VG_DATASETS or dataset in ORDER_METRIC_NAME.values():
        return f"aro/{dataset}/{metric}"
    if dataset in RETRIEVAL_METRIC_NAME.values():
        return f"retrieval/{dataset}/{metric}"
    if dataset in ZEROSHOT_ARO_TASKS:
        return f"zeroshot/{dataset}/{metric}"
    return None


def vg_relation_macro_key(group: str) -> str:
    """``overall`` -> ``aro/vg_relation/macro_acc``; ``spatial`` -> ``aro/vg_relation/spatial_macro_acc``."""
    return f"{VG_R}/macro_acc" if group == "overall" else f"{VG_R}/{group}_macro_acc"


def relations(tree: MetricsTree) -> list[tuple[str, str, str]]:
    """(relation, metric key, Table 2 section) for every relation of the paper's Table 2 or of any present
    model's metrics, ordered by section (spatial, verbs, other) then name."""
    p = tree.paper_values
    names = set(p.loc[(p["artifact"] == "ARO-T2") & (p["metric"] == "acc"), "group"])
    by_part = {key_part(n): n for n in (*VG_RELATION_GROUP_OF, *names)}
    for m in tree.present():
        for k in m.metrics:
            hit = REL_KEY.match(k)
            if hit:
                names.add(by_part.get(hit["rel"], hit["rel"]))
    order = {g: i for i, g in enumerate(dict.fromkeys(VG_RELATION_GROUP_OF.values()))}
    rows = [(n, f"{VG_R}/rel/{key_part(n)}/acc", VG_RELATION_GROUP_OF.get(n, "other")) for n in names]
    return sorted(rows, key=lambda r: (order.get(r[2], len(order)), r[0]))


def t2(tree: MetricsTree) -> pd.DataFrame:
    """ARO-T2: VG-Relation macro rows (overall, spatial, verbs) for every model, then per-relation accuracy for
    every present model; paper columns from Table 2 (and its sample counts)."""
    p, rows = tree.paper_values, []
    for group in MACRO_GROUPS:
        fields = {"section": group, "relation": f"macro ({group})", "paper_n_samples": math.nan}
        rows += comparison_rows(tree.models, fields, vg_relation_macro_key(group),
                                lambda pm, g=group: paper_cell(p, "ARO-T2", "vg_relation", pm, "macro_acc", g))
    for rel, key, section in relations(tree):
        n = lookup(p, "ARO-T2", "vg_relation", "", "n_samples", rel)
        fields = {"section": section, "relation": rel, "paper_n_samples": math.nan if n is None else n}
        rows += comparison_rows(tree.present(), fields, key,
                                lambda pm, r=rel: paper_cell(p, "ARO-T2", "vg_relation", pm, "acc", r))
    return comparison_frame(rows, ("section", "relation", "paper_n_samples"))


def x1(tree: MetricsTree) -> pd.DataFrame:
    """ARO-X1: VG-Attribution macro accuracy per model, next to the paper's in-text numbers."""
    key = metric_key("vg_attribution", "macro_acc")
    rows = comparison_rows(tree.models, {"task": "VG-Attribution"}, key,
                           lambda pm: paper_cell(tree.paper_values, "ARO-X1", "vg_attribution", pm, "macro_acc"))
    return comparison_frame(rows, ("task",))


def t6(tree: MetricsTree) -> pd.DataFrame:
    """ARO-T6: every row of Table 6, under the one metric key both profiles write. The zero-shot rows are
    reproduced when ``zeroshot_aro`` ran (image-folder exports of CIFAR10/100 and ImageNet in ``real_inputs``),
    else they keep the paper's value with the note that the metric is missing."""
    rows = []
    for group, task, key, dataset, metric in T6_ROWS:
        rows += comparison_rows(tree.models, {"group": group, "task": task}, key,
                                lambda pm, d=dataset, mt=metric: paper_cell(tree.paper_values, "ARO-T6", d, pm, mt))
    return comparison_frame(rows, ("group", "task"))


def order_table(tree: MetricsTree) -> pd.DataFrame:
    """COCO / Flickr30k-Order accuracy (mean over order seeds, with its std over them) per model; paper values from
    Table 5 (with std) where printed, else Table 6."""
    rows = []
    for dataset in ORDER_METRIC_NAME.values():
        key = metric_key(dataset, "acc")
        rows += comparison_rows(
            tree.models, {"dataset": dataset}, key,
            lambda pm, d=dataset: first_paper_cell(tree.paper_values, ("ARO-T5", "ARO-T6"), d, pm, "acc"),
            extra=lambda m, k=key, d=dataset: {"std_over_order_seeds": m.value(f"{k}_std"),
                                               "n_order_seeds": m.value(metric_key(d, "n_seeds"))})
    return comparison_frame(rows, ("dataset",), ("std_over_order_seeds", "n_order_seeds"))
