"""Checkpoints: saving changes nothing, resuming after an interruption or a SIGKILL is bitwise the uninterrupted
run (weights, history but the timing field, the sampler generator's final state), a checkpoint of another run
is refused by name, a failed or killed save never costs the previous checkpoint."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from vlcomp.train import checkpoint as ckpt
from vlcomp.train.loop import TrainConfig

from .tiny_run import KILL_CFG, result, run

HELPER = Path(__file__).with_name("tiny_run.py")


class Interrupt(Exception):
    pass


def _assert_same(a: dict, b: dict) -> None:
    assert a["state"].keys() == b["state"].keys()
    for k in a["state"]:
        assert torch.equal(a["state"][k], b["state"][k]), f"{k} differs"
    assert a["history"] == b["history"]
    assert a["rng"] == b["rng"]


@pytest.fixture(scope="module")
def reference() -> dict:
    """The uninterrupted run without checkpoints (what the default loop computes)."""
    return result(*run())


def _stop_at(k: int):
    def on_log(step: int, rec: dict) -> None:
        if step == k:
            raise Interrupt(step)

    return on_log


def test_checkpointing_changes_nothing(tmp_path, reference):
    _assert_same(result(*run(checkpoint_dir=tmp_path, checkpoint_every=3)), reference)
    state = torch.load(ckpt.checkpoint_file(tmp_path), weights_only=True)
    assert state["step"] == 10 and state["run"]["total_steps"] == 10
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.pt"]  # the last one only, no temporaries


# step 4: resumes from step 3 (mid-epoch, mid-log-window); 8: from 6 (second epoch); 10: the last step was
# trained but the final checkpoint not written, resumes from 9 (third epoch, first batch)
@pytest.mark.parametrize("stop", [4, 8, 10])
def test_resume_after_an_interruption_is_bitwise(tmp_path, reference, stop):
    with pytest.raises(Interrupt):
        run(checkpoint_dir=tmp_path, checkpoint_every=3, on_log=_stop_at(stop))
    assert torch.load(ckpt.checkpoint_file(tmp_path), weights_only=True)["step"] == 3 * ((stop - 1) // 3)
    logged = []
    resumed = run(checkpoint_dir=tmp_path, checkpoint_every=3, resume=True, on_log=lambda s, r: logged.append(s))
    _assert_same(result(*resumed), reference)
    assert logged == [s for s in (2, 4, 6, 8, 10) if s > 3 * ((stop - 1) // 3)]


def test_resuming_a_finished_run_trains_nothing_and_matches(tmp_path, reference):
    run(checkpoint_dir=tmp_path, checkpoint_every=3)
    logged = []
    again = run(checkpoint_dir=tmp_path, checkpoint_every=3, resume=True, on_log=lambda s, r: logged.append(s))
    _assert_same(result(*again), reference)
    assert logged == []


def test_resume_without_a_checkpoint_starts_afresh(tmp_path, reference):
    _assert_same(result(*run(checkpoint_dir=tmp_path / "new", checkpoint_every=3, resume=True)), reference)


def test_resume_after_sigkill_in_another_process(tmp_path):
    """A real kill: the training process dies (SIGKILL) after its first checkpoint; a new process resumes."""
    out, cdir = tmp_path / "result.pt", tmp_path / "ckpt"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    cmd = [sys.executable, str(HELPER), str(out), str(cdir)]
    proc = subprocess.Popen([*cmd, "--sleep", "0.25"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not ckpt.checkpoint_file(cdir).exists():
            assert proc.poll() is None, f"training process ended early: {proc.stderr.read().decode()[-2000:]}"
            assert time.monotonic() < deadline, "no checkpoint after 60 s"
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL and not out.exists()
    killed_at = torch.load(ckpt.checkpoint_file(cdir), weights_only=True)["step"]
    assert 2 <= killed_at < 10
    subprocess.run(cmd, env=env, check=True, capture_output=True)
    _assert_same(torch.load(out, weights_only=True), result(*run(KILL_CFG)))


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("finished")
    run(checkpoint_dir=d, checkpoint_every=5)
    return d


@pytest.mark.parametrize(("change", "named"), [
    (dict(cfg=TrainConfig(lr=1e-3, epochs=5, batch_size=4, warmup_steps=2, log_every=2)), "total_steps is 10"),
    (dict(cfg=TrainConfig(lr=1e-3, epochs=2.5, batch_size=8, warmup_steps=2, log_every=2), n_images=16),
     "batch_size is 4"),
    (dict(cfg=TrainConfig(lr=2e-3, epochs=2.5, batch_size=4, warmup_steps=2, log_every=2)), "config.lr is 0.001"),
    (dict(n_images=9), "rows is 16"),
    (dict(arch="toy-rn16"), "does not match the model"),
])
def test_a_checkpoint_of_another_run_is_refused_by_name(finished, change, named):
    with pytest.raises(ValueError, match=rf"^{re.escape(str(ckpt.checkpoint_file(finished)))}: .*{named}"):
        run(checkpoint_dir=finished, checkpoint_every=5, resume=True, **change)


def test_an_unreadable_checkpoint_is_named(tmp_path):
    ckpt.checkpoint_file(tmp_path).write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match=rf"^{re.escape(str(ckpt.checkpoint_file(tmp_path)))}: cannot read checkpoint"):
        run(checkpoint_dir=tmp_path, checkpoint_every=5, resume=True)
    torch.save({"state_dict": {}}, ckpt.checkpoint_file(tmp_path))  # a weights file, not a training checkpoint
    with pytest.raises(ValueError, match="not a format-1 training checkpoint"):
        run(checkpoint_dir=tmp_path, checkpoint_every=5, resume=True)


def test_a_failed_save_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    stale = tmp_path / ".checkpoint.pt.killed.tmp"  # what a save killed mid-write leaves
    stale.write_bytes(b"half")
    saves = []
    real_save = torch.save

    def failing_save(obj, f):
        saves.append(obj["step"])
        if len(saves) == 2:
            Path(f).write_bytes(b"half-written")
            raise OSError("disk full")
        real_save(obj, f)

    monkeypatch.setattr(ckpt.torch, "save", failing_save)
    with pytest.raises(OSError, match="disk full"):
        run(checkpoint_dir=tmp_path, checkpoint_every=3)
    assert saves == [3, 6]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.pt"]  # stale and failed temporaries gone
    assert torch.load(ckpt.checkpoint_file(tmp_path), weights_only=True)["step"] == 3


@pytest.mark.parametrize(("options", "message"), [
    (dict(checkpoint_every=3), "need a checkpoint_dir"),
    (dict(resume=True), "need a checkpoint_dir"),
    (dict(checkpoint_dir="x", checkpoint_every=0), "checkpoint_every=0: must be a positive"),
    (dict(checkpoint_dir="x", checkpoint_every=2.5), "checkpoint_every=2.5: must be a positive"),
])
def test_checkpoint_options_are_checked(options, message):
    with pytest.raises(ValueError, match=message):
        run(**options)
