"""Hard Positives twin (REPLACE attributes / relations, SWAP): the paper's rules on hand-built scenes, every item
re-checked on the tiny world's scene graphs, closed vocabulary, determinism, round trip and an end-to-end run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vlcomp.benchmarks.registry import BENCHMARKS
from vlcomp.config import load_params
from vlcomp.eval.engine import score_task
from vlcomp.formats import hardpos as hp_format
from vlcomp.formats.records import RecordError
from vlcomp.models.factory import ModelSpec, create_model
from vlcomp.models.scorers import toy_scorer
from vlcomp.seeding import np_rng
from vlcomp.twins import TwinContext, build_twin
from vlcomp.twins.aro_vg import build_vg_attribution
from vlcomp.twins.hardpos import (
    HARD_POSITIVE_MAP,
    IMAGE_DIR,
    NOT_EXPRESSIBLE,
    attribute_items,
    caption_holds,
    hard_positive_map,
    relation_items,
    replace_cases,
    swap_positive,
)
from vlcomp.twins.images import image_file_name, write_png
from vlcomp.world import Split, world_configs
from vlcomp.world.concepts import ALL_RELATIONS, COLOURS, EXTENDED_SYNONYMS, RELATIONS, SIZES, SYNONYMS, world_words
from vlcomp.world.scene import Obj, Scene, WorldConfig, compute_relations

from .tokenizer import params_tokenizer

REPO = Path(__file__).resolve().parents[2]
CFG = WorldConfig(image_size=48)
PARTS = ("replace_att", "replace_rel", "swap")


def _obj(oid: int, shape: str, colour: str, x: float, y: float, half: float = 6.0, *, size: str = "small",
         state: str = "solid", heading: float = 0.0) -> Obj:
    return Obj(oid, shape, colour, size, "plain", state, x, y, half, heading=heading, z=oid)


def _scene(*objs: Obj) -> Scene:
    return Scene("toy/000001", "black", list(objs), compute_relations(list(objs), CFG))


# ------------------------------------------------------------------------------------ the fixed map


def test_hard_positive_map_is_the_worlds_synonyms_and_converses():
    for word, syn in HARD_POSITIVE_MAP["attributes"].items():
        assert syn in SYNONYMS[word]
    for rel, conv in HARD_POSITIVE_MAP["relations"].items():
        assert RELATIONS[rel].converse == conv and HARD_POSITIVE_MAP["relations"][conv] == rel
    assert set(RELATIONS) - set(HARD_POSITIVE_MAP["relations"]) == {"pointing at", "near"}  # no replacement
    vocab = set(world_words())
    words = [w for m in HARD_POSITIVE_MAP.values() for pair in m.items() for p in pair for w in p.split()]
    assert set(words) <= vocab
    assert {part for part, _ in NOT_EXPRESSIBLE} >= {"replace_att/colour", "replace_att/state"}


def test_extended_map_follows_the_papers_rule_where_the_vocabulary_has_a_synonym():
    assert hard_positive_map("base") == HARD_POSITIVE_MAP
    ext = hard_positive_map("extended")
    assert ext["attributes"] == {"large": "big", "small": "little", "purple": "violet"}
    assert ext["relation_synonyms"] == {"above": "over", "below": "under", "next to": "beside"}
    for word, syn in (*ext["attributes"].items(), *ext["relation_synonyms"].items()):
        assert syn == EXTENDED_SYNONYMS[word][0]  # one fixed replacement: the first listed synonym
    assert set(ext["attributes"]) <= set(SIZES) | set(COLOURS)  # no object replacement (box, rhombus)
    # converses only where no synonym exists; each converse pair complete
    assert set(ext["relations"]) == set(HARD_POSITIVE_MAP["relations"]) - {"above", "below", "next to"}
    for rel, conv in ext["relations"].items():
        assert ALL_RELATIONS[rel].converse == conv and ext["relations"][conv] == rel
    tok = params_tokenizer()
    for m in ext.values():
        for pair in m.items():
            for text in pair:
                assert tok.UNK not in tok.encode(text), text
    with pytest.raises(ValueError, match="world.captions.synonyms='weird'"):
        hard_positive_map("weird")


# ------------------------------------------------------------------------------- rules by hand


def test_attribute_items_by_hand():
    sc = _scene(_obj(0, "circle", "red", 10, 24, 10, size="large"), _obj(1, "square", "blue", 38, 24))
    assert attribute_items(sc) == [("large red circle", "small red circle", "big red circle"),
                                   ("small blue square", "large blue square", "little blue square")]


def test_relation_items_by_hand():
    sc = _scene(_obj(0, "circle", "red", 8, 24), _obj(1, "square", "blue", 40, 24))  # far apart: left / right
    seen = set()
    for seed in range(8):
        (item,) = relation_items(sc, np.random.default_rng(seed))
        c, c_n, c_p = item
        assert (c, c_p) in {("red circle to the left of blue square", "blue square to the right of red circle"),
                            ("blue square to the right of red circle", "red circle to the left of blue square")}
        subj, obj = c.split()[:2], c.split()[-2:]
        rel = " ".join(c.split()[2:-2])
        neg = " ".join(c_n.split()[2:-2])
        assert c_n.split()[:2] == subj and c_n.split()[-2:] == obj and neg != rel
        assert RELATIONS[neg].group == "spatial" and not RELATIONS[neg].symmetric  # same group as the relation
        seen.add(neg)
    assert len(seen) > 1  # the negative is drawn, not fixed


def test_pointing_at_has_no_replacement_and_next_to_swaps_its_arguments():
    arrow = _obj(0, "arrow", "purple", 10, 24, heading=0.0)
    star = _obj(1, "star", "yellow", 24, 24)  # gap 2 px: next to; the arrow points at it
    sc = _scene(arrow, star)
    assert (0, "pointing at", 1) in sc.relations and (0, "next to", 1) in sc.relations
    items = relation_items(sc, np.random.default_rng(0))
    rels = sorted(" ".join(c.split()[2:-2]) for c, _, _ in items)
    assert rels in (["next to", "to the left of"], ["next to", "to the right of"])
    (near,) = [it for it in items if " next to " in it[0]]
    assert set(near[0].split()) == set(near[2].split()) and near[0] != near[2]


def test_caption_holds_by_hand():
    outer = _obj(0, "circle", "white", 24, 24, 11.5, size="large", state="hollow")
    inner = _obj(1, "star", "red", 24, 24, 4.5)
    sc = _scene(outer, inner)
    assert caption_holds(sc, "red star inside white circle")
    assert caption_holds(sc, "white circle surrounding red star")
    assert caption_holds(sc, "big white circle") and caption_holds(sc, "little red star")
    assert not caption_holds(sc, "white circle inside red star")
    assert not caption_holds(sc, "large red star") and not caption_holds(sc, "red square")
    assert caption_holds(sc, "the big white circle and the red star")
    assert not caption_holds(sc, "the red circle and the white star")


def test_extended_attribute_items_by_hand():
    ext = hard_positive_map("extended")
    big = _obj(0, "circle", "purple", 10, 24, 10, size="large")
    sc = _scene(big, _obj(1, "square", "green", 38, 24), _obj(2, "star", "red", 24, 8, size="large"))
    items = attribute_items(sc, ext, np.random.default_rng(0))
    assert items[:2] == [("large purple circle", "small purple circle", "big purple circle"),
                         items[1]]
    c, c_n, c_p = items[1]
    assert (c, c_p) == ("large purple circle", "large violet circle")  # colour synonym, the size kept
    neg = c_n.split()[1]
    assert c_n.split()[::2] == ["large", "circle"] and neg in COLOURS and neg != "purple"
    assert [it[0] for it in items[2:]] == ["small green square", "large red star"]  # no colour synonym: sizes only
    # the colour negative is drawn among the colours no object of that size and shape has
    negs = {attribute_items(sc, ext, np.random.default_rng(k))[1][1].split()[1] for k in range(20)}
    assert len(negs) > 1 and "purple" not in negs
    with pytest.raises(ValueError, match="need a random generator"):
        attribute_items(sc, ext)
    assert attribute_items(sc) == [it for it in items if it[0].split()[1] != "purple" or it[2].startswith("big")]


def test_extended_relation_items_use_the_synonym_in_the_same_word_order():
    ext = hard_positive_map("extended")
    sc = _scene(_obj(0, "circle", "red", 24, 8), _obj(1, "square", "blue", 24, 40))  # far apart: above / below
    got = {relation_items(sc, np.random.default_rng(k), RELATIONS, ext)[0][::2] for k in range(8)}
    assert got == {("red circle above blue square", "red circle over blue square"),
                   ("blue square below red circle", "blue square under red circle")}
    sc = _scene(_obj(0, "circle", "red", 8, 24), _obj(1, "square", "blue", 40, 24))  # left / right: no synonym
    (item,) = relation_items(sc, np.random.default_rng(0), RELATIONS, ext)
    assert item[2] in ("blue square to the right of red circle", "red circle to the left of blue square")
    arrow, star = _obj(0, "arrow", "purple", 10, 24, heading=0.0), _obj(1, "star", "yellow", 24, 24)
    items = relation_items(_scene(arrow, star), np.random.default_rng(0), RELATIONS, ext)
    (near,) = [it for it in items if " next to " in it[0]]
    assert near[2] == near[0].replace(" next to ", " beside ")


def test_caption_holds_reads_the_synonyms():
    sc = _scene(_obj(0, "circle", "purple", 24, 8, 10, size="large"), _obj(1, "square", "blue", 24, 40))
    assert caption_holds(sc, "big violet circle") and caption_holds(sc, "violet circle over blue square")
    assert caption_holds(sc, "blue square under violet circle") and caption_holds(sc, "blue square beneath purple circle")
    assert not caption_holds(sc, "violet circle under blue square") and not caption_holds(sc, "small violet circle")


def test_first_world_cases_do_not_depend_on_the_new_arguments(tiny_world):
    """The base map with or without the explicit arguments: the same cases and the same random stream (the first
    world's twin was also checked byte-identical against the previous code on a 600-scene first world)."""
    scenes = Split(tiny_world, "vg_test").scenes()[:60]
    for part in ("replace_att", "replace_rel"):
        r1, r2 = np.random.default_rng(3), np.random.default_rng(3)
        a = replace_cases(scenes, 10_000, part, r1)
        b = replace_cases(scenes, 10_000, part, r2, RELATIONS, hard_positive_map("base"))
        assert a == b and r1.random() == r2.random()


def test_swap_positive_by_hand():
    assert swap_positive("the crouched cat and the open door") == "the open door and the crouched cat"
    assert swap_positive("the red circle and the blue square") == "the blue square and the red circle"
    with pytest.raises(ValueError, match="not 'the <attr> <object> and the <attr> <object>'"):
        swap_positive("the red circle is above the blue square")


# ------------------------------------------------------------------------------ the twin on the tiny world


@pytest.fixture(scope="module")
def built(tiny_world, tmp_path_factory):
    """The twin with default options, built once (module scope: the tests below only read it)."""
    wcfg, ccfg, _ = world_configs(load_params(REPO / "params.yaml"))
    out = tmp_path_factory.mktemp("hardpos") / "benchmarks"
    result = build_twin("hardpos", TwinContext(tiny_world, out, wcfg, 0, {}, captions=ccfg))
    return out, result, wcfg, ccfg


def _cases(out: Path, result) -> dict[str, list[hp_format.HardPositiveCase]]:
    root = out / result.inputs["hard_positives_dir"]
    return {part: hp_format.load_benchmark(root, part) for part in PARTS}


def test_counts_and_inputs(built):
    out, result, *_ = built
    assert result.inputs == {"hard_positives_dir": "hardpos"}
    cases = _cases(out, result)
    for part in PARTS:
        assert result.counts[f"{part}/n_cases"] == len(cases[part]) > 0
    assert result.counts["replace/n_images"] == len(list((out / "hardpos" / IMAGE_DIR).glob("*.png"))) > 0


def test_every_item_is_checked_on_the_scene_graph(built, tiny_world):
    out, result, *_ = built
    scenes = {sc.image_id: sc for sc in Split(tiny_world, "vg_test").scenes()}
    by_file = {image_file_name(i): sc for i, sc in scenes.items()}
    for part, cases in _cases(out, result).items():
        for case in cases:
            sc = scenes[case.image_id] if part != "swap" else by_file[case.image_path]
            assert caption_holds(sc, case.caption), (part, case)
            assert caption_holds(sc, case.positive), (part, case)
            assert not caption_holds(sc, case.negative), (part, case)
            assert case.positive != case.caption


def test_replace_parts_follow_the_rules(built):
    out, result, *_ = built
    cases = _cases(out, result)
    hp_map = hard_positive_map(built[3].synonyms)
    syn = hp_map["attributes"]
    for case in cases["replace_att"]:
        w, p, n = case.caption.split(), case.positive.split(), case.negative.split()
        changed = [k for k in range(3) if w[k] != p[k]]
        assert len(changed) == 1 and p[changed[0]] == syn[w[changed[0]]]  # one word, its fixed synonym
        assert n[2] == w[2] and [n[k] for k in range(2) if k not in changed] == [w[k] for k in range(2) if k not in changed]
        assert n[changed[0]] != w[changed[0]] and case.negative != case.caption
        assert case.image_path == f"{IMAGE_DIR}/{image_file_name(case.image_id)}"
    conv, rel_syn = hp_map["relations"], hp_map.get("relation_synonyms", {})
    for case in cases["replace_rel"]:
        w = case.caption.split()
        rel = " ".join(w[2:-2])
        if rel in rel_syn:
            assert case.positive == " ".join([*w[:2], rel_syn[rel], *w[-2:]])  # synonym, same order
        else:
            assert case.positive == " ".join([*w[-2:], conv[rel], *w[:2]])  # converse, arguments swapped
        assert case.negative.split()[:2] == w[:2] and case.negative.split()[-2:] == w[-2:]


def test_swap_data_file_is_the_vg_attribution_twin(built, tiny_world):
    out, result, wcfg, _ = built
    split = Split(tiny_world, "vg_test")
    expected = build_vg_attribution(split.scenes(), wcfg.image_size, np_rng(0, "benchmarks", "vg_attribution"))
    for rec in expected:
        rec["image_path"] = image_file_name(rec["image_path"])
    root = out / "hardpos"
    assert json.loads((root / "data" / "visual_genome_attribution.json").read_text()) == expected
    swapped = json.loads((root / "swapped_data" / "visual_genome_attribution.json").read_text())
    assert [s["true_caption"] for s in swapped] == [swap_positive(r["true_caption"]) for r in expected]
    assert not (out / "aro").exists()  # the ARO twin owns aro/images


def test_swap_data_file_equals_the_aro_twins_bytes(built, twin_context, tmp_path):
    from vlcomp.twins import TWINS, _load_all

    _load_all()
    if "aro" not in TWINS:
        pytest.skip("the ARO twin is not registered")
    out, *_ = built
    aro = tmp_path / "aro_only"
    result = build_twin("aro", twin_context(out=aro))
    assert ((aro / result.inputs["aro_vg_attribution"]).read_bytes()
            == (out / "hardpos" / "data" / "visual_genome_attribution.json").read_bytes())
    assert result.inputs["aro_images"] == "aro/images"


def test_replace_images_are_the_scene_renders(built, tiny_world):
    from PIL import Image

    out, result, *_ = built
    split = Split(tiny_world, "vg_test")
    index = {sc.image_id: i for i, sc in enumerate(split.scenes())}
    case = _cases(out, result)["replace_rel"][0]
    np.testing.assert_array_equal(np.asarray(Image.open(out / "hardpos" / case.image_path)),
                                  split.images[index[case.image_id]])


def test_every_caption_is_in_the_vocabulary(built):
    out, result, *_ = built
    tok = params_tokenizer()
    for part, cases in _cases(out, result).items():
        for case in cases:
            for text in (case.caption, case.positive, case.negative):
                assert tok.UNK not in tok.encode(text), (part, text)


def test_build_is_deterministic(twin_context, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    opts = {"hardpos": {"replace_att_items": 40, "replace_rel_items": 60}}
    ra, rb = build_twin("hardpos", twin_context(opts, out=a)), build_twin("hardpos", twin_context(opts, out=b))
    assert ra == rb
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files_a == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file()) and files_a
    for rel in files_a:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel
    assert ra.counts["replace_att/n_cases"] == 40 and ra.counts["replace_rel/n_cases"] == 60


def test_seed_changes_the_replace_sample(twin_context, tmp_path):
    opts = {"hardpos": {"replace_att_items": 20, "replace_rel_items": 20}}
    build_twin("hardpos", twin_context(opts, seed=0, out=tmp_path / "s0"))
    build_twin("hardpos", twin_context(opts, seed=1, out=tmp_path / "s1"))
    f = Path("hardpos/data/vl_checklist_relations.json")
    assert (tmp_path / "s0" / f).read_bytes() != (tmp_path / "s1" / f).read_bytes()


@pytest.mark.parametrize(("opts", "message"), [
    ({"replace_att_items": 0}, r"benchmarks\.twins\.hardpos\.replace_att_items=0: must be an int >= 1"),
    ({"replace_rel_items": "5"}, r"benchmarks\.twins\.hardpos\.replace_rel_items='5'"),
    ({"swap_items": 5}, r"unknown option\(s\) \['swap_items'\]"),
])
def test_bad_options(twin_context, opts, message):
    with pytest.raises(ValueError, match=message):
        build_twin("hardpos", twin_context({"hardpos": opts}))


# ----------------------------------------------------------------------------------------- end to end


def _write_aro_images(out: Path, tiny_world: Path) -> str:
    """What the ARO twin writes: every vg_test render as ``aro/images/<image_file_name>``."""
    split = Split(tiny_world, "vg_test")
    for sc, image in zip(split.scenes(), split.images, strict=True):
        write_png(out / "aro" / "images" / image_file_name(sc.image_id), image)
    return "aro/images"


def test_end_to_end_scoring(twin_context, tiny_world, tmp_path):
    out = tmp_path / "bench"
    result = build_twin("hardpos", twin_context({"hardpos": {"replace_att_items": 30, "replace_rel_items": 48}},
                                                out=out))
    inputs = {**result.inputs, "aro_images": _write_aro_images(out, tiny_world)}
    inputs = {k: str(out / v) for k, v in inputs.items()}
    model = create_model(ModelSpec("toy-vit-p8"), init_seed=0)
    scorer = toy_scorer("toy", model, params_tokenizer())
    for name, parts in (("replace", ("replace_att", "replace_rel", "replace")), ("swap", ("swap",))):
        bench = BENCHMARKS.get(name)
        tables = score_task(scorer, bench.prepare(inputs))
        metrics = bench.aggregate(tables)
        for part in parts:
            for k in ("orig", "aug", "brittleness"):
                assert 0.0 <= metrics[f"hardpos/{part}/{k}"] <= 1.0
            assert -1.0 <= metrics[f"hardpos/{part}/delta"] <= 0.0
        n = {p: result.counts[f"{p}/n_cases"] for p in PARTS}
        if name == "replace":
            assert metrics["hardpos/replace_att/n"] == n["replace_att"] == 30
            assert metrics["hardpos/replace/n"] == n["replace_att"] + n["replace_rel"]
        else:
            assert metrics["hardpos/swap/n"] == n["swap"]


def test_bad_input_names_file_and_record(twin_context, tiny_world, tmp_path):
    out = tmp_path / "bench"
    result = build_twin("hardpos", twin_context({"hardpos": {"replace_att_items": 5, "replace_rel_items": 5}},
                                                out=out))
    root = out / result.inputs["hard_positives_dir"]
    inputs = {"hard_positives_dir": str(root)}
    first = json.loads((root / "data" / "vl_checklist_attributes.json").read_text())[0]
    (root / first["image_path"]).unlink()
    with pytest.raises(FileNotFoundError, match=r"vl_checklist_attributes\.json: record 0: image .*not found"):
        score_task(None, BENCHMARKS.get("replace").prepare(inputs))
    path = root / "swapped_data" / "vl_checklist_relations.json"
    rows = json.loads(path.read_text())
    del rows[2]["false_caption"]
    path.write_text(json.dumps(rows))
    with pytest.raises(RecordError, match=r"swapped_data/vl_checklist_relations\.json: record 2: missing field "
                                          r"'false_caption'"):
        BENCHMARKS.get("replace").prepare(inputs)
