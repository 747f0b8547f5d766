"""Real-format loaders (real profile): real files where we have them, and broken fixtures for every loader.

Each broken fixture must stop with a message naming the file and the record, never a bare KeyError.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vlcomp.formats.aro import CORRECT_OPTION, load_exclusions, load_vg
from vlcomp.formats.karpathy import load_karpathy
from vlcomp.formats.records import RecordError, read_json_strict
from vlcomp.formats.sugarcrepe import GROUPS, correct, group_accuracies, load_all, load_category

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "real_samples"
needs_real = pytest.mark.skipif(not REAL.exists(), reason=f"real samples not found at {REAL}")


def _write(path: Path, obj) -> Path:
    path.write_text(json.dumps(obj))
    return path


# --------------------------------------------------------------------------- real files


@needs_real
def test_sugarcrepe_real_swap_obj_keeps_noncontiguous_ids():
    cases = load_category(REAL / "sugarcrepe_swap_obj.json")
    ids = [c.id for c in cases]
    assert len(cases) == 245 and "108" not in ids and ids[:2] == ["0", "1"] and "109" in ids
    assert len(set(ids)) == 245
    assert all(c.filename.endswith(".jpg") and c.caption.strip() and c.negative_caption.strip() for c in cases)


@needs_real
def test_karpathy_real_coco_test():
    raw = load_karpathy(REAL / "coco_karpathy_test.json", clean=False)
    clean = load_karpathy(REAL / "coco_karpathy_test.json")
    assert len(raw) == 5000 and sum(len(r["caption"]) for r in raw) == 25010
    assert all(c == c.lower() and "." not in c and len(c.split(" ")) <= 30 for r in clean for c in r["caption"])
    assert [r["image"] for r in raw] == [r["image"] for r in clean]


# --------------------------------------------------------------------------- ARO VG files


def _vgr(**over):
    rec = {"image_path": "a.jpg", "bbox_x": 1, "bbox_y": 2, "bbox_w": 5, "bbox_h": 4,
           "true_caption": "the cat is on the mat", "false_caption": "the mat is on the cat", "relation_name": "on"}
    rec.update(over)
    return {k: v for k, v in rec.items() if v is not ...}


def test_load_vg_relation_and_attribution(tmp_path):
    cases = load_vg(_write(tmp_path / "r.json", [_vgr(), _vgr(relation_name="near", extra_key=1)]), "relation")
    assert [c.group for c in cases] == ["on", "near"]
    assert cases[0].caption_options[CORRECT_OPTION] == "the cat is on the mat"
    assert cases[0].box == (1, 2, 5, 4)
    rec = {**_vgr(relation_name=...), "attributes": ["white", "paved"]}
    (case,) = load_vg(_write(tmp_path / "a.json", [rec]), "attribution")
    assert case.group == "white_paved" and case.attributes == ("white", "paved")


@pytest.mark.parametrize(("records", "message"), [
    ([_vgr(true_caption=...)], r"r\.json: record 0: missing field 'true_caption'"),
    ([_vgr(), _vgr(bbox_w="5")], r"r\.json: record 1: field 'bbox_w' must be int or float, got str"),
    ([_vgr(bbox_x=True)], r"record 0: field 'bbox_x' must be int or float, got bool"),
    ([_vgr(false_caption="   ")], r"record 0: field 'false_caption' is an empty caption"),
    ([_vgr(bbox_h=0)], r"record 0: field 'bbox_h' must be > 0"),
    ([_vgr(bbox_y=-3)], r"record 0: field 'bbox_y' must be >= 0"),
    ([_vgr(bbox_x=float("nan"))], r"record 0: field 'bbox_x' must be finite"),
    ([["not", "an", "object"]], r"record 0: expected a JSON object, got list"),
    ({"0": _vgr()}, r"expected a JSON list of cases, got dict"),
    ([], r"no cases"),
])
def test_load_vg_bad_records(tmp_path, records, message):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(records).replace("NaN", "NaN"))
    with pytest.raises(RecordError, match=message):
        load_vg(path, "relation")


def test_load_vg_bad_attributes(tmp_path):
    rec = {**_vgr(relation_name=...), "attributes": ["white"]}
    with pytest.raises(RecordError, match=r"record 0: field 'attributes' must be a list of 2 non-empty strings"):
        load_vg(_write(tmp_path / "a.json", [rec]), "attribution")
    with pytest.raises(RecordError, match=r"record 0: missing field 'attributes'"):
        load_vg(_write(tmp_path / "a.json", [_vgr()]), "attribution")


def test_truncated_and_missing_files(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps([_vgr(), _vgr()])[:-30])
    with pytest.raises(RecordError, match=r"r\.json: not valid JSON, truncated or corrupt"):
        load_vg(path, "relation")
    with pytest.raises(FileNotFoundError, match=r"nope\.json: file not found"):
        load_vg(tmp_path / "nope.json", "relation")
    (tmp_path / "bin.json").write_bytes(b'[{"a": "\xff\xfe"}]')
    with pytest.raises(RecordError, match=r"bin\.json: not UTF-8"):
        read_json_strict(tmp_path / "bin.json")


def test_duplicate_keys_inside_a_record(tmp_path):
    path = tmp_path / "r.json"
    path.write_text('[{"image_path": "a.jpg", "image_path": "b.jpg"}]')
    with pytest.raises(RecordError, match=r"r\.json: record 0: duplicate key 'image_path' in one JSON object"):
        load_vg(path, "relation")


def test_vg_crop_reads_lazily_and_checks_the_box(tmp_path):
    img = np.zeros((10, 20, 3), dtype=np.uint8)  # H=10, W=20
    img[2:6, 1:6] = 255
    Image.fromarray(img).save(tmp_path / "a.jpg", quality=100)
    ok, outside = load_vg(_write(tmp_path / "r.json", [_vgr(), _vgr(bbox_x=18)]), "relation")
    crop = ok.crop(tmp_path, tmp_path / "r.json")
    assert crop.size == (5, 4) and np.asarray(crop).mean() > 200  # x 1..6, y 2..6 is the white block
    with pytest.raises(RecordError, match=r"r\.json: record 1: box x=18 y=2 w=5 h=4 lies outside image a\.jpg "
                                          r"of size 20x10"):
        outside.crop(tmp_path, tmp_path / "r.json")
    assert outside.crop(tmp_path, tmp_path / "r.json", tolerance_px=3).size == (5, 4)


def test_vg_crop_missing_and_corrupt_images(tmp_path):
    (case,) = load_vg(_write(tmp_path / "r.json", [_vgr()]), "relation")
    with pytest.raises(FileNotFoundError, match=r"r\.json: record 0: image .*a\.jpg not found"):
        case.crop(tmp_path, tmp_path / "r.json")
    (tmp_path / "a.jpg").write_bytes(b"\xff\xd8\xff\xe0 truncated jpeg")
    with pytest.raises(RecordError, match=r"r\.json: record 0: image .*a\.jpg is corrupt or not an image"):
        case.crop(tmp_path, tmp_path / "r.json")


def test_load_exclusions(tmp_path):
    (tmp_path / "x.txt").write_text("# symmetric relations\nnext to\n near  # comment\n\n")
    assert load_exclusions(tmp_path / "x.txt") == {"next to", "near"}
    with pytest.raises(FileNotFoundError, match="exclusion list not found"):
        load_exclusions(tmp_path / "none.txt")


# --------------------------------------------------------------------------- SugarCrepe


def _sc(**over):
    rec = {"filename": "000000085329.jpg", "caption": "A cat on a mat. ", "negative_caption": "A mat on a cat."}
    rec.update(over)
    return {k: v for k, v in rec.items() if v is not ...}


def test_sugarcrepe_loader_keeps_ids_and_raw_captions(tmp_path):
    cases = load_category(_write(tmp_path / "swap_obj.json", {"0": _sc(), "2": _sc(caption="x")}))
    assert [c.id for c in cases] == ["0", "2"] and cases[0].caption == "A cat on a mat. "


@pytest.mark.parametrize(("content", "message"), [
    ('{"0": {"filename": "000000085329.jpg", "caption": "a"}}', r"record '0': missing field 'negative_caption'"),
    ('{"0": {"filename": "000000085329.jpg", "caption": 5, "negative_caption": "b"}}',
     r"record '0': field 'caption' must be str, got int"),
    ('{"0": {"filename": "000000085329.jpg", "caption": "a", "negative_caption": ""}}',
     r"record '0': field 'negative_caption' is an empty caption"),
    ('{"7": {"filename": "000000085329.jpg", "caption": "a", "negative_caption": "b"}, '
     '"7": {"filename": "000000085329.jpg", "caption": "c", "negative_caption": "d"}}', r"duplicate key '7'"),
    ('{"0": {"filename": "cat.png", "caption": "a", "negative_caption": "b"}}',
     r"record '0': field 'filename' 'cat.png' is not a COCO val2017 file name"),
    ('[{"filename": "000000085329.jpg"}]', r"expected a JSON object keyed by case id, got list"),
    ('{"0": {"filename": "000000085329.jpg", "caption": "a", "negat', r"not valid JSON, truncated or corrupt"),
])
def test_sugarcrepe_bad_input(tmp_path, content, message):
    (tmp_path / "swap_obj.json").write_text(content)
    with pytest.raises(RecordError, match=r"swap_obj\.json: " + message if "record" in message else message):
        load_category(tmp_path / "swap_obj.json")


def test_sugarcrepe_load_all_names_the_missing_file(tmp_path):
    _write(tmp_path / "add_att.json", {"0": _sc()})
    with pytest.raises(FileNotFoundError, match=r"add_obj\.json: file not found"):
        load_all(tmp_path)
    assert list(load_all(tmp_path, ("add_att",))) == ["add_att"]


def test_sugarcrepe_strict_inequality():
    np.testing.assert_array_equal(correct([0.3, 0.2, 0.5], [0.2, 0.2, 0.6]), [True, False, False])
    with pytest.raises(ValueError, match="1-D of one length"):
        correct([0.1, 0.2], [0.1])


def _bools(n_correct: int, n: int) -> np.ndarray:
    return np.arange(n) < n_correct


def test_sugarcrepe_group_micro_macro_hand_values():
    # catalog check (refcode §3.3): ViT-B-32 openai REPLACE micro = (90.92*1652 + 80.08*788 + 69.20*1406) / 3846
    per = {"replace_obj": _bools(1502, 1652), "replace_att": _bools(631, 788), "replace_rel": _bools(973, 1406),
           "swap_obj": _bools(1, 4), "swap_att": _bools(3, 4)}
    acc = group_accuracies(per)
    assert acc["replace/micro"] == pytest.approx(3106 / 3846) and round(100 * acc["replace/micro"], 2) == 80.76
    assert acc["replace/macro"] == pytest.approx((1502 / 1652 + 631 / 788 + 973 / 1406) / 3)
    assert acc["swap/micro"] == pytest.approx(4 / 8) and acc["swap/macro"] == pytest.approx((0.25 + 0.75) / 2)
    assert "add/micro" not in acc  # a group with a missing category is left out
    assert set(GROUPS) == {"replace", "swap", "add"}


def test_group_accuracies_loop_parity():
    rng = np.random.default_rng(0)
    per = {c: rng.random(int(rng.integers(1, 50))) > 0.4 for cats in GROUPS.values() for c in cats}
    acc = group_accuracies(per)
    for group, cats in GROUPS.items():  # naive loop
        right = total = 0
        for c in cats:
            for x in per[c]:
                right += int(x)
                total += 1
        assert acc[f"{group}/micro"] == pytest.approx(right / total)
        assert acc[f"{group}/macro"] == pytest.approx(sum(sum(per[c]) / len(per[c]) for c in cats) / len(cats))
    with pytest.raises(ValueError, match="has no cases"):
        group_accuracies({"swap_obj": np.array([], dtype=bool)})


# --------------------------------------------------------------------------- Karpathy


@pytest.mark.parametrize(("records", "message"), [
    ([{"image": "a.jpg"}], r"k\.json: record 0: missing field 'caption'"),
    ([{"image": "a.jpg", "caption": ["x"]}, {"image": "a.jpg", "caption": ["y"]}], r"record 1: duplicate image"),
    ([{"image": "a.jpg", "caption": ["x", " "]}], r"record 0 \(a\.jpg\): caption 1 is empty"),
    ([{"image": 3, "caption": ["x"]}], r"record 0: field 'image' must be a non-empty string"),
    ([], r"no records"),
])
def test_karpathy_bad_input(tmp_path, records, message):
    with pytest.raises(RecordError, match=message):
        load_karpathy(_write(tmp_path / "k.json", records))


def test_sugarcrepe_nan_score_is_an_error_not_a_wrong_answer():
    import numpy as np
    import pytest

    from vlcomp.formats.sugarcrepe import correct

    assert correct(np.array([0.2, 0.1]), np.array([0.1, 0.1])).tolist() == [True, False]
    with pytest.raises(ValueError, match="NaN"):
        correct(np.array([np.nan, 0.3]), np.array([0.1, 0.1]))


def test_duplicate_key_names_the_record_deep_and_keyed(tmp_path):
    """A key repeated inside one record names that record: its position in a list, its id in a keyed file,
    however deep the repeated key sits."""
    path = tmp_path / "l.json"
    path.write_text('[{"a": 1}, {"a": 2}, {"x": {"y": 1, "y": 2}}]')
    with pytest.raises(RecordError, match=r"l\.json: record 2: duplicate key 'y' in one JSON object"):
        read_json_strict(path)
    path.write_text('{"id0": {"caption": "a"}, "id1": {"caption": "b", "caption": "c"}}')
    with pytest.raises(RecordError, match=r"l\.json: record 'id1': duplicate key 'caption'"):
        read_json_strict(path)
    path.write_text('{"id0": {"caption": "a"}, "id0": {"caption": "b"}}')
    with pytest.raises(RecordError, match=r"l\.json: duplicate key 'id0' in the top-level object"):
        read_json_strict(path)
