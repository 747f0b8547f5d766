"""The results page's generated block (docs/results.md) is what the committed outputs say
(scripts/readme_results.py --check), and README.md links to that page."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_results_page_block_matches_the_committed_metrics():
    res = subprocess.run([sys.executable, str(REPO / "scripts" / "readme_results.py"), "--check"], cwd=REPO,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_the_block_lives_in_docs_results_and_the_readme_links_to_it():
    sys.path.insert(0, str(REPO / "scripts"))
    from readme_results import BEGIN, END, TARGET

    assert TARGET == Path("docs/results.md")
    page = (REPO / TARGET).read_text()
    assert page.count(BEGIN) == 1 and page.count(END) == 1 and page.index(BEGIN) < page.index(END)
    readme = (REPO / "README.md").read_text()
    assert BEGIN not in readme and END not in readme, "the generated block moved to docs/results.md"
    assert "(docs/results.md)" in readme, "README.md does not link to docs/results.md"


def test_splice_needs_the_markers():
    sys.path.insert(0, str(REPO / "scripts"))
    import pytest
    from readme_results import BEGIN, END, splice

    assert splice(f"a\n{BEGIN}\nold\n{END}\nb", f"{BEGIN}\nnew\n{END}") == f"a\n{BEGIN}\nnew\n{END}\nb"
    with pytest.raises(ValueError, match="markers"):
        splice("no block here", "x")
