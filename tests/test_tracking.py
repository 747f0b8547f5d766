"""MLflow tracking: a stage run lands in a SQLite store with the tags, params and metrics the design asks for."""

from __future__ import annotations

import pytest

from vlcomp.tracking import check_key, flatten, stage_run


def test_check_key_rejects_at_sign():
    assert check_key("aro/vg_relation/macro_acc") == "aro/vg_relation/macro_acc"
    with pytest.raises(ValueError, match="R@1"):
        check_key("R@1")


def test_flatten_nested_params():
    assert flatten({"a": {"b": 1, "c": {"d": 2}}, "e": 3}) == {"a.b": 1, "a.c.d": 2, "e": 3}


def test_stage_run_logs_tags_params_metrics(tmp_path, monkeypatch):
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.setenv("VLCOMP_TRACKING", "on")
    monkeypatch.chdir(tmp_path)
    with stage_run("finetune@negclip-s1", experiment="aro", profile="toy", paper="aro", method="negclip", seed=1,
                   params={"finetune": {"lr_grid": [0.1, 0.2]}}) as tr:
        tr.log_metrics({"aro/vg_relation/macro_acc": 0.75})
        tr.log_metrics({"train/contrastive_loss": 1.5}, step=3)
        run_id = tr.run_id
    run = MlflowClient(tracking_uri=uri).get_run(run_id)
    tags = run.data.tags
    for key, expected in {"dvc_stage": "finetune@negclip-s1", "profile": "toy", "paper": "aro",
                          "method": "negclip", "seed": "1"}.items():
        assert tags[key] == expected
    assert "git_commit" in tags
    assert run.data.params["finetune.lr_grid"] == "[0.1, 0.2]"
    assert run.data.metrics["aro/vg_relation/macro_acc"] == pytest.approx(0.75)
    assert run.data.metrics["train/contrastive_loss"] == pytest.approx(1.5)
    # the UI opens the experiment on its runs table, not on MLflow 3's GenAI overview
    from vlcomp.tracking import EXPERIMENT_KIND, EXPERIMENT_KIND_TAG

    experiment = MlflowClient(tracking_uri=uri).get_experiment_by_name("aro")
    assert experiment.tags[EXPERIMENT_KIND_TAG] == EXPERIMENT_KIND == "custom_model_development"


def test_an_experiment_kind_set_by_hand_is_kept(tmp_path, monkeypatch):
    from mlflow.tracking import MlflowClient

    from vlcomp.tracking import EXPERIMENT_KIND_TAG

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.setenv("VLCOMP_TRACKING", "on")
    client = MlflowClient(tracking_uri=uri)
    exp_id = client.create_experiment("evaluate", tags={EXPERIMENT_KIND_TAG: "genai_development"})
    with stage_run("evaluate_base", experiment="evaluate", profile="toy", paper="all"):
        pass
    assert client.get_experiment(exp_id).tags[EXPERIMENT_KIND_TAG] == "genai_development"


def test_tracking_off_is_a_noop(monkeypatch, tmp_path):
    monkeypatch.setenv("VLCOMP_TRACKING", "off")
    monkeypatch.chdir(tmp_path)
    with stage_run("world", experiment="aro", profile="toy", paper="aro") as tr:
        tr.log_metrics({"x": 1.0})
        assert tr.run_id is None
    assert not (tmp_path / "mlflow.db").exists()


def test_git_commit_ignores_dvc_lock_but_not_source(tmp_path):
    """DVC rewrites dvc.lock mid-pipeline; provenance must not read "-dirty" for that, only for source edits."""
    import subprocess

    from vlcomp.tracking import git_commit

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "dvc.lock").write_text("a\n")
    (tmp_path / "pipelines" / "p" / "m").mkdir(parents=True)
    (tmp_path / "pipelines" / "p" / "m" / "dvc.lock").write_text("a\n")  # a per-paper pipeline file's lock
    (tmp_path / "code.py").write_text("x = 1\n")
    git("add", "-A")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init")
    clean = git_commit(tmp_path)
    assert not clean.endswith("-dirty") and len(clean) == 40
    (tmp_path / "dvc.lock").write_text("b\n")
    (tmp_path / "pipelines" / "p" / "m" / "dvc.lock").write_text("b\n")
    assert git_commit(tmp_path) == clean
    (tmp_path / "code.py").write_text("x = 2\n")
    assert git_commit(tmp_path) == clean + "-dirty"


def test_evaluation_params_always_carry_method_seed_and_lr():
    from vlcomp.tracking import NOT_APPLICABLE, evaluation_params

    base = evaluation_params("clip-b0", "clip", "b0", None, {"arch": "toy-rn16", "trained_on": "web"}, ["vg_relation"])
    assert base == {"model": "clip-b0", "method": "clip", "base": "b0", "seed": NOT_APPLICABLE, "lr": NOT_APPLICABLE,
                    "arch": "toy-rn16", "trained_on": "web", "benchmarks": ["vg_relation"]}
    tuned = evaluation_params("negclip-b1s1", "negclip", "b1", 1, {"lr": 0.001, "method": "negclip", "seed": 1}, [])
    assert (tuned["method"], tuned["base"], tuned["seed"], tuned["lr"]) == ("negclip", "b1", 1, 0.001)
