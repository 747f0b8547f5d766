"""Words the models met in training (vlcomp.reporting.exposure): the word split against the tokenizer's, the
distinguishing words and the per-part shares by hand, the params' training splits, every choice benchmark covered,
and the whole table on a tiny generated world with a tiny VALSE twin against a naive count written here."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import replace
from functools import partial
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from vlcomp.benchmarks import BENCHMARKS
from vlcomp.config import load_params
from vlcomp.formats import valse as valse_fmt
from vlcomp.reporting.exposure import (
    CHOICE_PARTS,
    UNTRAINED,
    Item,
    caption_words,
    distinguishing_words,
    exposure_html,
    part_exposure,
    task_items,
    training_splits,
    word_exposure,
    write_exposure,
)
from vlcomp.text.tokenizer import WorldTokenizer
from vlcomp.twins import TwinContext, build_twin
from vlcomp.world import world_configs
from vlcomp.world.generate import generate_world

REPO = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------- by hand


@pytest.mark.parametrize("text", ["A big, RED circle -- not a star!", "two shapes: star, cross; brown",
                                  "there are  three\tarrows.", "an unknownword beside 4 hearts"])
def test_caption_words_are_the_world_tokenizers_words(text):
    tok = WorldTokenizer(version=2)
    assert [tok.ids.get(w, tok.UNK) for w in caption_words(text)] == tok.encode(text)


def test_distinguishing_words_by_hand():
    assert distinguishing_words(["a red circle", "a blue circle"], [0]) == {"red", "blue"}
    assert distinguishing_words(["there is a star", "there is no star"], [0]) == {"a", "no"}
    # word order only: nothing distinguishes (VG-Relation, the Order shuffles)
    assert distinguishing_words(["the star is above the circle", "the circle is above the star"], [0]) == set()
    # several foils (CREPE): every (true, foil) pair
    assert distinguishing_words(["a star", "not a star", "a star, no circle"], [0]) == {"not", "no", "circle"}
    # several true options (hard positives [c_n, c, c_n, c_p]): each against every foil, never against each other
    assert distinguishing_words(["big star", "large circle", "big star", "circle that is large"], [1, 3]) == {
        "big", "star", "large", "circle", "that", "is"}
    assert distinguishing_words(["A Star.", "a star"], [1]) == set()
    with pytest.raises(ValueError, match="indices of the 2 options"):
        distinguishing_words(["a", "b"], [2])
    with pytest.raises(ValueError, match="must be indices"):
        distinguishing_words(["a", "b"], [])


def test_part_exposure_by_hand():
    items = [Item("b", "p", frozenset({"no"})),  # met in fine-tuning only
             Item("b", "p", frozenset({"two", "circles"})),  # "circles" met nowhere
             Item("b", "p", frozenset()),  # word order only
             Item("b", "p", frozenset({"red"})),
             Item("c", "all", frozenset({"red"}))]
    counts = {"web": Counter({"two": 5, "red": 3}), "coco_train": Counter({"no": 2, "red": 1})}
    parts, words = part_exposure(items, counts, "web", n_rarest=3)
    assert parts.to_dict("records") == [
        {"benchmark": "b", "part": "p", "n_items": 4, "n_words": 4, "no_word_differs": 0.25,
         # items 3 (vacuously) and 4; item 1's "no" and item 2's "circles" are not in web
         "all_in_pretraining": 0.5, "unseen_in_training": 0.25,
         "rarest": "circles 0/0; no 0/2; red 3/4", "untrained": True},
        {"benchmark": "c", "part": "all", "n_items": 1, "n_words": 1, "no_word_differs": 0.0,
         "all_in_pretraining": 1.0, "unseen_in_training": 0.0, "rarest": "red 3/4", "untrained": False}]
    assert list(words.columns) == ["benchmark", "part", "word", "n_items", "web", "coco_train", "training"]
    assert words[words["part"] == "p"][["word", "n_items", "web", "coco_train", "training"]].values.tolist() == [
        ["circles", 1, 0, 0, 0], ["no", 1, 0, 2, 2], ["red", 1, 3, 1, 4], ["two", 1, 5, 0, 5]]
    with pytest.raises(ValueError, match="no pretraining split 'laion'"):
        part_exposure(items, counts, "laion")


def test_training_splits_come_from_pretrain_and_mine():
    params = {"pretrain": {"split": "web"}, "mine": {"negclip": {"split": "coco_train"}, "rb": {"split": "cc3m"},
                                                     "mix": {"split": "cc3m"}}}
    assert training_splits(params) == ("web", ("coco_train", "cc3m"))
    assert training_splits(load_params(REPO / "params.yaml"))[0] == "web"
    with pytest.raises(ValueError, match="pretrain.split"):
        training_splits({"mine": {}})
    with pytest.raises(ValueError, match="mine.rb.split"):
        training_splits({"pretrain": {"split": "web"}, "mine": {"rb": {}}})


def _prepared_by(module: str, name: str) -> bool:
    prepare = BENCHMARKS.get(name).prepare
    return (prepare.func if isinstance(prepare, partial) else prepare).__module__ == module


def test_every_choice_benchmark_has_its_true_options_and_parts():
    """The benchmarks without a rule are the retrieval and zero-shot ones (no choice between captions)."""
    assert set(CHOICE_PARTS) <= set(BENCHMARKS)
    others = [n for n in BENCHMARKS if n not in CHOICE_PARTS]
    assert others and all(_prepared_by("vlcomp.benchmarks.retrieval", n) or _prepared_by("vlcomp.benchmarks.zeroshot", n)
                          for n in others), others


def test_task_items_label_parts_by_the_benchmarks_own_columns():
    """VL-CheckList items by category as the metric keys name it (a file no corpus lists: by its file); hard
    positives with both true options ([c_n, c, c_n, c_p])."""
    meta = pd.DataFrame({"file": ["Attribute_color_vg", "Attribute_color_vg", "Extra_vg"],
                         "category": ["color", "color", ""]})
    task = SimpleNamespace(meta=meta, captions=[("a red star", "a blue star"), ("a star", "a star"), ("x y", "x")])
    items = task_items("vlchecklist", [task, task], CHOICE_PARTS["vlchecklist"])
    assert [(i.part, sorted(i.words)) for i in items[:3]] == [
        ("attribute/color", ["blue", "red"]), ("attribute/color", []), ("Extra_vg", ["y"])]
    assert len(items) == 6
    hp = SimpleNamespace(meta=pd.DataFrame({"part": ["replace_att"]}),
                         captions=[("a small star", "a big star", "a small star", "a large star")])
    (item,) = task_items("replace", [hp], CHOICE_PARTS["replace"])
    assert (item.part, item.words) == ("replace_att", {"small", "big", "large"})


def test_exposure_html_marks_untrained_rows():
    from vlcomp.reporting.exposure import WordExposure

    parts, words = part_exposure([Item("valse", "plurals", frozenset({"are"})), Item("ccneg", "all", frozenset())],
                                 {"web": Counter({"a": 1})}, "web")
    page = exposure_html(WordExposure(parts, words, "web", ("coco_train",)))
    assert "<h2 id='words'>Words the models met in training</h2>" in page
    assert "measures untrained embeddings" in page and "<code>coco_train</code>" in page
    rows = page.split("<tr>")[2:]
    assert UNTRAINED in rows[0] and "are 0/0" in rows[0] and UNTRAINED not in rows[1]


# --------------------------------------------------------------------------- a tiny generated world

TINY = {"web": 40, "coco_train": 30, "vg_test": 150, "coco_test": 40}
N_PER_INSTRUMENT = 12


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(world dir, benchmarks dir, params): a tiny world with a pretraining and a fine-tuning split, and a VALSE
    twin built on it with its manifest (as the benchmarks stage writes it)."""
    params = load_params(REPO / "params.yaml")
    params = {**params, "pretrain": {**params["pretrain"], "split": "web"},
              "mine": {"negclip": {"split": "coco_train"}}, "evaluate": {**params["evaluate"], "benchmarks": ["valse"]}}
    wcfg, ccfg, specs = world_configs(params)
    root = tmp_path_factory.mktemp("exposure")
    generate_world([replace(s, n_images=TINY[s.name]) for s in specs if s.name in TINY], wcfg, ccfg, seed=0,
                   out_dir=root / "world")
    out = root / "benchmarks"
    result = build_twin("valse", TwinContext(root / "world", out, wcfg, 0,
                                             {"valse": {"n_per_instrument": N_PER_INSTRUMENT}}))
    (out / "manifest.json").write_text(json.dumps({"inputs": result.inputs}))
    return root / "world", out, params


def _naive_words(text: str) -> set[str]:
    return set(re.sub(r"[^a-z0-9 ]", " ", text.lower()).split())


def test_word_exposure_on_a_tiny_valse_twin(tiny):
    world, benchmarks, params = tiny
    got = word_exposure(world, benchmarks, params)
    assert (got.pretrain, got.finetune) == ("web", ("coco_train",))

    # a naive count: the split files and the instrument files read here, one case at a time
    counts = {}
    for split in ("web", "coco_train"):
        records = json.loads((world / split / "captions.json").read_text())
        counts[split] = Counter(w for r in records for c in r["caption"] for w in re.sub(r"[^a-z0-9 ]", " ", c.lower()).split())
    manifest = json.loads((benchmarks / "manifest.json").read_text())["inputs"]
    cases = valse_fmt.load_all(benchmarks / manifest["valse_dir"], tuple(manifest["valse_instruments"]))
    rows = []
    for instrument, cs in cases.items():
        diff = [_naive_words(c.caption) ^ _naive_words(c.foil) for c in cs]
        rows.append({"benchmark": "valse", "part": instrument, "n_items": len(cs),
                     "no_word_differs": sum(not d for d in diff) / len(cs),
                     "all_in_pretraining": sum(all(counts["web"][w] > 0 for w in d) for d in diff) / len(cs),
                     "unseen_in_training": sum(any(counts["web"][w] + counts["coco_train"][w] == 0 for w in d)
                                               for d in diff) / len(cs)})
    expected = pd.DataFrame(rows)
    pd.testing.assert_frame_equal(got.parts[expected.columns], expected)
    assert got.parts["n_items"].gt(0).all() and (got.parts["untrained"] == got.parts["unseen_in_training"].gt(0)).all()
    # the first world's gap, still open in a world this small: plural nouns are in no training caption
    assert got.parts.set_index("part").loc["plurals", "untrained"]

    again = word_exposure(world, benchmarks, params)
    pd.testing.assert_frame_equal(again.parts, got.parts)
    pd.testing.assert_frame_equal(again.words, got.words)


def test_write_exposure_writes_both_csvs(tiny, tmp_path):
    world, benchmarks, params = tiny
    result = word_exposure(world, benchmarks, params)
    page = write_exposure(result, tmp_path)
    parts = pd.read_csv(tmp_path / "word_exposure.csv")
    words = pd.read_csv(tmp_path / "word_exposure_words.csv", keep_default_na=False)
    assert parts["part"].tolist() == result.parts["part"].tolist()
    assert list(words.columns) == ["benchmark", "part", "word", "n_items", "web", "coco_train", "training"]
    assert page.count("<tr>") == 1 + len(parts) and (UNTRAINED in page) == bool(parts["untrained"].any())
