"""The numerics fingerprint (vlcomp.fingerprint, scripts/fingerprint.py): its pieces, and this machine against the
committed recording of its CPU kind.

The battery runs in a fresh process under the stages' default pin, as ``scripts/fingerprint.py`` runs it. On a CPU
kind with a recording in ``calibration/fingerprint/`` every op must give the recorded bits; on any other kind the
test skips, naming the ops that depart from each committed recording (departures across CPU kinds are expected:
docs/fingerprint.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from vlcomp import fingerprint as fp
from vlcomp.determinism import DEFAULT_THREADS, PIN, PIN_SWITCH, THREADS_ENV

ROOT = Path(__file__).resolve().parents[1]
RECORDINGS = ROOT / "calibration" / "fingerprint"
#: ops cheap enough to run several times in a unit test (the training run has its own, smaller, test)
QUICK = [name for name in fp.OPS if name != "train_toy_clip"]


@pytest.mark.parametrize("name", QUICK)
def test_an_op_hashes_the_same_bits_twice_and_other_inputs_otherwise(name: str) -> None:
    first, _, _, _ = fp.run_op(name, seed=0)
    again, _, _, _ = fp.run_op(name, seed=0)
    other, _, _, _ = fp.run_op(name, seed=1)
    assert first == again
    assert other != first


def test_the_training_run_is_stable_and_logs_every_step() -> None:
    small = {"batch": 8, "steps": 3}
    a, b = fp._train_toy_clip(0, **small), fp._train_toy_clip(0, **small)
    assert fp.digest(a.arrays) == fp.digest(b.arrays) and a.losses == b.losses and len(a.losses) == 3
    c = fp._train_toy_clip(1, **small)
    assert fp.digest(c.arrays) != fp.digest(a.arrays)
    assert all(np.isfinite(a.losses))


def test_digest_sees_every_bit_name_and_shape() -> None:
    x = torch.arange(12, dtype=torch.float32)
    base = fp.digest([("x", x)])
    assert fp.digest([("x", x.numpy().copy())]) == base  # a tensor and its array: the same bytes
    flipped = x.clone()
    flipped.view(torch.int32)[5] ^= 1  # the last bit of one element
    assert fp.digest([("x", flipped)]) != base
    assert fp.digest([("y", x)]) != base
    assert fp.digest([("x", x.view(3, 4))]) != base
    assert fp.digest([("x", x.double())]) != base
    assert fp.loss_text(5.7854986191) == "5.785498619"


def test_the_training_arch_is_the_pipelines() -> None:
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    assert fp.TRAIN_ARCH == params["clip"]["arch"], "fingerprint.TRAIN_ARCH must follow params.yaml clip.arch"


def test_slug_of_cpu_kinds() -> None:
    kind = {"vendor": "GenuineIntel", "model": "Intel(R) Xeon(R) Processor @ 2.80GHz", "flags": "avx avx2 avx512f",
            "torch": "2.14.1", "torch_capability": "AVX2"}
    assert fp.kind_slug(kind) == "intel-xeon-2.80ghz-avx512-torch2.14.1"
    assert fp.kind_slug({**kind, "model": "AMD EPYC", "flags": "sse4_2 avx avx2"}) == "amd-epyc-avx2-torch2.14.1"


def test_the_committed_recordings_are_of_the_stages_pin() -> None:
    """A recording stands for the stages' default pin: after a change of ``determinism.PIN`` each one is recorded
    again (or removed), so the machine test below compares rather than skips on a stale file."""
    paths = sorted(RECORDINGS.glob("*.json"))
    assert paths
    for path in paths:
        n = fp.load_recording(path)["numerics"]
        assert n["cpu_pin"] == "on" and {k: n.get(k) for k in PIN} == PIN, path.name
        assert n.get("torch_threads") == DEFAULT_THREADS, path.name


def _recording(ops: dict[str, str], losses: list[str] | None = None, **kind) -> dict:
    return {"format": fp.FORMAT,
            "cpu_kind": {"vendor": "V", "model": "M", "flags": "avx2", "torch": "2.14.1", "torch_capability": "AVX2",
                         **kind},
            "numerics": {"cpu_pin": "on", **PIN, "torch_threads": 1, "mkl_cbwr_in_force": "AUTO"},
            "ops": ops, "losses": {"train_toy_clip": losses or []}, "timings": {k: 1.0 for k in ops}}


def test_compare_names_the_departing_ops_the_first_departing_step_and_why() -> None:
    h = {c: c * 64 for c in "abcd"}
    ref = _recording({"mm": h["a"], "conv": h["b"], "gone": h["c"]}, ["1.000000000", "0.500000000", "0.25"])
    cur = _recording({"mm": h["a"], "conv": h["d"], "new": h["c"]}, ["1.000000000", "0.500000001", "0.25"],
                     vendor="W")
    cur["timings"] = {k: 99.0 for k in cur["ops"]}  # timings never count
    c = fp.compare(ref, cur)
    assert (c.same, c.differ, c.only_reference, c.only_current) == (["mm"], ["conv"], ["gone"], ["new"])
    assert c.loss_departs == {"train_toy_clip": 2} and not c.identical
    assert c.identity == {"cpu_kind.vendor": ("V", "W")}
    text = fp.report(c, ref, cur)
    assert "1 depart: conv" in text and "depart at step 2 (0.500000000 vs 0.500000001)" in text
    assert fp.compare(ref, ref).identical
    assert fp.hashed_part(ref) == fp.hashed_part({**ref, "timings": {}, "cpu_seconds": {"mm": 3.0}})


def test_a_malformed_recording_is_named(tmp_path: Path) -> None:
    good = _recording({"mm": "a" * 64})
    cases = {"bad.json": "{not json", "list.json": "[]",
             "format.json": json.dumps({**good, "format": 99}),
             "ops.json": json.dumps({**good, "ops": {"mm": "xyz"}}),
             "kind.json": json.dumps({**good, "cpu_kind": {"vendor": "V"}}),
             "nolosses.json": json.dumps({k: v for k, v in good.items() if k != "losses"})}
    for name, text in cases.items():
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(ValueError, match=name):
            fp.load_recording(path)
    with pytest.raises(FileNotFoundError, match="missing.json"):
        fp.load_recording(tmp_path / "missing.json")
    fp.write_recording(good, tmp_path / "ok.json")
    assert fp.load_recording(tmp_path / "ok.json") == good


def test_the_script_refuses_to_record_another_pin_and_a_bad_reference(tmp_path: Path) -> None:
    env = {**_clean_env(), PIN_SWITCH: "off"}
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "fingerprint.py"), "--record"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "VLCOMP_CPU_PIN='off'" in proc.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "fingerprint.py"), "--compare", str(bad),
                           "--current", str(bad)], env=_clean_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "bad.json" in proc.stderr


def _clean_env() -> dict[str, str]:
    """This environment without pin or thread settings, so the script applies the stages' defaults itself."""
    env = {k: v for k, v in os.environ.items() if k not in (PIN_SWITCH, THREADS_ENV, *PIN)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    return env


@pytest.mark.slow
def test_this_machine_computes_the_recorded_bits_of_its_cpu_kind(tmp_path: Path) -> None:
    """The whole battery in a fresh process under the default pin (as ``scripts/fingerprint.py`` records it),
    against ``calibration/fingerprint/<this CPU kind>.json``; on a CPU kind without a recording, a skip naming the
    ops that depart from each committed one."""
    out = tmp_path / "here.json"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "fingerprint.py"), "--out", str(out)], env=_clean_env(),
                   check=True, capture_output=True, text=True, timeout=600)
    here = fp.load_recording(out)
    path = fp.recording_path(ROOT, here["cpu_kind"])
    if path.exists() and fp.identity(fp.load_recording(path)) == fp.identity(here):
        recorded = fp.load_recording(path)
        c = fp.compare(recorded, here)
        assert c.identical, f"{path.relative_to(ROOT)}: this machine departs from its recording\n" + fp.report(
            c, recorded, here)
        return
    others = []
    for other in sorted(RECORDINGS.glob("*.json")):
        c = fp.compare(fp.load_recording(other), here)
        steps = "".join(f", {k} losses from step {v}" for k, v in c.loss_departs.items())
        why = f"; differs in {', '.join(c.identity)}" if c.identity else ""
        others.append(f"{other.name}: {len(c.differ)} of {len(c.same) + len(c.differ)} ops depart "
                      f"({', '.join(c.differ) or 'none'}{steps}){why}")
    pytest.skip(f"no fingerprint recorded for this CPU kind and pin ({fp.kind_text(here['cpu_kind'])}; would be "
                f"{path.relative_to(ROOT)}); against the committed ones: {'; '.join(others) or 'none committed'}. "
                f"Record it with: python scripts/fingerprint.py --record")
