"""Toy twins of every benchmark of the five papers, written in each benchmark's released file format.

A twin is built from the toy world's exact scene graphs with the paper's own construction rules and written
exactly as the authors publish the benchmark (their JSON layouts, their field names, images as PNG files beside
the annotations), so the same loaders (:mod:`vlcomp.formats`) and the same benchmark records
(:mod:`vlcomp.benchmarks`) serve both profiles, and a researcher can point the authors' own evaluation scripts at
a twin.

Contract (one module per benchmark, registered in :data:`TWINS` under the benchmark family's name)::

    @TWINS.register("sugarcrepe")
    def build_sugarcrepe(ctx: TwinContext) -> TwinResult: ...

- ``ctx`` gives the world (``ctx.split("vg_test")``: images, scenes, captions), this twin's options
  (``ctx.options``: ``benchmarks.twins.<name>`` of params.yaml, smoke sizes in ``params.smoke.yaml``), seeded
  generators (``ctx.rng("purpose")``; never global randomness) and the twin's own output folder
  (``ctx.folder()`` = ``<benchmarks dir>/<name>``).
- The build returns :class:`TwinResult`: ``inputs``, the entries it adds to the inputs manifest (the same keys
  as ``real_inputs`` of the real profile; paths relative to the benchmarks dir, so the stage output can move),
  and ``counts`` (items written, for the stage summary and the report).

Everything a twin writes is a pure function of the world files, its options and ``root_seed``: byte-identical on
a re-run (PNG via :func:`vlcomp.twins.images.write_png`, JSON via :func:`vlcomp.io.write_json`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from ..registry import Registry
from ..seeding import np_rng
from ..world import Split
from ..world.scene import WorldConfig


@dataclass(frozen=True)
class TwinResult:
    """What a twin build hands back: manifest inputs (relative paths / settings) and item counts."""

    inputs: dict[str, Any]
    counts: dict[str, int] = field(default_factory=dict)


@dataclass
class TwinContext:
    """Everything a twin build may read. ``name`` is set by :func:`build_twin` to the twin being built."""

    world_dir: Path
    out: Path
    wcfg: WorldConfig
    seed: int
    options_by_twin: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    spacy_model: str | None = None
    name: str = ""

    @property
    def options(self) -> dict[str, Any]:
        """``benchmarks.twins.<name>`` (empty when not set: the twin's defaults apply)."""
        return dict(self.options_by_twin.get(self.name) or {})

    def rng(self, *keys: object) -> np.random.Generator:
        """A generator of its own for ``keys`` (stable across runs and independent of other twins)."""
        return np_rng(self.seed, "twins", self.name, *keys)

    def split(self, name: str) -> Split:
        return Split(self.world_dir, name)

    def folder(self, *parts: str) -> Path:
        """``<benchmarks dir>/<twin name>/<parts...>``, created."""
        path = self.out.joinpath(self.name, *parts)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def rel(self, path: str | Path) -> str:
        """``path`` relative to the benchmarks dir, as the manifest stores it."""
        return Path(path).relative_to(self.out).as_posix()

    @cached_property
    def shuffler(self):
        """The spaCy-backed ARO text perturbations (loaded on first use)."""
        from ..text.perturb import TextShuffler

        return TextShuffler(spacy_model=self.spacy_model) if self.spacy_model else TextShuffler()


TwinBuild = Callable[[TwinContext], TwinResult]
TWINS: Registry[TwinBuild] = Registry("twin")


def option(options: Mapping[str, Any], key: str, default: Any, twin: str, *, minimum: int | None = None) -> Any:
    """``options[key]`` (default when absent), an int checked against ``minimum``; errors name the parameter."""
    value = options.get(key, default)
    if minimum is not None and (isinstance(value, bool) or not isinstance(value, int) or value < minimum):
        raise ValueError(f"params benchmarks.twins.{twin}.{key}={value!r}: must be an int >= {minimum}")
    return value


#: The world's test splits, the only ones a twin may read (the training splits are ``web``, ``coco_train/val``).
TEST_SPLITS = ("vg_test", "coco_test", "flickr_test")


def check_known(options: Mapping[str, Any], known, twin: str) -> None:
    """Refuse an option the twin does not have, naming the parameter (a typo would silently use a default)."""
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(f"params benchmarks.twins.{twin}: unknown option(s) {unknown}; known: {sorted(known)}")


def test_split(options: Mapping[str, Any], default: str, twin: str) -> str:
    """``options["split"]`` (default ``default``), which must be a test split."""
    split = options.get("split", default)
    if split not in TEST_SPLITS:
        raise ValueError(f"params benchmarks.twins.{twin}.split={split!r}: must be a test split {TEST_SPLITS}")
    return split


def build_twin(name: str, ctx: TwinContext) -> TwinResult:
    """Build one registered twin (``ctx.name`` is set to ``name``)."""
    _load_all()
    build = TWINS.get(name)
    ctx.name = name
    result = build(ctx)
    if not isinstance(result, TwinResult):
        raise TypeError(f"twin {name!r} returned {type(result).__name__}, expected TwinResult")
    return result


def _load_all() -> None:
    """Import every twin module so it registers itself (one file per benchmark family)."""
    import importlib
    import pkgutil

    for mod in pkgutil.iter_modules(__path__):
        if not mod.name.startswith("_") and mod.name not in ("images", "build"):
            importlib.import_module(f"{__name__}.{mod.name}")
