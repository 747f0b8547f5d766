"""ARO's stands-for table names the chains' default bases only (a base of another family stands for another model)."""

from __future__ import annotations

import json

import pandas as pd

from vlcomp.reporting.collect import Methods
from vlcomp.reporting.papers.aro.toy import ReportContext, stands_for_table


def test_stands_for_lists_the_default_bases_only(tmp_path):
    (tmp_path / "summary.json").write_text(json.dumps({}))
    params = {"clip": {"arch": "toy-rn16"}, "evaluate": {"benchmarks": []},
              "bases": {"b0": {"seed": 0}, "b1": {"seed": 1}, "vit-b0": {"seed": 0, "family": "vit"},
                        "rn32-b0": {"seed": 0, "family": "rn32", "arch": "toy-rn32"}}}
    ctx = ReportContext(pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), params, tmp_path, tmp_path, tmp_path,
                        Methods((), {}), tmp_path)
    first = stands_for_table(ctx).data.iloc[0]
    assert first["toy twin"].startswith("base models `clip-b0`, `clip-b1` (tiny open_clip `toy-rn16`")
    assert first["stands for"] == "OpenAI CLIP ViT-B/32"
