"""The toy report's long table reads the metrics tree through the one reader (vlcomp.reporting.tree): the same
folders, the same validation of metrics.json, a missing provenance.json named; every model's chain comes from its
provenance or params, and the legends say what a spread is over, from the data."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from vlcomp.reporting.collect import (
    chains,
    collect,
    ignored_models,
    methods_of,
    provenance,
    runs_phrase,
    spread_legend,
    summary,
    with_difference,
    with_mean,
)
from vlcomp.reporting.tree import Chain, model_dirs

PARAMS = {"bases": {"b0": {"seed": 0}, "b1": {"seed": 1}},
          "variants": {"negclip-b0s0": {"method": "negclip", "base": "b0", "seed": 0},
                       "negclip-b1s0": {"method": "negclip", "base": "b1", "seed": 0}}}
METHODS = methods_of({"methods": {"negclip": {"label": "NegCLIP"}}})


def _write(folder: Path, metrics: object, provenance: dict | None) -> None:
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps(metrics))
    if provenance is not None:
        (folder / "provenance.json").write_text(json.dumps(provenance))


def test_long_table_has_one_row_per_model_and_metric_with_its_chain(tmp_path):
    _write(tmp_path / "negclip-b1s0", {"a": 0.5, "b": 1}, {"model": "negclip-b1s0", "method": "negclip", "base": "b1",
                                                           "seed": 0, "dvc_stage": "evaluate@negclip-b1s0"})
    _write(tmp_path / "clip-b0", {"a": 0.25}, {"model": "clip-b0", "method": "clip", "base": "b0", "seed": None})
    _write(tmp_path / "negclip-b0s0", {"a": 0.75}, {"model": "negclip-b0s0"})  # old provenance: params say the rest
    (tmp_path / "released").mkdir()  # no metrics.json of its own: not a model folder
    (tmp_path / "notes.txt").write_text("not a folder")
    assert [d.name for d in model_dirs(tmp_path)] == ["clip-b0", "negclip-b0s0", "negclip-b1s0"]
    long = collect(tmp_path, PARAMS)
    assert list(zip(long["model"], long["key"], long["value"], strict=True)) == [
        ("clip-b0", "a", 0.25), ("negclip-b0s0", "a", 0.75), ("negclip-b1s0", "a", 0.5), ("negclip-b1s0", "b", 1.0)]
    assert list(zip(long["method"], long["base"], long["base_seed"], long["seed"], strict=True)) == [
        ("clip", "b0", "0", ""), ("negclip", "b0", "0", "0"), ("negclip", "b1", "1", "0"), ("negclip", "b1", "1", "0")]
    assert "git_commit" not in long.columns and "mlflow_run_id" not in long.columns
    s = summary(long).set_index(["method", "key"])
    assert s.loc[("negclip", "a"), "mean"] == pytest.approx(0.625) and s.loc[("negclip", "a"), "n"] == 2
    assert s.loc[("negclip", "b"), "n"] == 1 and math.isnan(s.loc[("negclip", "b"), "std"])  # one run: no spread
    prov = provenance(long)
    assert list(prov["model"]) == ["clip-b0", "negclip-b0s0", "negclip-b1s0"]
    r = prov[prov["model"] == "negclip-b1s0"].iloc[0]
    assert r["run_record"] == "runs/evaluate@negclip-b1s0.json"
    assert r["mlflow_runs"] == "experiment evaluate: tags.dvc_stage = 'evaluate@negclip-b1s0'"


def test_folders_params_no_longer_define_are_left_out_and_named(tmp_path):
    _write(tmp_path / "negclip-b0s0", {"a": 0.75}, {"model": "negclip-b0s0", "method": "negclip", "base": "b0",
                                                   "seed": 0})
    # a renamed row's old output, left in the workspace by DVC: same method, a chain params no longer have
    _write(tmp_path / "negclip_old-b0s0", {"a": 0.1}, {"model": "negclip_old-b0s0", "method": "negclip",
                                                       "base": "b0", "seed": 0})
    _write(tmp_path / "clip-b2", {"a": 0.2}, {"model": "clip-b2", "method": "clip", "base": "b2", "seed": None})
    assert ignored_models(tmp_path, PARAMS) == ["clip-b2", "negclip_old-b0s0"]
    long = collect(tmp_path, PARAMS)
    assert list(long["model"]) == ["negclip-b0s0"] and list(long["value"]) == [0.75]
    # params without bases / variants (the legacy single-base layout) define no set: every folder is read
    assert ignored_models(tmp_path, {}) == [] and sorted(set(collect(tmp_path)["model"])) == [
        "clip-b2", "negclip-b0s0", "negclip_old-b0s0"]
    assert ignored_models(tmp_path / "absent", PARAMS) == []


def test_missing_provenance_and_malformed_metrics_are_named(tmp_path):
    _write(tmp_path / "a" / "clip", {"a": 0.5}, None)
    with pytest.raises(FileNotFoundError, match="clip/provenance.json: missing"):
        collect(tmp_path / "a")
    _write(tmp_path / "b" / "clip", {"a": True}, {"model": "clip", "method": "clip"})
    with pytest.raises(ValueError, match="clip/metrics.json: expected a JSON object of numbers"):
        collect(tmp_path / "b")
    with pytest.raises(FileNotFoundError, match="no metrics.json under it"):
        collect(tmp_path / "empty")


def test_runs_phrase_says_what_a_set_of_chains_is():
    assert runs_phrase([Chain("clip", f"b{k}", str(k)) for k in range(3)]) == "3 base seeds (0, 1, 2)"
    assert runs_phrase([Chain("clip", "b0", "0")]) == "1 run (base seed 0), no spread"
    assert runs_phrase([Chain("clip")]) == "1 run (the single base model), no spread"
    grid = [Chain("negclip", f"b{k}", str(k), str(s)) for k in range(3) for s in range(2)]
    assert runs_phrase(grid) == "6 whole chains (base seeds 0, 1, 2 x fine-tune seeds 0, 1)"
    assert runs_phrase(grid[:3]) == "3 whole chains (base, fine-tune seed: (0, 0), (0, 1), (1, 0))"
    assert runs_phrase([Chain("negclip", seed="0"), Chain("negclip", seed="1")]) == "2 fine-tune seeds (0, 1) of one base"
    assert runs_phrase([Chain("x", "b4", "4", "2")]) == "1 run (base seed 4, fine-tune seed 2), no spread"


def _chain_long() -> pd.DataFrame:
    rows = [("clip-b0", "clip", "b0", "0", "", "k", 0.5), ("clip-b1", "clip", "b1", "1", "", "k", 0.7),
            ("negclip-b0s0", "negclip", "b0", "0", "0", "k", 0.6), ("negclip-b1s0", "negclip", "b1", "1", "0", "k", 0.8),
            ("negclip-b0s0", "negclip", "b0", "0", "0", "j", 0.1)]
    return pd.DataFrame(rows, columns=["model", "method", "base", "base_seed", "seed", "key", "value"])


def test_spread_legend_is_generated_from_the_data():
    long = _chain_long()
    text = spread_legend(long, METHODS, ["k"])
    assert text.startswith("± = sample standard deviation (ddof = 1) over whole-chain runs")
    assert "CLIP: 2 base seeds (0, 1); NegCLIP: 2 whole chains (base seeds 0, 1 x fine-tune seed 0)." in text
    assert "(n=1)" not in text
    one = spread_legend(long, METHODS, ["j"])
    assert "NegCLIP: 1 run (base seed 0, fine-tune seed 0), no spread" in one and one.count("CLIP:") == 1
    assert "A cell marked (n=1) is a single run" in one
    assert spread_legend(long, METHODS, ["nothing"]) == "No reproduced values: no spread."
    assert [c.label for c in chains(long, "negclip")] == ["b0s0", "b1s0"]


def test_derived_metrics_are_per_model():
    k = _chain_long().query("key == 'k'")
    long = pd.concat([k, k.assign(key="m", value=lambda d: d["value"] / 2)], ignore_index=True)
    out = with_difference(long, "k-m", "k", "m")
    got = out[out["key"] == "k-m"].set_index("model")["value"]
    assert got["clip-b1"] == pytest.approx(0.35) and got["negclip-b0s0"] == pytest.approx(0.3)
    s = summary(out).set_index(["method", "key"])
    assert s.loc[("clip", "k-m"), "mean"] == pytest.approx(0.3) and s.loc[("clip", "k-m"), "std"] == pytest.approx(
        math.sqrt(2 * 0.05**2))  # (0.25, 0.35): ddof=1
    mean = with_mean(long, "avg", ["k", "m"])
    assert mean[mean["key"] == "avg"].set_index("model")["value"]["clip-b0"] == pytest.approx(0.375)
    assert len(with_mean(long, "none", ["k", "absent"])) == len(long)  # no model has both
