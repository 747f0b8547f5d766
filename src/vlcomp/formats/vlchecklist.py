"""VL-CheckList's released annotation files (``data/<Type>/.../<name>.json``; refcode catalog §5, §1.8) and the
ITC protocol TSVLC/DAC (and CE-CLIP, through a fork) score them with.

Format. One JSON file per (source, subtype): a JSON list of 2-element lists
``[image_rel_path, {"POS": [str, ...], "NEG": [str, ...]}]``. VG/VAW/HAKE items carry 1 POS + 1 NEG, SWiG
Object items 3 + 3; only ``POS[0]`` and ``NEG[0]`` are scored. Items have no ids: an item is named by its
position. The same image legitimately appears in many items, so there is no duplicate-id check (a key
repeated inside one item's object is refused). Captions are kept raw (1,270 ``vg_obj_margin`` negatives start
with a space). Extra keys in the object are ignored. Every item's ``POS``/``NEG`` must be a non-empty list of
strings whose first entry is a non-empty caption; later entries are only type-checked (they are never
scored). An empty list ``[]`` is a valid file (``swig_place_*.json`` ship empty); scoring it is an error.

Writers (:func:`write_file`, :func:`write_corpus`) produce exactly these layouts (the toy twin uses them): an
annotation file as one line of ``json.dumps`` (``POS`` before ``NEG``, as released); a corpus file as TSVLC's
``corpus.json`` (category -> source dataset -> result keys), read back by :func:`load_corpus`. Both validate what
they write with the reader's rules, so a written file is always a readable one.

Protocol (TSVLC ``evaluate_vl.py``, ``MAX_NUM: 2000``): per file, drop items whose image is missing, keep the
first ``MAX_NUM / 2`` = **1000** in file order (:func:`protocol_items`), score ``POS[0]`` vs ``NEG[0]``;
correct iff ``pos > neg`` strictly, a tie is wrong (:data:`TIE_RULE`). The file accuracy is rounded to
4 decimals as the reference writes ``total_acc`` (:func:`file_accuracy`).

Aggregation (TSVLC ``corpus.json``, :data:`CORPUS`): a category's score is the mean over its source datasets
of the mean over that dataset's files (macro over datasets, not over items; :func:`category_scores`).
Choices where the reference or catalogs are loose:

- A result file missing from the input is an error. The reference prints a notice, adds 0 and still divides
  by the file count; ``missing_as_zero=True`` reproduces that.
- Group averages (:func:`group_averages`): Attribute = mean of its 5 subtypes, Relation = mean of 2 (TSVLC,
  verified from its tables); Object = mean of the 6 object subtypes (tsvlc catalog: AMBIGUOUS, "very likely",
  never printed per subtype). CE-CLIP's Table 2 "Obj Location" / "Obj Size" are taken as the means of
  center/mid/margin and large/medium/small (the catalog is silent; CE-CLIP ran a fork), and its overall
  "Avg" as the mean of its 9 leaf columns (catalog: verified). A category the benchmark does not have at all
  (``absent``: no file of it in its corpus, e.g. the second toy world's Object/Size "small", whose only small objects
  became as large as the others) leaves its group's mean over the categories present; a category that exists but
  was not scored still leaves the group out.
- TSVLC prints its 13 scores under shifted labels (:data:`TSVLC_PRINTED_LABELS`); categories here are named
  by the ``corpus.json`` keys, never by the printed labels.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..io import atomic_path
from ..metrics.aro import TieRule
from .records import RecordError, field, pairwise_correct, read_json_strict, where

#: ``MAX_NUM`` of the TSVLC ITC configs; the reference keeps ``data[:MAX_NUM / 2]``.
MAX_NUM = 2000
MAX_ITEMS = MAX_NUM // 2
#: ``pos > neg``: a tie counts wrong.
TIE_RULE = TieRule.TIE_COUNTS_WRONG
#: Decimals of the reference's per-file ``total_acc``.
ACC_DECIMALS = 4

_SWIG = ("swig_agent", "swig_destination", "swig_item", "swig_tool")


def _object(kind: str) -> dict[str, tuple[str, ...]]:
    return {"vg": (f"{kind}_vg_obj", f"{kind}_vg_subj"), "swig": tuple(f"{kind}_{s}" for s in _SWIG),
            "hake": (f"{kind}_hake",)}


#: TSVLC ``src/training/corpus.json``: category -> source dataset -> result keys (``<Type>_<sub>_<name>``),
#: in the file's order (= the order of TSVLC's printed list of 13 scores).
CORPUS: dict[str, dict[str, tuple[str, ...]]] = {
    "large": _object("Object_Size_large"),
    "medium": _object("Object_Size_medium"),
    "small": _object("Object_Size_small"),
    "center": _object("Object_Location_center"),
    "mid": _object("Object_Location_mid"),
    "margin": _object("Object_Location_margin"),
    "color": {"vg": ("Attribute_color_vg",), "vaw": ("Attribute_color_vaw",)},
    "material": {"vg": ("Attribute_material_vg",), "vaw": ("Attribute_material_vaw",)},
    "action_a": {"vg": ("Attribute_action_vg",), "vaw": ("Attribute_action_vaw",)},
    "size": {"vg": ("Attribute_size_vg",), "vaw": ("Attribute_size_vaw",)},
    "state": {"vg": ("Attribute_state_vg",), "vaw": ("Attribute_state_vaw",)},
    "action_r": {"vg": ("Relation_action_vg",), "swig": ("Relation_action_swig",),
                 "hake": ("Relation_action_hake",)},
    "spatial": {"vg": ("Relation_spatial_vg",)},
}
#: The labels TSVLC prints next to each category (its bug: the last three attribute labels are shifted).
TSVLC_PRINTED_LABELS: dict[str, str] = dict(zip(CORPUS, (
    "O-Large", "O-Medium", "O-Small", "O-Center", "O-Mid", "O-Margin", "A-Color", "A-Material", "A-Size",
    "A-State", "A-Action", "R-action", "R-spatial"), strict=True))
GROUPS: dict[str, tuple[str, ...]] = {
    "object": ("large", "medium", "small", "center", "mid", "margin"),
    "object/location": ("center", "mid", "margin"),
    "object/size": ("large", "medium", "small"),
    "attribute": ("action_a", "color", "material", "size", "state"),
    "relation": ("action_r", "spatial"),
}
#: CE-CLIP Table 2's 9 leaf columns, whose mean is its overall "Avg".
CECLIP_LEAVES = ("action_a", "color", "material", "size", "state", "object/location", "object/size",
                 "action_r", "spatial")


@dataclass(frozen=True)
class VLCheckListCase:
    index: int
    image: str  # relative to the file's IMG_ROOT
    pos: tuple[str, ...]
    neg: tuple[str, ...]

    @property
    def positive(self) -> str:
        return self.pos[0]

    @property
    def negative(self) -> str:
        return self.neg[0]


def _captions(texts: object, name: str, at: str) -> tuple[str, ...]:
    values = field(texts, name, list, at)
    if not values:
        raise RecordError(f"{at}: field {name!r} is an empty list")
    for j, v in enumerate(values):
        if not isinstance(v, str):
            raise RecordError(f"{at}: field {name!r} item {j} must be str, got {type(v).__name__} {v!r:.80}")
    if not values[0].strip():
        raise RecordError(f"{at}: field {name!r} item 0 is an empty caption")
    return tuple(values)


def _case(item: object, i: int, path: Path) -> VLCheckListCase:
    at = where(path, i)
    if not isinstance(item, list) or len(item) != 2:
        got = f"a list of {len(item)}" if isinstance(item, list) else type(item).__name__
        raise RecordError(f'{at}: expected [image_path, {{"POS": [...], "NEG": [...]}}], got {got}')
    image, texts = item
    if not isinstance(image, str) or not image.strip():
        raise RecordError(f"{at}: image path must be a non-empty string, got {image!r:.80}")
    return VLCheckListCase(i, image, _captions(texts, "POS", at), _captions(texts, "NEG", at))


def load_file(path: str | Path) -> list[VLCheckListCase]:
    """Every item of one VL-CheckList file, in file order, validated (an empty file gives ``[]``)."""
    path = Path(path)
    data = read_json_strict(path)
    if not isinstance(data, list):
        raise RecordError(f"{path}: expected a JSON list of [image, {{POS, NEG}}] items, got {type(data).__name__}")
    return [_case(item, i, path) for i, item in enumerate(data)]


def write_file(path: str | Path, cases: Sequence[VLCheckListCase]) -> Path:
    """Write ``cases`` as one released annotation file (``[[image, {"POS": [...], "NEG": [...]}], ...]``, file
    order = ``cases`` order; ``case.index`` is not written: an item is named by its position). Every item is
    checked with the reader's rules first, so a bad caption fails here, naming the file and the item."""
    path = Path(path)
    data = [[c.image, {"POS": list(c.pos), "NEG": list(c.neg)}] for c in cases]
    for i, item in enumerate(data):
        _case(item, i, path)
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as f:
        f.write(json.dumps(data))
    return path


def validate_corpus(data: object, path: str | Path) -> dict[str, dict[str, tuple[str, ...]]]:
    """A corpus in TSVLC's ``corpus.json`` layout, checked: a non-empty object of known categories
    (:data:`CORPUS` keys), each a non-empty object of source dataset -> non-empty list of result keys; a result
    key may appear only once in the whole corpus (a file scores one category). Errors name the file."""
    if not isinstance(data, dict) or not data:
        got = "an empty object" if isinstance(data, dict) else type(data).__name__
        raise RecordError(f"{path}: expected a JSON object of category -> dataset -> result keys, got {got}")
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    seen: dict[str, str] = {}
    for category, datasets in data.items():
        at = f"{path}: category {category!r}"
        if category not in CORPUS:
            raise RecordError(f"{at}: unknown category (known: {', '.join(CORPUS)})")
        if not isinstance(datasets, dict) or not datasets:
            raise RecordError(f"{at}: expected a non-empty object of dataset -> result keys, got {datasets!r:.80}")
        out[category] = {}
        for dataset, keys in datasets.items():
            here = f"{at}, dataset {dataset!r}"
            if not isinstance(dataset, str) or not dataset.strip():
                raise RecordError(f"{at}: dataset name must be a non-empty string, got {dataset!r}")
            if not isinstance(keys, list | tuple) or not keys:  # JSON gives lists; CORPUS holds tuples
                raise RecordError(f"{here}: expected a non-empty list of result keys, got {keys!r:.80}")
            for key in keys:
                if not isinstance(key, str) or not key.strip():
                    raise RecordError(f"{here}: result key must be a non-empty string, got {key!r:.80}")
                if key in seen:
                    raise RecordError(f"{here}: result key {key!r} already listed under {seen[key]}")
                seen[key] = f"category {category!r}, dataset {dataset!r}"
            out[category][dataset] = tuple(keys)
    return out


def load_corpus(path: str | Path) -> dict[str, dict[str, tuple[str, ...]]]:
    """A corpus file in TSVLC's ``corpus.json`` layout, validated (:func:`validate_corpus`)."""
    path = Path(path)
    return validate_corpus(read_json_strict(path), path)


def write_corpus(path: str | Path, corpus: Mapping[str, Mapping[str, Sequence[str]]]) -> Path:
    """Write ``corpus`` in TSVLC's ``corpus.json`` layout (order kept), validated first."""
    path = Path(path)
    checked = validate_corpus(corpus, path)
    data = {c: {d: list(keys) for d, keys in ds.items()} for c, ds in checked.items()}
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as f:
        f.write(json.dumps(data, indent=4) + "\n")
    return path


def protocol_items(cases: Sequence[VLCheckListCase], image_exists: Callable[[str], bool] | None = None,
                   max_items: int = MAX_ITEMS) -> list[VLCheckListCase]:
    """The items the reference scores: those whose image exists (``image_exists(case.image)``; ``None``
    keeps all), then the first ``max_items`` in file order."""
    if max_items < 1:
        raise ValueError(f"max_items must be >= 1, got {max_items}")
    kept = [c for c in cases if image_exists is None or image_exists(c.image)]
    return kept[:max_items]


def exists_under(root: str | Path) -> Callable[[str], bool]:
    """``image_exists`` for :func:`protocol_items`: the image is a file under ``root`` (``<images>/<IMG_ROOT>``)."""
    root = Path(root)
    return lambda image: (root / image).is_file()


def correct(pos_scores: np.ndarray, neg_scores: np.ndarray) -> np.ndarray:
    """Per item: ``score(POS[0]) > score(NEG[0])`` (strict; a tie is wrong)."""
    return pairwise_correct(pos_scores, neg_scores)


def file_accuracy(pos_scores: np.ndarray, neg_scores: np.ndarray, *, max_items: int = MAX_ITEMS,
                  decimals: int | None = ACC_DECIMALS) -> float:
    """One file's ``total_acc``: the fraction of the first ``max_items`` items (scores in file order, items
    with missing images already dropped) with ``pos > neg`` strictly, rounded to ``decimals`` (``None``: no
    rounding)."""
    c = correct(pos_scores, neg_scores)[:max_items]
    if c.size == 0:
        raise ValueError("no items to score (empty file, or every image missing)")
    acc = float(c.mean())
    return acc if decimals is None else round(acc, decimals)


def result_key(data_type: str, name: str) -> str:
    """The reference's result name of one file: ``("Object/Size/large", "vg_obj")`` -> ``Object_Size_large_vg_obj``."""
    return f"{data_type.replace('/', '_')}_{name}"


def category_scores(file_acc: Mapping[str, float], corpus: Mapping[str, Mapping[str, Sequence[str]]] = CORPUS,
                    *, missing_as_zero: bool = False) -> dict[str, float]:
    """Per category: mean over source datasets of (mean over that dataset's files of ``file_acc``)."""
    out = {}
    for category, datasets in corpus.items():
        per_dataset = []
        for dataset, files in datasets.items():
            missing = [f for f in files if f not in file_acc]
            if missing and not missing_as_zero:
                raise ValueError(f"category {category!r}, dataset {dataset!r}: no accuracy for {', '.join(missing)}")
            per_dataset.append(sum(file_acc.get(f, 0.0) for f in files) / len(files))
        out[category] = float(np.mean(per_dataset))
    return out


def group_averages(categories: Mapping[str, float], absent: Iterable[str] = ()) -> dict[str, float]:
    """Group means (:data:`GROUPS`: TSVLC's Object/Attribute/Relation and CE-CLIP's Obj Location / Obj Size)
    and ``overall`` = mean of CE-CLIP's 9 leaf columns (:data:`CECLIP_LEAVES`). ``absent``: categories the
    benchmark does not have (none in the real one), left out of their group's mean. Groups with another missing
    category, or with none present, are left out, and ``overall`` needs all 9 leaves."""
    absent = set(absent)
    out: dict[str, float] = {}
    for group, cats in GROUPS.items():
        cats = tuple(c for c in cats if c not in absent)
        if cats and all(c in categories for c in cats):
            out[group] = float(np.mean([categories[c] for c in cats]))
    leaves = {**categories, **out}
    if all(leaf in leaves for leaf in CECLIP_LEAVES):
        out["overall"] = float(np.mean([leaves[leaf] for leaf in CECLIP_LEAVES]))
    return out
