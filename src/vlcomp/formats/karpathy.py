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
    try:
        records = validate_karpathy(read_json_strict(path), path)
    except RecordError:
        raise
    except ValueError as e:  # validate_karpathy's messages already name the file and record
        raise RecordError(str(e)) from None
    if not records:
        raise RecordError(f"{path}: no records")
    if clean:
        records = [{**r, "caption": [pre_caption(c, max_words) for c in r["caption"]]} for r in records]
    return records


def validate_karpathy(data: Any, path: str | Path) -> list[dict]:
    """COCO/Flickr Karpathy test format: a list of ``{"image": str, "caption": [str, ...]}``.

    Checks every record: the fields exist with the right types, captions are non-empty strings, image
    keys are unique.
    """
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of records, got {type(data).__name__}")
    seen: set[str] = set()
    for i, rec in enumerate(data):
        where = f"{path}: record {i}"
        if not isinstance(rec, dict):
            raise ValueError(f"{where}: expected an object, got {type(rec).__name__}")
        for field in ("image", "caption"):
            if field not in rec:
                raise ValueError(f"{where}: missing field {field!r}")
        if not isinstance(rec["image"], str) or not rec["image"]:
            raise ValueError(f"{where}: field 'image' must be a non-empty string")
        caps = rec["caption"]
        if isinstance(caps, str):
            caps = rec["caption"] = [caps]
        if not isinstance(caps, list) or not caps:
            raise ValueError(f"{where} ({rec['image']}): field 'caption' must be a non-empty list of strings")
        for j, c in enumerate(caps):
            if not isinstance(c, str) or not c.strip():
                raise ValueError(f"{where} ({rec['image']}): caption {j} is empty or not a string")
        if rec["image"] in seen:
            raise ValueError(f"{where}: duplicate image {rec['image']!r}")
        seen.add(rec["image"])
    return data


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
