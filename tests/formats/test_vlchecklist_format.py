"""VL-CheckList writers (annotation file, TSVLC corpus.json) against the readers, and the ``vlchecklist_corpus``
input of the benchmark record (hand-computed category macro, errors naming the file)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from vlcomp.benchmarks import BENCHMARKS
from vlcomp.benchmarks.vlchecklist import aggregate_vlchecklist, corpus_from_items
from vlcomp.formats import vlchecklist as vlc_ds
from vlcomp.formats.records import RecordError

CASES = [
    vlc_ds.VLCheckListCase(0, "VG_100K/1.jpg", ("drain ON sidewalk",), ("drain ON driver",)),
    vlc_ds.VLCheckListCase(1, "VG_100K/1.jpg", ("bicycle ON sidewalk",), (" frying pan",)),  # raw leading space
    vlc_ds.VLCheckListCase(2, "swig/a.jpg", ("a", "b", "c"), ("x", "y", "z")),  # SWiG: 3 + 3
]


# ------------------------------------------------------------------------------------------ annotation file


def test_write_file_round_trips_and_keeps_the_released_layout(tmp_path) -> None:
    path = vlc_ds.write_file(tmp_path / "data" / "Object" / "vg_obj_margin.json", CASES)
    assert vlc_ds.load_file(path) == CASES
    text = path.read_text()
    assert text.startswith('[["VG_100K/1.jpg", {"POS": ["drain ON sidewalk"], "NEG": ["drain ON driver"]}], ')
    assert "\n" not in text  # one line, as released
    assert json.loads(text)[2] == ["swig/a.jpg", {"POS": ["a", "b", "c"], "NEG": ["x", "y", "z"]}]


def test_write_file_of_nothing_is_an_empty_list(tmp_path) -> None:
    path = vlc_ds.write_file(tmp_path / "swig_place_large.json", [])
    assert path.read_text() == "[]" and vlc_ds.load_file(path) == []


@pytest.mark.parametrize(("case", "message"), [
    (vlc_ds.VLCheckListCase(0, "a.jpg", ("  ",), ("x",)), r"record 1: field 'POS' item 0 is an empty caption"),
    (vlc_ds.VLCheckListCase(0, "a.jpg", ("x",), ()), r"record 1: field 'NEG' is an empty list"),
    (vlc_ds.VLCheckListCase(0, "", ("x",), ("y",)), r"record 1: image path must be a non-empty string"),
])
def test_write_file_refuses_what_the_reader_refuses(tmp_path, case, message) -> None:
    with pytest.raises(RecordError, match=r"bad\.json: " + message):
        vlc_ds.write_file(tmp_path / "bad.json", [CASES[0], case])
    assert not (tmp_path / "bad.json").exists()


# --------------------------------------------------------------------------------------------- corpus file


def test_tsvlc_corpus_round_trips(tmp_path) -> None:
    path = vlc_ds.write_corpus(tmp_path / "corpus.json", vlc_ds.CORPUS)
    back = vlc_ds.load_corpus(path)
    assert back == vlc_ds.CORPUS and list(back) == list(vlc_ds.CORPUS)
    assert list(back["large"]) == ["vg", "swig", "hake"]
    assert json.loads(path.read_text())["spatial"] == {"vg": ["Relation_spatial_vg"]}


def test_a_twin_corpus_round_trips(tmp_path) -> None:
    corpus = {"color": {"vg": ["Attribute_color_vg"]}, "center": {"vg": ["Object_Location_center_vg_obj",
                                                                         "Object_Location_center_vg_subj"]}}
    back = vlc_ds.load_corpus(vlc_ds.write_corpus(tmp_path / "c.json", corpus))
    assert back == {"color": {"vg": ("Attribute_color_vg",)},
                    "center": {"vg": ("Object_Location_center_vg_obj", "Object_Location_center_vg_subj")}}


@pytest.mark.parametrize(("data", "message"), [
    ([], r"expected a JSON object of category -> dataset -> result keys, got list"),
    ({}, r"expected a JSON object of category -> dataset -> result keys, got an empty object"),
    ({"colour": {"vg": ["a"]}}, r"category 'colour': unknown category \(known: large, medium"),
    ({"color": ["a"]}, r"category 'color': expected a non-empty object of dataset -> result keys"),
    ({"color": {}}, r"category 'color': expected a non-empty object of dataset -> result keys"),
    ({"color": {"vg": []}}, r"category 'color', dataset 'vg': expected a non-empty list of result keys"),
    ({"color": {"vg": "Attribute_color_vg"}}, r"category 'color', dataset 'vg': expected a non-empty list"),
    ({"color": {"vg": ["ok", 3]}}, r"category 'color', dataset 'vg': result key must be a non-empty string, got 3"),
    ({"color": {" ": ["a"]}}, r"category 'color': dataset name must be a non-empty string"),
    ({"color": {"vg": ["a"]}, "size": {"vaw": ["b", "a"]}},
     r"category 'size', dataset 'vaw': result key 'a' already listed under category 'color', dataset 'vg'"),
])
def test_bad_corpus_names_the_file(tmp_path, data, message) -> None:
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps(data))
    with pytest.raises(RecordError, match=r"corpus\.json: " + message):
        vlc_ds.load_corpus(path)
    with pytest.raises(RecordError, match=r"out\.json: "):
        vlc_ds.write_corpus(tmp_path / "out.json", data if isinstance(data, dict) else {})


def test_truncated_corpus_names_the_file(tmp_path) -> None:
    path = tmp_path / "corpus.json"
    path.write_text('{"color": {"vg": ["a"]')
    with pytest.raises(RecordError, match=r"corpus\.json: not valid JSON"):
        vlc_ds.load_corpus(path)
    with pytest.raises(FileNotFoundError, match=r"nowhere\.json: file not found"):
        vlc_ds.load_corpus(tmp_path / "nowhere.json")


# ------------------------------------------------------------------------------------- benchmark + corpus


def _table(rows: list[tuple[str, bool, str, str]]) -> dict[str, pd.DataFrame]:
    files, correct, cats, datasets = zip(*rows, strict=True)
    return {"vlchecklist": pd.DataFrame({"file": files, "correct": correct, "category": cats, "dataset": datasets})}


def test_corpus_from_items_by_hand() -> None:
    corpus = corpus_from_items(["a", "a", "b", "c", "d"], ["color", "color", "color", "spatial", ""],
                               ["vg", "vg", "vaw", "vg", ""])
    assert corpus == {"color": {"vg": ["a"], "vaw": ["b"]}, "spatial": {"vg": ["c"]}}  # d: in no category


def test_aggregate_with_a_declared_corpus_by_hand() -> None:
    # color: vg = mean(a 2/3, b 1/2), vaw = c 1/4 -> color = ((0.6667 + 0.5) / 2 + 0.25) / 2; spatial: d 1/1
    rows = ([("a", True, "color", "vg")] * 2 + [("a", False, "color", "vg")]
            + [("b", True, "color", "vg"), ("b", False, "color", "vg")]
            + [("c", True, "color", "vaw")] + [("c", False, "color", "vaw")] * 3
            + [("d", True, "spatial", "vg")] + [("e", False, "", "")])
    out = aggregate_vlchecklist(_table(rows))
    assert out["vlchecklist/file/a/acc"] == 0.6667 and out["vlchecklist/file/e/acc"] == 0.0
    assert out["vlchecklist/attribute/color"] == pytest.approx(((0.6667 + 0.5) / 2 + 0.25) / 2)
    assert out["vlchecklist/relation/spatial"] == 1.0
    # The declared corpus is the benchmark's composition: its only categories are color and spatial, so every other
    # category is absent (not missing: group_averages' ``absent``), and each group averages the categories it has.
    # Attribute = mean(color) = color, Relation = mean(spatial) = 1.0; the Object groups have no category at all
    # and CE-CLIP's overall needs all 9 leaves (action_a, material, ... are absent), so those are not reported.
    avgs = {k: v for k, v in out.items() if k.endswith("/avg") or k.endswith("/overall")}
    assert avgs == {"vlchecklist/attribute/avg": pytest.approx(((0.6667 + 0.5) / 2 + 0.25) / 2),
                    "vlchecklist/relation/avg": 1.0}


def test_aggregate_with_a_corpus_survives_a_csv_round_trip(tmp_path) -> None:
    rows = [("a", True, "color", "vg"), ("b", False, "color", "vaw"), ("e", True, "", "")]  # "" -> NaN in CSV
    tables = _table(rows)
    tables["vlchecklist"].to_csv(tmp_path / "t.csv", index=False)
    back = {"vlchecklist": pd.read_csv(tmp_path / "t.csv")}
    assert back["vlchecklist"]["category"].isna().any()
    assert aggregate_vlchecklist(back) == aggregate_vlchecklist(tables)
    assert aggregate_vlchecklist(back)["vlchecklist/attribute/color"] == 0.5


def test_aggregate_without_a_corpus_keeps_tsvlc_corpus() -> None:
    df = pd.DataFrame({"file": ["Attribute_color_vg", "Attribute_color_vaw", "a"], "correct": [True, False, True]})
    out = aggregate_vlchecklist({"vlchecklist": df})
    assert out["vlchecklist/attribute/color"] == 0.5 and "vlchecklist/relation/spatial" not in out


def _fixture(tmp_path):
    images = tmp_path / "vg"
    (images / "VG_100K").mkdir(parents=True)
    Image.fromarray(np.zeros((8, 8, 3), dtype=np.uint8)).save(images / "VG_100K" / "1.png")
    ann = vlc_ds.write_file(tmp_path / "color.json", [vlc_ds.VLCheckListCase(0, "VG_100K/1.png", ("red circle",),
                                                                           ("blue circle",))])
    files = {"Attribute_color_vg": {"annotations": str(ann), "images": str(images)},
             "Relation_spatial_vg": {"annotations": str(ann), "images": str(images)}}
    return files


def test_prepare_carries_the_declared_corpus(tmp_path) -> None:
    files = _fixture(tmp_path)
    corpus = vlc_ds.write_corpus(tmp_path / "corpus.json", {"color": {"vg": ["Attribute_color_vg"]}})
    bench = BENCHMARKS.get("vlchecklist")
    meta = bench.prepare({"vlchecklist_files": files, "vlchecklist_corpus": str(corpus)}).meta
    assert meta[["file", "category", "dataset"]].values.tolist() == [["Attribute_color_vg", "color", "vg"],
                                                                     ["Relation_spatial_vg", "", ""]]
    for empty in (None, ""):  # no corpus: TSVLC's, nothing added to the table
        assert "category" not in bench.prepare({"vlchecklist_files": files, "vlchecklist_corpus": empty}).meta


def test_prepare_refuses_a_corpus_file_not_given(tmp_path) -> None:
    files = _fixture(tmp_path)
    corpus = vlc_ds.write_corpus(tmp_path / "corpus.json", {"color": {"vg": ["Attribute_color_vg", "X_vg"]}})
    with pytest.raises(ValueError, match=r"corpus\.json lists result keys missing from vlchecklist_files: X_vg"):
        BENCHMARKS.get("vlchecklist").prepare({"vlchecklist_files": files, "vlchecklist_corpus": str(corpus)})
