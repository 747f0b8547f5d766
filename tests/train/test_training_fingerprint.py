"""Cross-machine fingerprint: the tiny run trains the recorded bits on each CPU kind they were recorded on.

The stages' kernel pin gives the same bits on every CPU of a kind, not (measured so far) on every CPU: an AMD EPYC
and an Intel Xeon gave other bits under the same pin (both recorded below). What MKL runs is part of a record's key:
MKL honours ``MKL_CBWR``'s ISA branches on Intel CPUs only (on the EPYC the pin's former ``MKL_CBWR=AVX2`` ran MKL's
``AUTO`` branch), and since 2026-11-29 the pin asks for ``COMPATIBLE`` (:mod:`vlcomp.determinism`), so a record
taken under another MKL branch is kept as history and never compared with a run under this one. On a CPU kind,
torch version, capability or MKL branch with no record the test skips, naming this machine and the digests it
obtained (add them to RECORDED to track it).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

from vlcomp.determinism import PIN, cpu_model_and_flags

from .tiny_run import pinned_digests

#: ``(/proc/cpuinfo "model name", torch version, torch's CPU capability under the pin, the MKL CNR branch MKL runs
#: under the pin)`` -> the digests of tiny_run's NegCLIP run there; recompute on such a machine with
#: ``tiny_run.pinned_digests({"defaults": {}})[0]["defaults"]``.
RECORDED = {
    # MKL_CBWR=COMPATIBLE (the pin since 2026-11-29); MKL reports COMPATIBLE in force (read back, mkl_cbwr_get)
    ("AMD EPYC", "2.14.1", "AVX2", "COMPATIBLE"): {"toy-vit-p8": "fc961c922d55a5b0", "toy-rn16": "1ba76723453db7fd"},
    # history, the pin's former MKL_CBWR=AVX2: on the EPYC MKL ran AUTO (read back, docs/fingerprint.md); on the Xeon
    # the branch was not read back, and is AVX2 by oneMKL's documentation (ISA branches are honoured on Intel CPUs)
    ("AMD EPYC", "2.14.1", "AVX2", "AUTO"): {"toy-vit-p8": "4205499f4adb271f", "toy-rn16": "354f106308ea8cb0"},
    ("Intel(R) Xeon(R) Processor @ 2.80GHz", "2.14.1", "AVX2", "AVX2"): {"toy-vit-p8": "e74bff6c2a88bc08",
                                                                         "toy-rn16": "4118778b4f342fcb"},
}


def mkl_branch_under_pin() -> str:
    """The MKL branch MKL runs in a process started as tiny_run's digest process is (the pin's variables set), read
    back from MKL (:func:`vlcomp.determinism.mkl_cbwr_in_force`; empty if torch's MKL cannot be asked)."""
    env = {**os.environ, **PIN, "OMP_NUM_THREADS": "1"}
    code = "from vlcomp.determinism import mkl_cbwr_in_force; print(mkl_cbwr_in_force())"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300,
                          check=True)
    return proc.stdout.strip()


def test_the_cpu_kinds_differ() -> None:
    """The record itself: the two CPU kinds, and one kind under two MKL branches, train different bits (why the
    committed locks name their machine, and why a change of the pin re-keys every stage)."""
    assert len({tuple(sorted(d.items())) for d in RECORDED.values()}) == len(RECORDED)


def test_tiny_run_trains_the_recorded_bits_on_a_recorded_cpu_kind() -> None:
    """The digests of tiny_run's NegCLIP run (CFG, both architectures; weights, history without timings, sampler
    generator), trained under the pin with one thread: equal to the record of this CPU kind and MKL branch,
    reported elsewhere."""
    digests, capability = pinned_digests({"defaults": {}})
    got = digests["defaults"]
    here = (cpu_model_and_flags()[0], torch.__version__.split("+")[0], capability, mkl_branch_under_pin())
    if here not in RECORDED:
        same = [k for k, v in RECORDED.items() if v == got]
        pytest.skip(f"no digests recorded for {here}; this machine trains {got}"
                    f"{f' (as recorded on {same})' if same else ''}; recorded: {RECORDED}")
    assert got == RECORDED[here], f"on the recorded CPU kind {here}"
