"""The text modules on a support world (bars, "sitting on", "hanging from"): the relation inventory is a parameter
whose default is the first world's, so the parsers read the support phrases only when told the world has them."""

from __future__ import annotations

import numpy as np
import pytest

from vlcomp.text.analogy import RelationCaption, SceneParaphrases, parse_toy_caption
from vlcomp.text.caption_stats import relation_flags, swap_around_relation
from vlcomp.text.nlp import load_spacy
from vlcomp.text.tokenizer import WorldTokenizer, get_tokenizer
from vlcomp.text.tsvlc_rules import find_spans, rb_negatives, toy_word_lists
from vlcomp.world.captions import CaptionConfig, captions_for
from vlcomp.world.concepts import ALL_RELATIONS, RELATIONS, SUPPORT_RELATIONS
from vlcomp.world.scene import WorldConfig, sample_scene

SUPPORT = WorldConfig(layout_probs=(0.3, 0.2, 0.1, 0.1, 0.3))
RELS = SUPPORT.relations
SITTING = "a small red star sitting on a blue bar"


@pytest.fixture(scope="module")
def support_captions() -> tuple[list[str], list]:
    rng = np.random.default_rng(0)
    scenes = [sample_scene(rng, SUPPORT, str(i)) for i in range(200)]
    cfg = CaptionConfig()
    caps, per = [], []
    for sc in scenes:
        for style in ("web", "coco", "flickr"):
            for c in captions_for(rng, sc, cfg, style):
                caps.append(c)
                per.append(sc)
    return caps, per


# ------------------------------------------------------------------------------------------------ analogy


def test_the_parser_reads_support_phrases_only_in_a_support_world() -> None:
    assert parse_toy_caption(SITTING).parsed is None  # the first world: no bar, no "sitting on"
    assert parse_toy_caption(SITTING, WorldConfig().relations).parsed is None
    parsed = parse_toy_caption(SITTING, RELS).parsed
    assert isinstance(parsed, RelationCaption) and parsed.relation == "sitting on"
    assert parse_toy_caption("a blue bar and a red star", RELS).parsed is not None
    assert parse_toy_caption("a blue bar and a red star").parsed is None


def test_first_world_captions_parse_the_same_with_the_support_inventory() -> None:
    rng = np.random.default_rng(1)
    for i in range(150):
        sc = sample_scene(rng, WorldConfig(), str(i))
        for style in ("web", "coco", "flickr"):
            for c in captions_for(rng, sc, CaptionConfig(), style):
                assert parse_toy_caption(c, RELS) == parse_toy_caption(c)


def test_scene_paraphrases_of_a_support_world(support_captions) -> None:
    caps, scenes = support_captions
    with pytest.raises(ValueError, match="unknown relations"):
        SceneParaphrases(0, relations=["floating over"])
    para = SceneParaphrases(np.random.default_rng(0), relations=RELS)
    out = para(caps, scenes)
    support = [(c, p) for c, p in zip(caps, out, strict=True) if any(r in c for r in SUPPORT_RELATIONS)]
    assert support and any(p is not None for _, p in support)
    for c, p in support:  # no converse of a support relation: the relation is kept
        if p is not None:
            assert any(r in p for r in SUPPORT_RELATIONS), (c, p)
    first = SceneParaphrases(np.random.default_rng(0))(caps, scenes)  # the first world's parser
    assert sum(p is not None for p in out) > sum(p is not None for p in first)
    texts = [p for p in out if p is not None]
    ids = get_tokenizer("world-v2", "toy-rn16", 32)(texts)
    assert not (ids == WorldTokenizer.UNK).any()


# ------------------------------------------------------------------------------------------------ TSVLC RB


def test_toy_word_lists_take_the_world_relations() -> None:
    lists = toy_word_lists(RELS)
    assert lists["action"] == tuple(ALL_RELATIONS)
    assert toy_word_lists(tuple(RELS)) == lists
    assert {k: v for k, v in lists.items() if k != "action"} == {
        k: v for k, v in toy_word_lists().items() if k != "action"}
    assert toy_word_lists()["action"] == tuple(RELATIONS)


def test_rb_negatives_replace_a_support_relation_only_in_a_support_world() -> None:
    first = [s for s in find_spans(SITTING, toy_word_lists()) if s.type == "action"]
    assert first == []
    spans = [s for s in find_spans(SITTING, toy_word_lists(RELS)) if s.type == "action"]
    assert [s.entry for s in spans] == ["sitting on"]
    negs = rb_negatives("a red circle above a blue bar", toy_word_lists(RELS), np.random.default_rng(0), k=40)
    assert any("sitting on" in t or "hanging from" in t for t, kind in negs if kind == "action")


# -------------------------------------------------------------------------------------------- caption stats


@pytest.fixture(scope="module")
def nlp():
    return load_spacy()


def test_caption_stats_read_the_world_relations_given(nlp) -> None:
    doc = nlp("a red star sitting on a blue bar")
    assert not relation_flags(doc)["rel_world"]  # the first world's phrases
    assert relation_flags(doc, tuple(RELS))["rel_world"]
    assert relation_flags(doc, tuple(RELS))["rel_vgr"] == relation_flags(doc)["rel_vgr"]
    doc = nlp("a red star hanging from a blue bar")
    a, b = list(doc.noun_chunks)
    assert swap_around_relation(doc, a, b, tuple(RELS)) and swap_around_relation(doc, a, b)
