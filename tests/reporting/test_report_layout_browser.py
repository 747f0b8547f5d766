"""The layout check of the report pages in a real browser (headless Debian Chromium, tests/chromium.py) can fail:
a table wider than the window outside a scrolling box, or a run-on opening paragraph, is caught; the same table in
the reports' own scroll box (vlcomp.reporting.render.table_html) passes. The report pages themselves are checked
where they are rendered: the smoke pipeline (ARO, TSVLC, the index) and the TSVLC template on its fake workspace."""

from __future__ import annotations

import pandas as pd
import pytest

from chromium import CHROMIUM, check_report_page, layout  # tests/ is on sys.path (rootdir conftest)
from vlcomp.reporting.render import Table, table_html

pytestmark = [pytest.mark.slow, pytest.mark.skipif(CHROMIUM is None, reason="Chromium not installed")]

WIDE = pd.DataFrame({f"a rather long column name {i}": ["0.512 ± 0.034 (n=3)"] for i in range(40)})


def _page(body: str) -> str:
    return f"<!doctype html><html><head><meta charset='utf-8'></head><body><h1 id='top'>t</h1>{body}</body></html>"


def test_a_wide_table_outside_a_scroll_box_is_caught(tmp_path):
    page = tmp_path / "bad.html"
    page.write_text(_page(WIDE.to_html()))
    lay = layout(page, tmp_path)
    assert lay.overflows and lay.cut_tables and lay.page_width > 1400
    with pytest.raises(AssertionError, match="px wide in a 1400-px window"):
        check_report_page(page, tmp_path)


def test_the_reports_scroll_box_keeps_the_page_in_the_window(tmp_path):
    page = tmp_path / "good.html"
    page.write_text(_page("<p>Short opening.</p>" + table_html(Table(WIDE))))
    lay = check_report_page(page, tmp_path, first_screen=("top",))
    assert lay.tables[0]["width"] > 1400 and lay.tables[0]["scrolls"]
    assert (tmp_path / f"{tmp_path.name}-good.png").exists()


def test_a_run_on_opening_paragraph_is_caught(tmp_path):
    page = tmp_path / "wordy.html"
    page.write_text(_page("<p>" + "word " * 400 + "</p>" + table_html(Table(WIDE.iloc[:, :2]))))
    with pytest.raises(AssertionError, match="a paragraph of 400 words before the first table"):
        check_report_page(page, tmp_path)


def test_an_element_below_the_first_screen_is_caught(tmp_path):
    page = tmp_path / "late.html"
    page.write_text(_page("<div style='height:2000px'></div><h2 id='verdicts'>v</h2>"))
    with pytest.raises(AssertionError, match="'verdicts' starts at"):
        check_report_page(page, tmp_path, first_screen=("verdicts",))
