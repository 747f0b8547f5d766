"""VL-CheckList (TSVLC's ITC protocol) on its released files: per file the first 1000 items with an existing image,
strict ``>``; file accuracies rounded to 4 decimals as ``total_acc``; categories, groups and CE-CLIP's overall.

AMBIGUOUS: files are given explicitly (``vlchecklist_files``: result key -> ``{annotations, images}``), not read from
VL-CheckList's ``corpus/v1`` YAML: the catalogs do not list every file's path.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..eval.common import as_bool, as_text, checked, finish_pair, key_part, need, table
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
                     max_items: int = vlc_ds.MAX_ITEMS) -> ChoiceTask:
    """``files``: result key (``Attribute_color_vg``) -> (annotation JSON, image root). Per file the protocol
    items are kept (image exists, then the first ``max_items``); the image key is the image file."""
    metas, keys, captions, first_rows = [], [], [], []
    for result_key, (ann, root) in files.items():
        ann, root = Path(ann), Path(root)
        items = vlc_ds.protocol_items(vlc_ds.load_file(ann), vlc_ds.exists_under(root), max_items=max_items)
        if not items:
            raise RecordError(f"{ann}: no item to score (empty file, or no image found under {root})")
        metas.append(pd.DataFrame({"file": result_key, "index": [c.index for c in items],
                                   "image": [c.image for c in items], "pos": [c.positive for c in items],
                                   "neg": [c.negative for c in items]}))
        keys += [str(root / c.image) for c in items]
        captions += [(c.positive, c.negative) for c in items]
        first_rows += [(ann, c.index) for c in items]
    first = first_by_key(keys, first_rows)
    return ChoiceTask(
        name="vlchecklist", meta=pd.concat(metas, ignore_index=True), image_keys=keys, captions=captions,
        load_image=lambda key: open_image(key, where(*first[key])),
        finish=lambda m, s: {"vlchecklist": finish_pair(m, s, vlc_ds.correct)}, image_file=Path,
    )


def prepare_vlchecklist(inputs: Mapping[str, Any]) -> ChoiceTask:
    """Inputs: ``vlchecklist_files``: result key -> ``{"annotations": json, "images": image root}``."""
    files = need(inputs, "vlchecklist_files", "vlchecklist")
    if not isinstance(files, Mapping) or not files:
        raise ValueError("vlchecklist: input 'vlchecklist_files' must map result keys to {annotations, images}")
    pairs = {}
    for key, spec in files.items():
        if not isinstance(spec, Mapping) or "annotations" not in spec or "images" not in spec:
            raise ValueError(f"vlchecklist: vlchecklist_files[{key!r}] must be {{annotations: ..., images: ...}}, "
                             f"got {spec!r:.120}")
        pairs[key] = (spec["annotations"], spec["images"])
    return vlchecklist_task(pairs)


def aggregate_vlchecklist(tables: Mapping[str, pd.DataFrame]) -> dict[str, float]:
    df = table(tables, "vlchecklist", ("file", "correct"))
    files, correct = np.array(as_text(df["file"]), dtype=object), as_bool(df["correct"])
    # the reference's total_acc (rounded); the items are already the protocol's (first 1000 with an image)
    file_acc = {f: round(float(correct[files == f].mean()), vlc_ds.ACC_DECIMALS) for f in dict.fromkeys(files.tolist())}
    out = {f"vlchecklist/file/{key_part(f)}/acc": a for f, a in file_acc.items()}
    complete = {cat: ds for cat, ds in vlc_ds.CORPUS.items() if all(f in file_acc for fs in ds.values() for f in fs)}
    cats = vlc_ds.category_scores(file_acc, complete)
    out |= {f"vlchecklist/{VLC_CATEGORY_KEY[c]}": v for c, v in cats.items()}
    for group, value in vlc_ds.group_averages(cats).items():
        out["vlchecklist/overall" if group == "overall" else f"vlchecklist/{group}/avg"] = value
    return checked(out)


register(Benchmark("vlchecklist", "VL-CheckList ITC (TSVLC protocol)", prepare_vlchecklist,
               aggregate_vlchecklist, ("vlchecklist",)))
