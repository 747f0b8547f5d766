"""Report tables put the reproduced value (mean ± spread over whole chains) next to the paper's printed one, for every
row the catalog lists; the CSV side is numeric, the reading side formatted, in one model order."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from vlcomp.reporting.collect import methods_of, summary
from vlcomp.reporting.paper_values import load_paper_values
from vlcomp.reporting.papers.aro import tables

METHODS = methods_of({"methods": {"clip_ft": {"label": "CLIP-FT"}, "negclip": {"label": "NegCLIP"}}})


@pytest.fixture(scope="module")
def paper() -> pd.DataFrame:
    return load_paper_values("aro")


def _long(keys, value=lambda i: 0.5 + 0.1 * i) -> pd.DataFrame:
    """CLIP: one base model; CLIP-FT and NegCLIP: chains b0s0, b1s0, b2s0 with values 0.5, 0.6, 0.7."""
    rows = []
    for method, n in (("clip", 1), ("clip_ft", 3), ("negclip", 3)):
        for i in range(n):
            seed = "" if method == "clip" else "0"
            for key in keys:
                rows.append({"model": f"{method}-b{i}", "method": method, "base": f"b{i}", "base_seed": str(i),
                             "seed": seed, "key": key, "value": value(i)})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def summ() -> pd.DataFrame:
    return summary(_long([k for _, _, k, _, _ in tables.T6_ROWS]))


def test_t6_long_is_numeric_and_its_view_shows_spread_and_paper(summ, paper):
    t6 = tables.table_t6(summ, paper, METHODS)
    r = t6[(t6["task"] == "VG-Relation") & (t6["method"] == "negclip")].iloc[0]
    assert r["mean"] == pytest.approx(0.6) and r["spread"] == pytest.approx(0.1) and r["n"] == 3
    assert r["paper"] == pytest.approx(0.81) and r["difference"] == pytest.approx(0.6 - 0.81)
    for col in ("mean", "spread", "paper", "difference"):
        assert t6[col].dtype == float, col
    view = tables.shown_wide(t6, ["group", "task"], "model")
    assert list(view["task"]) == [row[1] for row in tables.T6_ROWS]
    row = view[view["task"] == "COCO-PRC"].iloc[0]
    assert row["NegCLIP (paper)"] == "0.86" and row["CLIP (paper)"] == "0.46"
    assert row["NegCLIP (toy)"] == "0.600 ± 0.100"  # mean and sample std of 0.5, 0.6, 0.7
    assert row["CLIP (toy)"] == "0.500 (n=1)"  # a single run is marked, never shown as if it had no spread
    assert list(view.columns[2:]) == ["CLIP (toy)", "CLIP (paper)", "CLIP-FT (toy)", "CLIP-FT (paper)",
                                      "NegCLIP (toy)", "NegCLIP (paper)"]


def test_t3_t4_cover_every_strategy_and_keep_shuffle_spread_apart(paper):
    keys = [tables.retrieval_key(ds, s, m) for ds in ("coco", "flickr30k")
            for s in (*tables.TEXT_STRATEGY_LABELS, *tables.IMAGE_STRATEGY_LABELS) for _, m in tables.RETRIEVAL_METRICS]
    long = _long(keys)
    long = pd.concat([long, _long([k + "_std" for k in keys], value=lambda i: 0.01 * (i + 1))], ignore_index=True)
    t3 = tables.table_shuffled_retrieval(summary(long), paper, "ARO-T3", METHODS)
    assert len(t3) == 2 * 6 * 4 * (3 + 3)  # datasets x strategies x metrics x (3 toy + 3 released-only models)
    view = tables.shown_wide(t3, ["dataset", "strategy", "model"], "measure", perturbation=True)
    assert len(view) == 2 * 6 * 6
    blip = view[(view["model"] == "BLIP") & (view["strategy"] == "Shuffle all words") & (view["dataset"] == "COCO")].iloc[0]
    assert blip["Text R@1 (toy)"] == "paper only" and blip["Text R@1 (paper)"] == "0.690 ± 0.004"
    neg = t3[(t3["method"] == "negclip") & (t3["strategy"] == "Shuffle all words") & (t3["measure"] == "Text R@1")
             & (t3["dataset"] == "COCO")].iloc[0]
    assert neg["spread"] == pytest.approx(0.1) and neg["perturbation_std"] == pytest.approx(0.02)  # mean of .01,.02,.03
    none = t3[(t3["strategy"] == "No Shuffling") & (t3["method"] == "negclip")]
    assert none["perturbation_std"].isna().all()
    nrow = view[(view["model"] == "NegCLIP") & (view["strategy"] == "Shuffle all words")].iloc[0]
    assert nrow["Text R@1 (toy, perturbation sd)"] == "0.020"
    t4 = tables.table_shuffled_retrieval(summary(long), paper, "ARO-T4", METHODS)
    assert len(tables.shown_wide(t4, ["dataset", "strategy", "model"], "measure")) == 2 * 4 * 6


def test_t5_and_x1_mark_paper_only_models_and_chance(paper):
    long = _long(["aro/coco_order/acc", "aro/flickr30k_order/acc", "aro/vg_attribution/macro_acc"])
    summ = summary(long)
    t5 = tables.table_t5(summ, paper, METHODS)
    view = tables.shown_wide(t5, ["dataset", "model"], "measure", perturbation=True)
    flava = view[(view["model"] == "FLAVA") & (view["dataset"] == "COCO-PRC")].iloc[0]
    assert flava["Accuracy (toy)"] == "paper only" and flava["Accuracy (paper)"] == "0.039 ± 0.001"
    chance = t5[(t5["model"] == "chance") & (t5["dataset"] == "COCO-PRC")].iloc[0]
    assert chance["mean"] == 0.2 and pd.isna(chance["n"]) and chance["paper"] == pytest.approx(0.2)
    x1 = tables.shown_wide(tables.table_x1(summ, paper, METHODS), ["model"], "task").set_index("model")
    assert x1.loc["BLIP", "VG-A macro acc (paper)"] == "0.88" and x1.loc["BLIP", "VG-A macro acc (toy)"] == "paper only"


def test_t2_toy_and_paper_columns_share_one_model_order(paper):
    long = _long(["aro/vg_relation/macro_acc", "aro/vg_relation/rel/to_the_left_of/acc"])
    t2 = tables.table_t2(summary(long), paper, {"to the left of": 10, "pointing at": 5},
                         {"to the left of": "spatial", "pointing at": "verbs"}, METHODS)
    view = tables.shown_wide(t2, ["relation", "relation group", "toy cases", "paper samples"], "model")
    models = [c.rsplit(" (", 1)[0] for c in view.columns[4:]]
    assert list(dict.fromkeys(models)) == ["CLIP", "CLIP-FT", "NegCLIP", "BLIP", "X-VLM", "FLAVA"]
    assert list(view.columns[4:10]) == ["CLIP (toy)", "CLIP (paper)", "CLIP-FT (toy)", "CLIP-FT (paper)",
                                        "NegCLIP (toy)", "NegCLIP (paper)"]
    left = view[view["relation"] == "to the left of"].iloc[0]
    assert left["CLIP (paper)"] == "0.49" and left["paper samples"] == 7741 and left["toy cases"] == 10
    assert view[view["relation"] == "pointing at"].iloc[0]["CLIP (paper)"] == ""  # no Table 2 twin
    assert math.isnan(t2[t2["relation"] == "pointing at"]["paper"].iloc[0])


def test_wrong_image_table_by_hand() -> None:
    rows = []
    for method, own, wrong in (("clip", [0.5], [0.5]), ("clip_ft", [0.6, 0.7], [0.5, 0.5]),
                               ("negclip", [0.8, 0.9], [0.7, 0.7])):
        for i, (o, w) in enumerate(zip(own, wrong, strict=True)):
            for _, own_key, wrong_key, cos_key in tables.WRONG_IMAGE_ROWS:
                for key, v in ((own_key, o), (wrong_key, w), (cos_key, 0.99), (tables.own_minus_wrong_key(own_key), o - w)):
                    if key is None:
                        continue
                    rows.append({"model": f"{method}{i}", "method": method, "base": f"b{i}", "base_seed": str(i),
                                 "seed": "0", "key": key, "value": v})
    long = tables.table_wrong_image(summary(pd.DataFrame(rows)), METHODS)
    t = tables.shown_wide(long, ["model"], "measure").set_index("model")
    assert t.loc["NegCLIP", "VG-Attribution, own image (toy)"].startswith("0.850 ± ")
    assert t.loc["NegCLIP", "VG-Attribution, wrong image (toy)"] == "0.700 ± 0.000"
    assert t.loc["NegCLIP", "VG-Relation, own - wrong (toy)"].startswith("0.150 ± 0.071")  # (0.1, 0.2): ddof=1
    assert t.loc["CLIP", "VG-Relation, own - wrong (toy)"] == "0.000 (n=1)"
    assert t.loc["CLIP", "VG-Attribution, text cos(true, false) (toy)"] == "0.990 (n=1)"
    assert t.loc["NegCLIP", "VALSE relations, own - wrong (toy)"].startswith("0.150 ± 0.071")
    assert "VALSE relations, text cos(true, false) (toy)" not in t.columns


def test_own_minus_wrong_keys() -> None:
    assert tables.own_minus_wrong_key("aro/vg_relation/macro_acc") == "aro/vg_relation/own_minus_wrong_image_macro_acc"
    assert tables.own_minus_wrong_key("valse/relations/acc") == "valse/relations/own_minus_wrong_image_acc"
    assert tables.own_minus_wrong_key("vlchecklist/relation/avg") == "vlchecklist/own_minus_wrong_image/relation/avg"
    keys = [k for _, own, wrong, _ in tables.WRONG_IMAGE_ROWS for k in (own, wrong, tables.own_minus_wrong_key(own))]
    assert len(set(keys)) == len(keys)  # no derived key collides with a measured one
