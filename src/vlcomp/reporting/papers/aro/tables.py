"""ARO's tables in the toy report: every artifact of catalog §7 from the collected metrics (mean ± std over training
seeds), next to the paper's printed value."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ....benchmarks.retrieval import metric_key as retrieval_key
from ...collect import Methods, value
from ...paper_values import lookup
from ...render import fmt

PAPER_ONLY = ("blip", "xvlm", "flava")

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


def _cell(summ: pd.DataFrame, method: str, key: str, std_key: str | None = None) -> str:
    """Mean over training seeds ± std over training seeds (or over evaluation seeds via ``std_key`` for CLIP)."""
    mean = value(summ, method, key)
    std = value(summ, method, key, "std")
    if (std != std or std == 0) and std_key is not None:
        std = value(summ, method, std_key)
    return fmt(mean, std)


def _paper(paper: pd.DataFrame, artifact: str, dataset: str, model: str, metric: str, group: str = "") -> str:
    v = lookup(paper, artifact, dataset, model, metric, group)
    if v is None:
        return "--"
    s = lookup(paper, artifact, dataset, model, metric, group, column="std")
    return fmt(v, s) if s is not None else f"{v:g}"


def comparison_long(summ: pd.DataFrame, paper: pd.DataFrame, methods: Methods) -> pd.DataFrame:
    """Every ARO-T6 number: reproduced mean/std/n over seeds, paper value, difference."""
    rows = []
    for group, task, key, ds, metric in T6_ROWS:
        for m in methods.order:
            p = lookup(paper, "ARO-T6", ds, m, metric)
            mean, std = value(summ, m, key), value(summ, m, key, "std")
            rows.append({"artifact": "ARO-T6", "group": group, "task": task, "model": methods.label(m), "metric_key": key,
                         "reproduced": mean, "std_over_seeds": std, "n_seeds": value(summ, m, key, "n_seeds"),
                         "paper": p, "difference": (mean - p) if p is not None else np.nan})
    return pd.DataFrame(rows)


def table_t6(summ: pd.DataFrame, paper: pd.DataFrame, methods: Methods) -> pd.DataFrame:
    rows = []
    for group, task, key, ds, metric in T6_ROWS:
        row = {"Group": group, "Task": task}
        for m in methods.order:
            row[f"{methods.label(m)} (toy)"] = _cell(summ, m, key)
            row[f"{methods.label(m)} (paper)"] = _paper(paper, "ARO-T6", ds, m, metric)
        rows.append(row)
    return pd.DataFrame(rows)


def table_t2(summ: pd.DataFrame, paper: pd.DataFrame, n_cases: dict[str, int], groups: dict[str, str], methods: Methods) -> pd.DataFrame:
    """Per-relation accuracy of the toy models; the paper's columns where a toy relation has a Table 2 twin."""
    rows = []
    macro = (("Accuracy (overall, macro)", "aro/vg_relation/macro_acc", "overall"),
             ("Accuracy (spatial, macro)", "aro/vg_relation/spatial_macro_acc", "spatial"),
             ("Accuracy (verbs, macro)", "aro/vg_relation/verbs_macro_acc", "verbs"))
    for label, key, pgroup in macro:
        row = {"Relation": label, "Group": ""}
        for m in methods.order:
            row[f"{methods.label(m)} (toy)"] = _cell(summ, m, key)
        for m in ("clip", "negclip", "clip_ft", *PAPER_ONLY):
            row[f"{methods.label(m)} (paper)"] = _paper(paper, "ARO-T2", "vg_relation", m, "macro_acc", pgroup)
        row["# toy cases"], row["# paper samples"] = "", ""
        rows.append(row)
    for rel in sorted(n_cases, key=lambda r: (groups.get(r, "~"), r)):
        key = f"aro/vg_relation/rel/{rel.replace(' ', '_')}/acc"
        row = {"Relation": rel, "Group": groups.get(rel, "excluded (symmetric)")}
        for m in methods.order:
            row[f"{methods.label(m)} (toy)"] = _cell(summ, m, key)
        for m in ("clip", "negclip", "clip_ft", *PAPER_ONLY):
            row[f"{methods.label(m)} (paper)"] = _paper(paper, "ARO-T2", "vg_relation", m, "acc", rel)
        row["# toy cases"] = n_cases[rel]
        ps = lookup(paper, "ARO-T2", "vg_relation", "", "n_samples", rel)
        row["# paper samples"] = int(ps) if ps is not None else "--"
        rows.append(row)
    return pd.DataFrame(rows)


def table_x1(summ: pd.DataFrame, paper: pd.DataFrame, methods: Methods) -> pd.DataFrame:
    rows = []
    for m in (*methods.order, *PAPER_ONLY):
        toy = _cell(summ, m, "aro/vg_attribution/macro_acc") if m in methods.order else "paper only"
        rows.append({"Model": methods.label(m), "VG-A macro acc (toy)": toy,
                     "VG-A macro acc (paper)": _paper(paper, "ARO-X1", "vg_attribution", m, "macro_acc")})
    return pd.DataFrame(rows)


WRONG_IMAGE_ROWS = (("VG-Relation", "aro/vg_relation/macro_acc", "aro/vg_relation/wrong_image_macro_acc",
                     "aro/vg_relation/text_swap_cosine"),
                    ("VG-Attribution", "aro/vg_attribution/macro_acc", "aro/vg_attribution/wrong_image_macro_acc",
                     "aro/vg_attribution/text_swap_cosine"))


def table_wrong_image(summ: pd.DataFrame, methods: Methods) -> pd.DataFrame:
    """The wrong-image control (not a paper artifact): each VG case scored with its own image and with another
    case's image. What survives the wrong image is a language prior over which caption is plausible; the rest,
    "own - wrong", is what the model reads off the image. "text cos(true, false)" is the mean cosine between the
    two captions' text embeddings (near 1: the text tower hardly tells a caption from its swap). Mean ± std over
    training seeds."""
    rows = []
    for m in methods.order:
        row = {"Model": methods.label(m)}
        for task, own, wrong, cos in WRONG_IMAGE_ROWS:
            row[f"{task}, own image"] = _cell(summ, m, own)
            row[f"{task}, wrong image"] = _cell(summ, m, wrong)
            row[f"{task}, own - wrong"] = fmt(value(summ, m, own) - value(summ, m, wrong))
            row[f"{task}, text cos(true, false)"] = _cell(summ, m, cos)
        rows.append(row)
    return pd.DataFrame(rows)


def table_x2(summ: pd.DataFrame, paper: pd.DataFrame, methods: Methods) -> pd.DataFrame:
    rows = []
    for m in (*methods.order, *PAPER_ONLY):
        row = {"Model": methods.label(m)}
        for g, key in (("spatial", "aro/vg_relation/spatial_macro_acc"), ("verbs", "aro/vg_relation/verbs_macro_acc")):
            row[f"{g} (toy)"] = _cell(summ, m, key) if m in methods.order else "paper only"
            row[f"{g} (paper)"] = _paper(paper, "ARO-T2", "vg_relation", m, "macro_acc", g)
        rows.append(row)
    return pd.DataFrame(rows)


def table_t5(summ: pd.DataFrame, paper: pd.DataFrame, methods: Methods) -> pd.DataFrame:
    rows = []
    for ds, label, key in (("flickr30k_order", "Flickr30k-PRC", "aro/flickr30k_order/acc"),
                           ("coco_order", "COCO-PRC", "aro/coco_order/acc")):
        for m in (*methods.order, *PAPER_ONLY, "chance"):
            toy = _cell(summ, m, key, key + "_std") if m in methods.order else ("0.2" if m == "chance" else "paper only")
            rows.append({"Dataset": label, "Model": methods.label(m), "Accuracy (toy)": toy,
                         "Accuracy (paper)": _paper(paper, "ARO-T5", ds, m, "acc")})
    return pd.DataFrame(rows)


def table_shuffled_retrieval(summ: pd.DataFrame, paper: pd.DataFrame, artifact: str, methods: Methods) -> pd.DataFrame:
    """ARO-T3 (caption shuffles) or ARO-T4 (image shuffles): mean ± std over shuffle seeds (CLIP) or over
    training seeds (fine-tuned models, whose per-seed values are already means over shuffle seeds)."""
    labels = TEXT_STRATEGY_LABELS if artifact == "ARO-T3" else IMAGE_STRATEGY_LABELS
    rows = []
    for ds in ("coco", "flickr30k"):
        for strategy, slabel in labels.items():
            for m in (*methods.order, *PAPER_ONLY):
                row = {"Dataset": DATASET_LABEL[ds], "Strategy": slabel, "Model": methods.label(m)}
                for mlabel, metric in RETRIEVAL_METRICS:
                    key = retrieval_key(ds, strategy, metric)
                    row[f"{mlabel} (toy)"] = _cell(summ, m, key, key + "_std") if m in methods.order else "paper only"
                    row[f"{mlabel} (paper)"] = _paper(paper, artifact, ds, m, metric, strategy)
                rows.append(row)
    return pd.DataFrame(rows)


def radar_axes() -> list[tuple[str, str]]:
    """Figure 3's axes: 4 compositional tasks and 5 downstream ones (retrieval as the mean of both R@1)."""
    return [("VG-Relation", "aro/vg_relation/macro_acc"), ("VG-Attribution", "aro/vg_attribution/macro_acc"),
            ("COCO Order", "aro/coco_order/acc"), ("Flickr30k Order", "aro/flickr30k_order/acc"),
            ("CIFAR10", "zeroshot/cifar10/acc"), ("CIFAR100", "zeroshot/cifar100/acc"),
            ("ImageNet", "zeroshot/imagenet/acc"), ("Flickr30k retrieval", "flickr30k"), ("COCO retrieval", "coco")]


def radar_value(summ: pd.DataFrame, method: str, key: str) -> float:
    if key in ("coco", "flickr30k"):
        return float(np.mean([value(summ, method, retrieval_key(key, "none", f"{d}/recall_at_1")) for d in ("i2t", "t2i")]))
    return value(summ, method, key)


def radar_paper_value(paper: pd.DataFrame, model: str, key: str) -> float:
    for _, _, k, ds, metric in T6_ROWS:
        if k == key:
            v = lookup(paper, "ARO-T6", ds, model, metric)
            return float("nan") if v is None else v
    vals = [lookup(paper, "ARO-T6", key, model, f"{d}/recall_at_1") for d in ("i2t", "t2i")]
    return float(np.mean(vals)) if all(v is not None for v in vals) else float("nan")
