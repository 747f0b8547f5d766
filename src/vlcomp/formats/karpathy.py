"""COCO / Flickr30k Karpathy test files as the ARO and BLIP code read them (``coco_karpathy_test.json``,
``flickr30k_test.json``): a JSON list of ``{"image": str, "caption": [str, ...]}``, image keys unique.

``load_karpathy(..., clean=True)`` applies BLIP's ``pre_caption`` (max 30 words) to every caption, which ARO's
Order and retrieval datasets do; ``clean=False`` keeps the raw captions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..text.preprocess import pre_caption
from .records import RecordError, read_json_strict


def load_karpathy(path: str | Path, *, clean: bool = True, max_words: int = 30) -> list[dict]:
    path = Path(path)
    records = validate_karpathy(read_json_strict(path), path)
    if not records:
        raise RecordError(f"{path}: no records")
    if clean:
        records = [{**r, "caption": [pre_caption(c, max_words) for c in r["caption"]]} for r in records]
    return records


def _record(rec: Any, i: int, path: str | Path, per_caption: bool) -> tuple[str, list[str]]:
    """One record's image and captions, checked (the one per-record rule of both layouts)."""
    at = f"{path}: record {i}"
    if not isinstance(rec, dict):
        raise RecordError(f"{at}: expected a JSON object, got {type(rec).__name__}")
    for key in ("image", "caption"):
        if key not in rec:
            raise RecordError(f"{at}: missing field {key!r}")
    image = rec["image"]
    if not isinstance(image, str) or not image.strip():
        raise RecordError(f"{at}: field 'image' must be a non-empty string")
    caps = rec["caption"]
    if per_caption and not isinstance(caps, str):
        raise RecordError(f"{at} ({image}): field 'caption' must be a string (one record per caption, as in "
                          f"the first record), got {type(caps).__name__}")
    caps = [caps] if isinstance(caps, str) else caps
    if not isinstance(caps, list) or not caps:
        raise RecordError(f"{at} ({image}): field 'caption' must be a string or a non-empty list of strings")
    for j, c in enumerate(caps):
        if not isinstance(c, str) or not c.strip():
            raise RecordError(f"{at} ({image}): caption {j} is empty or not a string")
    return image, caps


def validate_karpathy(data: Any, path: str | Path) -> list[dict]:
    """COCO/Flickr Karpathy test format (one record per image): a list of ``{"image": str, "caption": [str, ...]}``
    (a single caption string is taken as a list of one). Every record checked; image keys unique."""
    if not isinstance(data, list):
        raise RecordError(f"{path}: expected a JSON list of records, got {type(data).__name__}")
    seen: set[str] = set()
    for i, rec in enumerate(data):
        image, caps = _record(rec, i, path, per_caption=False)
        rec["caption"] = caps
        if image in seen:
            raise RecordError(f"{path}: record {i}: duplicate image {image!r}")
        seen.add(image)
    return data


def read_caption_file(path: str | Path) -> list[dict]:
    """A Karpathy caption file in either of BLIP's layouts (one record per image, as the test files; or one record
    per caption, as ``coco_karpathy_train.json``) -> ``[{"image", "caption": [...]}]``, one per image in first
    appearance order, captions stripped. The layout is the first captioned record's: a later record of the other
    shape is an error naming it."""
    path = Path(path)
    data = read_json_strict(path)
    if not isinstance(data, list) or not data:
        raise RecordError(f"{path}: expected a non-empty JSON list of records")
    first = next((r for r in data if isinstance(r, dict) and "caption" in r), None)
    per_caption = first is not None and isinstance(first["caption"], str)
    grouped: dict[str, list[str]] = {}
    for i, rec in enumerate(data):
        image, caps = _record(rec, i, path, per_caption)
        if not per_caption and image in grouped:
            raise RecordError(f"{path}: record {i}: duplicate image {image!r}")
        grouped.setdefault(image, []).extend(c.strip() for c in caps)
    return [{"image": k, "caption": v} for k, v in grouped.items()]


def write_karpathy(path: str | Path, records: list[dict]) -> Path:
    """Write BLIP's / ARO's Karpathy test layout (a JSON list of ``{"image", "caption": [raw captions]}``),
    checked with :func:`validate_karpathy` first."""
    from ..io import write_json

    path = Path(path)
    records = [{"image": r["image"], "caption": list(r["caption"])} if isinstance(r, dict) else r for r in records]
    validate_karpathy(records, path)
    if not records:
        raise RecordError(f"{path}: no records to write")
    write_json(path, records)
    return path
