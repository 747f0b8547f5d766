"""VALSE twin: the instruments built on the tiny world, every case re-checked on its scene graph with a parser
written here (not the twin's claims), the vocabulary, determinism, the loader round trip, the benchmark end to
end, the rules by hand, and the multiples sampler with repeated shapes."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vlcomp.benchmarks.registry import BENCHMARKS
from vlcomp.eval.engine import score_task
from vlcomp.formats import valse as valse_fmt
from vlcomp.formats.records import RecordError
from vlcomp.twins import TwinContext, build_twin
from vlcomp.twins import valse as tw
from vlcomp.world import Split
from vlcomp.world.concepts import ALL_RELATIONS, SHAPES
from vlcomp.world.multiples import MAX_OBJECTS, count_matching, sample_multiples_scene
from vlcomp.world.render import render
from vlcomp.world.scene import Obj, Scene, WorldConfig, compute_relations

from .inventory import RELATIONS as WORLD_RELATIONS
from .inventory import SHAPES as WORLD_SHAPES
from .inventory import implied
from .tokenizer import params_tokenizer

N = 12  # cases per instrument (a multiple of 6: counting-hard is then exactly balanced)
OPTIONS = {"valse": {"n_per_instrument": N}}
CFG = WorldConfig()


@pytest.fixture(scope="module")
def built(tiny_world, tmp_path_factory):
    """The twin built once on the tiny world: (benchmarks dir, result, world dir, world config)."""
    from vlcomp.config import load_params
    from vlcomp.world import world_configs

    wcfg, _, _ = world_configs(load_params(Path(__file__).resolve().parents[2] / "params.yaml"))
    out = tmp_path_factory.mktemp("valse") / "benchmarks"
    result = build_twin("valse", TwinContext(tiny_world, out, wcfg, 0, OPTIONS))
    return out, result, tiny_world, wcfg


def _files(built) -> dict[str, dict]:
    out, result, _, _ = built
    data = out / result.inputs["valse_dir"]
    return {ins: json.loads((data / f"{ins}.json").read_text()) for ins in result.inputs["valse_instruments"]}


def _scenes(built) -> dict[str, Scene]:
    """Every scene a case may name: the world test splits and the twin's sampled scenes."""
    out, _, world, _ = built
    scenes = {s.image_id: s for name in ("vg_test", "coco_test") for s in Split(world, name).scenes()}
    path = out / "valse" / tw.SCENES_FILE
    for i, line in enumerate(path.read_text().splitlines()):
        sc = Scene.from_record(json.loads(line), f"{path}:{i + 1}")
        scenes[sc.image_id] = sc
    return scenes


# ----------------------------------------------------------------- an independent reading of the sentences
# (the nouns and relation phrases of the world the tests build: a support world's bar and support relations too)

_NOUNS = {**{s: (s, False) for s in WORLD_SHAPES}, **{s + "s": (s, True) for s in WORLD_SHAPES if s != "cross"}}
_COUNT = {"no": lambda n: n == 0, "a": lambda n: n >= 1, "an": lambda n: n >= 1, "one": lambda n: n == 1,
          "two": lambda n: n == 2, "three": lambda n: n == 3, "some": lambda n: n >= 2}


def _np(text: str) -> tuple[str, str | None, bool]:
    words = text.split()
    assert len(words) in (1, 2), text
    shape, plural = _NOUNS[words[-1]]
    return shape, (words[0] if len(words) == 2 else None), plural


def _match(o: Obj, np_: tuple[str, str | None, bool]) -> bool:
    return o.shape == np_[0] and (np_[1] is None or o.colour == np_[1])


def _article_ok(article: str, phrase: str) -> bool:
    return article == ("an" if phrase[0] in "aeiou" else "a")


def parse(text: str) -> tuple:
    """("q", quantifier, np) or ("f", subject np, relation, object np), grammar checked on the way."""
    m = re.fullmatch(r"there (is|are) (no|an?|one|two|three|some) (.+)", text)
    if m:
        verb, q, np_ = m.group(1), m.group(2), _np(m.group(3))
        assert np_[2] == (verb == "are") == (q in ("two", "three", "some")), text
        if q in ("a", "an"):
            assert _article_ok(q, m.group(3)), text
        return ("q", q, np_)
    for rel in sorted(WORLD_RELATIONS, key=len, reverse=True):
        m = re.fullmatch(rf"(an?) (.+?) {rel} (an?) (.+)", text)
        if m:
            assert _article_ok(m.group(1), m.group(2)) and _article_ok(m.group(3), m.group(4)), text
            return ("f", _np(m.group(2)), rel, _np(m.group(4)))
    raise AssertionError(f"unparsed sentence {text!r}")


def truth(scene: Scene, text: str) -> bool:
    claim = parse(text)
    if claim[0] == "q":
        return _COUNT[claim[1]](sum(_match(o, claim[2]) for o in scene.objects))
    _, subj, rel, obj = claim  # a claim the graph implies: "star above bar" for a star sitting on its bar
    return any(p == rel and _match(scene.obj(s), subj) and _match(scene.obj(o), obj) for s, p, o in implied(scene))


# ----------------------------------------------------------------------------------------- the twin


def test_every_expressible_instrument_has_cases(built):
    out, result, _, _ = built
    assert result.inputs["valse_instruments"] == list(tw.INSTRUMENTS)
    assert set(tw.INSTRUMENTS) | {"coreference-standard", "coreference-hard"} == set(valse_fmt.INSTRUMENTS)
    assert {"coreference-standard", "coreference-hard"} <= {part for part, _ in tw.NOT_EXPRESSIBLE}
    assert all(why.strip() for _, why in tw.NOT_EXPRESSIBLE)
    files = _files(built)
    for ins in tw.INSTRUMENTS:
        assert 0 < result.counts[f"{ins}/n_validated"] <= result.counts[f"{ins}/n_cases"] == len(files[ins]) <= N
    for ins in ("existence", "plurals", "counting-hard", "counting-small-quant", "counting-adversarial"):
        assert len(files[ins]) == N
    assert result.inputs["valse_images"] == {k: f"valse/images/{k}" for k in ("coco_val2014", "coco_val2017",
                                                                             "swig", "visual7w")}
    assert result.counts["n_images"] == sum(len(list((out / f).glob("*.png")))
                                            for f in result.inputs["valse_images"].values())


def test_every_case_is_rechecked_on_its_scene_graph(built):
    scenes = _scenes(built)
    n_not_validated = 0
    for ins, records in _files(built).items():
        for key, rec in records.items():
            sc = scenes[rec["dataset_idx"]]
            cap, foil = truth(sc, rec["caption"]), truth(sc, rec["foil"])
            assert cap, f"{ins} {key}: caption not true of its scene"
            expected = {"foil": 0, "caption": 3, "other": 0} if cap and not foil else {"foil": 3, "caption": 0,
                                                                                      "other": 0}
            assert rec["mturk"] == expected, f"{ins} {key}"
            n_not_validated += not (cap and not foil)
            assert rec["image_file"] == sc.image_id.replace("/", "_") + ".png"
            assert rec["dataset"] == tw.SAMPLED or rec["dataset_idx"].startswith(rec["dataset"] + "/")
    counts = built[1].counts
    assert n_not_validated == sum(counts[f"{i}/n_cases"] - counts[f"{i}/n_validated"] for i in tw.INSTRUMENTS)


def test_each_instrument_follows_its_rule(built):
    files, scenes = _files(built), _scenes(built)
    for rec in files["existence"].values():
        (_, q1, np1), (_, q2, np2) = parse(rec["caption"]), parse(rec["foil"])
        assert np1 == np2 and {q1, q2} <= {"no", "a", "an"} and (q1 == "no") != (q2 == "no")
        assert rec["provenance_of_foils"] == ("zero_to_something" if q1 == "no" else "something_to_zero")
    for rec in files["plurals"].values():
        (_, q1, np1), (_, q2, np2) = parse(rec["caption"]), parse(rec["foil"])
        assert np1[:2] == np2[:2] and {q1, q2} == {"one", "some"}
        assert rec["foil_method"] == ("change NP to PL" if q1 == "one" else "change NP to SG")
    words = {"one": 1, "two": 2, "three": 3}
    for ins in ("counting-hard", "counting-small-quant", "counting-adversarial"):
        pairs = []
        for rec in files[ins].values():
            (_, q1, np1), (_, q2, np2) = parse(rec["caption"]), parse(rec["foil"])
            c, f = words[q1], words[q2]
            assert np1[0] == np2[0] and np1[1] is None and c != f and (rec["classes"], rec["classes_foil"]) == (c, f)
            assert count_matching(scenes[rec["dataset_idx"]], np1[0]) == c == rec["answer"]
            pairs.append((c, f))
        if ins == "counting-adversarial":
            assert all(f < c for c, f in pairs)
        if ins == "counting-hard":  # N = 12 = two rounds: each number 4 times true count, 4 times foil
            assert Counter(c for c, _ in pairs) == Counter(f for _, f in pairs) == {1: 4, 2: 4, 3: 4}
    for ins in ("relations", "action-replacement"):
        group = "spatial" if ins == "relations" else "verb"
        for rec in files[ins].values():
            (_, s1, r1, o1), (_, s2, r2, o2) = parse(rec["caption"]), parse(rec["foil"])
            assert (s1, o1) == (s2, o2) and r1 != r2 and (rec["classes"], rec["classes_foil"]) == (r1, r2)
            assert ALL_RELATIONS[r1].group == ALL_RELATIONS[r2].group == group and "near" not in (r1, r2)
            assert tw.plausible(s1[0], r2, o1[0])
            assert group == "spatial" or r2 != ALL_RELATIONS[r1].converse  # a verb's converse would swap actants
    for rec in files["actant-swap"].values():
        (_, s1, r1, o1), (_, s2, r2, o2) = parse(rec["caption"]), parse(rec["foil"])
        assert (s2, r2, o2) == (o1, r1, s1) and ALL_RELATIONS[r1].group == "verb"
    for rec in files["foil-it"].values():
        (_, s1, r1, o1), (_, s2, r2, o2) = parse(rec["caption"]), parse(rec["foil"])
        present = {o.shape for o in scenes[rec["dataset_idx"]].objects}
        changed = [(a, b) for a, b in ((s1, s2), (o1, o2)) if a != b]
        assert r1 == r2 and len(changed) == 1 and changed[0][1][0] not in present
        assert changed[0][0][1] == changed[0][1][1] and (rec["classes"], rec["classes_foil"]) == (
            changed[0][0][0], changed[0][1][0])


def test_captions_and_foils_stay_in_the_vocabulary(built):
    tok = params_tokenizer()
    for ins, records in _files(built).items():
        for key, rec in records.items():
            for text in (rec["caption"], rec["foil"]):
                assert tok.UNK not in tok.encode(text), f"{ins} {key}: {text!r} has a word outside the vocabulary"


def test_images_are_the_scenes(built):
    out, result, world, wcfg = built
    scenes, images = _scenes(built), {n: Split(world, n).images for n in ("vg_test", "coco_test")}
    index = {s.image_id: i for n in images for i, s in enumerate(Split(world, n).scenes())}
    for ins, records in _files(built).items():
        folder = out / result.inputs["valse_images"][valse_fmt.image_root_key(ins, "x.png")]
        for rec in records.values():
            pixels = np.asarray(Image.open(folder / rec["image_file"]))
            sc = scenes[rec["dataset_idx"]]
            want = render(sc, wcfg.image_size) if rec["dataset"] == tw.SAMPLED else \
                images[rec["dataset"]][index[sc.image_id]]
            np.testing.assert_array_equal(pixels, want)


def test_loader_round_trip(built):
    out, result, _, _ = built
    files = _files(built)
    loaded = valse_fmt.load_all(out / result.inputs["valse_dir"], tuple(tw.INSTRUMENTS), valid_only=False)
    for ins, cases in loaded.items():
        assert [c.id for c in cases] == list(files[ins])
        assert [(c.caption, c.foil, c.image_file, c.mturk_caption) for c in cases] == [
            (r["caption"], r["foil"], r["image_file"], r["mturk"]["caption"]) for r in files[ins].values()]
        assert sum(c.valid for c in cases) == result.counts[f"{ins}/n_validated"]


def test_build_is_byte_identical(built, tiny_world, tmp_path):
    out, _, _, wcfg = built
    again = tmp_path / "benchmarks"
    build_twin("valse", TwinContext(tiny_world, again, wcfg, 0, OPTIONS))
    first = {p.relative_to(out): p.read_bytes() for p in sorted((out / "valse").rglob("*")) if p.is_file()}
    second = {p.relative_to(again): p.read_bytes() for p in sorted((again / "valse").rglob("*")) if p.is_file()}
    assert first.keys() == second.keys() and first == second


def _resolved(built, root: Path | None = None) -> dict:
    out, result, _, _ = built
    root = root or out
    inputs = dict(result.inputs)
    inputs["valse_dir"] = str(root / inputs["valse_dir"])
    inputs["valse_images"] = {k: str(root / v) for k, v in inputs["valse_images"].items()}
    return inputs


def _scorer():
    from vlcomp.models.factory import ModelSpec, create_model
    from vlcomp.models.scorers import toy_scorer

    return toy_scorer("toy", create_model(ModelSpec("toy-vit-p8"), init_seed=0), params_tokenizer())


def test_end_to_end_through_the_benchmark(built):
    bench = BENCHMARKS.get("valse")
    task = bench.prepare(_resolved(built))
    metrics = bench.aggregate(score_task(_scorer(), task))
    counts = built[1].counts
    for ins in tw.INSTRUMENTS:
        assert 0 <= metrics[f"valse/{ins}/acc"] <= 1
        assert metrics[f"valse/{ins}/n"] == counts[f"{ins}/n_validated"]
    for col in ("existence", "plurality", "counting", "spatial_relations", "action_replacement", "actant_swap",
                "foil_it"):
        assert 0 <= metrics[f"valse/column/{col}/acc"] <= 1
    assert 0 <= metrics["valse/avg_present_instruments"] <= 1 and 0 <= metrics["valse/avg_present_columns"] <= 1
    assert metrics["valse/n_instruments"] == 9 and metrics["valse/n_columns"] == 7
    assert "valse/avg_instruments" not in metrics and "valse/avg_columns" not in metrics


def test_missing_image_and_bad_record_name_file_and_record(built, tmp_path):
    out, result, _, _ = built
    copy = tmp_path / "copy"
    shutil.copytree(out / "valse", copy / "valse")
    inputs = _resolved(built, copy)
    data = copy / result.inputs["valse_dir"]
    key, rec = next(iter(json.loads((data / "plurals.json").read_text()).items()))
    (Path(inputs["valse_images"]["coco_val2017"]) / rec["image_file"]).unlink()
    task = BENCHMARKS.get("valse").prepare(inputs)
    with pytest.raises(FileNotFoundError, match=rf"plurals\.json: record '{re.escape(key)}': image .* not found"):
        score_task(_scorer(), task)
    records = json.loads((data / "relations.json").read_text())
    bad = list(records)[-1]
    records[bad]["mturk"] = {"foil": 3, "caption": 3, "other": 3}
    (data / "relations.json").write_text(json.dumps(records))
    with pytest.raises(RecordError, match=rf"relations\.json: record '{re.escape(bad)}': field 'mturk': votes must"):
        BENCHMARKS.get("valse").prepare(inputs)


@pytest.mark.parametrize(("options", "message"), [
    ({"n_per_instrument": 0}, r"benchmarks\.twins\.valse\.n_per_instrument=0: must be an int >= 1"),
    ({"n_per_instrument": 5, "n_items": 3}, r"benchmarks\.twins\.valse: unknown option\(s\) \['n_items'\]"),
])
def test_bad_options_name_the_parameter(twin_context, options, message):
    with pytest.raises(ValueError, match=message):
        build_twin("valse", twin_context({"valse": options}))


# --------------------------------------------------------------------------------------- rules by hand


def _hand_scene() -> Scene:
    """Red circles at (8, 8) and (40, 8), a blue circle at (8, 40), an orange triangle at (40, 40)."""
    objs = [Obj(0, "circle", "red", "small", "plain", "solid", 8, 8, 6), Obj(1, "circle", "red", "small", "plain",
                                                                            "solid", 40, 8, 6, z=1),
            Obj(2, "circle", "blue", "small", "plain", "solid", 8, 40, 6, z=2),
            Obj(3, "triangle", "orange", "small", "plain", "solid", 40, 40, 6, z=3)]
    return Scene("hand/0", "black", objs, compute_relations(objs, CFG))


@pytest.mark.parametrize(("np_", "quantifier", "text", "holds"), [
    (tw.NounPhrase("circle"), "three", "there are three circles", True),
    (tw.NounPhrase("circle"), "some", "there are some circles", True),
    (tw.NounPhrase("circle", "red"), "two", "there are two red circles", True),
    (tw.NounPhrase("circle", "red"), "one", "there is one red circle", False),
    (tw.NounPhrase("circle", "blue"), "one", "there is one blue circle", True),
    (tw.NounPhrase("circle", "blue"), "some", "there are some blue circles", False),
    (tw.NounPhrase("triangle", "orange"), "a", "there is an orange triangle", True),
    (tw.NounPhrase("arrow"), "a", "there is an arrow", False),
    (tw.NounPhrase("heart"), "no", "there is no heart", True),
    (tw.NounPhrase("triangle"), "no", "there is no triangle", False),
])
def test_quantity_claims_by_hand(np_, quantifier, text, holds):
    claim = tw.Quantity(np_, quantifier)
    assert claim.text() == text and claim.holds(_hand_scene()) is holds and truth(_hand_scene(), text) is holds


def test_fact_claims_by_hand():
    sc = _hand_scene()
    red, blue, tri = tw.NounPhrase("circle", "red"), tw.NounPhrase("circle", "blue"), tw.NounPhrase("triangle", "orange")
    assert tw.Fact(red, "above", blue).holds(sc)  # the red circle at (8, 8) is above the blue one
    assert tw.Fact(blue, "to the left of", tri).text() == "a blue circle to the left of an orange triangle"
    assert tw.Fact(blue, "to the left of", tri).holds(sc) and not tw.Fact(tri, "to the left of", blue).holds(sc)
    assert not tw.Fact(red, "below", blue).holds(sc)
    with pytest.raises(ValueError, match="no plural of 'cross'"):
        tw.NounPhrase("cross").text(plural=True)


def test_mturk_votes_by_hand():
    assert tw.mturk_votes(True, False) == {"foil": 0, "caption": 3, "other": 0}
    assert tw.mturk_votes(True, True) == {"foil": 3, "caption": 0, "other": 0}
    assert tw.mturk_votes(False, True) == {"foil": 3, "caption": 0, "other": 0}
    assert tw.mturk_votes(False, False) == {"foil": 0, "caption": 0, "other": 3}
    for c in (True, False):
        for f in (True, False):
            votes = tw.mturk_votes(c, f)
            assert sum(votes.values()) == 3 and (votes["caption"] >= valse_fmt.MIN_CAPTION_VOTES) == (c and not f)


def test_counting_pairs_by_hand():
    rng = np.random.default_rng(0)
    hard = tw.counting_pairs("counting-hard", 6, rng)
    assert sorted(hard) == [(1, 2), (1, 3), (2, 1), (2, 3), (3, 1), (3, 2)]  # one round: each ordered pair once
    small = tw.counting_pairs("counting-small-quant", 200, rng)
    assert all(c != f and {c, f} <= {1, 2, 3} for c, f in small) and {c for c, _ in small} == {1, 2, 3}
    adv = tw.counting_pairs("counting-adversarial", 200, rng)
    assert set(adv) == {(2, 1), (3, 1), (3, 2)}  # true count 2..3, the foil always smaller
    with pytest.raises(ValueError, match="unknown counting instrument"):
        tw.counting_pairs("counting", 3, rng)


def test_plausibility_and_replacements_by_hand():
    assert tw.plausible("arrow", "pointing at", "star") and not tw.plausible("star", "pointing at", "arrow")
    assert tw.plausible("square", "surrounding", "star") and not tw.plausible("star", "surrounding", "square")
    assert not tw.plausible("square", "surrounding", "arrow") and tw.plausible("heart", "inside", "diamond")
    assert not tw.plausible("arrow", "inside", "circle") and tw.plausible("star", "covering", "heart")
    fact = lambda s, r, o: tw.Fact(tw.NounPhrase(s, "red"), r, tw.NounPhrase(o, "blue"))  # noqa: E731
    assert tw.replacement_verbs(fact("arrow", "pointing at", "square")) == ["covering", "covered by"]
    assert tw.replacement_verbs(fact("square", "covering", "star")) == ["surrounding"]  # not "covered by"
    assert tw.replacement_verbs(fact("star", "covering", "circle")) == []
    assert tw.replacement_verbs(fact("circle", "surrounding", "heart")) == ["covering", "covered by"]
    assert "inside" not in tw.foil_relations(fact("heart", "above", "star"))
    assert "near" not in tw.foil_relations(fact("heart", "above", "circle"))


def test_matched_foil_relation_by_hand():
    rng = np.random.default_rng(0)
    f = tw.Fact(tw.NounPhrase("heart"), "below", tw.NounPhrase("star"))
    assert {tw.matched_foil_relation(f, {"above": 5, "below": 9}, rng) for _ in range(20)} == {"above"}
    drawn = [tw.matched_foil_relation(f, {"below": 3}, rng) for _ in range(300)]  # no other phrase used: uniform
    assert set(drawn) == set(tw.foil_relations(f))


def test_noun_foils_keep_the_fact_plausible():
    objs = [Obj(0, "arrow", "red", "small", "plain", "solid", 8, 24, 6), Obj(1, "circle", "blue", "small", "plain",
                                                                           "solid", 40, 24, 6, z=1)]
    sc = Scene("hand/1", "black", objs, compute_relations(objs, CFG))
    fact = tw.Fact(tw.NounPhrase("arrow", "red"), "pointing at", tw.NounPhrase("circle", "blue"))
    sides = tw.noun_foils(fact, sc)
    assert list(sides) == ["object"]  # only an arrow points: the subject cannot be replaced
    assert [f.object.shape for f in sides["object"]] == [s for s in SHAPES if s not in ("arrow", "circle")]


# ---------------------------------------------------------------------------------- multiples sampler


def test_multiples_scene_with_repeated_shapes():
    looks = [("circle", "red"), ("circle", "red"), ("circle", "blue"), ("arrow", "green"), ("circle", "red")]
    sc = sample_multiples_scene(np.random.default_rng(3), CFG, "m/000001", looks)
    assert [(o.shape, o.colour) for o in sc.objects] == looks and [o.id for o in sc.objects] == [0, 1, 2, 3, 4]
    assert count_matching(sc, "circle") == 4 and count_matching(sc, "circle", "red") == 3
    for a in sc.objects:
        assert 0 <= a.box[0] and a.box[2] <= CFG.image_size and 0 <= a.box[1] and a.box[3] <= CFG.image_size
        for b in sc.objects:
            if a.id < b.id:  # at least ~2 px apart: no overlap, so no covering / hiding / containing
                gap = max(abs(a.x - b.x) - a.half - b.half, abs(a.y - b.y) - a.half - b.half)
                assert gap >= 1.99
    assert sc.relations == compute_relations(sc.objects, CFG)
    assert not any(p in ("covering", "covered by", "inside", "surrounding", "in front of", "behind")
                   for _, p, _ in sc.relations)
    back = Scene.from_record(json.loads(json.dumps(sc.to_record())))
    assert back == sc
    image = render(back, CFG.image_size)
    assert image.shape == (48, 48, 3) and image.dtype == np.uint8
    np.testing.assert_array_equal(image, render(sc, CFG.image_size))
    assert (image != image[0, 0]).any(axis=-1).sum() > 100  # the objects are drawn


def test_multiples_sampler_is_seeded_and_checks_its_input():
    looks = [("star", "white")] * 3
    a = sample_multiples_scene(np.random.default_rng(7), CFG, "m/2", looks)
    assert a == sample_multiples_scene(np.random.default_rng(7), CFG, "m/2", looks)
    with pytest.raises(ValueError, match=rf"m/3: a multiples scene holds 1\.\.{MAX_OBJECTS} objects, got 6"):
        sample_multiples_scene(np.random.default_rng(0), CFG, "m/3", [("star", "white")] * 6)
    with pytest.raises(ValueError, match=r"m/4: unknown look \('hexagon', 'red'\)"):
        sample_multiples_scene(np.random.default_rng(0), CFG, "m/4", [("hexagon", "red")])
