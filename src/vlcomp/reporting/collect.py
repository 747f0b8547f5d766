"""The metrics tree as one long table (one row per model and metric) and its statistics over whole chains, for the
toy report's tables, the claims ledger and the cross-paper matrix; and the methods a report shows.

A *chain* is one whole run of the pipeline: pretraining (the base model of base seed ``k``, ``clip-b<k>``) ->
mining -> LR selection -> fine-tuning (seed ``s``, ``<method>-b<k>s<s>``). Every method row aggregates over its
models, i.e. over chains: the base model over base seeds, a fine-tuned method over (base seed x fine-tuning seed)
pairs. ``±`` always means the sample standard deviation (ddof=1) over those chains (:func:`summary`), and
:func:`spread_legend` says, from the data, what it is over and n. The spread over perturbation seeds that some
benchmarks also report (``*_std`` keys: Order, shuffled retrieval) is a different quantity, always labelled as such.

The files are read by :mod:`vlcomp.reporting.tree` (the one reader of ``metrics/<model>/``; a model's chain comes
from its provenance or params, :func:`vlcomp.reporting.tree.chain_of`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..config import method_paper
from .tree import (
    BASE_METHOD,
    Chain,
    chain_of,
    expected_pipeline_models,
    model_dirs,
    read_metrics,
    read_provenance,
    run_record_fields,
)

#: models the reports show that are no method of params: the base model, the papers' other models (their printed
#: numbers only) and chance rows
REFERENCE_LABELS = {BASE_METHOD: "CLIP", "xvlm": "X-VLM", "blip": "BLIP", "flava": "FLAVA", "chance": "chance"}
#: Columns of :func:`collect` (``base_seed`` and ``seed`` as text: ``""`` for none).
LONG_COLUMNS: tuple[str, ...] = ("model", "method", "base", "base_seed", "seed", "key", "value", "dvc_stage")
SPREAD = "sample standard deviation (ddof = 1)"


@dataclass(frozen=True)
class Methods:
    """The methods a report shows, in order (the base model first, then ``methods`` of params in their order),
    with their labels (``methods.<name>.label``; a method without one is shown by its name)."""

    order: tuple[str, ...]
    labels: Mapping[str, str] = field(default_factory=dict)

    def label(self, method: str) -> str:
        return self.labels.get(method, REFERENCE_LABELS.get(method, method))

    def __iter__(self):
        return iter(self.order)

    def __contains__(self, method: object) -> bool:
        return method in self.order


def methods_of(params: Mapping, paper: str | None = None) -> Methods:
    """The base model and every method of ``params`` (those of ``paper`` only, when given), in params order."""
    ms = params.get("methods") or {}
    chosen = [m for m, v in ms.items() if paper is None or method_paper(params, m) == paper]
    return Methods((BASE_METHOD, *chosen), {m: (ms[m] or {}).get("label") or m for m in chosen})


# --------------------------------------------------------------------------- the long table


def ignored_models(metrics_dir: str | Path, params: Mapping[str, Any] | None = None) -> list[str]:
    """Model folders under ``metrics_dir`` that :func:`collect` leaves out: where params define the pipeline's models
    (``bases`` / ``variants``), a folder of any other name is the output of a stage params no longer define (a
    removed or renamed row; DVC leaves old outputs in the workspace), and would otherwise enter the tables."""
    params = params or {}
    if not (params.get("bases") or params.get("variants")):
        return []
    expected = set(expected_pipeline_models(params))
    return [d.name for d in model_dirs(metrics_dir) if d.name not in expected]


def collect(metrics_dir: str | Path, params: Mapping[str, Any] | None = None,
            models: Iterable[str] | None = None) -> pd.DataFrame:
    """Long table (:data:`LONG_COLUMNS`): one row per (model folder, metric) with the model's chain
    (:func:`vlcomp.reporting.tree.chain_of`: provenance, else params ``variants`` / ``bases``). Where params define
    the pipeline's models, only their folders are read (:func:`ignored_models` names the others); with ``models``
    (a paper's :attr:`vlcomp.reporting.scope.Scope.models`), only those of them."""
    params = params or {}
    ignored = set(ignored_models(metrics_dir, params))
    wanted = None if models is None else set(models)
    rows = []
    for d in model_dirs(metrics_dir, skip=ignored):
        if wanted is not None and d.name not in wanted:
            continue
        prov = read_provenance(d / "provenance.json")
        if prov is None:
            raise FileNotFoundError(f"{d / 'provenance.json'}: missing (every metrics.json has its provenance)")
        name = str(prov.get("model") or d.name)
        chain = chain_of(name, prov, params)
        for key, value in read_metrics(d / "metrics.json").items():
            rows.append({"model": name, "method": chain.method, "base": chain.base, "base_seed": chain.base_seed,
                         "seed": chain.seed, "key": key, "value": value, "dvc_stage": str(prov.get("dvc_stage") or "")})
    if not rows:
        raise FileNotFoundError(f"{metrics_dir}: no metrics.json under it (run the evaluate stages first)")
    return pd.DataFrame(rows, columns=list(LONG_COLUMNS))


def with_difference(long: pd.DataFrame, key: str, a: str, b: str) -> pd.DataFrame:
    """``long`` plus metric ``key`` = ``a - b`` for every model that has both (a per-model derived metric, so its
    spread over chains is computed like any other)."""
    return _with_derived(long, key, (a, b), lambda v: v[0] - v[1])


def with_mean(long: pd.DataFrame, key: str, keys: Sequence[str]) -> pd.DataFrame:
    """``long`` plus metric ``key`` = the mean of ``keys`` for every model that has them all."""
    return _with_derived(long, key, tuple(keys), lambda v: float(np.mean(v)))


def _with_derived(long: pd.DataFrame, key: str, keys: tuple[str, ...], fn) -> pd.DataFrame:
    sub = long[long["key"].isin(keys)]
    rows = []
    for _, g in sub.groupby("model", sort=False):
        vals = dict(zip(g["key"], g["value"], strict=True))
        if all(k in vals for k in keys):
            rows.append({**g.iloc[0].to_dict(), "key": key, "value": fn([vals[k] for k in keys])})
    return pd.concat([long, pd.DataFrame(rows, columns=long.columns)], ignore_index=True) if rows else long


# --------------------------------------------------------------------------- statistics over chains


def summary(long: pd.DataFrame) -> pd.DataFrame:
    """Per method and metric, over its models (whole chains): ``mean``, ``std`` (sample std, ddof=1; NaN for a single
    run: no spread), ``min``, ``max`` and ``n`` (the number of chains)."""
    g = long.groupby(["method", "key"])["value"]
    out = g.agg(["mean", "min", "max", "count"]).rename(columns={"count": "n"})
    out["std"] = g.std(ddof=1)
    return out.reset_index()[["method", "key", "mean", "std", "min", "max", "n"]]


def value(summ: pd.DataFrame, method: str, key: str, stat: str = "mean") -> float:
    """One statistic of :func:`summary` (NaN when the method lacks the metric)."""
    row = summ[(summ["method"] == method) & (summ["key"] == key)]
    return float(row[stat].iloc[0]) if len(row) else float("nan")


def chains(long: pd.DataFrame, method: str, keys: Iterable[str] | None = None) -> list[Chain]:
    """The chains of ``method``'s models that have any of ``keys`` (all keys when None), by base then seed."""
    sub = long[long["method"] == method]
    if keys is not None:
        sub = sub[sub["key"].isin(list(keys))]
    found = {Chain(method, b, bs, s) for b, bs, s in zip(sub["base"], sub["base_seed"], sub["seed"], strict=True)}
    return sorted(found, key=lambda c: (_num(c.base_seed), c.base, _num(c.seed)))


def _num(text: str) -> tuple[int, str]:
    return (int(text), "") if text.lstrip("-").isdigit() else (1 << 30, text)


def _join(values: Iterable[str]) -> str:
    return ", ".join(values)


NOT_RUN = "not run"
"""What a report's runs column says for a method with no run."""


def runs_label(found: Sequence[Chain]) -> str:
    """``3 chains (b0, b1, b2)``, ``1 chain (b0)`` or :data:`NOT_RUN`; chains named by base seed when every
    chain has the same fine-tuning seed, else in full (``b0s0, b0s1``)."""
    if not found:
        return NOT_RUN
    same_seed = len({c.seed for c in found}) == 1
    names = [(f"b{c.base_seed}" if c.base_seed != "" else (c.base or c.label)) if same_seed else c.label
             for c in found]
    return f"{len(found)} chain{'s' * (len(found) > 1)} ({', '.join(names)})"


def runs_phrase(found: Sequence[Chain]) -> str:
    """What a set of chains is, in words: ``3 base seeds (0, 1, 2)``, ``6 whole chains (base seeds 0, 1, 2 x
    fine-tune seeds 0, 1)``, or the list of (base seed, fine-tune seed) pairs when they are no full grid; a single
    run says so."""
    n = len(found)
    if n == 0:
        return "no run"
    bases = list(dict.fromkeys(c.base_seed or c.base for c in found))
    seeds = list(dict.fromkeys(c.seed for c in found))
    if seeds == [""]:  # base models
        known = [b for b in bases if b]
        what = f"base seed{'s' * (len(known) > 1)} {_join(known)}" if known else "the single base model"
        return f"1 run ({what}), no spread" if n == 1 else f"{n} base seeds ({_join(known)})"
    if bases == [""]:  # legacy layout: fine-tuning seeds of one unnamed base
        return (f"1 run (fine-tune seed {seeds[0]}), no spread" if n == 1
                else f"{n} fine-tune seeds ({_join(seeds)}) of one base")
    if n == 1:
        return f"1 run (base seed {bases[0]}, fine-tune seed {seeds[0]}), no spread"
    if n == len(bases) * len(seeds):
        return (f"{n} whole chains (base seed{'s' * (len(bases) > 1)} {_join(bases)} x fine-tune "
                f"seed{'s' * (len(seeds) > 1)} {_join(seeds)})")
    return f"{n} whole chains (base, fine-tune seed: " + ", ".join(f"({c.base_seed or c.base}, {c.seed})"
                                                                  for c in found) + ")"


def runs_summary(long: pd.DataFrame, methods: Methods, keys: Iterable[str] | None = None,
                 shown: Iterable[str] | None = None) -> str:
    """Per method shown (default: every method of ``methods``), the runs its rows aggregate over
    (:func:`runs_phrase`), from the models that have any of ``keys``; "" when there are none."""
    keys = None if keys is None else list(keys)
    parts = []
    for m in (methods.order if shown is None else shown):
        found = chains(long, m, keys)
        if found:
            parts.append(f"{methods.label(m)}: {runs_phrase(found)}")
    return "; ".join(parts)


SINGLE_RUN_CELL = "A cell marked (n=1) is a single run and has no spread."


def spread_legend(long: pd.DataFrame, methods: Methods, keys: Iterable[str] | None = None,
                  shown: Iterable[str] | None = None, lead: str = "± =", single: str = SINGLE_RUN_CELL) -> str:
    """The line under a table or figure: what ``±`` (``lead``: or an error bar) is over and n, per method shown,
    from the models that have any of ``keys`` (:func:`runs_summary`); ``single`` is added when a method has a single
    run."""
    keys = None if keys is None else list(keys)
    runs = runs_summary(long, methods, keys, shown)
    if not runs:
        return "No reproduced values: no spread."
    text = (f"{lead} {SPREAD} over whole-chain runs (pretrain -> mining -> LR selection -> fine-tune; one evaluated "
            f"model per run), means over the same runs. {runs}.")
    any_single = any(len(chains(long, m, keys)) == 1 for m in (methods.order if shown is None else shown))
    return f"{text} {single}" if any_single else text


# --------------------------------------------------------------------------- provenance


PROVENANCE_COLUMNS: tuple[str, ...] = ("model", "method", "base", "base_seed", "seed", "dvc_stage", "run_record",
                                       "mlflow_runs")


def provenance(long: pd.DataFrame) -> pd.DataFrame:
    """One row per evaluated model: its chain, its DVC stage, and where the stage run's record lives (commit and
    MLflow run id are not stage outputs: :func:`vlcomp.reporting.tree.run_record_fields`)."""
    cols = ["model", "method", "base", "base_seed", "seed", "dvc_stage"]
    df = long[cols].drop_duplicates("model").copy()
    df = df.assign(_m=df["method"].map(lambda m: (m != BASE_METHOD, m)), _b=df["base_seed"].map(_num),
                   _s=df["seed"].map(_num)).sort_values(["_m", "_b", "_s", "model"])
    records = pd.DataFrame([run_record_fields(s) for s in df["dvc_stage"]], index=df.index)
    return pd.concat([df[cols], records], axis=1)[list(PROVENANCE_COLUMNS)].reset_index(drop=True)
