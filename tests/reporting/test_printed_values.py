"""The one format of every paper's printed numbers (vlcomp.reporting.printed_values): the five packaged files share
one schema, every printed text parses to its value, a bad row names its file and line, no key appears twice, and
TSVLC's Table 1a is transcribed once (the released comparison and TSVLC's tables read the same rows)."""

from __future__ import annotations

import csv
import importlib.resources
import io
import math
import tomllib
from decimal import Decimal
from fnmatch import fnmatch
from pathlib import Path

import pandas as pd
import pytest

from vlcomp.reporting import printed_values as PV
from vlcomp.reporting import released_values as R
from vlcomp.reporting.papers.tsvlc import printed as P

ROOT = Path(__file__).resolve().parents[2]


def _raw(paper: str) -> list[dict[str, str]]:
    """A packaged file's rows as text, unparsed."""
    resource = importlib.resources.files("vlcomp").joinpath("data", PV.data_file(paper))
    with resource.open("r", encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def printed() -> dict[str, pd.DataFrame]:
    return {paper: PV.load_printed(paper) for paper in PV.PAPERS}


# --------------------------------------------------------------------------- the files


def test_one_schema_for_the_five_papers_and_the_files_ship(printed):
    assert set(PV.PAPERS) == {"aro", "tsvlc", "ceclip", "conclip", "hardpos"}
    for paper, df in printed.items():
        resource = importlib.resources.files("vlcomp").joinpath("data", PV.data_file(paper))
        with resource.open("r", encoding="utf-8", newline="") as f:
            assert tuple(next(csv.reader(f))) == PV.COLUMNS, paper
        assert tuple(df.columns) == PV.COLUMNS and len(df) > 0, paper
        assert (df["paper"] == paper).all() and df["artifact"].str.startswith(PV.PAPERS[paper][0]).all(), paper
        assert df["value"].dtype == "float64" and df["std"].dtype == "float64", paper
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert all(any(fnmatch(f"data/{PV.data_file(p)}", glob) for glob in package_data["vlcomp"]) for p in PV.PAPERS)
    assert sorted(p.name for p in (ROOT / "src/vlcomp/data/printed").iterdir()) == sorted(
        f"{p}.csv" for p in PV.PAPERS)


@pytest.mark.parametrize(("text", "unit", "expected"), [
    ("80.93%", PV.PERCENT, "0.8093"),
    ("+6.6%", PV.PERCENT, "0.066"),
    ("-0.66%", PV.PERCENT, "-0.0066"),
    ("+11.05", PV.PERCENT, "0.1105"),  # TSVLC's Table 1d: a delta printed without %
    ("59.3", PV.PERCENT, "0.593"),
    ("100.0", PV.PERCENT, "1"),
    ("-14.9", PV.PERCENT, "-0.149"),
    ("0.59", PV.FRACTION, "0.59"),
    ("0.80", PV.FRACTION, "0.8"),
    ("269", PV.FRACTION, "269"),  # ARO Table 2's sample counts
])
def test_the_parser_against_hand_computed_values(text, unit, expected):
    assert PV.exact_value(text, unit) == Decimal(expected)
    assert PV.printed_value(text, unit) == pytest.approx(float(expected), rel=1e-15)


@pytest.mark.parametrize(("text", "unit"), [("46%", PV.FRACTION), ("n/a", PV.PERCENT), ("", PV.PERCENT),
                                            ("1e3", PV.FRACTION), ("−14.9", PV.PERCENT), ("59.3 %", PV.PERCENT)])
def test_the_parser_refuses_what_is_no_printed_number(text, unit):
    with pytest.raises(ValueError, match=f"not a printed {unit}"):
        PV.printed_value(text, unit)


def test_every_text_parses_to_its_value(printed):
    for paper in PV.PAPERS:
        for lineno, row in enumerate(_raw(paper), start=2):
            unit = PV.unit_of(paper, row["metric"])  # the paper's, or a raw score's / a count's (METRIC_UNITS)
            assert PV.exact_value(row["text"], unit) == Decimal(row["value"]), (paper, lineno, row)
        df = printed[paper]
        parsed = [PV.printed_value(t, PV.unit_of(paper, m)) for t, m in zip(df["text"], df["metric"], strict=True)]
        assert all(math.isclose(a, b, rel_tol=1e-15, abs_tol=1e-18) for a, b in zip(parsed, df["value"], strict=True))


def test_no_key_appears_twice(printed):
    every = pd.concat(printed.values(), ignore_index=True)
    assert not every.duplicated(list(PV.KEY_COLUMNS)).any()


def test_tsvlc_table_1a_is_transcribed_once(printed):
    every = pd.concat(printed.values(), ignore_index=True)
    t1a = every[every["artifact"] == "TSVLC-T1a"]
    assert set(t1a["paper"]) == {"tsvlc"} and not t1a.duplicated(["group", "metric"]).any()
    # 6 printed rows x 4 columns, and the deltas of the 5 rows under CLIP
    assert (~t1a["metric"].str.endswith(PV.DELTA_SUFFIX)).sum() == 24 and len(t1a) == 24 + 20
    # the released comparison's Table 1a rows are those rows: the same numbers and notes
    released = R.load_released_paper_values()
    released = released[released["artifact"] == "TSVLC-T1a"]
    cells = t1a.set_index(["model", "metric"])
    for r in released.itertuples():
        cell = cells.loc[({v: k for k, v in R.TSVLC_RELEASED.items()}[r.model], r.metric_key)]
        assert (cell["value"], cell["note"], cell["source"]) == (r.value, r.note, r.source)
    # and TSVLC's tables read them: every cell text of the printed view is a row's text
    texts = {(tuple(PV.tsvlc_row(g).values()), m): t for g, m, t in zip(t1a["group"], t1a["metric"], t1a["text"],
                                                                       strict=True)}
    for row in P.rows_of(P.TABLE1, "TSVLC-T1a"):
        setting = (row.model, row.train, "pretrained" if row.pre else "scratch", row.arch)
        for _label, cid, key in P.T1_COLUMNS:
            assert row.cells[cid].text == texts[(setting, key)]
            assert row.cells[cid].delta == texts.get((setting, key + PV.DELTA_SUFFIX), "")


def test_tsvlc_group_encoding():
    assert PV.tsvlc_row("row=CLIP + LoRA; train=CC3M; init=pretrained; arch=ViT-B/32") == {
        "row": "CLIP + LoRA", "train": "CC3M", "init": "pretrained", "arch": "ViT-B/32"}
    for bad in ("CLIP + LoRA", "row=CLIP; train=CC3M; init=pretrained", "row=CLIP; train=CC3M; init=frozen; arch=R50",
                "train=CC3M; row=CLIP; init=scratch; arch=R50", "row=; train=CC3M; init=scratch; arch=R50"):
        with pytest.raises(ValueError, match="group"):
            PV.tsvlc_row(bad)


# --------------------------------------------------------------------------- bad rows

HEADER = ",".join(PV.COLUMNS) + "\n"
GOOD = ("tsvlc,TSVLC-T1a,Table 1(a),tsvlc_lora,vlchecklist,row=CLIP + LoRA; train=CC3M; init=pretrained; "
        "arch=ViT-B/32,vlchecklist/object/avg,80.93%,0.8093,,\n")


def test_a_good_row_parses():
    df = PV.parse_printed(io.StringIO(HEADER + GOOD), "x.csv", "tsvlc")
    assert df.loc[0, "text"] == "80.93%" and df.loc[0, "value"] == 0.8093 and math.isnan(df.loc[0, "std"])


@pytest.mark.parametrize(("header", "bad", "fragment"), [
    (HEADER.replace(",note", ",note,unit"), GOOD, "unknown: ['unit']"),
    (HEADER.replace(",std", ""), GOOD, "missing: ['std']"),
    (HEADER, GOOD.replace("80.93%", "80,93%"), "expected 11 fields"),
    (HEADER, GOOD.replace("80.93%", "eighty"), "unparseable text"),
    (HEADER, GOOD.replace("80.93%", "80.93%%"), "unparseable text"),
    (HEADER, GOOD.replace("0.8093", "0.8094"), "value 0.8094 does not match text '80.93%'"),
    (HEADER, GOOD.replace("0.8093", "80.93"), "does not match text"),
    (HEADER, GOOD.replace("0.8093", ".8093"), "not a plain decimal"),
    (HEADER, GOOD.replace("80.93%,0.8093", "180.93%,1.8093"), "outside [0, 1]"),
    (HEADER, GOOD.replace("0.8093,,", "0.8093,-0.1,"), "std '-0.1'"),
    (HEADER, GOOD.replace("0.8093,,", "0.8093,,a | "), "empty part"),
    (HEADER, GOOD.replace("tsvlc,TSVLC", "aro,TSVLC"), "paper 'aro' in the file of 'tsvlc'"),
    (HEADER, GOOD.replace("TSVLC-T1a", "CE-T1"), "not a tsvlc catalog id"),
    (HEADER, GOOD.replace("Table 1(a)", " "), "empty source"),
    (HEADER, GOOD.replace("init=pretrained", "init=lora"), "init must be one of"),
    (HEADER, GOOD.replace("row=CLIP + LoRA; ", ""), "is not 'row=...; train=...; init=...; arch=...'"),
    (HEADER, GOOD.replace("0.8093,,", "0.8093,,other note"), "duplicate of line 2"),
])
def test_a_bad_row_names_the_file_and_line(header, bad, fragment):
    line = 1 if header != HEADER else 3
    with pytest.raises(ValueError, match=rf"bad\.csv: line {line}\b") as err:
        PV.parse_printed(io.StringIO(header + GOOD + bad), "bad.csv", "tsvlc")
    assert fragment in str(err.value)


def test_a_views_own_check_and_the_packaged_file_names():
    def no_lora(row: dict[str, str]) -> str | None:
        return "no LoRA here" if "LoRA" in row["group"] else None

    with pytest.raises(ValueError, match=r"x\.csv: line 2: no LoRA here"):
        PV.parse_printed(io.StringIO(HEADER + GOOD), "x.csv", "tsvlc", no_lora)
    with pytest.raises(ValueError, match="x.csv: no rows"):
        PV.parse_printed(io.StringIO(HEADER), "x.csv", "tsvlc")
    with pytest.raises(ValueError, match="unknown paper 'negclip'"):
        PV.load_printed("negclip")
    assert PV.data_file("aro") == "printed/aro.csv"


def test_a_bad_row_of_a_file_on_disk_names_its_path(tmp_path):
    path = tmp_path / "tsvlc.csv"
    path.write_text(HEADER + GOOD.replace("0.8093", "0.8"))
    with pytest.raises(ValueError, match=rf"{path}: line 2: value 0.8 does not match"):
        PV.load_printed("tsvlc", path)
