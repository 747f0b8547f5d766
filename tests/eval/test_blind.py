"""The blind-text ceiling (vlcomp.eval.blind): counts, smoothing and scores on a 3-scene world by hand, ties, the
engine's per-item scores against a naive loop, its outputs, and bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from vlcomp.benchmarks import BENCHMARKS
from vlcomp.eval.blind import (
    BlindTextScorer,
    FactModel,
    SceneCounts,
    blind_config,
    blind_scorer,
    choice_benchmarks,
    evaluate_blind,
    run_blind,
    without_images,
)
from vlcomp.eval.engine import as_tasks, naive_task, score_task
from vlcomp.text.facts import ATTRIBUTE_VALUES, RELATION_PHRASES, SHAPE_WORDS, read_caption
from vlcomp.world.scene import Obj, Scene

S, C, R = len(SHAPE_WORDS), len(ATTRIBUTE_VALUES["colour"]), len(RELATION_PHRASES)


def _obj(i: int, shape: str, colour: str, size: str, material: str = "plain", state: str = "solid") -> Obj:
    return Obj(id=i, shape=shape, colour=colour, size=size, material=material, state=state, x=10.0 + 20 * i,
               y=20.0, half=6.0)


def three_scenes() -> list[Scene]:
    """circle 3x (red, red, green), square 3x (blue, red, blue); each ordered pair of shapes holds 3 relations."""
    return [
        Scene("a", "black", [_obj(0, "circle", "red", "large"), _obj(1, "square", "blue", "small", "striped")],
              [(0, "to the left of", 1), (1, "to the right of", 0)]),
        Scene("b", "gray", [_obj(0, "circle", "red", "small", "dotted"), _obj(1, "square", "red", "large")],
              [(0, "above", 1), (1, "below", 0)]),
        Scene("c", "black", [_obj(0, "square", "blue", "large", state="hollow"), _obj(1, "circle", "green", "small")],
              [(0, "surrounding", 1), (1, "inside", 0)]),
    ]


@pytest.fixture
def model() -> FactModel:
    return FactModel(SceneCounts.from_scenes(three_scenes(), "toy3"), smoothing=1.0)


def test_counts_by_hand():
    c = SceneCounts.from_scenes(three_scenes(), "toy3")
    assert c.shapes == {"circle": 3, "square": 3}
    assert c.attributes[("colour", "red", "circle")] == 2 and c.attributes[("colour", "red", "square")] == 1
    assert c.attributes[("state", "hollow", "square")] == 1 and c.attributes[("size", "small", "circle")] == 2
    assert c.relations[("to the left of", "circle", "square")] == 1 and ("to the left of", "square", "circle") \
        not in c.relations
    assert c.summary() == {"split": "toy3", "n_scenes": 3, "n_objects": 6, "n_relations": 6}


def test_add_one_smoothing_by_hand(model):
    from vlcomp.text.facts import Fact

    assert model.probability(Fact("shape", ("circle",))) == pytest.approx((3 + 1) / (6 + S))
    assert model.probability(Fact("shape", ("star",))) == pytest.approx(1 / (6 + S))  # unseen: never 0
    assert model.probability(Fact("attribute", ("colour", "red", "circle"))) == pytest.approx(3 / (3 + C))
    assert model.probability(Fact("attribute", ("size", "large", "square"))) == pytest.approx(3 / (3 + 2))
    assert model.probability(Fact("relation", ("to the left of", "circle", "square"))) == pytest.approx(2 / (3 + R))
    assert model.probability(Fact("relation", ("to the left of", "square", "circle"))) == pytest.approx(1 / (3 + R))
    half = FactModel(model.counts, smoothing=0.5)
    assert half.probability(Fact("attribute", ("colour", "green", "circle"))) == pytest.approx(1.5 / (3 + 0.5 * C))


def test_scores_by_hand(model):
    circle = math.log(4 / (6 + S))
    # VG-Relation: the shapes are the same on both sides; only the relation's direction differs
    true = model.score(read_caption("the circle is to the left of the square"))
    false = model.score(read_caption("the square is to the left of the circle"))
    assert true == pytest.approx(2 * circle + math.log(2 / (3 + R)))
    assert false == pytest.approx(2 * circle + math.log(1 / (3 + R)))
    assert true - false == pytest.approx(math.log(2))
    # VG-Attribution: the colours change shapes
    a = model.score(read_caption("the red circle and the blue square"))
    b = model.score(read_caption("the blue circle and the red square"))
    assert a - b == pytest.approx(math.log(3 / (3 + C)) + math.log(3 / (3 + C))
                                  - math.log(1 / (3 + C)) - math.log(2 / (3 + C)))
    # a denied fact scores log(1 - P); a denied noun phrase, 1 - the product of its facts
    assert model.score(read_caption("a circle that is not red")) == pytest.approx(circle + math.log(1 - 3 / (3 + C)))
    assert model.score(read_caption("there is no red circle")) == pytest.approx(
        math.log(1 - (4 / (6 + S)) * (3 / (3 + C))))
    assert model.score(read_caption("a man riding a horse")) == 0.0  # nothing read: nothing scored


def test_captions_it_reads_the_same_tie_exactly(model):
    scorer = BlindTextScorer(model)
    s = scorer.score_pairs([None, None, None], ["there are two circles", "there are three circles",
                                                "the blue square and the red circle"])
    assert s[0] == s[1]
    assert s[2] == scorer.score_pairs([None], ["the red circle and the blue square"])[0]  # same facts, same float
    with pytest.raises(ValueError, match="2 images but 1 texts"):
        scorer.score_pairs([None, None], ["a circle"])
    with pytest.raises(ValueError, match="reads no image"):
        scorer.encode_images([None])


# --------------------------------------------------------------------------- through the engine


def _vg_inputs(root: Path) -> dict:
    images = root / "aro" / "images"
    images.mkdir(parents=True)
    Image.fromarray(np.zeros((48, 48, 3), dtype=np.uint8)).save(images / "vg.png")
    box = {"image_path": "vg.png", "bbox_x": 0, "bbox_y": 0, "bbox_w": 40, "bbox_h": 40}
    relation = [
        {**box, "relation_name": "to the left of", "true_caption": "the circle is to the left of the square",
         "false_caption": "the square is to the left of the circle"},  # blind: right
        {**box, "relation_name": "to the left of", "true_caption": "the square is to the left of the circle",
         "false_caption": "the circle is to the left of the square"},  # blind: wrong
        {**box, "relation_name": "above", "true_caption": "the circle is above the square",
         "false_caption": "the square is above the circle"},  # blind: right
        {**box, "relation_name": "above", "true_caption": "the star is above the heart",
         "false_caption": "the heart is above the star"},  # unseen shapes: a tie, wrong under VG's rule
    ]
    attribution = [{**box, "attributes": ["red", "blue"], "attribute_kind": "colour",
                    "true_caption": "the red circle and the blue square",
                    "false_caption": "the blue circle and the red square"}] * 3
    (root / "aro" / "rel.json").write_text(json.dumps(relation))
    (root / "aro" / "att.json").write_text(json.dumps(attribution))
    (root / "aro" / "symmetric.txt").write_text("next to\n")
    return {"aro_vg_relation": str(root / "aro" / "rel.json"), "aro_vg_attribution": str(root / "aro" / "att.json"),
            "aro_images": str(images), "aro_relation_exclusions": str(root / "aro" / "symmetric.txt"),
            "aro_vga_min_count": 1, "seed": 0}


def test_engine_scores_equal_a_naive_loop(tmp_path, model):
    inputs = _vg_inputs(tmp_path)
    scorer = BlindTextScorer(model)
    for name in ("vg_relation", "vg_attribution"):
        tasks = [without_images(t) for t in as_tasks(BENCHMARKS.get(name).prepare(inputs))]
        batched, naive = score_task(scorer, tasks)[name], naive_task(scorer, tasks)[name]
        pd.testing.assert_frame_equal(batched, naive)
        loop = np.array([[scorer.text_score(c) for c in caps] for t in tasks for caps in t.captions], dtype=np.float32)
        assert np.array_equal(batched[["score_false", "score_true"]].to_numpy(np.float32), loop)
        # the wrong-image control re-scores the same captions: a text-only reader gives the same scores
        assert np.array_equal(batched["wrong_score_true"], batched["score_true"])
    rel = score_task(scorer, [without_images(t) for t in as_tasks(BENCHMARKS.get("vg_relation").prepare(inputs))])
    assert rel["vg_relation"]["correct"].tolist() == [True, False, True, False]
    assert rel["vg_relation"]["tie"].tolist() == [False, False, False, True]  # VG's rule: a tie is wrong


def test_evaluate_blind_writes_what_a_model_writes(tmp_path, model):
    inputs = _vg_inputs(tmp_path)
    scorer = BlindTextScorer(model)
    metrics = evaluate_blind(scorer, ["vg_relation", "vg_attribution"], inputs, tmp_path / "out",
                             {"model": "blind-text", "profile": "toy"})
    assert metrics["aro/vg_relation/micro_acc"] == pytest.approx(2 / 4)
    assert metrics["aro/vg_relation/macro_acc"] == pytest.approx((1 / 2 + 1 / 2) / 2)
    assert metrics["aro/vg_relation/wrong_image_macro_acc"] == metrics["aro/vg_relation/macro_acc"]
    assert metrics["aro/vg_attribution/macro_acc"] == 1.0
    assert json.loads((tmp_path / "out" / "metrics.json").read_text()) == pytest.approx(metrics)
    prov = json.loads((tmp_path / "out" / "provenance.json").read_text())
    assert prov["not_applicable"] == ["aro/vg_attribution/text_swap_cosine", "aro/vg_relation/text_swap_cosine"]
    assert prov["counts"]["n_scenes"] == 3 and prov["n_items"] == {"vg_attribution": 3, "vg_relation": 4}
    assert sorted(p.name for p in (tmp_path / "out" / "items").iterdir()) == ["vg_attribution.parquet",
                                                                              "vg_relation.parquet"]


def test_retrieval_and_zero_shot_are_skipped(tmp_path):
    from tests.eval.formats import merged

    f = merged(["vg_relation", "coco_retrieval"], tmp_path)
    kept, skipped = choice_benchmarks(["vg_relation", "coco_retrieval"], f.inputs)
    assert list(kept) == ["vg_relation"] and "RetrievalTask" in skipped["coco_retrieval"]
    tables, _ = run_blind(BlindTextScorer(FactModel(SceneCounts.from_scenes(three_scenes()))), kept)
    assert list(tables) == ["vg_relation"]
    assert (tables["vg_relation"]["score_true"] == 0).all()  # real-world captions: nothing read, every case a tie


# --------------------------------------------------------------------------- bad input


def test_a_missing_params_key_is_named():
    with pytest.raises(ValueError, match="missing key 'blind'"):
        blind_config({"profile": "toy"}, "blind-text")
    with pytest.raises(ValueError, match="missing key 'blind.blind-text'"):
        blind_config({"blind": {"other": {"split": "coco_train"}}}, "blind-text")
    with pytest.raises(ValueError, match="missing key blind.blind-text.split"):
        blind_config({"blind": {"blind-text": {"smoothing": 1}}}, "blind-text")
    with pytest.raises(ValueError, match="blind.blind-text.smoothing=0"):
        blind_config({"blind": {"blind-text": {"split": "coco_train", "smoothing": 0}}}, "blind-text")
    with pytest.raises(ValueError, match="unknown key.*blind.blind-text.alpha"):
        blind_config({"blind": {"blind-text": {"split": "coco_train", "alpha": 1}}}, "blind-text")


def test_an_unreadable_split_is_named(tmp_path):
    params = {"blind": {"blind-text": {"split": "coco_train"}},
              "world": {"splits": {"coco_train": {"n_images": 1, "style": "coco"}}}}
    with pytest.raises(FileNotFoundError, match="split 'coco_train'.*not found"):
        blind_scorer(params, "blind-text", tmp_path)
    (tmp_path / "coco_train").mkdir()
    (tmp_path / "coco_train" / "scenes.jsonl").write_text('{"image_id": "x", "objects": [{"id": 0}]}\n')
    with pytest.raises(ValueError, match=r"split 'coco_train' \(.*coco_train/scenes.jsonl\).*malformed scene"):
        blind_scorer(params, "blind-text", tmp_path)
    (tmp_path / "coco_train" / "scenes.jsonl").write_text("")
    with pytest.raises(ValueError, match="split 'coco_train': no scene"):
        blind_scorer(params, "blind-text", tmp_path)


def test_smoothing_spreads_over_the_worlds_own_inventory():
    """The first world's params: 13 relations and the 10 web shapes (no bar); a support world adds the two support
    relations and the bar, so the same counts give a different smoothed probability for an unseen relation."""
    from vlcomp.eval.blind import world_inventory
    from vlcomp.world.concepts import RELATIONS, SUPPORT_RELATIONS

    world = {"splits": {"coco_train": {"n_images": 1, "style": "coco"}}, "web_only_shapes": ["hexagon", "moon"]}
    shapes, relations = world_inventory({"world": world})
    assert relations == tuple(RELATIONS) and "bar" not in shapes and len(shapes) == 10
    shapes2, relations2 = world_inventory({"world": {**world, "layout_probs": [0.5, 0.1, 0.1, 0.1, 0.2]}})
    assert relations2 == tuple(RELATIONS) + SUPPORT_RELATIONS and shapes2 == shapes + ("bar",)
