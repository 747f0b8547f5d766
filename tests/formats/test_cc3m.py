"""TSVLC's CC3M layout (train_with_cap.csv) and its released positives (CC3M_positives/<image>.json)."""

from __future__ import annotations

import json

import pytest

from vlcomp.formats.cc3m import (
    positive_file,
    read_caption_tsv,
    read_released_positives,
    write_caption_tsv,
)
from vlcomp.formats.records import RecordError


def test_reads_the_authors_layout_into_karpathy_records(tmp_path):
    path = tmp_path / "train_with_cap.csv"
    # as the authors' file: a header row, tab-separated, extra columns ignored, a caption with a quoted word
    path.write_text('file\tcaption\tsource\n'
                    'training/0.jpg\ta man walking on the beach\tcc3m\n'
                    'training/1.jpg\t"actor" attends the premiere \tcc3m\n'
                    'training/2.jpg\tthe "best" dog\tcc3m\n', encoding="utf-8")
    got = read_caption_tsv(path)
    assert got == [{"image": "training/0.jpg", "caption": ["a man walking on the beach"]},
                   {"image": "training/1.jpg", "caption": ["actor attends the premiere"]},  # pandas' quoting rule
                   {"image": "training/2.jpg", "caption": ['the "best" dog']}]


def test_write_then_read_is_the_identity(tmp_path):
    records = [{"image": f"{i}.jpg", "caption": [f'a "red" cube\\tnumber {i}']} for i in range(5)]
    path = write_caption_tsv(tmp_path / "x.csv", records)
    assert read_caption_tsv(path) == records
    with pytest.raises(RecordError, match="record 0 .*one caption per image, got 2"):
        write_caption_tsv(tmp_path / "y.csv", [{"image": "a.jpg", "caption": ["one", "two"]}])


@pytest.mark.parametrize("text,message", [
    ("image\tcaption\na.jpg\tx\n", r"header row \['image', 'caption'\] lacks the column\(s\) \['file'\]"),
    ("file,caption\na.jpg,x\n", r"lacks the column\(s\) \['file', 'caption'\]"),  # comma-separated: not the layout
    ("file\tcaption\n", "no rows after the header"),
    ("file\tcaption\na.jpg\t \n", r"line 2 \(a.jpg\): empty 'caption'"),
    ("file\tcaption\n\tx\n", "line 2: empty 'file'"),
    ("file\tcaption\na.jpg\tx\nb.jpg\ty\na.jpg\tz\n", "line 4: image 'a.jpg' repeats line 2"),
])
def test_bad_files_name_the_file_and_line(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RecordError, match=message) as e:
        read_caption_tsv(path)
    assert str(path) in str(e.value)
    with pytest.raises(FileNotFoundError, match="nope.csv: caption file not found"):
        read_caption_tsv(tmp_path / "nope.csv")


def test_released_positives_by_image_basename(tmp_path):
    folder = tmp_path / "CC3M_positives"
    folder.mkdir()
    assert positive_file(folder, "training/00012.jpg") == folder / "00012.json"
    (folder / "0.json").write_text(json.dumps({"positive": " a cat to the left of a dog ", "caption": "c"}))
    (folder / "1.json").write_text(json.dumps({"positive": "invalid", "caption": "c"}))  # the generator's failure
    (folder / "2.json").write_text(json.dumps({"positive": "", "caption": "c"}))
    got = read_released_positives(folder, ["a/0.jpg", "a/1.jpg", "a/2.jpg", "a/3.jpg"])  # 3: no file
    assert got == ["a cat to the left of a dog", None, None, None]
    (folder / "4.json").write_text(json.dumps({"caption": "c"}))
    with pytest.raises(RecordError, match=r"4.json: expected a JSON object with a string field 'positive'"):
        read_released_positives(folder, ["4.jpg"])
    (folder / "5.json").write_text("{not json")
    with pytest.raises(RecordError, match=r"5.json: not a JSON file"):
        read_released_positives(folder, ["5.jpg"])
    with pytest.raises(FileNotFoundError, match="nowhere: folder of released positives not found"):
        read_released_positives(tmp_path / "nowhere", ["0.jpg"])
