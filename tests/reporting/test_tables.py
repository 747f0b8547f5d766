"""Report tables put the reproduced value next to the paper's printed one, for every row the catalog lists."""

from __future__ import annotations

import pandas as pd
import pytest

from vlcomp.reporting.collect import methods_of, summary
from vlcomp.reporting.paper_values import load_paper_values
from vlcomp.reporting.papers.aro import tables

METHODS = methods_of({"methods": {"clip_ft": {"label": "CLIP-FT"}, "negclip": {"label": "NegCLIP"}}})


@pytest.fixture(scope="module")
def paper() -> pd.DataFrame:
    return load_paper_values("aro")


@pytest.fixture(scope="module")
def summ() -> pd.DataFrame:
    rows = []
    for method, seeds in (("clip", [""]), ("clip_ft", ["0", "1", "2"]), ("negclip", ["0", "1", "2"])):
        for i, seed in enumerate(seeds):
            for _, _, key, _, _ in tables.T6_ROWS:
                rows.append({"model": f"{method}{seed}", "method": method, "seed": seed, "key": key,
                             "value": 0.5 + 0.1 * i})
    return summary(pd.DataFrame(rows))


def test_t6_has_every_row_and_the_paper_values(summ, paper):
    t6 = tables.table_t6(summ, paper, METHODS)
    assert list(t6["Task"]) == [r[1] for r in tables.T6_ROWS]
    row = t6[t6["Task"] == "COCO-PRC"].iloc[0]
    assert row["NegCLIP (paper)"] == "0.86"
    assert row["CLIP (paper)"] == "0.46"
    assert row["NegCLIP (toy)"] == "0.600 ± 0.100"  # mean and sample std of 0.5, 0.6, 0.7
    assert row["CLIP (toy)"] == "0.500"


def test_t6_long_difference(summ, paper):
    long = tables.comparison_long(summ, paper, METHODS)
    r = long[(long["task"] == "VG-Relation") & (long["model"] == "NegCLIP")].iloc[0]
    assert r["paper"] == pytest.approx(0.81)
    assert r["difference"] == pytest.approx(0.6 - 0.81)
    assert r["n_seeds"] == 3


def test_t3_t4_cover_every_strategy_and_paper_only_rows(summ, paper):
    t3 = tables.table_shuffled_retrieval(summ, paper, "ARO-T3", METHODS)
    assert len(t3) == 2 * 6 * 6  # datasets x strategies x (3 toy + 3 paper-only models)
    blip = t3[(t3["Model"] == "BLIP") & (t3["Strategy"] == "Shuffle all words") & (t3["Dataset"] == "COCO")].iloc[0]
    assert blip["Text R@1 (toy)"] == "paper only"
    assert blip["Text R@1 (paper)"] == "0.690 ± 0.004"
    t4 = tables.table_shuffled_retrieval(summ, paper, "ARO-T4", METHODS)
    assert len(t4) == 2 * 4 * 6


def test_t5_and_x1_mark_paper_only_models(summ, paper):
    t5 = tables.table_t5(summ, paper, METHODS)
    flava = t5[(t5["Model"] == "FLAVA") & (t5["Dataset"] == "COCO-PRC")].iloc[0]
    assert flava["Accuracy (toy)"] == "paper only" and flava["Accuracy (paper)"] == "0.039 ± 0.001"
    x1 = tables.table_x1(summ, paper, METHODS)
    assert x1.set_index("Model").loc["BLIP", "VG-A macro acc (paper)"] == "0.88"


def test_t2_fills_paper_columns_only_for_shared_relations(summ, paper):
    t2 = tables.table_t2(summ, paper, {"to the left of": 10, "pointing at": 5}, {"to the left of": "spatial",
                                                                             "pointing at": "verbs"}, METHODS)
    left = t2[t2["Relation"] == "to the left of"].iloc[0]
    assert left["CLIP (paper)"] == "0.49" and left["# paper samples"] == 7741 and left["# toy cases"] == 10
    point = t2[t2["Relation"] == "pointing at"].iloc[0]
    assert point["CLIP (paper)"] == "--"


def test_wrong_image_table_by_hand() -> None:
    rows = []
    for method, seeds, own, wrong in (("clip", [""], [0.5], [0.5]), ("clip_ft", ["0", "1"], [0.6, 0.7], [0.5, 0.5]),
                                      ("negclip", ["0", "1"], [0.8, 0.9], [0.7, 0.7])):
        for seed, o, w in zip(seeds, own, wrong, strict=True):
            for _, own_key, wrong_key, cos_key in tables.WRONG_IMAGE_ROWS:
                rows += [{"model": f"{method}{seed}", "method": method, "seed": seed, "key": own_key, "value": o},
                         {"model": f"{method}{seed}", "method": method, "seed": seed, "key": wrong_key, "value": w},
                         {"model": f"{method}{seed}", "method": method, "seed": seed, "key": cos_key, "value": 0.99}]
    t = tables.table_wrong_image(summary(pd.DataFrame(rows)), METHODS).set_index("Model")
    assert t.loc["NegCLIP", "VG-Attribution, own image"].startswith("0.850 ± ")
    assert t.loc["NegCLIP", "VG-Attribution, wrong image"] == "0.700"
    assert t.loc["NegCLIP", "VG-Relation, own - wrong"] == "0.150"
    assert t.loc["CLIP", "VG-Relation, own - wrong"] == "0.000"
    assert t.loc["CLIP-FT", "VG-Relation, own - wrong"] == "0.150"
    assert t.loc["CLIP", "VG-Attribution, text cos(true, false)"] == "0.990"
