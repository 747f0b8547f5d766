"""The toy report's long table reads the metrics tree through the one reader (vlcomp.reporting.tree): the same
folders, the same validation of metrics.json, and a missing provenance.json named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlcomp.reporting.collect import collect, summary
from vlcomp.reporting.tree import model_dirs


def _write(folder: Path, metrics: object, provenance: dict | None) -> None:
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps(metrics))
    if provenance is not None:
        (folder / "provenance.json").write_text(json.dumps(provenance))


def test_long_table_has_one_row_per_model_and_metric(tmp_path):
    _write(tmp_path / "negclip-s1", {"a": 0.5, "b": 1}, {"model": "negclip-s1", "method": "negclip", "seed": 1})
    _write(tmp_path / "clip", {"a": 0.25}, {"model": "clip", "method": "clip", "seed": "", "git_commit": "abc"})
    (tmp_path / "released").mkdir()  # no metrics.json of its own: not a model folder
    (tmp_path / "notes.txt").write_text("not a folder")
    assert [d.name for d in model_dirs(tmp_path)] == ["clip", "negclip-s1"]
    long = collect(tmp_path)
    assert list(zip(long["model"], long["key"], long["value"], strict=True)) == [
        ("clip", "a", 0.25), ("negclip-s1", "a", 0.5), ("negclip-s1", "b", 1.0)]
    assert list(long["seed"]) == ["", "1", "1"] and long.loc[0, "git_commit"] == "abc"
    s = summary(long).set_index(["method", "key"])
    assert s.loc[("negclip", "b"), "n_seeds"] == 1 and s.loc[("negclip", "b"), "std"] == 0.0


def test_missing_provenance_and_malformed_metrics_are_named(tmp_path):
    _write(tmp_path / "a" / "clip", {"a": 0.5}, None)
    with pytest.raises(FileNotFoundError, match="clip/provenance.json: missing"):
        collect(tmp_path / "a")
    _write(tmp_path / "b" / "clip", {"a": True}, {"model": "clip", "method": "clip"})
    with pytest.raises(ValueError, match="clip/metrics.json: expected a JSON object of numbers"):
        collect(tmp_path / "b")
    with pytest.raises(FileNotFoundError, match="no metrics.json under it"):
        collect(tmp_path / "empty")
