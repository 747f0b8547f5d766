"""The inventory of the world the twin tests build (the repository's params.yaml, :mod:`tests.twins.conftest`), for
the tests' own readers of the twins' texts: its relation phrases and shape nouns (the library's inventory helpers:
``WorldConfig.relations``, :func:`vlcomp.twins.world_shapes`), the words its tokenizer knows, the synonyms its
captions draw, and what a scene graph implies, written here apart from the twins' own check.

On the first world these are the first world's relations, :data:`vlcomp.world.concepts.SHAPES` and version 1's
words; on a support world they add the bar, "sitting on" and "hanging from"."""

from __future__ import annotations

from pathlib import Path

from vlcomp.config import load_params
from vlcomp.twins import world_shapes
from vlcomp.world import world_configs
from vlcomp.world.captions import SYNONYM_SETS
from vlcomp.world.concepts import ALL_RELATIONS
from vlcomp.world.scene import Scene

from .tokenizer import params_tokenizer

REPO = Path(__file__).resolve().parents[2]
WCFG, CCFG, _ = world_configs(load_params(REPO / "params.yaml"))
#: The relation phrases the world's scenes can show, in table order.
RELATIONS = WCFG.relations
#: The shape nouns of its test splits.
SHAPES = world_shapes(RELATIONS)
#: Word -> the synonyms its captions may write for it (``world.captions.synonyms``).
SYNONYMS = SYNONYM_SETS[CCFG.synonyms]


def vocabulary() -> set[str]:
    """The words the params' tokenizer knows (``clip.tokenizer``)."""
    return set(params_tokenizer().words)


def relation_pattern(relations=RELATIONS) -> str:
    """A regex alternation of the relation phrases, longest first (so "covered by" is not read as a prefix)."""
    return "|".join(sorted(relations, key=len, reverse=True))


#: What a support contact says besides itself: the object is above ("sitting on") or below ("hanging from") its
#: bar, and next to it (they touch).
ENTAILS = {"sitting on": ("above", "next to"), "hanging from": ("below", "next to")}


def implied(scene: Scene) -> set[tuple[int, str, int]]:
    """The scene graph, what a support contact entails, and each fact's converse (``(o, converse, s)``): every
    claim ``(s, p, o)`` true of the scene. The first world's graphs are closed under converses already, so there
    this is ``set(scene.relations)``."""
    out = set(scene.relations) | {(s, q, o) for s, p, o in scene.relations for q in ENTAILS.get(p, ())}
    return out | {(o, ALL_RELATIONS[p].converse, s) for s, p, o in out if ALL_RELATIONS[p].converse}
