"""VL-CheckList (TSVLC's ITC protocol) on its released files: per file the first 1000 items with an existing image,
strict ``>``; file accuracies rounded to 4 decimals as ``total_acc``; categories, groups and CE-CLIP's overall.

AMBIGUOUS: files are given explicitly (``vlchecklist_files``: result key -> ``{annotations, images}``), not read from
VL-CheckList's ``corpus/v1`` YAML: the catalogs do not list every file's path.

Categories aggregate over TSVLC's fixed ``corpus.json`` (:data:`vlchecklist.CORPUS`; a category is reported only when
all its files were scored) unless ``vlchecklist_corpus`` names a corpus file in the same layout (the toy twin's, whose
only source dataset is its VG stand-in): then that mapping is used, every file it lists must be among
``vlchecklist_files``, and each item's ``category`` / ``dataset`` go into the per-item table, so the aggregate (which
sees only the tables, also after a CSV round trip) needs nothing else.

Every item is also scored on another item's image (:func:`vlcomp.eval.common.wrong_image_control`, not part of the
protocol), aggregated the same way: ``vlchecklist/wrong_image/<category>``, ``.../<group>/avg``, ``.../overall``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..eval.common import (
    as_bool,
    as_text,
    checked,
    finish_pair_controlled,
    key_part,
    need,
    table,
    wrong_image_control,
)
from ..eval.engine import ChoiceTask, first_by_key
from ..formats import vlchecklist as vlc_ds
from ..formats.records import RecordError, open_image, where
from .registry import Benchmark, register

#: Metric group of each VL-CheckList category (``corpus.json`` keys).
VLC_CATEGORY_KEY = {
    **{c: f"object/{c}" for c in ("large", "medium", "small", "center", "mid", "margin")},
    **{c: f"attribute/{c}" for c in ("color", "material", "size", "state")},
    "action_a": "attribute/action", "action_r": "relation/action", "spatial": "relation/spatial",
}


def vlchecklist_task(files: Mapping[str, tuple[str | Path, str | Path]], *,
                     max_items: int = vlc_ds.MAX_ITEMS,
                     corpus: Mapping[str, Mapping[str, Sequence[str]]] | None = None, seed: int = 0) -> ChoiceTask:
    """``files``: result key (``Attribute_color_vg``) -> (annotation JSON, image root). Per file the protocol
    items are kept (image exists, then the first ``max_items``); the image key is the image file. With ``corpus``
    (category -> dataset -> result keys) the meta gets each item's ``category`` and ``dataset`` (``""`` for a file
    the corpus does not list). The wrong-image control's derangement is drawn from ``seed``."""
    place = {f: (c, d) for c, ds in (corpus or {}).items() for d, fs in ds.items() for f in fs}
    metas, keys, captions, first_rows = [], [], [], []
    for result_key, (ann, root) in files.items():
        ann, root = Path(ann), Path(root)
        items = vlc_ds.protocol_items(vlc_ds.load_file(ann), vlc_ds.exists_under(root), max_items=max_items)
        if not items:
            raise RecordError(f"{ann}: no item to score (empty file, or no image found under {root})")
        metas.append(pd.DataFrame({"file": result_key, "index": [c.index for c in items],
                                   "image": [c.image for c in items], "pos": [c.positive for c in items],
                                   "neg": [c.negative for c in items]}))
        if corpus is not None:
            metas[-1]["category"], metas[-1]["dataset"] = place.get(result_key, ("", ""))
        keys += [str(root / c.image) for c in items]
        captions += [(c.positive, c.negative) for c in items]
        first_rows += [(ann, c.index) for c in items]
    first = first_by_key(keys, first_rows)
    meta = pd.concat(metas, ignore_index=True)
    controls, wrong = wrong_image_control(keys, seed, "vlchecklist")
    if wrong is not None:
        meta["wrong_image"] = wrong
    return ChoiceTask(
        name="vlchecklist", meta=meta, image_keys=keys, captions=captions,
        load_image=lambda key: open_image(key, where(*first[key])),
        finish=lambda m, s, extras=None: {"vlchecklist": finish_pair_controlled(m, s, vlc_ds.correct, extras)},
        image_file=Path, controls=controls,
    )


def prepare_vlchecklist(inputs: Mapping[str, Any]) -> ChoiceTask:
    """Inputs: ``vlchecklist_files``: result key -> ``{"annotations": json, "images": image root}``; optional
    ``vlchecklist_corpus``: a corpus file in TSVLC's ``corpus.json`` layout (default: TSVLC's own, :data:`CORPUS`)."""
    files = need(inputs, "vlchecklist_files", "vlchecklist")
    if not isinstance(files, Mapping) or not files:
        raise ValueError("vlchecklist: input 'vlchecklist_files' must map result keys to {annotations, images}")
    pairs = {}
    for key, spec in files.items():
        if not isinstance(spec, Mapping) or "annotations" not in spec or "images" not in spec:
            raise ValueError(f"vlchecklist: vlchecklist_files[{key!r}] must be {{annotations: ..., images: ...}}, "
                             f"got {spec!r:.120}")
        pairs[key] = (spec["annotations"], spec["images"])
    corpus_path = inputs.get("vlchecklist_corpus")
    seed = int(inputs.get("seed") or 0)
    if corpus_path is None or not str(corpus_path).strip():
        return vlchecklist_task(pairs, seed=seed)
    corpus = vlc_ds.load_corpus(corpus_path)
    unknown = [f for ds in corpus.values() for fs in ds.values() for f in fs if f not in pairs]
    if unknown:
        raise ValueError(f"vlchecklist: {corpus_path} lists result keys missing from vlchecklist_files: "
                         f"{', '.join(unknown)}")
    return vlchecklist_task(pairs, corpus=corpus, seed=seed)


def corpus_from_items(files: Sequence[str], categories: Sequence[str], datasets: Sequence[str]
                      ) -> dict[str, dict[str, list[str]]]:
    """The corpus (category -> dataset -> result keys, first-seen order) carried by the per-item table's
    ``file`` / ``category`` / ``dataset`` columns; items with an empty category are in no category."""
    corpus: dict[str, dict[str, list[str]]] = {}
    for f, c, d in dict.fromkeys(zip(files, categories, datasets, strict=True)):
        if c:
            corpus.setdefault(c, {}).setdefault(d, []).append(f)
    return corpus


def aggregate_vlchecklist(tables: Mapping[str, pd.DataFrame]) -> dict[str, float]:
    df = table(tables, "vlchecklist", ("file", "correct"))
    files, correct = np.array(as_text(df["file"]), dtype=object), as_bool(df["correct"])
    # the reference's total_acc (rounded); the items are already the protocol's (first 1000 with an image)
    file_acc = {f: round(float(correct[files == f].mean()), vlc_ds.ACC_DECIMALS) for f in dict.fromkeys(files.tolist())}
    out = {f"vlchecklist/file/{key_part(f)}/acc": a for f, a in file_acc.items()}
    if "category" in df.columns:  # a corpus given at prepare time (vlchecklist_corpus), carried per item
        corpus = corpus_from_items(files.tolist(), as_text(df["category"]), as_text(df["dataset"]))
        # the benchmark's own composition: a category it has no file of is absent (the second toy world's
        # Object/Size "small"), and its group averages what is there
        absent = {c for cats in vlc_ds.GROUPS.values() for c in cats} - set(corpus)
    else:  # TSVLC's corpus.json: the categories whose every file was scored
        corpus = {cat: ds for cat, ds in vlc_ds.CORPUS.items() if all(f in file_acc for fs in ds.values() for f in fs)}
        absent = set()
    cats = vlc_ds.category_scores(file_acc, corpus)
    out |= {f"vlchecklist/{VLC_CATEGORY_KEY[c]}": v for c, v in cats.items()}
    for group, value in vlc_ds.group_averages(cats, absent).items():
        out["vlchecklist/overall" if group == "overall" else f"vlchecklist/{group}/avg"] = value
    if "wrong_correct" in df.columns:  # the wrong-image control (not part of VL-CheckList's protocol), same averages
        wrong = as_bool(df["wrong_correct"])
        wrong_acc = {f: round(float(wrong[files == f].mean()), vlc_ds.ACC_DECIMALS) for f in file_acc}
        wrong_cats = vlc_ds.category_scores(wrong_acc, corpus)
        out |= {f"vlchecklist/wrong_image/{VLC_CATEGORY_KEY[c]}": v for c, v in wrong_cats.items()}
        for group, value in vlc_ds.group_averages(wrong_cats, absent).items():
            out[f"vlchecklist/wrong_image/{group}/avg" if group != "overall" else "vlchecklist/wrong_image/overall"] = value
    return checked(out)


register(Benchmark("vlchecklist", "VL-CheckList ITC (TSVLC protocol)", prepare_vlchecklist,
               aggregate_vlchecklist, ("vlchecklist",),
                   headline=("vlchecklist/object/avg", "vlchecklist/attribute/avg", "vlchecklist/relation/avg")))
