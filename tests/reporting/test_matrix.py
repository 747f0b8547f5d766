"""The cross-paper matrix: mean and sample std over whole-chain runs per method and headline metric, by hand."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from vlcomp.reporting.collect import methods_of
from vlcomp.reporting.matrix import (
    headline_columns,
    heatmap_png,
    model_matrix,
    not_expressible,
    per_model,
    wide,
    wide_means,
    write_matrix,
)

# params order and labels: methods listed in params come first, in params order, with their labels
METHODS = methods_of({"methods": {"negclip": {"label": "NegCLIP"}, "clip_ft": {"label": "CLIP-FT"}}})

NAN = re.compile(r"\bnan\b", re.IGNORECASE)  # a cell that reads "nan"


def _long() -> pd.DataFrame:
    """CLIP: one base model (b0); NegCLIP: chains b0s0, b1s0, b2s0; a method params do not know: one chain."""
    rows = [("clip-b0", "clip", "b0", "0", "", "aro/vg_relation/macro_acc", 0.5),
            ("clip-b0", "clip", "b0", "0", "", "ccneg/acc", 0.4)]
    rows += [(f"negclip-b{k}s0", "negclip", f"b{k}", str(k), "0", "aro/vg_relation/macro_acc", v)
             for k, v in enumerate((0.6, 0.7, 0.8))]
    rows += [(f"negclip-b{k}s0", "negclip", f"b{k}", str(k), "0", "ccneg/acc", v) for k, v in enumerate((0.9, 0.9, 0.6))]
    rows += [("newmethod-b0s0", "newmethod", "b0", "0", "0", "ccneg/acc", 0.1)]
    return pd.DataFrame(rows, columns=["model", "method", "base", "base_seed", "seed", "key", "value"])


def test_matrix_by_hand():
    cols = [("vg_relation", "aro/vg_relation/macro_acc"), ("ccneg", "ccneg/acc")]
    m = model_matrix(_long(), cols).set_index(["method", "key"])
    assert m.loc[("negclip", "aro/vg_relation/macro_acc"), "mean"] == pytest.approx(0.7)
    assert m.loc[("negclip", "aro/vg_relation/macro_acc"), "std"] == pytest.approx(0.1)  # sample std (ddof=1)
    assert m.loc[("negclip", "ccneg/acc"), "std"] == pytest.approx(((0.1**2 + 0.1**2 + 0.2**2) / 2) ** 0.5)
    assert m.loc[("clip", "ccneg/acc"), "n"] == 1 and pd.isna(m.loc[("clip", "ccneg/acc"), "std"])  # no spread
    table = wide(model_matrix(_long(), cols, METHODS), cols, METHODS).set_index("model")
    assert list(table.index) == ["CLIP", "NegCLIP", "newmethod"]  # params order first, a method not in params kept
    assert table.loc["NegCLIP", "aro/vg_relation/macro_acc"] == "0.700 ± 0.100"
    assert table.loc["CLIP", "ccneg/acc"] == "0.400 (n=1)"
    assert table.loc["newmethod", "aro/vg_relation/macro_acc"] == ""
    means = wide_means(model_matrix(_long(), cols, METHODS), cols, METHODS).set_index("method")
    assert means.loc["negclip", "ccneg/acc"] == pytest.approx(0.8) and pd.isna(means.loc["newmethod",
                                                                                     "aro/vg_relation/macro_acc"])
    models = per_model(_long(), cols, METHODS)
    assert list(models["model"]) == ["clip-b0", "negclip-b0s0", "negclip-b1s0", "negclip-b2s0", "newmethod-b0s0"]
    assert models.set_index("model").loc["negclip-b2s0", "ccneg/acc"] == pytest.approx(0.6)
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


def test_write_matrix_csvs_are_numeric_and_the_section_has_its_legend(tmp_path):
    html = write_matrix(_long(), ["vg_relation", "ccneg"], tmp_path, METHODS)
    wide_csv = pd.read_csv(tmp_path / "matrix_wide.csv")
    assert all(wide_csv[c].dtype == float for c in wide_csv.columns if "/" in c)
    assert pd.read_csv(tmp_path / "matrix.csv").set_index(["method", "key"]).loc[("negclip", "ccneg/acc"), "n"] == 3
    assert len(pd.read_csv(tmp_path / "models.csv")) == 5 and (tmp_path / "matrix.png").exists()
    assert "NegCLIP: 3 whole chains (base seeds 0, 1, 2 x fine-tune seed 0)" in html and "± 0.100" in html
    assert "CLIP: 1 run (base seed 0), no spread" in html and not NAN.search(html)
