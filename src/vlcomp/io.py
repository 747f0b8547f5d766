"""File helpers: atomic writes (nothing half-written is left as a stage output) and validated reads."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def _strict(obj: Any) -> Any:
    """Non-finite floats become ``null``: JSON has no NaN, and DVC / jq / browsers reject the bare token."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _strict(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_strict(v) for v in obj]
    return obj


def write_json(path: str | os.PathLike, obj: Any) -> None:
    """Strict JSON (non-finite floats written as ``null``), written atomically."""
    with atomic_path(path) as tmp, open(tmp, "w") as f:
        json.dump(_strict(obj), f, indent=2, sort_keys=True, allow_nan=False)
        f.write("\n")


def write_jsonl(path: str | os.PathLike, records: Iterable[dict]) -> None:
    with atomic_path(path) as tmp, open(tmp, "w") as f:
        for rec in records:
            f.write(json.dumps(rec, sort_keys=True) + "\n")


def write_npy(path: str | os.PathLike, arr: np.ndarray) -> None:
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        np.save(f, arr, allow_pickle=False)


def read_json(path: str | os.PathLike) -> Any:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: file not found")
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON ({e.msg} at line {e.lineno}, column {e.colno})") from None
    except UnicodeDecodeError as e:  # e.g. a file truncated inside a multi-byte character
        raise ValueError(f"{path}: not valid UTF-8 JSON ({e.reason} at byte {e.start})") from None


def read_jsonl(path: str | os.PathLike) -> list[dict]:
    """Read one JSON object per line; a broken record is reported with its file and line number."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: file not found")
    out = []
    with open(path, "rb") as f:  # decode line by line, so an undecodable line is reported by number
        for lineno, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise ValueError(f"{path}:{lineno}: broken record (not UTF-8: {e.reason})") from None
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{lineno}: broken record ({e.msg})") from None
            if not isinstance(rec, dict):
                raise ValueError(f"{path}:{lineno}: record is a {type(rec).__name__}, expected an object")
            out.append(rec)
    return out


def read_npy(path: str | os.PathLike, *, dtype: str | None = None, ndim: int | None = None) -> np.ndarray:
    """Load an array, naming the file when it is missing, truncated or of the wrong kind."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: file not found")
    try:
        arr = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as e:
        raise ValueError(f"{path}: corrupt array file ({e})") from None
    if dtype is not None and arr.dtype != np.dtype(dtype):
        raise ValueError(f"{path}: dtype {arr.dtype}, expected {dtype}")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{path}: {arr.ndim}-d array, expected {ndim}-d")
    return arr


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike) -> Iterator[Path]:
    """Build a directory output in a temporary sibling; it replaces ``path`` only if the block succeeds.

    A stage that fails half-way leaves no partial output directory behind (and an existing one untouched).
    """
    import shutil

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        yield tmp
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


#: Fields of a training-history record that measure the machine, not the run (left out of plots files).
TIMING_FIELDS = frozenset({"samples_per_s", "seconds", "step_time_s"})


def without_timings(history: list[dict]) -> list[dict]:
    """A training history without its timing fields (``TIMING_FIELDS``), so a file holding it is a pure function
    of the run; the timings stay in the MLflow view."""
    return [{k: v for k, v in rec.items() if k not in TIMING_FIELDS} for rec in history]


def write_training_curve(path: str | os.PathLike, history: list[dict]) -> None:
    """A training history as the data series a DVC plot reads (``dvc plots show / diff``): one record per logged
    step, timing fields dropped."""
    write_json(path, without_timings(history))


def tree_digest(root: str | Path) -> str:
    """The content of a directory as text: one ``<sha256>  <relative path>`` line per file (``sha256sum``'s
    format), sorted by path. A stage that reads a large output folder depends on this one file (written beside the
    folder by the stage that writes it) instead of DVC hashing thousands of files for every reader: any change of
    a file's bytes, name or presence changes the digest."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: not a directory")
    files = sorted((p for p in root.rglob("*") if p.is_file()), key=lambda p: p.relative_to(root).as_posix())
    return "".join(f"{sha256_file(p)}  {p.relative_to(root).as_posix()}\n" for p in files)


def write_tree_digest(root: str | Path, out: str | Path) -> Path:
    """:func:`tree_digest` of ``root`` written atomically to ``out``."""
    with atomic_path(out) as tmp:
        tmp.write_text(tree_digest(root))
    return Path(out)
