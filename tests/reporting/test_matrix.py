"""The cross-paper matrix: mean and sample std over training seeds per method and headline metric, by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from vlcomp.reporting.collect import methods_of
from vlcomp.reporting.matrix import headline_columns, heatmap_png, model_matrix, not_expressible, wide

# params order and labels: methods listed in params come first, in params order, with their labels
METHODS = methods_of({"methods": {"negclip": {"label": "NegCLIP"}, "clip_ft": {"label": "CLIP-FT"}}})


def _long() -> pd.DataFrame:
    rows = [("clip", "", "aro/vg_relation/macro_acc", 0.5), ("clip", "", "ccneg/acc", 0.4)]
    rows += [("negclip", str(s), "aro/vg_relation/macro_acc", v) for s, v in enumerate((0.6, 0.7, 0.8))]
    rows += [("negclip", str(s), "ccneg/acc", v) for s, v in enumerate((0.9, 0.9, 0.6))]
    rows += [("newmethod", "0", "ccneg/acc", 0.1)]
    return pd.DataFrame(rows, columns=["method", "seed", "key", "value"])


def test_matrix_by_hand():
    cols = [("vg_relation", "aro/vg_relation/macro_acc"), ("ccneg", "ccneg/acc")]
    m = model_matrix(_long(), cols).set_index(["method", "key"])
    assert m.loc[("negclip", "aro/vg_relation/macro_acc"), "mean"] == pytest.approx(0.7)
    assert m.loc[("negclip", "aro/vg_relation/macro_acc"), "std"] == pytest.approx(0.1)  # sample std (ddof=1)
    assert m.loc[("negclip", "ccneg/acc"), "std"] == pytest.approx(((0.1**2 + 0.1**2 + 0.2**2) / 2) ** 0.5)
    assert m.loc[("clip", "ccneg/acc"), "n"] == 1 and m.loc[("clip", "ccneg/acc"), "std"] == 0
    table = wide(model_matrix(_long(), cols, METHODS), cols, METHODS).set_index("model")
    assert list(table.index) == ["CLIP", "NegCLIP", "newmethod"]  # params order first, a method not in params kept
    assert table.loc["NegCLIP", "aro/vg_relation/macro_acc"] == "0.700 ± 0.100 (n=3)"
    assert table.loc["newmethod", "aro/vg_relation/macro_acc"] == "--"
    png = heatmap_png(model_matrix(_long(), cols), cols, METHODS)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png == heatmap_png(model_matrix(_long(), cols), cols, METHODS)  # stable
    # no methods given: the base model first, every other method by name, labelled by name
    assert list(wide(model_matrix(_long(), cols), cols).set_index("model").index) == ["CLIP", "negclip", "newmethod"]


def test_headlines_come_from_the_benchmark_records():
    cols = headline_columns(["vg_relation", "coco_retrieval", "zeroshot_conclip"])
    assert cols == [("vg_relation", "aro/vg_relation/macro_acc"), ("coco_retrieval", "retrieval/coco/i2t/recall_at_1"),
                    ("coco_retrieval", "retrieval/coco/t2i/recall_at_1"),
                    ("zeroshot_conclip", "zeroshot/conclip/mean_acc"), ("zeroshot_conclip", "zeroshot/conclip/mean_delta")]


def test_every_twin_lists_what_it_cannot_express():
    df = not_expressible()
    assert {"valse", "vlchecklist", "hardpos", "sugarcrepe", "ccneg", "crepe"} <= set(df["twin"])
    assert any(df["part"].str.startswith("coreference"))
