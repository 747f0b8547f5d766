"""The first world's enumerations are today's: every list the twins and text modules derive from a world's relation
inventory (``WorldConfig.relations``) equals, for ``WorldConfig()``, the list they used to take from
``concepts.RELATIONS`` (written out here), so the first world's benchmarks and mined data stay byte-identical."""

from __future__ import annotations

import numpy as np

from vlcomp.generators.tsvlc import relations_of_scenes, word_lists
from vlcomp.text import analogy, caption_stats, tsvlc_rules
from vlcomp.twins import (
    aro_vg,
    hardpos,
    implied_facts,
    plausible,
    sugarcrepe,
    valse,
    vlchecklist,
    world_shapes,
)
from vlcomp.world.concepts import RELATIONS, SHAPES, WEB_ONLY_SHAPES
from vlcomp.world.scene import WorldConfig, sample_scene

FIRST = WorldConfig().relations
RELATION_PHRASES = ("to the left of", "to the right of", "above", "below", "in front of", "behind", "inside",
                    "surrounding", "pointing at", "covering", "covered by", "next to", "near")
SPATIAL = ("to the left of", "to the right of", "above", "below", "in front of", "behind", "inside", "next to")
VERBS = ("surrounding", "pointing at", "covering", "covered by")
NON_SYMMETRIC = RELATION_PHRASES[:-2]
ACTIONS = {"pointing": "pointing at", "covering": "covering", "covered": "covered by", "surrounding": "surrounding"}


def test_the_first_world_has_the_first_relations() -> None:
    assert tuple(FIRST) == RELATION_PHRASES == tuple(RELATIONS)
    assert world_shapes(FIRST) == SHAPES


def test_valse_enumerations() -> None:
    assert valse.spatial_relations(FIRST) == SPATIAL == valse.SPATIAL
    assert valse.verb_relations(FIRST) == VERBS == valse.VERBS


def test_vlchecklist_enumerations() -> None:
    assert vlchecklist.actions(FIRST) == ACTIONS == vlchecklist.ACTIONS
    values = vlchecklist.world_attribute_values(FIRST)
    assert values == vlchecklist.ATTRIBUTE_VALUES and values["action"] == tuple(ACTIONS)


def test_hardpos_negative_relations() -> None:
    assert hardpos.negative_relations(FIRST) == NON_SYMMETRIC == hardpos.NEGATIVE_RELATIONS


def test_aro_relation_files() -> None:
    text, groups = aro_vg.relation_files(FIRST)
    assert text == ("# relations excluded from the VG-Relation macro (the toy world's symmetric relations)\n"
                    "next to\nnear\n")
    assert groups == {p: "verbs" if p in VERBS else "spatial" for p in NON_SYMMETRIC}
    assert aro_vg.relation_files() == (text, groups)


def test_sugarcrepe_replace_rel_candidates() -> None:
    parts = sugarcrepe.parse("a red circle above a blue square")
    m = sugarcrepe.interpret(parts, FIRST)
    written = [sugarcrepe.render(e) for e in sugarcrepe.edit_replace_rel(parts, m, None, FIRST)]
    assert written == [f"a red circle {p} a blue square" for p in RELATION_PHRASES if p not in ("above", "near")]
    assert written == [sugarcrepe.render(e) for e in sugarcrepe.edit_replace_rel(parts, m, None)]


def test_tsvlc_toy_word_lists() -> None:
    lists = tsvlc_rules.toy_word_lists(FIRST)
    assert lists == tsvlc_rules.toy_word_lists() == word_lists("toy") == word_lists("toy", FIRST)
    assert lists["action"] == RELATION_PHRASES


def test_analogy_parser_vocabulary() -> None:
    tokens, shapes = analogy._vocabulary(tuple(FIRST))
    assert tokens == tuple(analogy._REL_TOKENS)
    assert [p for _, p in tokens] == sorted(RELATION_PHRASES, key=lambda p: -len(p.split()))
    assert shapes == frozenset(SHAPES + WEB_ONLY_SHAPES)


def test_caption_stats_world_relations() -> None:
    assert caption_stats.WORLD_RELATIONS == RELATION_PHRASES


def test_first_world_scenes_give_the_first_inventory_and_closed_graphs() -> None:
    rng = np.random.default_rng(0)
    scenes = [sample_scene(rng, WorldConfig(), str(i)) for i in range(200)]
    assert relations_of_scenes(scenes) == FIRST
    for sc in scenes:  # the converse closure adds nothing in the first world
        assert implied_facts(sc) == set(sc.relations)


def test_role_rules_of_the_first_world_are_unchanged() -> None:
    for s in SHAPES:
        for o in SHAPES:
            assert plausible(s, "pointing at", o) == (s == "arrow")
            assert plausible(s, "surrounding", o) == (s in ("circle", "square", "diamond") and o != "arrow")
            assert plausible(s, "inside", o) == (o in ("circle", "square", "diamond") and s != "arrow")
            assert all(plausible(s, p, o) for p in RELATION_PHRASES if p not in ("pointing at", "surrounding",
                                                                                  "inside"))
