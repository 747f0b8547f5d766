"""Rendering: array layout, determinism, background, object colours, hollow outlines, draw order."""

from __future__ import annotations

import numpy as np
import pytest

from vlcomp.world.concepts import BACKGROUNDS, COLOURS, SHAPES
from vlcomp.world.render import render
from vlcomp.world.scene import Obj, Scene, WorldConfig, sample_scene


def _scene(*objs: Obj, background: str = "black") -> Scene:
    return Scene("t/0", background, list(objs))


def _obj(shape: str, colour: str, x: float, y: float, half: float = 10.0, *, state: str = "solid",
         material: str = "plain", z: int = 0, heading: float = 0.0) -> Obj:
    return Obj(0, shape, colour, "large", material, state, x, y, half, heading=heading, z=z)


@pytest.mark.parametrize("size", [32, 48, 64])
def test_shape_and_dtype(size: int) -> None:
    sc = sample_scene(np.random.default_rng(0), WorldConfig(image_size=size), "x")
    img = render(sc, size)
    assert img.shape == (size, size, 3)
    assert img.dtype == np.uint8


def test_same_scene_same_pixels() -> None:
    cfg = WorldConfig()
    a = render(sample_scene(np.random.default_rng(11), cfg, "x"), 48)
    b = render(sample_scene(np.random.default_rng(11), cfg, "x"), 48)
    np.testing.assert_array_equal(a, b)
    c = render(sample_scene(np.random.default_rng(12), cfg, "x"), 48)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("background", sorted(BACKGROUNDS))
def test_background_far_from_objects(background: str) -> None:
    img = render(_scene(_obj("circle", "red", 8.5, 8.5, 5.0), background=background), 48)
    np.testing.assert_array_equal(img[40, 40], BACKGROUNDS[background])
    np.testing.assert_array_equal(img[40:, 30:], np.broadcast_to(BACKGROUNDS[background], (8, 18, 3)))


@pytest.mark.parametrize("shape", SHAPES)
def test_solid_plain_object_colour_at_its_centre(shape: str) -> None:
    for colour in ("red", "cyan"):
        img = render(_scene(_obj(shape, colour, 24.5, 24.5)), 48)  # pixel [24, 24] is centred on (24.5, 24.5)
        np.testing.assert_array_equal(img[24, 24], COLOURS[colour], err_msg=f"{shape} {colour}")


@pytest.mark.parametrize("shape", ["circle", "square", "diamond", "triangle"])
def test_hollow_object_shows_background_at_its_centre(shape: str) -> None:
    obj = _obj(shape, "yellow", 24.5, 24.5, state="hollow")
    img = render(_scene(obj, background="gray"), 48)
    np.testing.assert_array_equal(img[24, 24], BACKGROUNDS["gray"])
    assert (img == COLOURS["yellow"]).all(-1).any(), "the outline is drawn in the object's colour"


def test_later_z_is_drawn_on_top() -> None:
    back = _obj("square", "red", 20.5, 24.5, z=0)
    front = Obj(1, "square", "blue", "large", "plain", "solid", 28.5, 24.5, 10.0, z=1)
    for objs in ([back, front], [front, back]):  # z decides, not the list order
        img = render(_scene(*objs), 48)
        np.testing.assert_array_equal(img[24, 24], COLOURS["blue"])  # in the overlap
        np.testing.assert_array_equal(img[24, 14], COLOURS["red"])  # red only


def test_striped_object_is_its_colour_and_a_darker_shade() -> None:
    img = render(_scene(_obj("square", "green", 24.5, 24.5, material="striped")), 48)
    patch = img[20:29, 20:29].reshape(-1, 3)
    shades = {tuple(int(v) for v in p) for p in patch}
    assert tuple(COLOURS["green"]) in shades
    assert len(shades) >= 2
    assert all(max(p) <= max(COLOURS["green"]) for p in shades)


def test_arrow_heading_turns_the_head() -> None:
    """Heading 0 points right, 90 points up (y grows downwards): the widest cross-section is the head."""
    right = (render(_scene(_obj("arrow", "white", 24.0, 24.0, heading=0.0)), 48) == COLOURS["white"]).all(-1)
    assert int(np.argmax(right.sum(axis=0))) > 24  # tallest column right of centre
    up = (render(_scene(_obj("arrow", "white", 24.0, 24.0, heading=90.0)), 48) == COLOURS["white"]).all(-1)
    assert int(np.argmax(up.sum(axis=1))) < 24  # widest row above centre
    turned = np.rot90(right)  # a quarter turn counter-clockwise on screen, up to rasterisation
    assert (up & turned).sum() / (up | turned).sum() > 0.85
