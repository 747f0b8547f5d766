"""Item-level metrics and the paired bootstrap: each per-item definition gives the benchmark's own aggregate (parity
with vlcomp.benchmarks on synthetic per-item tables), the vectorised macro equals a naive loop, the bootstrap equals a
naive resampling loop with the same draws, and small cases are checked by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vlcomp.benchmarks.aro import aggregate_order, aggregate_vg_attribution, aggregate_vg_relation
from vlcomp.benchmarks.retrieval import aggregate_retrieval
from vlcomp.benchmarks.zeroshot import aggregate_suite
from vlcomp.metrics.stats import bootstrap_ci
from vlcomp.reporting.items import (
    MAX_ELEMENTS,
    Bootstrap,
    ItemScores,
    chain_average,
    group_codes,
    item_metric,
    macro_statistic,
    metric_value,
    paired_interval,
    read_item_scores,
)

RNG = np.random.default_rng(7)


def _write(folder: Path, tables: dict[str, pd.DataFrame]) -> Path:
    (folder / "items").mkdir(parents=True, exist_ok=True)
    for name, df in tables.items():
        df.to_parquet(folder / "items" / f"{name}.parquet", index=False)
    return folder


def _vg_relation(n: int = 60) -> pd.DataFrame:
    rel = RNG.choice(["above", "below", "next to", "holding"], n)
    return pd.DataFrame({"index": np.arange(n), "relation": rel, "correct": RNG.random(n) < 0.6,
                         "excluded": rel == "next to", "tie": np.zeros(n, bool),
                         "relation_group": np.where(rel == "holding", "verbs", "spatial")})


def _vg_attribution(n: int = 50) -> pd.DataFrame:
    return pd.DataFrame({"index": np.arange(n), "pair": RNG.choice(["red_blue", "blue_red", "big_small"], n, p=[.5, .4, .1]),
                         "correct": RNG.random(n) < 0.7, "tie": np.zeros(n, bool)})


def _order(captions: int = 12, seeds: int = 3) -> pd.DataFrame:
    rows = [{"seed": s, "record": c // 2, "caption_index": c % 2, "correct": bool(RNG.random() < 0.4), "tie": False,
             **{f"option_{k}": f"o{c}{k}" for k in ("original", "shuffle_nouns_and_adj", "shuffle_allbut_nouns_and_adj",
                                                     "shuffle_within_trigrams", "shuffle_trigrams")}}
            for s in range(seeds) for c in range(captions)]
    return pd.DataFrame(rows)


def _retrieval() -> dict[str, pd.DataFrame]:
    hits = {f"hit_{k}": RNG.random(10) < 0.3 * k for k in (1, 5, 10)}
    i2t = pd.DataFrame({"image_index": np.arange(10), **hits})
    t2i = pd.DataFrame({"text_index": np.arange(20), "image_index": np.arange(20) // 2,
                        **{f"hit_{k}": RNG.random(20) < 0.2 * k for k in (1, 5, 10)}})
    sh = pd.DataFrame([{"strategy": st, "side": "text", "seed": s, "image_index": i,
                        **{f"hit_{k}": bool(RNG.random() < 0.2 * k) for k in (1, 5, 10)}}
                       for st in ("shuffle_all_words", "shuffle_trigrams") for s in range(2) for i in range(10)])
    return {"coco_retrieval_i2t": i2t, "coco_retrieval_t2i": t2i, "coco_retrieval_shuffle_i2t": sh}


def _zeroshot() -> pd.DataFrame:
    # file names repeat across classes, as the toy twins' folders do: an item is (task, label, file)
    rows = [{"task": t, "file": f"{i:04d}.png", "label": c, "pred_standard": 0, "correct_standard": bool(RNG.random() < .5),
             "class_group": "web_only" if c == 2 else "coco"}
            for t in ("cifar10", "cifar100") for c in range(3) for i in range(4)]
    return pd.DataFrame(rows)


def test_item_definitions_give_the_benchmarks_own_aggregates(tmp_path):
    vgr, vga, order, ret, zs = _vg_relation(), _vg_attribution(), _order(), _retrieval(), _zeroshot()
    folder = _write(tmp_path / "m", {"vg_relation": vgr, "vg_attribution": vga, "coco_order": order, **ret,
                                     "zeroshot_aro": zs})
    want = {**aggregate_vg_relation({"vg_relation": vgr}),
            **aggregate_vg_attribution({"vg_attribution": vga}, min_count=5),
            **aggregate_order({"coco_order": order}, "coco_order"),
            **aggregate_retrieval(ret, "coco_retrieval"),
            **aggregate_suite({"zeroshot_aro": zs}, "zeroshot_aro")}
    keys = ["aro/vg_relation/macro_acc", "aro/vg_attribution/macro_acc", "aro/coco_order/acc",
            "retrieval/coco/i2t/recall_at_1", "retrieval/coco/t2i/recall_at_5",
            "retrieval/coco/shuffle/shuffle_trigrams/i2t/recall_at_1", "zeroshot/cifar100/acc",
            "zeroshot/cifar100/acc_web_only", "zeroshot/cifar10/acc_coco"]
    prov = {"settings": {"aro_vga_min_count": 5}}  # the macro's smallest group comes from the provenance
    for key in keys:
        got = metric_value(read_item_scores(folder, item_metric(key), prov))
        assert got == pytest.approx(want[key], abs=1e-12), key
    assert item_metric("aro/vg_attribution/macro_acc").groups_min(None) == 25  # the benchmark's default
    assert item_metric("valse/avg_instruments") is None and item_metric("zeroshot/conclip/mean_acc") is None


def test_read_item_scores_averages_repeated_rows_and_names_bad_input(tmp_path):
    order = pd.DataFrame({"seed": [0, 0, 1, 1], "record": [0, 1, 0, 1], "caption_index": 0,
                          "correct": [True, False, False, False]})
    folder = _write(tmp_path / "m", {"coco_order": order})
    s = read_item_scores(folder, item_metric("aro/coco_order/acc"))
    assert list(s.scores) == [0.5, 0.0] and s.groups is None  # caption 0 right under one seed in two
    with pytest.raises(FileNotFoundError, match="flickr_order.parquet: no per-item table"):
        read_item_scores(folder, item_metric("aro/flickr30k_order/acc"))
    _write(folder, {"vg_relation": pd.DataFrame({"index": [0], "correct": [True]})})
    with pytest.raises(ValueError, match=r"vg_relation.parquet: lacks columns \['relation', 'excluded'\]"):
        read_item_scores(folder, item_metric("aro/vg_relation/macro_acc"))


def test_macro_statistic_by_hand():
    v, g = np.array([1.0, 0.0, 1.0, 1.0]), np.array(["a", "a", "b", "c"])
    codes, n = group_codes(g)
    assert macro_statistic(v, codes, n) == pytest.approx((0.5 + 1 + 1) / 3)
    assert macro_statistic(v, codes, n, min_count=2) == pytest.approx(0.5)  # only group a has 2 items
    assert np.isnan(macro_statistic(v, codes, n, min_count=3))  # no group left
    assert macro_statistic(v, None, 0) == pytest.approx(0.75)
    # a resample that loses group c: c leaves the macro
    assert macro_statistic(v[[0, 2, 2, 1]], codes[[0, 2, 2, 1]], n) == pytest.approx((0.5 + 1) / 2)


def _naive_macro(values: np.ndarray, groups: np.ndarray, min_count: int) -> float:
    per = {}
    for v, g in zip(values, groups, strict=True):
        per.setdefault(g, []).append(v)
    kept = [np.mean(x) for x in per.values() if len(x) >= max(min_count, 1)]
    return float(np.mean(kept)) if kept else float("nan")


def test_vectorised_macro_equals_a_naive_loop_over_resamples():
    values, groups = RNG.normal(size=40), RNG.integers(0, 5, 40)
    idx = RNG.integers(0, 40, (200, 40))  # [R, N] resampled indices
    got = macro_statistic(values[idx], groups[idx], 5, min_count=6)
    want = [_naive_macro(values[i], groups[i], 6) for i in idx]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12, equal_nan=True)


def test_bootstrap_equals_a_naive_resampling_loop():
    values, names = RNG.normal(0.1, 0.5, 30), RNG.choice(["x", "y", "z"], 30)
    diff = ItemScores(pd.RangeIndex(30), values, names, 3)
    spec = Bootstrap(seed=0, n_resamples=500)
    low, high = paired_interval(diff, np.random.default_rng(11), spec)
    # the same draws scipy makes (one batch of [R, N] indices from the same generator), the metric per resample
    idx = np.random.default_rng(11).integers(0, 30, (500, 30))
    codes, _ = group_codes(names)
    dist = np.array([_naive_macro(values[i], codes[i], 3) for i in idx])
    assert (low, high) == pytest.approx((np.percentile(dist, 2.5), np.percentile(dist, 97.5)), abs=1e-12)


def test_plain_mean_bootstrap_matches_metrics_stats_bootstrap_ci():
    values = (RNG.random(50) < 0.6).astype(float)
    got = paired_interval(ItemScores(pd.RangeIndex(50), values, None, 0), np.random.default_rng(3),
                          Bootstrap(seed=0, n_resamples=800))
    assert got == bootstrap_ci(values, 800, np.random.default_rng(3))
    assert MAX_ELEMENTS == 1 << 22  # the same batching, hence the same draws


def test_bootstrap_by_hand():
    # two items, d = (0, 1): a resample's mean is 0, 0.5 or 1 with probability 1/4, 1/2, 1/4, so the 95 % percentile
    # interval is [0, 1]; one value repeated has no spread
    two = ItemScores(pd.RangeIndex(2), np.array([0.0, 1.0]), None, 0)
    assert paired_interval(two, np.random.default_rng(0), Bootstrap(0, n_resamples=2000)) == (0.0, 1.0)
    same = ItemScores(pd.RangeIndex(3), np.array([0.2, 0.2, 0.2]), None, 0)
    assert paired_interval(same, np.random.default_rng(0), Bootstrap(0)) == (0.2, 0.2)
    with pytest.raises(ValueError, match="at least 2 items"):
        paired_interval(ItemScores(pd.RangeIndex(1), np.array([1.0]), None, 0), np.random.default_rng(0), Bootstrap(0))


def test_chain_average_by_hand():
    idx = pd.RangeIndex(3)
    a1, b1 = ItemScores(idx, np.array([1.0, 1, 0]), None, 0), ItemScores(idx, np.array([0.0, 1, 0]), None, 0)
    a2, b2 = ItemScores(idx, np.array([1.0, 0, 1]), None, 0), ItemScores(idx, np.array([1.0, 0, 0]), None, 0)
    d = chain_average([(a1, b1), (a2, b2)], "k")
    np.testing.assert_allclose(d.scores, [0.5, 0.0, 0.5])  # ((1-0) + (1-1)) / 2, ...
    assert metric_value(d) == pytest.approx(np.mean([metric_value(a1) - metric_value(b1),
                                                     metric_value(a2) - metric_value(b2)]))
    np.testing.assert_allclose(chain_average([(a1, None), (a2, None)], "k").scores, [1.0, 0.5, 0.5])
    other = ItemScores(pd.RangeIndex(1, 4), a1.scores, None, 0)
    with pytest.raises(ValueError, match="k: the models' per-item tables cover different items"):
        chain_average([(a1, other)], "k")
