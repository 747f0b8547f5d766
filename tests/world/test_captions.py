"""Caption styles: config validation, closed vocabulary, web (un)binding, counts, faithfulness to the graph."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from vlcomp.world.captions import CaptionConfig, captions_for, noun_phrase, web_caption
from vlcomp.world.concepts import COLOURS, MATERIALS, RELATIONS, SHAPES, SIZES, STATES, SYNONYMS, world_words
from vlcomp.world.scene import WorldConfig, sample_scene

STYLES = ("web", "coco", "flickr")
ATTRIBUTE_WORDS = {*COLOURS, *SIZES, *(w for ws in SYNONYMS.values() for w in ws), *MATERIALS, *STATES}
PROB_FIELDS = [f.name for f in dataclasses.fields(CaptionConfig) if f.name != "captions_per_image"]


def _words(text: str) -> list[str]:
    return re.sub(r"[^a-z0-9 ]+", " ", text.lower()).split()


def _scenes(n: int, seed: int = 0, cfg: WorldConfig | None = None):
    rng = np.random.default_rng(seed)
    return [sample_scene(rng, cfg or WorldConfig(min_objects=1, max_objects=4, hollow_prob=0.4), f"c/{i}")
            for i in range(n)]


SCENES = _scenes(150)


# ------------------------------------------------------------------------------------------------ config


@pytest.mark.parametrize("name", PROB_FIELDS)
@pytest.mark.parametrize("value", [-0.1, 1.5])
def test_probability_fields_are_validated_by_name(name: str, value: float) -> None:
    with pytest.raises(ValueError, match=rf"world\.captions\.{name}="):
        CaptionConfig(**{name: value})


def test_captions_per_image_must_be_positive() -> None:
    with pytest.raises(ValueError, match=r"world\.captions\.captions_per_image=0"):
        CaptionConfig(captions_per_image=0)


def test_bounds_are_inclusive() -> None:
    CaptionConfig(**{name: 0.0 for name in PROB_FIELDS})
    CaptionConfig(**{name: 1.0 for name in PROB_FIELDS}, captions_per_image=1)


# -------------------------------------------------------------------------------------------- vocabulary


@pytest.mark.parametrize(
    "cfg",
    [
        CaptionConfig(),
        CaptionConfig(web_bind_prob=1.0, web_relation_prob=1.0, synonym_prob=1.0, size_prob=1.0,
                      material_prob=1.0, state_prob=1.0),
        CaptionConfig(web_bind_prob=0.5, colour_prob=0.0, size_prob=0.0, material_prob=0.0, state_prob=0.0),
    ],
    ids=["default", "everything", "bare"],
)
@pytest.mark.parametrize("style", STYLES)
def test_every_caption_word_is_a_world_word(cfg: CaptionConfig, style: str) -> None:
    vocab = set(world_words())
    rng = np.random.default_rng(1)
    for sc in SCENES:
        for cap in captions_for(rng, sc, cfg, style):
            words = _words(cap)
            assert words, repr(cap)
            assert set(words) <= vocab, (cap, set(words) - vocab)


def test_world_words_are_unique_lowercase_words() -> None:
    words = world_words()
    assert len(words) == len(set(words))
    assert all(re.fullmatch(r"[a-z]+", w) for w in words)
    assert world_words() == words  # fixed order (the tokenizer's ids depend on it)


# ------------------------------------------------------------------------------------------- web binding


def test_unbound_web_captions_never_put_an_attribute_before_a_shape() -> None:
    """With ``web_bind_prob=0`` every caption is unbound alt-text in one of three forms:
    "a X and a Y, attr attr", "X, Y, attr, attr" or "clipart of X and Y in attr and attr".
    So no attribute word is ever directly followed by a shape noun (the bound "a red X and ..." form)."""
    cfg = CaptionConfig(web_bind_prob=0.0, web_relation_prob=1.0, colour_prob=1.0, material_prob=1.0,
                        state_prob=1.0, size_prob=1.0)
    rng = np.random.default_rng(2)
    forms = set()
    for sc in SCENES:
        cap = web_caption(rng, sc, cfg)
        words = _words(cap)
        for w1, w2 in zip(words, words[1:], strict=False):
            assert not (w1 in ATTRIBUTE_WORDS and w2 in SHAPES), cap
        assert not any(f" {rel} " in f" {' '.join(words)} " for rel in RELATIONS), cap  # no relation either
        head = cap.split(",")[0]
        if head.startswith(("a ", "an ")):
            forms.add("articles")
            assert all(_words(part)[1:] in ([s] for s in SHAPES) for part in head.split(" and ")), cap
        elif cap.startswith("clipart of "):
            forms.add("clipart")
        else:
            forms.add("list")
        assert sorted(w for w in words if w in SHAPES) == sorted(o.shape for o in sc.objects)
    assert forms == {"articles", "clipart", "list"}


def test_bound_web_captions_bind_each_colour_to_its_shape() -> None:
    cfg = CaptionConfig(web_bind_prob=1.0, web_relation_prob=0.0, colour_prob=1.0, size_prob=0.0,
                        material_prob=0.0, state_prob=0.0)
    rng = np.random.default_rng(3)
    for sc in SCENES[:40]:
        cap = web_caption(rng, sc, cfg)
        parts = cap.split(" and ")
        assert len(parts) == len(sc.objects)
        got = {tuple(p.split()[1:]) for p in parts}
        assert got == {(o.colour, o.shape) for o in sc.objects}, cap


def test_noun_phrase_orders_attributes_before_the_noun() -> None:
    cfg = CaptionConfig(size_prob=1.0, colour_prob=1.0, material_prob=1.0, state_prob=1.0, synonym_prob=0.0)
    for sc in SCENES[:30]:
        for o in sc.objects:
            words = noun_phrase(np.random.default_rng(0), o, cfg).split()
            third = "hollow" if o.state == "hollow" else (o.material if o.material != "plain" else None)
            assert words == [o.size, o.colour, *([third] if third else []), o.shape]


# ---------------------------------------------------------------------------------------- detailed styles


@pytest.mark.parametrize("per_image", [1, 3, 5])
@pytest.mark.parametrize("style", ["coco", "flickr"])
def test_detailed_caption_count(style: str, per_image: int) -> None:
    cfg = CaptionConfig(captions_per_image=per_image)
    rng = np.random.default_rng(4)
    for sc in SCENES[:20]:
        assert len(captions_for(rng, sc, cfg, style)) == per_image


def test_web_gives_one_caption_and_unknown_style_is_named() -> None:
    rng = np.random.default_rng(0)
    assert len(captions_for(rng, SCENES[0], CaptionConfig(captions_per_image=5), "web")) == 1
    with pytest.raises(ValueError, match="unknown caption style 'vg'"):
        captions_for(rng, SCENES[0], CaptionConfig(), "vg")


def test_flickr_style_is_sentence_case_with_a_final_period() -> None:
    rng = np.random.default_rng(5)
    for sc in SCENES[:40]:
        for cap in captions_for(rng, sc, CaptionConfig(), "flickr"):
            assert cap[0].isupper() and cap.endswith("."), cap


@pytest.mark.parametrize("style", ["coco", "flickr"])
def test_detailed_captions_state_a_true_relation(style: str) -> None:
    """With bare noun phrases the caption's first relation phrase sits between its subject and object shapes,
    and that triple is in the scene graph (never the symmetric "next to" when another relation exists)."""
    cfg = CaptionConfig(colour_prob=0.0, size_prob=0.0, material_prob=0.0, state_prob=0.0)
    rng = np.random.default_rng(6)
    phrases = sorted(RELATIONS, key=len, reverse=True)
    checked = 0
    for sc in SCENES:
        if len(sc.objects) < 2:
            continue
        shape_id = {o.shape: o.id for o in sc.objects}
        asymmetric = any(not RELATIONS[p].symmetric for _, p, _ in sc.relations)
        for cap in captions_for(rng, sc, cfg, style):
            text = " " + " ".join(_words(cap)) + " "
            rel = next(p for p in phrases if f" {p} " in text)
            left, right = text.split(f" {rel} ", 1)
            subj = [w for w in left.split() if w in SHAPES][-1]
            obj = [w for w in right.split() if w in SHAPES][0]
            assert (shape_id[subj], rel, shape_id[obj]) in sc.relations, (cap, sc.relations)
            assert not (asymmetric and RELATIONS[rel].symmetric), cap
            checked += 1
    assert checked > 300


def test_same_rng_state_gives_same_captions() -> None:
    for style in STYLES:
        a = [captions_for(np.random.default_rng(9), sc, CaptionConfig(), style) for sc in SCENES[:10]]
        b = [captions_for(np.random.default_rng(9), sc, CaptionConfig(), style) for sc in SCENES[:10]]
        assert a == b


@pytest.mark.parametrize("style", ["coco", "flickr"])
def test_conjunction_captions_bind_each_colour_to_its_own_shape(style: str) -> None:
    cfg = CaptionConfig(and_prob=1.0, colour_prob=1.0, size_prob=0.0, material_prob=0.0, state_prob=0.0)
    rng = np.random.default_rng(11)
    checked = 0
    for sc in SCENES:
        if len(sc.objects) < 2:
            continue
        colour_of = {o.shape: {p.colour for p in sc.objects if p.shape == o.shape} for o in sc.objects}
        for cap in captions_for(rng, sc, cfg, style):
            words = _words(cap)
            assert "and" in words, cap
            pairs = [(words[k - 1], w) for k, w in enumerate(words) if w in SHAPES]
            assert len(pairs) == 2, cap
            for colour, shape in pairs:
                assert colour in colour_of[shape], (cap, colour_of)
            checked += 1
    assert checked > 100


def test_and_prob_zero_leaves_captions_unchanged() -> None:
    """The knob draws from the generator only when it is on, so worlds made before it exist stay identical."""
    for style in ("coco", "flickr"):
        a = [captions_for(np.random.default_rng(3), sc, CaptionConfig(), style) for sc in SCENES[:30]]
        b = [captions_for(np.random.default_rng(3), sc, CaptionConfig(and_prob=0.0), style) for sc in SCENES[:30]]
        assert a == b
        assert not any(" and " in c for caps in a for c in caps)
