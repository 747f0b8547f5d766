"""Scenes with several objects of the same shape (plurals and counting, e.g. the VALSE twin).

The world's own sampler (:func:`vlcomp.world.scene.sample_scene`) gives every object of a scene a distinct
shape and colour, so no caption of it can say "two circles" or "some red circles". This sampler places a given
list of looks (shape, colour), shapes and colours allowed to repeat, side by side without overlap, then computes
the relations from the final geometry with the world's own rule (:func:`compute_relations`), so the scene graph
stays exact ground truth and :func:`vlcomp.world.render.render` draws it like any other scene.

Choices: sizes are drawn ``small`` / ``large`` (large with :data:`LARGE_PROB`, fewer large objects leave more
room), materials and states as the world draws them (``hollow`` with ``cfg.hollow_prob``, arrows always solid),
arrows get a uniform heading; objects keep a gap of at least 2 px (at 48 px) from each other, as the world's
"separated" layout, so no object covers, hides or contains another and every object is visible to be counted.
The world's co-occurrence priors (``colour_prior``, ``layout_prior``) do not apply: the looks are given.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .concepts import BACKGROUNDS, COLOURS, MATERIALS, SHAPES
from .scene import Obj, Scene, WorldConfig, compute_relations

#: At most this many objects in one scene (five small objects fit easily in 48 px; more would crowd it).
MAX_OBJECTS = 5
#: Probability that an object is large (half-extent 10 px instead of 6 px at 48 px).
LARGE_PROB = 0.3
#: Minimum gap between two objects' boxes, in pixels at 48 px (scaled with the image size).
GAP_PX = 2.0
_POSITION_TRIES = 60
_SCENE_TRIES = 100


def _check_looks(looks: Sequence[tuple[str, str]], image_id: str) -> None:
    if not 1 <= len(looks) <= MAX_OBJECTS:
        raise ValueError(f"{image_id}: a multiples scene holds 1..{MAX_OBJECTS} objects, got {len(looks)}")
    for shape, colour in looks:
        if shape not in SHAPES or colour not in COLOURS:
            raise ValueError(f"{image_id}: unknown look ({shape!r}, {colour!r}); shapes {SHAPES}, "
                             f"colours {tuple(COLOURS)}")


def _appearance(rng: np.random.Generator, shape: str, cfg: WorldConfig) -> dict[str, str]:
    """Size, material and state of one object, drawn as the world draws them."""
    state = "hollow" if shape != "arrow" and rng.random() < cfg.hollow_prob else "solid"
    material = "plain" if state == "hollow" else str(MATERIALS[rng.integers(len(MATERIALS))])
    size = "large" if rng.random() < LARGE_PROB else "small"
    return {"size": size, "material": material, "state": state}


def _separated(x: float, y: float, half: float, placed: list[Obj], gap: float) -> bool:
    """True when the box of half-extent ``half`` at (x, y) keeps at least ``gap`` from every placed box."""
    for p in placed:
        gx = max(abs(x - p.x) - half - p.half, 0.0)
        gy = max(abs(y - p.y) - half - p.half, 0.0)
        if max(gx, gy) < gap:
            return False
    return True


def _place(rng: np.random.Generator, looks: Sequence[tuple[str, str]], cfg: WorldConfig) -> list[Obj] | None:
    """One attempt at placing every look; ``None`` when some object finds no free spot."""
    s, gap = cfg.image_size, GAP_PX * cfg.scale
    objs: list[Obj] = []
    for i, (shape, colour) in enumerate(looks):
        app = _appearance(rng, shape, cfg)
        half = cfg.half_extent(app["size"])
        heading = float(rng.uniform(0, 360)) if shape == "arrow" else 0.0
        for _ in range(_POSITION_TRIES):
            x, y = rng.uniform(half + 1, s - half - 1), rng.uniform(half + 1, s - half - 1)
            if _separated(x, y, half, objs, gap):
                objs.append(Obj(i, shape, colour, x=x, y=y, half=half, heading=heading, z=i, **app))
                break
        else:
            return None
    return objs


def sample_multiples_scene(rng: np.random.Generator, cfg: WorldConfig, image_id: str,
                           looks: Sequence[tuple[str, str]]) -> Scene:
    """A scene with one object per ``(shape, colour)`` of ``looks`` (object ``i`` has look ``i``; repeats
    allowed), no two objects touching, relations from geometry. Retries the placement until every object fits."""
    _check_looks(looks, image_id)
    for _attempt in range(_SCENE_TRIES):
        objs = _place(rng, looks, cfg)
        if objs is None:
            continue
        for o in objs:
            o.x, o.y, o.half, o.heading = (round(float(v), 3) for v in (o.x, o.y, o.half, o.heading))
        background = list(BACKGROUNDS)[rng.integers(len(BACKGROUNDS))]
        return Scene(image_id, background, objs, compute_relations(objs, cfg))
    raise RuntimeError(f"could not place the {len(looks)} objects of {image_id} after {_SCENE_TRIES} attempts")


def count_matching(scene: Scene, shape: str, colour: str | None = None) -> int:
    """How many objects of ``scene`` have ``shape`` (and ``colour`` when given)."""
    return sum(o.shape == shape and (colour is None or o.colour == colour) for o in scene.objects)
