"""Stage ``benchmarks``, toy profile: every twin of ``benchmarks.twins`` built from the world in its benchmark's
released format (:mod:`vlcomp.twins`), then the shared perturbations and manifest
(:func:`vlcomp.eval.inputs.finish_benchmarks`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...config import build, section
from ...eval.inputs import BenchmarksConfig, finish_benchmarks
from ...twins import TwinContext, build_twin
from ...world import world_configs


def build_benchmarks(params: Mapping[str, Any], world: str | Path, out: Path,
                     names: Sequence[str] | None = None) -> dict[str, Any]:
    """Build the twins into ``out`` (an empty folder) and finish the benchmarks there; returns the manifest. Two
    twins setting the same input key is an error naming both."""
    cfg = build(BenchmarksConfig, section(params, "benchmarks"), "benchmarks")
    wcfg, ccfg, _ = world_configs(dict(params))
    ctx = TwinContext(Path(world), out, wcfg, section(params, "root_seed"), cfg.twins,
                      section(params, "nlp.spacy_model"), captions=ccfg)
    inputs: dict[str, Any] = {}
    counts: dict[str, int] = {}
    for twin in cfg.twins:
        result = build_twin(twin, ctx)
        clash = sorted(set(result.inputs) & set(inputs))
        if clash:
            raise ValueError(f"params benchmarks.twins: twin {twin!r} sets inputs {clash} another twin set")
        inputs |= result.inputs
        counts |= {f"{twin}/{k}": v for k, v in result.counts.items()}
    return finish_benchmarks(params, inputs, out, counts=counts, names=names)
