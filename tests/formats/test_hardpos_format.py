"""Hard Positives pair files: the writers round-trip through the loaders, and a row missing from (or added to)
the middle of one file is reported at the first row where the two files diverge, naming both files."""

from __future__ import annotations

import json
import re

import pytest

from vlcomp.formats import hardpos
from vlcomp.formats.hardpos import HardPositiveCase
from vlcomp.formats.records import RecordError

ATT = "vl_checklist_attributes.json"
VGA = "visual_genome_attribution.json"


def _case(k: int, image_id: str, c: str, c_p: str, c_n: str) -> HardPositiveCase:
    return HardPositiveCase(k, f"data/VG_100K/{image_id}.png", c, c_p, c_n, image_id=image_id)


CASES = [
    _case(0, "1", "large red circle", "big red circle", "small red circle"),
    _case(1, "1", "small blue square", "little blue square", "large blue square"),
    _case(2, "2", "red circle to the left of blue square", "blue square to the right of red circle",
          "red circle above blue square"),
    _case(3, "2", "red circle to the left of blue square", "blue square to the right of red circle",
          "red circle below blue square"),  # same image and c, another c_n (as the released files have)
    _case(4, "3", "large white star", "big white star", "small white star"),
    _case(5, "4", "small cyan heart", "little cyan heart", "large cyan heart"),
]


def _vga_record(n: int) -> dict:
    return {"image_path": f"vg_test_{n:06d}.png", "bbox_x": n, "bbox_y": 1, "bbox_w": 20, "bbox_h": 12,
            "true_caption": f"the red circle and the blue {['square', 'star', 'heart', 'cross'][n % 4]}",
            "false_caption": f"the blue circle and the red {['square', 'star', 'heart', 'cross'][n % 4]}",
            "attributes": ["red", "blue"], "attribute_kind": "colour"}


RECORDS = [_vga_record(n) for n in range(6)]
POSITIVES = [f"the blue {['square', 'star', 'heart', 'cross'][n % 4]} and the red circle" for n in range(6)]


# ---------------------------------------------------------------------------------------------- writers


def test_replace_writer_round_trip(tmp_path):
    data_path, swapped_path = hardpos.write_replace(tmp_path, "replace_att", CASES)
    assert (data_path, swapped_path) == (tmp_path / "data" / ATT, tmp_path / "swapped_data" / ATT)
    assert hardpos.load_benchmark(tmp_path, "replace_att") == CASES
    data, swapped = (json.loads(p.read_text()) for p in (data_path, swapped_path))
    assert data[0] == {"image_id": "1", "true_caption": "large red circle", "false_caption": "small red circle",
                       "image_path": "data/VG_100K/1.png"}
    assert swapped[0] == {**data[0], "true_caption": "big red circle"}  # c_p, same c_n and image
    assert {tuple(sorted(r)) for r in data + swapped} == {("false_caption", "image_id", "image_path", "true_caption")}


def test_replace_writer_is_byte_stable(tmp_path):
    a = hardpos.write_replace(tmp_path / "a", "replace_rel", CASES)
    b = hardpos.write_replace(tmp_path / "b", "replace_rel", list(CASES))
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]


def test_swap_writer_round_trip(tmp_path):
    data_path, swapped_path = hardpos.write_swap(tmp_path, RECORDS, POSITIVES)
    assert json.loads(data_path.read_text()) == RECORDS  # data/ is the VG-Attribution file itself
    swapped = json.loads(swapped_path.read_text())
    assert [r["true_caption"] for r in swapped] == POSITIVES
    assert all({**s, "true_caption": r["true_caption"]} == r for s, r in zip(swapped, RECORDS, strict=True))
    cases = hardpos.load_benchmark(tmp_path, "swap")
    assert [(c.caption, c.positive, c.negative, c.image_path, c.box) for c in cases] == [
        (r["true_caption"], p, r["false_caption"], r["image_path"], (r["bbox_x"], 1, 20, 12))
        for r, p in zip(RECORDS, POSITIVES, strict=True)]


@pytest.mark.parametrize(("call", "message"), [
    (lambda root: hardpos.write_replace(root, "swap", CASES), r"'swap' is not a REPLACE benchmark"),
    (lambda root: hardpos.write_replace(root, "replace_obj", CASES), r"'replace_obj' is not a REPLACE"),
    (lambda root: hardpos.write_replace(root, "replace_att", []), r"replace_att: no cases to write"),
    (lambda root: hardpos.write_replace(root, "replace_att", [HardPositiveCase(0, "x.png", "a", "b", "c")]),
     r"REPLACE case 0: needs an image_id"),
    (lambda root: hardpos.write_replace(root, "replace_att", [_case(0, "1", "a", " ", "c")]),
     r"REPLACE case 0: positive must be a non-empty string"),
    (lambda root: hardpos.write_swap(root, RECORDS, POSITIVES[:2]), r"SWAP: 6 records but 2 hard positives"),
    (lambda root: hardpos.write_swap(root, [{k: v for k, v in RECORDS[0].items() if k != "bbox_h"}], ["x"]),
     r"SWAP record 0: missing VG-Attribution field\(s\) \['bbox_h'\]"),
    (lambda root: hardpos.write_swap(root, [], []), r"swap: no records to write"),
])
def test_writers_refuse_bad_input(tmp_path, call, message):
    with pytest.raises(ValueError, match=message):
        call(tmp_path)
    assert not (tmp_path / "data").exists()


# ------------------------------------------------------------------------------------- alignment errors


def _drop_row(path, k: int) -> None:
    rows = json.loads(path.read_text())
    del rows[k]
    path.write_text(json.dumps(rows))


def test_replace_row_deleted_from_the_middle_names_the_first_divergence(tmp_path):
    data_path, swapped_path = hardpos.write_replace(tmp_path, "replace_att", CASES)
    _drop_row(swapped_path, 1)  # rows 0 and 1 name image 1 with different c_n: the files diverge at row 1
    with pytest.raises(RecordError) as err:
        hardpos.load_replace(data_path, swapped_path)
    msg = str(err.value)
    assert msg.startswith(f"{data_path}: record 1: no aligned row in {swapped_path}: the pair files diverge at row 1")
    assert f"{swapped_path}: record 1" in msg and "6 rows in" in msg and "5 in" in msg
    assert "skipping 1 row(s)" in msg and "record 5" not in msg  # not the last record, as before the fix


def test_replace_first_divergence_after_rows_with_the_same_key(tmp_path):
    # rows 2 and 3 share image and c, not c_n: deleting row 2 makes row 2 differ in its false_caption
    data_path, swapped_path = hardpos.write_replace(tmp_path, "replace_rel", CASES)
    _drop_row(swapped_path, 2)
    with pytest.raises(RecordError, match=re.escape(f"{data_path}: record 2: no aligned row in {swapped_path}")
                       + r".*false_caption 'red circle below blue square' in .*swapped_data.*: record 2 vs "
                         r"'red circle above blue square'"):
        hardpos.load_replace(data_path, swapped_path)


def test_replace_row_inserted_in_the_middle(tmp_path):
    data_path, swapped_path = hardpos.write_replace(tmp_path, "replace_att", CASES)
    rows = json.loads(swapped_path.read_text())
    rows.insert(4, {**rows[0]})
    swapped_path.write_text(json.dumps(rows))
    with pytest.raises(RecordError, match=re.escape(f"{swapped_path}: record 4: no aligned row in {data_path}")
                       + r".*image_id '1' .*record 4 vs '3'.*6 rows in .*, 7 in .*skipping 1 row\(s\) of "):
        hardpos.load_replace(data_path, swapped_path)


def test_unaligned_rest_gets_no_skip_hint(tmp_path):
    data_path, swapped_path = hardpos.write_replace(tmp_path, "replace_att", CASES)
    rows = json.loads(swapped_path.read_text())
    swapped_path.write_text(json.dumps(rows[:1] + [rows[4], rows[1]]))  # shorter and scrambled
    with pytest.raises(RecordError, match=r"record 1: no aligned row .*diverge at row 1") as err:
        hardpos.load_replace(data_path, swapped_path)
    assert "skipping" not in str(err.value)


def test_trailing_row_missing_still_names_the_last_record(tmp_path):
    data_path, swapped_path = hardpos.write_replace(tmp_path, "replace_att", CASES)
    _drop_row(swapped_path, 5)
    with pytest.raises(RecordError, match=re.escape(f"{data_path}: record 5: no aligned row in {swapped_path} "
                                                    f"(6 rows in {data_path}, 5 in {swapped_path})")):
        hardpos.load_replace(data_path, swapped_path)


def test_swap_row_deleted_from_the_middle(tmp_path):
    data_path, swapped_path = hardpos.write_swap(tmp_path, RECORDS, POSITIVES)
    _drop_row(data_path, 3)
    with pytest.raises(RecordError, match=re.escape(f"{swapped_path}: record 3: no aligned row in {data_path}")
                       + r": the pair files diverge at row 3 \(image_path 'vg_test_000003\.png' in .*swapped_data"
                         r".*: record 3 vs 'vg_test_000004\.png' in .*data/visual_genome_attribution\.json: "
                         r"record 3; 5 rows in .*, 6 in .*\); skipping 1 row\(s\)"):
        hardpos.load_swap(data_path, swapped_path)


def test_equal_counts_mismatch_is_unchanged(tmp_path):
    data_path, swapped_path = hardpos.write_swap(tmp_path, RECORDS, POSITIVES)
    rows = json.loads(swapped_path.read_text())
    rows[2]["false_caption"] = "the red circle and the blue heart"
    swapped_path.write_text(json.dumps(rows))
    with pytest.raises(RecordError, match=r"swapped_data/visual_genome_attribution\.json: record 2: false_caption "
                                          r"'the red circle and the blue heart' differs from false_caption "
                                          r"'the blue circle and the red heart' of .*: record 2; the pair files must"):
        hardpos.load_swap(data_path, swapped_path)
