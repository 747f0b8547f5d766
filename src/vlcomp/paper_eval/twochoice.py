"""The two-caption benchmarks on their released files: SugarCrepe, VALSE, VL-CheckList, CC-Neg.

Each item is one image with ``[positive, negative]`` captions; the decision rules and averages are the
loaders' (``vlcomp.datasets``). Decisions are taken once, on the full-precision scores, and saved in the
per-item table (``correct``); aggregates read those decisions, so a table saved with rounded scores (CSV,
``%.6g``) still gives the same metrics: strict ``>`` everywhere (a tie is wrong), except CC-Neg, which also reports the
released code's ``>=`` next to the paper's ``>``. Per-item tables (one row per item, ``score_pos``,
``score_neg``, ``correct``) and metric keys:

- ``sugarcrepe``: ``sugarcrepe/<category>/acc`` (7 categories), ``sugarcrepe/<group>/micro_acc`` (cases
  pooled: the SugarCrepe paper's REPLACE/SWAP/ADD) and ``sugarcrepe/<group>/macro_acc`` (mean of the
  categories: CE-CLIP's table), for groups whose categories were all run; ``sugarcrepe/<category>/n``.
  All categories are scored in one pass, so a COCO image shared by several categories is encoded once.
- ``valse``: ``valse/<instrument>/acc`` (validated foils only), and with all 11 instruments
  ``valse/column/<column>/acc`` (CE-CLIP Table 1's 9 columns), ``valse/avg_instruments`` (mean of 11, the
  evaluator's ``avg``) and ``valse/avg_columns`` (mean of 9 columns, CE-CLIP+ and MiniGPT-4 rows).
- ``vlchecklist``: per file (TSVLC's result key) ``vlchecklist/file/<key>/acc`` (first 1000 items with an
  existing image, rounded to 4 decimals as ``total_acc``); per category ``vlchecklist/<object|attribute|
  relation>/<category>`` (``action_a`` / ``action_r`` are written ``attribute/action`` / ``relation/action``)
  for every category whose files were all run; group means ``vlchecklist/<group>/avg`` (``object``,
  ``object/location``, ``object/size``, ``attribute``, ``relation``) and ``vlchecklist/overall`` (CE-CLIP's 9
  leaves) when complete.
- ``ccneg``: ``ccneg/acc`` (paper rule), ``ccneg/acc_code_tie_rule`` (released code, a tie is right),
  ``ccneg/k/<K>/acc``, ``ccneg/word/<w>/acc``, ``ccneg/word/<w>/k/<K>/acc`` and the matching ``.../n``.

AMBIGUOUS (documented choices):

- VL-CheckList files are given explicitly (``vlchecklist_files``: result key -> ``{annotations, images}``),
  not read from VL-CheckList's ``corpus/v1`` YAML: the catalogs do not list every file's path.
- CC-Neg runs the evaluation split (last 40,000 records) by default; ``ccneg_split: all`` runs the whole file
  (the paper's Table 2 and figures).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..datasets import ccneg as ccneg_ds
from ..datasets import sugarcrepe as sugarcrepe_ds
from ..datasets import valse as valse_ds
from ..datasets import vlchecklist as vlc_ds
from ..datasets.records import RecordError, open_image, where
from .common import as_bool, as_text, checked, key_part, need, need_path, table
from .engine import ChoiceTask, first_by_key


def _finish_pair(meta: pd.DataFrame, scores: np.ndarray, correct_fn) -> pd.DataFrame:
    df = meta.copy()
    df["score_pos"], df["score_neg"] = scores[:, 0].astype(np.float64), scores[:, 1].astype(np.float64)
    df["correct"] = correct_fn(scores[:, 0], scores[:, 1])
    return df


# --------------------------------------------------------------------------- SugarCrepe


def _grouped_loader(keys: Sequence[str], rows: Sequence[tuple[str, Any]],
                    sources: Mapping[str, str | Path] | None):
    """Lazy image loader for ``(group, case)`` rows keyed by image path; errors name the group's file (from
    ``sources``, else ``<group>.json``) and the first case that uses the image."""
    first = first_by_key(keys, rows)
    sources = sources or {}

    def load(key: str):
        group, case = first[key]
        return open_image(key, where(sources.get(group, f"{group}.json"), repr(case.id)))

    return load


def sugarcrepe_task(cases_by_category: Mapping[str, Sequence[sugarcrepe_ds.SugarCrepeCase]],
                    images_dir: str | Path, sources: Mapping[str, str | Path] | None = None) -> ChoiceTask:
    """All categories in one task; the image key is the COCO val2017 file path."""
    images_dir = Path(images_dir)
    rows = [(cat, c) for cat, cases in cases_by_category.items() for c in cases]
    for cat in cases_by_category:
        if cat not in sugarcrepe_ds.CATEGORIES:
            raise ValueError(f"sugarcrepe: unknown category {cat!r}; known: {', '.join(sugarcrepe_ds.CATEGORIES)}")
    keys = [str(images_dir / c.filename) for _, c in rows]
    load = _grouped_loader(keys, rows, sources)

    meta = pd.DataFrame({"category": [cat for cat, _ in rows], "id": [c.id for _, c in rows],
                         "filename": [c.filename for _, c in rows], "caption": [c.caption for _, c in rows],
                         "negative_caption": [c.negative_caption for _, c in rows]})
    return ChoiceTask(
        name="sugarcrepe", meta=meta, image_keys=keys,
        captions=[(c.caption, c.negative_caption) for _, c in rows], load_image=load,
        finish=lambda m, s: {"sugarcrepe": _finish_pair(m, s, sugarcrepe_ds.correct)},
        image_file=Path, naive_text_calls="per_caption",
    )


def prepare_sugarcrepe(inputs: Mapping[str, Any]) -> ChoiceTask:
    """Inputs: ``sugarcrepe_dir`` (the repo's ``data/``), ``coco_val2017_images``; optional
    ``sugarcrepe_categories`` (default all 7)."""
    data_dir = need_path(inputs, "sugarcrepe_dir", "sugarcrepe", directory=True)
    images = need_path(inputs, "coco_val2017_images", "sugarcrepe", directory=True)
    categories = tuple(inputs.get("sugarcrepe_categories") or sugarcrepe_ds.CATEGORIES)
    unknown = [c for c in categories if c not in sugarcrepe_ds.CATEGORIES]
    if unknown:
        raise ValueError(f"sugarcrepe: input 'sugarcrepe_categories' has unknown {unknown}; "
                         f"known: {', '.join(sugarcrepe_ds.CATEGORIES)}")
    cases = sugarcrepe_ds.load_all(data_dir, categories)
    return sugarcrepe_task(cases, images, {c: data_dir / f"{c}.json" for c in categories})


def aggregate_sugarcrepe(tables: Mapping[str, pd.DataFrame]) -> dict[str, float]:
    df = table(tables, "sugarcrepe", ("category", "correct"))
    correct, cats = as_bool(df["correct"]), np.array(as_text(df["category"]), dtype=object)
    by_cat = {c: correct[cats == c] for c in sugarcrepe_ds.CATEGORIES if (cats == c).any()}
    acc = sugarcrepe_ds.group_accuracies(by_cat)
    out: dict[str, float] = {}
    for key, value in acc.items():
        if "/" in key:
            group, kind = key.split("/")
            out[f"sugarcrepe/{group}/{kind}_acc"] = value
        else:
            out[f"sugarcrepe/{key}/acc"] = value
            out[f"sugarcrepe/{key}/n"] = len(by_cat[key])
    return checked(out)


# --------------------------------------------------------------------------- VALSE


def valse_task(cases_by_instrument: Mapping[str, Sequence[valse_ds.ValseCase]], roots: Mapping[str, str | Path],
               sources: Mapping[str, str | Path] | None = None) -> ChoiceTask:
    """All instruments in one task; the image key is the file path (CE-CLIP's folder choice per case)."""
    rows = [(ins, c) for ins, cases in cases_by_instrument.items() for c in cases]
    keys = [str(c.image_path(roots)) for _, c in rows]  # a case without its image folder fails here, not later
    load = _grouped_loader(keys, rows, sources)

    meta = pd.DataFrame({"instrument": [i for i, _ in rows], "id": [c.id for _, c in rows],
                         "image_file": [c.image_file for _, c in rows], "caption": [c.caption for _, c in rows],
                         "foil": [c.foil for _, c in rows]})
    return ChoiceTask(
        name="valse", meta=meta, image_keys=keys, captions=[(c.caption, c.foil) for _, c in rows], load_image=load,
        finish=lambda m, s: {"valse": _finish_pair(m, s, valse_ds.correct)}, image_file=Path,
    )


def prepare_valse(inputs: Mapping[str, Any]) -> ChoiceTask:
    """Inputs: ``valse_dir`` (VALSE ``data/``), ``valse_images`` (image folder key -> folder, keys of
    :data:`vlcomp.datasets.valse.IMAGE_SOURCE` and ``coco_*``); optional ``valse_instruments``."""
    data_dir = need_path(inputs, "valse_dir", "valse", directory=True)
    roots = need(inputs, "valse_images", "valse")
    if not isinstance(roots, Mapping):
        raise ValueError(f"valse: input 'valse_images' must map image folder keys to folders, got {type(roots).__name__}")
    instruments = tuple(inputs.get("valse_instruments") or valse_ds.INSTRUMENTS)
    cases = valse_ds.load_all(data_dir, instruments)
    return valse_task(cases, roots, {i: data_dir / f"{i}.json" for i in instruments})


def aggregate_valse(tables: Mapping[str, pd.DataFrame]) -> dict[str, float]:
    df = table(tables, "valse", ("instrument", "correct"))
    correct, ins = as_bool(df["correct"]), np.array(as_text(df["instrument"]), dtype=object)
    acc = valse_ds.instrument_accuracies({i: correct[ins == i] for i in dict.fromkeys(ins.tolist())})
    out = {f"valse/{key_part(i)}/acc": a for i, a in acc.items()}
    out |= {f"valse/{key_part(i)}/n": int((ins == i).sum()) for i in acc}
    if all(i in acc for i in valse_ds.INSTRUMENTS):
        out |= {f"valse/column/{c}/acc": a for c, a in valse_ds.column_accuracies(acc).items()}
        out["valse/avg_instruments"] = valse_ds.average_over_instruments(acc)
        out["valse/avg_columns"] = valse_ds.average_over_columns(acc)
    return checked(out)


# --------------------------------------------------------------------------- VL-CheckList


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
        finish=lambda m, s: {"vlchecklist": _finish_pair(m, s, vlc_ds.correct)}, image_file=Path,
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


# --------------------------------------------------------------------------- CC-Neg


def ccneg_task(cases: Sequence[ccneg_ds.CCNegCase], images_root: str | Path, source: str | Path = "") -> ChoiceTask:
    """Captions ``[true, negated with commas deleted]`` (what the model sees); the raw negated caption stays
    in the table (its negation words define the subsets)."""
    images_root = Path(images_root)
    keys = [str(c.image_file(images_root)) for c in cases]
    first = first_by_key(keys, cases)
    meta = pd.DataFrame({"index": [c.index for c in cases], "image_path": [c.image_path for c in cases],
                         "k": pd.array([c.k for c in cases], dtype="Int64"), "caption": [c.caption for c in cases],
                         "negated_caption": [c.negated_caption for c in cases]})
    return ChoiceTask(
        name="ccneg", meta=meta, image_keys=keys, captions=[(c.caption, c.negated_for_model) for c in cases],
        load_image=lambda key: first[key].open_image(images_root, source),
        finish=lambda m, s: {"ccneg": finish_ccneg(m, s)}, image_file=Path,
    )


def finish_ccneg(meta: pd.DataFrame, scores: np.ndarray) -> pd.DataFrame:
    df = _finish_pair(meta, scores, lambda p, n: ccneg_ds.correct(p, n, ccneg_ds.PAPER_TIE_RULE))
    df["correct_code_tie_rule"] = ccneg_ds.correct(scores[:, 0], scores[:, 1], ccneg_ds.CODE_TIE_RULE)
    return df


def prepare_ccneg(inputs: Mapping[str, Any]) -> ChoiceTask:
    """Inputs: ``ccneg_annotations`` (``ccneg_preprocessed.pt``), ``ccneg_images`` (the root replacing
    ``/workspace/datasets/cc3m/``); optional ``ccneg_split`` (``eval`` default, or ``all``), ``ccneg_n_eval``."""
    path = need_path(inputs, "ccneg_annotations", "ccneg")
    images = need_path(inputs, "ccneg_images", "ccneg", directory=True)
    split = inputs.get("ccneg_split") or "eval"
    if split not in ("eval", "all"):
        raise ValueError(f"ccneg: input 'ccneg_split' must be 'eval' or 'all', got {split!r}")
    cases = ccneg_ds.load_ccneg(path)
    if split == "eval":
        cases = ccneg_ds.eval_split(cases, int(inputs.get("ccneg_n_eval") or ccneg_ds.EVAL_SIZE))
    return ccneg_task(cases, images, path)


def _cases_from_table(df: pd.DataFrame) -> list[ccneg_ds.CCNegCase]:
    ks = [None if pd.isna(k) else int(k) for k in df["k"]]
    return [ccneg_ds.CCNegCase(int(i), "", "", neg, k)
            for i, neg, k in zip(df["index"], as_text(df["negated_caption"]), ks, strict=True)]


def aggregate_ccneg(tables: Mapping[str, pd.DataFrame]) -> dict[str, float]:
    df = table(tables, "ccneg", ("index", "k", "negated_caption", "correct", "correct_code_tie_rule"))
    cases = _cases_from_table(df)
    acc = ccneg_ds.accuracies(as_bool(df["correct"]), cases)
    sizes = ccneg_ds.subset_sizes(cases)
    out = {"ccneg/acc": acc.pop("overall"), "ccneg/n": sizes.pop("overall"),
           "ccneg/acc_code_tie_rule": float(as_bool(df["correct_code_tie_rule"]).mean())}
    out |= {f"ccneg/{name}/acc": a for name, a in acc.items()}
    out |= {f"ccneg/{name}/n": n for name, n in sizes.items()}
    return checked(out)
