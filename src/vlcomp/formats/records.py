"""Reading and checking released annotation files: every error names the file and the record.

The loaders of ``vlcomp.formats`` read the benchmark files as their authors publish them (real profile) and
stop at the first bad record with a :class:`RecordError` (a ``ValueError``) whose message starts with
``<file>: record <id>:``. Nothing here touches images except :func:`open_image`, which reads one lazily.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


class RecordError(ValueError):
    """A malformed annotation file or record."""


def where(path: str | Path, record: object) -> str:
    return f"{path}: record {record}"


class _Duplicated(dict):
    """A JSON object in which a key repeated (``key`` is the first repeated one)."""

    key: str = ""


def _mark_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    dup = None
    for k, v in pairs:
        if k in out and dup is None:
            dup = k
        out[k] = v
    if dup is None:
        return out
    marked = _Duplicated(out)
    marked.key = dup
    return marked


def _find_duplicate(value: Any) -> str | None:
    if isinstance(value, _Duplicated):
        return value.key
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for child in children:
        found = _find_duplicate(child)
        if found is not None:
            return found
    return None


def _check_duplicates(data: Any, path: Path) -> Any:
    """Refuse a key repeated inside one JSON object, naming the record that holds it (its position in a top-level
    list, its id in a top-level object) - ``json`` would silently keep the last value."""
    if isinstance(data, _Duplicated):
        raise RecordError(f"{path}: duplicate key {data.key!r} in the top-level object (two records with one id)")
    records = enumerate(data) if isinstance(data, list) else data.items() if isinstance(data, dict) else ()
    for rid, rec in records:
        key = _find_duplicate(rec)
        if key is not None:
            rid = rid if isinstance(data, list) else repr(rid)
            raise RecordError(f"{where(path, rid)}: duplicate key {key!r} in one JSON object")
    return data


def read_json_strict(path: str | Path) -> Any:
    """``json.load`` that names the file on a missing, truncated or non-UTF-8 file and refuses duplicate keys,
    naming the record (``json`` would silently keep the last of two records with the same id)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: file not found")
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f, object_pairs_hook=_mark_duplicates)
    except json.JSONDecodeError as e:
        raise RecordError(f"{path}: not valid JSON, truncated or corrupt ({e.msg} at line {e.lineno}, "
                          f"column {e.colno})") from None
    except UnicodeDecodeError as e:
        raise RecordError(f"{path}: not UTF-8 ({e.reason} at byte {e.start})") from None
    return _check_duplicates(data, path)


def field(rec: Any, name: str, kind: type | tuple[type, ...], at: str) -> Any:
    """``rec[name]``, checked to be a ``kind``; bool is not accepted where a number is asked for."""
    if not isinstance(rec, dict):
        raise RecordError(f"{at}: expected a JSON object, got {type(rec).__name__}")
    if name not in rec:
        raise RecordError(f"{at}: missing field {name!r}")
    value = rec[name]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        raise RecordError(f"{at}: field {name!r} must be {_names(kinds)}, got bool {value!r}")
    if not isinstance(value, kinds):
        raise RecordError(f"{at}: field {name!r} must be {_names(kinds)}, got {type(value).__name__} {value!r:.80}")
    return value


def _names(kinds: Sequence[type]) -> str:
    return " or ".join(k.__name__ for k in kinds)


def text(rec: Any, name: str, at: str) -> str:
    """A caption field: a string with at least one non-space character (kept as it is, spaces included)."""
    value = field(rec, name, str, at)
    if not value.strip():
        raise RecordError(f"{at}: field {name!r} is an empty caption")
    return value


def number(rec: Any, name: str, at: str, *, minimum: float | None = None, positive: bool = False) -> float:
    value = field(rec, name, (int, float), at)
    if not math.isfinite(value):
        raise RecordError(f"{at}: field {name!r} must be finite, got {value!r}")
    if minimum is not None and value < minimum:
        raise RecordError(f"{at}: field {name!r} must be >= {minimum}, got {value!r}")
    if positive and value <= 0:
        raise RecordError(f"{at}: field {name!r} must be > 0, got {value!r}")
    return value


def open_image(path: str | Path, at: str):
    """The image at ``path`` as an RGB ``PIL.Image``; a missing or unreadable file names the path and record."""
    import io

    from PIL import Image, UnidentifiedImageError

    path = Path(path)
    try:  # the whole file in one read (PIL reads a small PNG in ~9 calls): ~25 % faster, the same pixels
        data = path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"{at}: image {path} not found") from None
    except OSError as e:
        raise RecordError(f"{at}: image {path} cannot be read ({type(e).__name__}: {e})") from None
    try:
        with Image.open(io.BytesIO(data)) as im:
            im.load()
            return im.convert("RGB")
    except (UnidentifiedImageError, OSError, SyntaxError) as e:
        raise RecordError(f"{at}: image {path} is corrupt or not an image ({type(e).__name__}: {e})") from None


def listed_records(path: str | Path, what: str = "cases") -> list[Any]:
    """A file holding one JSON list of records (named by position), non-empty."""
    path = Path(path)
    data = read_json_strict(path)
    if not isinstance(data, list):
        raise RecordError(f"{path}: expected a JSON list of {what}, got {type(data).__name__}")
    if not data:
        raise RecordError(f"{path}: no {what}")
    return data


def keyed_records(path: str | Path, what: str) -> dict[str, Any]:
    """A file holding one JSON object keyed by case id (duplicate ids refused by :func:`read_json_strict`)."""
    path = Path(path)
    data = read_json_strict(path)
    if not isinstance(data, dict):
        raise RecordError(f"{path}: expected a JSON object keyed by {what}, got {type(data).__name__}")
    if not data:
        raise RecordError(f"{path}: no cases")
    return data


def pairwise_correct(pos_scores, neg_scores, *, names: str = "positive and negative", ties_win: bool = False,
                     reject_nan: bool = True) -> np.ndarray:
    """Per case: ``pos > neg`` (a tie is wrong), or ``pos >= neg`` with ``ties_win``; the shared rule of the
    two-option benchmarks (SugarCrepe, VALSE, VL-CheckList, CC-Neg)."""
    pos, neg = np.asarray(pos_scores, dtype=np.float64), np.asarray(neg_scores, dtype=np.float64)
    if pos.shape != neg.shape or pos.ndim != 1:
        raise ValueError(f"{names} scores must be 1-D of one length, got {pos.shape} and {neg.shape}")
    if reject_nan and (np.isnan(pos).any() or np.isnan(neg).any()):
        raise ValueError("scores contain NaN")
    return pos >= neg if ties_win else pos > neg
