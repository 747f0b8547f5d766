"""Small helpers shared by the real-profile runners: reading the inputs mapping, MLflow-safe key parts."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..formats.records import open_image, where
from ..metrics import check_metric_keys

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def need(inputs: Mapping[str, Any], key: str, bench: str) -> Any:
    """``inputs[key]``; a missing or empty value is an error naming the benchmark and the parameter."""
    value = inputs.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise ValueError(f"{bench}: input {key!r} is not set (params real_inputs.{key})")
    return value


def need_path(inputs: Mapping[str, Any], key: str, bench: str, *, directory: bool = False) -> Path:
    """An input path that must exist (a directory with ``directory=True``)."""
    path = Path(str(need(inputs, key, bench)))
    if not path.exists():
        raise FileNotFoundError(f"{bench}: input {key!r}: {path} not found")
    if directory and not path.is_dir():
        raise NotADirectoryError(f"{bench}: input {key!r}: {path} is not a directory")
    return path


def key_part(name: object) -> str:
    """A group name as one MLflow-safe key segment: runs of other characters (spaces, ``/``, quotes) -> ``_``
    (``"in front of"`` -> ``in_front_of``)."""
    return _UNSAFE.sub("_", str(name)).strip("_") or "_"


def checked(metrics: dict[str, float]) -> dict[str, float]:
    """The metrics dict with plain floats, every key checked MLflow-safe."""
    check_metric_keys(metrics)
    return {k: float(v) for k, v in metrics.items()}


def table(tables: Mapping[str, pd.DataFrame], name: str, columns: tuple[str, ...]) -> pd.DataFrame:
    """``tables[name]`` with the columns an aggregate reads (an error names the table and what is missing)."""
    if name not in tables:
        raise ValueError(f"no per-item table {name!r} (have: {', '.join(sorted(tables)) or 'none'})")
    df = tables[name]
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"per-item table {name!r} lacks columns {missing}")
    if len(df) == 0:
        raise ValueError(f"per-item table {name!r} is empty")
    return df


def as_bool(series: pd.Series) -> np.ndarray:
    """A bool column, also after a CSV round trip (``True``/``False`` strings or 0/1)."""
    if series.dtype == bool:
        return series.to_numpy()
    mapped = series.map({True: True, False: False, "True": True, "False": False, "true": True, "false": False})
    if mapped.isna().any():
        raise ValueError(f"column {series.name!r} is not boolean (e.g. {series[mapped.isna()].iloc[0]!r})")
    return mapped.to_numpy(dtype=bool)


def as_text(series: pd.Series) -> list[str]:
    """A text column as str, empty cells (read back from CSV as NaN) as ``""``."""
    return ["" if v is None or (not isinstance(v, str) and pd.isna(v)) else str(v) for v in series]


def finish_pair(meta: pd.DataFrame, scores: np.ndarray, correct_fn) -> pd.DataFrame:
    """Per-item table of a two-caption benchmark: ``score_pos``, ``score_neg`` (columns 0 and 1 of ``scores``) and
    ``correct`` decided once, on the full-precision scores, by the benchmark's rule."""
    df = meta.copy()
    df["score_pos"], df["score_neg"] = scores[:, 0].astype(np.float64), scores[:, 1].astype(np.float64)
    df["correct"] = correct_fn(scores[:, 0], scores[:, 1])
    return df


def derangement(n: int, rng: np.random.Generator) -> np.ndarray:
    """A random permutation of ``range(n)`` with no fixed point (``n >= 2``): walk a random cycle order."""
    if n < 2:
        raise ValueError(f"a derangement needs at least 2 items, got {n}")
    order = rng.permutation(n)
    out = np.empty(n, dtype=np.int64)
    out[order] = np.roll(order, -1)
    return out


WRONG_IMAGE = "wrong_image"
"""The name of the wrong-image control: a task's control of that name, the per-item columns ``wrong_image`` (the
item whose image was used), ``wrong_score_*`` and ``wrong_correct``, and metric keys ``.../wrong_image_acc``."""


def wrong_image_control(keys: Sequence[Any], seed: int, name: str) -> tuple[dict[str, list[Any]], np.ndarray | None]:
    """The wrong-image control of a choice task whose items share images (SugarCrepe, VALSE, VL-CheckList): the
    distinct images are permuted with no fixed point (a derangement drawn from ``np_rng(seed, "evaluate",
    "wrong_image", name)``), so every item is scored again on an image that is not its own, with its own captions.
    Returns ``({"wrong_image": [image key per item]}, the index of the first item showing that image)``, or
    ``({}, None)`` when the task has fewer than two distinct images. What survives the wrong image is a text-side
    prior over which caption is plausible; own minus wrong is what the model reads off the image."""
    from ..seeding import np_rng

    first: dict[Any, int] = {}
    for i, k in enumerate(keys):
        first.setdefault(k, i)
    unique = list(first)
    if len(unique) < 2:
        return {}, None
    perm = derangement(len(unique), np_rng(seed, "evaluate", WRONG_IMAGE, name))
    pos = {k: j for j, k in enumerate(unique)}
    wrong = [unique[perm[pos[k]]] for k in keys]
    return {WRONG_IMAGE: wrong}, np.array([first[k] for k in wrong], dtype=np.int64)


def finish_pair_controlled(meta: pd.DataFrame, scores: np.ndarray, correct_fn,
                           extras: Mapping[str, np.ndarray] | None = None) -> pd.DataFrame:
    """:func:`finish_pair`, plus the wrong-image control when scored (``extras``): ``wrong_score_pos``,
    ``wrong_score_neg`` and ``wrong_correct``, decided by the same rule (``meta`` carries ``wrong_image``)."""
    df = finish_pair(meta, scores, correct_fn)
    if extras and WRONG_IMAGE in extras:
        w = extras[WRONG_IMAGE]
        df["wrong_score_pos"], df["wrong_score_neg"] = w[:, 0].astype(np.float64), w[:, 1].astype(np.float64)
        df["wrong_correct"] = correct_fn(w[:, 0], w[:, 1])
    return df


def grouped_loader(keys: Sequence[str], rows: Sequence[tuple[str, Any]],
                    sources: Mapping[str, str | Path] | None):
    """Lazy image loader for ``(group, case)`` rows keyed by image path; errors name the group's file (from
    ``sources``, else ``<group>.json``) and the first case that uses the image."""
    from .engine import first_by_key

    first = first_by_key(keys, rows)
    sources = sources or {}

    def load(key: str):
        group, case = first[key]
        return open_image(key, where(sources.get(group, f"{group}.json"), repr(case.id)))

    return load
