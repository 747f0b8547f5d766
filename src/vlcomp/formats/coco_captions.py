"""The official COCO captions files (``annotations/captions_train2017.json``, ``captions_val2017.json``, and the
2014 ones), read as the real world's indexer reads every caption file, plus the **annotation order** that lets a
per-caption file released in the order of the ``annotations`` list be aligned to the indexed split.

Layout (COCO's)::

    {"info": ..., "licenses": ...,
     "images":      [{"id": int, "file_name": str, "height", "width", ...}, ...],
     "annotations": [{"id": int, "image_id": int, "caption": str}, ...]}

Only ``images[].id``, ``images[].file_name``, ``annotations[].id``, ``annotations[].image_id`` and
``annotations[].caption`` are read (all required; other fields are ignored). Image ids, file names and annotation ids
must be unique; an annotation whose ``image_id`` is not in ``images`` is an error. Every error is a
:class:`~vlcomp.formats.records.RecordError` naming the file and the record (``<file>: record annotations[<i>]``,
with its id). A key repeated inside one record is refused by :func:`~vlcomp.formats.records.read_json_strict`,
which names the list holding it (``record 'annotations'``).

:func:`read_coco_captions` returns the Karpathy layout every split is stored in (``[{"image", "caption": [...]}]``,
:mod:`vlcomp.formats.karpathy`), so the world stage, the generators and the fine-tuning read a COCO 2017 split as a
Karpathy one:

- ``image`` = the image's ``file_name`` (relative to the split's image folder, ``$VLCOMP_DATA/coco/train2017``);
- images are listed in order of their **first caption in** ``annotations`` (the rule of BLIP's per-caption
  ``coco_karpathy_train.json``, :func:`~vlcomp.formats.karpathy.read_caption_file`), and each image's captions in
  ``annotations`` order. COCO's ``annotations`` list is *not* grouped by image (consecutive captions belong to
  different images), so the split's flat caption order (image by image) differs from the file's; an image of
  ``images`` without a caption is left out (the split lists captioned images; COCO 2017 has none without);
- captions are **stripped** of leading and trailing whitespace (COCO's raw captions carry trailing spaces and
  newlines, e.g. ``"... on a table.\\n"``), the same cleaning as the Karpathy and CC3M readers, so one caption reads
  the same whichever file it came from; nothing else changes (case, punctuation, inner spaces and any inner newline
  are kept: the NegCLIP fork and TSVLC train on raw captions, and the ARO loaders clean their own copies). The
  stripping does not touch alignment: it is by position, never by text;
- each record also carries ``image_id`` (COCO's) and ``annotation_index``: per caption, its **position in the
  file's** ``annotations`` **list** (0-based), which is what "the i-th caption of the file" means for a file released
  one line per COCO caption (the Hard Positives authors' ``hard_positives_ft/*.jsonl``: line ``i`` = annotation
  ``i``). These two extra keys are not written to ``captions.json``.

**Annotation order sidecar.** The world stage (:func:`vlcomp.profiles.real.world.index_split`) writes
``<split>/annotation_order.json`` beside ``captions.json`` for a split read from this format
(:func:`write_annotation_order`)::

    {"format": "vlcomp-annotation-order/1", "annotations": <file>, "annotations_sha256": <sha>,
     "n_annotations": <len of the file's annotations list>,
     "annotation_index": [[i, ...], ...]}     # captions.json's shape: image by image, caption by caption

so ``annotation_index[k][j]`` is the file position of ``captions.json[k]["caption"][j]``. :func:`read_annotation_order`
reads it back, checked against ``captions.json`` (same shape, positions unique and in range) and ``index.json``
(same annotation file hash: a stale sidecar is an error), as an :class:`AnnotationOrder` whose ``flat[c]`` is the
file position of the split's flat caption ``c``. A per-caption file in the file's order is aligned with
``[lines[p] for p in order.flat]`` (:meth:`AnnotationOrder.align`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .records import RecordError, field, read_json_strict, text, where

FORMAT_NAME = "coco_captions"
ORDER_FILE = "annotation_order.json"
ORDER_FORMAT = "vlcomp-annotation-order/1"


def _list(data: dict, key: str, path: Path) -> list:
    if key not in data:
        raise RecordError(f"{path}: missing top-level field {key!r} (COCO captions layout: an object with 'images' "
                          f"and 'annotations' lists)")
    value = data[key]
    if not isinstance(value, list):
        raise RecordError(f"{path}: top-level field {key!r} must be a list, got {type(value).__name__}")
    return value


def _int_id(rec: Any, name: str, at: str) -> int:
    return field(rec, name, int, at)  # bool refused by field()


def _images(data: dict, path: Path) -> dict[int, str]:
    """``images[].id`` -> ``file_name``, checked (unique ids and file names)."""
    files: dict[int, str] = {}
    where_id: dict[int, int] = {}
    where_file: dict[str, int] = {}
    for i, rec in enumerate(_list(data, "images", path)):
        at = where(path, f"images[{i}]")
        image_id = _int_id(rec, "id", at)
        file_name = text(rec, "file_name", at)
        if file_name != file_name.strip():
            raise RecordError(f"{at} (id {image_id}): field 'file_name' {file_name!r} has leading or trailing spaces")
        if image_id in where_id:
            raise RecordError(f"{at}: image id {image_id} repeats images[{where_id[image_id]}]")
        if file_name in where_file:
            raise RecordError(f"{at} (id {image_id}): file_name {file_name!r} repeats images[{where_file[file_name]}]")
        where_id[image_id], where_file[file_name] = i, i
        files[image_id] = file_name
    return files


def read_coco_captions(path: str | Path) -> list[dict]:
    """``captions_*.json`` -> ``[{"image": file_name, "caption": [str, ...], "image_id": int,
    "annotation_index": [int, ...]}]``, one record per captioned image in order of its first caption in
    ``annotations``, captions stripped, in ``annotations`` order; ``annotation_index[j]`` is caption ``j``'s position
    in the file's ``annotations`` list (see the module notes)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: COCO captions file not found")
    data = read_json_strict(path)
    if not isinstance(data, dict):
        raise RecordError(f"{path}: expected a JSON object with 'images' and 'annotations' lists (COCO captions "
                          f"layout), got {type(data).__name__}")
    files = _images(data, path)
    annotations = _list(data, "annotations", path)
    if not annotations:
        raise RecordError(f"{path}: no captions (empty 'annotations' list)")
    grouped: dict[int, dict] = {}
    seen_ids: dict[int, int] = {}
    for i, rec in enumerate(annotations):
        at = where(path, f"annotations[{i}]")
        ann_id = _int_id(rec, "id", at)
        at = f"{at} (id {ann_id})"
        image_id = _int_id(rec, "image_id", at)
        caption = text(rec, "caption", at)
        if ann_id in seen_ids:
            raise RecordError(f"{at}: annotation id {ann_id} repeats annotations[{seen_ids[ann_id]}]")
        seen_ids[ann_id] = i
        if image_id not in files:
            raise RecordError(f"{at}: image_id {image_id} is not in the file's 'images' list")
        rec_out = grouped.get(image_id)
        if rec_out is None:
            rec_out = grouped[image_id] = {"image": files[image_id], "caption": [], "image_id": image_id,
                                           "annotation_index": []}
        rec_out["caption"].append(caption.strip())
        rec_out["annotation_index"].append(i)
    return list(grouped.values())


def flat_annotation_index(records: Sequence[dict]) -> list[int]:
    """Per flat caption of ``records`` (image by image, caption by caption), its position in the annotation file."""
    return [i for r in records for i in r["annotation_index"]]


# --------------------------------------------------------------------------------------------------------------
# The sidecar: annotation order of an indexed split
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AnnotationOrder:
    """The annotation order of an indexed split (``<split>/annotation_order.json``).

    ``flat[c]`` is the position, in the annotation file's ``annotations`` list, of the split's flat caption ``c``
    (``captions.json`` image by image, caption by caption); ``n_annotations`` the length of that list."""

    path: Path  # the sidecar
    annotations: str  # the annotation file it was written from
    n_annotations: int
    flat: tuple[int, ...]

    def align(self, lines: Sequence[Any]) -> list[Any]:
        """``lines`` given one per annotation of the file, in its order -> one per caption of the split, in the
        split's flat order. ``len(lines)`` must be ``n_annotations`` (the caller names its file on a mismatch)."""
        if len(lines) != self.n_annotations:
            raise ValueError(f"{len(lines)} lines for the {self.n_annotations} annotations of {self.annotations} "
                             f"({self.path})")
        return [lines[p] for p in self.flat]


def write_annotation_order(split_dir: str | Path, records: Sequence[dict], *, annotations: str, sha256: str,
                           n_annotations: int | None = None) -> Path:
    """Write ``split_dir/annotation_order.json`` for ``records`` (as :func:`read_coco_captions` returns them);
    ``n_annotations`` defaults to the number of captions (every annotation of the file became a caption)."""
    from ..io import write_json

    index = [list(r["annotation_index"]) for r in records]
    n = sum(len(ix) for ix in index) if n_annotations is None else n_annotations
    path = Path(split_dir) / ORDER_FILE
    write_json(path, {"format": ORDER_FORMAT, "annotations": str(annotations), "annotations_sha256": sha256,
                      "n_annotations": n, "annotation_index": index})
    return path


def read_annotation_order(split_dir: str | Path, captions: Sequence[Sequence[str]]) -> AnnotationOrder | None:
    """The split's :class:`AnnotationOrder`, or None when it has no sidecar (a toy split, or a real one read from
    BLIP's Karpathy files or a caption TSV: its flat caption order is its only order). Checked against the split's
    ``captions`` (``captions.json``: the same number of captions per image) and its ``index.json`` (the same
    annotation file hash); positions must be unique ints in ``[0, n_annotations)``. Errors name the sidecar."""
    from ..io import read_json

    split_dir = Path(split_dir)
    path = split_dir / ORDER_FILE
    if not path.exists():
        return None
    data = read_json(path)
    if not isinstance(data, dict) or data.get("format") != ORDER_FORMAT:
        got = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise ValueError(f"{path}: not an annotation-order file (format {got!r}, expected {ORDER_FORMAT!r}); rerun "
                         "the world stage")
    for key in ("annotations", "annotations_sha256", "n_annotations", "annotation_index"):
        if key not in data:
            raise ValueError(f"{path}: missing field {key!r} (rerun the world stage)")
    n = data["n_annotations"]
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"{path}: n_annotations={n!r}: must be a positive int")
    index = data["annotation_index"]
    shape = [len(c) for c in captions]
    if not isinstance(index, list) or [len(x) if isinstance(x, list) else None for x in index] != shape:
        raise ValueError(f"{path}: annotation_index does not have the shape of {split_dir / 'captions.json'} "
                         f"({len(shape)} images, {sum(shape)} captions): a stale sidecar, rerun the world stage")
    flat = [p for ix in index for p in ix]
    bad = next((p for p in flat if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p < n), None)
    if bad is not None:
        raise ValueError(f"{path}: annotation position {bad!r} is not an int in [0, {n})")
    if len(set(flat)) != len(flat):
        raise ValueError(f"{path}: an annotation position repeats (two captions of the split from one annotation)")
    index_path = split_dir / "index.json"
    if index_path.exists():
        sha = read_json(index_path).get("annotations_sha256")
        if sha is not None and sha != data["annotations_sha256"]:
            raise ValueError(f"{path}: written from another annotation file than {index_path} indexes "
                             f"(annotations_sha256 differs): a stale sidecar, rerun the world stage")
    return AnnotationOrder(path, str(data["annotations"]), n, tuple(flat))
