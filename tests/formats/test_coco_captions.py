"""COCO's official captions files (vlcomp.formats.coco_captions) and the real world's ``format: coco_captions``
split (vlcomp.profiles.real.world): the reader on a hand-written 3-image, 7-caption file (tests/fixtures/
coco_captions), the split index and its annotation-order sidecar (each caption of the file found again at its
position), every bad-input error naming the file and record, and the real COCO file when one is in
../shared/real_samples (skipped otherwise)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from PIL import Image

from vlcomp.formats.coco_captions import (
    ORDER_FILE,
    AnnotationOrder,
    flat_annotation_index,
    read_annotation_order,
    read_coco_captions,
)
from vlcomp.formats.records import RecordError
from vlcomp.profiles.real.world import CAPTION_FORMATS, PaperSplitSpec, index_world, real_world_configs
from vlcomp.world import Split

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "coco_captions"
CAPTIONS = FIXTURES / "captions_train2017_mini.json"
#: The fixture's images in order of their first caption, and each image's annotation positions (in file order).
EXPECTED = [("000000000009.jpg", 9, [0, 2, 5]), ("000000000025.jpg", 25, [1, 4]), ("000000000030.jpg", 30, [3, 6])]


def fixture_data() -> dict:
    return json.loads(CAPTIONS.read_text())


def write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def image_folder(root: Path, names) -> Path:
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (6, 4), (10, 20, 30)).save(root / name, format="PNG")
    return root


def index_fixture(tmp_path: Path, annotations: Path = CAPTIONS, name: str = "coco2017_train") -> Path:
    images = image_folder(tmp_path / "train2017", [f for f, _, _ in EXPECTED])
    out = tmp_path / "world"
    index_world({"image_size": 4, "splits": {name: {"annotations": str(annotations), "images": str(images),
                                                    "format": "coco_captions"}}}, out)
    return out / name


# ------------------------------------------------------------------------------------------------- the reader


def test_reads_images_in_first_caption_order_captions_in_file_order() -> None:
    anns = fixture_data()["annotations"]
    records = read_coco_captions(CAPTIONS)
    assert [(r["image"], r["image_id"], r["annotation_index"]) for r in records] == EXPECTED
    for r in records:
        assert r["caption"] == [anns[i]["caption"].strip() for i in r["annotation_index"]]
        assert all(anns[i]["image_id"] == r["image_id"] for i in r["annotation_index"])
    assert records[0]["caption"] == ["A lunch tray holds broccoli and bread.", "A meal served in bright plastic boxes.",
                                     "containers filled with different kinds of food"]
    assert records[1]["caption"][1] == "A giraffe standing next to a tree"  # " A giraffe ... tree": leading space
    assert records[2]["caption"][0] == "A white vase with pink and red flowers."  # trailing space
    # flat caption c of the split (image by image) <- annotation position flat[c] of the file
    assert flat_annotation_index(records) == [0, 2, 5, 1, 4, 3, 6]
    assert sorted(flat_annotation_index(records)) == list(range(len(anns)))  # a permutation: every caption once


def test_only_the_ends_of_a_caption_are_cleaned(tmp_path) -> None:
    data = fixture_data()
    data["annotations"][1]["caption"] = "\tA giraffe  eating\nleaves, from a TALL tree!  \n"
    got = read_coco_captions(write(tmp_path / "c.json", data))
    assert got[1]["caption"][0] == "A giraffe  eating\nleaves, from a TALL tree!"  # inner spaces, newline, case kept


def test_an_image_without_captions_is_left_out(tmp_path) -> None:
    data = fixture_data()
    data["images"].append({"id": 77, "file_name": "000000000077.jpg", "height": 1, "width": 1})
    got = read_coco_captions(write(tmp_path / "c.json", data))
    assert [r["image"] for r in got] == [f for f, _, _ in EXPECTED]


def _drop(key: str, i: int, field: str):
    def edit(d):
        del d[key][i][field]
    return edit


def _set(key: str, i: int, field: str, value):
    def edit(d):
        d[key][i][field] = value
    return edit


@pytest.mark.parametrize("edit,message", [
    (lambda d: d.pop("annotations"), r"missing top-level field 'annotations'"),
    (lambda d: d.pop("images"), r"missing top-level field 'images'"),
    (lambda d: d.__setitem__("annotations", {}), r"top-level field 'annotations' must be a list, got dict"),
    (lambda d: d.__setitem__("annotations", []), r"no captions \(empty 'annotations' list\)"),
    (_drop("annotations", 3, "caption"), r"record annotations\[3\] \(id 1000\): missing field 'caption'"),
    (_drop("annotations", 4, "image_id"), r"record annotations\[4\] \(id 127\): missing field 'image_id'"),
    (_drop("annotations", 0, "id"), r"record annotations\[0\]: missing field 'id'"),
    (_drop("images", 1, "id"), r"record images\[1\]: missing field 'id'"),
    (_drop("images", 2, "file_name"), r"record images\[2\]: missing field 'file_name'"),
    (_set("annotations", 4, "image_id", 26),
     r"record annotations\[4\] \(id 127\): image_id 26 is not in the file's 'images' list"),
    (_set("annotations", 5, "image_id", "9"), r"record annotations\[5\] \(id 126\): field 'image_id' must be int, got str"),
    (_set("annotations", 2, "id", True), r"record annotations\[2\]: field 'id' must be int, got bool"),
    (_set("annotations", 6, "caption", " \n"), r"record annotations\[6\] \(id 1001\): field 'caption' is an empty caption"),
    (_set("annotations", 6, "caption", ["a", "b"]), r"record annotations\[6\] \(id 1001\): field 'caption' must be str"),
    (_set("annotations", 6, "id", 48), r"record annotations\[6\] \(id 48\): annotation id 48 repeats annotations\[0\]"),
    (_set("images", 2, "id", 9), r"record images\[2\]: image id 9 repeats images\[1\]"),
    (_set("images", 2, "file_name", "000000000009.jpg"),
     r"record images\[2\] \(id 25\): file_name '000000000009.jpg' repeats images\[1\]"),
    (_set("images", 0, "file_name", "000000000030.jpg "), r"record images\[0\] \(id 30\): field 'file_name'"),
    (lambda d: d["annotations"].__setitem__(2, "a caption"), r"record annotations\[2\]: expected a JSON object"),
])
def test_bad_input_names_the_file_and_record(tmp_path, edit, message) -> None:
    data = copy.deepcopy(fixture_data())
    edit(data)
    path = write(tmp_path / "captions_train2017.json", data)
    with pytest.raises(RecordError, match=message) as e:
        read_coco_captions(path)
    assert str(e.value).startswith(f"{path}: ")


@pytest.mark.parametrize("text,message", [
    ('[{"image_id": 1, "caption": "x"}]', r"expected a JSON object with 'images' and 'annotations'.*got list"),
    ('{"images": [], "annotations": [', r"not valid JSON"),
    ('{"images": [], "annotations": [], "images": []}', r"duplicate key 'images'"),
])
def test_bad_file_names_the_file(tmp_path, text, message) -> None:
    path = write(tmp_path / "captions_train2017.json", text)
    with pytest.raises(RecordError, match=message) as e:
        read_coco_captions(path)
    assert str(path) in str(e.value)


def test_missing_file_names_it(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="nope.json: COCO captions file not found"):
        read_coco_captions(tmp_path / "nope.json")


# -------------------------------------------------------------------------------------- the real world's split


def test_registered_as_a_world_format() -> None:
    assert CAPTION_FORMATS["coco_captions"] is read_coco_captions
    _, specs = real_world_configs({"splits": {"coco2017_train": {
        "annotations": "$VLCOMP_DATA_UNSET_X/coco/annotations/captions_train2017.json",
        "images": "/d/coco/train2017", "format": "coco_captions"}}})
    assert specs["coco2017_train"].format == "coco_captions"
    with pytest.raises(ValueError, match="format='coco': must be one of karpathy, caption_tsv, coco_captions"):
        PaperSplitSpec("a.json", "i", format="coco")


def test_index_writes_captions_index_and_the_annotation_order(tmp_path) -> None:
    split_dir = index_fixture(tmp_path)
    anns = fixture_data()["annotations"]
    captions = json.loads((split_dir / "captions.json").read_text())
    assert captions == [{"image": f, "caption": [anns[i]["caption"].strip() for i in ix]} for f, _, ix in EXPECTED]
    index = json.loads((split_dir / "index.json").read_text())
    assert index["annotations_format"] == "coco_captions" and index["images"] == [f for f, _, _ in EXPECTED]
    assert index["image_root"] == str((tmp_path / "train2017").resolve())
    side = json.loads((split_dir / ORDER_FILE).read_text())
    assert side["annotation_index"] == [ix for _, _, ix in EXPECTED] and side["n_annotations"] == 7
    assert side["annotations"] == index["annotations"] == str(CAPTIONS.resolve())
    assert side["annotations_sha256"] == index["annotations_sha256"]

    split = Split(tmp_path / "world", "coco2017_train")
    assert split.is_indexed and split.captions() == [c["caption"] for c in captions]
    order = read_annotation_order(split.dir, split.captions())
    assert isinstance(order, AnnotationOrder) and order.flat == (0, 2, 5, 1, 4, 3, 6) and order.n_annotations == 7
    # "the i-th caption of the file" is found again as (image, caption) of the split, for every i
    flat = [(r["image"], c) for r in captions for c in r["caption"]]
    files = {im["id"]: im["file_name"] for im in fixture_data()["images"]}
    for c, p in enumerate(order.flat):
        assert flat[c] == (files[anns[p]["image_id"]], anns[p]["caption"].strip())
    # a per-annotation file in the file's order, aligned to the split's flat order
    assert order.align([f"line {i}" for i in range(7)]) == [f"line {p}" for p in (0, 2, 5, 1, 4, 3, 6)]
    with pytest.raises(ValueError, match=r"6 lines for the 7 annotations of .*captions_train2017_mini.json"):
        order.align(["x"] * 6)


def test_other_formats_write_no_sidecar_and_remove_a_stale_one(tmp_path) -> None:
    split_dir = index_fixture(tmp_path, name="tr")
    assert (split_dir / ORDER_FILE).exists()
    karpathy = write(tmp_path / "k.json", [{"image": "000000000009.jpg", "caption": "a tray of food"}])
    index_world({"image_size": 4, "splits": {"tr": {"annotations": str(karpathy),
                                                    "images": str(tmp_path / "train2017")}}}, tmp_path / "world")
    assert not (split_dir / ORDER_FILE).exists()
    assert json.loads((split_dir / "captions.json").read_text()) == [
        {"image": "000000000009.jpg", "caption": ["a tray of food"]}]  # the Karpathy records, unchanged
    assert read_annotation_order(split_dir, [["a tray of food"]]) is None


def test_a_missing_image_fails_the_index(tmp_path) -> None:
    images = image_folder(tmp_path / "train2017", ["000000000009.jpg", "000000000030.jpg"])
    with pytest.raises(FileNotFoundError, match=r"1 of 3 images of split 'c'.*000000000025.jpg"):
        index_world({"splits": {"c": {"annotations": str(CAPTIONS), "images": str(images),
                                      "format": "coco_captions"}}}, tmp_path / "world")


def _rewrite(path: Path, **changes) -> None:
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("changes,message", [
    ({"annotation_index": [[0, 2, 5], [1, 4, 3], [6]]}, r"does not have the shape of .*captions.json"),
    ({"annotation_index": [[0, 2, 5], [1, 4], [3, 3]]}, r"an annotation position repeats"),
    ({"annotation_index": [[0, 2, 5], [1, 4], [3, 7]]}, r"annotation position 7 is not an int in \[0, 7\)"),
    ({"annotations_sha256": "0" * 64}, r"written from another annotation file than .*index.json"),
    ({"format": "other/1"}, r"not an annotation-order file \(format 'other/1'"),
    ({"n_annotations": 0}, r"n_annotations=0"),
])
def test_a_stale_or_broken_sidecar_is_an_error_naming_it(tmp_path, changes, message) -> None:
    split_dir = index_fixture(tmp_path)
    _rewrite(split_dir / ORDER_FILE, **changes)
    captions = Split(tmp_path / "world", "coco2017_train").captions()
    with pytest.raises(ValueError, match=message) as e:
        read_annotation_order(split_dir, captions)
    assert str(split_dir / ORDER_FILE) in str(e.value)


# ------------------------------------------------------------------------------------------ real COCO, if any

#: The official COCO 2017 captions files: (images, captions) as released (train2017's 591,753 captions are the
#: Hard Positives paper's count).
REAL_COUNTS = {"captions_train2017.json": (118_287, 591_753), "captions_val2017.json": (5_000, 25_014)}


@pytest.mark.parametrize("name", sorted(REAL_COUNTS))
def test_real_coco_captions_file(real_samples, name) -> None:
    path = real_samples / name
    if not path.is_file():
        pytest.skip(f"{path} not present (a COCO captions file from the official annotations_trainval2017.zip)")
    records = read_coco_captions(path)
    n_images, n_captions = REAL_COUNTS[name]
    flat = flat_annotation_index(records)
    assert len(records) == n_images and len(flat) == n_captions
    assert sorted(flat) == list(range(n_captions))
    data = json.loads(path.read_text(encoding="utf-8"))
    anns, files = data["annotations"], {im["id"]: im["file_name"] for im in data["images"]}
    pairs = [(r["image"], c) for r in records for c in r["caption"]]
    for c in range(0, n_captions, max(1, n_captions // 2000)):  # every caption found again at its file position
        p = flat[c]
        assert pairs[c] == (files[anns[p]["image_id"]], anns[p]["caption"].strip())
