"""VG-Relation split by relation kind at the item level: the per-kind macro recomputed from a per-item table equals
the benchmark's own key (parity), its items are the cases of that kind alone, and the ledger's bootstrap of a per-kind
comparison resamples those cases and nothing else."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from vlcomp.benchmarks.aro import aggregate_vg_relation
from vlcomp.metrics.aro import relation_kind
from vlcomp.reporting.collect import methods_of
from vlcomp.reporting.items import (
    Bootstrap,
    ItemScores,
    bootstrap_interval,
    chain_average,
    item_metric,
    metric_value,
    paired_interval,
    read_item_scores,
)
from vlcomp.reporting.ledger import Evidence, beats, gains_at_most
from vlcomp.seeding import derive_seed

KINDS = {"geometric": "aro/vg_relation/geometric_macro_acc", "role": "aro/vg_relation/role_macro_acc"}
# toy relations of both kinds (``sitting on`` only in the second world) and a symmetric one the macro leaves out
RELATIONS = ["above"] * 5 + ["below"] * 3 + ["pointing at"] * 4 + ["sitting on"] * 2 + ["next to"] * 3
METHODS = methods_of({"methods": {"negclip": {"label": "NegCLIP"}}})


def _table(correct: list[bool]) -> pd.DataFrame:
    n = len(RELATIONS)
    return pd.DataFrame({"index": range(n), "relation": RELATIONS, "correct": correct,
                         "excluded": [r == "next to" for r in RELATIONS], "tie": False,
                         "wrong_correct": [i % 2 == 0 for i in range(n)], "text_cosine": 0.9})


def _write(folder, df: pd.DataFrame, method: str, base: str, seed: int | None) -> dict[str, float]:
    """``folder/{items/vg_relation.parquet, metrics.json, provenance.json}``; the metrics are the benchmark's own
    aggregate of the table (:func:`vlcomp.benchmarks.aro.aggregate_vg_relation`)."""
    (folder / "items").mkdir(parents=True)
    df.to_parquet(folder / "items" / "vg_relation.parquet", index=False)
    metrics = aggregate_vg_relation({"vg_relation": df})
    (folder / "metrics.json").write_text(json.dumps(metrics))
    (folder / "provenance.json").write_text(json.dumps({"model": folder.name, "method": method, "base": base,
                                                       "seed": seed, "profile": "toy"}))
    return metrics


CLIP = [[True, False, True, False, False, True, False, False, True, False, False, False, True, False, True, True, False],
        [False, True, False, True, True, False, True, False, False, True, True, False, False, True, False, True, True]]
NEG = [[True, True, True, False, True, False, True, True, True, True, True, True, True, True, False, True, True],
       [True, False, True, True, False, True, True, True, True, True, True, False, True, False, True, False, True]]


def test_per_kind_macro_from_the_items_is_the_benchmark_key(tmp_path):
    metrics = _write(tmp_path / "m", _table(CLIP[0]), "clip", "b0", None)
    # by hand: geometric = mean(above 2/5, below 1/3); role = mean(pointing at 1/4, sitting on 1/2); next to excluded
    assert metrics[KINDS["geometric"]] == pytest.approx((2 / 5 + 1 / 3) / 2)
    assert metrics[KINDS["role"]] == pytest.approx((1 / 4 + 1 / 2) / 2)
    for kind, key in KINDS.items():
        scores = read_item_scores(tmp_path / "m", item_metric(key))
        assert metric_value(scores) == pytest.approx(metrics[key], abs=1e-12)
        # only the cases of that kind, none excluded
        want = [i for i, r in enumerate(RELATIONS) if r != "next to" and relation_kind(r) == kind]
        assert list(scores.index) == want
        assert {relation_kind(g) for g in scores.groups} == {kind}


def test_per_kind_bootstrap_resamples_that_kinds_cases_alone(tmp_path):
    _write(tmp_path / "m", _table(CLIP[0]), "clip", "b0", None)
    spec = Bootstrap(seed=3, n_resamples=300)
    for key in KINDS.values():
        scores = read_item_scores(tmp_path / "m", item_metric(key))
        kept = [i for i, r in enumerate(RELATIONS) if r != "next to" and relation_kind(r) == item_metric(key).relation_kind]
        by_hand = ItemScores(pd.Index(kept, name="index"), np.asarray(CLIP[0], float)[kept],
                             np.asarray(RELATIONS, dtype=object)[kept].astype(str), 0)
        got = bootstrap_interval(scores, np.random.default_rng(7), spec)
        assert got == bootstrap_interval(by_hand, np.random.default_rng(7), spec)
    # a kind whose every case is right has no spread whatever the other kind's cases do
    table = _table(CLIP[0]).assign(correct=[relation_kind(r) == "role" or c for r, c in zip(RELATIONS, CLIP[0],
                                                                                               strict=True)])
    _write(tmp_path / "all_role_right", table, "clip", "b0", None)
    scores = read_item_scores(tmp_path / "all_role_right", item_metric(KINDS["role"]))
    low, high, se = bootstrap_interval(scores, np.random.default_rng(0), spec)
    assert (low, high, se) == pytest.approx((1.0, 1.0, 0.0))


def test_ledger_compares_per_kind_macros_over_chains_with_their_own_items(tmp_path):
    rows = []
    for k in range(2):
        for name, method, seed, correct in ((f"clip-b{k}", "clip", None, CLIP[k]),
                                            (f"negclip-b{k}s0", "negclip", 0, NEG[k])):
            metrics = _write(tmp_path / name, _table(correct), method, f"b{k}", seed)
            rows += [{"model": name, "method": method, "base": f"b{k}", "base_seed": str(k),
                      "seed": "" if seed is None else str(seed), "key": key, "value": metrics[key], "dvc_stage": ""}
                     for key in KINDS.values()]
    spec = Bootstrap(seed=5, n_resamples=300)
    ev = Evidence(pd.DataFrame(rows), tmp_path, spec)
    for kind, key in KINDS.items():
        metric = item_metric(key)
        diff = chain_average([(read_item_scores(tmp_path / f"negclip-b{k}s0", metric),
                               read_item_scores(tmp_path / f"clip-b{k}", metric)) for k in range(2)], key)
        for build in (beats, gains_at_most):
            cond = build(METHODS, ev, "negclip", "clip", key, 0.05, f"VG-R {kind}")
            assert cond.note == "" and cond.interval is not None
            rng = np.random.default_rng(derive_seed(5, "ledger", cond.text))
            assert cond.interval == paired_interval(diff, rng, spec)
            assert cond.mean == pytest.approx(metric_value(diff))  # the macro is linear in the per-item difference
