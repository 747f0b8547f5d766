"""VG-Relation / VG-Attribution twins: ARO App. A.1 rules on hand-built scenes and sampled ones."""

from __future__ import annotations

import numpy as np
import pytest

from vlcomp.twins.aro_vg import build_vg_attribution, build_vg_relation, crop, union_box
from vlcomp.world.concepts import RELATIONS
from vlcomp.world.scene import Obj, Scene, WorldConfig, compute_relations, sample_scene

SIZE = 48  # the size filter keeps boxes at least 12 px wide (half >= 6)
CFG = WorldConfig(image_size=SIZE)


def _obj(oid: int, shape: str, x: float, y: float, half: float = 8.0, *, colour: str = "red", size: str = "large",
         material: str = "plain", state: str = "solid", z: int | None = None) -> Obj:
    return Obj(oid, shape, colour, size, material, state, x, y, half, z=oid if z is None else z)


def _scene(*objs: Obj, image_id: str = "toy/000001") -> Scene:
    return Scene(image_id, "black", list(objs), compute_relations(list(objs), CFG))


def _axis(rel: str) -> str:
    conv = RELATIONS[rel].converse or rel
    return min(rel, conv)


# ----------------------------------------------------------------------------------------------- boxes


def test_union_box_by_hand() -> None:
    a, b = _obj(0, "circle", 10, 10, 5), _obj(1, "square", 30.5, 20, 6)  # (5, 5, 15, 15) and (24.5, 14, 36.5, 26)
    assert union_box(a, b, SIZE) == {"bbox_x": 5, "bbox_y": 5, "bbox_w": 32, "bbox_h": 21}
    assert union_box(b, a, SIZE) == union_box(a, b, SIZE)


def test_union_box_is_clipped_to_the_image() -> None:
    a, b = _obj(0, "circle", 3, 3, 6), _obj(1, "square", 44, 40, 6)  # (-3, -3, 9, 9) and (38, 34, 50, 46)
    assert union_box(a, b, SIZE) == {"bbox_x": 0, "bbox_y": 0, "bbox_w": 48, "bbox_h": 46}


def test_union_box_of_nested_boxes_is_the_outer_box() -> None:
    outer, inner = _obj(0, "circle", 24, 24, 11), _obj(1, "star", 24, 24, 4)
    assert union_box(outer, inner, SIZE) == {"bbox_x": 13, "bbox_y": 13, "bbox_w": 22, "bbox_h": 22}


def test_crop_takes_the_record_box() -> None:
    image = np.arange(SIZE * SIZE * 3, dtype=np.int64).reshape(SIZE, SIZE, 3).astype(np.uint8)
    rec = {"bbox_x": 5, "bbox_y": 7, "bbox_w": 20, "bbox_h": 11}
    out = crop(image, rec)
    assert out.shape == (11, 20, 3) and out.dtype == np.uint8
    np.testing.assert_array_equal(out, image[7:18, 5:25])
    np.testing.assert_array_equal(out[0, 0], image[7, 5])
    full = crop(image, {"bbox_x": 0, "bbox_y": 0, "bbox_w": SIZE, "bbox_h": SIZE})
    np.testing.assert_array_equal(full, image)


# -------------------------------------------------------------------------------------------- VG-Relation


def test_relation_templates_and_swap() -> None:
    sc = _scene(_obj(0, "circle", 10, 24), _obj(1, "square", 38, 24))  # far apart: left/right only
    for seed in range(6):
        (case,) = build_vg_relation([sc], SIZE, np.random.default_rng(seed))
        assert (case["true_caption"], case["false_caption"], case["relation_name"]) in {
            ("the circle is to the left of the square", "the square is to the left of the circle", "to the left of"),
            ("the square is to the right of the circle", "the circle is to the right of the square", "to the right of"),
        }
        assert case["image_path"] == "toy/000001"
        assert {k: case[k] for k in ("bbox_x", "bbox_y", "bbox_w", "bbox_h")} == union_box(*sc.objects, SIZE)


def test_relation_true_caption_is_in_the_scene_graph() -> None:
    sc = _scene(_obj(0, "heart", 24, 8), _obj(1, "cross", 24, 38))
    for seed in range(4):
        (case,) = build_vg_relation([sc], SIZE, np.random.default_rng(seed))
        _, subj, _, *rel, _, obj = case["true_caption"].split()
        assert " ".join(rel) == case["relation_name"] in ("above", "below")
        ids = {o.shape: o.id for o in sc.objects}
        assert (ids[subj], case["relation_name"], ids[obj]) in sc.relations
        assert case["false_caption"] == f"the {obj} is {case['relation_name']} the {subj}"


def test_symmetric_relations_are_kept_in_the_file() -> None:
    sc = _scene(_obj(0, "circle", 12, 24), _obj(1, "square", 30, 24))  # gap 2 px: left/right and next to
    cases = build_vg_relation([sc], SIZE, np.random.default_rng(0))
    assert sorted(c["relation_name"] in ("to the left of", "to the right of") for c in cases) == [False, True]
    (near,) = [c for c in cases if c["relation_name"] == "next to"]
    assert {near["true_caption"], near["false_caption"]} == {"the circle is next to the square",
                                                             "the square is next to the circle"}


def test_one_case_per_pair_and_axis_including_pointing() -> None:
    arrow = Obj(0, "arrow", "red", "large", "plain", "solid", 10, 24, 8, heading=0.0, z=0)
    sc = _scene(arrow, _obj(1, "circle", 38, 24))
    cases = build_vg_relation([sc], SIZE, np.random.default_rng(0))
    assert sorted(_axis(c["relation_name"]) for c in cases) == ["pointing at", "to the left of"]
    (point,) = [c for c in cases if c["relation_name"] == "pointing at"]
    assert point["true_caption"] == "the arrow is pointing at the circle"
    assert point["false_caption"] == "the circle is pointing at the arrow"


def test_containment_and_covering_give_one_case_each_pair() -> None:
    outer = _obj(0, "circle", 24, 24, 16, state="hollow")
    inner = _obj(1, "star", 24, 24, 7)
    (case,) = build_vg_relation([_scene(outer, inner)], SIZE, np.random.default_rng(0))
    assert case["relation_name"] in ("inside", "surrounding")
    a, b = _obj(0, "circle", 20, 20, 8, z=0), _obj(1, "square", 24, 20, 8, z=1)
    (case,) = build_vg_relation([_scene(a, b)], SIZE, np.random.default_rng(0))
    assert case["relation_name"] in ("covering", "covered by")


@pytest.mark.parametrize(("half", "kept"), [(5.9, False), (6.0, True)])
def test_size_filter_drops_objects_narrower_than_a_quarter(half: float, kept: bool) -> None:
    sc = _scene(_obj(0, "circle", 10, 24), _obj(1, "square", 38, 24, half))
    assert bool(build_vg_relation([sc], SIZE, np.random.default_rng(0))) is kept
    a = _obj(0, "circle", 10, 24, colour="red")
    b = _obj(1, "square", 38, 24, half, colour="blue")
    assert bool(build_vg_attribution([_scene(a, b)], SIZE, np.random.default_rng(0))) is kept


def test_size_filter_scales_with_the_image() -> None:
    sc = _scene(_obj(0, "circle", 10, 24), _obj(1, "square", 38, 24, 7))  # 14 px boxes
    assert build_vg_relation([sc], 48, np.random.default_rng(0))
    assert not build_vg_relation([sc], 64, np.random.default_rng(0))  # needs 16 px


def test_pairs_of_the_same_shape_are_excluded() -> None:
    sc = _scene(_obj(0, "circle", 10, 24, colour="red"), _obj(1, "circle", 38, 24, colour="blue"))
    assert build_vg_relation([sc], SIZE, np.random.default_rng(0)) == []
    assert build_vg_attribution([sc], SIZE, np.random.default_rng(0)) == []


def test_sampled_scenes_one_case_per_eligible_pair_and_axis() -> None:
    rng = np.random.default_rng(0)
    scenes = [sample_scene(rng, CFG, f"val/{i:06d}") for i in range(150)]
    cases = build_vg_relation(scenes, SIZE, np.random.default_rng(1))
    by_image: dict[str, list[dict]] = {}
    for c in cases:
        by_image.setdefault(c["image_path"], []).append(c)
    for sc in scenes:
        big = {o.id for o in sc.objects if 2 * o.half >= SIZE / 4}
        ids = {o.shape: o.id for o in sc.objects}
        expected = {(min(s, o), max(s, o), _axis(p)) for s, p, o in sc.relations if s in big and o in big}
        got = []
        for c in by_image.get(sc.image_id, []):
            _, subj, _, *_, obj = c["true_caption"].split()
            s, o = ids[subj], ids[obj]
            assert (s, c["relation_name"], o) in sc.relations
            got.append((min(s, o), max(s, o), _axis(c["relation_name"])))
        assert len(got) == len(set(got)) and set(got) == expected, sc.image_id
    assert any(c["relation_name"] == "next to" for c in cases)
    assert not any(c["relation_name"] in ("inside", "surrounding") for c in cases)  # inner objects are small


def test_relation_builder_is_deterministic_for_a_seed() -> None:
    rng = np.random.default_rng(4)
    scenes = [sample_scene(rng, CFG, str(i)) for i in range(30)]
    a = build_vg_relation(scenes, SIZE, np.random.default_rng(9))
    b = build_vg_relation(scenes, SIZE, np.random.default_rng(9))
    assert a == b


# ----------------------------------------------------------------------------------------- VG-Attribution


def test_attribution_template_and_swap() -> None:
    a = _obj(0, "circle", 10, 24, colour="red", size="large", material="plain", state="solid")
    b = _obj(1, "square", 38, 24, colour="blue", size="large", material="plain", state="solid")
    for seed in range(6):
        (case,) = build_vg_attribution([_scene(a, b)], SIZE, np.random.default_rng(seed))
        assert case["attribute_kind"] == "colour"  # the only attribute that differs
        assert (case["true_caption"], case["false_caption"], case["attributes"]) in [
            ("the red circle and the blue square", "the blue circle and the red square", ["red", "blue"]),
            ("the blue square and the red circle", "the red square and the blue circle", ["blue", "red"]),
        ]


def test_attribution_kind_is_one_that_differs() -> None:
    a = _obj(0, "circle", 10, 24, colour="red", size="large", material="striped", state="solid")
    b = _obj(1, "square", 38, 24, colour="red", size="small", material="dotted", state="solid")
    kinds = set()
    for seed in range(40):
        (case,) = build_vg_attribution([_scene(a, b)], SIZE, np.random.default_rng(seed))
        kinds.add(case["attribute_kind"])
        va, vb = case["attributes"]
        assert va != vb
        first, second = case["true_caption"].split(" and ")
        assert case["false_caption"] == f"the {vb} {first.split()[2]} and the {va} {second.split()[2]}"
    assert kinds == {"size", "material"}


def test_attribution_needs_a_differing_attribute() -> None:
    a = _obj(0, "circle", 10, 24, colour="red")
    b = _obj(1, "square", 38, 24, colour="red")
    assert build_vg_attribution([_scene(a, b)], SIZE, np.random.default_rng(0)) == []


def test_attribution_on_sampled_scenes_uses_real_attributes() -> None:
    rng = np.random.default_rng(2)
    scenes = {sc.image_id: sc for sc in (sample_scene(rng, CFG, f"v/{i}") for i in range(60))}
    cases = build_vg_attribution(list(scenes.values()), SIZE, np.random.default_rng(3))
    assert cases
    for c in cases:
        objs = {o.shape: o for o in scenes[c["image_path"]].objects}
        _, va, sa, _, _, vb, sb = c["true_caption"].split()
        assert objs[sa].attributes()[c["attribute_kind"]] == va
        assert objs[sb].attributes()[c["attribute_kind"]] == vb
        assert c["false_caption"] == f"the {vb} {sa} and the {va} {sb}"
