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

**The world's inventory.** A twin enumerates the relations of the world in use (foil and replacement candidates,
relation lists), never the first world's constant: ``ctx.wcfg.relations``
(:attr:`vlcomp.world.scene.WorldConfig.relations`), passed down as a ``relations`` argument whose default is the
first world's (:data:`vlcomp.world.concepts.RELATIONS`); a phrase read off a scene is looked up in
:data:`~vlcomp.world.concepts.ALL_RELATIONS`. The shapes follow from it (:func:`world_shapes`), the role rules are
:func:`plausible`, and a claim is checked against :func:`implied_facts`.
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
from ..world.captions import CaptionConfig
from ..world.concepts import (
    ALL_RELATIONS,
    SHAPES,
    SUPPORT_RELATIONS,
    SUPPORT_SHAPES,
    Relation,
    support_shapes,
)
from ..world.scene import CONTAINER_SHAPES, Scene, WorldConfig


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
    captions: CaptionConfig = field(default_factory=CaptionConfig)
    """``world.captions`` of the world the splits were written with (the hard-positive twin reads which synonyms its
    captions may use); the default is the first world's."""

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


def world_shapes(relations: Mapping[str, Relation]) -> tuple[str, ...]:
    """The shape nouns of the test splits of a world with the relation inventory ``relations``: :data:`SHAPES`,
    then its flat supports (:func:`vlcomp.world.concepts.support_shapes`). The first world's: :data:`SHAPES`."""
    return SHAPES + support_shapes(relations)


def plausible(subject: str, relation: str, obj: str) -> bool:
    """Whether ``relation`` can hold at all between objects of these shapes in any world (the role relations,
    :attr:`vlcomp.world.concepts.Relation.kind`): only an arrow points; only a hollow circle, square or diamond
    surrounds, never an arrow or a bar; only a bar supports, and what it supports ("sitting on", "hanging from")
    is neither a bar nor an arrow. Geometric relations hold between any shapes."""
    if relation == "pointing at":
        return subject == "arrow"
    if relation == "surrounding":
        return subject in CONTAINER_SHAPES and obj != "arrow" and obj not in SUPPORT_SHAPES
    if relation == "inside":
        return obj in CONTAINER_SHAPES and subject != "arrow" and subject not in SUPPORT_SHAPES
    if relation in SUPPORT_RELATIONS:
        return obj in SUPPORT_SHAPES and subject not in SUPPORT_SHAPES and subject != "arrow"
    return True


#: What a support contact says besides itself: the object is above its bar ("sitting on") or below it ("hanging
#: from"), and next to it (they touch). The scene graph holds only the contact for the object; for the bar it holds a
#: geometric relation that the rounding of the coordinates decides ("below" and "next to", or "behind" for a
#: sub-pixel overlap), so "star above bar" may be missing from a graph whose image shows it.
SUPPORT_ENTAILS: dict[str, tuple[str, ...]] = {"sitting on": ("above", "next to"), "hanging from": ("below", "next to")}


def implied_facts(scene: Scene) -> frozenset[tuple[int, str, int]]:
    """What a claim is checked against: the scene graph's facts, what a support contact entails
    (:data:`SUPPORT_ENTAILS`), and the converse of each (``(o, converse, s)`` for ``(s, p, o)``). The first world's
    graphs hold no contact and are closed under converses already (every relation is computed for both orders),
    so there this is ``set(scene.relations)``; on a support world it makes "star above bar" true for a star
    sitting on its bar, so that is never a foil."""
    facts = set(scene.relations)
    facts |= {(s, q, o) for s, p, o in scene.relations for q in SUPPORT_ENTAILS.get(p, ())}
    for s, p, o in list(facts):
        converse = ALL_RELATIONS[p].converse
        if converse is not None:
            facts.add((o, converse, s))
    return frozenset(facts)


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
