"""The blind-text ceiling in the reports and the matrix (vlcomp.reporting.blind): read from metrics/blind/<name>/,
never a model of the metrics tree, one reference row beside the models' own-image and wrong-image scores."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from vlcomp.reporting.blind import (
    BLIND_LABEL,
    BLIND_SOURCE,
    BlindResult,
    ceiling_long,
    ceiling_wide,
    measures,
    read_blind,
    wrong_image_key,
)
from vlcomp.reporting.collect import collect, ignored_models, methods_of, summary
from vlcomp.reporting.matrix import write_matrix
from vlcomp.reporting.papers.aro import tables as aro_tables

PARAMS = {"profile": "toy", "bases": {"b0": {"seed": 0}, "b1": {"seed": 1}},
          "variants": {"negclip-b0s0": {"method": "negclip", "base": "b0", "seed": 0},
                       "negclip-b1s0": {"method": "negclip", "base": "b1", "seed": 0}},
          "methods": {"negclip": {"label": "NegCLIP", "paper": "aro"}},
          "blind": {"blind-text": {"split": "coco_train", "smoothing": 1.0}}}
BLIND = {"aro/vg_relation/macro_acc": 0.76, "aro/vg_relation/wrong_image_macro_acc": 0.76,
         "aro/vg_attribution/macro_acc": 0.79, "sugarcrepe/swap_obj/acc": 0.65,
         "sugarcrepe/swap_obj/wrong_image_acc": 0.65, "ccneg/acc": 0.2}


def _folder(root: Path, name: str, metrics: dict, profile: str = "toy", **prov) -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "metrics.json").write_text(json.dumps(metrics))
    (d / "provenance.json").write_text(json.dumps({"profile": profile, "model": name.rsplit("/", 1)[-1], **prov}))
    return d


def _tree(root: Path) -> Path:
    """Two NegCLIP chains and a base model, and the blind reader's folder beside them."""
    for model, method, base, seed, vgr in (("clip-b0", "clip", "b0", None, 0.50),
                                           ("negclip-b0s0", "negclip", "b0", 0, 0.60),
                                           ("negclip-b1s0", "negclip", "b1", 0, 0.70)):
        _folder(root, model, {"aro/vg_relation/macro_acc": vgr, "aro/vg_relation/wrong_image_macro_acc": vgr - 0.1,
                              "ccneg/acc": 0.6}, method=method, base=base, seed=seed)
    _folder(root, "blind/blind-text", BLIND, split="coco_train", smoothing=1.0,
            counts={"split": "coco_train", "n_scenes": 3, "n_objects": 6, "n_relations": 6},
            skipped={"coco_retrieval": "not a choice between captions (RetrievalTask)"})
    return root


def test_the_blind_folder_is_no_model_of_the_tree(tmp_path):
    root = _tree(tmp_path / "metrics")
    long = collect(root, PARAMS)
    assert set(long["model"]) == {"clip-b0", "negclip-b0s0", "negclip-b1s0"}  # never a method's run
    assert ignored_models(root, PARAMS) == []  # nor a leftover folder the index lists


def test_read_blind_keeps_the_readers_of_params_and_profile(tmp_path):
    root = _tree(tmp_path / "metrics")
    (got,) = read_blind(root, PARAMS)
    assert got.name == "blind-text" and got.label == BLIND_LABEL and got.split == "coco_train"
    assert got.value("ccneg/acc") == 0.2 and math.isnan(got.value("zeroshot/cifar10/acc"))
    assert read_blind(root, {**PARAMS, "profile": "real"}) == []  # another profile's folder is not shown
    assert read_blind(root, {**PARAMS, "blind": {}}) == []
    assert read_blind(tmp_path / "nothing", PARAMS) == []  # not run yet: no row
    two = {**PARAMS, "blind": {"blind-text": {}, "other": {}}}
    _folder(root, "blind/other", BLIND)
    assert [b.label for b in read_blind(root, two)] == [f"{BLIND_LABEL}: blind-text", f"{BLIND_LABEL}: other"]


def test_wrong_image_keys_and_measures():
    assert wrong_image_key("aro/vg_relation/macro_acc") == "aro/vg_relation/wrong_image_macro_acc"
    assert wrong_image_key("aro/vg_relation/role_macro_acc") == "aro/vg_relation/role_wrong_image_macro_acc"
    assert wrong_image_key("aro/vg_relation/wrong_image_macro_acc") is None
    assert wrong_image_key("sugarcrepe/swap_obj/acc") == "sugarcrepe/swap_obj/wrong_image_acc"
    assert wrong_image_key("vlchecklist/relation/avg") == "vlchecklist/wrong_image/relation/avg"
    assert wrong_image_key("ccneg/acc") is None and wrong_image_key("sugarcrepe/swap/micro_acc") is None
    got = measures(["ccneg", "vg_relation", "sugarcrepe", "coco_retrieval"], set(BLIND))
    assert [(m.label, m.wrong) for m in got] == [
        ("CC-Neg", None), ("VG-Relation (macro)", "aro/vg_relation/wrong_image_macro_acc"),
        ("SugarCrepe swap_obj", "sugarcrepe/swap_obj/wrong_image_acc")]


def test_the_ceiling_table_puts_the_reader_beside_own_and_wrong_image(tmp_path):
    root = _tree(tmp_path / "metrics")
    summ = summary(collect(root, PARAMS))
    methods = methods_of(PARAMS)
    blind = read_blind(root, PARAMS)
    long = ceiling_long(summ, methods, ["negclip"], blind, ["vg_relation", "ccneg"])
    vgr = long[long["metric_key"] == "aro/vg_relation/macro_acc"].set_index("source")
    assert vgr.loc[BLIND_SOURCE, "own_image"] == 0.76 and vgr.loc[BLIND_SOURCE, "wrong_image"] == 0.76
    assert vgr.loc["toy", "own_image"] == pytest.approx(0.65) and vgr.loc["toy", "own_image_sd"] == pytest.approx(
        0.0707107, abs=1e-6)
    assert vgr.loc["toy", "wrong_image"] == pytest.approx(0.55) and vgr.loc["toy", "n"] == 2
    wide = ceiling_wide(long).set_index("measure")
    assert wide.loc["VG-Relation (macro)", BLIND_LABEL] == "0.760"
    assert wide.loc["VG-Relation (macro)", "NegCLIP, own image"] == "0.650 ± 0.071"
    assert wide.loc["CC-Neg", "NegCLIP, wrong image"] == ""  # CC-Neg scores no wrong image


def test_aro_tables_show_the_reader_as_one_row(tmp_path):
    root = _tree(tmp_path / "metrics")
    summ = summary(collect(root, PARAMS))
    methods = methods_of(PARAMS, "aro")
    paper = pd.DataFrame(columns=["artifact", "dataset", "model", "metric", "group", "value", "std"])
    blind = read_blind(root, PARAMS)
    x1 = aro_tables.table_x1(summ, paper, methods, blind)
    assert list(x1["source"]) == ["toy", "toy", BLIND_SOURCE] and x1["mean"].iloc[-1] == 0.79
    assert pd.isna(x1["n"].iloc[-1])  # no run: no n
    wrong = aro_tables.table_wrong_image(summ, methods, blind)
    rows = wrong[(wrong["source"] == BLIND_SOURCE) & (wrong["task"] == "VG-Relation")]
    assert list(rows["measure"]) == ["VG-Relation, own image", "VG-Relation, wrong image", "VG-Relation, own - wrong"]
    assert list(rows["mean"]) == [0.76, 0.76, 0.0]
    shown = aro_tables.shown_wide(aro_tables.table_t6(summ, paper, methods, blind), ["group", "task"], "model")
    assert shown.set_index("task").loc["VG-Relation", f"{BLIND_LABEL} (toy)"] == "0.760"
    assert shown.set_index("task").loc["CIFAR10", f"{BLIND_LABEL} (toy)"] == ""  # zero-shot: skipped
    assert aro_tables.table_x1(summ, paper, methods).equals(aro_tables.table_x1(summ, paper, methods, ()))


def test_the_matrix_has_one_row_per_reader_last(tmp_path):
    root = _tree(tmp_path / "metrics")
    long = collect(root, PARAMS)
    html = write_matrix(long, ["vg_relation", "ccneg", "zeroshot_aro"], tmp_path / "matrix", methods_of(PARAMS),
                        read_blind(root, PARAMS))
    wide = pd.read_csv(tmp_path / "matrix" / "matrix_wide.csv")
    assert list(wide["method"]) == ["clip", "negclip", "blind-text"]
    assert wide.set_index("method").loc["blind-text", "aro/vg_relation/macro_acc"] == 0.76
    assert pd.isna(wide.set_index("method").loc["blind-text", "zeroshot/cifar10/acc"])
    m = pd.read_csv(tmp_path / "matrix" / "matrix.csv")
    assert m[m["method"] == "blind-text"]["n"].isna().all() and (m[m["method"] == "negclip"]["n"] == 2).all()
    assert list(pd.read_csv(tmp_path / "matrix" / "models.csv")["method"]) == ["clip", "negclip", "negclip"]
    assert f"<td>{BLIND_LABEL}</td><td>0.760</td>" in html and "no image, no training" in html


def test_a_report_stage_depends_on_the_readers_of_params():
    from vlcomp import dag
    from vlcomp.config import load_params

    params = load_params(Path(__file__).resolve().parents[2] / "params.yaml")
    data, keys = dag.report_inputs(params, "aro")
    for name in params.get("blind") or {}:
        assert f"metrics/blind/{name}" in data and f"blind.{name}" in keys
    assert isinstance(BlindResult("x", "x").value("k"), float)
