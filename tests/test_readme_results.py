"""The README's results block is what the committed outputs say (scripts/readme_results.py --check)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_readme_results_block_matches_the_committed_metrics():
    res = subprocess.run([sys.executable, str(REPO / "scripts" / "readme_results.py"), "--check"], cwd=REPO,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_splice_needs_the_markers():
    sys.path.insert(0, str(REPO / "scripts"))
    import pytest
    from readme_results import BEGIN, END, splice

    assert splice(f"a\n{BEGIN}\nold\n{END}\nb", f"{BEGIN}\nnew\n{END}") == f"a\n{BEGIN}\nnew\n{END}\nb"
    with pytest.raises(ValueError, match="markers"):
        splice("no block here", "x")
