"""Writing tables: the CSV holds numbers (never "0.515 ± 0.008", never "nan"), the reading side the formatted cells
with the legend under them, in a box that scrolls instead of cutting a wide table off."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from vlcomp.reporting.render import Table, cell, inline_html, number, printed, save_table, table_html

NAN = re.compile(r"\bnan\b", re.IGNORECASE)  # a cell that reads "nan"


def test_cell_formats_by_hand():
    assert cell(0.5153, 0.0081, 3) == "0.515 ± 0.008"
    assert cell(0.5153, math.nan, 1) == "0.515 (n=1)"  # a single run says so
    assert cell(0.5153) == "0.515"  # not a statistic over runs
    assert cell(math.nan, 0.1, 3) == "" and cell(0.5, math.nan, pd.NA) == "0.500"
    assert number(-0.0123, signed=True) == "-0.012" and number(None) == "" and number(math.nan) == ""
    assert printed(0.59) == "0.59" and printed(0.595, 0.006) == "0.595 ± 0.006" and printed(None) == ""


def test_save_table_writes_numbers_to_csv_and_text_with_legend(tmp_path):
    data = pd.DataFrame({"model": ["CLIP", "NegCLIP"], "mean": [0.5, 0.6153], "spread": [np.nan, 0.0081],
                         "n": pd.array([1, 3], dtype="Int64")})
    shown = pd.DataFrame({"model": ["CLIP", "NegCLIP"], "VG-R (toy)": ["0.500 (n=1)", "0.615 ± 0.008"]})
    save_table(Table(data, shown, "± = over 3 chains.", ["*Paper inconsistency*: x."]), tmp_path, "T")
    csv = pd.read_csv(tmp_path / "tables" / "T.csv")
    assert csv["mean"].dtype == float and csv["spread"].dtype == float and pd.isna(csv.loc[0, "spread"])
    assert "±" not in (tmp_path / "tables" / "T.csv").read_text()
    md = (tmp_path / "tables" / "T.md").read_text()
    assert "0.615 ± 0.008" in md and md.rstrip().endswith("*Paper inconsistency*: x.") and "± = over 3 chains." in md
    assert "% ± = over 3 chains." in (tmp_path / "tables" / "T.tex").read_text()


def test_table_html_has_no_nan_scrolls_and_shows_the_legend():
    data = pd.DataFrame({"config": ["a"], "VG-R": [np.nan], "seconds": [420.0], "lr": [0.0005], "x": [0.48163]})
    html = table_html(Table(data, legend="Single seed: no spread. `code` and *emphasis*."))
    assert not NAN.search(html) and "overflow-x:auto" in html and "table-layout:auto" in html
    assert ">420<" in html and ">0.0005<" in html and ">0.4816<" in html
    assert "<code>code</code>" in html and "<em>emphasis</em>" in html
    assert inline_html("a < b **c**") == "a &lt; b <strong>c</strong>"


@pytest.mark.parametrize("empty", [pd.DataFrame(columns=["a"])])
def test_empty_tables_still_write(tmp_path, empty):
    save_table(Table(empty, legend="none"), tmp_path, "E")
    assert (tmp_path / "tables" / "E.md").read_text().startswith("*(no rows)*")
    assert "(no rows)" in table_html(Table(empty))
