"""TSVLC's generators read the relation inventory of the world they mine (``WorldConfig.relations``) off its scene
graphs: the first world's lists and parses are unchanged, a support world's add "sitting on" and "hanging from"."""

from __future__ import annotations

from pathlib import Path

import pytest

from vlcomp.generators import GENERATORS
from vlcomp.generators.tsvlc import (
    TsvlcAnalogyConfig,
    TsvlcNegativesConfig,
    negatives_of,
    relations_of_scenes,
    split_relations,
    word_lists,
)
from vlcomp.io import read_json
from vlcomp.text.tokenizer import WorldTokenizer, get_tokenizer
from vlcomp.text.tsvlc_rules import PAPER_WORD_LISTS, toy_word_lists
from vlcomp.world import Split
from vlcomp.world.captions import CaptionConfig
from vlcomp.world.concepts import ALL_RELATIONS, RELATIONS, SUPPORT_RELATIONS
from vlcomp.world.generate import SplitSpec, generate_split, write_split
from vlcomp.world.scene import WorldConfig

SUPPORT = WorldConfig(image_size=32, layout_probs=(0.3, 0.2, 0.1, 0.1, 0.3))
SPEC = SplitSpec("cc3m", 80, "web", captions={"web_bind_prob": 0.9, "web_relation_prob": 0.9})


def _world(root: Path, wcfg: WorldConfig) -> Path:
    write_split(root / "cc3m", *generate_split(SPEC, wcfg, CaptionConfig(), 0))
    return root


@pytest.fixture(scope="module")
def support_world(tmp_path_factory) -> Path:
    return _world(tmp_path_factory.mktemp("support"), SUPPORT)


@pytest.fixture(scope="module")
def first_world(tmp_path_factory) -> Path:
    return _world(tmp_path_factory.mktemp("first"), WorldConfig(image_size=32))


def test_the_inventory_is_read_off_the_scene_graphs(support_world, first_world, tmp_path) -> None:
    assert split_relations(Split(support_world, "cc3m")) == SUPPORT.relations == dict(ALL_RELATIONS)
    assert split_relations(Split(first_world, "cc3m")) == WorldConfig().relations == dict(RELATIONS)
    (tmp_path / "nosc").mkdir()
    assert split_relations(Split(tmp_path, "nosc")) == dict(RELATIONS)  # no scene graphs: the first world's
    assert relations_of_scenes([]) == dict(RELATIONS)


def test_word_lists_for_the_first_world_are_the_constant_lists() -> None:
    assert word_lists("toy") == toy_word_lists() == word_lists("toy", WorldConfig().relations)
    assert word_lists("paper", SUPPORT.relations) == dict(PAPER_WORD_LISTS)
    assert word_lists("toy", SUPPORT.relations)["action"] == tuple(ALL_RELATIONS)


def test_rb_negatives_of_a_support_world_use_its_relations(support_world) -> None:
    captions = [c for caps in Split(support_world, "cc3m").captions() for c in caps]
    assert any(p in c for c in captions for p in SUPPORT_RELATIONS)
    cfg = TsvlcNegativesConfig(split="cc3m", candidates=3)
    negs = negatives_of(captions, cfg, rb_share=1.0, seed=0, relations=SUPPORT.relations)
    first = negatives_of(captions, cfg, rb_share=1.0, seed=0)
    assert negs != first
    texts = [t for n in negs for t, kind in n if kind == "rb/action"]
    assert any(p in t for t in texts for p in SUPPORT_RELATIONS)
    ids = get_tokenizer("world-v2", "toy-rn16", 32)([t for n in negs for t, _ in n])
    assert not (ids == WorldTokenizer.UNK).any()


@pytest.mark.parametrize("name", ["tsvlc_rb", "tsvlc_analogy"])
def test_generators_run_on_a_support_world(name, support_world, tmp_path) -> None:
    gen = GENERATORS.get(name)
    cfg = (TsvlcAnalogyConfig(split="cc3m") if name == "tsvlc_analogy"
           else TsvlcNegativesConfig(split="cc3m", candidates=2))
    gen.run(cfg, world=str(support_world), model=None, nlp=None, seed=0, out_dir=tmp_path)
    key = "positives" if name == "tsvlc_analogy" else "negatives"
    texts = [t for per_image in read_json(tmp_path / f"{key}.json") for per_caption in per_image for t in per_caption]
    assert any(p in t for t in texts for p in SUPPORT_RELATIONS)
    ids = get_tokenizer("world-v2", "toy-rn16", 32)(texts)
    assert not (ids == WorldTokenizer.UNK).any()
