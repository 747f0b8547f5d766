"""Claims ledger over whole chains: a condition holds only when it holds on every chain (pair); fine-tuned chains pair
with the base model of their own chain; values, spread and the item-level interval are checked by hand."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from vlcomp.reporting.collect import methods_of, summary
from vlcomp.reporting.items import Bootstrap, chain_average, item_metric, paired_interval, read_item_scores
from vlcomp.reporting.ledger import (
    VERDICT_RULE,
    Evidence,
    at_most,
    beats,
    gains_at_most,
    holds,
    ledger_shown,
    ledger_table,
    pair_chains,
    rule_markdown,
)
from vlcomp.reporting.papers.aro.claims import CLEAR_MARGIN, PAPER_VGR_BY_KIND, aro_claims
from vlcomp.seeding import derive_seed

METHODS = methods_of({"methods": {"clip_ft": {"label": "CLIP-FT"}, "negclip": {"label": "NegCLIP"}}})
CHANCE = {"coco": 0.001, "flickr30k": 0.001}
BASES = (0, 1, 2)


def _long(values: dict[str, dict[str, list[float]]]) -> pd.DataFrame:
    """One model per chain: the base model clip-b<k> of base seed k; a fine-tuned method's chain b<k>s0."""
    rows = []
    for method, metrics in values.items():
        for key, vals in metrics.items():
            for k, v in zip(BASES, vals, strict=True):
                seed = "" if method == "clip" else "0"
                model = f"clip-b{k}" if method == "clip" else f"{method}-b{k}s0"
                rows.append({"model": model, "method": method, "base": f"b{k}", "base_seed": str(k), "seed": seed,
                             "key": key, "value": v, "dvc_stage": f"evaluate@{model}"})
    return pd.DataFrame(rows)


GEOMETRIC, ROLE = "aro/vg_relation/geometric_macro_acc", "aro/vg_relation/role_macro_acc"


def _metrics(vgr, vga, coco_order, flickr_order, zs=0.5, r1=0.3, r1_shuf=0.2, kinds=(0.5, 0.5)):
    keys = {"aro/vg_relation/macro_acc": vgr, "aro/vg_attribution/macro_acc": vga, "aro/coco_order/acc": coco_order,
            "aro/flickr30k_order/acc": flickr_order, GEOMETRIC: kinds[0], ROLE: kinds[1]}
    for t in ("cifar10", "cifar100", "imagenet"):
        keys[f"zeroshot/{t}/acc"] = zs
    for ds in ("coco", "flickr30k"):
        for d in ("i2t", "t2i"):
            keys[f"retrieval/{ds}/{d}/recall_at_1"] = r1
        keys[f"retrieval/{ds}/shuffle/shuffle_all_words/i2t/recall_at_1"] = r1_shuf
    return keys


def _spread(metrics: dict[str, float]) -> dict[str, list[float]]:
    return {k: [v, v + 0.01, v - 0.01] for k, v in metrics.items()}


def _kinds(method: str) -> tuple[float, float]:
    return PAPER_VGR_BY_KIND["geometric"][method], PAPER_VGR_BY_KIND["role"][method]


def _paper_like() -> pd.DataFrame:
    return _long({"clip": _spread(_metrics(0.59, 0.62, 0.46, 0.59, zs=0.80, r1=0.50, r1_shuf=0.34, kinds=_kinds("clip"))),
                  "clip_ft": _spread(_metrics(0.63, 0.65, 0.36, 0.50, zs=0.80, r1=0.59, kinds=_kinds("clip_ft"))),
                  "negclip": _spread(_metrics(0.81, 0.71, 0.86, 0.91, zs=0.79, r1=0.56, kinds=_kinds("negclip")))})


def test_paper_numbers_hold_every_claim():
    claims = aro_claims(Evidence(_paper_like()), CHANCE, METHODS)
    assert [c.id for c in claims] == ["a", "b", "c", "d", "e"]
    assert all(c.held for c in claims), ledger_table(claims).to_string()


def test_claim_e_is_table_2_split_by_relation_kind():
    e = aro_claims(Evidence(_paper_like()), CHANCE, METHODS)[-1]
    assert [c.text for c in e.conditions] == [
        "VG-R role-asymmetric: NegCLIP - CLIP >= 0.05", "VG-R role-asymmetric: NegCLIP - CLIP-FT >= 0.05",
        "VG-R geometric: NegCLIP - CLIP-FT <= 0.05", "VG-R geometric: NegCLIP - CLIP <= 0.05"]
    # the paper's halves (Table 2, 3 decimals): role 0.863 - 0.596 / 0.657; geometric 0.529 - 0.538 / 0.570
    assert [c.mean for c in e.conditions] == pytest.approx([0.267, 0.206, -0.009, -0.041])
    assert [c.at_least for c in e.conditions] == [True, True, False, False]
    assert all(c.margin == CLEAR_MARGIN for c in e.conditions)
    assert "0.596" in e.paper and "0.863" in e.paper and "0.570" in e.paper and "0.529" in e.paper


def test_claim_e_fails_on_a_geometric_gain_or_no_role_gain():
    long = _paper_like()
    # NegCLIP gains 0.06 over CLIP-FT on geometric relations on chain b1 alone: that half fails, the other holds
    mask = (long["model"] == "negclip-b1s0") & (long["key"] == GEOMETRIC)
    long.loc[mask, "value"] = PAPER_VGR_BY_KIND["geometric"]["clip_ft"] + 0.01 + 0.06
    e = aro_claims(Evidence(long), CHANCE, METHODS)[-1]
    assert [c.held for c in e.conditions] == [True, True, False, True] and not e.held
    # a toy where NegCLIP gains on neither half: the role conditions fail, the geometric ones hold
    flat = _paper_like()
    neg_role = (flat["method"] == "negclip") & (flat["key"] == ROLE)
    flat.loc[neg_role, "value"] = flat.loc[(flat["method"] == "clip_ft") & (flat["key"] == ROLE), "value"].to_numpy()
    e = aro_claims(Evidence(flat), CHANCE, METHODS)[-1]
    assert [c.held for c in e.conditions] == [True, False, True, True]  # 0.657 - 0.596 clears CLIP, not CLIP-FT
    assert not e.held


def test_gains_at_most_mirrors_beats():
    long = _paper_like()
    # VG-A by hand: NegCLIP - CLIP-FT = 0.71 - 0.65, 0.72 - 0.66, 0.70 - 0.64 = 0.06 on every chain pair
    cond = gains_at_most(METHODS, Evidence(long), "negclip", "clip_ft", "aro/vg_attribution/macro_acc", 0.05, "VG-A")
    assert cond.text == "VG-A: NegCLIP - CLIP-FT <= 0.05" and not cond.at_least
    assert cond.values == pytest.approx([0.06, 0.06, 0.06]) and cond.runs == ["b0s0 - b0s0", "b1s0 - b1s0",
                                                                             "b2s0 - b2s0"]
    assert not cond.held and cond.margin == 0.05 and cond.bound == 0.05
    assert gains_at_most(METHODS, Evidence(long), "negclip", "clip_ft", "aro/vg_attribution/macro_acc", 0.07,
                         "VG-A").held
    mirror = beats(METHODS, Evidence(long), "negclip", "clip_ft", "aro/vg_attribution/macro_acc", 0.05, "VG-A")
    assert mirror.values == cond.values and mirror.held  # the same pairs and values, the other side of the bound
    # one chain over the bound breaks it (the worst chain decides), as for beats
    mask = (long["model"] == "negclip-b2s0") & (long["key"] == "aro/vg_attribution/macro_acc")
    long.loc[mask, "value"] = 0.64 + 0.051
    worst = gains_at_most(METHODS, Evidence(long), "negclip", "clip_ft", "aro/vg_attribution/macro_acc", 0.06, "x")
    assert worst.values == pytest.approx([0.06, 0.06, 0.051]) and worst.held
    assert not gains_at_most(METHODS, Evidence(long), "negclip", "clip_ft", "aro/vg_attribution/macro_acc", 0.055,
                             "x").held


def test_chains_pair_with_the_base_of_their_own_chain():
    ev = Evidence(_paper_like())
    pairs, unpaired = pair_chains(ev, "negclip", "clip", "aro/vg_relation/macro_acc")
    assert [(a["model"], b["model"]) for a, b in pairs] == [("negclip-b0s0", "clip-b0"), ("negclip-b1s0", "clip-b1"),
                                                           ("negclip-b2s0", "clip-b2")]
    assert unpaired == []
    cond = beats(METHODS, ev, "negclip", "clip", "aro/vg_relation/macro_acc", 0.2, "VG-R")
    # (0.81 - 0.59), (0.82 - 0.60), (0.80 - 0.58): 0.22 on every chain
    assert cond.values == pytest.approx([0.22, 0.22, 0.22]) and cond.runs == ["b0s0 - b0", "b1s0 - b1", "b2s0 - b2"]
    assert cond.held and cond.n == 3 and cond.mean == pytest.approx(0.22) and cond.spread == pytest.approx(0.0)
    assert cond.interval is None and "no metrics tree given" in cond.note


def test_one_bad_chain_breaks_a_margin():
    long = _paper_like()
    # NegCLIP's chain b2 within 0.04 of CLIP-FT's chain b2 on VG-A: claim (c) fails though the mean clears it
    mask = (long["model"] == "negclip-b2s0") & (long["key"] == "aro/vg_attribution/macro_acc")
    long.loc[mask, "value"] = 0.68
    claims = {c.id: c for c in aro_claims(Evidence(long), CHANCE, METHODS)}
    assert not claims["c"].held
    cond = next(c for c in claims["c"].conditions if c.text.startswith("VG-A: NegCLIP - CLIP-FT"))
    assert cond.values == pytest.approx([0.71 - 0.65, 0.72 - 0.66, 0.68 - 0.64])  # paired chain by chain
    assert np.mean(cond.values) >= CLEAR_MARGIN > min(cond.values)


def test_verdict_rule_every_value_clears_the_bound():
    assert holds([0.06, 0.05], 0.05, at_least=True) and not holds([0.06, 0.049], 0.05, at_least=True)
    assert holds([0.5, 0.65], 0.65, at_least=False) and not holds([0.66], 0.65, at_least=False)
    assert not holds([], 0.0, at_least=True)  # nothing to check: not held
    assert "every whole chain" in VERDICT_RULE


def test_chance_level_base_fails_survival_claim():
    long = _paper_like()
    long.loc[long["key"].str.contains("shuffle_all_words"), "value"] = 0.005  # far below half of 0.5
    claims = {c.id: c for c in aro_claims(Evidence(long), CHANCE, METHODS)}
    assert not claims["b"].held


def test_missing_metric_is_not_held_and_the_table_is_numeric():
    long = _paper_like()
    long = long[long["key"] != "aro/flickr30k_order/acc"]
    claims = {c.id: c for c in aro_claims(Evidence(long), CHANCE, METHODS)}
    assert not claims["c"].held
    table = ledger_table(list(claims.values()))
    assert (table["note"] == "missing").any() and (table.loc[table["note"] == "missing", "n"] == 0).all()
    row = table[table["condition"] == "VG-R: NegCLIP - CLIP >= 0.05"].iloc[0]
    assert row["value"] == pytest.approx(0.22) and row["n"] == 3 and row["min"] == pytest.approx(0.22)
    assert table["value"].dtype == float and table["spread"].dtype == float
    shown = ledger_shown(table)
    assert shown.loc[shown["condition"] == "VG-R: NegCLIP - CLIP >= 0.05", "value ± spread over chains (n)"].iloc[0] \
        == "0.220 ± 0.000 (n=3)"


def test_summary_is_over_chains_and_a_single_run_has_no_spread():
    s = summary(_paper_like()).set_index(["method", "key"])
    row = s.loc[("negclip", "aro/vg_relation/macro_acc")]
    assert row["mean"] == pytest.approx(0.81) and row["std"] == pytest.approx(0.01) and row["n"] == 3
    one = summary(_paper_like().query("model == 'clip-b0'")).iloc[0]
    assert one["n"] == 1 and math.isnan(one["std"])


# --------------------------------------------------------------------------- item-level intervals


def _tree(tmp_path, clip_correct: list[list[bool]], neg_correct: list[list[bool]], relations: list[str]):
    """metrics/<model>/{metrics.json, provenance.json, items/vg_relation.parquet} for 2 chains."""
    rows = []
    for k in range(2):
        for name, method, seed, correct in ((f"clip-b{k}", "clip", "", clip_correct[k]),
                                            (f"negclip-b{k}s0", "negclip", "0", neg_correct[k])):
            folder = tmp_path / name
            (folder / "items").mkdir(parents=True)
            df = pd.DataFrame({"index": range(len(correct)), "relation": relations, "correct": correct,
                               "excluded": False})
            df.to_parquet(folder / "items" / "vg_relation.parquet", index=False)
            per = df.groupby("relation")["correct"].mean()
            (folder / "metrics.json").write_text(json.dumps({"aro/vg_relation/macro_acc": float(per.mean())}))
            (folder / "provenance.json").write_text(json.dumps({"model": name, "method": method, "base": f"b{k}",
                                                               "seed": seed or None, "profile": "toy"}))
            rows.append({"model": name, "method": method, "base": f"b{k}", "base_seed": str(k), "seed": seed,
                         "key": "aro/vg_relation/macro_acc", "value": float(per.mean()), "dvc_stage": ""})
    return pd.DataFrame(rows)


def _two_chain_evidence(tmp_path) -> tuple[Evidence, Bootstrap]:
    """Two chains of CLIP and NegCLIP on a 10-case VG-R table (6 "above", 4 "below"), a 400-resample bootstrap."""
    rel = ["above"] * 6 + ["below"] * 4
    clip = [[True, False] * 5, [False] * 10]
    neg = [[True] * 8 + [False] * 2, [True, True, False] * 3 + [True]]
    spec = Bootstrap(seed=5, n_resamples=400)
    return Evidence(_tree(tmp_path, clip, neg, rel), tmp_path, spec), spec


def _chain_averaged_difference(tmp_path):
    """NegCLIP - CLIP per VG-R item, averaged over the two chains of :func:`_two_chain_evidence`."""
    metric = item_metric("aro/vg_relation/macro_acc")
    return chain_average([(read_item_scores(tmp_path / f"negclip-b{k}s0", metric),
                           read_item_scores(tmp_path / f"clip-b{k}", metric)) for k in range(2)], "x")


def test_comparison_interval_is_the_paired_bootstrap_of_the_chain_averaged_difference(tmp_path):
    ev, spec = _two_chain_evidence(tmp_path)
    cond = beats(METHODS, ev, "negclip", "clip", "aro/vg_relation/macro_acc", 0.05, "VG-R")
    # by hand: chain b0: NegCLIP macro (6/6 + 2/4)/2 = 0.75, CLIP (3/6 + 2/4)/2 = 0.5; chain b1: (4/6 + 3/4)/2 vs 0
    assert cond.values == pytest.approx([0.25, (4 / 6 + 3 / 4) / 2])
    diff = _chain_averaged_difference(tmp_path)
    rng = np.random.default_rng(derive_seed(5, "ledger", cond.text))
    assert cond.interval == paired_interval(diff, rng, spec)
    assert cond.interval[0] <= cond.mean <= cond.interval[1] and cond.note == ""
    single = at_most(METHODS, ev, "clip", "aro/vg_relation/macro_acc", 0.65, "VG-R macro acc")
    assert single.values == pytest.approx([0.5, 0.0]) and single.interval is not None and single.held
    text = rule_markdown(ev, [], METHODS)
    assert "CLIP: 2 base seeds (0, 1)" in text and "NegCLIP: 2 whole chains (base seeds 0, 1 x fine-tune seed 0)" in text
    assert "95% percentile interval" in text and "400 resamples" in text


def test_items_that_disagree_with_metrics_json_give_no_interval(tmp_path):
    long = _tree(tmp_path, [[True, False], [True, True]], [[True, True], [True, False]], ["above", "below"])
    long.loc[long["model"] == "clip-b0", "value"] = 0.9  # metrics.json says otherwise than its items
    cond = beats(METHODS, Evidence(long, tmp_path, Bootstrap(0, n_resamples=50)), "negclip", "clip",
                 "aro/vg_relation/macro_acc", 0.0, "VG-R")
    assert cond.interval is None and "recomputed from the items is 0.500000, metrics.json says 0.9" in cond.note


def test_power_rule_marks_a_failing_condition_with_a_large_test_se_underpowered():
    from vlcomp.reporting.ledger import HELD, NOT_HELD, UNDERPOWERED, Claim, Condition

    # margin 0.05: underpowered iff not held and SE > 0.05 / 3 = 0.01667
    weak = Condition("x", [0.01, 0.03], ["b0", "b1"], 0.05, True, se=0.02, margin=0.05)
    sharp = Condition("y", [0.01, 0.03], ["b0", "b1"], 0.05, True, se=0.01, margin=0.05)
    edge = Condition("z", [0.01], ["b0"], 0.05, True, se=0.05 / 3, margin=0.05)  # not above a third: powered
    held = Condition("h", [0.06, 0.07], ["b0", "b1"], 0.05, True, se=0.5, margin=0.05)
    sign = Condition("s", [-0.01], ["b0"], 1e-9, True, se=0.5, margin=None)  # a sign test: no power rule
    unknown = Condition("u", [0.01], ["b0"], 0.05, True, margin=0.05)  # no SE: no power rule
    assert [c.verdict for c in (weak, sharp, edge, held, sign, unknown)] == [
        UNDERPOWERED, NOT_HELD, NOT_HELD, HELD, NOT_HELD, NOT_HELD]
    assert Claim("a", "", "", [held, weak]).verdict == UNDERPOWERED  # every failing condition underpowered
    assert Claim("b", "", "", [weak, sharp]).verdict == NOT_HELD  # one failing condition adequately powered
    assert Claim("c", "", "", [held]).verdict == HELD and Claim("d", "", "", []).verdict == NOT_HELD
    table = ledger_table([Claim("a", "", "", [held, weak])])
    assert list(table["condition_held"]) == ["yes", "underpowered"] and set(table["claim_held"]) == {UNDERPOWERED}
    assert table["test_se"].tolist() == [0.5, 0.02] and table["margin"].tolist() == [0.05, 0.05]
    assert ledger_shown(table)["test SE vs margin / 3"].tolist() == ["0.500 vs 0.017", "0.020 vs 0.017"]


def test_gains_at_most_has_the_paired_interval_and_its_clearing_side(tmp_path):
    ev, spec = _two_chain_evidence(tmp_path)
    cond = gains_at_most(METHODS, ev, "negclip", "clip", "aro/vg_relation/macro_acc", 0.05, "VG-R")
    assert cond.values == pytest.approx([0.25, (4 / 6 + 3 / 4) / 2]) and not cond.held
    diff = _chain_averaged_difference(tmp_path)
    rng = np.random.default_rng(derive_seed(5, "ledger", cond.text))
    assert cond.interval == paired_interval(diff, rng, spec) and cond.se > 0 and cond.margin == 0.05
    # "at most": the interval clears the bound when its upper end is at or below it
    assert cond.interval_clears == (cond.interval[1] <= 0.05)


def test_conditions_carry_the_bootstrap_se_and_the_margin_they_test(tmp_path):
    from vlcomp.reporting.items import bootstrap_interval

    ev, spec = _two_chain_evidence(tmp_path)
    cond = beats(METHODS, ev, "negclip", "clip", "aro/vg_relation/macro_acc", 0.05, "VG-R")
    diff = _chain_averaged_difference(tmp_path)
    low, high, se = bootstrap_interval(diff, np.random.default_rng(derive_seed(5, "ledger", cond.text)), spec)
    assert cond.interval == (low, high) and cond.se == se and cond.margin == 0.05
    # the SE is the spread of the resampled macro difference: near its analytic value for 10 items in 2 groups
    d = np.asarray(diff.scores)
    by_hand = math.sqrt(sum(np.var(d[np.asarray(diff.groups) == g], ddof=0) / (np.asarray(diff.groups) == g).sum()
                            for g in ("above", "below"))) / 2
    assert se == pytest.approx(by_hand, rel=0.25)
    single = at_most(METHODS, ev, "clip", "aro/vg_relation/macro_acc", 0.65, "VG-R macro acc", reference=0.5)
    assert single.margin == pytest.approx(0.15) and single.se > 0
    assert at_most(METHODS, ev, "clip", "aro/vg_relation/macro_acc", 0.65, "VG-R").margin is None
    assert beats(METHODS, ev, "negclip", "clip", "aro/vg_relation/macro_acc", 1e-9, "sign").margin is None
    assert beats(METHODS, ev, "negclip", "clip", "aro/vg_relation/macro_acc", -0.03, "few").margin == 0.03
