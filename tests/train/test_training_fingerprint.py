"""Cross-machine fingerprint: the tiny run trains the recorded bits on the CPU kind they were recorded on.

The stages' kernel pin gives the same bits on every CPU of a kind, not on every CPU: other CPU kinds (an AMD EPYC
against the recording Intel Xeon, for one) give other bits under the same pinned AVX2 kernels. On another CPU kind,
torch version or capability the test skips, naming both machines and the digests obtained.
"""

from __future__ import annotations

import pytest
import torch

from vlcomp.determinism import cpu_model_and_flags

from .tiny_run import pinned_digests

#: Where RECORDED was taken: /proc/cpuinfo's "model name", torch's version, torch's CPU capability under the pin.
RECORDED_ON = {"cpu": "Intel(R) Xeon(R) Processor @ 2.80GHz", "torch": "2.14.1", "capability": "AVX2"}
#: The digests there; recompute on that machine with tiny_run.pinned_digests({"defaults": {}})[0]["defaults"].
RECORDED = {"toy-vit-p8": "e74bff6c2a88bc08", "toy-rn16": "4118778b4f342fcb"}


def test_tiny_run_trains_the_recorded_bits_on_the_recording_cpu_kind() -> None:
    """The digests of tiny_run's NegCLIP run (CFG, both architectures; weights, history without timings, sampler
    generator), trained under the pin with one thread: equal to RECORDED on RECORDED_ON's CPU kind, reported
    elsewhere."""
    digests, capability = pinned_digests({"defaults": {}})
    got = digests["defaults"]
    here = {"cpu": cpu_model_and_flags()[0], "torch": torch.__version__.split("+")[0], "capability": capability}
    if here != RECORDED_ON:
        pytest.skip(f"digests recorded on {RECORDED_ON}: {RECORDED}; this machine is {here}: {got}"
                    f"{' (the same)' if got == RECORDED else ''}")
    assert got == RECORDED, f"on the recording CPU kind {RECORDED_ON}"
