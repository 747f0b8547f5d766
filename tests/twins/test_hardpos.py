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
    relation_items,
    swap_positive,
)
from vlcomp.twins.images import image_file_name, write_png
from vlcomp.world import Split, world_configs
from vlcomp.world.concepts import RELATIONS, SYNONYMS, world_words
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


def test_swap_positive_by_hand():
    assert swap_positive("the crouched cat and the open door") == "the open door and the crouched cat"
    assert swap_positive("the red circle and the blue square") == "the blue square and the red circle"
    with pytest.raises(ValueError, match="not 'the <attr> <object> and the <attr> <object>'"):
        swap_positive("the red circle is above the blue square")


# ------------------------------------------------------------------------------ the twin on the tiny world


@pytest.fixture(scope="module")
def built(tiny_world, tmp_path_factory):
    """The twin with default options, built once (module scope: the tests below only read it)."""
    wcfg, _, _ = world_configs(load_params(REPO / "params.yaml"))
    out = tmp_path_factory.mktemp("hardpos") / "benchmarks"
    result = build_twin("hardpos", TwinContext(tiny_world, out, wcfg, 0, {}))
    return out, result, wcfg


def _cases(out: Path, result) -> dict[str, list[hp_format.HardPositiveCase]]:
    root = out / result.inputs["hard_positives_dir"]
    return {part: hp_format.load_benchmark(root, part) for part in PARTS}


def test_counts_and_inputs(built):
    out, result, _ = built
    assert result.inputs == {"hard_positives_dir": "hardpos"}
    cases = _cases(out, result)
    for part in PARTS:
        assert result.counts[f"{part}/n_cases"] == len(cases[part]) > 0
    assert result.counts["replace/n_images"] == len(list((out / "hardpos" / IMAGE_DIR).glob("*.png"))) > 0


def test_every_item_is_checked_on_the_scene_graph(built, tiny_world):
    out, result, _ = built
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
    out, result, _ = built
    cases = _cases(out, result)
    syn = HARD_POSITIVE_MAP["attributes"]
    for case in cases["replace_att"]:
        size, *rest = case.caption.split()
        assert case.positive.split() == [syn[size], *rest]
        assert case.negative.split()[1:] == rest and case.negative.split()[0] in syn and case.negative != case.caption
        assert case.image_path == f"{IMAGE_DIR}/{image_file_name(case.image_id)}"
    conv = HARD_POSITIVE_MAP["relations"]
    for case in cases["replace_rel"]:
        w = case.caption.split()
        rel = " ".join(w[2:-2])
        assert case.positive == " ".join([*w[-2:], conv[rel], *w[:2]])  # converse, arguments swapped
        assert case.negative.split()[:2] == w[:2] and case.negative.split()[-2:] == w[-2:]


def test_swap_data_file_is_the_vg_attribution_twin(built, tiny_world):
    out, result, wcfg = built
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
    out, _, _ = built
    aro = tmp_path / "aro_only"
    result = build_twin("aro", twin_context(out=aro))
    assert ((aro / result.inputs["aro_vg_attribution"]).read_bytes()
            == (out / "hardpos" / "data" / "visual_genome_attribution.json").read_bytes())
    assert result.inputs["aro_images"] == "aro/images"


def test_replace_images_are_the_scene_renders(built, tiny_world):
    from PIL import Image

    out, result, _ = built
    split = Split(tiny_world, "vg_test")
    index = {sc.image_id: i for i, sc in enumerate(split.scenes())}
    case = _cases(out, result)["replace_rel"][0]
    np.testing.assert_array_equal(np.asarray(Image.open(out / "hardpos" / case.image_path)),
                                  split.images[index[case.image_id]])


def test_every_caption_is_in_the_vocabulary(built):
    out, result, _ = built
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
