"""One MLflow summary run per method in the experiment `evaluate` (vlcomp.summary_runs)."""

from __future__ import annotations

import pandas as pd
import pytest

from vlcomp.summary_runs import log_summaries, summary_payloads

LONG = pd.DataFrame([
    {"model": "clip-b0", "method": "clip", "key": "aro/vg_relation/macro_acc", "value": 0.5},
    {"model": "clip-b1", "method": "clip", "key": "aro/vg_relation/macro_acc", "value": 0.6},
    {"model": "negclip-b0s0", "method": "negclip", "key": "aro/vg_relation/macro_acc", "value": 0.7},
    {"model": "negclip-b0s0", "method": "negclip", "key": "ccneg/acc", "value": 0.9},
])


def test_payloads_by_hand():
    got = summary_payloads(LONG)
    clip = got["clip"]
    assert clip["metrics"]["aro/vg_relation/macro_acc"] == pytest.approx(0.55)
    # sample std of (0.5, 0.6): sqrt(((-0.05)^2 + 0.05^2) / 1) = 0.0707107
    assert clip["metrics"]["spread/aro/vg_relation/macro_acc"] == pytest.approx(0.0707107, abs=1e-7)
    assert clip["params"]["n_chains"] == 2 and clip["params"]["models"] == "clip-b0,clip-b1"
    neg = got["negclip"]["metrics"]
    assert neg == {"aro/vg_relation/macro_acc": 0.7, "ccneg/acc": 0.9}  # one chain: no spread key


def test_summary_runs_land_beside_the_model_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("VLCOMP_TRACKING", "on")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    ids = log_summaries(LONG, profile="toy", params={"methods": {"negclip": {"paper": "aro"}}})
    assert len(ids) == 2
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name("evaluate")
    runs = client.search_runs([exp.experiment_id], filter_string="tags.summary = 'true'")
    by = {r.data.tags["method"]: r for r in runs}
    assert set(by) == {"clip", "negclip"}
    assert by["negclip"].data.tags["paper"] == "aro" and by["negclip"].data.tags["dvc_stage"] == "summary@negclip"
    assert by["clip"].data.params["seed"] == "all" and by["clip"].data.params["n_chains"] == "2"
    assert by["clip"].data.metrics["aro/vg_relation/macro_acc"] == pytest.approx(0.55)
