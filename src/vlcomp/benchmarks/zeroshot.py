"""Zero-shot classification suites (image folders, :mod:`vlcomp.formats.imagefolder`): ARO Table 6's
CIFAR10/CIFAR100/ImageNet, CoN-CLIP's 8 datasets with standard and negated prompts, TSVLC's 21 ELEVATER tasks.

Each task is a :class:`~vlcomp.eval.engine.ClassificationTask`: CLIP's zero-shot classifier per prompt set
(normalised prompt features averaged over the templates and re-normalised), top-1 by ``argmax`` (the first
maximum wins a tie, :data:`vlcomp.metrics.classification.CLASSIFICATION_TIE_RULE`). Per-item table
``<benchmark>`` (one row per image: ``task``, ``label``, ``pred_<set>``, ``correct_<set>``, ``rank_<set>``: the
true class's rank under the same tie rule, :func:`vlcomp.metrics.classification.true_rank`) and keys (every suite
also has ``<prefix>/<task>/acc5``, top-5 with the standard prompts, 1.0 for a task of at most 5 classes, and the
CoN-CLIP and ELEVATER suites ``<prefix>/mean_acc5``):

- ``zeroshot_aro``: ``zeroshot/<task>/acc``;
- ``zeroshot_conclip``: ``zeroshot/conclip/<task>/{acc, negated_acc, delta}`` and ``zeroshot/conclip/mean_{acc,
  negated_acc, delta}`` with Δ = Top1(standard) - Top1(negated) (CoN-CLIP Sec. 5.1: a model that understands
  "not" scores low with the negated prompts, so a high Δ is good);
- ``zeroshot_elevater``: ``zeroshot/elevater/<task>/acc`` and ``zeroshot/elevater/mean_acc`` (TSVLC reports only
  the mean over the 21 tasks).

A suite with ``class_groups.json`` (the toy twins with web-only concepts) adds the column ``class_group`` (the
group of the image's true class) and, per task and group, ``<prefix>/<task>/acc_<group>`` (standard prompts):
``acc_web_only`` is what fine-tuning on the COCO twin can forget, ``acc_coco`` what it also teaches.

Inputs: ``<benchmark>_dir`` (the suite folder); optional ``<benchmark>_tasks`` (a subset of its tasks).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from ..eval.common import as_bool, as_text, checked, table
from ..eval.engine import ClassificationTask
from ..formats.imagefolder import read_suite, read_templates
from ..formats.records import open_image
from ..metrics.classification import predict, true_rank
from .registry import Benchmark, register

#: Top-k of the ``acc5`` keys (the Hard Positives paper's Acc@5, Table 10).
TOP_K = 5

#: benchmark -> (metric prefix, prompt sets it needs)
SUITES = {"zeroshot_aro": ("zeroshot", ("standard",)),
          "zeroshot_conclip": ("zeroshot/conclip", ("standard", "negated")),
          "zeroshot_elevater": ("zeroshot/elevater", ("standard",))}


def _task(name: str, split, templates: Mapping[str, list[str]]) -> ClassificationTask:
    meta = pd.DataFrame({"task": split.task, "file": [f.name for f in split.files], "label": split.labels})
    if split.class_groups is not None:
        meta["class_group"] = [split.class_groups[y] for y in split.labels]
    keys = [str(f) for f in split.files]

    def finish(m: pd.DataFrame, logits: dict[str, np.ndarray]) -> dict[str, pd.DataFrame]:
        df = m.copy()
        for ps, lg in logits.items():
            df[f"pred_{ps}"] = predict(lg)
            df[f"correct_{ps}"] = df[f"pred_{ps}"].to_numpy() == df["label"].to_numpy()
        for ps, lg in logits.items():
            df[f"rank_{ps}"] = true_rank(lg, df["label"].to_numpy(dtype=np.int64))
        return {name: df}

    return ClassificationTask(name=f"{name}/{split.task}", meta=meta, image_keys=keys, classnames=split.classnames,
                              templates=templates, load_image=lambda k: open_image(k, f"{name}: image {k}"),
                              finish=finish, image_file=lambda k: k)


def prepare_suite(inputs: Mapping[str, Any], name: str) -> list[ClassificationTask]:
    from ..eval.common import need_path

    root = need_path(inputs, f"{name}_dir", name, directory=True)
    templates = read_templates(root)
    missing = [ps for ps in SUITES[name][1] if ps not in templates]
    if missing:
        raise ValueError(f"{root / 'templates.json'}: {name} needs the prompt sets {missing}")
    templates = {ps: templates[ps] for ps in SUITES[name][1]}
    return [_task(name, split, templates) for split in read_suite(root, inputs.get(f"{name}_tasks")).values()]


def aggregate_suite(tables: Mapping[str, pd.DataFrame], name: str) -> dict[str, float]:
    prefix, sets = SUITES[name]
    df = table(tables, name, ("task", *(f"correct_{ps}" for ps in sets)))
    tasks = np.array(as_text(df["task"]), dtype=object)
    acc = {ps: {t: float(as_bool(df[f"correct_{ps}"])[tasks == t].mean()) for t in dict.fromkeys(tasks.tolist())}
           for ps in sets}
    out = {f"{prefix}/{t}/acc": a for t, a in acc["standard"].items()}
    if "rank_standard" in df.columns:  # top-5 (standard prompts), from the true class's rank
        top5 = df["rank_standard"].to_numpy(dtype=np.int64) <= TOP_K
        acc5 = {t: float(top5[tasks == t].mean()) for t in dict.fromkeys(tasks.tolist())}
        out |= {f"{prefix}/{t}/acc5": a for t, a in acc5.items()}
        if name != "zeroshot_aro":
            out[f"{prefix}/mean_acc5"] = float(np.mean(list(acc5.values())))
    if "class_group" in df.columns:  # accuracy over the images of each class group (standard prompts)
        groups = np.array(as_text(df["class_group"]), dtype=object)
        correct = as_bool(df["correct_standard"])
        for t in dict.fromkeys(tasks.tolist()):
            for g in sorted(set(groups[tasks == t].tolist())):
                out[f"{prefix}/{t}/acc_{g}"] = float(correct[(tasks == t) & (groups == g)].mean())
    if name == "zeroshot_conclip":
        out |= {f"{prefix}/{t}/negated_acc": a for t, a in acc["negated"].items()}
        out |= {f"{prefix}/{t}/delta": acc["standard"][t] - acc["negated"][t] for t in acc["standard"]}
        out |= {f"{prefix}/mean_acc": float(np.mean(list(acc["standard"].values()))),
                f"{prefix}/mean_negated_acc": float(np.mean(list(acc["negated"].values())))}
        out[f"{prefix}/mean_delta"] = out[f"{prefix}/mean_acc"] - out[f"{prefix}/mean_negated_acc"]
    elif name == "zeroshot_elevater":
        out[f"{prefix}/mean_acc"] = float(np.mean(list(acc["standard"].values())))
    return checked(out)


HEADLINE = {"zeroshot_aro": ("zeroshot/cifar10/acc", "zeroshot/cifar100/acc", "zeroshot/imagenet/acc"),
            "zeroshot_conclip": ("zeroshot/conclip/mean_acc", "zeroshot/conclip/mean_delta"),
            "zeroshot_elevater": ("zeroshot/elevater/mean_acc",)}
for _name, _what in (("zeroshot_aro", "ARO Table 6 zero-shot: CIFAR10 / CIFAR100 / ImageNet"),
                     ("zeroshot_conclip", "CoN-CLIP zero-shot on 8 datasets, standard and negated prompts"),
                     ("zeroshot_elevater", "TSVLC's 21 ELEVATER zero-shot tasks")):
    register(Benchmark(_name, _what, partial(prepare_suite, name=_name), partial(aggregate_suite, name=_name),
                       (_name,), headline=HEADLINE[_name]))
