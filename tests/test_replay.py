"""Replaying DVC outputs into a fresh MLflow store (vlcomp.replay)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlcomp.replay import collect, replay


def _tree(root: Path) -> None:
    def put(rel: str, obj) -> None:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(obj))

    put("data/world/summary.json", {"web": {"n_images": 30, "stands_for": "web"}})
    put("models/base/model.json", {"arch": "toy-rn16"})
    put("models/base/history.json", [{"step": 20, "contrastive_loss": 3.0}, {"step": 40, "contrastive_loss": 2.5}])
    put("data/mined/negclip/summary.json", {"mine/negclip/n_captions": 15})
    put("models/lr/negclip/selection.json", {"method": "negclip", "selected_lr": 0.001,
                                             "grid": {"0.001": {"mean_recall_at_1": 0.2}}})
    put("models/finetune/negclip-s1/model.json", {"method": "negclip", "seed": 1, "lr": 0.001})
    put("models/finetune/negclip-s1/history.json", [{"step": 10, "contrastive_loss": 1.0, "hard_negative_acc": 0.6}])
    put("metrics/negclip-s1/metrics.json", {"aro/vg_attribution/macro_acc": 0.63, "aro/x/n": 5})
    put("metrics/negclip-s1/provenance.json", {"dvc_stage": "evaluate@negclip-s1", "git_commit": "abc",
                                               "method": "negclip", "seed": "1", "n_items": {"vg": 5}})


def test_collect_finds_every_stage(tmp_path):
    _tree(tmp_path)
    runs = {r.stage: r for r in collect(tmp_path, profile="toy")}
    assert set(runs) == {"world", "pretrain", "mine@negclip", "select_lr@negclip", "finetune@negclip-s1",
                         "evaluate@negclip-s1"}
    assert runs["world"].metrics == {"web/n_images": 30.0}
    assert runs["select_lr@negclip"].metrics == {"lr_0.001/mean_recall_at_1": 0.2, "selected_lr": 0.001}
    ev = runs["evaluate@negclip-s1"]
    assert ev.experiment == "evaluate" and ev.tags["git_commit"] == "abc" and ev.tags["seed"] == "1"
    assert runs["finetune@negclip-s1"].tags["method"] == "negclip" and runs["finetune@negclip-s1"].tags["seed"] == "1"
    assert all(r.tags["replayed"] == "true" and r.tags["profile"] == "toy" for r in runs.values())


def test_replay_into_a_fresh_store_and_skip_on_rerun(tmp_path):
    _tree(tmp_path)
    uri = f"sqlite:///{tmp_path / 'fresh.db'}"
    runs = collect(tmp_path, profile="toy")
    assert {w for _, w in replay(runs, uri)} == {"logged"}
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name("evaluate")
    (run,) = client.search_runs([exp.experiment_id])
    assert run.data.metrics["aro/vg_attribution/macro_acc"] == 0.63
    assert run.data.params["n_items.vg"] == "5" and run.data.tags["dvc_stage"] == "evaluate@negclip-s1"
    aro = client.get_experiment_by_name("training")
    ft = client.search_runs([aro.experiment_id], filter_string="tags.dvc_stage = 'pretrain'")[0]
    hist = client.get_metric_history(ft.info.run_id, "contrastive_loss")
    assert [(m.step, m.value) for m in sorted(hist, key=lambda m: m.step)] == [(20, 3.0), (40, 2.5)]
    # rerun: everything is already there
    assert {w for _, w in replay(runs, uri)} == {"skipped"}
    assert {w for _, w in replay(runs[:1], uri, force=True)} == {"logged"}


def test_collect_names_a_broken_file(tmp_path):
    _tree(tmp_path)
    (tmp_path / "metrics/negclip-s1/metrics.json").write_text('{"a": ')
    with pytest.raises(ValueError, match=r"metrics/negclip-s1/metrics\.json: not valid JSON"):
        collect(tmp_path, profile="toy")
