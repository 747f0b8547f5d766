"""COCO / Flickr30k Karpathy test files as the ARO and BLIP code read them (``coco_karpathy_test.json``,
``flickr30k_test.json``): a JSON list of ``{"image": str, "caption": [str, ...]}``, image keys unique.

``load_karpathy(..., clean=True)`` applies BLIP's ``pre_caption`` (max 30 words) to every caption, which ARO's
Order and retrieval datasets do; ``clean=False`` keeps the raw captions.
"""

from __future__ import annotations

from pathlib import Path

from ..benchmarks.formats import validate_karpathy
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
