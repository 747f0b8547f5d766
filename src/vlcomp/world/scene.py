"""Scene graphs of the toy world: objects with attributes and boxes, relations from geometry.

A scene is sampled from a layout (separated, overlap, contain, point, support), then every relation between every
ordered pair of objects is computed from the final geometry, so the scene graph is exact ground truth.
Coordinates are pixels at the configured image size; y grows downwards.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from .concepts import (
    ALL_RELATIONS,
    BACKGROUNDS,
    BAR_ASPECT,
    COLOURS,
    ELEVATION,
    MATERIALS,
    RELATIONS,
    SHAPES,
    SIZES,
    SUPPORT_SHAPES,
    TYPICAL_COLOUR,
    WEB_ONLY_COLOURS,
    WEB_ONLY_SHAPES,
    Relation,
)

CONTAINER_SHAPES = ("circle", "square", "diamond")
LAYOUTS = ("separated", "overlap", "contain", "point", "support")
BAR_WIDTH = 1.2
"""A bar's half-width over the half-extent of its size word (a bar is wider than the objects it supports)."""
TOUCH_PX = 0.5
"""Two box edges closer than this (pixels, after the coordinates are rounded) touch: a resting or hanging contact."""


@dataclass(frozen=True)
class WorldConfig:
    """Knobs of the world's scene sampling (``world.*`` in params.yaml)."""

    image_size: int = 48
    min_objects: int = 2
    max_objects: int = 3
    layout_probs: tuple[float, ...] = (0.55, 0.2, 0.1, 0.15, 0.0)  # LAYOUTS order; support 0: the first world
    hollow_prob: float = 0.15
    pointing_tolerance_deg: float = 20.0
    near_gap_px: float = 4.0
    # Co-occurrence priors of real scenes (see concepts.TYPICAL_COLOUR / ELEVATION). 0 = none, and the world is
    # then exactly the one generated without these knobs (the scene sampling draws no extra random numbers).
    colour_prior: float = 0.0
    layout_prior: float = 0.0
    # Concepts only the web split shows (names from concepts.WEB_ONLY_SHAPES / WEB_ONLY_COLOURS). Empty (the
    # default): every split draws from SHAPES and COLOURS, and the world is the one generated without these knobs.
    web_only_shapes: tuple[str, ...] = ()
    web_only_colours: tuple[str, ...] = ()
    contain_inner_scale: float = 0.75
    """A contained object's half-extent over a small object's (the first world: 0.75, a 9 px object, below the VG
    twins' 12 px box filter, so "inside"/"surrounding" never entered VG-Relation; 1.0 lets it in)."""
    object_scale: float = 1.0
    """Every object's half-extent is ``SIZES[size] * scale * object_scale`` (:meth:`half_extent`): 1 is the first
    world; larger objects are easier to see (``calibration/world_perception.csv``, probe P1) and let a contained
    object pass the VG twins' box filter."""

    def __post_init__(self) -> None:
        for name, known in (("web_only_shapes", WEB_ONLY_SHAPES), ("web_only_colours", tuple(WEB_ONLY_COLOURS))):
            v = getattr(self, name)
            if isinstance(v, str) or not all(isinstance(x, str) for x in v) or len(set(v)) != len(v):
                raise ValueError(f"world.{name}={v!r}: must be a list of distinct names")
            bad = [x for x in v if x not in known]
            if bad:
                raise ValueError(f"world.{name}: unknown {bad}; known: {', '.join(known)}")
        if self.image_size < 32:
            raise ValueError(f"world.image_size={self.image_size}: must be at least 32")
        if not 1 <= self.min_objects <= self.max_objects <= 4:
            raise ValueError(
                f"world.min_objects={self.min_objects}, world.max_objects={self.max_objects}: need 1 <= min <= max <= 4"
            )
        if len(self.layout_probs) != len(LAYOUTS) or min(self.layout_probs) < 0 or sum(self.layout_probs) <= 0:
            raise ValueError(f"world.layout_probs={self.layout_probs}: need {len(LAYOUTS)} non-negative weights")
        if isinstance(self.contain_inner_scale, bool) or not isinstance(self.contain_inner_scale, int | float) or not (
                0.5 <= self.contain_inner_scale <= 1.0):
            raise ValueError(f"world.contain_inner_scale={self.contain_inner_scale!r}: must be a number in [0.5, 1]")
        if isinstance(self.object_scale, bool) or not isinstance(self.object_scale, int | float) or not (
                0.5 <= self.object_scale <= 2.5):
            raise ValueError(f"world.object_scale={self.object_scale!r}: must be a number in [0.5, 2.5]")
        for name in ("hollow_prob", "colour_prior", "layout_prior"):
            v = getattr(self, name)
            if not 0 <= v <= 1:
                raise ValueError(f"world.{name}={v}: must be in [0, 1]")

    @property
    def scale(self) -> float:
        return self.image_size / 48.0

    def half_extent(self, size: str) -> float:
        """Half-extent in pixels of an object of size word ``size`` (a bar's half-width is :data:`BAR_WIDTH`
        times this)."""
        return SIZES[size] * self.scale * self.object_scale

    @property
    def relations(self) -> dict[str, Relation]:
        """The relations this world's scenes can show: the first world's (:data:`concepts.RELATIONS`), and the
        support layout's when its weight is positive (in the table's order, so enumerations are stable)."""
        if self.layout_probs[LAYOUTS.index("support")] > 0:
            return dict(ALL_RELATIONS)
        return dict(RELATIONS)

    def vocabulary(self, web: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """``(shapes, colours)`` a split draws from: the web split adds the web-only concepts to the COCO ones."""
        if not web:
            return SHAPES, tuple(COLOURS)
        return SHAPES + self.web_only_shapes, tuple(COLOURS) + self.web_only_colours


@dataclass
class Obj:
    id: int
    shape: str
    colour: str
    size: str
    material: str
    state: str
    x: float
    y: float
    half: float
    heading: float = 0.0  # degrees, 0 = pointing right, counter-clockwise; only arrows use it
    z: int = 0  # draw order; larger is drawn later (in front)

    @property
    def half_height(self) -> float:
        """Half the box's height: ``half``, or a flat bar's (:data:`concepts.BAR_ASPECT`)."""
        return self.half * BAR_ASPECT if self.shape in SUPPORT_SHAPES else self.half

    @property
    def box(self) -> tuple[float, float, float, float]:
        hh = self.half_height
        return (self.x - self.half, self.y - hh, self.x + self.half, self.y + hh)

    def attributes(self) -> dict[str, str]:
        return {"colour": self.colour, "size": self.size, "material": self.material, "state": self.state}


@dataclass
class Scene:
    image_id: str
    background: str
    objects: list[Obj]
    relations: list[tuple[int, str, int]] = field(default_factory=list)

    def to_record(self) -> dict:
        return {
            "image_id": self.image_id,
            "background": self.background,
            "objects": [asdict(o) for o in self.objects],
            "relations": [list(r) for r in self.relations],
        }

    @staticmethod
    def from_record(rec: dict, where: str = "scene record") -> Scene:
        """Parse a record of ``scenes.jsonl``, checking values as well as structure."""
        try:
            objs = [Obj(**o) for o in rec["objects"]]
            rels = [(int(s), str(p), int(o)) for s, p, o in rec["relations"]]
            scene = Scene(str(rec["image_id"]), str(rec["background"]), objs, rels)
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"{where}: malformed scene ({type(e).__name__}: {e})") from None
        for o in objs:
            for name in ("x", "y", "half", "heading"):
                if not isinstance(getattr(o, name), int | float) or isinstance(getattr(o, name), bool):
                    raise ValueError(f"{where}: object {o.id} field {name!r} must be a number, got {getattr(o, name)!r}")
        ids = {o.id for o in objs}
        if ids != set(range(len(objs))):
            raise ValueError(f"{where}: object ids must be 0..{len(objs) - 1}, got {sorted(ids)}")
        for s_, p, o_ in rels:
            if p not in ALL_RELATIONS:
                raise ValueError(f"{where}: unknown relation {p!r}")
            if s_ not in ids or o_ not in ids:
                raise ValueError(f"{where}: relation ({s_}, {p!r}, {o_}) names a missing object")
        return scene

    def obj(self, oid: int) -> Obj:
        return self.objects[oid]


def _boxes_overlap(a: Obj, b: Obj) -> float:
    ax0, ay0, ax1, ay1 = a.box
    bx0, by0, bx1, by1 = b.box
    w = min(ax1, bx1) - max(ax0, bx0)
    h = min(ay1, by1) - max(ay0, by0)
    return max(w, 0.0) * max(h, 0.0)


def _gap(a: Obj, b: Obj) -> float:
    ax0, ay0, ax1, ay1 = a.box
    bx0, by0, bx1, by1 = b.box
    gx = max(bx0 - ax1, ax0 - bx1, 0.0)
    gy = max(by0 - ay1, ay0 - by1, 0.0)
    return math.hypot(gx, gy)


def _contains(outer: Obj, inner: Obj) -> bool:
    ox0, oy0, ox1, oy1 = outer.box
    ix0, iy0, ix1, iy1 = inner.box
    return outer.state == "hollow" and ox0 < ix0 and oy0 < iy0 and ix1 < ox1 and iy1 < oy1


def _support(a: Obj, b: Obj) -> str | None:
    """"sitting on" when ``a`` rests on bar ``b``'s top edge, "hanging from" when it hangs from its bottom edge (its
    centre within the bar's span), else None. Only a bar supports, and never another bar. A contact also gives the
    geometric relation it implies (above / below) and "next to", both ways, whatever the coordinates' rounding did
    (a sub-pixel overlap would otherwise read as "in front of")."""
    if b.shape not in SUPPORT_SHAPES or a.shape in SUPPORT_SHAPES:
        return None
    ax0, ay0, ax1, ay1 = a.box
    bx0, by0, bx1, by1 = b.box
    if not bx0 <= a.x <= bx1:
        return None
    if abs(ay1 - by0) <= TOUCH_PX:
        return "sitting on"
    if abs(ay0 - by1) <= TOUCH_PX:
        return "hanging from"
    return None


def compute_relations(objs: list[Obj], cfg: WorldConfig) -> list[tuple[int, str, int]]:
    """All relations between ordered pairs of objects, from geometry alone."""
    rels: list[tuple[int, str, int]] = []
    for a in objs:
        for b in objs:
            if a.id == b.id:
                continue
            support, carried = _support(a, b), _support(b, a)
            if support is not None:  # a contact: the role relation, the geometry it implies, and touching
                rels += [(a.id, support, b.id), (a.id, "above" if support == "sitting on" else "below", b.id),
                         (a.id, "next to", b.id)]
            elif carried is not None:  # the bar's side of a contact: geometric only (a bar is on nothing)
                rels += [(a.id, "below" if carried == "sitting on" else "above", b.id), (a.id, "next to", b.id)]
            elif _contains(a, b):
                rels.append((a.id, "surrounding", b.id))
            elif _contains(b, a):
                rels.append((a.id, "inside", b.id))
            elif _boxes_overlap(a, b) > 0:
                frac = _boxes_overlap(a, b) / min((2 * a.half) ** 2, (2 * b.half) ** 2)
                front = (a.z, a.id) > (b.z, b.id)  # rendering draws by z, then list order
                if frac >= 0.5:
                    rels.append((a.id, "covering" if front else "covered by", b.id))
                else:
                    rels.append((a.id, "in front of" if front else "behind", b.id))
            else:
                dx, dy = b.x - a.x, b.y - a.y
                if abs(dx) >= abs(dy):
                    rels.append((a.id, "to the left of" if dx > 0 else "to the right of", b.id))
                else:
                    rels.append((a.id, "above" if dy > 0 else "below", b.id))
                if _gap(a, b) <= cfg.near_gap_px * cfg.scale:
                    rels.append((a.id, "next to", b.id))
            if a.shape == "arrow":
                ang = math.degrees(math.atan2(-(b.y - a.y), b.x - a.x))
                diff = abs((ang - a.heading + 180) % 360 - 180)
                if diff <= cfg.pointing_tolerance_deg and _gap(a, b) > 0:
                    rels.append((a.id, "pointing at", b.id))
    return rels


def _prior_colours(rng: np.random.Generator, shapes: list[str], p: float,
                   names: Sequence[str] = tuple(COLOURS)) -> list[str]:
    """Distinct colours of ``names`` for the shapes: each takes its typical colour with probability ``p`` (when it
    is in ``names`` and no earlier object has it), otherwise a colour drawn uniformly from those still free."""
    names = list(names)
    used: list[str] = []
    for shape in shapes:
        typical = TYPICAL_COLOUR.get(shape)  # a bar has no typical colour
        if typical in names and typical not in used and rng.random() < p:
            used.append(typical)
        else:
            free = [c for c in names if c not in used]
            used.append(free[rng.integers(len(free))])
    return used


def _sample_attrs(rng: np.random.Generator, n: int, cfg: WorldConfig, shape_names: Sequence[str],
                  colour_names: Sequence[str]) -> list[dict]:
    shapes = rng.choice(len(shape_names), size=n, replace=False)
    colours = [colour_names[c] for c in rng.choice(len(colour_names), size=n, replace=False)]
    out = []
    for s, c in zip(shapes, colours, strict=True):
        state = "hollow" if rng.random() < cfg.hollow_prob else "solid"
        material = "plain" if state == "hollow" else str(MATERIALS[rng.integers(len(MATERIALS))])
        out.append(
            {
                "shape": shape_names[s],
                "colour": c,
                "size": list(SIZES)[rng.integers(len(SIZES))],
                "material": material,
                "state": state,
            }
        )
    return out


def _free_position(rng, half, placed: list[Obj], cfg: WorldConfig, gap: float) -> tuple[float, float] | None:
    s = cfg.image_size
    for _ in range(60):
        x = rng.uniform(half + 1, s - half - 1)
        y = rng.uniform(half + 1, s - half - 1)
        probe = Obj(-1, "circle", "red", "small", "plain", "solid", x, y, half)
        if all(_gap(probe, p) >= gap and _boxes_overlap(probe, p) == 0 for p in placed):
            return x, y
    return None


APPEARANCE = ("shape", "colour", "material", "state")
"""What moves with a shape when the layout prior rearranges a scene (size and geometry stay in place)."""


def _apply_layout_prior(objs: list[Obj], layout: str, start: int) -> None:
    """Rearrange appearances so higher-ranked shapes (concepts.ELEVATION) sit above the freely placed lower ones,
    and in front in an overlap pair. Geometry, sizes and draw order are untouched, so the scene stays valid."""
    if layout == "overlap" and all(o.shape in ELEVATION for o in objs[:2]):
        back, front = objs[0], objs[1]  # objs[1] is drawn later (z=1)
        if ELEVATION[back.shape] > ELEVATION[front.shape]:
            for k in APPEARANCE:
                a, b = getattr(back, k), getattr(front, k)
                setattr(back, k, b)
                setattr(front, k, a)
    free = [o for o in objs[start:] if o.shape in ELEVATION]
    if len(free) >= 2:
        looks = sorted(({k: getattr(o, k) for k in APPEARANCE} for o in free), key=lambda a: -ELEVATION[a["shape"]])
        for o, look in zip(sorted(free, key=lambda o: o.y), looks, strict=True):  # smallest y = top of the image
            for k, v in look.items():
                setattr(o, k, v)


def sample_scene(rng: np.random.Generator, cfg: WorldConfig, image_id: str, *, web: bool = False) -> Scene:
    """Sample one scene; retries the layout until every object fits. ``web``: draw shapes and colours from the web
    split's vocabulary (:meth:`WorldConfig.vocabulary`)."""
    s = cfg.image_size
    shape_names, colour_names = cfg.vocabulary(web)
    for _attempt in range(100):
        n = int(rng.integers(cfg.min_objects, cfg.max_objects + 1))
        probs = np.asarray(cfg.layout_probs, dtype=float)
        layout = LAYOUTS[rng.choice(len(LAYOUTS), p=probs / probs.sum())] if n >= 2 else "separated"
        attrs = _sample_attrs(rng, n, cfg, shape_names, colour_names)
        objs: list[Obj] = []
        start = 0
        if layout == "contain":
            outer_shape = CONTAINER_SHAPES[rng.integers(len(CONTAINER_SHAPES))]
            if outer_shape in (a["shape"] for a in attrs[1:]):
                continue
            attrs[0].update(shape=outer_shape, size="large", state="hollow", material="plain")
            attrs[1].update(size="small", state="solid")
            if attrs[1]["shape"] == "arrow":  # an arrow has no room to point from inside a container
                continue
            h0 = cfg.half_extent("large") * 1.15
            x, y = rng.uniform(h0 + 1, s - h0 - 1), rng.uniform(h0 + 1, s - h0 - 1)
            objs.append(Obj(0, **attrs[0], x=x, y=y, half=h0, z=0))
            h1 = cfg.half_extent("small") * cfg.contain_inner_scale
            objs.append(Obj(1, **attrs[1], x=x + rng.uniform(-1, 1), y=y + rng.uniform(-1, 1), half=h1, z=1))
            start = 2
        elif layout == "overlap":
            h0, h1 = (cfg.half_extent(attrs[i]["size"]) for i in (0, 1))
            x0, y0 = rng.uniform(h0 + 1, s - h0 - 1), rng.uniform(h0 + 1, s - h0 - 1)
            ang = rng.uniform(0, 2 * math.pi)
            dist = rng.uniform(0.45, 0.85) * (h0 + h1)
            x1, y1 = x0 + dist * math.cos(ang), y0 + dist * math.sin(ang)
            if not (h1 + 1 <= x1 <= s - h1 - 1 and h1 + 1 <= y1 <= s - h1 - 1):
                continue
            attrs[0]["state"] = attrs[1]["state"] = "solid"
            for a in attrs[:2]:
                if a["material"] == "plain" and rng.random() < 0.5:
                    a["material"] = str(MATERIALS[rng.integers(len(MATERIALS))])
            objs.append(Obj(0, **attrs[0], x=x0, y=y0, half=h0, z=0))
            objs.append(Obj(1, **attrs[1], x=x1, y=y1, half=h1, z=1))
            start = 2
        elif layout == "point":
            if "arrow" in (a["shape"] for a in attrs[1:]):
                continue
            attrs[0].update(shape="arrow", state="solid")
            h0, h1 = (cfg.half_extent(attrs[i]["size"]) for i in (0, 1))
            p0 = _free_position(rng, h0, [], cfg, 0)
            assert p0 is not None
            o0 = Obj(0, **attrs[0], x=p0[0], y=p0[1], half=h0, z=0)
            p1 = _free_position(rng, h1, [o0], cfg, 3 * cfg.scale)
            if p1 is None:
                continue
            o0.heading = math.degrees(math.atan2(-(p1[1] - p0[1]), p1[0] - p0[0])) + rng.uniform(-8, 8)
            objs += [o0, Obj(1, **attrs[1], x=p1[0], y=p1[1], half=h1, z=1)]
            start = 2
        elif layout == "support":
            if attrs[1]["shape"] == "arrow":  # an arrow is drawn at any heading, which would break its contact
                continue
            attrs[0].update(shape=SUPPORT_SHAPES[0], size="large", state="solid")  # BAR_ASPECT: always large
            attrs[1].update(size="small", state="solid" if attrs[1]["state"] == "hollow" else attrs[1]["state"])
            if attrs[1]["material"] == "plain" and attrs[1]["state"] == "solid" and rng.random() < 0.5:
                attrs[1]["material"] = str(MATERIALS[rng.integers(len(MATERIALS))])
            h0 = cfg.half_extent(attrs[0]["size"]) * BAR_WIDTH
            v0, h1 = h0 * BAR_ASPECT, cfg.half_extent("small")
            hang = bool(rng.random() < 0.5)
            x0 = rng.uniform(h0 + 1, s - h0 - 1)
            lo, hi = (v0 + 1, s - v0 - 2 * h1 - 1) if hang else (v0 + 2 * h1 + 1, s - v0 - 1)
            if hi <= lo:
                continue
            y0 = rng.uniform(lo, hi)
            x1 = x0 + rng.uniform(-1, 1) * max(h0 - h1, 0.0)
            y1 = y0 + (v0 + h1 if hang else -(v0 + h1))
            objs.append(Obj(0, **attrs[0], x=x0, y=y0, half=h0, z=0))
            objs.append(Obj(1, **attrs[1], x=x1, y=y1, half=h1, z=1))
            start = 2
        ok = True
        for i in range(start, n):
            h = cfg.half_extent(attrs[i]["size"])
            if attrs[i]["shape"] == "arrow":
                attrs[i]["state"] = "solid"
            pos = _free_position(rng, h, objs, cfg, 2 * cfg.scale)
            if pos is None:
                ok = False
                break
            heading = float(rng.uniform(0, 360)) if attrs[i]["shape"] == "arrow" else 0.0
            objs.append(Obj(i, **attrs[i], x=pos[0], y=pos[1], half=h, heading=heading, z=i))
        if not ok:
            continue
        if cfg.colour_prior > 0:  # decided once the layout has fixed every shape (containers, arrows)
            colours = _prior_colours(rng, [o.shape for o in objs], cfg.colour_prior, colour_names)
            for o, c in zip(objs, colours, strict=True):
                o.colour = c
        if cfg.layout_prior > 0 and rng.random() < cfg.layout_prior:
            _apply_layout_prior(objs, layout, start)
        for o in objs:
            o.x, o.y, o.half, o.heading = (round(float(v), 3) for v in (o.x, o.y, o.half, o.heading))
        background = list(BACKGROUNDS)[rng.integers(len(BACKGROUNDS))]
        return Scene(image_id, background, objs, compute_relations(objs, cfg))
    raise RuntimeError(f"could not place the objects of {image_id} after 100 attempts (world params too tight?)")
