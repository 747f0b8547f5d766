"""`evaluate_released`: the real profile's evaluation-only entry point, on released-format fixtures."""

from __future__ import annotations

import json

import pytest

from vlcomp.config import expand_inputs
from vlcomp.eval.run import read_tables
from vlcomp.profiles.real.evaluate import evaluate_released

from .formats import merged

NAMES = ["sugarcrepe", "vg_relation", "valse"]


def _params(fix, models):
    return {"real_inputs": fix.inputs, "released_models": {},
            "real_evaluate": {"models": models, "device": "cpu"}, "evaluate": {"benchmarks": NAMES}}


def test_metrics_come_from_saved_tables_and_match_hand_values(tmp_path):
    fix = merged(NAMES, tmp_path / "data")
    logged = {}

    class Run:
        run_id = "r1"

        def __init__(self, name):
            self.name = name

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return None

        def log_metrics(self, m):
            logged.setdefault(self.name, {}).update(m)

    out = tmp_path / "out"
    results = evaluate_released(_params(fix, ["lookup", "lookup_cross"]), out,
                                scorers={"lookup": fix.scorer(), "lookup_cross": fix.scorer(cross=True)},
                                log_run=lambda name, used: Run(name))
    for model in ("lookup", "lookup_cross"):
        metrics = json.loads((out / model / "metrics.json").read_text())
        assert metrics == results[model] == {k: v for k, v in logged[model].items() if not k.startswith("time/")}
        assert logged[model]["time/total_s"] >= 0  # timings go to MLflow only, never into metrics.json
        for key, want in fix.expected.items():
            assert metrics[key] == pytest.approx(want, abs=1e-9), (model, key)
        prov = json.loads((out / model / "provenance.json").read_text())
        # run ids and commits go to MLflow and runs/<stage>.json, never into an output a later stage reads
        assert prov["profile"] == "real" and not {"mlflow_run_id", "git_commit"} & set(prov)
        assert set(read_tables(out / model)) == set(prov["n_items"])


def test_a_failing_model_keeps_the_previous_complete_result(tmp_path):
    fix = merged(NAMES, tmp_path / "data")
    out = tmp_path / "out"
    evaluate_released(_params(fix, ["m"]), out, scorers={"m": fix.scorer()})
    before = (out / "m" / "metrics.json").read_text()
    broken = dict(fix.inputs, sugarcrepe_dir=str(tmp_path / "nowhere"))
    params = dict(_params(fix, ["m"]), real_inputs=broken)
    with pytest.raises((ValueError, FileNotFoundError), match="nowhere"):
        evaluate_released(params, out, scorers={"m": fix.scorer()})
    assert (out / "m" / "metrics.json").read_text() == before


def test_unknown_model_and_empty_lists_are_named(tmp_path):
    with pytest.raises(ValueError, match="'ghost' has no entry in released_models"):
        evaluate_released({"real_evaluate": {"models": ["ghost"], "device": "cpu"},
                           "evaluate": {"benchmarks": ["sugarcrepe"]}}, tmp_path)
    with pytest.raises(ValueError, match="real_evaluate.models"):
        evaluate_released({"real_evaluate": {"models": []}, "evaluate": {"benchmarks": ["sugarcrepe"]}}, tmp_path)
    with pytest.raises(ValueError, match="evaluate.benchmarks"):
        evaluate_released({"real_evaluate": {"models": ["m"]}, "evaluate": {"benchmarks": []}}, tmp_path)
    with pytest.raises(ValueError, match=r"evaluate.benchmarks: unknown benchmark 'nope'"):
        evaluate_released({"real_evaluate": {"models": ["m"]}, "evaluate": {"benchmarks": ["nope"]}}, tmp_path)


def test_expand_inputs_expands_nested_values(monkeypatch):
    monkeypatch.setenv("VLCOMP_DATA", "/d")
    monkeypatch.delenv("VLCOMP_UNSET", raising=False)
    got = expand_inputs({"a": "$VLCOMP_DATA/x", "b": {"c": "$VLCOMP_DATA/y"}, "n": 5, "u": "$VLCOMP_UNSET/z"})
    assert got == {"a": "/d/x", "b": {"c": "/d/y"}, "n": 5, "u": "$VLCOMP_UNSET/z"}
