"""Claims ledger: a paper's headline claims as conditions over whole-chain runs, with item-level intervals.

A claim is a list of conditions; each compares a metric of one method with a bound, or the difference of two
methods' metrics with a margin. Verdict rule (:data:`VERDICT_RULE`, :func:`holds`): **a condition holds iff it holds
on every whole chain it is evaluated on** — for a condition on one method, on each of that method's models (one per
chain: base seed, or base seed x fine-tuning seed); for a comparison, on each chain pair (:func:`pair_chains`: a
fine-tuned chain ``b<k>s<s>`` against the base model of its own chain ``b<k>``, or against the other method's chain
``b<k>s<s>``). So the worst chain decides, not the mean. A claim holds iff it has conditions and all of them hold.

Power rule (:data:`POWER_RULE`): a condition that does not hold is **underpowered**, not "not held", when its
test-set standard error (the bootstrap SE over items of its chain-averaged value) exceeds a third of the margin it
tests (:attr:`Condition.margin`: a comparison's margin, or a bound's distance from its reference, e.g. chance). A
claim with a condition that does not hold is "not held" when one of them is adequately powered, else underpowered.
A condition without a per-item definition or without a margin gets no power check (its note says so).

Next to the verdict each condition shows its value (mean over chains or chain pairs), the whole-chain spread (sample
std, ddof=1), min, max and n, and, for a metric with a per-item definition (:mod:`vlcomp.reporting.items`), an
item-level bootstrap interval: of the per-item difference averaged over the chain pairs (a comparison), or of the
per-item score averaged over the chains (one method). For a nested macro (VL-CheckList's Object / Attribute /
Relation, the ELEVATER twin's mean over tasks, and per-model linear combinations of them that the Evidence is told
of, ``derived``) the bootstrap is stratified instead: items resampled within each file / task, the same draws for
every model, the macro recomputed per resample (:func:`vlcomp.reporting.items.stratified_interval`; the condition's
``resampling`` says so and the legend repeats it). The interval says how much the value would move on another
draw of test items; whether it clears the bound is shown but does not enter the verdict. The condition builders
(:func:`at_most`, :func:`at_least`, :func:`beats`, its mirror :func:`gains_at_most`, :func:`ratio`) take an
:class:`Evidence` (the long table of :func:`vlcomp.reporting.collect.collect` and where the per-item tables are);
each paper states its claims and thresholds in its module under :mod:`vlcomp.reporting.papers` (the registry's
``claims``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..seeding import derive_seed
from .collect import Methods, chains, runs_phrase
from .items import (
    Bootstrap,
    ItemScores,
    NestedMacro,
    StratifiedScores,
    bootstrap_interval,
    chain_average,
    combine_macros,
    item_metric,
    metric_value,
    nested_metric,
    nested_value,
    read_item_scores,
    read_stratum_table,
    stratified_interval,
    stratified_scores,
)
from .render import Table, number
from .tree import Chain, read_provenance

FLOAT_TOL = 1e-9
"""Float noise: the ledger compares with a bare ``>=`` (:func:`holds`), so a difference of two accuracies that should
equal a bound exactly (0.38 - 0.40 vs -0.02) may miss it by 1e-17. Bounds are moved by this much: ``>= b`` is checked
as ``>= b - FLOAT_TOL``, ``> b`` as ``>= b + FLOAT_TOL`` (a tie is no gain)."""
STRICT = FLOAT_TOL
"""'Greater than 0' as the ledger's '>=' needs it: a margin just above float noise, so a tie is no gain."""

VERDICT_RULE = ("A condition holds iff it holds on every whole chain it is evaluated on: for one method, on each of "
                "its models (one per chain); for a comparison, on each chain pair (a fine-tuned chain b<k>s<s> "
                "against the base model of its own chain b<k>, or against the other method's chain b<k>s<s>). The "
                "worst chain decides, not the mean. A claim holds iff all its conditions hold.")
POWER_FRACTION = 1 / 3
POWER_RULE = ("A condition that does not hold is underpowered (not 'not held') when its test-set standard error, the "
              "bootstrap SE over test items of its chain-averaged value, exceeds a third of the margin it tests "
              "(a comparison's margin, a bound's distance from chance, or for a sign test the effect the paper "
              "printed): the test set cannot resolve that margin. "
              "A claim is not held when one of its failing conditions is adequately powered, underpowered when "
              "every failing condition is.")
INTERVAL_NOTE_RATIO = "no item-level interval: a ratio of two metrics"
NOTE_SIGN = "tests a sign (no margin): no power rule"
NOTE_EFFECT = "tests a sign; power judged against the paper's printed effect ({effect:+.4f})"
STRATIFIED_RULE = ("**Stratified bootstrap** (nested macros): the metric is a tree of unweighted means of per-stratum "
                   "accuracies, so items are resampled with replacement within each stratum (every stratum keeps its "
                   "size), with the same draws for every model of the condition (paired over the same items), and the "
                   "same nested macro (with the benchmark's rounding) is recomputed on every resample; the interval is "
                   "the {method} interval of the {n:,} resampled values (numpy draws seeded from root_seed per "
                   "condition) and the test SE their standard deviation. Here: {what}.")
MIN_MARGIN = 1e-6  # a bound this close to its reference tests a sign ("> 0"), not a margin: no power rule
HELD, NOT_HELD, UNDERPOWERED = "held", "not held", "underpowered"
MATCH_TOLERANCE = 1e-9  # per-item recomputation vs metrics.json


class Evidence:
    """What conditions are checked on: the collected metrics (``long``, one row per model and metric with its
    chain), the metrics tree holding each model's per-item tables (``metrics_dir``; None: no intervals), the
    bootstrap settings and ``derived``: per-model metrics of ``long`` that are linear combinations of others
    (key -> {key: coefficient}; a paper's derived metrics, e.g. TSVLC's mean(Attribute, Relation)), so a nested
    macro's per-item definition extends to them. Per-item scores are read once per (model, metric)."""

    def __init__(self, long: pd.DataFrame, metrics_dir: str | Path | None = None,
                 bootstrap: Bootstrap | None = None, derived: Mapping[str, Mapping[str, float]] | None = None) -> None:
        self.long = long
        self.metrics_dir = None if metrics_dir is None else Path(metrics_dir)
        self.bootstrap = bootstrap or Bootstrap(seed=0)
        self.derived = {k: dict(v) for k, v in (derived or {}).items()}
        self._scores: dict[tuple[str, str], ItemScores] = {}
        self._nested: dict[tuple[str, str], StratifiedScores] = {}
        self._tables: dict[tuple[str, str], pd.DataFrame] = {}

    def rows(self, method: str, key: str) -> pd.DataFrame:
        """``method``'s models that have ``key``, by chain."""
        sub = self.long[(self.long["method"] == method) & (self.long["key"] == key)]
        order = {(c.base, c.seed): i for i, c in enumerate(chains(self.long, method, [key]))}
        return sub.iloc[sorted(range(len(sub)), key=lambda i: order[(sub["base"].iloc[i], sub["seed"].iloc[i])])]

    def item_scores(self, model: str, key: str) -> ItemScores:
        """``model``'s per-item scores of ``key``, checked to give the value of its ``metrics.json``."""
        if (model, key) not in self._scores:
            if self.metrics_dir is None:
                raise FileNotFoundError("no metrics tree given")
            metric = item_metric(key)
            if metric is None:
                raise ValueError(f"no per-item definition of {key}")
            folder = self.metrics_dir / model
            scores = read_item_scores(folder, metric, read_provenance(folder / "provenance.json"))
            self._check(model, key, metric_value(scores), folder)
            self._scores[(model, key)] = scores
        return self._scores[(model, key)]

    def nested_metric(self, key: str) -> NestedMacro | None:
        """``key``'s nested-macro definition (:func:`vlcomp.reporting.items.nested_metric`), also for a ``derived``
        key whose every part has one; None otherwise."""
        if key in self.derived:
            parts = [(nested_metric(k), c) for k, c in self.derived[key].items()]
            if not parts or any(m is None for m, _ in parts):
                return None
            try:
                return combine_macros(parts)  # type: ignore[arg-type]
            except ValueError:
                return None
        return nested_metric(key)

    def nested_scores(self, model: str, key: str) -> StratifiedScores:
        """``model``'s per-item scores of the nested macro ``key``, checked to give the value of ``long``."""
        if (model, key) not in self._nested:
            if self.metrics_dir is None:
                raise FileNotFoundError("no metrics tree given")
            metric = self.nested_metric(key)
            if metric is None:
                raise ValueError(f"no per-item definition of {key}")
            folder = self.metrics_dir / model
            if (model, metric.table) not in self._tables:
                self._tables[(model, metric.table)] = read_stratum_table(folder, metric)
            scores = stratified_scores(self._tables[(model, metric.table)], metric,
                                       str(folder / "items" / f"{metric.table}.parquet"))
            self._check(model, key, nested_value(scores), folder)
            self._nested[(model, key)] = scores
        return self._nested[(model, key)]

    def _check(self, model: str, key: str, got: float, folder: Path) -> None:
        """The value recomputed from ``model``'s items equals its value in ``long`` (its ``metrics.json``)."""
        want = self.long[(self.long["model"] == model) & (self.long["key"] == key)]["value"]
        if len(want) != 1 or not math.isclose(got, float(want.iloc[0]), abs_tol=MATCH_TOLERANCE):
            raise ValueError(f"{folder}: {key} recomputed from the items is {got:.6f}, metrics.json says "
                             f"{float(want.iloc[0]) if len(want) else 'nothing'}")


def _evidence(ev: Evidence | pd.DataFrame) -> Evidence:
    return ev if isinstance(ev, Evidence) else Evidence(ev)


def holds(values: list[float], bound: float, at_least: bool) -> bool:
    """:data:`VERDICT_RULE` for one condition: every value clears ``bound`` (``>=`` or ``<=``); none: not held."""
    return bool(values) and all((v >= bound) if at_least else (v <= bound) for v in values)


@dataclass
class Condition:
    """One condition: its ``values`` (one per chain or chain pair, named by ``runs``), the bound they must clear
    (``>= bound`` when ``at_least``, else ``<= bound``), the item-level ``interval`` (None: not computed, ``note``
    says why), its test-set standard error ``se`` (NaN: not computed), the ``margin`` it tests (None: it tests
    a sign or a ratio, no power rule) and ``resampling``: how the items were resampled for ``se`` when it was not
    the plain paired bootstrap (a nested macro's strata, :data:`STRATIFIED_RULE`)."""

    text: str
    values: list[float]
    runs: list[str]
    bound: float
    at_least: bool
    interval: tuple[float, float] | None = None
    note: str = ""
    se: float = math.nan
    margin: float | None = None
    resampling: str = ""

    @property
    def held(self) -> bool:
        return holds(self.values, self.bound, self.at_least)

    @property
    def underpowered(self) -> bool:
        """Not held, and the test set's standard error exceeds :data:`POWER_FRACTION` of the margin tested."""
        return (not self.held and bool(self.values) and self.margin is not None and not math.isnan(self.se)
                and self.se > POWER_FRACTION * self.margin)

    @property
    def verdict(self) -> str:
        return HELD if self.held else UNDERPOWERED if self.underpowered else NOT_HELD

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float:
        return float(np.mean(self.values)) if self.values else math.nan

    @property
    def spread(self) -> float:
        """Sample std over chains (ddof=1); NaN for fewer than two."""
        return float(np.std(self.values, ddof=1)) if len(self.values) > 1 else math.nan

    @property
    def interval_clears(self) -> bool | None:
        """Whether the whole interval lies on the bound's side (None without an interval)."""
        if self.interval is None:
            return None
        return self.interval[0] >= self.bound if self.at_least else self.interval[1] <= self.bound


@dataclass
class Claim:
    id: str
    text: str
    paper: str
    conditions: list[Condition] = field(default_factory=list)

    @property
    def held(self) -> bool:
        return bool(self.conditions) and all(c.held for c in self.conditions)

    @property
    def verdict(self) -> str:
        """held; not held when a failing condition is adequately powered (or it has none); else underpowered."""
        if self.held:
            return HELD
        failing = [c for c in self.conditions if not c.held]
        return UNDERPOWERED if failing and all(c.underpowered for c in failing) else NOT_HELD


def _chain(row: pd.Series) -> Chain:
    return Chain(row["method"], row["base"], row["base_seed"], row["seed"])


def pair_chains(ev: Evidence, better: str, worse: str, key: str) -> tuple[list[tuple[pd.Series, pd.Series]], list[str]]:
    """Chain pairs of ``better`` and ``worse`` on ``key``: each model of ``better`` with the model(s) of ``worse``
    of the same chain — the same base and the same fine-tuning seed, or the base model of that chain when either is
    one. Returns the pairs and the models of ``better`` left without a partner."""
    a_rows, b_rows = ev.rows(better, key), ev.rows(worse, key)
    pairs, unpaired = [], []
    for _, a in a_rows.iterrows():
        match = [b for _, b in b_rows.iterrows()
                 if b["base"] == a["base"] and (b["seed"] == a["seed"] or "" in (a["seed"], b["seed"]))]
        pairs += [(a, b) for b in match]
        if not match:
            unpaired.append(str(a["model"]))
    return pairs, unpaired


def _interval(ev: Evidence, key: str, pairs: list[tuple[str, str | None]],
              text: str) -> tuple[tuple[float, float] | None, float, str, str]:
    """The bootstrap interval over items of ``key``'s per-item difference averaged over ``pairs`` of models (the
    second None: the first alone), its standard error, a note (why none) and the resampling when stratified
    (:func:`stratified`), or (None, NaN, why not, "")."""
    if not pairs:
        return None, math.nan, "", ""
    if ev.nested_metric(key) is not None:
        share = 1.0 / len(pairs)
        return stratified(ev, key, [(a, share) for a, _ in pairs] + [(b, -share) for _, b in pairs if b], text)
    try:
        scores = [(ev.item_scores(a, key), ev.item_scores(b, key) if b else None) for a, b in pairs]
        diff = chain_average(scores, key)
        rng = np.random.default_rng(derive_seed(ev.bootstrap.seed, "ledger", text))
        low, high, se = bootstrap_interval(diff, rng, ev.bootstrap)
        return (low, high), se, "", ""
    except (FileNotFoundError, ValueError) as e:
        return None, math.nan, f"no item-level interval: {e}", ""


def stratified(ev: Evidence, key: str, terms: Sequence[tuple[str, float]],
               text: str) -> tuple[tuple[float, float] | None, float, str, str]:
    """The stratified bootstrap interval and SE of ``sum(coef * key of model)`` over ``terms`` (models with
    coefficients, e.g. +1/P and -1/P per chain pair: the chain-averaged difference), ``key`` a nested macro
    (:meth:`Evidence.nested_metric`): items resampled within strata, the same draws for every model, seeded from the
    bootstrap's seed and ``text``. Returns (interval, SE, "", what was resampled), or (None, NaN, why not, "")."""
    merged: dict[str, float] = {}
    for model, coef in terms:
        merged[model] = merged.get(model, 0.0) + coef
    try:
        metric = ev.nested_metric(key)
        if metric is None:
            raise ValueError(f"no per-item definition of {key}")
        scores = [(ev.nested_scores(m, key), c) for m, c in merged.items()]
        rng = np.random.default_rng(derive_seed(ev.bootstrap.seed, "ledger", text))
        low, high, se = stratified_interval(scores, rng, ev.bootstrap)
        return (low, high), se, "", metric.what
    except (FileNotFoundError, ValueError) as e:
        return None, math.nan, f"no item-level interval: {e}", ""


def _sign_note(note: str, margin: float | None, values: list[float], effect: float | None = None) -> str:
    """``note``, plus :data:`NOTE_SIGN` for a condition with values but no margin, or :data:`NOTE_EFFECT` for a
    sign test whose power is judged against the paper's printed ``effect``."""
    if margin is None and values and effect is not None:
        return "; ".join(filter(None, [note, NOTE_EFFECT.format(effect=effect)]))
    return "; ".join(filter(None, [note, NOTE_SIGN if margin is None and values else ""]))


def _margin(bound: float, reference: float | None) -> float | None:
    """The margin a bound tests against its reference (None: none given, or a sign test)."""
    if reference is None or abs(bound - reference) < MIN_MARGIN:
        return None
    return abs(bound - reference)


def at_most(methods: Methods, ev: Evidence | pd.DataFrame, method: str, key: str, bound: float, what: str,
            reference: float | None = None) -> Condition:
    """``method``'s ``key`` is at most ``bound`` on every chain; ``reference`` (e.g. chance): the margin tested is
    the bound's distance from it."""
    return _single(methods, _evidence(ev), method, key, bound, what, at_least=False, reference=reference)


def at_least(methods: Methods, ev: Evidence | pd.DataFrame, method: str, key: str, bound: float, what: str,
             reference: float | None = None) -> Condition:
    """``method``'s ``key`` is at least ``bound`` on every chain (``reference``: as :func:`at_most`)."""
    return _single(methods, _evidence(ev), method, key, bound, what, at_least=True, reference=reference)


def _single(methods: Methods, ev: Evidence, method: str, key: str, bound: float, what: str, *,
            at_least: bool, reference: float | None) -> Condition:
    rows = ev.rows(method, key)
    text = f"{methods.label(method)} {what} {'>=' if at_least else '<='} {bound:.4g}"
    interval, se, note, resampling = _interval(ev, key, [(m, None) for m in rows["model"]], text)
    values, margin = [float(v) for v in rows["value"]], _margin(bound, reference)
    return Condition(text, values, [_chain(r).label for _, r in rows.iterrows()], bound, at_least, interval,
                     _sign_note(note, margin, values), se, margin, resampling)


def beats(methods: Methods, ev: Evidence | pd.DataFrame, better: str, worse: str, key: str, margin: float,
          what: str, effect: float | None = None) -> Condition:
    """``better - worse >= margin`` on every chain pair (:func:`pair_chains`); the margin tested is ``|margin|``
    (a margin within :data:`MIN_MARGIN` of 0 tests a sign: no power rule, unless ``effect`` gives the paper's
    printed effect the sign test is meant to detect; then the power rule reads ``|effect|`` as the margin)."""
    return _difference(methods, _evidence(ev), better, worse, key, margin, what, at_least=True, effect=effect)


def gains_at_most(methods: Methods, ev: Evidence | pd.DataFrame, better: str, worse: str, key: str, margin: float,
                  what: str) -> Condition:
    """``better - worse <= margin`` on every chain pair (:func:`pair_chains`): no gain of more than ``margin``. The
    mirror of :func:`beats`: the same pairs, values, interval and margin tested (``|margin|``)."""
    return _difference(methods, _evidence(ev), better, worse, key, margin, what, at_least=False)


def _difference(methods: Methods, ev: Evidence, better: str, worse: str, key: str, margin: float, what: str, *,
                at_least: bool, effect: float | None = None) -> Condition:
    text = f"{what}: {methods.label(better)} - {methods.label(worse)} {'>=' if at_least else '<='} {margin}"
    pairs, unpaired = pair_chains(ev, better, worse, key)
    interval, se, note, resampling = _interval(ev, key, [(str(a["model"]), str(b["model"])) for a, b in pairs], text)
    if unpaired:
        note = "; ".join(filter(None, [note, "no chain to pair with: " + ", ".join(unpaired)]))
    values, tested = [float(a["value"] - b["value"]) for a, b in pairs], _margin(margin, 0.0)
    note = _sign_note(note, tested, values, effect)
    if tested is None and effect is not None and abs(effect) >= MIN_MARGIN:
        tested = abs(effect)  # a sign test: its power against the effect the paper printed
    return Condition(text, values, [f"{_chain(a).label} - {_chain(b).label}" for a, b in pairs], margin, at_least,
                     interval, note, se, tested, resampling)


def ratio(methods: Methods, ev: Evidence | pd.DataFrame, method: str, num: str, den: str, bound: float,
          what: str) -> Condition:
    """``method``'s ``num / den`` (model by model) is at least ``bound`` on every chain."""
    ev = _evidence(ev)
    n, d = ev.rows(method, num), ev.rows(method, den).set_index("model")
    values, runs = [], []
    for _, r in n.iterrows():
        if r["model"] in d.index and d.loc[r["model"], "value"] > 0:
            values.append(float(r["value"] / d.loc[r["model"], "value"]))
            runs.append(_chain(r).label)
    return Condition(f"{methods.label(method)} {what} >= {bound}", values, runs, bound, True, None,
                     INTERVAL_NOTE_RATIO)


# --------------------------------------------------------------------------- tables and text


LEDGER_COLUMNS: tuple[str, ...] = ("claim", "claim_held", "condition", "bound", "n", "value", "spread", "min", "max",
                                   "per_chain", "ci_low", "ci_high", "ci_clears_bound", "test_se", "margin",
                                   "condition_held", "note")


def ledger_table(claims: list[Claim]) -> pd.DataFrame:
    """One row per condition of every claim, numeric: the verdicts (held, not held, underpowered), n, the value
    (mean over chains or chain pairs), its spread (sample std over them), min, max, the per-chain values, the
    item-level interval and whether it clears the bound, the test-set standard error and the margin tested."""
    rows = []
    for cl in claims:
        for c in cl.conditions:
            clears = c.interval_clears
            rows.append({"claim": cl.id, "claim_held": cl.verdict, "condition": c.text,
                         "bound": c.bound, "n": c.n, "value": c.mean, "spread": c.spread,
                         "min": min(c.values) if c.values else math.nan,
                         "max": max(c.values) if c.values else math.nan,
                         "per_chain": "; ".join(f"{r}: {v:+.4f}" for r, v in zip(c.runs, c.values, strict=True)),
                         "ci_low": c.interval[0] if c.interval else math.nan,
                         "ci_high": c.interval[1] if c.interval else math.nan,
                         "ci_clears_bound": "" if clears is None else ("yes" if clears else "no"),
                         "test_se": c.se, "margin": math.nan if c.margin is None else c.margin,
                         "condition_held": {HELD: "yes", NOT_HELD: "no", UNDERPOWERED: "underpowered"}[c.verdict],
                         "note": c.note or ("missing" * (not c.values))})
    return pd.DataFrame(rows, columns=list(LEDGER_COLUMNS))


def power_text(se: float, margin: float) -> str:
    """A ledger row's power cell: its test SE next to a third of its margin (``0.010 vs 0.017``); empty without an
    SE, the SE alone without a margin."""
    if pd.isna(se):
        return ""
    return number(se) + ("" if pd.isna(margin) else f" vs {number(margin * POWER_FRACTION)}")


def value_text(value: float, spread: float, n: int) -> str:
    """A ledger row's value cell: ``value ± spread (n=3)``, ``value (n=1)``, or ``missing`` without a value."""
    if n == 0:
        return "missing"
    if n == 1:
        return f"{number(value)} (n=1)"
    return f"{number(value)} ± {number(spread)} (n={n})"


def ledger_shown(table: pd.DataFrame) -> pd.DataFrame:
    """The ledger for reading: value ± spread (n), min..max, the interval, the verdicts."""
    rows = []
    for r in table.to_dict("records"):
        n = int(r["n"])
        value = value_text(r["value"], r["spread"], n)
        ci = "" if pd.isna(r["ci_low"]) else f"[{number(r['ci_low'])}, {number(r['ci_high'])}]"
        power = power_text(r["test_se"], r["margin"])
        rows.append({"claim": r["claim"], "condition": r["condition"], "value ± spread over chains (n)": value,
                     "min .. max over chains": "" if n < 2 else f"{number(r['min'])} .. {number(r['max'])}",
                     "item bootstrap interval": ci, "interval clears bound": r["ci_clears_bound"],
                     "test SE vs margin / 3": power,
                     "holds on every chain": r["condition_held"], "claim verdict": r["claim_held"],
                     "note": r["note"]})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- two ledgers side by side


BESIDE_FIELDS: tuple[str, ...] = ("n", "value", "spread", "test_se", "condition_held", "claim_held")
"""The columns of each side of :func:`ledger_beside`."""


def ledger_beside(before: pd.DataFrame, after: pd.DataFrame, names: tuple[str, str]) -> pd.DataFrame:
    """Two ledger tables (:data:`LEDGER_COLUMNS`: e.g. the claims CSV of an earlier world and this run's ledger),
    condition by condition: one row per (claim, condition) of either, ``after``'s first in its order, then those
    only ``before`` has; per side (``names``: column prefixes) its :data:`BESIDE_FIELDS`. A side without the
    condition has n = 0 and empty verdicts."""
    keys = ["claim", "condition"]
    sides = [t.loc[:, [*keys, *BESIDE_FIELDS]].drop_duplicates(keys).rename(
        columns={f: f"{name}/{f}" for f in BESIDE_FIELDS}) for t, name in zip((before, after), names, strict=True)]
    order = pd.concat([after[keys], before[keys]]).drop_duplicates().reset_index(drop=True)
    out = order.merge(sides[0], on=keys, how="left").merge(sides[1], on=keys, how="left")
    for name in names:
        out[f"{name}/n"] = out[f"{name}/n"].fillna(0).astype(int)
        for f in ("condition_held", "claim_held"):
            out[f"{name}/{f}"] = out[f"{name}/{f}"].fillna("")
    return out


def beside_shown(table: pd.DataFrame, names: tuple[str, str]) -> pd.DataFrame:
    """:func:`ledger_beside` for reading: per side the value ± spread over chains (n), the condition's verdict
    (holds on every chain) and the claim's."""
    rows = []
    for r in table.to_dict("records"):
        row = {"claim": r["claim"], "condition": r["condition"]}
        for name in names:
            row[f"{name}: value ± spread (n)"] = value_text(r[f"{name}/value"], r[f"{name}/spread"],
                                                            int(r[f"{name}/n"]))
            row[f"{name}: holds on every chain"] = r[f"{name}/condition_held"]
            row[f"{name}: claim verdict"] = r[f"{name}/claim_held"]
        rows.append(row)
    return pd.DataFrame(rows)


SAME_VALUES_NOTE = ("Every condition both ledgers have has the same value on both sides: this run's outputs are "
                    "still those of the {before} (the rerun has not reached them yet).")
BESIDE_LEGEND = ("Per side: the condition's value, mean ± sample standard deviation (ddof = 1) over its chains or "
                 "chain pairs (n), whether it holds on every chain, and the claim's verdict (the verdict and power "
                 "rules under the claims ledger). *missing*: that side has no value of the condition.")


def ledger_change(before: pd.DataFrame, after: pd.DataFrame, names: tuple[str, str],
                  notes: Sequence[str] = ()) -> Table:
    """:func:`ledger_beside` as a report table, with a note when no shared condition's value moved (``after`` is
    still ``before``'s outputs)."""
    data = ledger_beside(before, after, names)
    both = data[(data[f"{names[0]}/n"] > 0) & (data[f"{names[1]}/n"] > 0)]
    same = len(both) > 0 and bool(np.allclose(both[f"{names[0]}/value"].to_numpy(float),
                                              both[f"{names[1]}/value"].to_numpy(float), rtol=0, atol=1e-9))
    return Table(data, beside_shown(data, names), BESIDE_LEGEND,
                 [*notes, *([SAME_VALUES_NOTE.format(before=names[0])] if same else [])])


def changed_settings(before: Mapping, after: Mapping, sections: Sequence[str]) -> pd.DataFrame:
    """The settings behind two ledgers that differ: every leaf under the dotted ``sections`` of two params mappings
    (e.g. ``world``, ``methods.negclip``) whose value differs or that only one side has, one row each (``setting``,
    ``before``, ``after``: the values as YAML flow text, empty where absent), in ``sections`` order then key order."""
    import yaml

    def leaves(node: object, prefix: str) -> dict[str, object]:
        if isinstance(node, Mapping):
            return {k: v for key, sub in node.items() for k, v in leaves(sub, f"{prefix}.{key}").items()}
        return {prefix: node}

    def at(params: Mapping, dotted: str) -> object:
        node: object = params
        for part in dotted.split("."):
            node = node.get(part) if isinstance(node, Mapping) else None
        return node

    def text(v: object) -> str:
        return yaml.safe_dump(v, default_flow_style=True, width=10**6).strip().removesuffix("...").strip()

    rows = []
    for section in sections:
        a, b = leaves(at(before, section), section), leaves(at(after, section), section)
        for key in dict.fromkeys([*a, *b]):
            if key in a and key in b and a[key] == b[key]:
                continue
            rows.append({"setting": key, "before": text(a[key]) if key in a and a[key] is not None else "",
                         "after": text(b[key]) if key in b and b[key] is not None else ""})
    return pd.DataFrame(rows, columns=["setting", "before", "after"])


def rule_markdown(ev: Evidence, claims: list[Claim], methods: Methods) -> str:
    """The verdict rule and what the spread and the interval are, with the chains of every method involved."""
    involved = list(dict.fromkeys(m for m in methods.order if chains(ev.long, m)))
    runs = "; ".join(f"{methods.label(m)}: {runs_phrase(chains(ev.long, m))}" for m in involved)
    return (f"**Verdict rule.** {VERDICT_RULE} *value* = mean over the chains (one method) or chain pairs "
            f"(a comparison); *spread* = sample standard deviation (ddof = 1) over the same, with min .. max and n. "
            f"Runs: {runs}. **Item-level interval:** {ev.bootstrap.describe()} of the per-item difference averaged "
            "over the chain pairs (for one method: the per-item score averaged over its chains), the metric "
            "recomputed on each resample by its own definition (a macro average re-averaged over the groups of the "
            "resample); it is shown with whether it clears the bound, and does not enter the verdict. "
            f"**Power rule.** {POWER_RULE} *test SE vs margin / 3*: that SE next to a third of the margin."
            + _stratified_markdown(ev, claims))


def _stratified_markdown(ev: Evidence, claims: list[Claim]) -> str:
    """:data:`STRATIFIED_RULE` with the nested macros the claims' conditions resampled (empty: none)."""
    what = list(dict.fromkeys(c.resampling for cl in claims for c in cl.conditions if c.resampling))
    if not what:
        return ""
    return " " + STRATIFIED_RULE.format(method=ev.bootstrap.method, n=ev.bootstrap.n_resamples,
                                        what="; ".join(what))


def report_ledger(ev: Evidence, claims: list[Claim], methods: Methods, notes: Sequence[str] = ()) -> Table:
    """The ledger as a report shows it: one numeric row per condition (:func:`ledger_table`), its reading form
    (:func:`ledger_shown`), the verdict rule under it (:func:`rule_markdown`) and ``notes`` (the paper's
    thresholds, its own inconsistencies about the claims)."""
    data = ledger_table(claims)
    return Table(data, ledger_shown(data), legend=rule_markdown(ev, claims, methods), notes=list(notes))


def retext(c: Condition, margin: float, shown: str) -> Condition:
    """A :func:`beats` condition whose text says the bound as meant (``> 0``, ``>= -0.02``), not as moved by
    :data:`FLOAT_TOL`."""
    c.text = c.text.replace(f">= {margin}", shown)
    return c
