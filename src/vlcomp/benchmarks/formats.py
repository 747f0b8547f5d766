"""Validation of annotation formats shared by both profiles; errors name the file and the record."""

from __future__ import annotations

from pathlib import Path
from typing import Any


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
