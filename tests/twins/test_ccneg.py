"""CC-Neg twin on the tiny world: every record re-checked against the scene graph by parsing its text (the true
caption holds, the negated caption negates one fact that holds), K and negation-word coverage, vocabulary,
byte-identical rebuilds, the loader round trip, and the record end to end with a toy scorer."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vlcomp.config import load_params
from vlcomp.formats.ccneg import IMAGE_PREFIX, load_ccneg
from vlcomp.twins import TwinContext, build_twin
from vlcomp.twins import ccneg as twin
from vlcomp.twins.images import image_file_name
from vlcomp.world import Split, world_configs
from vlcomp.world.concepts import COLOURS, MATERIALS, SIZES
from vlcomp.world.scene import Obj, Scene, WorldConfig, compute_relations

from .inventory import RELATIONS, SHAPES, relation_pattern, vocabulary

#: Small enough for the tiny world's 150 images, every K and every negation word present.
OPTIONS = {"ccneg": {"n_items": 50, "k_weights": [4, 4, 3, 2, 1], "with_prob": 0.35, "no_prob": 0.5}}

# the inventory of the world the tests build (params.yaml): a support world's bar and support relations too
_C = "|".join(COLOURS)
_S = "|".join(SHAPES)
_R = relation_pattern(RELATIONS)
ATTR = re.compile(r"^that is (not )?(\w+)$")
REL = re.compile(rf"^(not )?({_R}) (a|an) ({_C}) ({_S})$")
WITH = re.compile(rf"^(with|without) (a|an) ({_C}) ({_S})$")
WITH_NO = re.compile(rf"^with no ({_C}) ({_S})$")
SUBJECT = re.compile(rf"^(a|an) ({_C}) ({_S}) (.+)$")


@pytest.fixture(scope="module")
def built(tiny_world, tmp_path_factory):
    wcfg, _, _ = world_configs(load_params(Path(__file__).resolve().parents[2] / "params.yaml"))
    out = tmp_path_factory.mktemp("ccneg") / "benchmarks"
    result = build_twin("ccneg", TwinContext(tiny_world, out, wcfg, 0, OPTIONS))
    return out, result


def _clauses(caption: str) -> tuple[str, str, str, list[str]]:
    m = SUBJECT.match(caption)
    assert m, caption
    art, colour, shape, rest = m.groups()
    assert art == ("an" if colour[0] in "aeiou" else "a"), caption
    head, sep, tail = rest.rpartition(" and ")
    return art, colour, shape, (head.split(", ") + [tail]) if sep else [rest]


def _object(scene: Scene, colour: str, shape: str) -> Obj:
    (obj,) = [o for o in scene.objects if o.colour == colour and o.shape == shape]
    return obj


def _fact(scene: Scene, subject: Obj, clause: str) -> tuple[bool, bool]:
    """``(negated, the clause's fact holds)``, read from the words alone."""
    if m := ATTR.match(clause):
        return bool(m[1]), m[2] in (subject.size, subject.material, "hollow" if subject.state == "hollow" else None)
    if m := REL.match(clause):
        other = _object(scene, m[4], m[5])
        return bool(m[1]), (subject.id, m[2], other.id) in scene.relations
    if m := WITH.match(clause):
        return m[1] == "without", _object(scene, m[3], m[4]).id != subject.id
    if m := WITH_NO.match(clause):
        return True, _object(scene, m[1], m[2]).id != subject.id
    raise AssertionError(f"unparsed clause {clause!r}")


def _scenes_by_file(tiny_world) -> dict[str, tuple[int, Scene]]:
    scenes = Split(tiny_world, "vg_test").scenes()
    return {image_file_name(s.image_id): (i, s) for i, s in enumerate(scenes)}


def test_counts_cover_every_k_and_word(built) -> None:
    _, result = built
    counts = result.counts
    assert counts["ccneg/n_items"] == 50
    # 50 apportioned by 4:4:3:2:1 (largest remainders)
    assert [counts[f"ccneg/k/{k}"] for k in range(1, 6)] == twin.apportion(50, [4, 4, 3, 2, 1]) == [14, 14, 11, 7, 4]
    assert all(counts[f"ccneg/word/{w}"] > 0 for w in ("no", "not", "without"))
    assert result.inputs == {"ccneg_annotations": "ccneg/ccneg_dataset/ccneg_preprocessed.pt",
                             "ccneg_images": "ccneg/ccneg_images", "ccneg_n_eval": 50}


def test_every_record_is_checked_against_its_scene_graph(built, tiny_world) -> None:
    out, result = built
    cases = load_ccneg(out / result.inputs["ccneg_annotations"])
    by_file = _scenes_by_file(tiny_world)
    images = Split(tiny_world, "vg_test").images
    for case in cases:
        assert case.image_path.startswith(IMAGE_PREFIX + twin.IMAGE_SUBDIR + "/")
        index, scene = by_file[Path(case.image_path).name]
        _, colour, shape, true_clauses = _clauses(case.caption)
        subject = _object(scene, colour, shape)
        facts = [_fact(scene, subject, c) for c in true_clauses]
        assert all(holds and not negated for negated, holds in facts), case  # c is true
        assert case.k == len(true_clauses)
        _, colour2, shape2, neg_clauses = _clauses(case.negated_caption)
        assert (colour2, shape2) == (colour, shape) and len(neg_clauses) == len(true_clauses)
        changed = [i for i, (a, b) in enumerate(zip(true_clauses, neg_clauses, strict=True)) if a != b]
        assert len(changed) == 1, case  # one pair negated in place, the others kept
        negated, holds = _fact(scene, subject, neg_clauses[changed[0]])
        assert negated and holds, case  # c' negates a fact of the scene: it is false
        image = np.asarray(Image.open(case.image_file(out / result.inputs["ccneg_images"])))
        np.testing.assert_array_equal(image, images[index])


def test_vocabulary_and_length(built) -> None:
    out, result = built
    vocab = vocabulary()
    for case in load_ccneg(out / result.inputs["ccneg_annotations"]):
        for text in (case.caption, case.negated_for_model):
            words = re.sub(r"[^a-z0-9 ]+", " ", text.lower()).split()
            assert set(words) <= vocab, text
            assert len(words) <= 30, text


def test_annotations_carry_the_parse_fields(built) -> None:
    import torch

    out, result = built
    data = torch.load(out / result.inputs["ccneg_annotations"], weights_only=True)
    for ann in data["annotations"]:
        sop = ann["sop_data"]
        subject = sop["sop_decomposition"]["subject"]
        assert ann["json"]["caption"].startswith(subject + " ")
        assert sop["exclusion-prompt"].startswith(subject)
        chosen = sop["sop_chosen_object"]  # "an orange square" or an attribute word; "with no" drops the article
        bare = chosen.split(" ", 1)[1] if chosen.startswith(("a ", "an ")) else chosen
        assert bare in sop["negative-prompt"].removeprefix(subject)
        assert bare not in sop["exclusion-prompt"].removeprefix(subject)  # the negated object is gone


def test_rebuild_is_byte_identical(tiny_world, twin_context, tmp_path) -> None:
    files = []
    for name in ("a", "b"):
        out = tmp_path / name
        build_twin("ccneg", twin_context(OPTIONS, out=out))
        files.append({p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()})
    assert files[0] == files[1]
    assert len(files[0]) == 51  # the annotations and 50 images


def test_record_end_to_end_with_a_toy_scorer(built) -> None:
    from vlcomp.benchmarks.registry import BENCHMARKS
    from vlcomp.eval.engine import score_task
    from vlcomp.models.factory import ModelSpec, create_model
    from vlcomp.models.scorers import toy_scorer

    from .tokenizer import params_tokenizer

    out, result = built
    inputs = {k: str(out / v) if isinstance(v, str) else v for k, v in result.inputs.items()}
    bench = BENCHMARKS.get("ccneg")
    scorer = toy_scorer("toy", create_model(ModelSpec("toy-vit-p8"), init_seed=0), params_tokenizer())
    metrics = bench.aggregate(score_task(scorer, bench.prepare(inputs)))
    assert metrics["ccneg/n"] == 50
    expected = ["ccneg/acc", "ccneg/acc_code_tie_rule"] + [f"ccneg/k/{k}/acc" for k in range(1, 6)] + \
        [f"ccneg/word/{w}/acc" for w in ("no", "not", "without")]
    for key in expected:
        assert 0.0 <= metrics[key] <= 1.0, key
    assert [metrics[f"ccneg/k/{k}/n"] for k in range(1, 6)] == [14, 14, 11, 7, 4]


# --------------------------------------------------------------------------- rules by hand

CFG = WorldConfig(image_size=48)


def _scene() -> Scene:
    objs = [Obj(0, "circle", "red", "large", "striped", "solid", 10, 10, 8, z=0),
            Obj(1, "square", "orange", "small", "plain", "hollow", 38, 10, 6, z=1)]
    return Scene("toy/000001", "black", objs, compute_relations(objs, CFG))


def test_text_of_pairs_by_hand() -> None:
    scene = _scene()
    size, material = twin.attribute_pairs(scene.obj(0))
    rel = twin.Pair("relation", "to the left of", "orange square", 1)
    with_ = twin.Pair("with", "with", "orange square", 1)
    t = twin.Triplet(0, 0, (size, material, rel), chosen=2, word="not")
    assert twin.captions(scene, t) == (
        "a red circle that is large, that is striped and to the left of an orange square",
        "a red circle that is large, that is striped and not to the left of an orange square",
        "a red circle that is large and that is striped")
    t = twin.Triplet(0, 0, (with_,), chosen=0, word="without")
    assert twin.captions(scene, t) == ("a red circle with an orange square", "a red circle without an orange square",
                                       "a red circle")
    assert twin.pair_text(with_, "no") == "with no orange square"
    assert twin.chosen_object(t) == "an orange square"
    assert twin.attribute_pairs(scene.obj(1)) == [twin.Pair("attribute", "is", "small"),
                                                  twin.Pair("attribute", "is", "hollow")]


def test_pair_holds_by_hand() -> None:
    scene = _scene()
    assert (0, "to the left of", 1) in scene.relations
    assert twin.pair_holds(scene, 0, twin.Pair("relation", "to the left of", "orange square", 1))
    assert not twin.pair_holds(scene, 0, twin.Pair("relation", "above", "orange square", 1))
    assert not twin.pair_holds(scene, 0, twin.Pair("relation", "to the left of", "blue square", 1))
    assert twin.pair_holds(scene, 0, twin.Pair("attribute", "is", "striped"))
    assert not twin.pair_holds(scene, 0, twin.Pair("attribute", "is", "small"))
    assert twin.pair_holds(scene, 1, twin.Pair("attribute", "is", "hollow"))
    assert not twin.pair_holds(scene, 0, twin.Pair("with", "with", "red circle", 0))  # not itself


def test_apportion_by_hand() -> None:
    assert twin.apportion(10, [1, 1, 1]) == [4, 3, 3]  # remainders tie: the earlier entry first
    # exact 424.08, 393.54, 136.55, 35.83, 9.997: floors sum to 997, the 3 largest remainders are K = 5, 4, 3
    assert twin.apportion(1000, twin.PAPER_K_COUNTS) == [424, 393, 137, 36, 10]
    assert twin.apportion(7, [0, 1]) == [0, 7]
    with pytest.raises(ValueError):
        twin.apportion(3, [0, 0])


def test_options_are_checked() -> None:
    assert twin.read_options({}).k_weights == tuple(float(k) for k in twin.PAPER_K_COUNTS)
    for bad, match in [({"n_items": 0}, "n_items"), ({"split": "web"}, "test split"),
                       ({"k_weights": [1, 1]}, "k_weights"), ({"no_prob": 2}, "no_prob"),
                       ({"bogus": 1}, "unknown option")]:
        with pytest.raises(ValueError, match=match):
            twin.read_options(bad)


def test_smoke_size_with_default_options(twin_context) -> None:
    """The suggested smoke size (40 records) builds with every other option at its default."""
    counts = build_twin("ccneg", twin_context({"ccneg": {"n_items": 40}})).counts
    assert [counts.get(f"ccneg/k/{k}", 0) for k in range(1, 6)] == twin.apportion(40, twin.PAPER_K_COUNTS)


def test_too_small_a_split_is_an_error(twin_context) -> None:
    with pytest.raises(ValueError, match=r"ccneg\.n_items=400: split 'vg_test' has too few images"):
        build_twin("ccneg", twin_context({"ccneg": {"n_items": 400}}))


def test_vocabulary_holds_every_template_word() -> None:
    words = {"a", "an", "that", "is", "not", "with", "without", "no", "and", *SIZES, *MATERIALS, "hollow",
             *SHAPES, *(w for r in RELATIONS for w in r.split())}
    assert words <= vocabulary()
