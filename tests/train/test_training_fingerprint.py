"""Cross-machine fingerprint: the tiny run trains the recorded bits on each CPU kind they were recorded on.

The stages' kernel pin gives the same bits on every CPU of a kind, not on every CPU: an AMD EPYC and an Intel Xeon
give other bits under the same pinned AVX2 kernels (both recorded below). On a CPU kind, torch version or capability
with no record the test skips, naming this machine and the digests it obtained (add them to RECORDED to track it).
"""

from __future__ import annotations

import pytest
import torch

from vlcomp.determinism import cpu_model_and_flags

from .tiny_run import pinned_digests

#: ``(/proc/cpuinfo "model name", torch version, torch's CPU capability under the pin)`` -> the digests of tiny_run's
#: NegCLIP run there; recompute on such a machine with ``tiny_run.pinned_digests({"defaults": {}})[0]["defaults"]``.
RECORDED = {
    ("Intel(R) Xeon(R) Processor @ 2.80GHz", "2.14.1", "AVX2"): {"toy-vit-p8": "e74bff6c2a88bc08",
                                                                 "toy-rn16": "4118778b4f342fcb"},
    ("AMD EPYC", "2.14.1", "AVX2"): {"toy-vit-p8": "4205499f4adb271f", "toy-rn16": "354f106308ea8cb0"},
}


def test_the_cpu_kinds_differ() -> None:
    """The record itself: the two CPU kinds train different bits (why the committed locks name their machine)."""
    assert len({tuple(sorted(d.items())) for d in RECORDED.values()}) == len(RECORDED)


def test_tiny_run_trains_the_recorded_bits_on_a_recorded_cpu_kind() -> None:
    """The digests of tiny_run's NegCLIP run (CFG, both architectures; weights, history without timings, sampler
    generator), trained under the pin with one thread: equal to the record of this CPU kind, reported elsewhere."""
    digests, capability = pinned_digests({"defaults": {}})
    got = digests["defaults"]
    here = (cpu_model_and_flags()[0], torch.__version__.split("+")[0], capability)
    if here not in RECORDED:
        same = [k for k, v in RECORDED.items() if v == got]
        pytest.skip(f"no digests recorded for {here}; this machine trains {got}"
                    f"{f' (as recorded on {same})' if same else ''}; recorded: {RECORDED}")
    assert got == RECORDED[here], f"on the recorded CPU kind {here}"
