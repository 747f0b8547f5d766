"""scripts/calibration_run.py: rows from a finished workspace, replaced per configuration; the report's table."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

import calibration_run as cr  # noqa: E402

from vlcomp.reporting.papers.aro import toy as R  # noqa: E402


def _model(ws: Path, name: str, method: str, base: str, seed: int | None, vgr: float) -> None:
    d = ws / "metrics" / name
    d.mkdir(parents=True)
    (d / "metrics.json").write_text(json.dumps({"aro/vg_relation/macro_acc": vgr, "other/key": 1.0}))
    (d / "provenance.json").write_text(json.dumps({"method": method, "base": base, "seed": seed}))


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    _model(ws, "clip-b0", "clip", "b0", None, 0.5)
    _model(ws, "clip-b1", "clip", "b1", None, 0.6)
    _model(ws, "negclip-b0s0", "negclip", "b0", 0, 0.7)
    _model(ws, "negclip-b1s0", "negclip", "b1", 0, 0.9)
    (ws / "runs").mkdir()
    for i, cpu in enumerate((60.0, 120.0, 30.0)):
        (ws / "runs" / f"s{i}.json").write_text(json.dumps({"cpu_seconds": cpu, "git_commit": "abc"}))
    return ws


def test_collect_rows_and_cpu_minutes(tmp_path: Path) -> None:
    rows = cr.collect(_workspace(tmp_path), "layout", {"world": {"x": 1}}, 600.0)
    assert list(rows["model"]) == ["clip-b0", "clip-b1", "negclip-b0s0", "negclip-b1s0"]
    assert list(rows["method"]) == ["clip", "clip", "negclip", "negclip"]
    assert rows["aro/vg_relation/macro_acc"].tolist() == [0.5, 0.6, 0.7, 0.9]
    assert pd.isna(rows["sugarcrepe/replace_rel/acc"].iloc[0])  # a key the model did not log: empty, not 0
    assert set(rows["cpu_minutes"]) == {3.5} and set(rows["wall_minutes"]) == {10.0}
    assert set(rows["overlay"]) == {'{"world": {"x": 1}}'} and set(rows["git_commit"]) == {"abc"}


def test_collect_without_models_names_the_folder(tmp_path: Path) -> None:
    (tmp_path / "metrics").mkdir()
    with pytest.raises(SystemExit, match="no evaluated model"):
        cr.collect(tmp_path, "x", {}, None)


def test_write_rows_replaces_only_the_same_configuration(tmp_path: Path) -> None:
    out = tmp_path / "cal.csv"
    cr.write_rows(out, pd.DataFrame({"config": ["a", "a", "b"], "v": [1, 2, 3]}))
    cr.write_rows(out, pd.DataFrame({"config": ["a"], "v": [9]}))
    got = pd.read_csv(out)
    assert sorted(zip(got["config"], got["v"], strict=True)) == [("a", 9), ("b", 3)]


def test_full_calibration_table_mean_spread_per_method(tmp_path: Path) -> None:
    out = tmp_path / "cal.csv"
    cr.write_rows(out, cr.collect(_workspace(tmp_path), "default", {}, None))
    table = R.full_calibration_table(out)
    neg = table.data.set_index("method").loc["negclip"]
    assert neg["aro/vg_relation/macro_acc/mean"] == pytest.approx(0.8)
    assert neg["aro/vg_relation/macro_acc/std"] == pytest.approx(math.sqrt(0.02))  # ddof 1 over the 2 chains
    assert neg["aro/vg_relation/macro_acc/count"] == 2
    assert "± = sample standard deviation over whole chains" in table.legend
    assert R.full_calibration_table(tmp_path / "absent.csv") is None


def test_caption_stats_table_puts_corpora_side_by_side(tmp_path: Path) -> None:
    path = tmp_path / "stats.csv"
    pd.DataFrame({"corpus": ["real", "twin", "real", "twin"], "overlay": ["", "", "", ""],
                  "statistic": ["share_and", "share_and", "words_mean", "words_mean"],
                  "value": [0.2, 0.5, 10.0, 9.0]}).to_csv(path, index=False)
    data = R.caption_stats_table(path).data.set_index("statistic")
    assert data.loc["share_and", "twin - real"] == pytest.approx(0.3)
    assert data.loc["words_mean", "real"] == 10.0
