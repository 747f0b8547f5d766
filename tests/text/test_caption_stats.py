"""Caption statistics (vlcomp.text.caption_stats): each statistic against hand-computed values, parity with the
NegCLIP miner, the real Karpathy captions (skipped when ../shared/real_samples is absent) and the script."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vlcomp.text.caption_stats import (
    NEGATIVE_TYPES,
    calibration_distance,
    caption_items,
    caption_statistics,
    caption_words,
    has_phrase,
    relation_flags,
    swap_around_relation,
)
from vlcomp.text.negclip_swaps import DEFAULT_SWAPS, mine_negatives
from vlcomp.text.nlp import load_spacy

REPO = Path(__file__).resolve().parents[2]
REAL_CAPTIONS = REPO.parent / "shared" / "real_samples" / "coco_karpathy_test.json"

ABOVE = "a red circle above a blue square"
AND = "the red circle and the blue square"
CAT = "a cat"


@pytest.fixture(scope="module")
def nlp():
    return load_spacy()


# ------------------------------------------------------------------------------------------- words, relations


def test_caption_words_drop_punctuation_and_keep_apostrophes() -> None:
    assert caption_words("A man's hat, on a  table. ") == ["a", "man's", "hat", "on", "a", "table"]


def test_has_phrase_matches_whole_word_runs() -> None:
    words = caption_words("A cat in front of a dog onto a mat")
    assert has_phrase(words, ["in front of"])
    assert not has_phrase(words, ["on"])  # "onto" is not "on"
    assert not has_phrase(words, ["front of a cat"])


@pytest.mark.parametrize(
    ("caption", "flags"),
    [
        (ABOVE, (True, True, True, True)),  # world and ARO relation "above", between two nouns
        (AND, (False, False, False, False)),
        ("A man riding a horse", (False, True, True, True)),  # ARO verb relation "riding"
        ("A man smiling", (False, False, True, False)),  # a verb, but no second thing
        ("a striped square", (False, False, False, False)),  # an attribute, not a verb
        ("a plate of food", (False, False, False, False)),  # "of" is not a relation preposition
    ],
)
def test_relation_flags(nlp, caption: str, flags: tuple[bool, ...]) -> None:
    got = relation_flags(nlp(caption))
    assert (got["rel_world"], got["rel_vgr"], got["rel_word"], got["rel_objects"]) == flags


def _chunks(doc):
    return {c.root.text: c for c in doc.noun_chunks}


@pytest.mark.parametrize(
    ("caption", "a", "b", "around"),
    [
        (ABOVE, "circle", "square", True),
        (AND, "circle", "square", False),  # a conjunction is no relation
        ("the red circle is to the left of the blue square", "circle", "square", True),  # phrase after "is"
        ("a red circle above a blue square and a green star", "circle", "star", False),  # a noun in between
        ("a red circle above a blue square and a green star", "square", "star", False),
        ("A blue delivery truck driving down a street", "truck", "street", True),  # verb + preposition
    ],
)
def test_swap_around_relation_of_noun_phrases(nlp, caption: str, a: str, b: str, around: bool) -> None:
    doc = nlp(caption)
    chunks = _chunks(doc)
    assert swap_around_relation(doc, chunks[a], chunks[b]) is around


def test_a_noun_that_modifies_another_is_no_argument(nlp) -> None:
    doc = nlp("A blue delivery truck driving down a street")
    tok = {t.text: doc[t.i:t.i + 1] for t in doc}
    assert swap_around_relation(doc, tok["truck"], tok["street"])  # the head stands for its noun phrase
    assert not swap_around_relation(doc, tok["delivery"], tok["street"])


# ------------------------------------------------------------------------------------------------ items


def test_caption_items_by_hand(nlp) -> None:
    items = caption_items([ABOVE, AND, CAT], nlp, np.random.default_rng(0))
    assert items["n_words"].tolist() == [7, 7, 2]
    assert items["has_and"].tolist() == [False, True, False]
    # each caption has exactly 2 noun phrases, 2 NN nouns and 2 adjectives, so every swap is determined
    assert items["negatives"].tolist() == [
        ["a blue square above a red circle", "a red square above a blue circle", "a blue circle above a red square"],
        ["the blue square and the red circle", "the red square and the blue circle", "the blue circle and the red square"],
        [],
    ]
    for g in DEFAULT_SWAPS:
        made = g in ("np_swap", "nn_swap", "adj_swap")
        assert items[f"cand_{g}"].tolist() == [made, made, False], g
        assert items[f"mined_{g}"].tolist() == [made, made, False], g
    assert items["relswap_np_swap"].tolist() == [True, False, False]
    assert items["relswap_nn_swap"].tolist() == [True, False, False]
    assert items["relswap_nns_swap"].tolist() == [False, False, False]
    assert items["n_candidates"].tolist() == [3, 3, 0]


def test_max_negatives_keeps_the_first_in_swap_order(nlp) -> None:
    items = caption_items([ABOVE], nlp, np.random.default_rng(0), max_negatives=2)
    row = items.iloc[0]
    assert (row["cand_adj_swap"], row["mined_adj_swap"]) == (True, False)
    assert (row["mined_np_swap"], row["mined_nn_swap"]) == (True, True)
    assert (row["n_candidates"], row["n_mined"]) == (3, 2)


PARITY_CAPTIONS = [
    ABOVE, AND, CAT,
    "A man with a red helmet on a small moped on a dirt road.",
    "Two dogs quickly run and happily jump over the old wooden fence near the big red barn.",
    "there is a large red striped circle to the left of a small blue square with a green star",
    "A black cat sitting on a desk next to a small brown dog sleeping on a chair.",
    "The horse is eating the grass and the zebra is drinking the water",
]  # fmt: skip


@pytest.mark.parametrize("max_negatives", [1, 2, 5])
def test_negatives_equal_the_miners(nlp, max_negatives: int) -> None:
    """Same random stream, same negatives as :func:`mine_negatives` (and the stream left in the same state)."""
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
    items = caption_items(PARITY_CAPTIONS, nlp, rng_a, max_negatives=max_negatives)
    assert items["negatives"].tolist() == mine_negatives(PARITY_CAPTIONS, rng_b, nlp, max_negatives=max_negatives)
    assert rng_a.random() == rng_b.random()


def test_bad_arguments(nlp) -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="max_negatives"):
        caption_items([CAT], nlp, rng, max_negatives=0)
    with pytest.raises(ValueError, match="swap_nonsense"):
        caption_items([CAT], nlp, rng, swaps=["np_swap", "swap_nonsense"])
    with pytest.raises(ValueError, match=r"captions\[0\]"):
        caption_items([3], nlp, rng)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="no captions"):
        caption_statistics(caption_items([], nlp, rng))


# ------------------------------------------------------------------------------------------- aggregates


def _item(n_words, has_and, flags, cand, mined, relswap) -> dict:
    row = {"caption": "", "n_words": n_words, "has_and": has_and,
           **dict(zip(("rel_world", "rel_vgr", "rel_word", "rel_objects"), flags, strict=True))}
    for g in DEFAULT_SWAPS:
        row[f"cand_{g}"], row[f"mined_{g}"] = g in cand, g in mined
        if g in ("np_swap", "nn_swap", "nns_swap"):
            row[f"relswap_{g}"] = g in relswap
    return row | {"n_candidates": len(cand), "n_mined": len(mined), "negatives": []}


ITEMS = pd.DataFrame([
    _item(5, False, (1, 1, 1, 1), ["np_swap", "nn_swap", "adj_swap"], ["np_swap", "nn_swap"], ["np_swap", "nn_swap"]),
    _item(7, True, (0, 0, 1, 0), ["nn_swap"], ["nn_swap"], []),
    _item(3, False, (0, 0, 0, 0), [], [], []),
    _item(9, True, (0, 1, 1, 1), ["vp_swap", "nns_swap", "adv_swap"], ["vp_swap", "nns_swap"], ["nns_swap"]),
])  # fmt: skip


def test_caption_statistics_by_hand() -> None:
    s = caption_statistics(ITEMS)
    expected = {
        "n_captions": 4, "share_and": 0.5, "share_rel_world": 0.25, "share_rel_vgr": 0.5, "share_rel_word": 0.75,
        "share_rel_objects": 0.5, "words_mean": 6, "words_q25": 4.5, "words_median": 6, "words_q75": 7.5,
        "share_no_negative": 0.25,
        # candidates: np, nn, adj | nn | - | vp, nns, adv  (7)
        "negatives_per_caption/candidate": 7 / 4,
        "neg_share/candidate/noun_phrase": 1 / 7, "neg_share/candidate/noun": 3 / 7,
        "neg_share/candidate/adjective": 1 / 7, "neg_share/candidate/verb_phrase": 1 / 7,
        "neg_share/candidate/adverb": 1 / 7, "neg_share/candidate/subject_object_np": 1 / 7,
        "neg_share/candidate/subject_object_noun": 2 / 7, "neg_share/candidate/subject_object": 3 / 7,
        # mined: np, nn | nn | - | vp, nns  (5; the adjective and adverb swaps were cut)
        "negatives_per_caption/mined": 5 / 4,
        "neg_share/mined/noun_phrase": 1 / 5, "neg_share/mined/noun": 3 / 5, "neg_share/mined/adjective": 0,
        "neg_share/mined/verb_phrase": 1 / 5, "neg_share/mined/adverb": 0,
        "neg_share/mined/subject_object_np": 1 / 5, "neg_share/mined/subject_object_noun": 2 / 5,
        "neg_share/mined/subject_object": 3 / 5,
        # drawn (1 per row, 3 rows): np 1/2, nn 1/2 | nn 1 | vp 1/2, nns 1/2
        "negatives_per_caption/drawn": 1,
        "neg_share/drawn/noun_phrase": 1 / 6, "neg_share/drawn/noun": 2 / 3, "neg_share/drawn/adjective": 0,
        "neg_share/drawn/verb_phrase": 1 / 6, "neg_share/drawn/adverb": 0,
        "neg_share/drawn/subject_object_np": 1 / 6, "neg_share/drawn/subject_object_noun": 1 / 3,
        "neg_share/drawn/subject_object": 1 / 2,
    }  # fmt: skip
    assert list(s) == list(expected)
    assert s == pytest.approx(expected)


def test_drawn_with_enough_draws_is_mined() -> None:
    s = caption_statistics(ITEMS, draws=2)
    assert s["negatives_per_caption/drawn"] == pytest.approx(5 / 3)
    for t in (*NEGATIVE_TYPES, "subject_object"):
        assert s[f"neg_share/drawn/{t}"] == pytest.approx(s[f"neg_share/mined/{t}"])
    with pytest.raises(ValueError, match="draws"):
        caption_statistics(ITEMS, draws=0)


def test_calibration_distance_by_hand() -> None:
    real = caption_statistics(ITEMS)
    assert calibration_distance(real, real) == 0
    twin = dict(real, share_and=0.7, words_mean=9.0)
    twin["neg_share/mined/noun"] -= 0.1
    twin["neg_share/mined/adjective"] += 0.1
    # |0.7 - 0.5| + |9 - 6| / 6 + (0.1 + 0.1) / 2
    assert calibration_distance(real, twin) == pytest.approx(0.2 + 0.5 + 0.1)
    with pytest.raises(ValueError, match="missing"):
        calibration_distance(real, {"share_and": 0.1})


# --------------------------------------------------------------------------------------- real captions


@pytest.mark.skipif(not REAL_CAPTIONS.exists(), reason=f"real samples absent: {REAL_CAPTIONS}")
def test_real_captions_parity_and_shares(nlp) -> None:
    """On 1,000 real COCO Karpathy test captions: the miner's negatives exactly (every swapped element found
    again, or caption_items raises), and shares in the ranges the full file gives."""
    from vlcomp.formats.karpathy import read_caption_file

    captions = [c for r in read_caption_file(REAL_CAPTIONS)[:200] for c in r["caption"]]
    items = caption_items(captions, nlp, np.random.default_rng(0))
    assert items["negatives"].tolist() == mine_negatives(captions, np.random.default_rng(0), nlp)
    s = caption_statistics(items)
    assert 0.15 < s["share_and"] < 0.3
    assert s["share_rel_objects"] > 0.8
    assert 9 < s["words_mean"] < 12
    assert s["neg_share/mined/noun"] > 0.5


# ---------------------------------------------------------------------------------------------- script


def _script():
    spec = importlib.util.spec_from_file_location("caption_statistics", REPO / "scripts" / "caption_statistics.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_parse_sets_and_grid() -> None:
    mod = _script()
    assert mod.parse_sets(["world.captions.and_prob=0.2", "world.captions.extra_prob=1"]) == {
        "world": {"captions": {"and_prob": 0.2, "extra_prob": 1}}}
    with pytest.raises(ValueError, match="KEY=VALUE"):
        mod.parse_sets(["world.captions.and_prob"])
    grid = mod.grid_overlays({"a": [1, 2], "b,c": [(3, 4)]})
    assert grid == [{"world": {"captions": {"a": 1, "b": 3, "c": 4}}}, {"world": {"captions": {"a": 2, "b": 3, "c": 4}}}]


def test_script_writes_stats_and_items(tmp_path, monkeypatch) -> None:
    real = tmp_path / "real.json"
    real.write_text(json.dumps([{"image": "x.jpg", "caption": [ABOVE, "A man riding a horse. "]},
                                {"image": "y.jpg", "caption": [AND]}]))
    out, items = tmp_path / "stats.csv", tmp_path / "items.parquet"
    argv = ["caption_statistics.py", "--real", str(real), "--twin-images", "3", "--out", str(out), "--items", str(items),
            "--set", "world.captions.and_prob=1.0"]
    monkeypatch.setattr(sys, "argv", argv)
    _script().main()
    stats = pd.read_csv(out, keep_default_na=False)
    assert list(stats.columns) == ["corpus", "overlay", "statistic", "value"]
    assert stats["corpus"].unique().tolist() == ["real", "twin", "twin_overlay"]
    assert stats.groupby("corpus").size().nunique() == 1  # the same statistics for every corpus
    value = stats.set_index(["corpus", "statistic"])["value"]
    assert value["real", "n_captions"] == 3 and value["twin", "n_captions"] == 15
    assert value["real", "share_and"] == pytest.approx(1 / 3)
    assert value["twin_overlay", "share_and"] == 1  # every caption of the overlay is a conjunction
    assert stats.query("corpus == 'twin_overlay'")["overlay"].unique().tolist() == ["world.captions.and_prob=1.0"]
    rows = pd.read_parquet(items)
    assert "caption" not in rows.columns and "negatives" not in rows.columns  # no annotation text
    assert rows.groupby("corpus").size().to_dict() == {"real": 3, "twin": 15, "twin_overlay": 15}
    assert rows.query("corpus == 'real'")["caption_index"].tolist() == [0, 1, 0]
    # the aggregates derive from the per-caption file
    real_rows = rows.query("corpus == 'real'").assign(caption="", negatives=[[]] * 3)
    assert caption_statistics(real_rows)["share_rel_objects"] == pytest.approx(value["real", "share_rel_objects"])


def test_script_skips_absent_real_captions(tmp_path, monkeypatch, capsys) -> None:
    out = tmp_path / "stats.csv"
    argv = ["caption_statistics.py", "--real", str(tmp_path / "absent.json"), "--twin-images", "2", "--out", str(out),
            "--items", str(tmp_path / "items.parquet")]
    monkeypatch.setattr(sys, "argv", argv)
    _script().main()
    assert "real captions not found" in capsys.readouterr().err
    assert pd.read_csv(out)["corpus"].unique().tolist() == ["twin"]
