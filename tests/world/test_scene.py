"""Scene graphs: relations from hand-built geometry, converses, sampling invariants, record round trip."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vlcomp.world.concepts import COLOURS, ELEVATION, RELATIONS, SHAPES, TYPICAL_COLOUR
from vlcomp.world.scene import (
    Obj,
    Scene,
    WorldConfig,
    _apply_layout_prior,
    _prior_colours,
    compute_relations,
    sample_scene,
)

CFG = WorldConfig()  # 48 px, scale 1, near_gap_px 4, pointing tolerance 20 degrees


def _obj(oid: int, x: float, y: float, half: float = 4.0, *, shape: str | None = None, z: int | None = None,
         state: str = "solid", heading: float = 0.0) -> Obj:
    return Obj(oid, shape or SHAPES[oid], list(COLOURS)[oid], "small", "plain", state, x, y, half,
               heading=heading, z=oid if z is None else z)


def _rels(*objs: Obj, cfg: WorldConfig = CFG) -> set[tuple[int, str, int]]:
    return set(compute_relations(list(objs), cfg))


def _assert_converses(rels: set[tuple[int, str, int]]) -> None:
    for s, p, o in rels:
        conv = RELATIONS[p].converse
        if conv is not None:
            assert (o, conv, s) in rels, f"{(s, p, o)} has no converse {(o, conv, s)} in {sorted(rels)}"


# ------------------------------------------------------------------------------------ separated objects


def test_left_right_from_dominant_horizontal_axis() -> None:
    a, b = _obj(0, 10, 24), _obj(1, 30, 26)  # dx = 20, dy = 2, gap 12 > 4
    assert _rels(a, b) == {(0, "to the left of", 1), (1, "to the right of", 0)}


def test_above_below_from_dominant_vertical_axis() -> None:
    a, b = _obj(0, 24, 8), _obj(1, 26, 30)  # y grows downwards: a is above b
    assert _rels(a, b) == {(0, "above", 1), (1, "below", 0)}


def test_dominant_axis_is_the_larger_offset() -> None:
    a, b = _obj(0, 10, 10), _obj(1, 20, 22)  # dx = 10 < dy = 12 -> vertical although dx is large
    assert _rels(a, b) == {(0, "above", 1), (1, "below", 0)}
    a, b = _obj(0, 10, 10), _obj(1, 23, 22)  # dx = 13 > dy = 12 -> horizontal
    assert _rels(a, b) == {(0, "to the left of", 1), (1, "to the right of", 0)}


@pytest.mark.parametrize(("x1", "near"), [(20.0, True), (22.0, True), (22.5, False), (30.0, False)])
def test_next_to_when_box_gap_within_near_gap(x1: float, near: bool) -> None:
    a, b = _obj(0, 10, 24), _obj(1, x1, 24)  # boxes [6, 14] and [x1 - 4, x1 + 4]: gap = x1 - 18
    rels = _rels(a, b)
    assert ((0, "next to", 1) in rels) is near
    assert ((1, "next to", 0) in rels) is near
    assert (0, "to the left of", 1) in rels


def test_next_to_gap_is_euclidean_between_boxes_and_scales_with_image_size() -> None:
    a, b = _obj(0, 10, 10), _obj(1, 21, 21)  # gap 3 on both axes -> hypot = 4.24 > 4
    assert (0, "next to", 1) not in _rels(a, b)
    big = WorldConfig(image_size=96)  # near gap 8 px at scale 2
    assert (0, "next to", 1) in _rels(a, b, cfg=big)


# -------------------------------------------------------------------------------------- overlapping objects


def test_small_overlap_is_in_front_of_behind_by_z() -> None:
    a, b = _obj(0, 20, 20, 5, z=0), _obj(1, 27, 20, 5, z=1)  # overlap 3 x 10 = 30 of 100 -> 0.3
    assert _rels(a, b) == {(0, "behind", 1), (1, "in front of", 0)}
    a, b = _obj(0, 20, 20, 5, z=5), _obj(1, 27, 20, 5, z=1)  # z decides, not the list order
    assert _rels(a, b) == {(0, "in front of", 1), (1, "behind", 0)}


@pytest.mark.parametrize("x1", [24.0, 25.0, 20.0])  # overlap fraction 0.6, exactly 0.5, 1.0
def test_large_overlap_is_covering_covered_by(x1: float) -> None:
    a, b = _obj(0, 20, 20, 5, z=0), _obj(1, x1, 20, 5, z=1)
    assert _rels(a, b) == {(0, "covered by", 1), (1, "covering", 0)}


def test_overlap_fraction_uses_the_smaller_box() -> None:
    big, small = _obj(0, 20, 20, 10, z=0), _obj(1, 28, 20, 4, z=1)  # small box [24, 32]: 6 x 8 of its 64 inside
    assert _rels(big, small) == {(0, "covered by", 1), (1, "covering", 0)}


def test_just_below_half_overlap_is_in_front_of() -> None:
    a, b = _obj(0, 20, 20, 5, z=0), _obj(1, 25.1, 20, 5, z=1)  # overlap 4.9 x 10 -> 0.49
    assert _rels(a, b) == {(0, "behind", 1), (1, "in front of", 0)}


def test_touching_boxes_do_not_overlap() -> None:
    a, b = _obj(0, 20, 20, 5), _obj(1, 30, 20, 5)  # boxes share the edge x = 25: area 0, gap 0
    assert _rels(a, b) == {(0, "to the left of", 1), (1, "to the right of", 0), (0, "next to", 1), (1, "next to", 0)}


def test_overlap_with_equal_z_keeps_converses() -> None:
    a, b = _obj(0, 20, 20, 5, z=0), _obj(1, 27, 20, 5, z=0)
    _assert_converses(_rels(a, b))


# ---------------------------------------------------------------------------------------------- containment


def test_hollow_outer_surrounds_inner() -> None:
    outer = _obj(0, 24, 24, 11, state="hollow", z=0)
    inner = _obj(1, 24.5, 23.5, 4, z=1)
    assert _rels(outer, inner) == {(0, "surrounding", 1), (1, "inside", 0)}
    assert _rels(inner, outer) == {(0, "surrounding", 1), (1, "inside", 0)}  # list order does not matter


def test_solid_outer_does_not_surround() -> None:
    outer = _obj(0, 24, 24, 11, z=0)
    inner = _obj(1, 24, 24, 4, z=1)
    assert _rels(outer, inner) == {(0, "covered by", 1), (1, "covering", 0)}


def test_containment_must_be_strict() -> None:
    outer = _obj(0, 24, 24, 10, state="hollow", z=0)
    inner = _obj(1, 30, 24, 4, z=1)  # inner box right edge 34 == outer right edge 34
    rels = _rels(outer, inner)
    assert not {p for _, p, _ in rels} & {"surrounding", "inside"}
    assert rels == {(0, "covered by", 1), (1, "covering", 0)}


# ---------------------------------------------------------------------------------------------- pointing


@pytest.mark.parametrize(
    ("heading", "target", "points"),
    [
        (0.0, (34.0, 24.0), True),  # pointing right at a shape to the right
        (15.0, (34.0, 24.0), True),  # within 20 degrees
        (-19.0, (34.0, 24.0), True),
        (25.0, (34.0, 24.0), False),
        (180.0, (34.0, 24.0), False),
        (90.0, (10.0, 4.0), True),  # 90 = up on screen (smaller y)
        (270.0, (10.0, 4.0), False),
        (270.0, (10.0, 44.0), True),
        (350.0, (34.0, 24.0), True),  # wraps around 0
    ],
)
def test_arrow_points_at_within_tolerance(heading: float, target: tuple[float, float], points: bool) -> None:
    arrow = _obj(0, 10, 24, shape="arrow", heading=heading)
    other = _obj(1, *target, shape="circle")
    rels = _rels(arrow, other)
    assert ((0, "pointing at", 1) in rels) is points
    assert not any(p == "pointing at" and s == 1 for s, p, _ in rels)  # only arrows point


def test_arrow_does_not_point_at_an_overlapping_shape() -> None:
    arrow = _obj(0, 20, 20, 5, shape="arrow", heading=0.0, z=0)
    other = _obj(1, 24, 20, 5, shape="circle", z=1)
    assert (0, "pointing at", 1) not in _rels(arrow, other)


def test_pointing_tolerance_is_configurable() -> None:
    arrow, other = _obj(0, 10, 24, shape="arrow", heading=25.0), _obj(1, 34, 24, shape="circle")
    assert (0, "pointing at", 1) in _rels(arrow, other, cfg=WorldConfig(pointing_tolerance_deg=30.0))


# ---------------------------------------------------------------------------------------------- converses


def test_every_relation_has_its_converse_on_hand_built_scenes() -> None:
    scenes = [
        [_obj(0, 10, 24), _obj(1, 20, 26), _obj(2, 40, 8)],
        [_obj(0, 20, 20, 5), _obj(1, 27, 20, 5), _obj(2, 24, 40, 6)],
        [_obj(0, 24, 24, 11, state="hollow"), _obj(1, 24, 24, 4), _obj(2, 42, 42, 4)],
        [_obj(0, 10, 24, shape="arrow", heading=0.0), _obj(1, 34, 24, shape="circle")],
    ]
    for objs in scenes:
        _assert_converses(_rels(*objs))


def test_relation_table_converses_are_mutual() -> None:
    for phrase, rel in RELATIONS.items():
        if rel.converse is not None:
            assert RELATIONS[rel.converse].converse == phrase
        if rel.symmetric:
            assert rel.converse == phrase


@pytest.mark.parametrize("cfg", [WorldConfig(), WorldConfig(min_objects=1, max_objects=4, hollow_prob=0.5),
                                 WorldConfig(image_size=32, min_objects=3, max_objects=3),
                                 WorldConfig(colour_prior=1.0, layout_prior=1.0, max_objects=4, hollow_prob=0.5)])
def test_sampled_scenes_keep_converses_and_invariants(cfg: WorldConfig) -> None:
    rng = np.random.default_rng(123)
    for i in range(120):
        sc = sample_scene(rng, cfg, f"s/{i}")
        n = len(sc.objects)
        assert cfg.min_objects <= n <= cfg.max_objects
        assert [o.id for o in sc.objects] == list(range(n))
        assert len({o.shape for o in sc.objects}) == n, "shapes repeat within a scene"
        assert len({o.colour for o in sc.objects}) == n, "colours repeat within a scene"
        for o in sc.objects:
            x0, y0, x1, y1 = o.box
            assert 0 <= x0 and 0 <= y0 and x1 <= cfg.image_size and y1 <= cfg.image_size, o
            assert o.state == "solid" or o.material == "plain"  # a hollow object has no texture
        assert set(sc.relations) == set(compute_relations(sc.objects, cfg))
        assert len(set(sc.relations)) == len(sc.relations)
        rels = set(sc.relations)
        _assert_converses(rels)
        for a in range(n):  # every ordered pair gets exactly one geometric relation besides next to / pointing
            for b in range(n):
                if a != b:
                    main = [p for s, p, o in rels if (s, o) == (a, b) and p not in ("next to", "pointing at")]
                    assert len(main) == 1, (a, b, main)


def test_sample_scene_is_deterministic_for_a_seed() -> None:
    a = sample_scene(np.random.default_rng(7), CFG, "x")
    b = sample_scene(np.random.default_rng(7), CFG, "x")
    assert a.to_record() == b.to_record()
    others = [sample_scene(np.random.default_rng(s), CFG, "x").to_record() for s in range(8, 12)]
    assert any(o != a.to_record() for o in others)


def test_sample_scene_covers_every_layout() -> None:
    rng = np.random.default_rng(5)
    seen: set[str] = set()
    for i in range(300):
        seen |= {p for _, p, _ in sample_scene(rng, CFG, str(i)).relations}
    assert {"surrounding", "pointing at", "covering", "in front of", "next to", "above", "to the left of"} <= seen


def test_world_config_errors_name_the_parameter() -> None:
    with pytest.raises(ValueError, match=r"world\.image_size"):
        WorldConfig(image_size=16)
    with pytest.raises(ValueError, match=r"world\.min_objects"):
        WorldConfig(min_objects=3, max_objects=2)
    with pytest.raises(ValueError, match=r"world\.layout_probs"):
        WorldConfig(layout_probs=(1.0, 0.0, 0.0))
    with pytest.raises(ValueError, match=r"world\.hollow_prob"):
        WorldConfig(hollow_prob=1.5)
    with pytest.raises(ValueError, match=r"world\.colour_prior"):
        WorldConfig(colour_prior=-0.1)
    with pytest.raises(ValueError, match=r"world\.layout_prior"):
        WorldConfig(layout_prior=2.0)


# ------------------------------------------------------------------------------ co-occurrence priors


def test_prior_colours_by_hand() -> None:
    assert _prior_colours(np.random.default_rng(0), ["heart", "star", "square"], 1.0) == ["red", "yellow", "blue"]
    for seed in range(30):  # p = 0: distinct colours, drawn from the free ones
        cols = _prior_colours(np.random.default_rng(seed), ["heart", "star", "square", "circle"], 0.0)
        assert len(set(cols)) == 4 and set(cols) <= set(COLOURS)


def test_zero_priors_draw_no_random_numbers() -> None:
    plain = [sample_scene(np.random.default_rng(s), WorldConfig(), "x").to_record() for s in range(40)]
    zero = [sample_scene(np.random.default_rng(s), WorldConfig(colour_prior=0.0, layout_prior=0.0), "x").to_record()
            for s in range(40)]
    assert plain == zero
    on = [sample_scene(np.random.default_rng(s), WorldConfig(colour_prior=0.5), "x").to_record() for s in range(40)]
    assert on != plain


def test_colour_prior_sets_the_typical_colour_rate() -> None:
    def rate(p: float) -> float:
        rng = np.random.default_rng(1)
        objs = [o for i in range(1500) for o in sample_scene(rng, WorldConfig(colour_prior=p), str(i)).objects]
        return float(np.mean([TYPICAL_COLOUR[o.shape] == o.colour for o in objs]))

    assert rate(0.0) == pytest.approx(1 / 8, abs=0.02)
    # typical with p, else uniform over the free colours (about 1/8 of which is the typical one)
    assert rate(0.5) == pytest.approx(0.5 + 0.5 / 8, abs=0.04)


def test_full_layout_prior_orders_free_objects_by_elevation_and_depth() -> None:
    rng = np.random.default_rng(2)
    cfg = WorldConfig(layout_prior=1.0, min_objects=3, max_objects=4)
    n_overlap = n_free = 0
    for i in range(400):
        sc = sample_scene(rng, cfg, str(i))
        ranked = [o for o in sc.objects if o.shape in ELEVATION]
        rels = set(sc.relations)
        for a in ranked:
            for b in ranked:
                if (a.id, "covering", b.id) in rels or (a.id, "in front of", b.id) in rels:
                    n_overlap += 1
                    assert ELEVATION[a.shape] > ELEVATION[b.shape], sc.to_record()
                if (a.id, "above", b.id) in rels and a.id >= 2 and b.id >= 2:  # both placed freely
                    n_free += 1
                    assert ELEVATION[a.shape] > ELEVATION[b.shape], sc.to_record()
    assert n_overlap > 20 and n_free > 20


def test_layout_prior_by_hand() -> None:
    objs = [Obj(0, "square", "blue", "large", "striped", "solid", 20, 10, 10, z=0),
            Obj(1, "star", "yellow", "small", "plain", "hollow", 25, 40, 6, z=1),
            Obj(2, "arrow", "red", "small", "plain", "solid", 5, 5, 6, heading=30.0, z=2)]
    _apply_layout_prior(objs, "separated", 0)
    # the star's look moves to the top slot, the square's to the bottom; sizes, places and the arrow stay
    assert [(o.shape, o.colour, o.material, o.state, o.size, o.y) for o in objs] == [
        ("star", "yellow", "plain", "hollow", "large", 10), ("square", "blue", "striped", "solid", "small", 40),
        ("arrow", "red", "plain", "solid", "small", 5)]
    pair = [Obj(0, "star", "yellow", "small", "plain", "solid", 20, 20, 6, z=0),
            Obj(1, "square", "blue", "large", "dotted", "solid", 24, 22, 10, z=1)]
    _apply_layout_prior(pair, "overlap", 2)
    assert (pair[1].shape, pair[1].colour, pair[1].material, pair[1].size) == ("star", "yellow", "plain", "large")


# ---------------------------------------------------------------------------------------------- records


def test_record_round_trip_through_json() -> None:
    rng = np.random.default_rng(3)
    for i in range(20):
        sc = sample_scene(rng, CFG, f"train/{i:06d}")
        rec = json.loads(json.dumps(sc.to_record()))
        back = Scene.from_record(rec)
        assert back == sc
        assert back.to_record() == sc.to_record()


@pytest.mark.parametrize(
    "breakage",
    [
        lambda r: r.pop("objects"),
        lambda r: r.pop("image_id"),
        lambda r: r["objects"][0].pop("x"),
        lambda r: r["objects"][0].update(colour_name="red"),
        lambda r: r.update(relations=[[0, "above"]]),
        lambda r: r.update(relations=[["zero", "above", 1]]),
        lambda r: r.update(objects=3),
    ],
)
def test_from_record_on_a_broken_record_names_the_place(breakage) -> None:
    rec = sample_scene(np.random.default_rng(0), WorldConfig(min_objects=2), "x").to_record()
    breakage(rec)
    with pytest.raises(ValueError, match=r"scenes\.jsonl:7: malformed scene"):
        Scene.from_record(rec, "data/train/scenes.jsonl:7")


@pytest.mark.parametrize(
    "breakage",
    [
        lambda r: r["objects"][0].update(x=None),
        lambda r: r.update(relations=[[0, "flying over", 1]]),
        lambda r: r.update(relations=[[0, "above", 9]]),
    ],
    ids=["x-none", "unknown-relation", "dangling-id"],
)
def test_from_record_rejects_bad_values_by_place(breakage) -> None:
    rec = sample_scene(np.random.default_rng(0), WorldConfig(min_objects=2), "x").to_record()
    breakage(rec)
    with pytest.raises(ValueError, match=r"scenes\.jsonl:7"):
        Scene.from_record(rec, "data/train/scenes.jsonl:7")


def test_web_only_concepts_appear_in_web_scenes_only():
    """world.web_only_*: a web scene draws from the COCO vocabulary plus the web-only concepts, a COCO-style scene
    never shows them and is the same scene as without the knob (no extra random draws); an unknown name is refused."""
    from vlcomp.world.concepts import WEB_ONLY_COLOURS, WEB_ONLY_SHAPES

    on = WorldConfig(colour_prior=0.5, web_only_shapes=WEB_ONLY_SHAPES, web_only_colours=tuple(WEB_ONLY_COLOURS))
    off = WorldConfig(colour_prior=0.5)
    coco = [sample_scene(np.random.default_rng(s), on, "x").to_record() for s in range(60)]
    assert coco == [sample_scene(np.random.default_rng(s), off, "x").to_record() for s in range(60)]
    assert [sample_scene(np.random.default_rng(s), off, "x", web=True).to_record() for s in range(60)] == coco
    objs = [o for s in range(400) for o in sample_scene(np.random.default_rng(s), on, "x", web=True).objects]
    shapes, colours = {o.shape for o in objs}, {o.colour for o in objs}
    assert set(WEB_ONLY_SHAPES) <= shapes and set(WEB_ONLY_COLOURS) <= colours
    assert not ({o["shape"] for r in coco for o in r["objects"]} & set(WEB_ONLY_SHAPES))
    assert not ({o["colour"] for r in coco for o in r["objects"]} & set(WEB_ONLY_COLOURS))
    with pytest.raises(ValueError, match=r"world.web_only_shapes: unknown \['oval'\]"):
        WorldConfig(web_only_shapes=("oval",))
    with pytest.raises(ValueError, match="world.web_only_colours='pink': must be a list"):
        WorldConfig(web_only_colours="pink")


def test_web_only_shapes_render_and_are_words():
    from vlcomp.world.concepts import WEB_ONLY_SHAPES, world_words
    from vlcomp.world.render import render

    words = world_words()
    assert words[-6:] == ["hexagon", "moon", "hexagons", "moons", "pink", "brown"]  # appended: old ids unchanged
    for shape in WEB_ONLY_SHAPES:
        im = render(Scene("x", "black", [Obj(0, shape, "pink", "large", "plain", "solid", 24, 24, 10)]), 48)
        lit = (im.sum(axis=2) > 0).mean()
        assert 0.05 < lit < 0.2, (shape, lit)  # a filled shape of about the size of the others
