"""The CPU pin (torch and oneDNN kernels capped at AVX2, MKL's COMPATIBLE branch, fixed thread count) and the machine
record."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vlcomp.determinism import (
    DEFAULT_THREADS,
    PIN,
    PIN_SWITCH,
    THREADS_ENV,
    cpu_model_and_flags,
    machine_record,
    pin_environment,
    thread_count,
)

SRC = Path(__file__).resolve().parents[1] / "src"


def test_pin_sets_all_three_libraries_and_can_be_lifted():
    env: dict[str, str] = {}
    assert pin_environment(env) == PIN
    assert env == {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_CBWR": "COMPATIBLE"}
    off = {PIN_SWITCH: "off"}
    assert pin_environment(off) == {} and off == {PIN_SWITCH: "off"}
    same_case_insensitive = {"ATEN_CPU_CAPABILITY": "AVX2"}
    pin_environment(same_case_insensitive)  # already pinned: fine


def test_pin_refuses_a_contradicting_variable_and_names_it():
    with pytest.raises(ValueError, match=r"ATEN_CPU_CAPABILITY='avx512'.*VLCOMP_CPU_PIN=off"):
        pin_environment({"ATEN_CPU_CAPABILITY": "avx512"})
    with pytest.raises(ValueError, match="VLCOMP_CPU_PIN='maybe'"):
        pin_environment({PIN_SWITCH: "maybe"})


def test_thread_count_default_and_bad_values():
    assert thread_count({}) == DEFAULT_THREADS == 1
    assert thread_count({THREADS_ENV: "3"}) == 3
    for bad in ("0", "-1", "two", ""):
        with pytest.raises(ValueError, match=THREADS_ENV):
            thread_count({THREADS_ENV: bad})


def _capability(env: dict[str, str]) -> dict:
    code = ("import json, torch; a = torch.ones(3) + 1; from vlcomp.determinism import machine_record; "
            "print(json.dumps(machine_record()))")
    out = subprocess.run([sys.executable, "-c", code], env={**env, "PYTHONPATH": str(SRC)}, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def test_pinned_process_runs_avx2_kernels_and_records_the_machine():
    base = {k: v for k, v in os.environ.items() if k not in PIN and k != PIN_SWITCH}
    pinned = _capability({**base, **PIN})
    assert pinned["torch_capability"] in ("AVX2", "DEFAULT")
    assert pinned["cpu_pin"] == "on" and pinned["mkl_cbwr"] == "COMPATIBLE"
    assert pinned["mkl_cbwr_in_force"] == "COMPATIBLE"  # what MKL runs, read back from it (honoured on AMD too)
    assert {"cpu_model", "cpu_flags", "torch", "numpy", "torch_threads"} <= set(pinned)
    _, flags = cpu_model_and_flags()
    if "avx512f" not in flags:
        pytest.skip("no AVX-512 on this CPU: the unpinned capability is the pinned one")
    free = _capability({**base, PIN_SWITCH: "off"})
    assert free["torch_capability"] == "AVX512" and free["cpu_pin"] == "off"
    assert free["mkl_cbwr"] == "" and free["mkl_cbwr_in_force"] in ("OFF", "BRANCH_OFF")  # no CNR asked for


def test_check_pinned_catches_torch_having_chosen_other_kernels():
    """The pin set after a torch operation already ran is too late for ATen: the stage refuses to run."""
    _, flags = cpu_model_and_flags()
    if "avx512f" not in flags:
        pytest.skip("needs an AVX-512 CPU to see a difference")
    base = {k: v for k, v in os.environ.items() if k not in PIN and k != PIN_SWITCH}
    code = ("import torch; torch.ones(3).sum(); import vlcomp.determinism as d; d.pin_environment(); "
            "d.check_pinned()")
    res = subprocess.run([sys.executable, "-c", code], env={**base, "PYTHONPATH": str(SRC)}, capture_output=True,
                         text=True)
    assert res.returncode != 0 and "torch runs AVX512 kernels" in res.stderr


def test_machine_record_of_the_test_process():
    rec = machine_record()
    assert rec["cpu_pin"] == "on"  # tests/conftest.py pins, as the stages do
    assert rec["torch_capability"] in ("AVX2", "DEFAULT")
    assert isinstance(rec["cpu_count"], int) and rec["torch_threads"] >= 1
    assert rec["mkl_cbwr"] == "COMPATIBLE" and rec["mkl_cbwr_in_force"] == "COMPATIBLE"


def test_a_record_taken_before_the_pin_does_not_fix_mkls_branch():
    """machine_record reads MKL's branch with a matmul, which fixes the branch for the process: while the pin is not
    yet in the environment it leaves MKL alone, so the pin set afterwards is still the branch MKL runs. (ATen's two
    variables are set from the start here: the record reads torch's capability, which fixes ATen's kernels.)"""
    base = {k: v for k, v in os.environ.items() if k not in PIN and k != PIN_SWITCH}
    base.update({k: v for k, v in PIN.items() if k != "MKL_CBWR"})
    code = ("import json, vlcomp.determinism as d; early = d.machine_record(); d.pin_environment(); "
            "print(json.dumps([early['mkl_cbwr_in_force'], d.machine_record()['mkl_cbwr_in_force']]))")
    out = subprocess.run([sys.executable, "-c", code], env={**base, "PYTHONPATH": str(SRC)}, check=True,
                         capture_output=True, text=True).stdout
    assert json.loads(out) == ["", "COMPATIBLE"]


def test_stage_run_writes_a_run_record_outside_the_outputs(tmp_path, monkeypatch):
    from vlcomp.tracking import RUNS_DIR, stage_run

    monkeypatch.chdir(tmp_path)
    with stage_run("evaluate@x", experiment="e", profile="toy", paper="aro"):
        pass
    rec = json.loads((tmp_path / RUNS_DIR / "evaluate@x.json").read_text())
    assert rec["stage"] == "evaluate@x" and rec["status"] == "finished" and rec["mlflow_run_id"] is None
    assert rec["machine"]["cpu_pin"] == "on" and rec["seconds"] >= 0 and rec["cpu_seconds"] >= 0
    with pytest.raises(RuntimeError), stage_run("evaluate@x", experiment="e", profile="toy", paper="aro"):
        raise RuntimeError("boom")
    assert json.loads((tmp_path / RUNS_DIR / "evaluate@x.json").read_text())["status"] == "failed"
