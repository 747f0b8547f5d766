"""SugarCrepe writer beside its reader: the released layout byte for byte, round trips, the file-name rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlcomp.formats.records import RecordError
from vlcomp.formats.sugarcrepe import (
    CATEGORIES,
    SugarCrepeCase,
    load_all,
    load_category,
    write_all,
    write_category,
)

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "real_samples"
needs_real = pytest.mark.skipif(not REAL.exists(), reason=f"real samples not found at {REAL}")

CASES = [
    SugarCrepeCase("0", "000000085329.jpg", "A cat on a mat. ", "A dog on a mat."),
    SugarCrepeCase("7", "000000000042.png", "a red circle above a square", "a square above a red circle"),
    SugarCrepeCase("3", "000000000042.png", "  two birds", "three birds."),
]


def test_write_then_load_gives_the_same_cases_in_order(tmp_path: Path) -> None:
    path = write_category(tmp_path / "swap_obj.json", CASES)
    assert load_category(path) == CASES  # ids kept (not contiguous, not sorted), raw captions kept


def test_the_layout_is_the_released_one(tmp_path: Path) -> None:
    path = write_category(tmp_path / "add_att.json", CASES[:1])
    assert path.read_text() == (
        '{\n    "0": {\n        "filename": "000000085329.jpg",\n        "caption": "A cat on a mat. ",\n'
        '        "negative_caption": "A dog on a mat."\n    }\n}\n')


@needs_real
def test_the_real_file_is_rewritten_byte_for_byte(tmp_path: Path) -> None:
    real = REAL / "sugarcrepe_swap_obj.json"
    cases = load_category(real)
    out = write_category(tmp_path / "swap_obj.json", cases)
    assert out.read_bytes() == real.read_bytes()


def test_write_all_writes_one_file_per_category(tmp_path: Path) -> None:
    by_cat = {"replace_obj": CASES[:2], "swap_att": CASES[2:]}
    paths = write_all(tmp_path / "data", by_cat)
    assert {c: p.name for c, p in paths.items()} == {"replace_obj": "replace_obj.json", "swap_att": "swap_att.json"}
    assert load_all(tmp_path / "data", ("replace_obj", "swap_att")) == by_cat
    with pytest.raises(ValueError, match=r"unknown categories \['swap_objects'\]"):
        write_all(tmp_path / "data", {"swap_objects": CASES})
    assert len(CATEGORIES) == 7


@pytest.mark.parametrize(("cases", "message"), [
    ([CASES[0], CASES[0]], r"bad\.json: case id '0' repeats"),
    ([SugarCrepeCase("0", "000000000001.png", " ", "b")], r"bad\.json: record '0': field 'caption' must be a non-empty"),
    ([SugarCrepeCase("0", "000000000001.png", "a", "")], r"record '0': field 'negative_caption' must be a non-empty"),
    ([SugarCrepeCase("5", "42.png", "a", "b")], r"bad\.json: record '5': filename '42\.png' is not a COCO val2017"),
    ([], r"bad\.json: no cases to write"),
])
def test_the_writer_refuses_what_the_loader_would_refuse(tmp_path: Path, cases, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        write_category(tmp_path / "bad.json", cases)
    assert not (tmp_path / "bad.json").exists()


@pytest.mark.parametrize("name", ["000000000042.png", "000000085329.jpg"])
def test_coco_names_are_accepted_as_jpg_or_png(tmp_path: Path, name: str) -> None:
    (tmp_path / "add_obj.json").write_text(json.dumps(
        {"4": {"filename": name, "caption": "a", "negative_caption": "b"}}))
    (case,) = load_category(tmp_path / "add_obj.json")
    assert case.filename == name and case.id == "4"


@pytest.mark.parametrize("name", ["42.png", "000000000042.jpeg", "000000000042.PNG", "COCO_val2014_000000000042.jpg",
                                  "0000000000042.png", "000000000042.png "])
def test_other_names_are_refused_naming_the_file_and_record(tmp_path: Path, name: str) -> None:
    (tmp_path / "add_obj.json").write_text(json.dumps(
        {"4": {"filename": name, "caption": "a", "negative_caption": "b"}}))
    with pytest.raises(RecordError, match=r"add_obj\.json: record '4': field 'filename' .* is not a COCO val2017 "
                                          r"file name \(12 digits \+ \.jpg, or \+ \.png for a toy twin\)"):
        load_category(tmp_path / "add_obj.json")
