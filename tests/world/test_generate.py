"""Split generation: byte-identical outputs for the same parameters, different seeds differ, read-back."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vlcomp.world import Split, world_configs
from vlcomp.world.captions import CaptionConfig, pair_caption
from vlcomp.world.generate import SplitSpec, generate_split, layout_twin, write_split
from vlcomp.world.scene import Obj, Scene, WorldConfig, compute_relations

FILES = ("images.npy", "scenes.jsonl", "captions.json")
WCFG = WorldConfig(image_size=32)
CCFG = CaptionConfig(captions_per_image=3)


def _write(root: Path, spec: SplitSpec, seed: int) -> Path:
    out = root / spec.name
    write_split(out, *generate_split(spec, WCFG, CCFG, seed))
    return out


@pytest.mark.parametrize("style", ["web", "coco", "flickr"])
def test_same_params_give_byte_identical_files(tmp_path: Path, style: str) -> None:
    spec = SplitSpec("val", 6, style)
    a, b = _write(tmp_path / "a", spec, 0), _write(tmp_path / "b", spec, 0)
    for name in FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    assert sorted(p.name for p in a.iterdir()) == sorted(FILES)  # no temporary files left behind


def test_different_seeds_differ(tmp_path: Path) -> None:
    spec = SplitSpec("val", 6, "coco")
    a, b = _write(tmp_path / "a", spec, 0), _write(tmp_path / "b", spec, 1)
    for name in FILES:
        assert (a / name).read_bytes() != (b / name).read_bytes(), name


def test_split_name_is_part_of_the_seed() -> None:
    imgs_a, _, _, _ = generate_split(SplitSpec("train", 4, "web"), WCFG, CCFG, 0)
    imgs_b, _, _, _ = generate_split(SplitSpec("test", 4, "web"), WCFG, CCFG, 0)
    assert not np.array_equal(imgs_a, imgs_b)


def test_scene_stream_is_independent_of_the_caption_style() -> None:
    imgs_web, scenes_web, _, _ = generate_split(SplitSpec("s", 5, "web"), WCFG, CCFG, 3)
    imgs_coco, scenes_coco, _, _ = generate_split(SplitSpec("s", 5, "coco"), WCFG, CCFG, 3)
    np.testing.assert_array_equal(imgs_web, imgs_coco)
    assert [s.to_record() for s in scenes_web] == [s.to_record() for s in scenes_coco]


def test_written_split_reads_back(tmp_path: Path) -> None:
    spec = SplitSpec("val", 5, "flickr")
    images, scenes, anns, _ = generate_split(spec, WCFG, CCFG, 2)
    write_split(tmp_path / "val", images, scenes, anns)
    split = Split(tmp_path, "val")
    assert split.images.dtype == np.uint8 and split.images.shape == (5, 32, 32, 3)
    np.testing.assert_array_equal(split.images, images)
    assert split.scenes() == scenes
    assert split.captions() == [a["caption"] for a in anns]
    assert [a["image"] for a in split.annotations()] == [f"val/{i:06d}" for i in range(5)]
    assert all(len(c) == 3 for c in split.captions())


def test_split_spec_errors_name_the_split() -> None:
    with pytest.raises(ValueError, match=r"world\.splits\.val\.n_images=0"):
        SplitSpec("val", 0, "coco")
    with pytest.raises(ValueError, match=r"world\.splits\.val\.style='vg'"):
        SplitSpec("val", 3, "vg")


def test_world_configs_from_params() -> None:
    params = {"world": {"image_size": 32, "captions": {"captions_per_image": 2},
                        "splits": {"train": {"n_images": 3, "style": "web"}}}}
    wcfg, ccfg, specs = world_configs(params)
    assert wcfg.image_size == 32 and ccfg.captions_per_image == 2
    assert specs == [SplitSpec("train", 3, "web")]
    with pytest.raises(ValueError, match=r"world\.captions\.colour"):
        world_configs({"world": {"captions": {"colour": 1}, "splits": {"t": {"n_images": 1, "style": "web"}}}})
    with pytest.raises(ValueError, match=r"world\.splits"):
        world_configs({"world": {"image_size": 32}})


def test_generate_world_is_identical_with_two_workers(tmp_path) -> None:
    """Parallel generation writes the same bytes as serial generation (each split has its own streams)."""
    from vlcomp.world.captions import CaptionConfig
    from vlcomp.world.generate import SplitSpec, generate_world
    from vlcomp.world.scene import WorldConfig

    specs = [SplitSpec("web", 6, "web"), SplitSpec("coco_test", 4, "coco"), SplitSpec("flickr_test", 3, "flickr")]
    s1 = generate_world(specs, WorldConfig(), CaptionConfig(), 3, tmp_path / "serial", workers=1)
    s2 = generate_world(specs, WorldConfig(), CaptionConfig(), 3, tmp_path / "parallel", workers=2)
    assert s1 == s2
    for spec in specs:
        for name in ("images.npy", "scenes.jsonl", "captions.json"):
            a = (tmp_path / "serial" / spec.name / name).read_bytes()
            assert a == (tmp_path / "parallel" / spec.name / name).read_bytes()


# ------------------------------------------------------------------------------------ binding twin pairs


def test_twin_pairs_swap_two_colours_and_keep_geometry() -> None:
    images, scenes, anns, twins = generate_split(SplitSpec("web", 40, "web", twin_prob=0.5), WCFG, CCFG, 0)
    assert 5 <= len(twins) <= 20
    for i, j in twins:
        assert j == i + 1
        a, b = scenes[i], scenes[j]
        diff = [k for k, (oa, ob) in enumerate(zip(a.objects, b.objects, strict=True)) if oa.colour != ob.colour]
        assert len(diff) == 2
        k, m = diff
        assert (a.objects[k].colour, a.objects[m].colour) == (b.objects[m].colour, b.objects[k].colour)
        for oa, ob in zip(a.objects, b.objects, strict=True):
            assert (oa.shape, oa.x, oa.y, oa.half, oa.material, oa.state) == (ob.shape, ob.x, ob.y, ob.half, ob.material, ob.state)
        assert a.relations == b.relations
        assert not np.array_equal(images[i], images[j])
        for cap in (anns[i]["caption"][0], anns[j]["caption"][0]):  # bound captions: "a ... and a ..."
            assert not cap.startswith("clipart") and "," not in cap, cap
    assert len({a["image"] for a in anns}) == 40


def test_twin_prob_zero_leaves_the_split_unchanged(tmp_path: Path) -> None:
    plain = _write(tmp_path / "a", SplitSpec("web", 8, "web"), 0)
    zero = _write(tmp_path / "b", SplitSpec("web", 8, "web", twin_prob=0.0), 0)
    for name in FILES:
        assert (plain / name).read_bytes() == (zero / name).read_bytes(), name
    assert not (zero / "twins.json").exists()
    assert Split(tmp_path / "b", "web").twins() == []


def test_twins_read_back_and_bad_files_name_the_pair(tmp_path: Path) -> None:
    out = _write(tmp_path, SplitSpec("web", 30, "web", twin_prob=0.6), 1)
    split = Split(tmp_path, "web")
    pairs = split.twins()
    assert pairs and all(j == i + 1 for i, j in pairs)
    for bad, msg in (([[0, 0]], "pair 0"), ([[0, 1], [1, 2]], "pair 1"), ([[0, 99]], "pair 0"), ({"a": 1}, "list")):
        (out / "twins.json").write_text(json.dumps(bad))
        with pytest.raises(ValueError, match=msg):
            split.twins()
    with pytest.raises(ValueError, match=r"world\.splits\.web\.twin_prob"):
        SplitSpec("web", 3, "web", twin_prob=1.5)


def _two(x0: float, y0: float, x1: float, y1: float, shape1: str = "square") -> Scene:
    objs = [Obj(0, "circle", "red", "small", "plain", "solid", x0, y0, 5.0, z=0),
            Obj(1, shape1, "blue", "large", "plain", "solid", x1, y1, 8.0, z=1)]
    return Scene("s/0", "black", objs, compute_relations(objs, WCFG))


def test_layout_twin_reverses_the_relations_of_the_pair() -> None:
    sc = _two(8, 16, 24, 16)  # circle left of square
    assert (0, "to the left of", 1) in sc.relations
    tw = layout_twin(sc, 0, 1, "s/1", WCFG)
    assert tw is not None and tw.image_id == "s/1"
    assert (0, "to the right of", 1) in tw.relations and (1, "to the left of", 0) in tw.relations
    assert [(o.shape, o.colour, o.size, o.half) for o in tw.objects] == [(o.shape, o.colour, o.size, o.half)
                                                                         for o in sc.objects]
    assert (tw.objects[0].x, tw.objects[1].x) == (24, 8)


def test_layout_twin_refuses_invalid_swaps() -> None:
    assert layout_twin(_two(8, 16, 24, 16, shape1="arrow"), 0, 1, "t", WCFG) is None  # arrows keep their heading
    assert layout_twin(_two(10, 16, 16, 16), 0, 1, "t", WCFG) is None  # overlapping boxes
    assert layout_twin(_two(5.5, 5.5, 20, 20), 0, 1, "t", WCFG) is None  # the large one would leave the image


def test_pair_caption_states_a_relation_of_the_pair() -> None:
    sc = _two(8, 16, 24, 16)
    caps = {pair_caption(np.random.default_rng(s), sc, 0, 1, CaptionConfig(colour_prob=1.0, size_prob=0.0,
                                                                              material_prob=0.0)) for s in range(20)}
    assert caps == {"a red circle to the left of a blue square", "a blue square to the right of a red circle"}
    lonely = Scene("s/2", "black", sc.objects, [])
    with pytest.raises(ValueError, match="no non-symmetric relation"):
        pair_caption(np.random.default_rng(0), lonely, 0, 1, CaptionConfig())


def test_layout_twins_in_a_split_swap_places_and_state_the_pair() -> None:
    _, scenes, anns, twins = generate_split(SplitSpec("web", 120, "web", twin_prob=0.6, twin_layout_share=1.0),
                                            WCFG, CCFG, 4)
    n_layout = 0
    for i, j in twins:
        a, b = scenes[i], scenes[j]
        if [o.colour for o in a.objects] != [o.colour for o in b.objects]:
            continue  # a colour twin (the scene could not be rearranged)
        n_layout += 1
        moved = [k for k, (oa, ob) in enumerate(zip(a.objects, b.objects, strict=True)) if (oa.x, oa.y) != (ob.x, ob.y)]
        assert len(moved) == 2
        for cap, sc in ((anns[i]["caption"][0], a), (anns[j]["caption"][0], b)):
            assert all(sc.objects[k].shape in cap for k in moved), cap
    assert n_layout >= 5


def test_split_caption_overrides_change_only_that_splits_captions() -> None:
    plain = generate_split(SplitSpec("cc", 40, "web"), WCFG, CCFG, 5)
    bound = generate_split(SplitSpec("cc", 40, "web", captions={"web_bind_prob": 1.0, "web_relation_prob": 1.0}),
                           WCFG, CCFG, 5)
    np.testing.assert_array_equal(plain[0], bound[0])  # same scenes and images
    assert [s.to_record() for s in plain[1]] == [s.to_record() for s in bound[1]]
    caps = [a["caption"][0] for a in bound[2]]
    assert caps != [a["caption"][0] for a in plain[2]]
    # every bound caption of a scene with a relation states one ("a <np> <relation> a <np>")
    from vlcomp.world.concepts import RELATIONS

    with_rel = [c for c, s in zip(caps, bound[1], strict=True) if s.relations]
    assert with_rel and all(any(f" {r} " in c for r in RELATIONS) for c in with_rel)
    # no override: the split generated before the key existed
    same = generate_split(SplitSpec("cc", 40, "web", captions=None), WCFG, CCFG, 5)
    assert [a["caption"] for a in same[2]] == [a["caption"] for a in plain[2]]


def test_split_caption_override_errors_name_the_key() -> None:
    with pytest.raises(ValueError, match=r"world\.splits\.cc\.captions: unknown key\(s\) \['bind'\]"):
        SplitSpec("cc", 3, "web", captions={"bind": 1.0})
    with pytest.raises(ValueError, match=r"world\.splits\.cc\.captions: .*web_bind_prob=2"):
        generate_split(SplitSpec("cc", 3, "web", captions={"web_bind_prob": 2}), WCFG, CCFG, 0)
