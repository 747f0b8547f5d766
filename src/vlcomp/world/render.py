"""PIL rendering of toy scenes. Deterministic: the same scene gives the same pixels."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw

from .concepts import ALL_COLOURS, BACKGROUNDS, BAR_ASPECT
from .scene import Obj, Scene

SUPERSAMPLE = 2  # draw at 2x and downsample with a box filter, so small shapes keep their outline


def _unit_polygon(shape: str) -> list[tuple[float, float]]:
    """Vertices of a shape inscribed in the unit square [-1, 1]^2 (y down), pointing right for arrows."""
    if shape == "square":
        return [(-0.85, -0.85), (0.85, -0.85), (0.85, 0.85), (-0.85, 0.85)]
    if shape == "triangle":
        return [(0.0, -1.0), (1.0, 0.85), (-1.0, 0.85)]
    if shape == "diamond":
        return [(0.0, -1.0), (1.0, 0.0), (0.0, 1.0), (-1.0, 0.0)]
    if shape == "star":
        pts = []
        for k in range(10):
            r = 1.0 if k % 2 == 0 else 0.42
            a = -math.pi / 2 + k * math.pi / 5
            pts.append((r * math.cos(a), r * math.sin(a)))
        return pts
    if shape == "cross":
        t = 0.34
        return [(-t, -1), (t, -1), (t, -t), (1, -t), (1, t), (t, t), (t, 1), (-t, 1), (-t, t), (-1, t), (-1, -t), (-t, -t)]
    if shape == "heart":
        pts = []
        for k in range(24):
            t = 2 * math.pi * k / 24
            x = 16 * math.sin(t) ** 3
            y = 13 * math.cos(t) - 5 * math.cos(2 * t) - 2 * math.cos(3 * t) - math.cos(4 * t)
            pts.append((x / 17.0, -y / 15.0 + 0.1))
        return pts
    if shape == "arrow":
        return [(-1, -0.25), (0.2, -0.25), (0.2, -0.7), (1, 0), (0.2, 0.7), (0.2, 0.25), (-1, 0.25)]
    if shape == "hexagon":
        return [(math.cos(math.pi * k / 3), 0.9 * math.sin(math.pi * k / 3)) for k in range(6)]
    if shape == "moon":  # a crescent: an outer arc of the unit circle, back along an inner arc offset to the right
        outer = [(math.cos(a), math.sin(a)) for a in (math.pi / 2 + math.pi * k / 16 for k in range(17))]
        inner = [(0.45 + 0.75 * math.cos(a), 0.95 * math.sin(a)) for a in (3 * math.pi / 2 - math.pi * k / 16
                                                                             for k in range(17))]
        return outer + inner
    if shape == "bar":  # flat: its box is [-1, 1] x [-BAR_ASPECT, BAR_ASPECT] (Obj.half_height)
        return [(-1.0, -BAR_ASPECT), (1.0, -BAR_ASPECT), (1.0, BAR_ASPECT), (-1.0, BAR_ASPECT)]
    if shape == "circle":
        return [(math.cos(2 * math.pi * k / 32), math.sin(2 * math.pi * k / 32)) for k in range(32)]
    raise ValueError(f"unknown shape {shape!r}")


def _polygon(obj: Obj, half: float, ss: int) -> list[tuple[float, float]]:
    rad = math.radians(obj.heading) if obj.shape == "arrow" else 0.0
    c, s = math.cos(rad), math.sin(rad)
    out = []
    for ux, uy in _unit_polygon(obj.shape):
        # rotate counter-clockwise on screen (y down => negate the angle's sine on y)
        rx, ry = ux * c + uy * s, -ux * s + uy * c
        out.append(((obj.x + rx * half) * ss, (obj.y + ry * half) * ss))
    return out


@lru_cache(maxsize=256)
def _fill(colour: str, material: str, big: int) -> Image.Image:
    """The object's surface as a full-canvas RGB image: its colour shaded by its material's pattern."""
    yy, xx = np.mgrid[0:big, 0:big]
    if material == "striped":
        shade = np.where((yy // (2 * SUPERSAMPLE)) % 2 == 0, 1.0, 0.3)
    elif material == "dotted":
        p = 3 * SUPERSAMPLE
        shade = np.where(((yy % p) < SUPERSAMPLE) & ((xx % p) < SUPERSAMPLE), 0.2, 1.0)
    else:
        shade = np.ones((big, big))
    rgb = np.asarray(ALL_COLOURS[colour], dtype=np.float32) * shade[..., None]
    return Image.fromarray(np.clip(rgb + 0.5, 0, 255).astype(np.uint8))


def render(scene: Scene, image_size: int) -> np.ndarray:
    """Render a scene to uint8 RGB [H, W, 3]."""
    big = image_size * SUPERSAMPLE
    canvas = Image.new("RGB", (big, big), BACKGROUNDS[scene.background])
    for obj in sorted(scene.objects, key=lambda o: o.z):
        mask = Image.new("L", (big, big), 0)
        draw = ImageDraw.Draw(mask)
        draw.polygon(_polygon(obj, obj.half, SUPERSAMPLE), fill=255)
        if obj.state == "hollow":
            draw.polygon(_polygon(obj, max(obj.half - 2.2, 0.5), SUPERSAMPLE), fill=0)
        canvas.paste(_fill(obj.colour, obj.material, big), (0, 0), mask)
    return np.asarray(canvas.resize((image_size, image_size), Image.Resampling.BOX))
