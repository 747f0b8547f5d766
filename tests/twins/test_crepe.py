"""CREPE-Negate twin on the tiny world: every row re-checked against the scene graph by parsing its text
(caption true, complexity = atoms stated, each hard negative negates one true sentence), crop boxes,
vocabulary, byte-identical rebuilds, the loader round trip, and the record end to end with a toy scorer."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from vlcomp.config import load_params
from vlcomp.formats import crepe as crepe_ds
from vlcomp.twins import TwinContext, build_twin
from vlcomp.twins import crepe as twin
from vlcomp.world import Split, world_configs
from vlcomp.world.concepts import COLOURS, MATERIALS, SIZES
from vlcomp.world.scene import Obj, Scene, WorldConfig, compute_relations

from .inventory import RELATIONS, SHAPES, relation_pattern, vocabulary

#: Every CREPE complexity, 3 rows each: small enough for the tiny world's 150 images.
OPTIONS = {"crepe_negate": {"n_items": 27}}

# the inventory of the world the tests build (params.yaml): a support world's bar and support relations too
_ATTR = "|".join([*SIZES, *COLOURS, *MATERIALS, "hollow"])
_S = "|".join(SHAPES)
_R = relation_pattern(RELATIONS)
_NP = rf"((?:(?:{_ATTR}) )*)({_S})"
EXISTS = re.compile(rf"^there is (a|an) {_NP}$")
RELATION = re.compile(rf"^(a|an|the) {_NP} ({_R}) (a|an|the) {_NP}$")


@pytest.fixture(scope="module")
def built(tiny_world, tmp_path_factory):
    wcfg, _, _ = world_configs(load_params(Path(__file__).resolve().parents[2] / "params.yaml"))
    out = tmp_path_factory.mktemp("crepe") / "benchmarks"
    result = build_twin("crepe_negate", TwinContext(tiny_world, out, wcfg, 0, OPTIONS))
    return out, result


def _sentences(text: str) -> list[str]:
    assert text.endswith("."), text
    return text[:-1].split(". ")


def _check_caption(scene: Scene, caption: str) -> tuple[int, set[int]]:
    """Every sentence is a scene-graph fact; returns (atoms stated, objects mentioned)."""
    by_shape = {o.shape: o for o in scene.objects}
    mentioned: list[int] = []
    attributes = relations = 0

    def mention(det: str, attrs: str, shape: str) -> Obj:
        nonlocal attributes
        obj = by_shape[shape]  # KeyError: the caption names a shape the scene lacks
        words = attrs.split()
        if det == "the":
            assert obj.id in mentioned and not words, caption  # "the" only for a later, bare mention
        else:
            assert obj.id not in mentioned and det == ("an" if (words or [shape])[0][0] in "aeiou" else "a")
            mentioned.append(obj.id)
            assert set(words) <= set(twin.attribute_words(obj)), caption  # attributes are the object's
            attributes += len(words)
        return obj

    for sentence in _sentences(caption):
        if m := EXISTS.match(sentence):
            mention(m[1], m[2], m[3])
        elif m := RELATION.match(sentence):
            s, o = mention(m[1], m[2], m[3]), mention(m[5], m[6], m[7])
            assert (s.id, m[4], o.id) in scene.relations, sentence
            relations += 1
        else:
            raise AssertionError(f"unparsed sentence {sentence!r}")
    return len(mentioned) + attributes + relations, set(mentioned)


NEGATION_MARKERS = {"not", "no", "there", "is", "a", "an", "the"}


def _check_negative(caption: str, negative: str) -> None:
    """The negative is the caption with one sentence negated (a *not* or *no* added; determiners and
    "there is" may change), so it is false: every sentence of the caption is a fact."""
    pos, neg = _sentences(caption), _sentences(negative)
    assert len(pos) == len(neg)
    changed = [i for i, (a, b) in enumerate(zip(pos, neg, strict=True)) if a != b]
    assert len(changed) == 1, negative
    a, b = pos[changed[0]].split(), neg[changed[0]].split()
    assert [w for w in a if w not in NEGATION_MARKERS] == [w for w in b if w not in NEGATION_MARKERS], negative
    assert sum(w in ("not", "no") for w in b) == sum(w in ("not", "no") for w in a) + 1, negative


def test_counts_and_inputs(built) -> None:
    out, result = built
    assert result.counts == {"crepe_negate/n_items": 27,
                             **{f"crepe_negate/complexity/{n}": 3 for n in crepe_ds.COMPLEXITIES}}
    assert result.inputs == {"crepe_prod_dir": "crepe_negate/prod_hard_negatives",
                             "crepe_images": "crepe_negate/images"}
    assert sorted(p.name for p in (out / "crepe_negate/prod_hard_negatives/negate").iterdir()) == \
        sorted(f"prod_vg_hard_negs_negate_complexity_{n}.csv" for n in crepe_ds.COMPLEXITIES)


def test_every_row_is_checked_against_its_scene_graph(built, tiny_world) -> None:
    out, result = built
    split = Split(tiny_world, "vg_test")
    scenes = split.scenes()
    cases = crepe_ds.load_crepe(out / result.inputs["crepe_prod_dir"])
    for n, rows in cases.items():
        for case in rows:
            scene = scenes[int(case.image_id)]
            atoms, objects = _check_caption(scene, case.caption)
            assert atoms == n, case  # complexity = objects + attributes + relationships stated
            assert len(set(case.hard_negs)) == 5 and case.caption not in case.hard_negs
            for negative in case.hard_negs:
                _check_negative(case.caption, negative)
            assert case.box == tuple(twin.region([scene.obj(v) for v in objects], 48).values())
            image = np.asarray(Image.open(case.image_file([out / result.inputs["crepe_images"]])))
            np.testing.assert_array_equal(image, split.images[int(case.image_id)])


def test_vocabulary_and_length(built) -> None:
    out, result = built
    vocab = vocabulary()
    for rows in crepe_ds.load_crepe(out / result.inputs["crepe_prod_dir"]).values():
        for case in rows:
            for text in case.options:
                words = re.sub(r"[^a-z0-9 ]+", " ", text.lower()).split()
                assert set(words) <= vocab and len(words) <= 30, text


def test_csv_is_what_pandas_reads(built) -> None:
    """CREPE reads the files with ``pandas.read_csv`` and ``ast.literal_eval`` of ``hard_negs``."""
    import ast

    out, result = built
    path = crepe_ds.negate_file(out / result.inputs["crepe_prod_dir"], 7)
    df = pd.read_csv(path)
    assert list(df.columns) == list(crepe_ds.COLUMNS)
    cases = crepe_ds.read_crepe_csv(path, 7)
    assert df["image_id"].astype(str).tolist() == [c.image_id for c in cases]
    assert [tuple(ast.literal_eval(v)) for v in df["hard_negs"]] == [c.hard_negs for c in cases]


def test_rebuild_is_byte_identical(twin_context, tmp_path) -> None:
    files = []
    for name in ("a", "b"):
        out = tmp_path / name
        build_twin("crepe_negate", twin_context(OPTIONS, out=out))
        files.append({p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()})
    assert files[0] == files[1]


def test_rebuild_with_fewer_complexities_leaves_no_stale_file(twin_context, tmp_path) -> None:
    out = tmp_path / "c"
    build_twin("crepe_negate", twin_context({"crepe_negate": {"n_items": 4, "complexities": [4, 5]}}, out=out))
    build_twin("crepe_negate", twin_context({"crepe_negate": {"n_items": 2, "complexities": [6]}}, out=out))
    assert list(crepe_ds.load_crepe(out / "crepe_negate/prod_hard_negatives")) == [6]


def test_record_end_to_end_with_a_toy_scorer(built) -> None:
    from vlcomp.benchmarks.registry import BENCHMARKS
    from vlcomp.eval.engine import score_task
    from vlcomp.models.factory import ModelSpec, create_model
    from vlcomp.models.scorers import toy_scorer

    from .tokenizer import params_tokenizer

    out, result = built
    inputs = {k: str(out / v) for k, v in result.inputs.items()}
    bench = BENCHMARKS.get("crepe_negate")
    scorer = toy_scorer("toy", create_model(ModelSpec("toy-vit-p8"), init_seed=0), params_tokenizer())
    tables = score_task(scorer, bench.prepare(inputs))
    metrics = bench.aggregate(tables)
    assert metrics["crepe/negate/n"] == 27
    assert metrics["crepe/negate/chance"] == pytest.approx(1 / 6)
    keys = ["crepe/negate/acc", "crepe/negate/acc_tie_counts_wrong", "crepe/negate/recall_at_3",
            "crepe/negate/macro_acc"] + [f"crepe/negate/complexity/{n}/acc" for n in crepe_ds.COMPLEXITIES]
    for key in keys:
        assert 0.0 <= metrics[key] <= 1.0, key
    assert all(metrics[f"crepe/negate/complexity/{n}/n"] == 3 for n in crepe_ds.COMPLEXITIES)
    assert len(tables["crepe_negate"]) == 27


def test_aggregate_by_hand() -> None:
    from vlcomp.benchmarks.crepe import aggregate_crepe_negate, finish_crepe

    meta = pd.DataFrame({"complexity": [4, 4, 5], "index": [0, 1, 0], "image_id": ["1", "2", "3"],
                         "caption": ["c"] * 3, "n_negatives": [2, 2, 2]})
    scores = np.array([[0.9, 0.1, 0.2],   # rank 0
                       [0.5, 0.5, 0.1],   # tie: rank 0 (CREPE), 1 (strict)
                       [0.1, 0.3, 0.2]])  # rank 2
    metrics = aggregate_crepe_negate({"crepe_negate": finish_crepe(meta, scores)})
    assert metrics == {"crepe/negate/acc": 2 / 3, "crepe/negate/acc_tie_counts_wrong": 1 / 3,
                       "crepe/negate/recall_at_3": 1.0, "crepe/negate/macro_acc": (1.0 + 0.0) / 2,
                       "crepe/negate/chance": 1 / 3, "crepe/negate/n": 3.0,
                       "crepe/negate/complexity/4/acc": 1.0, "crepe/negate/complexity/4/n": 2.0,
                       "crepe/negate/complexity/5/acc": 0.0, "crepe/negate/complexity/5/n": 1.0}


def test_bad_inputs_name_file_and_record(built, tmp_path) -> None:
    import shutil

    from vlcomp.benchmarks.crepe import prepare_crepe_negate
    from vlcomp.eval.engine import score_task

    out, result = built
    prod, images = tmp_path / "prod", tmp_path / "images"
    shutil.copytree(out / result.inputs["crepe_prod_dir"], prod)
    shutil.copytree(out / result.inputs["crepe_images"], images)
    first = crepe_ds.read_crepe_csv(crepe_ds.negate_file(prod, 4), 4)[0]
    (images / f"{first.image_id}.png").unlink()
    task = prepare_crepe_negate({"crepe_prod_dir": str(prod), "crepe_images": [str(images)]})
    with pytest.raises(FileNotFoundError, match=r"complexity_4\.csv: record 0: image .* not found"):
        score_task(object(), task)  # the up-front image check fails before any scoring
    path = crepe_ds.negate_file(prod, 6)
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    rows[2][-1] = "['x', 5]"  # record 1: a number among the hard negatives
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows(rows)
    with pytest.raises(ValueError, match=r"complexity_6\.csv: record 1: field 'hard_negs' item 1"):
        prepare_crepe_negate({"crepe_prod_dir": str(prod), "crepe_images": str(images)})
    with pytest.raises(ValueError, match="must be a folder, or a list or mapping of folders"):
        prepare_crepe_negate({"crepe_prod_dir": str(prod), "crepe_images": 3})
    with pytest.raises(NotADirectoryError, match="crepe_images"):
        prepare_crepe_negate({"crepe_prod_dir": str(prod), "crepe_images": str(tmp_path / "none")})
    with pytest.raises(ValueError, match="crepe_complexities"):
        prepare_crepe_negate({"crepe_prod_dir": str(prod), "crepe_images": str(images), "crepe_complexities": [3]})


def test_rows_with_other_numbers_of_negatives_are_their_own_task(tmp_path) -> None:
    from vlcomp.benchmarks.crepe import prepare_crepe_negate
    from vlcomp.twins.images import write_png

    prod, images = tmp_path / "prod", tmp_path / "images"
    write_png(images / "3.png", np.zeros((48, 48, 3), dtype=np.uint8))
    row = {"image_id": 3, "x": 0, "y": 0, "width": 10, "height": 10, "caption": "a circle."}
    crepe_ds.write_crepe_csv(crepe_ds.negate_file(prod, 4), [{**row, "hard_negs": ["no circle.", "not circle."]}], 4)
    crepe_ds.write_crepe_csv(crepe_ds.negate_file(prod, 5), [{**row, "hard_negs": ["there is no circle."]}], 5)
    empty = tmp_path / "VG_100K"
    empty.mkdir()
    tasks = prepare_crepe_negate({"crepe_prod_dir": str(prod),
                                  "crepe_images": {"VG_100K": str(empty), "VG_100K_2": str(images)}})
    assert [t.name for t in tasks] == ["crepe_negate (1 hard negatives)", "crepe_negate (2 hard negatives)"]
    assert [t.captions for t in tasks] == [[("a circle.", "there is no circle.")],
                                           [("a circle.", "no circle.", "not circle.")]]
    assert tasks[0].load_image(tasks[0].image_keys[0]).size == (10, 10)


# --------------------------------------------------------------------------- rules by hand

CFG = WorldConfig(image_size=48)


def _scene() -> Scene:
    objs = [Obj(0, "circle", "red", "large", "striped", "solid", 10, 10, 8, z=0),
            Obj(1, "square", "orange", "small", "plain", "hollow", 38, 10, 6, z=1),
            Obj(2, "star", "blue", "small", "plain", "solid", 10, 38, 6, z=2)]
    return Scene("toy/000001", "black", objs, compute_relations(objs, CFG))


def test_sentences_and_negations_by_hand() -> None:
    scene = _scene()
    assert (0, "to the left of", 1) in scene.relations and (1, "to the right of", 0) in scene.relations
    g = twin.SubGraph((0, 1, 2), ((0, "red"), (1, "small"), (1, "hollow")),
                      ((0, "to the left of", 1), (1, "to the right of", 0)))
    assert g.complexity == 8
    caption, negatives = twin.caption_and_negatives(scene, g)
    assert caption == ("a red circle to the left of a small hollow square. the square to the right of the circle. "
                       "there is a star.")
    assert negatives == [
        "a red circle not to the left of a small hollow square. the square to the right of the circle. there is a star.",
        "there is no red circle to the left of a small hollow square. the square to the right of the circle. "
        "there is a star.",
        "a red circle to the left of no small hollow square. the square to the right of the circle. there is a star.",
        "a red circle to the left of a small hollow square. the square not to the right of the circle. there is a star.",
        "a red circle to the left of a small hollow square. there is no square to the right of the circle. "
        "there is a star.",
        "a red circle to the left of a small hollow square. the square to the right of no circle. there is a star.",
        "a red circle to the left of a small hollow square. the square to the right of the circle. there is no star.",
    ]
    assert twin.holds(scene, g)
    assert not twin.holds(scene, twin.SubGraph((0, 1), (), ((0, "above", 1),)))
    assert not twin.holds(scene, twin.SubGraph((0,), ((0, "blue"),), ()))
    # boxes (2, 2, 18, 18) and (4, 32, 16, 44)
    assert twin.region([scene.obj(0), scene.obj(2)], 48) == {"x": 2, "y": 2, "width": 16, "height": 42}


def test_options_are_checked() -> None:
    assert twin.read_options({}).complexities == crepe_ds.COMPLEXITIES
    for bad, match in [({"complexities": [3]}, "complexities"), ({"complexities": [4, 4]}, "complexities"),
                       ({"n_items": 2, "complexities": [4, 5, 6]}, "fewer than"), ({"split": "web"}, "test split"),
                       ({"n_negatives": 0}, "n_negatives"), ({"x": 1}, "unknown option")]:
        with pytest.raises(ValueError, match=match):
            twin.read_options(bad)


def test_vocabulary_holds_every_template_word() -> None:
    words = {"a", "an", "the", "there", "is", "no", "not", *SIZES, *COLOURS, *MATERIALS, "hollow", *SHAPES,
             *(w for r in RELATIONS for w in r.split())}
    assert words <= vocabulary()
