"""Claims ledger: conditions hold only when they hold on every seed; values come from the metrics as given."""

from __future__ import annotations

import pandas as pd
import pytest

from vlcomp.reporting.collect import methods_of, summary
from vlcomp.reporting.ledger import ledger_table
from vlcomp.reporting.papers.aro.claims import CLEAR_MARGIN, aro_claims

METHODS = methods_of({"methods": {"clip_ft": {"label": "CLIP-FT"}, "negclip": {"label": "NegCLIP"}}})

CHANCE = {"coco": 0.001, "flickr30k": 0.001}


def _long(values: dict[str, dict[str, list[float]]]) -> pd.DataFrame:
    rows = []
    for method, metrics in values.items():
        for key, vals in metrics.items():
            for seed, v in enumerate(vals):
                rows.append({"model": f"{method}-s{seed}", "method": method, "seed": str(seed), "key": key, "value": v})
    return pd.DataFrame(rows)


def _metrics(vgr, vga, coco_order, flickr_order, zs=0.5, r1=0.3, r1_shuf=0.2):
    keys = {"aro/vg_relation/macro_acc": vgr, "aro/vg_attribution/macro_acc": vga, "aro/coco_order/acc": coco_order,
            "aro/flickr30k_order/acc": flickr_order}
    for t in ("cifar10", "cifar100", "imagenet"):
        keys[f"zeroshot/{t}/acc"] = zs
    for ds in ("coco", "flickr30k"):
        for d in ("i2t", "t2i"):
            keys[f"retrieval/{ds}/{d}/recall_at_1"] = r1
        keys[f"retrieval/{ds}/shuffle/shuffle_all_words/i2t/recall_at_1"] = r1_shuf
    return keys


def _paper_like():
    clip = {k: [v] for k, v in _metrics(0.59, 0.62, 0.46, 0.59, zs=0.80, r1=0.50, r1_shuf=0.34).items()}
    ft = {k: [v, v + 0.01, v - 0.01] for k, v in _metrics(0.63, 0.65, 0.36, 0.50, zs=0.80, r1=0.59).items()}
    neg = {k: [v, v + 0.01, v - 0.01] for k, v in _metrics(0.81, 0.71, 0.86, 0.91, zs=0.79, r1=0.56).items()}
    return _long({"clip": clip, "clip_ft": ft, "negclip": neg})


def test_paper_numbers_hold_every_claim():
    claims = aro_claims(_paper_like(), CHANCE, METHODS)
    assert [c.id for c in claims] == ["a", "b", "c", "d"]
    assert all(c.held for c in claims), ledger_table(claims).to_string()


def test_one_bad_seed_breaks_a_margin():
    long = _paper_like()
    # NegCLIP seed 2 no better than CLIP-FT on VG-A: claim (c) must fail even though the mean still clears it
    mask = (long["method"] == "negclip") & (long["seed"] == "2") & (long["key"] == "aro/vg_attribution/macro_acc")
    long.loc[mask, "value"] = 0.66
    claims = {c.id: c for c in aro_claims(long, CHANCE, METHODS)}
    assert not claims["c"].held
    cond = next(c for c in claims["c"].conditions if c.text.startswith("VG-A: NegCLIP - CLIP-FT"))
    assert min(cond.values) == pytest.approx(0.66 - 0.64)  # paired with CLIP-FT seed 2 (0.65 - 0.01)
    assert min(cond.values) < CLEAR_MARGIN


def test_chance_level_base_fails_survival_claim():
    long = _paper_like()
    long.loc[long["key"].str.contains("shuffle_all_words"), "value"] = 0.005  # far below half of 0.5
    claims = {c.id: c for c in aro_claims(long, CHANCE, METHODS)}
    assert not claims["b"].held


def test_missing_metric_is_not_held():
    long = _paper_like()
    long = long[long["key"] != "aro/flickr30k_order/acc"]
    claims = {c.id: c for c in aro_claims(long, CHANCE, METHODS)}
    assert not claims["c"].held
    table = ledger_table(list(claims.values()))
    assert (table["values over seeds"] == "missing").any()


def test_summary_std_over_seeds():
    s = summary(_paper_like())
    row = s[(s["method"] == "negclip") & (s["key"] == "aro/vg_relation/macro_acc")].iloc[0]
    assert row["mean"] == pytest.approx(0.81)
    assert row["std"] == pytest.approx(0.01)  # sample std of (0.81, 0.82, 0.80)
    assert row["n_seeds"] == 3
