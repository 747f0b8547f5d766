"""The ARO twins (VG-Relation / VG-Attribution) and the Karpathy-test twins, in the released layouts: read back by
the real profile's loaders, the PNG pixels equal to the world's, byte-identical rebuilds, closed vocabulary; the
zero-shot suites as image folders; the writers' round trips."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from vlcomp.formats.aro import load_exclusions, load_vg, write_vg
from vlcomp.formats.imagefolder import read_suite, read_templates
from vlcomp.formats.karpathy import load_karpathy, write_karpathy
from vlcomp.formats.records import RecordError
from vlcomp.twins import build_twin
from vlcomp.twins.zeroshot import SUITES, class_name
from vlcomp.world import Split

from .tokenizer import params_tokenizer


def _files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _no_unk(texts):
    tok = params_tokenizer()
    bad = [t for t in texts if tok.UNK in tok.encode(t)]
    assert not bad, bad[:5]


def test_aro_twin_reads_back_with_the_released_loader(twin_context, tiny_world):
    ctx = twin_context({"aro": {"vga_min_count": 3}})
    result = build_twin("aro", ctx)
    inputs = {k: (ctx.out / v if isinstance(v, str) else v) for k, v in result.inputs.items()}
    vgr, vga = load_vg(inputs["aro_vg_relation"], "relation"), load_vg(inputs["aro_vg_attribution"], "attribution")
    assert len(vgr) == result.counts["vg_relation/n_cases"] > 0 and len(vga) == result.counts["vg_attribution/n_cases"] > 0
    assert inputs["aro_vga_min_count"] == 3
    assert {"next to", "near"} == set(load_exclusions(inputs["aro_relation_exclusions"]))
    assert set(json.loads(inputs["aro_relation_groups"].read_text()).values()) == {"spatial", "verbs"}
    split = Split(tiny_world, "vg_test")
    index = {f"{a['image'].replace('/', '_')}.png": i for i, a in enumerate(split.annotations())}
    for case in vgr[:20] + vga[:20]:  # the loader's crop of the PNG = the world's pixels in the box
        crop = np.asarray(case.crop(inputs["aro_images"]))
        x, y, w, h = (int(v) for v in case.box)
        assert np.array_equal(crop, split.images[index[case.image_path]][y:y + h, x:x + w])
    _no_unk([c for case in vgr + vga for c in case.caption_options])


def test_karpathy_twin_is_the_world_split(twin_context, tiny_world):
    ctx = twin_context()
    inputs = build_twin("karpathy", ctx).inputs
    for prefix, split_name in (("coco", "coco_test"), ("flickr", "flickr_test")):
        records = load_karpathy(ctx.out / inputs[f"{prefix}_karpathy_test"], clean=False)
        split = Split(tiny_world, split_name)
        assert [r["caption"] for r in records] == split.captions()
        first = Image.open(ctx.out / inputs[f"{prefix}_images"] / records[0]["image"])
        assert np.array_equal(np.asarray(first.convert("RGB")), split.images[0])
        _no_unk([c for r in records for c in r["caption"]])


@pytest.mark.parametrize("twin", ["aro", "karpathy", "zeroshot_aro"])
def test_twins_rebuild_byte_identically(twin_context, tmp_path, twin):
    opts = {"zeroshot_aro": {"images_per_class": 1}}
    a, b = twin_context(opts, out=tmp_path / "a"), twin_context(opts, out=tmp_path / "b")
    build_twin(twin, a)
    build_twin(twin, b)
    fa, fb = _files(a.out), _files(b.out)
    assert fa.keys() == fb.keys() and fa == fb


def test_zeroshot_suites_read_back(twin_context):
    ctx = twin_context({s: {"images_per_class": 1} for s in SUITES})
    for suite, tasks in SUITES.items():
        root = ctx.out / build_twin(suite, ctx).inputs[f"{suite}_dir"]
        splits = read_suite(root)
        assert set(splits) == set(tasks)
        for name, split in splits.items():
            assert split.classnames == tasks[name].classnames(ctx.wcfg)
            assert split.labels == list(range(len(split.classnames)))  # one image per class, label order
        templates = read_templates(root)
        _no_unk([t.replace("{c}", c) for ts in templates.values() for t in ts for s in splits.values()
                 for c in s.classnames])
    assert len(SUITES["zeroshot_elevater"]) == 21 and len(SUITES["zeroshot_conclip"]) == 8


def test_zeroshot_twins_cover_the_web_vocabulary_and_group_its_classes(twin_context, tmp_path):
    """With web-only concepts, the CIFAR10 twin has 10 shapes (the 2 web-only ones last) and the CIFAR100 twin
    10 x 10 colour-shape classes; class_groups.json marks every class naming a web-only concept, and reads back."""
    from dataclasses import replace

    ctx = twin_context({"zeroshot_aro": {"images_per_class": 1}})
    wcfg = replace(ctx.wcfg, web_only_shapes=("hexagon", "moon"), web_only_colours=("pink", "brown"))
    ctx = replace(ctx, wcfg=wcfg)
    root = ctx.out / build_twin("zeroshot_aro", ctx).inputs["zeroshot_aro_dir"]
    splits = read_suite(root)
    c10, c100 = splits["cifar10"], splits["cifar100"]
    assert c10.classnames[-2:] == ["hexagon", "moon"] and len(c10.classnames) == 10
    assert c10.class_groups == ["coco"] * 8 + ["web_only"] * 2
    assert len(c100.classnames) == 100
    web = {c for c, g in zip(c100.classnames, c100.class_groups, strict=True) if g == "web_only"}
    assert len(web) == 100 - 8 * 8 and "pink circle" in web and "red moon" in web and "red circle" not in web
    # without web-only concepts: the COCO vocabulary and no class_groups.json
    plain = replace(ctx, wcfg=replace(wcfg, web_only_shapes=(), web_only_colours=()), out=tmp_path / "plain")
    root = plain.out / build_twin("zeroshot_aro", plain).inputs["zeroshot_aro_dir"]
    assert not (root / "class_groups.json").exists()
    assert len(read_suite(root)["cifar100"].classnames) == 64 and read_suite(root)["cifar10"].class_groups is None


def test_class_names_by_hand():
    assert class_name({"shape": "circle", "colour": "red", "size": "large"}) == "large red circle"
    assert class_name({"colour": "red", "material": "striped"}) == "red striped shape"
    assert class_name({"background": "gray", "shape": "star"}) == "star on a gray background"


def test_writers_round_trip_and_refuse_bad_records(tmp_path):
    recs = [{"image_path": "a.png", "bbox_x": 0, "bbox_y": 1, "bbox_w": 5, "bbox_h": 6, "true_caption": "the a",
             "false_caption": "the b", "attributes": ["red", "blue"]}]
    case = load_vg(write_vg(tmp_path / "vga.json", recs, "attribution"), "attribution")[0]
    assert (case.image_path, case.box, case.group) == ("a.png", (0, 1, 5, 6), "red_blue")
    with pytest.raises(RecordError, match=r"bad\.json: record 0: missing field 'relation_name'"):
        write_vg(tmp_path / "bad.json", recs, "relation")
    assert not (tmp_path / "bad.json").exists()
    k = [{"image": "x.png", "caption": ["A dog.", "two cats"]}]
    assert load_karpathy(write_karpathy(tmp_path / "k.json", k), clean=False) == k
    with pytest.raises(ValueError, match=r"k2\.json: record 0 \(x\.png\): caption 1 is empty"):
        write_karpathy(tmp_path / "k2.json", [{"image": "x.png", "caption": ["a", " "]}])


def test_zeroshot_rank_column_agrees_with_the_prediction(twin_context):
    """A scored suite: rank 1 exactly where the top-1 prediction is right, ranks within 1..C; acc5 >= acc."""
    from vlcomp.benchmarks.registry import BENCHMARKS
    from vlcomp.eval.engine import score_task
    from vlcomp.models.factory import ModelSpec, create_model
    from vlcomp.models.scorers import toy_scorer

    ctx = twin_context({"zeroshot_aro": {"images_per_class": 1}})
    inputs = {k: str(ctx.out / v) for k, v in build_twin("zeroshot_aro", ctx).inputs.items()}
    bench = BENCHMARKS.get("zeroshot_aro")
    scorer = toy_scorer("toy", create_model(ModelSpec("toy-vit-p8"), init_seed=0), params_tokenizer())
    df = score_task(scorer, bench.prepare(inputs))["zeroshot_aro"]
    assert ((df["rank_standard"] == 1) == df["correct_standard"]).all()
    n_classes = df.groupby("task")["label"].transform("max") + 1
    assert (df["rank_standard"] >= 1).all() and (df["rank_standard"] <= n_classes).all()
    out = bench.aggregate({"zeroshot_aro": df})
    for t in set(df["task"]):
        assert out[f"zeroshot/{t}/acc5"] >= out[f"zeroshot/{t}/acc"]
