"""VALSE's released instrument files (``data/<instrument>.json``; ce_clip catalog §2.3) and its scoring rules.

Format. Each instrument file is a JSON object keyed by foil id (``"actions_test_0"``, ``"1283539"``, ...;
ids are unique, a repeated id is refused), each value an object with at least ``dataset`` (source of the
image), ``image_file``, ``caption`` (the valid sentence), ``foil`` (the altered one) and ``mturk``
``{"caption": int, "foil": int, "other": int}`` (votes of 3 annotators). Other keys (``classes``,
``classes_foil``, ``only_caption``, ``dataset_idx`` - an int in ``foil-it.json``, a str elsewhere - ...) are
ignored. Captions are kept raw.

Validated cases only. The files hold validated and non-validated foils; a case counts only when
``mturk["caption"] >= 2`` (:data:`MIN_CAPTION_VOTES`; VALSE README, CE-CLIP ``clip_valse_eval.py``).
Every record is checked, including the non-validated ones (a malformed record is a malformed file);
:func:`load_instrument` then keeps the validated ones (``valid_only=False`` keeps all, with ``valid``).

Votes. Each of the :data:`ANNOTATORS` (3) annotators casts one vote, so every count is an int in 0..3 and
``caption + foil + other == 3``; a record breaking this (e.g. 3/3/3) is refused, naming the file and the record.
AMBIGUOUS: the catalogs say nothing about missing vote keys and VALSE's README documents the ``caption`` and
``foil`` subentries only. Every record of the released files we inspected (the first records of 10 of the 11
files and a middle stretch of ``existence.json`` and ``plurals.json``) has all three keys, but we could not read
every record, so a missing ``foil`` or ``other`` is still accepted as before; the counts present must then sum
to at most 3.

Writing. :func:`write_instrument` writes one instrument file in the released layout (a JSON object keyed by
foil id, records in the given order, 4-space indentation as the released files), every record checked with the
loader's rules first. The toy twin (:mod:`vlcomp.twins.valse`) writes its files with it.

Scoring. CE-CLIP's evaluator takes a softmax over ``[caption, foil]`` and counts ``P(caption) > 0.5``,
i.e. ``score(caption) > score(foil)`` strictly: a tie counts wrong (:data:`TIE_RULE`).

The average: two conventions, both in CE-CLIP's Table 1 (catalog §2.3, §4.3 item 1):

- :func:`average_over_instruments` - mean over the 11 instrument accuracies, the three counting files
  counted separately; the repo's ``overall_results['avg']``. CE-CLIP's "VALSE Avg." for BLIP, BEIT3, BLIP2,
  XVLM-coco, CLIP, CyCLIP, NegCLIP and CE-CLIP.
- :func:`average_over_columns` - mean over the 9 printed columns of Table 1 (Counting = mean of its three
  files). CE-CLIP's "VALSE Avg." for CE-CLIP+ (76.7) and MiniGPT-4 (68.4).

CE-XVLM's 70.8 matches neither (catalog AMBIGUOUS); we do not try to reproduce it. The repo's third,
7-category ``latex_results`` grouping (Actions and Coreference merged) is not a printed average and is left out.

Runs without all 11 files (the toy twin has no coreference instruments; a real-profile run may select
``valse_instruments``): :func:`present_column_accuracies` gives the printed columns whose files are all present,
:func:`average_over_present_instruments` / :func:`average_over_present_columns` the two conventions over what is
present. With all 11 files they equal the two averages above.

Images. :func:`image_root_key` names the image folder of a case as the CE-CLIP evaluator picks it: the
instrument's folder (:data:`IMAGE_SOURCE`), overridden by a ``COCO_{val,train}{2014,2017}`` marker in the
file name. Images are never opened at load time (:meth:`ValseCase.open_image` reads one lazily).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..io import atomic_path
from ..metrics.aro import TieRule
from .records import (
    RecordError,
    field,
    keyed_records,
    open_image,
    pairwise_correct,
    text,
    where,
)

#: The 11 instrument files (file stems), in CE-CLIP's ``DATA`` order.
INSTRUMENTS = (
    "existence", "plurals", "counting-hard", "counting-small-quant", "counting-adversarial", "relations",
    "action-replacement", "actant-swap", "coreference-standard", "coreference-hard", "foil-it",
)  # fmt: skip
#: CE-CLIP Table 1's 9 VALSE columns -> the instrument files averaged into each (only Counting has 3).
COLUMNS: dict[str, tuple[str, ...]] = {
    "existence": ("existence",),
    "plurality": ("plurals",),
    "counting": ("counting-hard", "counting-small-quant", "counting-adversarial"),
    "spatial_relations": ("relations",),
    "action_replacement": ("action-replacement",),
    "actant_swap": ("actant-swap",),
    "coreference_standard": ("coreference-standard",),
    "coreference_clean": ("coreference-hard",),
    "foil_it": ("foil-it",),
}
#: Image folder of each instrument in CE-CLIP's evaluator (keys of the ``roots`` mapping given to
#: :meth:`ValseCase.image_path`).
IMAGE_SOURCE: dict[str, str] = {
    "existence": "visual7w", "plurals": "coco_val2017", "counting-hard": "visual7w",
    "counting-small-quant": "visual7w", "counting-adversarial": "visual7w", "relations": "coco_val2017",
    "action-replacement": "swig", "actant-swap": "swig", "coreference-standard": "coco_train2014",
    "coreference-hard": "visdial_val2018", "foil-it": "coco_val2014",
}  # fmt: skip
#: File-name markers that override the instrument's folder, checked in this order (CE-CLIP evaluator).
_COCO_MARKERS = (("COCO_val2014", "coco_val2014"), ("COCO_train2014", "coco_train2014"),
                 ("COCO_val2017", "coco_val2017"), ("COCO_train2017", "coco_train2017"))
#: A foil is valid when at least 2 of the 3 annotators chose the caption (and not the foil).
MIN_CAPTION_VOTES = 2
#: Annotators per case: each casts one vote among ``caption``, ``foil`` and ``other``.
ANNOTATORS = 3
#: The vote keys of ``mturk``, in the released files' order.
VOTE_KEYS = ("foil", "caption", "other")
#: ``P(caption) > 0.5`` over ``[caption, foil]``: a tie counts wrong.
TIE_RULE = TieRule.TIE_COUNTS_WRONG


@dataclass(frozen=True)
class ValseCase:
    id: str
    instrument: str
    dataset: str
    image_file: str
    caption: str
    foil: str
    mturk_caption: int  # annotators (of 3) who chose the caption and not the foil

    @property
    def valid(self) -> bool:
        return self.mturk_caption >= MIN_CAPTION_VOTES

    def image_path(self, roots: Mapping[str, str | Path]) -> Path:
        key = image_root_key(self.instrument, self.image_file)
        if key not in roots:
            raise ValueError(f"no image folder given for {key!r} (instrument {self.instrument!r}, "
                           f"image {self.image_file!r}); known: {sorted(roots)}")
        return Path(roots[key]) / self.image_file

    def open_image(self, roots: Mapping[str, str | Path], source: str | Path = ""):
        return open_image(self.image_path(roots), where(source, repr(self.id)))


def image_root_key(instrument: str, image_file: str) -> str:
    """The image folder key CE-CLIP's evaluator uses for one case (COCO file-name markers win)."""
    for marker, key in _COCO_MARKERS:
        if marker in image_file:
            return key
    if instrument not in IMAGE_SOURCE:
        raise ValueError(f"unknown VALSE instrument {instrument!r}; known: {', '.join(INSTRUMENTS)}")
    return IMAGE_SOURCE[instrument]


def _votes(rec: object, at: str) -> int:
    """``mturk["caption"]``, after checking every vote count: ints in 0..3 summing to 3 (at most 3 when the
    optional ``foil`` / ``other`` keys are absent)."""
    mturk = field(rec, "mturk", dict, at)
    sub = f"{at}: field 'mturk'"
    counts = {}
    for name in ("caption", "foil", "other"):
        if name == "caption" or name in mturk:
            value = field(mturk, name, int, sub)
            if not 0 <= value <= ANNOTATORS:
                raise RecordError(f"{sub}: field {name!r} must be a vote count in 0..{ANNOTATORS}, got {value}")
            counts[name] = value
    total = sum(counts.values())
    shown = ", ".join(f"{k}={v}" for k, v in counts.items())
    if len(counts) == len(VOTE_KEYS) and total != ANNOTATORS:
        raise RecordError(f"{sub}: votes must sum to {ANNOTATORS} (one per annotator), got {shown} (sum {total})")
    if total > ANNOTATORS:
        raise RecordError(f"{sub}: more than {ANNOTATORS} votes, got {shown} (sum {total})")
    return counts["caption"]


def _case(key: str, rec: object, path: Path) -> ValseCase:
    at = where(path, repr(key))
    dataset = text(rec, "dataset", at)
    image_file = text(rec, "image_file", at)
    caption, foil = text(rec, "caption", at), text(rec, "foil", at)
    return ValseCase(key, path.stem, dataset, image_file, caption, foil, _votes(rec, at))


def load_instrument(path: str | Path, *, valid_only: bool = True) -> list[ValseCase]:
    """Every case of one instrument file in file order, all records checked; with ``valid_only`` (the
    papers' protocol) only the MTurk-validated ones are returned. The instrument is the file stem."""
    path = Path(path)
    data = keyed_records(path, "foil id")
    cases = [_case(key, rec, path) for key, rec in data.items()]
    kept = [c for c in cases if c.valid or not valid_only]
    if not kept:
        raise RecordError(f"{path}: no MTurk-validated case (mturk.caption >= {MIN_CAPTION_VOTES})")
    return kept


def load_all(data_dir: str | Path, instruments: tuple[str, ...] = INSTRUMENTS, *,
             valid_only: bool = True) -> dict[str, list[ValseCase]]:
    data_dir = Path(data_dir)
    return {i: load_instrument(data_dir / f"{i}.json", valid_only=valid_only) for i in instruments}


def write_instrument(path: str | Path, cases: Mapping[str, Mapping[str, Any]]) -> Path:
    """Write one instrument file in VALSE's released layout: a JSON object keyed by foil id (file order =
    ``cases`` order), each value a record with at least ``dataset``, ``image_file``, ``caption``, ``foil`` and
    ``mturk`` (other fields written as given). Every record is checked with the loader's rules first, so a bad
    record fails here, naming the file and the foil id. The instrument is the file stem."""
    path = Path(path)
    if not cases:
        raise RecordError(f"{path}: no cases to write")
    data = {}
    for key, rec in cases.items():
        if not isinstance(key, str) or not key.strip():
            raise RecordError(f"{path}: foil id must be a non-empty string, got {key!r}")
        data[key] = dict(rec)
        _case(key, data[key], path)
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as f:
        f.write(json.dumps(data, indent=4, allow_nan=False) + "\n")
    return path


def correct(caption_scores: np.ndarray, foil_scores: np.ndarray) -> np.ndarray:
    """Per case: ``score(caption) > score(foil)`` (strict; a tie is wrong, :data:`TIE_RULE`)."""
    return pairwise_correct(caption_scores, foil_scores, names="caption and foil")


def instrument_accuracies(correct_by_instrument: Mapping[str, np.ndarray]) -> dict[str, float]:
    """Accuracy of each instrument over its (validated) cases."""
    out = {}
    for name, c in correct_by_instrument.items():
        c = np.asarray(c, dtype=bool)
        if c.size == 0:
            raise ValueError(f"instrument {name!r} has no cases")
        out[name] = float(c.mean())
    return out


def _need(acc: Mapping[str, float], names: tuple[str, ...]) -> None:
    missing = [n for n in names if n not in acc]
    if missing:
        raise ValueError(f"missing instrument accuracies: {', '.join(missing)}")


def column_accuracies(acc: Mapping[str, float]) -> dict[str, float]:
    """CE-CLIP Table 1's 9 VALSE columns from the 11 instrument accuracies (Counting = mean of 3 files)."""
    _need(acc, INSTRUMENTS)
    return {col: float(np.mean([acc[i] for i in files])) for col, files in COLUMNS.items()}


def average_over_instruments(acc: Mapping[str, float]) -> float:
    """VALSE average as the mean of the 11 instrument accuracies (counting files separately): CE-CLIP's
    evaluator (``overall_results['avg']``) and its Table 1 "Avg." for BLIP, BEIT3, BLIP2, XVLM-coco, CLIP,
    CyCLIP, NegCLIP and CE-CLIP."""
    _need(acc, INSTRUMENTS)
    return float(np.mean([acc[i] for i in INSTRUMENTS]))


def average_over_columns(acc: Mapping[str, float]) -> float:
    """VALSE average as the mean of the 9 printed Table 1 columns (Counting = mean of its 3 files): CE-CLIP's
    Table 1 "Avg." for CE-CLIP+ (76.7) and MiniGPT-4 (68.4)."""
    return float(np.mean(list(column_accuracies(acc).values())))


def present_column_accuracies(acc: Mapping[str, float]) -> dict[str, float]:
    """The Table 1 columns whose instrument files are all in ``acc`` (Counting needs its 3 files), in
    :data:`COLUMNS` order; all 9 with a complete run (then equal to :func:`column_accuracies`)."""
    return {col: float(np.mean([acc[i] for i in files])) for col, files in COLUMNS.items()
            if all(i in acc for i in files)}


def average_over_present_instruments(acc: Mapping[str, float]) -> float:
    """Mean of the instrument accuracies present (:func:`average_over_instruments` with all 11)."""
    if not acc:
        raise ValueError("no instrument accuracies")
    return float(np.mean(list(acc.values())))


def average_over_present_columns(acc: Mapping[str, float]) -> float:
    """Mean of the Table 1 columns present (:func:`present_column_accuracies`; :func:`average_over_columns`
    with all 11 files)."""
    cols = present_column_accuracies(acc)
    if not cols:
        raise ValueError(f"no complete VALSE column among the instruments {sorted(acc)}")
    return float(np.mean(list(cols.values())))
