"""Real-format loaders and scoring rules of VALSE, VL-CheckList, CC-Neg and Hard Positives (real profile).

Fixtures are hand-built in the released formats (a few records copied from the released files); every broken
fixture must stop with a message naming the file and the record, never a bare KeyError.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from vlcomp.formats import ccneg, hardpos, valse, vlchecklist
from vlcomp.formats.records import RecordError
from vlcomp.metrics.aro import TieRule


def _write(path: Path, obj) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))
    return path


def _drop(rec: dict, **over) -> dict:
    """``rec`` with fields replaced; a value of ``...`` removes the field."""
    out = {**rec, **over}
    return {k: v for k, v in out.items() if v is not ...}


# =========================================================================== VALSE


def _vrec(votes: int = 3, **over) -> dict:
    rec = {"dataset": "SWiG", "original_split": "test", "dataset_idx": "exercising_255.jpg",
           "linguistic_phenomena": "actions", "image_file": "exercising_255.jpg",
           "caption": "A man exercises his torso.", "classes": "man", "classes_foil": "torso",
           "mturk": {"foil": 0, "caption": votes, "other": 3 - votes}, "foil": "A torso exercises for a man."}
    return _drop(rec, **over)


def test_valse_keeps_only_mturk_validated_cases(tmp_path):
    path = _write(tmp_path / "actant-swap.json",
                  {"a_0": _vrec(3), "a_1": _vrec(2), "a_2": _vrec(1), "a_3": _vrec(0, caption="Raw  text ")})
    cases = valse.load_instrument(path)
    assert [c.id for c in cases] == ["a_0", "a_1"] and all(c.valid for c in cases)
    assert cases[0].instrument == "actant-swap" and cases[0].foil == "A torso exercises for a man."
    every = valse.load_instrument(path, valid_only=False)
    assert [c.valid for c in every] == [True, True, False, False] and every[3].caption == "Raw  text "
    assert valse.MIN_CAPTION_VOTES == 2


@pytest.mark.parametrize(("content", "message"), [
    ({"a_0": _vrec(foil=...)}, r"record 'a_0': missing field 'foil'"),
    ({"a_0": _vrec(), "a_1": _vrec(caption=7)}, r"record 'a_1': field 'caption' must be str, got int"),
    ({"a_0": _vrec(mturk=...)}, r"record 'a_0': missing field 'mturk'"),
    ({"a_0": _vrec(mturk={"caption": "3"})}, r"record 'a_0': field 'mturk': field 'caption' must be int, got str"),
    ({"a_0": _vrec(mturk={"caption": True})}, r"record 'a_0': field 'mturk': field 'caption' must be int, got bool"),
    ({"a_0": _vrec(mturk={"caption": 4})}, r"record 'a_0': field 'mturk': field 'caption' must be a vote count"),
    ({"a_0": _vrec(mturk={"caption": 3, "foil": None})}, r"record 'a_0': field 'mturk': field 'foil' must be int"),
    ({"a_0": _vrec(image_file=" ")}, r"record 'a_0': field 'image_file' is an empty caption"),
    ({"a_0": _vrec(caption="")}, r"record 'a_0': field 'caption' is an empty caption"),
    ({"a_0": _vrec(0)}, r"no MTurk-validated case"),
    ({}, r"no cases"),
    ([_vrec()], r"expected a JSON object keyed by foil id, got list"),
])
def test_valse_bad_records(tmp_path, content, message):
    path = _write(tmp_path / "relations.json", content)
    with pytest.raises(RecordError, match=r"relations\.json: " + message):
        valse.load_instrument(path)


def test_valse_duplicate_ids_and_truncated_file(tmp_path):
    one = json.dumps(_vrec())
    (tmp_path / "plurals.json").write_text(f'{{"p_7": {one}, "p_7": {one}}}')
    with pytest.raises(RecordError, match=r"plurals\.json: duplicate key 'p_7'"):
        valse.load_instrument(tmp_path / "plurals.json")
    (tmp_path / "plurals.json").write_text(json.dumps({"p_0": _vrec(), "p_1": _vrec()})[:-25])
    with pytest.raises(RecordError, match=r"plurals\.json: not valid JSON, truncated or corrupt"):
        valse.load_instrument(tmp_path / "plurals.json")
    with pytest.raises(FileNotFoundError, match=r"existence\.json: file not found"):
        valse.load_all(tmp_path)


def test_valse_image_folders_follow_the_evaluator():
    assert valse.image_root_key("existence", "v7w_2349294.jpg") == "visual7w"
    assert valse.image_root_key("foil-it", "COCO_val2014_000000165831.jpg") == "coco_val2014"
    assert valse.image_root_key("coreference-standard", "COCO_train2014_000000000009.jpg") == "coco_train2014"
    assert valse.image_root_key("relations", "COCO_val2017_000000000139.jpg") == "coco_val2017"
    assert valse.image_root_key("coreference-hard", "VisualDialog_val2018_000000284024.jpg") == "visdial_val2018"
    case = valse.ValseCase("x", "actant-swap", "SWiG", "exercising_255.jpg", "a", "b", 3)
    assert case.image_path({"swig": "/img/swig"}) == Path("/img/swig/exercising_255.jpg")
    with pytest.raises(ValueError, match=r"no image folder given for 'swig'"):
        case.image_path({"visual7w": "/v7w"})
    with pytest.raises(ValueError, match="unknown VALSE instrument"):
        valse.image_root_key("nope", "a.jpg")
    assert set(valse.IMAGE_SOURCE) == set(valse.INSTRUMENTS) == {i for f in valse.COLUMNS.values() for i in f}


def test_valse_strict_inequality():
    np.testing.assert_array_equal(valse.correct([0.3, 0.2, 0.1], [0.2, 0.2, 0.4]), [True, False, False])
    assert valse.TIE_RULE is TieRule.TIE_COUNTS_WRONG
    acc = valse.instrument_accuracies({"existence": valse.correct([3, 2, 1, 5], [1, 2, 2, 4])})
    assert acc == {"existence": 0.5}
    with pytest.raises(ValueError, match="1-D of one length"):
        valse.correct([0.1], [0.1, 0.2])
    with pytest.raises(ValueError, match="has no cases"):
        valse.instrument_accuracies({"existence": []})


# CE-CLIP+ row of CE-CLIP Table 1 (ce_clip catalog): 9 columns; counting's three files all set to 67.8.
_CECLIP_PLUS = {"existence": 84.5, "plurals": 79.2, "counting-hard": 67.8, "counting-small-quant": 67.8,
                "counting-adversarial": 67.8, "relations": 76.4, "action-replacement": 83.4,
                "actant-swap": 89.4, "coreference-standard": 56.7, "coreference-hard": 57.8, "foil-it": 94.7}


def test_valse_average_both_conventions_hand_values():
    acc = {k: v / 100 for k, v in _CECLIP_PLUS.items()}
    # 9-column mean = 689.9 / 9 = 76.656 -> printed 76.7 for CE-CLIP+ (catalog §2.3)
    assert valse.average_over_columns(acc) == pytest.approx(6.899 / 9)
    assert round(100 * valse.average_over_columns(acc), 1) == 76.7
    # 11-instrument mean = (689.9 + 2 * 67.8) / 11 = 75.045 (catalog §4.3: "would be ~75.05")
    assert valse.average_over_instruments(acc) == pytest.approx(8.255 / 11)
    # the counting column is the mean of its three files
    acc.update({"counting-hard": 0.6, "counting-small-quant": 0.7, "counting-adversarial": 0.95})
    assert valse.column_accuracies(acc)["counting"] == pytest.approx(0.75)
    assert valse.average_over_columns(acc) == pytest.approx((6.899 - 0.678 + 0.75) / 9)
    assert valse.average_over_instruments(acc) == pytest.approx((6.899 - 0.678 + 0.6 + 0.7 + 0.95) / 11)
    del acc["foil-it"]
    with pytest.raises(ValueError, match="missing instrument accuracies: foil-it"):
        valse.average_over_instruments(acc)


def test_valse_average_loop_parity(rng):
    per = {i: rng.random(int(rng.integers(1, 40))) > 0.4 for i in valse.INSTRUMENTS}
    acc = valse.instrument_accuracies(per)
    naive = {}
    for name, flags in per.items():  # naive loop
        right = 0
        for f in flags:
            right += int(f)
        naive[name] = right / len(flags)
    assert acc == pytest.approx(naive)
    assert valse.average_over_instruments(acc) == pytest.approx(sum(naive.values()) / 11)
    columns = []
    for files in valse.COLUMNS.values():
        columns.append(sum(naive[f] for f in files) / len(files))
    assert valse.average_over_columns(acc) == pytest.approx(sum(columns) / 9)


# =========================================================================== VL-CheckList

# First item of VL-CheckList data/Object/Size/swig_size/swig_destination/swig_destination_small.json.
_SWIG_ITEM = ["milking_22.jpg", {
    "POS": ["an dairymaid milks a cow with a mitt into a cup in a farmyard",
            "an adult female milks a cow with a mitt into a cup in a open air",
            "an woman milks a moo-cow with a manus into a bucket in a exterior"],
    "NEG": ["an dairymaid milks a cow with a paw into a target in a farmyard",
            "an adult female milks a cow with a manus into a Asiatic buffalo in a open air",
            "an woman milks a moo-cow with a hand into a ball in a exterior"]}]


def _vl(image="vg/VG_100K/1.jpg", pos=("a red car",), neg=(" a blue car",)):
    return [image, {"POS": list(pos), "NEG": list(neg)}]


def test_vlchecklist_loader(tmp_path):
    cases = vlchecklist.load_file(_write(tmp_path / "small.json", [_SWIG_ITEM, _vl(), _vl()]))
    assert [c.index for c in cases] == [0, 1, 2] and len(cases[0].pos) == 3
    assert cases[0].positive == _SWIG_ITEM[1]["POS"][0] and cases[0].negative == _SWIG_ITEM[1]["NEG"][0]
    assert cases[1].negative == " a blue car"  # raw: leading space kept
    assert cases[1] == vlchecklist.VLCheckListCase(1, "vg/VG_100K/1.jpg", ("a red car",), (" a blue car",))
    assert vlchecklist.load_file(_write(tmp_path / "swig_place_small.json", [])) == []


@pytest.mark.parametrize(("content", "message"), [
    ('[["a.jpg", {"NEG": ["x"]}]]', r"record 0: missing field 'POS'"),
    ('[["a.jpg", {"POS": ["x"], "NEG": ["y"]}], ["b.jpg", {"POS": ["x"], "NEG": "y"}]]',
     r"record 1: field 'NEG' must be list, got str"),
    ('[["a.jpg", {"POS": [3], "NEG": ["y"]}]]', r"record 0: field 'POS' item 0 must be str, got int"),
    ('[["a.jpg", {"POS": ["x", null], "NEG": ["y"]}]]', r"record 0: field 'POS' item 1 must be str, got NoneType"),
    ('[["a.jpg", {"POS": ["  "], "NEG": ["y"]}]]', r"record 0: field 'POS' item 0 is an empty caption"),
    ('[["a.jpg", {"POS": ["x"], "NEG": []}]]', r"record 0: field 'NEG' is an empty list"),
    ('[["a.jpg", {"POS": ["x"], "NEG": ["y"]}, 5]]', r"record 0: expected \[image_path, .*got a list of 3"),
    ('[{"a.jpg": {"POS": ["x"], "NEG": ["y"]}}]', r"record 0: expected \[image_path, .*got dict"),
    ('[[7, {"POS": ["x"], "NEG": ["y"]}]]', r"record 0: image path must be a non-empty string, got 7"),
    ('[["a.jpg", ["x", "y"]]]', r"record 0: expected a JSON object, got list"),
    ('[["a.jpg", {"POS": ["x"], "POS": ["z"], "NEG": ["y"]}]]', r"record 0: duplicate key 'POS'"),
    ('[["a.jpg", {"POS": ["x"], "NEG": ["y"]}], ["b.jpg", {"POS": ["x"], "NE', r"not valid JSON, truncated"),
    ('{"a.jpg": {"POS": ["x"], "NEG": ["y"]}}', r"expected a JSON list of \[image, \{POS, NEG\}\] items, got dict"),
])
def test_vlchecklist_bad_input(tmp_path, content, message):
    (tmp_path / "color.json").write_text(content)
    with pytest.raises(RecordError, match=r"color\.json: " + message):
        vlchecklist.load_file(tmp_path / "color.json")


def test_vlchecklist_protocol_drops_missing_images_then_keeps_the_first(tmp_path):
    cases = vlchecklist.load_file(_write(tmp_path / "f.json", [_vl(image=f"{i}.jpg") for i in range(6)]))
    kept = vlchecklist.protocol_items(cases, lambda image: image != "1.jpg", max_items=3)
    assert [c.image for c in kept] == ["0.jpg", "2.jpg", "3.jpg"]
    assert vlchecklist.MAX_ITEMS == 1000 and len(vlchecklist.protocol_items(cases)) == 6
    for i in (0, 4):
        (tmp_path / f"{i}.jpg").write_bytes(b"")
    assert [c.image for c in vlchecklist.protocol_items(cases, vlchecklist.exists_under(tmp_path))] == ["0.jpg", "4.jpg"]
    with pytest.raises(ValueError, match="max_items must be >= 1"):
        vlchecklist.protocol_items(cases, max_items=0)


def test_vlchecklist_file_accuracy_first_1000_strict():
    # first 1000 items: 700 right, 100 ties, 200 wrong; items 1000..1199 all right but never scored
    pos = np.concatenate([np.full(700, 0.3), np.full(100, 0.2), np.full(200, 0.1), np.full(200, 0.9)])
    neg = np.full(1200, 0.2)
    assert vlchecklist.file_accuracy(pos, neg) == 0.7
    assert vlchecklist.file_accuracy(pos, neg, max_items=1200) == pytest.approx(900 / 1200)
    assert vlchecklist.file_accuracy([2, 1, 3], [1, 1, 2]) == 0.6667  # rounded to 4 decimals like total_acc
    assert vlchecklist.file_accuracy([2, 1, 3], [1, 1, 2], decimals=None) == pytest.approx(2 / 3)
    assert vlchecklist.TIE_RULE is TieRule.TIE_COUNTS_WRONG
    with pytest.raises(ValueError, match="no items to score"):
        vlchecklist.file_accuracy([], [])


def _file_accs(value=0.5) -> dict[str, float]:
    return {f: value for datasets in vlchecklist.CORPUS.values() for files in datasets.values() for f in files}


def test_vlchecklist_aggregation_hand_values():
    acc = _file_accs()
    acc.update({"Object_Size_large_vg_obj": 0.8, "Object_Size_large_vg_subj": 0.6,  # vg 0.7
                "Object_Size_large_swig_agent": 0.5, "Object_Size_large_swig_destination": 0.6,
                "Object_Size_large_swig_item": 0.7, "Object_Size_large_swig_tool": 0.8,  # swig 0.65
                "Object_Size_large_hake": 0.9,  # hake 0.9
                "Attribute_color_vg": 0.9, "Attribute_color_vaw": 0.7, "Relation_spatial_vg": 0.2})
    cats = vlchecklist.category_scores(acc)
    assert list(cats) == list(vlchecklist.CORPUS) and len(cats) == 13
    assert cats["large"] == pytest.approx((0.7 + 0.65 + 0.9) / 3)  # macro over datasets, not over files
    assert cats["color"] == pytest.approx(0.8) and cats["spatial"] == pytest.approx(0.2)
    groups = vlchecklist.group_averages(cats)
    assert groups["attribute"] == pytest.approx((0.8 + 4 * 0.5) / 5)
    assert groups["relation"] == pytest.approx((0.5 + 0.2) / 2)
    assert groups["object/size"] == pytest.approx((0.75 + 0.5 + 0.5) / 3)
    assert groups["object/location"] == pytest.approx(0.5)
    assert groups["object"] == pytest.approx((0.75 + 5 * 0.5) / 6)
    leaves = [0.5, 0.8, 0.5, 0.5, 0.5, 0.5, (0.75 + 1.0) / 3, 0.5, 0.2]  # CE-CLIP Table 2's 9 columns
    assert groups["overall"] == pytest.approx(sum(leaves) / 9)
    assert "overall" not in vlchecklist.group_averages({"color": 0.5})
    assert vlchecklist.TSVLC_PRINTED_LABELS["action_a"] == "A-Size"  # TSVLC's shifted label
    assert vlchecklist.result_key("Object/Size/large", "vg_obj") == "Object_Size_large_vg_obj"


def test_vlchecklist_group_averages_absent_category():
    """A category the benchmark does not have (the second toy world's Object/Size "small") leaves its groups'
    means over the categories present; a present but unscored one still drops the group."""
    cats = {"large": 0.9, "medium": 0.6, "center": 0.5, "mid": 0.7, "margin": 0.3, "color": 0.8, "material": 0.4,
            "size": 0.6, "state": 0.5, "action_a": 0.7, "action_r": 0.6, "spatial": 0.4}
    assert "object/size" not in vlchecklist.group_averages(cats)  # small is missing and not declared absent
    groups = vlchecklist.group_averages(cats, absent={"small"})
    assert groups["object/size"] == pytest.approx(0.75)
    assert groups["object/location"] == pytest.approx(0.5)
    assert groups["object"] == pytest.approx((0.9 + 0.6 + 0.5 + 0.7 + 0.3) / 5)
    assert groups["overall"] == pytest.approx((0.7 + 0.8 + 0.4 + 0.6 + 0.5 + 0.5 + 0.75 + 0.6 + 0.4) / 9)
    assert "object/size" not in vlchecklist.group_averages(cats, absent={"small", "large", "medium"})


def test_vlchecklist_missing_result_file():
    acc = _file_accs(0.6)
    del acc["Object_Size_small_hake"]
    with pytest.raises(ValueError, match=r"category 'small', dataset 'hake': no accuracy for Object_Size_small_hake"):
        vlchecklist.category_scores(acc)
    cats = vlchecklist.category_scores(acc, missing_as_zero=True)  # the reference: 0 added, count kept
    assert cats["small"] == pytest.approx((0.6 + 0.6 + 0.0) / 3)


def test_vlchecklist_aggregation_loop_parity(rng):
    acc = {f: float(rng.random()) for f in _file_accs()}
    cats = vlchecklist.category_scores(acc)
    for category, datasets in vlchecklist.CORPUS.items():  # naive loop, as TSVLC's EvaluateAllVL
        data_score = []
        for files in datasets.values():
            score = 0.0
            for f in files:
                score += acc[f]
            data_score.append(score / len(files))
        assert cats[category] == pytest.approx(sum(data_score) / len(data_score))
    pos, neg = rng.integers(0, 4, 1500).astype(float), rng.integers(0, 4, 1500).astype(float)
    right = 0
    for p, n in zip(pos[:1000], neg[:1000], strict=True):
        right += int(p > n)
    assert vlchecklist.file_accuracy(pos, neg, decimals=None) == pytest.approx(right / 1000)


# =========================================================================== CC-Neg


def _ann(caption="A city street with colorful billboards", neg="A city street without billboards"):
    return {"json": {"caption": caption, "key": "000001"},
            "sop_data": {"negative-prompt": neg, "sop_chosen_object": "billboards",
                         "sop_decomposition": {"subject": "A city street"}, "exclusion-prompt": "A city street"}}


def _ccneg_data(n=6):
    negs = ["A dog, not on a sofa", "A man without a hat", "No cars on the road", "A bowl with no chopsticks",
            "A car without tires, not parked", "A cat not without a collar"]
    return {"image_paths": [f"/workspace/datasets/cc3m/ccneg_images/x/{i}.jpg" for i in range(n)],
            "annotations": [_ann(f"caption {i}", negs[i % len(negs)]) for i in range(n)],
            "num_ops": {1: [0, 2], 2: [1, 3], 3: [4]}}


def _save(tmp_path, data, name="ccneg_preprocessed.pt") -> Path:
    torch.save(data, tmp_path / name)
    return tmp_path / name


def test_ccneg_loader(tmp_path):
    cases = ccneg.load_ccneg(_save(tmp_path, _ccneg_data()))
    assert [c.k for c in cases] == [1, 2, 1, 2, 3, None]  # record 5 is under no K
    assert cases[0].negated_caption == "A dog, not on a sofa" and cases[0].negated_for_model == "A dog not on a sofa"
    assert [c.words for c in cases] == [("not",), ("without",), (), ("no",), ("not", "without"), ("not", "without")]
    assert cases[1].image_file("/data/cc3m") == Path("/data/cc3m/ccneg_images/x/1.jpg")
    data = _ccneg_data()
    data["num_ops"] = {"1": [0], "2": [1]}  # digit-string keys are accepted
    assert [c.k for c in ccneg.parse_ccneg(data, "mem.pt")][:3] == [1, 2, None]


def _broken(**change):
    data = _ccneg_data()
    for key, value in change.items():
        if key == "ann1":
            data["annotations"][1] = value
        else:
            data[key] = value
    return data


@pytest.mark.parametrize(("data", "message"), [
    (_broken(ann1={"sop_data": _ann()["sop_data"]}), r"record 1: missing field 'json'"),
    (_broken(ann1={"json": {}, "sop_data": _ann()["sop_data"]}), r"record 1: field 'json': missing field 'caption'"),
    (_broken(ann1={"json": {"caption": 5}, "sop_data": _ann()["sop_data"]}),
     r"record 1: field 'json': field 'caption' must be str, got int"),
    (_broken(ann1={"json": {"caption": "a"}, "sop_data": []}), r"record 1: field 'sop_data' must be dict, got list"),
    (_broken(ann1=_ann(caption="   ")), r"record 1: field 'json': field 'caption' is an empty caption"),
    (_broken(ann1=_ann(neg=", ,")), r"record 1: field 'sop_data': field 'negative-prompt' is empty once commas"),
    (_broken(image_paths=["/a.jpg", "/b.jpg", "/a.jpg", "/c.jpg", "/d.jpg", "/e.jpg"]),
     r"record 2: duplicate image path '/a\.jpg' \(also record 0\)"),
    (_broken(image_paths=["/a.jpg", 3, "/c.jpg", "/d.jpg", "/e.jpg", "/f.jpg"]),
     r"record 1: image path must be a non-empty string, got 3"),
    (_broken(image_paths=["/a.jpg"]), r"record 1: 'image_paths' has 1 entries but 'annotations' has 6"),
    (_broken(num_ops={1: [0, 1], 2: [1]}), r"record 1: listed under num_ops K=1 and K=2"),
    (_broken(num_ops={1: [0, 6]}), r"'num_ops'\[1\] lists 6, not a record index in 0\.\.5"),
    (_broken(num_ops={"one": [0]}), r"'num_ops' key 'one' is not a number"),
    (_broken(num_ops=[[0]]), r"'num_ops' must be a dict"),
    ({"image_paths": [], "annotations": []}, r"missing key 'num_ops'"),
    ({"image_paths": [], "annotations": [], "num_ops": {}}, r"no records"),
    ([1, 2], r"expected a dict with image_paths"),
])
def test_ccneg_bad_input(tmp_path, data, message):
    path = _save(tmp_path, data)
    with pytest.raises(RecordError, match=r"ccneg_preprocessed\.pt: " + message):
        ccneg.load_ccneg(path)


def test_ccneg_truncated_missing_and_duplicates_allowed(tmp_path):
    path = _save(tmp_path, _ccneg_data())
    path.write_bytes(path.read_bytes()[:-200])
    with pytest.raises(RecordError, match=r"ccneg_preprocessed\.pt: not a readable torch file, truncated or corrupt"):
        ccneg.load_ccneg(path)
    (tmp_path / "text.pt").write_text("not a torch file")
    with pytest.raises(RecordError, match=r"text\.pt: not a readable torch file"):
        ccneg.load_ccneg(tmp_path / "text.pt")
    with pytest.raises(FileNotFoundError, match=r"none\.pt: file not found"):
        ccneg.load_ccneg(tmp_path / "none.pt")
    data = _broken(image_paths=["/a.jpg"] * 6)
    assert len(ccneg.parse_ccneg(data, "mem.pt", unique_images=False)) == 6
    path = _save(tmp_path, {**_ccneg_data(), "root": Path("/x")}, "pickled.pt")  # a non-container object
    with pytest.raises(RecordError, match=r"pickled\.pt: not a readable torch file.*UnpicklingError"):
        ccneg.load_ccneg(path)
    assert len(ccneg.load_ccneg(path, trust_pickle=True)) == 6


def test_ccneg_eval_split_is_the_last_records(tmp_path):
    cases = ccneg.load_ccneg(_save(tmp_path, _ccneg_data()))
    assert [c.index for c in ccneg.eval_split(cases, n_eval=4)] == [2, 3, 4, 5]
    assert ccneg.EVAL_SIZE == 40_000
    with pytest.raises(ValueError, match="fewer than the 40000 evaluation samples"):
        ccneg.eval_split(cases)


def test_ccneg_tie_rules():
    pos, neg = [0.3, 0.2, 0.1], [0.2, 0.2, 0.4]
    np.testing.assert_array_equal(ccneg.correct(pos, neg), [True, False, False])  # paper: tie wrong
    np.testing.assert_array_equal(ccneg.correct(pos, neg, ccneg.CODE_TIE_RULE), [True, True, False])
    assert ccneg.PAPER_TIE_RULE is TieRule.TIE_COUNTS_WRONG
    # the code's argmax over [c, c'] (true caption first) == TIE_COUNTS_RIGHT
    argmax = np.argmax(np.stack([pos, neg], axis=1), axis=1) == 0
    np.testing.assert_array_equal(ccneg.correct(pos, neg, "tie_counts_right"), argmax)


def test_ccneg_accuracies_hand_values(tmp_path):
    cases = ccneg.load_ccneg(_save(tmp_path, _ccneg_data()))
    # k:     1     2     1     2     3     None
    # words: not   with  -     no    not+w not+w
    c = ccneg.correct([0.5, 0.1, 0.5, 0.5, 0.2, 0.3], [0.4, 0.2, 0.6, 0.1, 0.2, 0.1])  # T F F T F(tie) T
    acc = ccneg.accuracies(c, cases)
    assert acc == pytest.approx({"overall": 3 / 6, "k/1": 1 / 2, "k/2": 1 / 2, "k/3": 0.0,
                                 "word/no": 1.0, "word/no/k/2": 1.0,
                                 "word/not": 2 / 3, "word/not/k/1": 1.0, "word/not/k/3": 0.0,
                                 "word/without": 1 / 3, "word/without/k/2": 0.0, "word/without/k/3": 0.0})
    sizes = ccneg.subset_sizes(cases)
    assert sizes["overall"] == 6 and sizes["k/1"] == 2 and sizes["word/not"] == 3 and sizes["word/no"] == 1
    with pytest.raises(ValueError, match="one entry per case"):
        ccneg.accuracies(c[:3], cases)


def test_ccneg_accuracies_loop_parity(rng):
    words = ["no", "not", "without", "nothing", "knot"]
    cases = [ccneg.CCNegCase(i, f"/{i}.jpg", "c", " ".join(rng.choice(words, 3)), int(rng.integers(1, 4)) if i % 7
                             else None) for i in range(300)]
    c = ccneg.correct(rng.integers(0, 3, 300), rng.integers(0, 3, 300))
    acc = ccneg.accuracies(c, cases)
    groups: dict[str, list[bool]] = {}
    for case, ok in zip(cases, c, strict=True):  # naive loop over the reference's subset rule
        keys = ["overall"] + ([f"k/{case.k}"] if case.k is not None else [])
        for w in ("no", "not", "without"):
            if " " + w + " " in " " + case.negated_caption + " ":
                keys += [f"word/{w}"] + ([f"word/{w}/k/{case.k}"] if case.k is not None else [])
        for key in keys:
            groups.setdefault(key, []).append(bool(ok))
    assert acc == pytest.approx({k: sum(v) / len(v) for k, v in groups.items()})
    assert ccneg.subset_sizes(cases) == {k: len(v) for k, v in groups.items()}


# =========================================================================== Hard Positives


def _hp(image_id="2401814", true="walking elephant", false="jumping elephant", image="data/VG_100K_2/2401814.jpg"):
    return _drop({"image_id": image_id, "true_caption": true, "false_caption": false, "image_path": image})


_DATA_ROWS = [_hp(), _hp(false="sitting elephant"),
              _hp("2347085", "walking woman", "crouching woman", "data/VG_100K/2347085.jpg"),
              _hp("2347085", "walking woman", "crouching woman", "data/VG_100K/2347085.jpg")]  # released duplicate
_SWAPPED_ROWS = [_hp(true="strolling elephant"), _hp(true="strolling elephant", false="sitting elephant"),
                 _hp("2347085", "strolling woman", "crouching woman", "data/VG_100K/2347085.jpg"),
                 _hp("2347085", "strolling woman", "crouching woman", "data/VG_100K/2347085.jpg")]


def _replace_pair(tmp_path, data_rows=_DATA_ROWS, swapped_rows=_SWAPPED_ROWS) -> tuple[Path, Path]:
    name = "vl_checklist_attributes.json"
    return (_write(tmp_path / "data" / name, data_rows), _write(tmp_path / "swapped_data" / name, swapped_rows))


def test_replace_loader_pairs_rows(tmp_path):
    cases = hardpos.load_replace(*_replace_pair(tmp_path))
    assert len(cases) == 4 and cases[2] == cases[3].__class__(2, "data/VG_100K/2347085.jpg", "walking woman",
                                                               "strolling woman", "crouching woman", "2347085")
    assert (cases[0].caption, cases[0].positive, cases[0].negative) == ("walking elephant", "strolling elephant",
                                                                        "jumping elephant")
    assert cases[3].index == 3  # exact duplicate rows are kept, as the reference scores them
    assert hardpos.load_benchmark(tmp_path, "replace_att") == cases
    with pytest.raises(ValueError, match="unknown benchmark 'replace_obj'"):
        hardpos.load_benchmark(tmp_path, "replace_obj")


@pytest.mark.parametrize(("rows", "message"), [
    ([_hp(), _hp(false=...)], r"record 1: missing field 'false_caption'"),
    ([_hp(image_id=["2401814"])], r"record 0: field 'image_id' must be str or int, got list"),
    ([_hp(true=3)], r"record 0: field 'true_caption' must be str, got int"),
    ([_hp(true=" ")], r"record 0: field 'true_caption' is an empty caption"),
    ([_hp(image_id="")], r"record 0: field 'image_id' is empty"),
    ([], r"no cases"),
    ({"0": _hp()}, r"expected a JSON list of cases, got dict"),
])
def test_replace_bad_records(tmp_path, rows, message):
    data, swapped = _replace_pair(tmp_path, swapped_rows=rows)
    with pytest.raises(RecordError, match=r"swapped_data/vl_checklist_attributes\.json: " + message):
        hardpos.load_replace(data, swapped)


def test_replace_truncated_and_duplicate_key(tmp_path):
    data, swapped = _replace_pair(tmp_path)
    data.write_text(json.dumps(_DATA_ROWS)[:-40])
    with pytest.raises(RecordError, match=r"data/vl_checklist_attributes\.json: not valid JSON, truncated"):
        hardpos.load_replace(data, swapped)
    data.write_text('[{"image_id": "1", "image_id": "2", "true_caption": "a", "false_caption": "b", '
                    '"image_path": "x.jpg"}]')
    with pytest.raises(RecordError, match=r"data/vl_checklist_attributes\.json: record 0: duplicate key 'image_id'"):
        hardpos.load_replace(data, swapped)


@pytest.mark.parametrize(("swapped_rows", "message"), [
    (_SWAPPED_ROWS[:3], r"data/vl_checklist_attributes\.json: record 3: no aligned row in .*swapped_data"),
    (_SWAPPED_ROWS + [_hp()], r"swapped_data/vl_checklist_attributes\.json: record 4: no aligned row in .*data"),
    (_SWAPPED_ROWS[:1] + [_hp(true="strolling elephant", false="sitting elephant", image="data/VG_100K/9.jpg")]
     + _SWAPPED_ROWS[2:], r"swapped_data/vl_checklist_attributes\.json: record 1: image_path 'data/VG_100K/9\.jpg' "
                          r"differs from image_path 'data/VG_100K_2/2401814\.jpg' of .*data/vl_checklist_attributes"
                          r"\.json: record 1"),
    (_SWAPPED_ROWS[:2] + [_hp("1", "strolling woman", "crouching woman", "data/VG_100K/2347085.jpg")]
     + _SWAPPED_ROWS[3:], r"swapped_data/.*: record 2: image_id '1' differs from image_id '2347085'"),
    (_SWAPPED_ROWS[:3] + [_hp("2347085", "strolling woman", "lying woman", "data/VG_100K/2347085.jpg")],
     r"swapped_data/.*: record 3: false_caption 'lying woman' differs from false_caption 'crouching woman'"),
])
def test_replace_misaligned_pair_files(tmp_path, swapped_rows, message):
    with pytest.raises(RecordError, match=message):
        hardpos.load_replace(*_replace_pair(tmp_path, swapped_rows=swapped_rows))


def _vga(true="the crouched cat and the open door", false="the open cat and the crouched door", **over):
    rec = {"image_path": "2315375.jpg", "bbox_x": 1, "bbox_y": 2, "bbox_w": 5, "bbox_h": 4,
           "true_caption": true, "false_caption": false, "attributes": ["crouched", "open"]}
    return _drop(rec, **over)


def _swap_pair(tmp_path, swapped_rows=None):
    name = "visual_genome_attribution.json"
    swapped_rows = swapped_rows or [_vga("the open door and the crouched cat"), _vga("the white sign and the red car",
                                                                                    "the red sign and the white car")]
    return (_write(tmp_path / "data" / name, [_vga(), _vga("the red sign and the white car",
                                                            "the red sign and the white car")]),
            _write(tmp_path / "swapped_data" / name, swapped_rows))


def test_swap_loader_and_crop(tmp_path):
    cases = hardpos.load_swap(*_swap_pair(tmp_path))
    assert cases[0].positive == "the open door and the crouched cat" and cases[0].box == (1, 2, 5, 4)
    assert cases[0].caption == "the crouched cat and the open door" and cases[0].image_id is None
    assert hardpos.load_benchmark(tmp_path, "swap") == cases
    img = np.zeros((10, 20, 3), dtype=np.uint8)
    img[2:6, 1:6] = 255
    Image.fromarray(img).save(tmp_path / "2315375.jpg", quality=100)
    crop = cases[0].open_image(tmp_path, "swap.json")
    assert crop.size == (5, 4) and np.asarray(crop).mean() > 200


@pytest.mark.parametrize(("swapped_rows", "message"), [
    ([_vga("the open door and the crouched cat")], r"data/visual_genome_attribution\.json: record 1: no aligned row"),
    ([_vga("x"), _vga("y", "the red sign and the white car", bbox_w=6)],
     r"swapped_data/visual_genome_attribution\.json: record 1: box \(1, 2, 6, 4\) differs from box \(1, 2, 5, 4\)"),
    ([_vga("x", image_path="other.jpg"), _vga("y")], r"swapped_data/.*: record 0: image_path 'other\.jpg' differs"),
    ([_vga("x"), _vga("y", bbox_h=...)], r"swapped_data/visual_genome_attribution\.json: record 1: missing field 'bbox_h'"),
])
def test_swap_bad_and_misaligned(tmp_path, swapped_rows, message):
    with pytest.raises(RecordError, match=message):
        hardpos.load_swap(*_swap_pair(tmp_path, swapped_rows))


def test_replace_open_image_whole(tmp_path):
    (case,) = hardpos.load_replace(*_replace_pair(tmp_path, _DATA_ROWS[:1], _SWAPPED_ROWS[:1]))
    with pytest.raises(FileNotFoundError, match=r"d\.json: record 0: image .*2401814\.jpg not found"):
        case.open_image(tmp_path, "d.json")
    (tmp_path / "data" / "VG_100K_2").mkdir(parents=True)
    Image.new("RGB", (7, 3)).save(tmp_path / "data" / "VG_100K_2" / "2401814.jpg")
    assert case.open_image(tmp_path).size == (7, 3)


# scores per case: (s_c, s_n, s_p)
_HP_SCORES = np.array([
    [0.3, 0.1, 0.2],  # c, c_p > c_n: orig, aug
    [0.3, 0.2, 0.1],  # c > c_n > c_p: orig, brittle
    [0.1, 0.2, 0.3],  # c_p > c_n > c: brittle
    [0.1, 0.3, 0.2],  # c_n above both
    [0.2, 0.2, 0.3],  # tie c = c_n: fails everything
    [0.3, 0.2, 0.2],  # tie c_p = c_n: orig only
])


def test_hardpos_metrics_hand_values():
    s_c, s_n, s_p = _HP_SCORES.T
    m = hardpos.metrics(s_c, s_n, s_p)
    assert m == pytest.approx({"orig": 3 / 6, "aug": 1 / 6, "brittleness": 2 / 6, "delta": -2 / 6, "n": 6})
    assert hardpos.reference_counts(s_c, s_n, s_p) == {"aug": 1, "c>cn>cp": 1, "cp>cn>c": 1, "cn_above_both": 1,
                                                       "ties": 2}
    # Orig uses the data/ pass; Aug and Brittleness the swapped_data/ pass of c_n (run_eval.py)
    m2 = hardpos.metrics([0.3], [0.1], [0.2], s_n_swapped=[0.25])
    assert (m2["orig"], m2["aug"], m2["brittleness"]) == (1.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="1-D of one length"):
        hardpos.metrics([0.1, 0.2], [0.1], [0.1])


def test_hardpos_replace_is_pooled():
    # CLIP ViT-B/32 (hard_positives catalog): relations 57.6 (16,868), attributes 68.1 (10,575) -> REPLACE 61.6
    att = {"orig": 0.681, "aug": 0.5, "brittleness": 0.2, "delta": -0.181, "n": 10_575}
    rel = {"orig": 0.576, "aug": 0.4, "brittleness": 0.25, "delta": -0.176, "n": 16_868}
    out = hardpos.pooled({"attributes": att, "relations": rel})
    assert out["orig"] == pytest.approx((0.576 * 16_868 + 0.681 * 10_575) / 27_443) and round(100 * out["orig"], 1) == 61.6
    assert out["n"] == 27_443 and out["delta"] == pytest.approx(out["aug"] - out["orig"])
    assert hardpos.SIZES["replace_att"] + hardpos.SIZES["replace_rel"] == 27_443
    with pytest.raises(ValueError, match="nothing to pool"):
        hardpos.pooled([])


def test_hardpos_metrics_loop_parity(rng):
    s_c, s_n, s_p, s_n2 = (rng.integers(0, 4, 500).astype(float) for _ in range(4))  # many ties
    m = hardpos.metrics(s_c, s_n, s_p, s_n_swapped=s_n2)
    orig = aug = brittle = 0
    for c, n, p, n2 in zip(s_c, s_n, s_p, s_n2, strict=True):  # naive loop, paper Eq. 1-2
        orig += c > n
        aug += c > n2 and p > n2
        brittle += (c > n2 > p) or (p > n2 > c)
    assert (m["orig"], m["aug"], m["brittleness"]) == pytest.approx((orig / 500, aug / 500, brittle / 500))
    pooled = hardpos.pooled([hardpos.metrics(s_c[:200], s_n[:200], s_p[:200], s_n2[:200]),
                             hardpos.metrics(s_c[200:], s_n[200:], s_p[200:], s_n2[200:])])
    assert pooled == pytest.approx(m)
    # with no ties: Aug + Brittleness + P(c_n above both) = 1 (catalog identity)
    c, n, p = rng.random((3, 400))
    m, counts = hardpos.metrics(c, n, p), hardpos.reference_counts(c, n, p)
    assert m["aug"] + m["brittleness"] + counts["cn_above_both"] / 400 == pytest.approx(1.0)
    assert m["orig"] - m["aug"] == pytest.approx(counts["c>cn>cp"] / 400)
