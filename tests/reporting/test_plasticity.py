"""The report's plasticity-probe table keeps each run's first and last evaluation."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from vlcomp.reporting.papers.aro.toy import plasticity_figure, plasticity_table
from vlcomp.reporting.render import save_figure


def _csv(tmp_path: Path) -> Path:
    rows = []
    for start, vals in (("base", [0.52, 0.50, 0.51]), ("scratch", [0.50, 0.70, 0.86])):
        for step, v in zip((0, 150, 300), vals, strict=True):
            rows.append({"start": start, "pretrain_samples": -1 if start == "base" else 0, "arch": "toy-rn16",
                         "lr": 1e-3, "seed": 0, "step": step, "samples": step * 128, "col_rel": v,
                         "rel_any": 0.5, "rel_lr": 0.5, "train_hn_acc": 0.5 + step / 1000, "seconds": step / 3,
                         "git_commit": "abc"})
    path = tmp_path / "plasticity.csv"
    pd.DataFrame(rows[::-1]).to_csv(path, index=False)  # order in the file must not matter
    return path


def test_plasticity_table_first_and_last_points(tmp_path: Path) -> None:
    t = plasticity_table(_csv(tmp_path)).set_index("start")
    assert t.loc["scratch", "col_rel at step 0"] == 0.50 and t.loc["scratch", "col_rel"] == 0.86
    assert t.loc["base", "col_rel at step 0"] == 0.52 and t.loc["base", "col_rel"] == 0.51
    assert t.loc["base", "fine-tune steps"] == 300 and t.loc["base", "fine-tune samples"] == 38400
    assert t.loc["scratch", "train_hn_acc"] == 0.8


def test_plasticity_absent_file_is_none(tmp_path: Path) -> None:
    assert plasticity_table(tmp_path / "nope.csv") is None
    assert plasticity_figure(tmp_path / "nope.csv") is None


def test_plasticity_figure_written(tmp_path: Path) -> None:
    fig = plasticity_figure(_csv(tmp_path))
    assert "no spread" in fig.legend and len(fig.figure.axes) == 2
    out = save_figure(fig.figure, tmp_path, "plasticity_probe")
    assert out.exists() and out.suffix == ".png" and out.with_suffix(".pdf").exists()


def test_plasticity_table_keeps_colour_share_runs_apart_and_shows_vga(tmp_path: Path) -> None:
    base = {"start": "scratch", "pretrain_samples": 0, "arch": "toy-rn16", "lr": 1e-3, "seed": 0, "rel_any": 0.5,
            "rel_lr": 0.5, "train_hn_acc": 0.6, "seconds": 1.0, "git_commit": "abc"}
    rows = [{**base, "colour_share": share, "step": step, "samples": step * 128, "col_rel": v,
             **({"vga_macro": vga, "vga_colour": vga + 0.1} if step == 100 else {})}
            for share, vga in ((0.5, 0.6), (0.1, 0.52)) for step, v in ((0, 0.5), (100, 0.5 + share))]
    path = tmp_path / "p.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    t = plasticity_table(path).set_index("colour_share")
    assert len(t) == 2
    assert t.loc[0.5, "col_rel"] == 1.0 and t.loc[0.1, "col_rel"] == 0.6
    assert t.loc[0.5, "vga_macro"] == 0.6 and t.loc[0.1, "vga_colour"] == pytest.approx(0.62)
