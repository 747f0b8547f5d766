"""ARO's tables in the toy report: every artifact of catalog §7 from the collected metrics, next to the paper's
printed value.

Each table is built long and numeric (:func:`long_rows`: one row per table row and model with ``mean``, ``spread``
and ``n`` over the model's whole chains, the printed ``paper`` value and ``paper_std``, ``difference``; the CSV),
then pivoted for reading (:func:`shown_wide`: ``<model> (toy)`` cells ``mean ± spread`` next to ``<model> (paper)``
in one model order, the report's methods first, then the models the paper alone prints). Where a benchmark also
reports a spread over its perturbation seeds (Order, shuffled retrieval), it is a separate column, labelled.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ....benchmarks.retrieval import metric_key as retrieval_key
from ...blind import BLIND_RUNS, BLIND_SOURCE, BlindResult, blind_values
from ...collect import Methods, value
from ...paper_values import lookup
from ...render import cell, printed

PAPER_ONLY = ("blip", "xvlm", "flava")
TOY, PAPER_ONLY_SOURCE = "toy", "paper only"
NOTE_PAPER_ONLY = "the paper's number only (no such model here)"

# (group, task label, our metric key, paper dataset, paper metric)
T6_ROWS = (
    ("Compositional", "VG-Relation", "aro/vg_relation/macro_acc", "vg_relation", "macro_acc"),
    ("Compositional", "VG-Attribution", "aro/vg_attribution/macro_acc", "vg_attribution", "macro_acc"),
    ("Compositional", "Flickr30k-PRC", "aro/flickr30k_order/acc", "flickr30k_order", "acc"),
    ("Compositional", "COCO-PRC", "aro/coco_order/acc", "coco_order", "acc"),
    ("Downstream", "CIFAR10", "zeroshot/cifar10/acc", "cifar10", "acc"),
    ("Downstream", "CIFAR100", "zeroshot/cifar100/acc", "cifar100", "acc"),
    ("Downstream", "ImageNet", "zeroshot/imagenet/acc", "imagenet", "acc"),
    ("Downstream", "Flickr30k Image R@1", "retrieval/flickr30k/t2i/recall_at_1", "flickr30k", "t2i/recall_at_1"),
    ("Downstream", "Flickr30k Text R@1", "retrieval/flickr30k/i2t/recall_at_1", "flickr30k", "i2t/recall_at_1"),
    ("Downstream", "COCO Image R@1", "retrieval/coco/t2i/recall_at_1", "coco", "t2i/recall_at_1"),
    ("Downstream", "COCO Text R@1", "retrieval/coco/i2t/recall_at_1", "coco", "i2t/recall_at_1"),
)
RETRIEVAL_METRICS = (("Text R@1", "i2t/recall_at_1"), ("Text R@5", "i2t/recall_at_5"),
                     ("Image R@1", "t2i/recall_at_1"), ("Image R@5", "t2i/recall_at_5"))
TEXT_STRATEGY_LABELS = {"none": "No Shuffling", "shuffle_nouns_and_adj": "Shuffle only nouns and adj.",
                        "shuffle_all_words": "Shuffle all words", "shuffle_allbut_nouns_and_adj": "Shuffle all but nouns and adj.",
                        "shuffle_trigrams": "Shuffle trigrams", "shuffle_within_trigrams": "Shuffle within Trigrams"}
IMAGE_STRATEGY_LABELS = {"none": "No Shuffling", "shuffle_rows_4": "Shuffle Rows (4)",
                         "shuffle_cols_4": "Shuffle Columns (4)", "shuffle_patches_9": "Shuffle Patches (9)"}
DATASET_LABEL = {"coco": "COCO", "flickr30k": "Flickr30k"}
ORDER_ROWS = (("flickr30k_order", "Flickr30k-PRC", "aro/flickr30k_order/acc"),
              ("coco_order", "COCO-PRC", "aro/coco_order/acc"))
ORDER_CHANCE = 0.2  # one of five captions
PERTURBATION = "perturbation sd"
#: Columns of every long table after its own fields.
LONG_COLUMNS = ("model", "method", "source", "metric_key", "mean", "spread", "n", "perturbation_std", "paper",
                "paper_std", "difference", "note")

PaperFn = Callable[[str], tuple[float, float] | None]  # method or paper model -> (value, std) printed, or None


def printed_cell(paper: pd.DataFrame, artifact: str, dataset: str, metric: str, group: str = "") -> PaperFn:
    """The printed (value, std) of one cell of ``artifact`` for a model, or None (std NaN when none printed)."""
    def fn(model: str) -> tuple[float, float] | None:
        v = lookup(paper, artifact, dataset, model, metric, group)
        if v is None:
            return None
        s = lookup(paper, artifact, dataset, model, metric, group, column="std")
        return v, math.nan if s is None else s
    return fn


def long_rows(summ: pd.DataFrame, methods: Methods, fields: Mapping[str, Any], key: str | None, paper_fn: PaperFn,
              paper_only: Sequence[str] = PAPER_ONLY, perturbation_key: str | None = None) -> list[dict[str, Any]]:
    """One numeric row per model for one table row: the report's methods (mean, spread and n over their chains;
    ``perturbation_std``: the mean over chains of ``perturbation_key``), then ``paper_only`` models (the printed
    number alone)."""
    rows = []
    for m in (*methods.order, *paper_only):
        printed_value = paper_fn(m)
        p, ps = printed_value if printed_value else (math.nan, math.nan)
        if m in methods:
            mean = value(summ, m, key) if key else math.nan
            n = value(summ, m, key, "n") if key else math.nan
            row = {"source": TOY, "mean": mean, "spread": value(summ, m, key, "std") if key else math.nan,
                   "n": 0 if math.isnan(n) else n,
                   "perturbation_std": value(summ, m, perturbation_key) if perturbation_key else math.nan,
                   "difference": mean - p, "note": "" if not math.isnan(mean) else "no reproduced value"}
        else:
            if printed_value is None:
                continue
            row = {"source": PAPER_ONLY_SOURCE, "mean": math.nan, "spread": math.nan, "n": 0,
                   "perturbation_std": math.nan, "difference": math.nan, "note": NOTE_PAPER_ONLY}
        rows.append({**fields, "model": methods.label(m), "method": m, "metric_key": key or "", **row,
                     "paper": p, "paper_std": ps})
    return rows


def blind_rows(blind: Sequence[BlindResult], fields: Mapping[str, Any], key: str | None,
               perturbation_key: str | None = None) -> list[dict[str, Any]]:
    """One numeric row per blind-text reader that has ``key`` (:mod:`vlcomp.reporting.blind`: scene-graph counts, no
    image, no training): its value, no spread and no n (it is no run over chains), no paper value."""
    return [{**fields, "model": b.label, "method": b.name, "source": BLIND_SOURCE, "metric_key": key or "", "mean": v,
             "spread": math.nan, "n": math.nan,
             "perturbation_std": b.value(perturbation_key) if perturbation_key else math.nan, "paper": math.nan,
             "paper_std": math.nan, "difference": math.nan, "note": BLIND_RUNS} for b, v in blind_values(blind, key)]


def long_frame(rows: list[dict[str, Any]], fields: Iterable[str]) -> pd.DataFrame:
    """The rows as the table's CSV: numbers in their own columns, ``n`` an integer (empty where it means nothing)."""
    df = pd.DataFrame(rows, columns=[*fields, *LONG_COLUMNS])
    return df.astype({"n": "Int64"})


def shown_wide(long: pd.DataFrame, index: Sequence[str], across: str, perturbation: bool = False) -> pd.DataFrame:
    """A long table for reading: one row per ``index`` value, and per ``across`` value (in order of appearance) a
    ``(toy)`` column (``mean ± spread``; ``(n=1)`` for a single run; ``paper only`` where the model is the paper's
    alone), a ``(toy, perturbation sd)`` column when ``perturbation``, and a ``(paper)`` column (as printed)
    where the paper prints any value of it."""
    index = list(index)
    keys = list(dict.fromkeys(long[across]))
    has_toy = {k: bool(long.loc[long[across] == k, "source"].isin([TOY, BLIND_SOURCE]).any()) for k in keys}
    has_paper = {k: bool(long.loc[long[across] == k, "paper"].notna().any()) for k in keys}
    columns: list[str] = []
    for k in keys:
        columns += [f"{k} (toy)"] * has_toy[k] + [f"{k} (toy, {PERTURBATION})"] * (has_toy[k] and perturbation)
        columns += [f"{k} (paper)"] * has_paper[k]
    rows: dict[tuple, dict[str, Any]] = {}
    for r in long.to_dict("records"):
        row = rows.setdefault(tuple(str(r[c]) for c in index), {c: r[c] for c in index})
        k = r[across]
        if has_toy[k]:
            row.setdefault(f"{k} (toy)", "paper only" if r["source"] == PAPER_ONLY_SOURCE
                           else cell(r["mean"], r["spread"], r["n"]))
            if perturbation:
                row.setdefault(f"{k} (toy, {PERTURBATION})", "" if r["source"] == PAPER_ONLY_SOURCE
                               else cell(r["perturbation_std"]))
        if has_paper[k]:
            row.setdefault(f"{k} (paper)", printed(r["paper"], r["paper_std"]))
    return pd.DataFrame(list(rows.values()), columns=[*index, *columns]).fillna("")


# --------------------------------------------------------------------------- the tables


def table_t6(summ: pd.DataFrame, paper: pd.DataFrame, methods: Methods,
             blind: Sequence[BlindResult] = ()) -> pd.DataFrame:
    """ARO-T6, long: every row of Table 6 for every method; the blind-text ceiling beside them on the compositional
    rows (the choice tasks it reads)."""
    rows = []
    for group, task, key, ds, metric in T6_ROWS:
        fields = {"artifact": "ARO-T6", "group": group, "task": task}
        rows += long_rows(summ, methods, fields, key, printed_cell(paper, "ARO-T6", ds, metric), paper_only=())
        rows += blind_rows(blind, fields, key)
    return long_frame(rows, ("artifact", "group", "task"))


def table_t2(summ: pd.DataFrame, paper: pd.DataFrame, n_cases: dict[str, int], groups: dict[str, str],
             methods: Methods, blind: Sequence[BlindResult] = ()) -> pd.DataFrame:
    """ARO-T2, long: the macro rows, then per-relation accuracy of the toy models and of the blind-text ceiling;
    the paper's numbers where a toy relation has a Table 2 twin (and its sample count)."""
    rows = []
    macro = (("Accuracy (overall, macro)", "aro/vg_relation/macro_acc", "overall"),
             ("Accuracy (spatial, macro)", "aro/vg_relation/spatial_macro_acc", "spatial"),
             ("Accuracy (verbs, macro)", "aro/vg_relation/verbs_macro_acc", "verbs"))
    for label, key, pgroup in macro:
        fields = {"relation": label, "relation group": "macro", "toy cases": math.nan, "paper samples": math.nan}
        rows += long_rows(summ, methods, fields, key, printed_cell(paper, "ARO-T2", "vg_relation", "macro_acc", pgroup))
        rows += blind_rows(blind, fields, key)
    for rel in sorted(n_cases, key=lambda r: (groups.get(r, "~"), r)):
        key = f"aro/vg_relation/rel/{rel.replace(' ', '_')}/acc"
        ps = lookup(paper, "ARO-T2", "vg_relation", "", "n_samples", rel)
        fields = {"relation": rel, "relation group": groups.get(rel, "excluded (symmetric)"),
                  "toy cases": n_cases[rel], "paper samples": math.nan if ps is None else ps}
        rows += long_rows(summ, methods, fields, key, printed_cell(paper, "ARO-T2", "vg_relation", "acc", rel))
        rows += blind_rows(blind, fields, key)
    return long_frame(rows, ("relation", "relation group", "toy cases", "paper samples"))


def table_x1(summ: pd.DataFrame, paper: pd.DataFrame, methods: Methods,
             blind: Sequence[BlindResult] = ()) -> pd.DataFrame:
    """ARO-X1, long: VG-Attribution macro accuracy (the paper's in-text numbers), and the blind-text ceiling's."""
    key, fields = "aro/vg_attribution/macro_acc", {"task": "VG-A macro acc"}
    rows = long_rows(summ, methods, fields, key, printed_cell(paper, "ARO-X1", "vg_attribution", "macro_acc"))
    return long_frame(rows + blind_rows(blind, fields, key), ("task",))


def table_x2(summ: pd.DataFrame, paper: pd.DataFrame, methods: Methods,
             blind: Sequence[BlindResult] = ()) -> pd.DataFrame:
    """ARO-X2, long: VG-Relation spatial and verb macro accuracy, and the blind-text ceiling's."""
    rows = []
    for g, key in (("spatial", "aro/vg_relation/spatial_macro_acc"), ("verbs", "aro/vg_relation/verbs_macro_acc")):
        rows += long_rows(summ, methods, {"relation group": g}, key,
                          printed_cell(paper, "ARO-T2", "vg_relation", "macro_acc", g))
        rows += blind_rows(blind, {"relation group": g}, key)
    return long_frame(rows, ("relation group",))


WRONG_IMAGE_ROWS = (("VG-Relation", "aro/vg_relation/macro_acc", "aro/vg_relation/wrong_image_macro_acc",
                     "aro/vg_relation/text_swap_cosine"),
                    ("VG-Attribution", "aro/vg_attribution/macro_acc", "aro/vg_attribution/wrong_image_macro_acc",
                     "aro/vg_attribution/text_swap_cosine"),
                    # the caption-level relation benchmarks of the other papers, with the same control
                    ("SugarCrepe replace-rel", "sugarcrepe/replace_rel/acc", "sugarcrepe/replace_rel/wrong_image_acc", None),
                    ("SugarCrepe swap-obj", "sugarcrepe/swap_obj/acc", "sugarcrepe/swap_obj/wrong_image_acc", None),
                    ("SugarCrepe swap-att", "sugarcrepe/swap_att/acc", "sugarcrepe/swap_att/wrong_image_acc", None),
                    ("VALSE relations", "valse/relations/acc", "valse/relations/wrong_image_acc", None),
                    ("VALSE actant swap", "valse/actant-swap/acc", "valse/actant-swap/wrong_image_acc", None),
                    ("VL-CheckList Relation", "vlchecklist/relation/avg", "vlchecklist/wrong_image/relation/avg", None))


def own_minus_wrong_key(own: str) -> str:
    """The per-model derived metric "own image - wrong image" (:func:`vlcomp.reporting.collect.with_difference`):
    ``.../macro_acc`` -> ``.../own_minus_wrong_image_macro_acc``, ``.../acc`` -> ``.../own_minus_wrong_image_acc``,
    ``vlchecklist/<group>/avg`` -> ``vlchecklist/own_minus_wrong_image/<group>/avg``."""
    head, _, last = own.rpartition("/")
    if last in ("macro_acc", "acc"):
        return f"{head}/own_minus_wrong_image_{last}"
    if own.startswith("vlchecklist/"):
        return own.replace("vlchecklist/", "vlchecklist/own_minus_wrong_image/", 1)
    raise ValueError(f"no own - wrong image key for {own!r}")


def table_wrong_image(summ: pd.DataFrame, methods: Methods, blind: Sequence[BlindResult] = ()) -> pd.DataFrame:
    """The wrong-image control (not a paper artifact), long: each case (VG-R, VG-A and the caption-level relation
    benchmarks) scored with its own image and with another case's image. What survives the wrong image is a
    language prior over which caption is plausible; the rest, "own - wrong" (a per-model difference,
    :func:`own_minus_wrong_key`), is what the model reads off the image. "text cos(true, false)" (VG only) is the
    mean cosine between the two captions' text embeddings (near 1: the text tower hardly tells a caption from its
    swap). The blind-text ceiling is one more row: its own-image and wrong-image values are the same (it reads no
    image), so its "own - wrong" is 0, and it has no text tower (no cosine)."""
    rows = []
    for task, own, wrong, cos in WRONG_IMAGE_ROWS:
        measures = [("own image", own), ("wrong image", wrong), ("own - wrong", own_minus_wrong_key(own))]
        for what, key in measures + ([("text cos(true, false)", cos)] if cos else []):
            rows += long_rows(summ, methods, {"task": task, "measure": f"{task}, {what}"}, key, lambda m: None,
                              paper_only=())
        for what, key in measures[:2]:
            rows += blind_rows(blind, {"task": task, "measure": f"{task}, {what}"}, key)
        for b, v in blind_values(blind, own):
            rows += [{**r, "metric_key": "", "mean": v - b.value(wrong)}
                     for r in blind_rows([b], {"task": task, "measure": f"{task}, own - wrong"}, wrong)]
    return long_frame(rows, ("task", "measure"))


#: (task label, benchmark task) of the zero-shot twins whose classes are split by class group
FORGETTING_TASKS = (("CIFAR10", "cifar10"), ("CIFAR100", "cifar100"), ("ImageNet", "imagenet"))
CLASS_GROUP_LABELS = (("coco", "classes the COCO twin shows"), ("web_only", "classes only the web split shows"))


def table_forgetting(summ: pd.DataFrame, methods: Methods) -> pd.DataFrame:
    """Zero-shot accuracy per class group (not a paper artifact), long: ARO-T6's zero-shot twins split into the
    classes the COCO twin shows and those naming a concept only the web split shows (``world.web_only_*``).
    Fine-tuning on the COCO twin teaches the first and can only forget the second, as fine-tuning on real COCO
    can forget what of ImageNet it never shows."""
    rows = []
    for label, task in FORGETTING_TASKS:
        for group, what in CLASS_GROUP_LABELS:
            rows += long_rows(summ, methods, {"task": label, "measure": f"{label}, {what}"},
                              f"zeroshot/{task}/acc_{group}", lambda m: None, paper_only=())
    return long_frame(rows, ("task", "measure"))


def table_t5(summ: pd.DataFrame, paper: pd.DataFrame, methods: Methods,
             blind: Sequence[BlindResult] = ()) -> pd.DataFrame:
    """ARO-T5, long: Order accuracy per model, its spread over chains and, separately, its std over perturbation
    seeds (the quantity the paper's ± stands for); the blind-text ceiling's row; the chance row."""
    rows = []
    for ds, label, key in ORDER_ROWS:
        fields = {"dataset": label, "measure": "Accuracy"}
        rows += long_rows(summ, methods, fields, key, printed_cell(paper, "ARO-T5", ds, "acc"),
                          perturbation_key=f"{key}_std")
        rows += blind_rows(blind, fields, key, perturbation_key=f"{key}_std")
        rows.append({**fields, "model": "chance", "method": "chance", "source": "chance", "metric_key": "",
                     "mean": ORDER_CHANCE, "spread": math.nan, "n": math.nan, "perturbation_std": math.nan,
                     "paper": lookup(paper, "ARO-T5", ds, "chance", "acc") or math.nan, "paper_std": math.nan,
                     "difference": math.nan, "note": "one of five captions"})
    return long_frame(rows, ("dataset", "measure"))


def table_shuffled_retrieval(summ: pd.DataFrame, paper: pd.DataFrame, artifact: str, methods: Methods) -> pd.DataFrame:
    """ARO-T3 (caption shuffles) or ARO-T4 (image shuffles), long: each model's R@K, its spread over chains, and
    (shuffled rows) its std over shuffle seeds, separately."""
    labels = TEXT_STRATEGY_LABELS if artifact == "ARO-T3" else IMAGE_STRATEGY_LABELS
    rows = []
    for ds in ("coco", "flickr30k"):
        for strategy, slabel in labels.items():
            for mlabel, metric in RETRIEVAL_METRICS:
                key = retrieval_key(ds, strategy, metric)
                rows += long_rows(summ, methods, {"dataset": DATASET_LABEL[ds], "strategy": slabel, "measure": mlabel},
                                  key, printed_cell(paper, artifact, ds, metric, strategy),
                                  perturbation_key=None if strategy == "none" else f"{key}_std")
    return long_frame(rows, ("dataset", "strategy", "measure"))


def radar_axes() -> list[tuple[str, str]]:
    """Figure 3's axes: 4 compositional tasks and 5 downstream ones; a retrieval axis is the mean of the text and
    image R@1 (:func:`radar_retrieval_key`)."""
    return [("VG-Relation", "aro/vg_relation/macro_acc"), ("VG-Attribution", "aro/vg_attribution/macro_acc"),
            ("COCO Order", "aro/coco_order/acc"), ("Flickr30k Order", "aro/flickr30k_order/acc"),
            ("CIFAR10", "zeroshot/cifar10/acc"), ("CIFAR100", "zeroshot/cifar100/acc"),
            ("ImageNet", "zeroshot/imagenet/acc"), ("Flickr30k retrieval", radar_retrieval_key("flickr30k")),
            ("COCO retrieval", radar_retrieval_key("coco"))]


RADAR_RETRIEVAL = ("i2t/recall_at_1", "t2i/recall_at_1")


def radar_retrieval_key(ds: str) -> str:
    """The per-model derived metric of a retrieval axis: the mean of image->text and text->image R@1."""
    return f"retrieval/{ds}/mean_recall_at_1"


def radar_retrieval_parts(ds: str) -> list[str]:
    return [retrieval_key(ds, "none", m) for m in RADAR_RETRIEVAL]


def radar_paper_value(paper: pd.DataFrame, model: str, key: str) -> float:
    for _, _, k, ds, metric in T6_ROWS:
        if k == key:
            v = lookup(paper, "ARO-T6", ds, model, metric)
            return float("nan") if v is None else v
    ds = key.split("/")[1]
    vals = [lookup(paper, "ARO-T6", ds, model, m) for m in RADAR_RETRIEVAL]
    return float(np.mean(vals)) if all(v is not None for v in vals) else float("nan")
