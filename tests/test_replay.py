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
    put("models/base/b0/model.json", {"arch": "toy-rn16", "base": "b0"})
    put("models/base/b0/history.json", [{"step": 20, "contrastive_loss": 3.0}, {"step": 40, "contrastive_loss": 2.5}])
    put("data/mined/negclip-b0/summary.json", {"mine/negclip/n_captions": 15})
    put("data/parsed/coco_train/summary.json", {"split": "coco_train", "n_captions": 15, "spacy_pipeline": "en_x-1"})
    put("models/lr/negclip-b0/selection.json", {"method": "negclip-b0", "selected_lr": 0.001,
                                                "grid": {"0.001": {"mean_recall_at_1": 0.2}}})
    put("models/finetune/negclip-b0s1/model.json", {"method": "negclip", "base": "b0", "seed": 1, "lr": 0.001})
    put("models/finetune/negclip-b0s1/history.json", [{"step": 10, "contrastive_loss": 1.0, "hard_negative_acc": 0.6}])
    put("metrics/negclip-b0s1/metrics.json", {"aro/vg_attribution/macro_acc": 0.63, "aro/x/n": 5})
    put("metrics/negclip-b0s1/provenance.json", {"dvc_stage": "evaluate@negclip-b0s1", "method": "negclip",
                                                 "base": "b0", "seed": 1, "n_items": {"vg": 5}})
    put("metrics/clip-b0/metrics.json", {"aro/vg_attribution/macro_acc": 0.6})
    put("metrics/clip-b0/provenance.json", {"dvc_stage": "evaluate_base@b0", "method": "clip", "base": "b0",
                                            "seed": None})
    put("params.yaml", {"mining": {"negclip-b0": {"generator": "negclip", "base": "b0"}},
                        "selections": {"negclip-b0": {"method": "negclip", "base": "b0", "generator": "negclip"}}})


def test_collect_finds_every_stage(tmp_path):
    _tree(tmp_path)
    runs = {r.stage: r for r in collect(tmp_path, profile="toy")}
    assert set(runs) == {"world", "pretrain@b0", "parse@coco_train", "mine@negclip-b0", "select_lr@negclip-b0",
                         "finetune@negclip-b0s1", "evaluate@negclip-b0s1", "evaluate_base@b0"}
    assert runs["parse@coco_train"].metrics == {"parse/n_captions": 15.0}
    assert runs["world"].metrics == {"web/n_images": 30.0}
    assert runs["select_lr@negclip-b0"].metrics == {"lr_0.001/mean_recall_at_1": 0.2, "selected_lr": 0.001}
    assert (runs["select_lr@negclip-b0"].tags["method"], runs["select_lr@negclip-b0"].tags["base"]) == ("negclip", "b0")
    assert (runs["mine@negclip-b0"].tags["method"], runs["mine@negclip-b0"].tags["base"]) == ("negclip", "b0")
    ev = runs["evaluate@negclip-b0s1"]
    assert ev.experiment == "evaluate" and (ev.tags["base"], ev.tags["seed"]) == ("b0", "1")
    assert runs["evaluate_base@b0"].tags["seed"] == "n/a"
    ft = runs["finetune@negclip-b0s1"].tags
    assert (ft["method"], ft["base"], ft["seed"]) == ("negclip", "b0", "1")
    assert all(r.tags["replayed"] == "true" and r.tags["profile"] == "toy" for r in runs.values())


def test_replay_into_a_fresh_store_and_skip_on_rerun(tmp_path):
    _tree(tmp_path)
    uri = f"sqlite:///{tmp_path / 'fresh.db'}"
    runs = collect(tmp_path, profile="toy")
    assert {w for _, w in replay(runs, uri)} == {"logged"}
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name("evaluate")
    (run,) = client.search_runs([exp.experiment_id], filter_string="tags.dvc_stage = 'evaluate@negclip-b0s1'")
    assert run.data.metrics["aro/vg_attribution/macro_acc"] == 0.63
    assert run.data.params["n_items.vg"] == "5" and run.data.tags["dvc_stage"] == "evaluate@negclip-b0s1"
    aro = client.get_experiment_by_name("training")
    ft = client.search_runs([aro.experiment_id], filter_string="tags.dvc_stage = 'pretrain@b0'")[0]
    hist = client.get_metric_history(ft.info.run_id, "contrastive_loss")
    assert [(m.step, m.value) for m in sorted(hist, key=lambda m: m.step)] == [(20, 3.0), (40, 2.5)]
    # rerun: everything is already there
    assert {w for _, w in replay(runs, uri)} == {"skipped"}
    assert {w for _, w in replay(runs[:1], uri, force=True)} == {"logged"}


def test_collect_names_a_broken_file(tmp_path):
    _tree(tmp_path)
    (tmp_path / "metrics/negclip-b0s1/metrics.json").write_text('{"a": ')
    with pytest.raises(ValueError, match=r"metrics/negclip-b0s1/metrics\.json: not valid JSON"):
        collect(tmp_path, profile="toy")
