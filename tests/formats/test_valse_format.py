"""VALSE instrument files: the writer, the vote checks of the loader, the averages over present instruments.

Records follow the released files (``lezhang7/Enhance-FineGrained/VALSE/data``); every bad record must stop with a
message naming the file and the foil id.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vlcomp.benchmarks.valse import aggregate_valse
from vlcomp.formats import valse
from vlcomp.formats.records import RecordError


def _rec(votes: tuple[int, int, int] = (3, 0, 0), **over) -> dict:
    """A record shaped like ``counting-hard.json``'s first one; ``votes`` = (caption, foil, other)."""
    caption, foil, other = votes
    rec = {"dataset": "visual7w", "dataset_idx": "2396743", "image_file": "v7w_2396743.jpg",
           "linguistic_phenomena": "counting", "caption": "There are exactly 0 people.", "answer": 0,
           "classes": 0, "split": "test", "original_split": "test", "classes_foil": 2,
           "mturk": {"foil": foil, "caption": caption, "other": other}, "foil": "There are exactly 2 people."}
    rec.update(over)
    return rec


def _write_raw(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data))
    return path


# --------------------------------------------------------------------------------------------- writer


def test_write_then_load_round_trips_every_case_in_order(tmp_path):
    cases = {"counting_visual7w_2": _rec((1, 2, 0), caption="B"), "counting_visual7w_1": _rec((3, 0, 0)),
             "counting_visual7w_3": _rec((2, 1, 0), foil="C")}
    path = valse.write_instrument(tmp_path / "counting-hard.json", cases)
    every = valse.load_instrument(path, valid_only=False)
    assert [c.id for c in every] == list(cases)  # file order = the order given, not sorted
    for c in every:
        rec = cases[c.id]
        assert (c.instrument, c.dataset, c.image_file, c.caption, c.foil, c.mturk_caption) == (
            "counting-hard", rec["dataset"], rec["image_file"], rec["caption"], rec["foil"], rec["mturk"]["caption"])
    assert [c.id for c in valse.load_instrument(path)] == ["counting_visual7w_1", "counting_visual7w_3"]


def test_writer_keeps_the_released_layout(tmp_path):
    path = valse.write_instrument(tmp_path / "existence.json", {"existence_visual7w_1": _rec()})
    text = path.read_text()
    assert text.startswith('{\n    "existence_visual7w_1": {\n        "dataset": "visual7w",')  # 4-space indent
    data = json.loads(text)
    assert list(data["existence_visual7w_1"]) == list(_rec())  # every field, in the order given
    assert data["existence_visual7w_1"]["mturk"] == {"foil": 0, "caption": 3, "other": 0}


@pytest.mark.parametrize(("cases", "message"), [
    ({"a_0": _rec((3, 3, 3))}, r"record 'a_0': field 'mturk': votes must sum to 3"),
    ({"a_0": _rec(), "a_1": {k: v for k, v in _rec().items() if k != "foil"}}, r"record 'a_1': missing field 'foil'"),
    ({"a_0": _rec(caption="")}, r"record 'a_0': field 'caption' is an empty caption"),
    ({"": _rec()}, r"foil id must be a non-empty string"),
    ({}, r"no cases to write"),
])
def test_writer_refuses_bad_records_naming_file_and_id(tmp_path, cases, message):
    with pytest.raises(RecordError, match=r"relations\.json: " + message):
        valse.write_instrument(tmp_path / "relations.json", cases)
    assert not (tmp_path / "relations.json").exists()


# ---------------------------------------------------------------------------------------- vote checks


@pytest.mark.parametrize(("mturk", "message"), [
    ({"caption": 3, "foil": 3, "other": 3}, r"votes must sum to 3 \(one per annotator\), got caption=3, foil=3, "
                                            r"other=3 \(sum 9\)"),
    ({"caption": 2, "foil": 0, "other": 0}, r"votes must sum to 3 .*sum 2"),
    ({"caption": 0, "foil": 0, "other": 0}, r"votes must sum to 3 .*sum 0"),
    ({"caption": 2, "foil": 2}, r"more than 3 votes, got caption=2, foil=2 \(sum 4\)"),
    ({"caption": 1, "foil": -1, "other": 3}, r"field 'foil' must be a vote count in 0\.\.3, got -1"),
    ({"caption": 2, "foil": 1, "other": 4}, r"field 'other' must be a vote count in 0\.\.3, got 4"),
    ({"caption": 3, "foil": 0, "other": 0.0}, r"field 'other' must be int, got float"),
])
def test_loader_refuses_votes_that_are_not_three_annotators(tmp_path, mturk, message):
    path = _write_raw(tmp_path / "plurals.json", {"ok_0": _rec(), "plurals:coco2017:7": _rec(mturk=mturk)})
    with pytest.raises(RecordError, match=r"plurals\.json: record 'plurals:coco2017:7': field 'mturk': " + message):
        valse.load_instrument(path, valid_only=False)


def test_loader_checks_votes_of_non_validated_cases_too(tmp_path):
    path = _write_raw(tmp_path / "foil-it.json", {"1": _rec(), "2": _rec(mturk={"caption": 1, "foil": 1, "other": 0})})
    with pytest.raises(RecordError, match=r"foil-it\.json: record '2': .*votes must sum to 3"):
        valse.load_instrument(path)  # valid_only: the bad record is not validated, still a malformed file


@pytest.mark.parametrize("mturk", [
    {"foil": 0, "caption": 3, "other": 0}, {"foil": 1, "caption": 2, "other": 0}, {"foil": 0, "caption": 0, "other": 3},
    {"caption": 3}, {"caption": 2, "foil": 1}, {"caption": 2, "other": 1},  # foil / other optional, as before
])
def test_loader_accepts_the_vote_patterns_of_the_released_files(tmp_path, mturk):
    path = _write_raw(tmp_path / "relations.json", {"r_0": _rec(), "r_1": _rec(mturk=mturk)})
    cases = valse.load_instrument(path, valid_only=False)
    assert cases[1].mturk_caption == mturk["caption"]


# ------------------------------------------------------------------------------- averages over present files


def _acc(missing: tuple[str, ...] = ()) -> dict[str, float]:
    """Instrument accuracies 0.10, 0.15, ..., 0.60 in INSTRUMENTS order, some left out."""
    return {ins: 0.10 + 0.05 * k for k, ins in enumerate(valse.INSTRUMENTS) if ins not in missing}


def test_present_columns_and_averages_by_hand():
    acc = _acc(missing=("coreference-standard", "coreference-hard"))  # the toy twin's 9 instruments
    cols = valse.present_column_accuracies(acc)
    assert list(cols) == ["existence", "plurality", "counting", "spatial_relations", "action_replacement",
                          "actant_swap", "foil_it"]
    assert cols["counting"] == pytest.approx((0.20 + 0.25 + 0.30) / 3)
    assert cols["foil_it"] == pytest.approx(0.60)
    present = [0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40, 0.45, 0.60]
    assert valse.average_over_present_instruments(acc) == pytest.approx(sum(present) / 9)
    assert valse.average_over_present_columns(acc) == pytest.approx((0.10 + 0.15 + 0.25 + 0.35 + 0.40 + 0.45 + 0.60)
                                                                   / 7)
    no_counting = _acc(missing=("counting-hard",))
    assert "counting" not in valse.present_column_accuracies(no_counting)  # a column needs all its files


def test_present_averages_equal_the_paper_averages_with_all_files():
    acc = _acc()
    assert valse.present_column_accuracies(acc) == valse.column_accuracies(acc)
    assert valse.average_over_present_instruments(acc) == pytest.approx(valse.average_over_instruments(acc))
    assert valse.average_over_present_columns(acc) == pytest.approx(valse.average_over_columns(acc))
    with pytest.raises(ValueError, match="no complete VALSE column"):
        valse.average_over_present_columns({"counting-hard": 0.5})


def _table(right: dict[str, list[bool]]) -> dict[str, pd.DataFrame]:
    rows = [(ins, ok) for ins, oks in right.items() for ok in oks]
    return {"valse": pd.DataFrame({"instrument": [r[0] for r in rows], "correct": np.array([r[1] for r in rows])})}


def test_aggregate_without_coreference_gives_present_metrics_only():
    right = {ins: [True, False] if ins == "plurals" else [True] for ins in valse.INSTRUMENTS
             if not ins.startswith("coreference")}
    m = aggregate_valse(_table(right))
    assert m["valse/plurals/acc"] == 0.5 and m["valse/plurals/n"] == 2
    assert m["valse/n_instruments"] == 9 and m["valse/n_columns"] == 7
    assert m["valse/avg_present_instruments"] == pytest.approx(8.5 / 9)
    assert m["valse/avg_present_columns"] == pytest.approx(6.5 / 7)
    assert m["valse/column/counting/acc"] == 1.0
    assert not any(k in m for k in ("valse/avg_instruments", "valse/avg_columns", "valse/column/coreference_clean/acc"))


def test_aggregate_with_all_files_keeps_the_paper_keys():
    right = {ins: [k % 2 == 0] for k, ins in enumerate(valse.INSTRUMENTS)}  # 6 of 11 right
    m = aggregate_valse(_table(right))
    assert m["valse/avg_instruments"] == pytest.approx(6 / 11) == m["valse/avg_present_instruments"]
    assert m["valse/avg_columns"] == pytest.approx(m["valse/avg_present_columns"])
    assert m["valse/n_instruments"] == 11 and m["valse/n_columns"] == 9
    assert len([k for k in m if k.startswith("valse/column/")]) == 9
