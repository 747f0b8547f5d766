"""The BatchNorm-statistics probe (scripts/probe_batchnorm.py, item 11 of the world issue): the run names it reads
and the summary of chain spreads and NegCLIP - CLIP-FT differences, from hand-made rows. The re-estimation itself
is tested against a naive computation in test_probe_perception.py (vlcomp.models.batchnorm)."""

import importlib.util
import sys
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("open_clip")
_scripts = Path(__file__).resolve().parents[1] / "scripts"
sys.path.insert(0, str(_scripts))
_spec = importlib.util.spec_from_file_location("probe_batchnorm", _scripts / "probe_batchnorm.py")
probe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(probe)


def test_identity_reads_base_and_finetune_runs():
    assert probe.identity("base/b1") == {"model": "base/b1", "method": "base", "chain": "b1"}
    assert probe.identity("finetune/negclip-b2s0") == {"model": "finetune/negclip-b2s0", "method": "negclip",
                                                        "chain": "b2"}
    with pytest.raises(SystemExit, match="--models"):
        probe.identity("finetune/whatever")


def test_summary_by_hand():
    key = probe.KEYS[0]
    rows = []
    for stats, clip_ft, negclip in (("stored", (0.50, 0.60, 0.70), (0.52, 0.58, 0.80)),
                                    ("reestimated", (0.60, 0.60, 0.60), (0.61, 0.62, 0.63))):
        for chain, a, b in zip(("b0", "b1", "b2"), clip_ft, negclip, strict=True):
            rows += [{"method": "clip_ft", "chain": chain, "stats": stats, key: a},
                     {"method": "negclip", "chain": chain, "stats": stats, key: b}]
    s = probe.summary(pd.DataFrame(rows)).set_index(["method", "stats"])
    assert s.loc[("clip_ft", "stored"), "std"] == pytest.approx(0.1)
    assert s.loc[("clip_ft", "reestimated"), "std"] == pytest.approx(0.0)
    # differences per chain: stored 0.02, -0.02, 0.10 (mean 0.0333); re-estimated 0.01, 0.02, 0.03 (SD 0.01)
    assert s.loc[("negclip-clip_ft", "stored"), "mean"] == pytest.approx(0.1 / 3, abs=1e-6)
    assert s.loc[("negclip-clip_ft", "reestimated"), "std"] == pytest.approx(0.01)
    assert s.loc[("negclip-clip_ft", "reestimated"), "count"] == 3
