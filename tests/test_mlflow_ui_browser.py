"""The MLflow UI in a real browser (headless Debian Chromium): the link the README and `make ui` give lands on an
experiment's runs table; the plain link lands on MLflow 3's GenAI overview, which is why the link carries
``vlcomp.tracking.UI_QUERY``. Skipped where Chromium is not installed (`.ci/run` installs it)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from test_mlflow_server import _free_port, _wait  # tests/ is on sys.path (rootdir conftest)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")


def rendered(url: str, profile: Path) -> str:
    """The DOM of ``url`` after its scripts ran (a fresh browser profile: nothing remembered)."""
    out = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=20000",
                          "--dump-dom", url], capture_output=True, text=True, timeout=180)
    return out.stdout


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium not installed")
def test_the_ui_link_lands_on_the_runs_table(tmp_path, monkeypatch):
    port = _free_port()
    log = tmp_path / "server.log"
    with open(log, "w") as f:
        proc = subprocess.Popen([sys.executable, "-m", "mlflow", "server", "--backend-store-uri",
                                 f"sqlite:///{tmp_path / 'ui.db'}", "--host", "127.0.0.1", "--port", str(port)],
                                stdout=f, stderr=subprocess.STDOUT, cwd=tmp_path, start_new_session=True)
    try:
        _wait(f"http://127.0.0.1:{port}/health", proc, log)
        base = f"http://127.0.0.1:{port}"
        monkeypatch.setenv("MLFLOW_TRACKING_URI", base)
        monkeypatch.setenv("VLCOMP_TRACKING", "on")
        from vlcomp.tracking import stage_run, ui_url

        with stage_run("finetune@negclip-s0", experiment="training", profile="toy", paper="aro", method="negclip",
                       seed=0) as run:
            run.log_metrics({"train/contrastive_loss": 1.0})
        from mlflow.tracking import MlflowClient

        exp = MlflowClient(tracking_uri=base).get_experiment_by_name("training").experiment_id
        runs = rendered(ui_url(base, exp), tmp_path / "a")
        assert "finetune@negclip-s0" in runs and ">Runs<" in runs  # the runs table, with the stage's run
        overview = rendered(f"{base}/#/experiments/{exp}", tmp_path / "b")
        assert "Overview" in overview and "finetune@negclip-s0" not in overview  # MLflow 3's GenAI default
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
