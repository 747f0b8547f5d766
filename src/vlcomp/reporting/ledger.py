"""Claims ledger: a paper's headline claims as checks over the collected metrics, across seeds.

A claim is a list of conditions. Each condition compares metrics of one or two methods; it is evaluated on
every training seed of the methods involved (CLIP is the single pretrained base model), and it *holds* only
if it holds on every seed. The ledger shows each condition's per-seed values and their spread. The condition
builders here (:func:`at_most`, :func:`at_least`, :func:`beats`, :func:`ratio`) take the long table of
:func:`vlcomp.reporting.collect.collect`; each paper states its claims and thresholds in its module under
:mod:`vlcomp.reporting.papers` (the registry's ``claims``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .collect import Methods, per_seed


@dataclass
class Condition:
    text: str
    values: list[float]
    held: bool


@dataclass
class Claim:
    id: str
    text: str
    paper: str
    conditions: list[Condition] = field(default_factory=list)

    @property
    def held(self) -> bool:
        return bool(self.conditions) and all(c.held for c in self.conditions)


def _fmt(values: list[float]) -> str:
    v = np.asarray(values, dtype=float)
    if v.size == 1:
        return f"{v[0]:.3f}"
    return f"{v.mean():.3f} (min {v.min():.3f}, max {v.max():.3f}, n={v.size})"


def at_most(methods: Methods, long: pd.DataFrame, method: str, key: str, bound: float, what: str) -> Condition:
    """``method``'s ``key`` is at most ``bound`` on every seed."""
    vals = list(per_seed(long, key).get(method, []))
    return Condition(f"{methods.label(method)} {what} <= {bound}", vals, bool(vals) and max(vals) <= bound)


def beats(methods: Methods, long: pd.DataFrame, better: str, worse: str, key: str, margin: float,
          what: str) -> Condition:
    """``better - worse >= margin`` for every seed of ``better`` against the mean of ``worse`` over its seeds
    (CLIP has one base model; for CLIP-FT vs NegCLIP, seed i is paired with seed i when both exist)."""
    vals = per_seed(long, key)
    b, w = vals.get(better, np.array([])), vals.get(worse, np.array([]))
    if len(b) == 0 or len(w) == 0:
        return Condition(f"{what}: {methods.label(better)} - {methods.label(worse)} >= {margin}", [], False)
    diffs = list(b - w) if len(b) == len(w) else list(b - w.mean())
    return Condition(f"{what}: {methods.label(better)} - {methods.label(worse)} >= {margin}", diffs,
                     min(diffs) >= margin)


def ratio(methods: Methods, long: pd.DataFrame, method: str, num: str, den: str, bound: float, what: str) -> Condition:
    """``method``'s ``num / den`` (seed by seed) is at least ``bound`` on every seed."""
    n, d = per_seed(long, num).get(method, []), per_seed(long, den).get(method, [])
    vals = [a / b for a, b in zip(n, d, strict=False) if b > 0]
    return Condition(f"{methods.label(method)} {what} >= {bound}", vals, bool(vals) and min(vals) >= bound)


def at_least(methods: Methods, long: pd.DataFrame, method: str, key: str, bound: float, what: str) -> Condition:
    """``method``'s ``key`` is at least ``bound`` on every seed."""
    vals = list(per_seed(long, key).get(method, []))
    return Condition(f"{methods.label(method)} {what} >= {bound:.4g}", vals, bool(vals) and min(vals) >= bound)


def ledger_table(claims: list[Claim]) -> pd.DataFrame:
    """One row per condition of every claim: whether the claim and the condition held, the values over seeds."""
    rows = []
    for cl in claims:
        for cond in cl.conditions:
            rows.append({"claim": cl.id, "claim_held": "held" if cl.held else "not held", "condition": cond.text,
                         "values over seeds": _fmt(cond.values) if cond.values else "missing",
                         "condition_held": "yes" if cond.held else "no"})
    return pd.DataFrame(rows)
