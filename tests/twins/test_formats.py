"""validate_karpathy: every error names the file and the record; the real COCO Karpathy test file passes."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from vlcomp.formats.karpathy import validate_karpathy

PATH = Path("data/coco/captions.json")
GOOD = [
    {"image": "val2014/a.jpg", "caption": ["A dog.", "a dog on grass"]},
    {"image": "val2014/b.jpg", "caption": ["a cat"]},
    {"image": "val2014/c.jpg", "caption": ["two birds", "a bird pair", "birds"]},
]


def test_valid_records_pass_unchanged() -> None:
    data = copy.deepcopy(GOOD)
    assert validate_karpathy(data, PATH) == GOOD


def test_a_single_caption_string_is_wrapped_in_a_list() -> None:
    data = [{"image": "a", "caption": "a dog"}]
    assert validate_karpathy(data, PATH) == [{"image": "a", "caption": ["a dog"]}]


@pytest.mark.parametrize("data", [{"images": GOOD}, "a string", None, 3])
def test_not_a_list(data) -> None:
    with pytest.raises(ValueError, match=r"captions\.json: expected a JSON list of records"):
        validate_karpathy(data, PATH)


@pytest.mark.parametrize(
    ("index", "record", "message"),
    [
        (1, {"caption": ["a cat"]}, r"record 1: missing field 'image'"),
        (2, {"image": "c.jpg"}, r"record 2: missing field 'caption'"),
        (0, ["a.jpg", ["a dog"]], r"record 0: expected a JSON object, got list"),
        (1, {"image": 7, "caption": ["a cat"]}, r"record 1: field 'image' must be a non-empty string"),
        (1, {"image": "", "caption": ["a cat"]}, r"record 1: field 'image' must be a non-empty string"),
        (2, {"image": "c.jpg", "caption": {"0": "x"}}, r"record 2 \(c\.jpg\): field 'caption' must be a string or a non-empty list"),
        (2, {"image": "c.jpg", "caption": []}, r"record 2 \(c\.jpg\): field 'caption' must be a string or a non-empty list"),
        (1, {"image": "b.jpg", "caption": ["a cat", ""]}, r"record 1 \(b\.jpg\): caption 1 is empty or not a string"),
        (1, {"image": "b.jpg", "caption": ["  "]}, r"record 1 \(b\.jpg\): caption 0 is empty or not a string"),
        (0, {"image": "a.jpg", "caption": ["ok", 3]}, r"record 0 \(a\.jpg\): caption 1 is empty or not a string"),
        (0, {"image": "a.jpg", "caption": ""}, r"record 0 \(a\.jpg\): caption 0 is empty or not a string"),
        (2, {"image": "val2014/a.jpg", "caption": ["again"]}, r"record 2: duplicate image 'val2014/a\.jpg'"),
    ],
)
def test_each_error_names_the_file_and_record(index: int, record, message: str) -> None:
    data = copy.deepcopy(GOOD)
    data[index] = record
    with pytest.raises(ValueError, match=r"data/coco/captions\.json: " + message):
        validate_karpathy(data, PATH)


def test_empty_list_is_valid() -> None:
    assert validate_karpathy([], PATH) == []


@pytest.mark.realdata
def test_real_coco_karpathy_test_file(real_samples: Path) -> None:
    path = real_samples / "coco_karpathy_test.json"
    if not path.exists():
        pytest.skip(f"real COCO Karpathy test file not found at {path}")
    with open(path) as f:
        data = validate_karpathy(json.load(f), path)
    assert len(data) == 5000
    assert sum(len(r["caption"]) for r in data) == 25010
    assert len({r["image"] for r in data}) == 5000
    assert all(r["image"].startswith("val2014/") for r in data)
