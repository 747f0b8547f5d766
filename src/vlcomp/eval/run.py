"""Evaluating a scorer on the benchmarks, shared by both profiles: which benchmarks and inputs params name, and
:func:`evaluate_scorer`, one model's outputs.

One output folder per model: ``items/<table>.parquet`` (per-item scores and decisions; parquet keeps dtypes
and strings such as "None" exactly), ``metrics.json`` derived from the saved tables alone, ``provenance.json``.
A folder is written atomically, so an interrupted or failed model never leaves a partial result over an older
complete one. The real profile's evaluation-only entry point (released checkpoints by name) is
``vlcomp.profiles.real.evaluate.evaluate_released``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..benchmarks.registry import aggregate_tables, run_benchmarks
from ..config import PROFILES, expand_inputs
from ..io import atomic_dir, write_json
from .inputs import read_manifest

log = logging.getLogger(__name__)


def evaluation_inputs(params: Mapping[str, Any]) -> dict[str, Any]:
    """``real_inputs`` expanded, with the spaCy pipeline of ``nlp.spacy_model`` (the Order perturbations)."""
    inputs = expand_inputs(params.get("real_inputs") or {})
    inputs.setdefault("spacy_model", (params.get("nlp") or {}).get("spacy_model"))
    return inputs


def write_tables(out: Path, tables: Mapping[str, pd.DataFrame]) -> None:
    (out / "items").mkdir(parents=True, exist_ok=True)
    for name, df in tables.items():
        df.to_parquet(out / "items" / f"{name}.parquet", index=False)


def read_tables(out: str | Path) -> dict[str, pd.DataFrame]:
    d = Path(out) / "items"
    if not d.is_dir():
        raise FileNotFoundError(f"{d}: no per-item tables")
    return {p.stem: pd.read_parquet(p) for p in sorted(d.glob("*.parquet"))}


def score_benchmarks(scorer: Any, names: Sequence[str], benchmarks_dir: str | Path, *, seed: int = 0) -> dict[str, float]:
    """Metrics of one scorer on ``names``, read from a ``benchmarks`` stage output (scripts and probes: nothing
    is written)."""
    inputs = read_manifest(benchmarks_dir, seed=seed)
    return aggregate_tables(run_benchmarks(scorer, names, inputs), names, inputs)


def evaluate_scorer(scorer: Any, benchmarks: Sequence[str], inputs: Mapping[str, Any], out: str | Path,
                    provenance: Mapping[str, Any], tracker: Any = None) -> dict[str, float]:
    """One model on ``benchmarks``: ``out/items/*.parquet``, ``out/metrics.json`` (derived from the saved
    tables alone) and ``out/provenance.json`` (``provenance`` + item counts and settings: deterministic, so
    a re-run that changes nothing leaves it byte-identical; the run id and timings go to MLflow and ``runs/``), written
    atomically; the metrics are logged to ``tracker`` (an MLflow stage run) and returned."""
    if provenance.get("profile") not in PROFILES:
        raise ValueError(f"evaluate {out}: provenance must name the profile ({', '.join(PROFILES)}), "
                         f"got {provenance.get('profile')!r}")
    tracker = tracker or _NoRun()
    t0 = time.time()
    tables, seconds = run_benchmarks(scorer, benchmarks, inputs, timings=True)
    with atomic_dir(out) as tmp:
        write_tables(tmp, tables)
        metrics = aggregate_tables(read_tables(tmp), benchmarks, inputs)  # derived from the saved tables
        write_json(tmp / "metrics.json", metrics)
        write_json(tmp / "provenance.json", {
            "profile": provenance["profile"], **provenance, "n_items": {k: len(v) for k, v in tables.items()},
            "settings": {k: inputs[k] for k in _settings(benchmarks) if inputs.get(k) is not None}})
    tracker.log_metrics(metrics)
    # timings are a view (MLflow, the log), never part of a stage output a later stage reads
    timing = {f"time/{b}_s": s for b, s in seconds.items()} | {"time/total_s": round(time.time() - t0, 2)}
    tracker.log_metrics(timing)
    log.info("evaluated %s in %.1f s: %s", getattr(scorer, "name", "?"), timing["time/total_s"], seconds)
    return metrics


def _settings(benchmarks: Sequence[str]) -> list[str]:
    from ..benchmarks import benchmarks_named

    return sorted({k for b in benchmarks_named(benchmarks) for k in b.settings})


class _NoRun:
    run_id = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

    def log_metrics(self, metrics: Mapping[str, float]) -> None:
        return None
