"""VL-CheckList twin: the binning and replacement rules on hand-built scenes, then the built twin on the tiny world
(every item re-checked on the scene graph, vocabulary, determinism, loader round trip, scoring end to end)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vlcomp.benchmarks import BENCHMARKS
from vlcomp.benchmarks.vlchecklist import VLC_CATEGORY_KEY
from vlcomp.formats import vlchecklist as vlc_ds
from vlcomp.twins import build_twin
from vlcomp.twins.vlchecklist import (
    NOT_EXPRESSIBLE,
    actions,
    attribute_items,
    cap,
    file_specs,
    location_bin,
    object_items,
    relation_items,
    relation_replacements,
    size_bin,
)
from vlcomp.world import Split
from vlcomp.world.concepts import ALL_RELATIONS, RELATIONS, SHAPES
from vlcomp.world.scene import LAYOUTS, Obj, Scene, WorldConfig, compute_relations

from .inventory import RELATIONS as WORLD_RELATIONS
from .inventory import WCFG, implied
from .tokenizer import params_tokenizer

SIZE = 48
CFG = WorldConfig(image_size=SIZE)
SMALL = {"vlchecklist": {"items_per_file": 12}}
SMALL_AREA = 0.05  # VL-CheckList's Object/Size "small" bin: box area < 0.05 of the image


def has_small_objects(wcfg: WorldConfig) -> bool:
    """Whether a world draws objects in the Object/Size "small" bin. Only a contained object is smaller than a
    small one (``world.contain_inner_scale`` of its half-extent): the first world's 0.75 makes a 9 px box (0.035 of
    48 x 48), the second world's 1.0 a 12 px one (0.0625: medium, as a small object)."""
    if wcfg.layout_probs[LAYOUTS.index("contain")] == 0:
        return False
    half = wcfg.half_extent("small") * wcfg.contain_inner_scale
    return (2 * half) ** 2 / wcfg.image_size**2 < SMALL_AREA


#: The tiny world's (params.yaml): without objects that small the twin writes no "small" files, and its corpus has
#: no "small" category (the Object/Size mean is then over medium and large).
SMALL_BIN = has_small_objects(WCFG)
EXPECTED_FILES = [s.key for s in file_specs() if SMALL_BIN or s.category != "small"]
EXPECTED_CATEGORIES = [c for c in vlc_ds.CORPUS if SMALL_BIN or c != "small"]


def _obj(oid: int, shape: str, x: float, y: float, half: float = 6.0, *, colour: str = "red", size: str = "small",
         material: str = "plain", state: str = "solid", heading: float = 0.0) -> Obj:
    return Obj(oid, shape, colour, size, material, state, x, y, half, heading=heading, z=oid)


def _scene(*objs: Obj, image_id: str = "vg_test/000001") -> Scene:
    return Scene(image_id, "black", list(objs), compute_relations(list(objs), CFG))


# ------------------------------------------------------------------------------------------- bins by hand


@pytest.mark.parametrize(("x", "y", "expected"), [
    (24, 24, "center"),  # distance 0
    (31.9, 24, "center"),  # 7.9 / 24 < 1/3
    (32, 24, "mid"),  # exactly 8 / 24 = 1/3: the upper bound is strict
    (24, 39.9, "mid"),  # 15.9 / 24 < 2/3
    (40, 24, "margin"),  # 16 / 24 = 2/3
    (36, 36, "margin"),  # the diagonal counts its Euclidean distance: hypot(12, 12) / 24 = 0.707
    (30, 30, "mid"),  # hypot(6, 6) / 24 = 0.354
])
def test_location_bin_by_hand(x, y, expected) -> None:
    assert location_bin(_obj(0, "circle", x, y), SIZE) == expected


@pytest.mark.parametrize(("half", "expected"), [
    (4.5, "small"),  # 81 / 2304 = 0.035 (an object inside a container)
    (5.3, "small"),  # 112.4 / 2304 = 0.0488
    (5.4, "medium"),  # 116.6 / 2304 = 0.0506
    (6.0, "medium"),  # 144 / 2304 = 0.0625 (a "small" object)
    (8.3, "medium"),  # 275.6 / 2304 = 0.1196
    (8.4, "large"),  # 282.2 / 2304 = 0.1225
    (10.0, "large"),  # 400 / 2304 = 0.174 (a "large" object)
])
def test_size_bin_by_hand(half, expected) -> None:
    assert size_bin(_obj(0, "circle", 24, 24, half), SIZE) == expected


# ---------------------------------------------------------------------------------------- rules by hand


def test_object_items_replace_the_tested_noun_with_an_absent_shape() -> None:
    sc = _scene(_obj(0, "circle", 24, 24), _obj(1, "square", 42, 24))  # circle centre, square right margin
    assert sc.relations == [(0, "to the left of", 1), (1, "to the right of", 0)]
    absent = set(SHAPES) - {"circle", "square"}
    subj = object_items([sc], SIZE, "Location", "center", "subj", np.random.default_rng(0))
    assert [it.pos for it in subj] == ["circle to the left of square"]
    new, *rest = subj[0].neg.split()
    assert new in absent and " ".join(rest) == "to the left of square"
    obj = object_items([sc], SIZE, "Location", "center", "obj", np.random.default_rng(0))
    assert [it.pos for it in obj] == ["square to the right of circle"]
    assert obj[0].neg.startswith("square to the right of ") and obj[0].neg.split()[-1] in absent
    margin = object_items([sc], SIZE, "Location", "margin", "subj", np.random.default_rng(0))
    assert [it.pos for it in margin] == ["square to the right of circle"]
    assert object_items([sc], SIZE, "Size", "medium", "subj", np.random.default_rng(0))[0].scene == 0
    assert object_items([sc], SIZE, "Size", "large", "subj", np.random.default_rng(0)) == []


def test_object_items_skip_symmetric_facts() -> None:
    sc = _scene(_obj(0, "circle", 10, 24), _obj(1, "square", 25, 24))  # gap 3 px: next to
    assert (0, "next to", 1) in sc.relations
    items = object_items([sc], SIZE, "Size", "medium", "subj", np.random.default_rng(0))
    assert sorted(it.pos for it in items) == ["circle to the left of square", "square to the right of circle"]


def test_attribute_items_values_and_replacements() -> None:
    sc = _scene(_obj(0, "circle", 24, 24, 11.5, colour="blue", size="large", state="hollow"),
                _obj(1, "star", 24, 24, 4.5, colour="red", material="striped"))
    mat = attribute_items([sc], "material", np.random.default_rng(0))
    assert [(it.pos, it.neg.split()[-1]) for it in mat] == [("striped star", "star")]  # the hollow circle: none
    assert mat[0].neg.split()[0] in ("plain", "dotted")
    state = attribute_items([sc], "state", np.random.default_rng(0))
    assert [(it.pos, it.neg) for it in state] == [("hollow circle", "solid circle"), ("solid star", "hollow star")]
    size = attribute_items([sc], "size", np.random.default_rng(0))
    assert [(it.pos, it.neg) for it in size] == [("large circle", "small circle"), ("small star", "large star")]
    for it in attribute_items([sc], "color", np.random.default_rng(1)):
        value, shape = it.neg.split()
        assert value != {"circle": "blue", "star": "red"}[shape]
    action = attribute_items([sc], "action", np.random.default_rng(0))
    assert [it.pos for it in action] == ["surrounding circle"]  # the star is "inside": spatial, no action
    assert action[0].neg.split()[0] in ("pointing", "covering", "covered")


def test_an_arrow_is_never_said_not_to_point() -> None:
    arrow = _obj(0, "arrow", 10, 24, heading=0.0)
    sc = _scene(arrow, _obj(1, "square", 40, 24))
    assert (0, "pointing at", 1) in sc.relations
    lone = _scene(_obj(0, "arrow", 10, 24, heading=90.0), _obj(1, "square", 40, 24))
    assert not any(p == "pointing at" for _, p, _ in lone.relations)
    for seed in range(20):
        rng = np.random.default_rng(seed)
        assert [it.pos for it in attribute_items([sc], "action", rng)] == ["pointing arrow"]
        assert all(not it.neg.startswith("pointing") for it in attribute_items([sc, lone], "action", rng))
    assert relation_replacements(sc, sc.obj(0), "pointing at", sc.obj(1)) == ["surrounding", "covering", "covered by"]
    over = _scene(_obj(0, "arrow", 20, 24, 8, heading=0.0), _obj(1, "circle", 24, 24, 8))  # the arrow is covered
    assert over.relations == [(0, "covered by", 1), (1, "covering", 0)]
    assert relation_replacements(over, over.obj(0), "covered by", over.obj(1)) == ["surrounding", "covering"]


def test_relation_replacements_by_hand() -> None:
    sc = _scene(_obj(0, "heart", 24, 8), _obj(1, "cross", 24, 38))
    assert relation_replacements(sc, sc.obj(0), "above", sc.obj(1)) == ["below"]
    nested = _scene(_obj(0, "square", 24, 24, 11.5, state="hollow"), _obj(1, "star", 24, 24, 4.5))
    assert relation_replacements(nested, nested.obj(1), "inside", nested.obj(0)) == ["surrounding"]
    assert relation_replacements(nested, nested.obj(0), "surrounding", nested.obj(1)) == [
        "pointing at", "covering", "covered by"]
    over = _scene(_obj(0, "square", 20, 24, 8), _obj(1, "circle", 24, 24, 8))  # covered by / covering
    assert over.relations == [(0, "covered by", 1), (1, "covering", 0)]
    assert relation_replacements(over, over.obj(1), "covering", over.obj(0)) == ["surrounding", "pointing at",
                                                                                  "covered by"]
    near = _scene(_obj(0, "circle", 10, 24), _obj(1, "square", 25, 24))  # gap 3 px: next to
    assert relation_replacements(near, near.obj(0), "to the left of", near.obj(1)) == ["to the right of"]
    assert all(not RELATIONS[p].symmetric for p in relation_replacements(over, over.obj(0), "covered by", over.obj(1)))


def test_relation_items_by_group() -> None:
    over = _scene(_obj(0, "square", 20, 24, 8), _obj(1, "circle", 24, 24, 8))
    sep = _scene(_obj(0, "heart", 24, 8), _obj(1, "cross", 24, 38))
    rng = np.random.default_rng(0)
    spatial = relation_items([over, sep], "spatial", rng)
    assert [(it.scene, it.pos, it.neg) for it in spatial] == [(1, "heart above cross", "heart below cross"),
                                                              (1, "cross below heart", "cross above heart")]
    action = relation_items([over, sep], "action", rng)
    assert [(it.scene, it.pos) for it in action] == [(0, "square covered by circle"), (0, "circle covering square")]


def test_cap_keeps_a_seeded_subset_in_order() -> None:
    items = list(range(50))
    a, b = cap(items, 7, np.random.default_rng(3)), cap(items, 7, np.random.default_rng(3))
    assert a == b and len(a) == 7 and a == sorted(a) and len(set(a)) == 7
    assert cap(items, 60, np.random.default_rng(0)) == items


def test_file_specs_use_vlchecklist_names() -> None:
    specs = {s.key: s for s in file_specs()}
    assert len(specs) == 19
    assert specs["Object_Location_center_vg_obj"].path == "Object/Location/vg_location/vg_obj_center.json"
    assert specs["Object_Size_small_vg_subj"].path == "Object/Size/vg_size/vg_subj_small.json"
    assert specs["Attribute_color_vg"].path == "Attribute/vg/color.json"
    assert specs["Relation_spatial_vg"].path == "Relation/vg/spatial.json"
    tsvlc_vg = {f for ds in vlc_ds.CORPUS.values() for f in ds["vg"]}
    assert set(specs) == tsvlc_vg  # every VG file of TSVLC's corpus, nothing else
    assert all(s.key in vlc_ds.CORPUS[s.category]["vg"] for s in specs.values())


def test_the_small_bin_follows_the_contained_objects_scale(tiny_world) -> None:
    assert has_small_objects(WorldConfig()) and has_small_objects(WorldConfig(contain_inner_scale=0.8))
    assert not has_small_objects(WorldConfig(contain_inner_scale=1.0))  # the second world
    assert not has_small_objects(WorldConfig(layout_probs=(0.6, 0.25, 0.0, 0.15, 0.0)))  # nothing contained
    # the tiny world agrees: an object in the bin exactly when its config says so
    areas = [(x1 - x0) * (y1 - y0) / WCFG.image_size**2
             for sc in Split(tiny_world, "vg_test").scenes() for x0, y0, x1, y1 in (o.box for o in sc.objects)]
    assert (min(areas) < SMALL_AREA) == SMALL_BIN


def test_not_expressible_is_listed() -> None:
    assert NOT_EXPRESSIBLE and all(isinstance(p, str) and isinstance(w, str) and w for p, w in NOT_EXPRESSIBLE)


# --------------------------------------------------------------------------------- the twin, tiny world


@pytest.fixture
def built(twin_context):
    ctx = twin_context(SMALL)
    return ctx, build_twin("vlchecklist", ctx)


def _truth_triple(scene: Scene, caption: str, facts=None) -> bool:
    """``facts``: the claims read as true (default: the scene graph's own)."""
    words = caption.split()
    ids = {o.shape: o.id for o in scene.objects}
    subj, rel, obj = words[0], " ".join(words[1:-1]), words[-1]
    return subj in ids and obj in ids and (ids[subj], rel, ids[obj]) in (scene.relations if facts is None else facts)


#: Action participle -> relation, of the world the tests build (a support world adds sitting / hanging).
_ACTION = actions(WORLD_RELATIONS)


def _truth_attribute(scene: Scene, caption: str, kind: str) -> bool:
    value, shape = caption.split()
    (o,) = [o for o in scene.objects if o.shape == shape] or [None]
    if o is None:
        return False
    if kind == "action":
        return any(s == o.id and p == _ACTION[value] for s, p, _ in scene.relations)
    return {"color": o.colour, "material": o.material, "size": o.size, "state": o.state}[kind] == value


def test_every_item_is_checked_on_the_scene_graph(built, tiny_world) -> None:
    ctx, result = built
    split = Split(tiny_world, "vg_test")
    scenes = {f"VG_100K/{s.image_id.replace('/', '_')}.png": (i, s) for i, s in enumerate(split.scenes())}
    files = result.inputs["vlchecklist_files"]
    assert list(files) == EXPECTED_FILES  # every file non-empty on the tiny world ("small": when it has such objects)
    tok = params_tokenizer()
    for key, spec in files.items():
        assert result.counts[f"{key}/n_items"] == len(vlc_ds.load_file(ctx.out / spec["annotations"])) > 0
        assert len(vlc_ds.load_file(ctx.out / spec["annotations"])) <= 12
        group, kind, *rest = key.split("_")
        for case in vlc_ds.load_file(ctx.out / spec["annotations"]):
            i, sc = scenes[case.image]
            assert len(case.pos) == len(case.neg) == 1
            for text in (case.positive, case.negative):
                assert tok.UNK not in tok.encode(text), text
            if group == "Attribute":
                assert _truth_attribute(sc, case.positive, kind) and not _truth_attribute(sc, case.negative, kind)
                if kind == "material":
                    assert sc.objects[[o.shape for o in sc.objects].index(case.positive.split()[1])].state == "solid"
                continue
            # POS a scene-graph fact; NEG false even read with what the graph implies ("bar below star" makes
            # "star above bar" true)
            assert _truth_triple(sc, case.positive) and not _truth_triple(sc, case.negative, implied(sc))
            p_words, n_words = case.positive.split(), case.negative.split()
            rel = " ".join(p_words[1:-1])
            assert rel in WORLD_RELATIONS and not ALL_RELATIONS[rel].symmetric
            if group == "Relation":
                assert p_words[0] == n_words[0] and p_words[-1] == n_words[-1]
                assert ALL_RELATIONS[rel].group == {"action": "verb", "spatial": "spatial"}[kind]
                assert not ALL_RELATIONS[" ".join(n_words[1:-1])].symmetric
                continue
            bin_name, role = rest[0], rest[-1]  # Object_<Location|Size>_<bin>_vg_<role>
            at = 0 if role == "subj" else -1
            assert n_words[at] not in {o.shape for o in sc.objects}  # the tested noun, replaced by an absent one
            assert (p_words[1:], p_words[:-1])[at == -1] == (n_words[1:], n_words[:-1])[at == -1]
            tested = next(o for o in sc.objects if o.shape == p_words[at])
            x0, y0, x1, y1 = tested.box
            if kind == "Location":
                d = math.hypot((x0 + x1) / 2 - SIZE / 2, (y0 + y1) / 2 - SIZE / 2) / (SIZE / 2)
                assert bin_name == ("center" if d < 1 / 3 else "mid" if d < 2 / 3 else "margin")
            else:
                area = (x1 - x0) * (y1 - y0) / SIZE**2
                assert bin_name == ("small" if area < 0.05 else "medium" if area < 0.12 else "large")


def test_images_are_the_world_renders(built, tiny_world) -> None:
    ctx, result = built
    split = Split(tiny_world, "vg_test")
    index = {s.image_id.replace("/", "_") + ".png": i for i, s in enumerate(split.scenes())}
    roots = {spec["images"] for spec in result.inputs["vlchecklist_files"].values()}
    assert roots == {"vlchecklist/images/vg"}
    root = ctx.out / roots.pop()
    pngs = sorted(root.rglob("*.png"))
    assert len(pngs) == result.counts["n_images"] > 0
    for p in pngs[:10]:
        assert p.parent.name == "VG_100K"
        with Image.open(p) as im:
            np.testing.assert_array_equal(np.asarray(im.convert("RGB")), split.images[index[p.name]])


def test_corpus_input_maps_every_file(built) -> None:
    ctx, result = built
    corpus = vlc_ds.load_corpus(ctx.out / result.inputs["vlchecklist_corpus"])
    assert list(corpus) == EXPECTED_CATEGORIES  # all 13 categories ("small": when the world has such objects), in order
    assert all(list(ds) == ["vg"] for ds in corpus.values())
    listed = [f for ds in corpus.values() for fs in ds.values() for f in fs]
    assert sorted(listed) == sorted(result.inputs["vlchecklist_files"])


def test_build_is_deterministic(twin_context, tmp_path) -> None:
    a = twin_context(SMALL, out=tmp_path / "a")
    b = twin_context(SMALL, out=tmp_path / "b")
    ra, rb = build_twin("vlchecklist", a), build_twin("vlchecklist", b)
    assert ra == rb
    fa = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    fb = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert fa == fb and fa
    assert all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in fa)
    c = build_twin("vlchecklist", twin_context(SMALL, seed=1, out=tmp_path / "c"))
    files = ra.inputs["vlchecklist_files"]
    assert any((tmp_path / "a" / s["annotations"]).read_bytes() != (tmp_path / "c" / s["annotations"]).read_bytes()
               for s in files.values()) and c.inputs.keys() == ra.inputs.keys()


def test_files_round_trip_through_the_writer(built, tmp_path) -> None:
    ctx, result = built
    for spec in result.inputs["vlchecklist_files"].values():
        cases = vlc_ds.load_file(ctx.out / spec["annotations"])
        again = vlc_ds.write_file(tmp_path / "again.json", cases)
        assert vlc_ds.load_file(again) == cases
        assert again.read_bytes() == (ctx.out / spec["annotations"]).read_bytes()


def test_options(twin_context, tmp_path) -> None:
    r = build_twin("vlchecklist", twin_context({"vlchecklist": {"items_per_file": 2}}, out=tmp_path / "o"))
    sizes = {k.removesuffix("/n_items"): v for k, v in r.counts.items() if k.endswith("/n_items")}
    assert list(sizes) == [s.key for s in file_specs()]  # every file counted, the unwritten ones as 0
    assert all(0 < v <= 2 if k in EXPECTED_FILES else v == 0 for k, v in sizes.items())
    with pytest.raises(ValueError, match=r"benchmarks\.twins\.vlchecklist\.items_per_file=0: must be an int >= 1"):
        build_twin("vlchecklist", twin_context({"vlchecklist": {"items_per_file": 0}}, out=tmp_path / "p"))
    with pytest.raises(ValueError, match=r"benchmarks\.twins\.vlchecklist: unknown option\(s\) \['items'\]"):
        build_twin("vlchecklist", twin_context({"vlchecklist": {"items": 3}}, out=tmp_path / "q"))


def _resolve(inputs: dict, out: Path) -> dict:
    files = {k: {"annotations": str(out / v["annotations"]), "images": str(out / v["images"])}
             for k, v in inputs["vlchecklist_files"].items()}
    return {"vlchecklist_files": files, "vlchecklist_corpus": str(out / inputs["vlchecklist_corpus"])}


def test_end_to_end_scoring(twin_context, tmp_path) -> None:
    from vlcomp.eval.engine import score_task
    from vlcomp.models.factory import ModelSpec, create_model
    from vlcomp.models.scorers import toy_scorer

    ctx = twin_context({"vlchecklist": {"items_per_file": 4}}, out=tmp_path / "e2e")
    result = build_twin("vlchecklist", ctx)
    inputs = _resolve(result.inputs, ctx.out)
    bench = BENCHMARKS.get("vlchecklist")
    task = bench.prepare(inputs)
    assert len(task.meta) == result.counts["n_items"]
    assert set(task.meta["category"]) == set(EXPECTED_CATEGORIES) and set(task.meta["dataset"]) == {"vg"}
    model = create_model(ModelSpec("toy-vit-p8"), init_seed=0)
    scorer = toy_scorer("toy", model, params_tokenizer())
    metrics = bench.aggregate(score_task(scorer, task))
    expected = ([f"vlchecklist/file/{k}/acc" for k in result.inputs["vlchecklist_files"]]
                + [f"vlchecklist/{VLC_CATEGORY_KEY[c]}" for c in EXPECTED_CATEGORIES]
                + [f"vlchecklist/{g}/avg" for g in ("object", "object/location", "object/size", "attribute",
                                                   "relation")]
                + ["vlchecklist/overall"])
    missing = [k for k in expected if k not in metrics]
    assert not missing
    assert all(0.0 <= metrics[k] <= 1.0 for k in expected)
    # the category is the macro over its files (one dataset, vg)
    assert metrics["vlchecklist/attribute/color"] == metrics["vlchecklist/file/Attribute_color_vg/acc"]
    assert metrics["vlchecklist/object/center"] == pytest.approx(
        (metrics["vlchecklist/file/Object_Location_center_vg_obj/acc"]
         + metrics["vlchecklist/file/Object_Location_center_vg_subj/acc"]) / 2)
    # Object/Size is the mean of the size categories the twin has (no "small" one without objects that small)
    sizes = [c for c in ("large", "medium", "small") if c in EXPECTED_CATEGORIES]
    assert ("vlchecklist/object/small" in metrics) == SMALL_BIN
    assert metrics["vlchecklist/object/size/avg"] == pytest.approx(
        np.mean([metrics[f"vlchecklist/object/{c}"] for c in sizes]))


def test_missing_images_and_a_malformed_file(twin_context, tmp_path) -> None:
    ctx = twin_context({"vlchecklist": {"items_per_file": 2}}, out=tmp_path / "m")
    inputs = _resolve(build_twin("vlchecklist", ctx).inputs, ctx.out)
    bench = BENCHMARKS.get("vlchecklist")
    spec = inputs["vlchecklist_files"]["Relation_spatial_vg"]
    cases = vlc_ds.load_file(spec["annotations"])
    (Path(spec["images"]) / cases[0].image).unlink()  # the protocol drops an item whose image is missing
    meta = bench.prepare(inputs).meta
    kept = meta.loc[meta["file"] == "Relation_spatial_vg", "image"].tolist()
    assert kept == [c.image for c in cases if c.image != cases[0].image]
    for c in cases:
        (Path(spec["images"]) / c.image).unlink(missing_ok=True)
    with pytest.raises(ValueError, match=r"spatial\.json: no item to score \(empty file, or no image found under"):
        bench.prepare(inputs)
    bad = ctx.out / "bad.json"
    bad.write_text('[["VG_100K/x.png", {"POS": ["red circle"]}]]')
    files = {**inputs["vlchecklist_files"], "Attribute_color_vg": {"annotations": str(bad), "images": spec["images"]}}
    with pytest.raises(ValueError, match=r"bad\.json: record 0: missing field 'NEG'"):
        bench.prepare({**inputs, "vlchecklist_files": files})
