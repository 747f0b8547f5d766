"""A tiny toy world shared by the twin tests (generated once per session with the default world params)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vlcomp.config import load_params
from vlcomp.twins import TwinContext
from vlcomp.world import world_configs
from vlcomp.world.generate import SplitSpec, generate_world

REPO = Path(__file__).resolve().parents[2]
#: Split sizes of the tiny world (test splits only: twins never read the training splits).
TINY_SPLITS = {"vg_test": 150, "coco_test": 40, "flickr_test": 40}


@pytest.fixture(scope="session")
def tiny_world(tmp_path_factory) -> Path:
    """``<tmp>/world`` with the splits of :data:`TINY_SPLITS`, world knobs from the repository's params.yaml."""
    wcfg, ccfg, specs = world_configs(load_params(REPO / "params.yaml"))
    style = {s.name: s.style for s in specs}
    out = tmp_path_factory.mktemp("tiny") / "world"
    generate_world([SplitSpec(n, k, style[n]) for n, k in TINY_SPLITS.items()], wcfg, ccfg, seed=0, out_dir=out)
    return out


@pytest.fixture
def twin_context(tiny_world, tmp_path):
    """A fresh context over the tiny world, writing under ``tmp_path / "benchmarks"`` (options: defaults)."""
    wcfg, ccfg, _ = world_configs(load_params(REPO / "params.yaml"))

    def make(options_by_twin=None, seed: int = 0, out: Path | None = None) -> TwinContext:
        return TwinContext(tiny_world, out or tmp_path / "benchmarks", wcfg, seed, options_by_twin or {},
                           captions=ccfg)

    return make
