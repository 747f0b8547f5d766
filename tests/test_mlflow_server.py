"""A real `mlflow server` on loopback (sqlite backend, served artifacts): a stage logs to it over HTTP and
the run reads back with its tags, params, metrics and artifact."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(url: str, proc: subprocess.Popen, log: Path, timeout: float = 120.0) -> None:
    t0 = time.time()
    while time.time() - t0 < timeout:
        if proc.poll() is not None:
            raise RuntimeError(f"mlflow server exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(f"mlflow server did not answer {url} in {timeout} s:\n{log.read_text()[-3000:]}")


@pytest.mark.slow
def test_stage_logs_to_a_real_server_over_http(tmp_path, monkeypatch):
    port = _free_port()
    log = tmp_path / "server.log"
    env = {**os.environ, "MLFLOW_BACKEND_STORE_URI": f"sqlite:///{tmp_path / 'server.db'}",
           "MLFLOW_ARTIFACTS_DESTINATION": str(tmp_path / "artifacts"), "PORT": str(port),
           "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
    env.pop("HOST", None)  # the script's default: loopback only
    with open(log, "w") as f:
        proc = subprocess.Popen(["bash", str(REPO / "scripts" / "mlflow_server.sh")], env=env, cwd=tmp_path,
                                stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait(f"http://127.0.0.1:{port}/health", proc, log)
        uri = f"http://127.0.0.1:{port}"
        monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
        monkeypatch.setenv("VLCOMP_TRACKING", "on")
        from vlcomp.tracking import stage_run

        note = tmp_path / "note.txt"
        note.write_text("provenance")
        with stage_run("finetune@negclip-s0", experiment="aro", profile="toy", paper="aro", method="negclip",
                       seed=0, params={"finetune": {"lr": 5e-4}}) as run:
            run.log_metrics({"aro/vg_relation/macro_acc": 0.5}, step=1)
            run.log_artifact(note)
        from mlflow.tracking import MlflowClient

        client = MlflowClient(tracking_uri=uri)
        got = client.get_run(run.run_id)
        assert got.data.tags["dvc_stage"] == "finetune@negclip-s0" and got.data.tags["method"] == "negclip"
        assert got.data.params["finetune.lr"] == "0.0005"
        assert got.data.metrics["aro/vg_relation/macro_acc"] == 0.5
        # what the UI reads to pick the experiment's landing page, over the server's REST API: the runs table
        with urllib.request.urlopen(f"{uri}/api/2.0/mlflow/experiments/get-by-name?experiment_name=aro",
                                    timeout=10) as r:
            tags = {t["key"]: t["value"] for t in json.loads(r.read())["experiment"].get("tags", [])}
        assert tags["mlflow.experimentKind"] == "custom_model_development"
        path = client.download_artifacts(run.run_id, "note.txt", str(tmp_path / "dl"))
        assert Path(path).read_text() == "provenance"
        assert any((tmp_path / "artifacts").rglob("note.txt"))  # stored by the server, not the client
        # bound to loopback only
        listening = subprocess.run(["ss", "-ltn"], capture_output=True, text=True).stdout \
            if subprocess.run(["which", "ss"], capture_output=True).returncode == 0 else ""
        if listening:
            assert f"127.0.0.1:{port}" in listening and f"0.0.0.0:{port}" not in listening
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
