"""Nested macros and the stratified bootstrap (vlcomp.reporting.items): VL-CheckList's and the ELEVATER twin's
aggregates as weights over their strata (files, tasks), checked by hand; the resampled statistic equals the
benchmarks' own aggregation of the resampled per-item tables (a naive loop, the same draws); the bootstrap SE of
small cases equals its closed form."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vlcomp.benchmarks.vlchecklist import aggregate_vlchecklist
from vlcomp.benchmarks.zeroshot import aggregate_suite
from vlcomp.reporting.items import (
    Bootstrap,
    StratifiedScores,
    combine_macros,
    item_patterns,
    macro_weights,
    nested_metric,
    nested_value,
    resample_statistic,
    stratified_counts,
    stratified_distribution,
    stratified_interval,
    stratified_scores,
    stratified_setup,
)

RELATION, ATTRIBUTE = "vlchecklist/relation/avg", "vlchecklist/attribute/avg"
ZS = "zeroshot/elevater/mean_acc"
RNG = np.random.default_rng(27)


def _vlc(files: dict[str, tuple[str, str, list[bool]]]) -> pd.DataFrame:
    """A VL-CheckList per-item table: result key -> (category, dataset, correct per item)."""
    rows = [{"file": f, "index": i, "category": cat, "dataset": ds, "correct": bool(c)}
            for f, (cat, ds, correct) in files.items() for i, c in enumerate(correct)]
    return pd.DataFrame(rows)


def _elevater(correct: dict[str, list[bool]]) -> pd.DataFrame:
    """An ELEVATER-twin per-item table: task -> correct per image (file names repeat across labels, as there)."""
    rows = [{"task": t, "file": f"{i // 2:04d}.png", "label": i % 2, "pred_standard": 0, "correct_standard": bool(c)}
            for t, cs in correct.items() for i, c in enumerate(cs)]
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- definitions and weights, by hand


def test_definitions_cover_vlchecklist_and_elevater_only():
    assert nested_metric(RELATION).stratum == "file" and nested_metric(RELATION).decimals == 4
    assert nested_metric("vlchecklist/overall") is not None
    assert nested_metric("vlchecklist/wrong_image/relation/avg") is None  # another column, not defined here
    zs = nested_metric(ZS)
    assert zs.stratum == "task" and zs.decimals is None and zs.item == ("task", "label", "file")
    assert nested_metric("zeroshot/elevater/task01/acc") is not None
    assert nested_metric("zeroshot/elevater/task01/acc_coco") is None  # a class group: not a macro of tasks
    assert nested_metric("zeroshot/conclip/mean_acc") is None and nested_metric("aro/vg_relation/macro_acc") is None
    with pytest.raises(ValueError, match="cannot combine"):
        combine_macros([(nested_metric(RELATION), 1.0), (zs, -1.0)])


def test_vlchecklist_weights_by_hand():
    # TSVLC's corpus.json (no category column): relation = mean(action_r, spatial); action_r = mean over its three
    # datasets (vg, swig, hake: one file each); spatial = its one vg file
    strata = pd.DataFrame({"file": ["Relation_action_vg", "Relation_action_swig", "Relation_action_hake",
                                    "Relation_spatial_vg"]})
    np.testing.assert_allclose(macro_weights(nested_metric(RELATION), strata), [1 / 6, 1 / 6, 1 / 6, 1 / 2])
    # the toy corpus (category / dataset carried per item), 2 relation and 2 attribute categories
    toy = pd.DataFrame({"file": ["Relation_action_vg", "Relation_spatial_vg", "Attribute_color_vg", "Attribute_size_vg"],
                        "category": ["action_r", "spatial", "color", "size"], "dataset": "vg"})
    # a corpus with 2 of the 5 attribute categories declares the other 3 absent (formats.vlchecklist.group_averages'
    # ``absent``: the benchmark has no file of them), so Attribute is the mean of the two it has
    np.testing.assert_allclose(macro_weights(nested_metric(ATTRIBUTE), toy), [0.0, 0.0, 0.5, 0.5])
    with pytest.raises(ValueError, match="gives no vlchecklist/object/avg"):  # no object category at all
        macro_weights(nested_metric("vlchecklist/object/avg"), toy)
    derived = combine_macros([(nested_metric(RELATION), 1.0), (nested_metric("vlchecklist/attribute/color"), -1.0)])
    np.testing.assert_allclose(macro_weights(derived, toy), [0.5, 0.5, -1.0, 0.0])  # Relation - A-Color


def test_nested_value_by_hand_with_the_reference_rounding():
    # action_r: 2 of 3 right -> total_acc 0.6667 (4 decimals); spatial: 1 of 2 -> 0.5; relation = 0.58335
    df = _vlc({"Relation_action_vg": ("action_r", "vg", [1, 1, 0]), "Relation_spatial_vg": ("spatial", "vg", [1, 0])})
    s = stratified_scores(df, nested_metric(RELATION), "t")
    assert s.strata == ("Relation_action_vg", "Relation_spatial_vg") and list(s.counts) == [3, 2]
    assert nested_value(s) == pytest.approx(0.58335, abs=1e-12)  # unrounded it would be 0.583333...
    assert nested_value(s) == pytest.approx(aggregate_vlchecklist({"vlchecklist": df})[RELATION], abs=1e-12)
    e = stratified_scores(_elevater({"a": [1, 0], "b": [1, 1, 1, 0]}), nested_metric(ZS), "t")
    assert nested_value(e) == pytest.approx((0.5 + 0.75) / 2)


def test_a_metric_the_weights_do_not_reproduce_is_refused():
    # an image scored twice in task b (rows right, right) beside one wrong image: the benchmark counts rows (2/3),
    # the items' macro averages the repeated item first (1/2): no fixed macro of the items, refused
    e = pd.DataFrame({"task": ["a", "a", "b", "b", "b"], "label": [0, 1, 0, 0, 1],
                      "file": ["0000.png", "0000.png", "0000.png", "0000.png", "0000.png"],
                      "correct_standard": [True, False, True, True, False]})
    with pytest.raises(ValueError, match="t: the strata's weights give 0.500000, the benchmark's aggregate 0.583333"):
        stratified_scores(e, nested_metric(ZS), "t")


# --------------------------------------------------------------------------- the bootstrap, by hand


def _one(scores: list[float], strata: list[int], weights: list[float], decimals=None) -> StratifiedScores:
    codes = np.array(strata)
    return StratifiedScores(pd.RangeIndex(len(scores)), np.array(scores, float), codes,
                            tuple(f"s{i}" for i in range(codes.max() + 1)), np.array(weights, float), decimals)


def test_stratified_se_by_hand():
    spec = Bootstrap(seed=0, n_resamples=40000)
    # one stratum (0, 1): a resample's mean is 0, 0.5, 1 w.p. 1/4, 1/2, 1/4: interval [0, 1], SE sqrt(1/8)
    low, high, se = stratified_interval([(_one([0, 1], [0, 0], [1.0]), 1.0)], np.random.default_rng(0), spec)
    assert (low, high) == (0.0, 1.0) and se == pytest.approx(np.sqrt(1 / 8), rel=0.02)
    # mean over two tasks, (0, 1) and (1, 1, 0, 0): Var = (1/2)^2 (1/4)/2 + (1/2)^2 (1/4)/4 = 3/64 (plug-in
    # variances over each stratum's size: the strata are resampled separately, each keeping its size)
    two = _one([0, 1, 1, 1, 0, 0], [0, 0, 1, 1, 1, 1], [0.5, 0.5])
    _, _, se = stratified_interval([(two, 1.0)], np.random.default_rng(1), spec)
    assert se == pytest.approx(np.sqrt(3 / 64), rel=0.02)
    # paired: a model against itself has no spread at all; a model against one that differs on one item of the
    # 2-item task: d = (0, -1 | 0, 0, 0, 0), Var = (1/2)^2 (1/4)/2 = 1/32
    _, dist = stratified_distribution([(two, 1.0), (two, -1.0)], np.random.default_rng(2), 500)
    assert np.all(dist == 0)
    other = _one([0, 0, 1, 1, 0, 0], [0, 0, 1, 1, 1, 1], [0.5, 0.5])
    value, dist = stratified_distribution([(other, 1.0), (two, -1.0)], np.random.default_rng(3), 40000)
    assert value == pytest.approx(-0.25) and np.std(dist, ddof=1) == pytest.approx(np.sqrt(1 / 32), rel=0.02)
    with pytest.raises(ValueError, match="no 'BCa' interval"):
        stratified_interval([(two, 1.0)], np.random.default_rng(0), Bootstrap(0, n_resamples=10, method="BCa"))
    basic = stratified_interval([(two, 1.0)], np.random.default_rng(1), Bootstrap(0, n_resamples=2000, method="basic"))
    pct = stratified_interval([(two, 1.0)], np.random.default_rng(1), Bootstrap(0, n_resamples=2000))
    assert basic[:2] == pytest.approx((2 * 0.5 - pct[1], 2 * 0.5 - pct[0])) and basic[2] == pct[2]


def test_rounding_survives_the_resample_where_it_matters():
    # 3 items: a mean k/3 is rounded to 1 decimal per resample (0.3333 -> 0.3), so the models do not collapse
    s = _one([1, 0, 0], [0, 0, 0], [1.0], decimals=1)
    values, coefs, decimals = stratified_setup([(s, 1.0)])
    assert decimals == 1 and values.shape == (1, 3)
    _, dist = stratified_distribution([(s, 1.0)], np.random.default_rng(0), 2000)
    assert set(np.round(dist, 12)) <= {0.0, 0.3, 0.7, 1.0}
    # 2 items: k/2 has 1 decimal already: the rounding is a no-op and two models collapse into their difference
    t, u = _one([1, 0], [0, 0], [1.0], 1), _one([1, 1], [0, 0], [1.0], 1)
    values, coefs, decimals = stratified_setup([(t, 1.0), (u, -1.0)])
    assert decimals is None and values.tolist() == [[0.0, -1.0]] and coefs.tolist() == [1.0]


# --------------------------------------------------------------------------- parity with a naive loop


def _resampled(df: pd.DataFrame, item: list[str], index: pd.Index, positions: np.ndarray) -> pd.DataFrame:
    """The rows of ``df`` for the items at ``positions`` of ``index`` (with repeats), as a per-item table."""
    keyed = df.set_index(item)
    return keyed.loc[index[positions]].reset_index()


def _naive(tables: list[pd.DataFrame], coefs: list[float], key: str, table: str, aggregate, item: list[str],
           index: pd.Index, draws: list[np.ndarray]) -> list[float]:
    """Per resample (item positions), sum(coef * the benchmark's own aggregate of the resampled table)."""
    return [sum(c * aggregate({table: _resampled(df, item, index, pos)})[key]
                for df, c in zip(tables, coefs, strict=True)) for pos in draws]


def _vlc_models(n_models: int) -> list[pd.DataFrame]:
    """Files of uneven sizes (their accuracies get rounded), 2 datasets in one category, several models."""
    layout = {"Relation_action_vg": ("action_r", "vg", 7), "Relation_action_swig": ("action_r", "swig", 5),
              "Relation_spatial_vg": ("spatial", "vg", 9), "Attribute_color_vg": ("color", "vg", 6),
              "Attribute_size_vg": ("size", "vg", 3)}
    return [_vlc({f: (c, d, list(RNG.random(n) < 0.6)) for f, (c, d, n) in layout.items()}) for _ in range(n_models)]


def test_resample_statistic_equals_the_benchmarks_aggregate_of_each_resampled_table():
    """Index draws within files, by hand; the same draws as pattern counts give the benchmark's value exactly."""
    tables = _vlc_models(3)
    coefs = [0.5, 0.5, -1.0]  # e.g. a chain-averaged difference
    metric = combine_macros([(nested_metric(RELATION), 1.0), (nested_metric("vlchecklist/attribute/color"), -1.0)])
    scores = [stratified_scores(df, metric, "t") for df in tables]
    values, c, decimals = stratified_setup(list(zip(scores, coefs, strict=True)))
    assert values.shape[0] == 3 and decimals == 4  # uneven files: no collapse, rounding per model
    first = scores[0]
    pats = item_patterns(values, first.counts)
    starts = np.concatenate([[0], np.cumsum(first.counts)[:-1]])
    rng = np.random.default_rng(4)
    draws = [np.concatenate([st + rng.integers(0, n, n) for st, n in zip(starts, first.counts, strict=True)])
             for _ in range(60)]
    # the draws as counts per pattern (an item is seen only through its column of values)
    counts = []
    for s, (st, n) in enumerate(zip(starts, first.counts, strict=True)):
        col = {tuple(pats.values[s][:, k]): k for k in range(pats.values[s].shape[1])}
        ids = np.array([[col[tuple(values[:, p])] for p in pos[st:st + n]] for pos in draws])
        counts.append(np.stack([np.bincount(row, minlength=len(col)) for row in ids]))
    got = resample_statistic(pats, counts, first.weights, decimals, c)

    def key_value(out):  # the derived metric by the benchmark's keys
        return out[RELATION] - out["vlchecklist/attribute/color"]

    want = [sum(cf * key_value(aggregate_vlchecklist({"vlchecklist": _resampled(df, ["file", "index"], first.index,
                                                                                 pos)}))
                for df, cf in zip(tables, coefs, strict=True)) for pos in draws]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("suite", ["vlchecklist", "elevater"])
def test_stratified_distribution_equals_a_naive_loop_with_the_same_draws(suite):
    if suite == "vlchecklist":
        tables, key, table, item = _vlc_models(2), RELATION, "vlchecklist", ["file", "index"]
        aggregate = aggregate_vlchecklist
    else:
        tables = [_elevater({t: list(RNG.random(n) < 0.5) for t, n in (("t1", 8), ("t2", 4), ("t3", 12))})
                  for _ in range(2)]
        key, table, item = ZS, "zeroshot_elevater", ["task", "label", "file"]
        aggregate = lambda t: aggregate_suite(t, "zeroshot_elevater")  # noqa: E731
    metric = nested_metric(key)
    terms = [(stratified_scores(tables[0], metric, "a"), 1.0), (stratified_scores(tables[1], metric, "b"), -1.0)]
    value, dist = stratified_distribution(terms, np.random.default_rng(9), 50, batch=20)
    # the naive loop: the same draws (pattern counts, batches of 20, stratum by stratum), each resample rebuilt
    # as per-item tables of both models and scored by the benchmark's own aggregation
    values, _, _ = stratified_setup(terms)
    first = terms[0][0]
    pats = item_patterns(values, first.counts)
    draws = []
    for batch in stratified_counts(pats.freq, np.random.default_rng(9), 50, 20):
        for r in range(len(batch[0])):
            draws.append(np.concatenate([np.repeat(pats.first[s], batch[s][r]) for s in range(len(batch))]))
    want = _naive(tables, [1.0, -1.0], key, table, aggregate, item, first.index, draws)
    assert value == pytest.approx(aggregate({table: tables[0]})[key] - aggregate({table: tables[1]})[key], abs=1e-12)
    np.testing.assert_allclose(dist, want, rtol=0, atol=1e-12)
