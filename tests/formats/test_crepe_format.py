"""CREPE's productivity CSVs (``formats.crepe``): reader checks naming file and record, writer round trip and
byte identity, image lookup and crop, and the rank / Recall@k rule with both tie rules (hand-computed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vlcomp.formats import crepe
from vlcomp.formats.records import RecordError
from vlcomp.twins.images import write_png

HEADER = "image_id,x,y,width,height,caption,hard_negs\n"
ROWS = [
    {"image_id": 7, "x": 1, "y": 2, "width": 10, "height": 8, "caption": "a circle above a square.",
     "hard_negs": ["a circle not above a square.", "there is no circle above a square."]},
    {"image_id": 9, "x": 0, "y": 0, "width": 48, "height": 48, "caption": "there is a red star, it's \"big\".",
     "hard_negs": ["there is no red star.", "a star, 'quoted'"]},
]


def _csv(tmp_path: Path, body: str, name: str = "f.csv") -> Path:
    path = tmp_path / name
    path.write_text(HEADER + body, encoding="utf-8")
    return path


def test_negate_file_follows_crepes_path_rule() -> None:
    assert crepe.negate_file("/d/prod_hard_negatives", 7) == \
        Path("/d/prod_hard_negatives/negate/prod_vg_hard_negs_negate_complexity_7.csv")
    with pytest.raises(ValueError, match="hard-negative type"):
        crepe.negate_file("/d", 7, "bogus")


def test_write_read_round_trip_and_bytes(tmp_path) -> None:
    a = crepe.write_crepe_csv(tmp_path / "a" / "x.csv", ROWS, 5)
    b = crepe.write_crepe_csv(tmp_path / "b" / "x.csv", ROWS, 5)
    assert a.read_bytes() == b.read_bytes()
    assert a.read_text().splitlines()[0] == HEADER.strip()
    cases = crepe.read_crepe_csv(a, 5)
    assert [(c.complexity, c.index, c.image_id, c.box) for c in cases] == [(5, 0, "7", (1, 2, 10, 8)),
                                                                           (5, 1, "9", (0, 0, 48, 48))]
    assert [c.caption for c in cases] == [r["caption"] for r in ROWS]
    assert [list(c.hard_negs) for c in cases] == [r["hard_negs"] for r in ROWS]
    assert cases[0].options == (ROWS[0]["caption"], *ROWS[0]["hard_negs"])


def test_reader_reads_pandas_style_files(tmp_path) -> None:
    """Extra columns (pandas' unnamed index) are ignored; float-typed whole numbers are accepted."""
    path = tmp_path / "p.csv"
    path.write_text(",image_id,x,y,width,height,caption,hard_negs,extra\n"
                    "0,2401814,3.0,4,5,6,Car has tires.,\"['There is no car has tire.']\",z\n", encoding="utf-8")
    (case,) = crepe.read_crepe_csv(path, 4)
    assert case.image_id == "2401814" and case.box == (3, 4, 5, 6) and case.hard_negs == ("There is no car has tire.",)


@pytest.mark.parametrize("body, message", [
    ("1,0,0,4,4,a cap,['n']\n2,0,0,4,4,,['n']\n", r"f\.csv: record 1: field 'caption' is an empty caption"),
    ("1,0,0,4,4,a cap,\"['n', 3]\"\n", r"f\.csv: record 0: field 'hard_negs' item 1 must be a non-empty caption"),
    ("1,0,0,4,4,a cap,[]\n", r"f\.csv: record 0: field 'hard_negs' must be a non-empty list"),
    ("1,0,0,4,4,a cap,not a list\n", r"f\.csv: record 0: field 'hard_negs' is not a Python list literal"),
    ("1,0,0,4,4,a cap,\"__import__('os')\"\n", r"f\.csv: record 0: field 'hard_negs' is not a Python list literal"),
    ("1,-1,0,4,4,a cap,['n']\n", r"f\.csv: record 0: field 'x' must be >= 0"),
    ("1,0,0,0,4,a cap,['n']\n", r"f\.csv: record 0: field 'width' must be > 0"),
    ("1,0,0,4.5,4,a cap,['n']\n", r"f\.csv: record 0: field 'width' must be a whole number"),
    ("1,0,0,four,4,a cap,['n']\n", r"f\.csv: record 0: field 'width' must be a number"),
    ("1,0,0,4,4,a cap\n", r"f\.csv: record 0: does not have the header's 7 fields"),
    ("1,0,0,4,4,a cap,['n'],x\n", r"f\.csv: record 0: .*truncated or mis-quoted"),
    (",0,0,4,4,a cap,['n']\n", r"f\.csv: record 0: field 'image_id' is empty"),
    ("", r"f\.csv: no records"),
])
def test_bad_rows_name_file_and_record(tmp_path, body, message) -> None:
    with pytest.raises(RecordError, match=message):
        crepe.read_crepe_csv(_csv(tmp_path, body), 4)


def test_bad_files_name_the_file(tmp_path) -> None:
    missing_col = tmp_path / "m.csv"
    missing_col.write_text("image_id,x,y,width,caption,hard_negs\n1,0,0,4,c,['n']\n")
    with pytest.raises(RecordError, match=r"m\.csv: CSV header lacks columns \['height'\]"):
        crepe.read_crepe_csv(missing_col, 4)
    empty = tmp_path / "e.csv"
    empty.write_text("")
    with pytest.raises(RecordError, match=r"e\.csv: empty file"):
        crepe.read_crepe_csv(empty, 4)
    latin = tmp_path / "l.csv"
    latin.write_bytes((HEADER + "1,0,0,4,4,caf\xe9,['n']\n").encode("latin-1"))
    with pytest.raises(RecordError, match=r"l\.csv: not UTF-8"):
        crepe.read_crepe_csv(latin, 4)
    with pytest.raises(FileNotFoundError, match=r"nope\.csv: file not found"):
        crepe.read_crepe_csv(tmp_path / "nope.csv", 4)


def test_writer_refuses_bad_rows(tmp_path) -> None:
    with pytest.raises(RecordError, match=r"w\.csv: record 0: field 'hard_negs' must be a non-empty list"):
        crepe.write_crepe_csv(tmp_path / "w.csv", [{**ROWS[0], "hard_negs": []}], 4)
    with pytest.raises(ValueError, match="row 0 lacks"):
        crepe.write_crepe_csv(tmp_path / "w.csv", [{"caption": "c"}], 4)
    with pytest.raises(ValueError, match="hard_negs must be a list"):
        crepe.write_crepe_csv(tmp_path / "w.csv", [{**ROWS[0], "hard_negs": "one"}], 4)
    assert not (tmp_path / "w.csv").exists()


def test_load_crepe_reads_the_complexity_files(tmp_path) -> None:
    prod = tmp_path / "prod_hard_negatives"
    crepe.write_crepe_csv(crepe.negate_file(prod, 4), ROWS[:1], 4)
    crepe.write_crepe_csv(crepe.negate_file(prod, 6), ROWS, 6)
    cases = crepe.load_crepe(prod)
    assert {n: len(c) for n, c in cases.items()} == {4: 1, 6: 2}
    assert list(crepe.load_crepe(prod, [6])) == [6]
    with pytest.raises(FileNotFoundError, match=r"complexity_5\.csv: file not found"):
        crepe.load_crepe(prod, [5])
    with pytest.raises(FileNotFoundError, match="no prod_vg_hard_negs_negate_complexity"):
        crepe.load_crepe(tmp_path / "empty")


def test_image_lookup_and_crop(tmp_path) -> None:
    image = np.arange(20 * 30 * 3, dtype=np.int64).reshape(20, 30, 3).astype(np.uint8)
    write_png(tmp_path / "vg2" / "7.png", image)
    (tmp_path / "vg1").mkdir()
    case = crepe.CrepeCase(4, 3, "7", (1, 2, 10, 8), "c", ("n",))
    roots = [tmp_path / "vg1", tmp_path / "vg2"]
    assert case.candidates(roots)[:2] == [tmp_path / "vg1" / "7.jpg", tmp_path / "vg1" / "7.png"]
    assert case.image_file(roots) == tmp_path / "vg2" / "7.png"
    crop = np.asarray(case.crop(roots, "src.csv"))
    np.testing.assert_array_equal(crop, image[2:10, 1:11])
    with pytest.raises(FileNotFoundError, match=r"src\.csv: record 3: image '7' not found \(tried .*vg1/7\.jpg"):
        case.crop([tmp_path / "vg1"], "src.csv")
    outside = crepe.CrepeCase(4, 5, "7", (25, 0, 10, 8), "c", ("n",))
    with pytest.raises(RecordError, match=r"src\.csv: record 5: box x=25 y=0 width=10 height=8 lies outside"):
        outside.crop(roots, "src.csv")


def test_caption_rank_by_hand() -> None:
    scores = np.array([
        [0.9, 0.1, 0.2, 0.3],  # caption best: rank 0 both ways
        [0.5, 0.5, 0.1, 0.1],  # one tie: CREPE rule rank 0, strict rank 1
        [0.2, 0.3, 0.2, 0.4],  # two above, one tie: 2 and 3
        [0.1, 0.2, 0.3, 0.4],  # last: 3 and 3
    ])
    np.testing.assert_array_equal(crepe.caption_rank(scores), [0, 0, 2, 3])
    np.testing.assert_array_equal(crepe.caption_rank(scores, crepe.STRICT_TIE_RULE), [0, 1, 3, 3])
    assert crepe.CREPE_TIE_RULE == "tie_counts_right" and crepe.STRICT_TIE_RULE == "tie_counts_wrong"
    assert crepe.recall_at(np.array([0, 0, 2, 3]), 1) == 0.5
    assert crepe.recall_at(np.array([0, 0, 2, 3]), 3) == 0.75
    with pytest.raises(ValueError, match=r"\[N, 1 \+ K\]"):
        crepe.caption_rank(np.zeros((2, 1)))
    with pytest.raises(ValueError, match="NaN"):
        crepe.caption_rank(np.array([[np.nan, 0.0]]))
