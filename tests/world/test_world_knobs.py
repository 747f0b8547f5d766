"""The world knobs of the toy-world issue (27): object scale, the support layout (bars, "sitting on", "hanging from"),
relation kinds, the extended synonyms, counted and negated captions, and the version-2 vocabulary. Every knob's
first-world value leaves the world byte-identical (the pinned hashes in test_captions.py); these tests check
what each knob does when it is on."""

from __future__ import annotations

import re

import numpy as np
import pytest

from vlcomp.text.tokenizer import get_tokenizer
from vlcomp.world.captions import NEGATION_MIX, CaptionConfig, captions_for, count_and_negate
from vlcomp.world.concepts import (
    ALL_RELATIONS,
    BAR_ASPECT,
    COLOURS,
    EXTENDED_SYNONYMS,
    RELATIONS,
    SHAPES,
    SIZES,
    SUPPORT_RELATIONS,
    SUPPORT_SHAPES,
    SYNONYMS,
    world_words,
)
from vlcomp.world.render import render
from vlcomp.world.scene import BAR_WIDTH, LAYOUTS, Obj, Scene, WorldConfig, compute_relations, sample_scene

SUPPORT_ONLY = (0.0, 0.0, 0.0, 0.0, 1.0)


def _words(text: str) -> list[str]:
    return re.sub(r"[^a-z ]+", " ", text.lower()).split()


# ------------------------------------------------------------------------------------------- object scale


def test_half_extent_is_size_times_scale_times_object_scale() -> None:
    assert WorldConfig().half_extent("small") == SIZES["small"] == 6
    assert WorldConfig(image_size=96).half_extent("large") == 20.0
    assert WorldConfig(object_scale=1.5).half_extent("small") == 9.0
    assert WorldConfig(image_size=64, object_scale=1.5).half_extent("large") == pytest.approx(20.0)


@pytest.mark.parametrize("value", [0.4, 3.0, True, "2"])
def test_object_scale_is_checked_by_name(value) -> None:
    with pytest.raises(ValueError, match=r"world\.object_scale="):
        WorldConfig(object_scale=value)


def test_object_scale_enlarges_sampled_objects() -> None:
    rng = np.random.default_rng(0)
    cfg = WorldConfig(object_scale=1.2, layout_probs=(1.0, 0.0, 0.0, 0.0, 0.0))
    halves = {o.half for i in range(40) for o in sample_scene(rng, cfg, str(i)).objects}
    assert halves == {7.2, 12.0}


def test_contain_inner_scale_sets_the_contained_object() -> None:
    rng = np.random.default_rng(1)
    for inner, want in ((0.75, 4.5), (1.0, 6.0)):
        cfg = WorldConfig(layout_probs=(0.0, 0.0, 1.0, 0.0, 0.0), contain_inner_scale=inner)
        for i in range(30):
            sc = sample_scene(rng, cfg, str(i))
            assert sc.objects[1].half == want
            assert (0, "surrounding", 1) in sc.relations and (1, "inside", 0) in sc.relations
    with pytest.raises(ValueError, match=r"world\.contain_inner_scale="):
        WorldConfig(contain_inner_scale=1.2)


def test_layout_probs_need_one_weight_per_layout() -> None:
    assert len(LAYOUTS) == 5 and LAYOUTS[-1] == "support"
    with pytest.raises(ValueError, match=r"world\.layout_probs"):
        WorldConfig(layout_probs=(0.55, 0.2, 0.1, 0.15))


# -------------------------------------------------------------------------------------- support relations


def _bar(oid: int, x: float, y: float, half: float = 12.0) -> Obj:
    return Obj(oid, "bar", "red", "large", "plain", "solid", x, y, half, z=oid)


def _small(oid: int, x: float, y: float, half: float = 6.0, shape: str = "star") -> Obj:
    return Obj(oid, shape, "blue", "small", "plain", "solid", x, y, half, z=oid)


def test_a_bar_box_is_twice_as_wide_as_high() -> None:
    b = _bar(0, 24, 30)
    assert BAR_ASPECT == 0.5 and b.half_height == 6.0
    assert b.box == (12, 24, 36, 36)
    assert _small(0, 10, 10).box == (4, 4, 16, 16)


def test_resting_on_a_bar_is_sitting_on_and_implies_above_both_ways() -> None:
    bar = _bar(0, 24, 30)  # top edge y = 24
    star = _small(1, 28, 24 - 6)  # bottom edge 24: touching
    rels = set(compute_relations([bar, star], WorldConfig()))
    assert rels == {(1, "sitting on", 0), (1, "above", 0), (1, "next to", 0), (0, "below", 1), (0, "next to", 1)}


def test_a_sub_pixel_overlap_is_still_a_contact() -> None:
    """Coordinates are rounded to 3 decimals: a contact may overlap by a hair and must not read as in front of."""
    bar = _bar(0, 24, 30)
    star = _small(1, 28, 24 - 6 + 0.0004)
    rels = set(compute_relations([bar, star], WorldConfig()))
    assert (1, "sitting on", 0) in rels and (0, "below", 1) in rels
    assert not {p for _, p, _ in rels} & {"in front of", "behind", "covering", "covered by"}


def test_hanging_from_a_bar() -> None:
    bar = _bar(0, 24, 20)  # bottom edge y = 26
    star = _small(1, 20, 26 + 6)
    rels = set(compute_relations([bar, star], WorldConfig()))
    assert rels == {(1, "hanging from", 0), (1, "below", 0), (1, "next to", 0), (0, "above", 1), (0, "next to", 1)}


@pytest.mark.parametrize("dy, dx", [(1.0, 0.0), (0.0, 13.0)])
def test_no_contact_no_support(dy: float, dx: float) -> None:
    """A gap of 1 px (> TOUCH_PX), or a centre beyond the bar's span, is not a contact."""
    bar = _bar(0, 24, 30)
    star = _small(1, 24 + dx, 24 - 6 - dy)
    rels = set(compute_relations([bar, star], WorldConfig()))
    assert not {p for _, p, _ in rels} & set(SUPPORT_RELATIONS)


def test_support_layout_scenes() -> None:
    cfg = WorldConfig(layout_probs=SUPPORT_ONLY, max_objects=3, colour_prior=0.5, layout_prior=0.8)
    rng = np.random.default_rng(11)
    kinds = set()
    for i in range(150):
        sc = sample_scene(rng, cfg, f"s/{i}")
        bar, obj = sc.objects[0], sc.objects[1]
        assert bar.shape == "bar" and bar.size == "large" and bar.state == "solid"
        assert obj.size == "small" and obj.shape != "arrow"
        assert bar.half == pytest.approx(cfg.half_extent(bar.size) * BAR_WIDTH, abs=1e-3)
        support = {p for s, p, o in sc.relations if (s, o) == (1, 0)}
        assert support in ({"sitting on", "above", "next to"}, {"hanging from", "below", "next to"}), sc.relations
        kinds.add((support & set(SUPPORT_RELATIONS)).pop())
        # ARO's size filter (1/4 of the image wide and high) keeps both objects of a contact
        assert min(2 * bar.half, 2 * bar.half_height) >= cfg.image_size / 4
        assert 2 * obj.half >= cfg.image_size / 4
        assert sum(o.shape in SUPPORT_SHAPES for o in sc.objects) == 1
        for o in sc.objects:
            x0, y0, x1, y1 = o.box
            assert 0 <= x0 and 0 <= y0 and x1 <= cfg.image_size and y1 <= cfg.image_size, o
        assert set(sc.relations) == set(compute_relations(sc.objects, cfg))
        # a role relation never appears reversed
        assert not any(sc.obj(s).shape == "bar" and p in SUPPORT_RELATIONS for s, p, _ in sc.relations)
    assert kinds == {"sitting on", "hanging from"}


def test_a_bar_renders_twice_as_wide_as_high() -> None:
    cfg = WorldConfig()
    bar = Obj(0, "bar", "white", "large", "plain", "solid", 24.0, 24.0, cfg.half_extent("large") * BAR_WIDTH)
    img = render(Scene("b", "black", [bar]), cfg.image_size)
    rows = np.nonzero(img.sum(axis=(1, 2)))[0]
    cols = np.nonzero(img.sum(axis=(0, 2)))[0]
    assert 24 <= cols.max() - cols.min() + 1 <= 26  # 2 x 12 px wide (anti-aliased edges)
    assert 12 <= rows.max() - rows.min() + 1 <= 14  # 2 x 6 px high


def test_relation_kinds() -> None:
    role = {p for p, r in ALL_RELATIONS.items() if r.kind == "role"}
    assert role == {"inside", "surrounding", "pointing at", "sitting on", "hanging from"}
    assert all(r.kind in ("geometric", "role") for r in ALL_RELATIONS.values())
    assert all(ALL_RELATIONS[p].converse is None for p in SUPPORT_RELATIONS)
    assert not set(SUPPORT_RELATIONS) & set(RELATIONS)  # the first world's table is unchanged
    assert list(WorldConfig().relations) == list(RELATIONS)
    assert list(WorldConfig(layout_probs=SUPPORT_ONLY).relations) == list(ALL_RELATIONS)


# --------------------------------------------------------------------------------------------- vocabulary


def test_version_2_vocabulary_extends_version_1() -> None:
    v1, v2 = world_words(1), world_words(2)
    assert v2[: len(v1)] == v1 and len(set(v2)) == len(v2)
    assert {"bar", "sitting", "hanging", "from", "over", "box", "four", "but"} <= set(v2) - set(v1)
    with pytest.raises(ValueError, match="version"):
        world_words(3)


def test_world_v2_tokenizer_keeps_version_1_ids_and_fits_the_toy_models() -> None:
    t1, t2 = get_tokenizer("world", "toy-rn16", 32), get_tokenizer("world-v2", "toy-rn16", 32)
    text = "a small red circle to the left of a blue square"
    assert t1.encode(text) == t2.encode(text)
    assert t1.UNK in t1.encode("a star hanging from a bar") and t2.UNK not in t2.encode("a star hanging from a bar")
    assert t2.EOT > t1.EOT and t2.vocab_size <= 128  # the toy configs' text vocab_size


def _scenes(cfg: WorldConfig, n: int, seed: int = 2) -> list[Scene]:
    rng = np.random.default_rng(seed)
    return [sample_scene(rng, cfg, f"v/{i}") for i in range(n)]


@pytest.mark.parametrize("style", ["web", "coco", "flickr"])
def test_every_new_caption_word_is_a_version_2_word(style: str) -> None:
    vocab = set(world_words(2))
    cfg = CaptionConfig(synonyms="extended", synonym_prob=1.0, negation_prob=1.0, count_prob=1.0,
                        web_bind_prob=1.0, web_relation_prob=1.0)
    rng = np.random.default_rng(0)
    for sc in _scenes(WorldConfig(layout_probs=(0.3, 0.1, 0.1, 0.1, 0.4), max_objects=4), 80):
        for cap in captions_for(rng, sc, cfg, style):
            assert set(_words(cap)) <= vocab, (cap, set(_words(cap)) - vocab)


# ----------------------------------------------------------------------------------------------- captions


def test_extended_synonyms_replace_shapes_colours_and_relations() -> None:
    assert set(SYNONYMS.items()) <= set(EXTENDED_SYNONYMS.items())
    cfg = CaptionConfig(synonyms="extended", synonym_prob=1.0, colour_prob=1.0)
    rng = np.random.default_rng(4)
    words: set[str] = set()
    for sc in _scenes(WorldConfig(), 200):
        for cap in captions_for(rng, sc, cfg, "coco"):
            words |= set(_words(cap))
    # synonym_prob 1: the canonical words never appear, their synonyms do
    assert {"box", "rhombus", "violet", "over"} <= words
    assert not {"square", "diamond", "purple"} & words
    with pytest.raises(ValueError, match=r"world\.captions\.synonyms"):
        CaptionConfig(synonyms="all")


def test_counted_captions_count_the_scene() -> None:
    cfg = CaptionConfig(count_prob=1.0)
    rng = np.random.default_rng(1)
    for sc in _scenes(WorldConfig(min_objects=1, max_objects=4), 60):
        n = len(sc.objects)
        for cap in captions_for(rng, sc, cfg, "coco"):
            assert cap.startswith(f"{['one', 'two', 'three', 'four'][n - 1]} {'shape' if n == 1 else 'shapes'}: ")
        assert captions_for(rng, sc, cfg, "flickr")[0][0].isupper()


def test_negated_clauses_are_true_and_follow_the_coco_mix() -> None:
    cfg = CaptionConfig(negation_prob=1.0)
    rng = np.random.default_rng(3)
    counts = {"no": 0, "not": 0, "without": 0}
    pattern = re.compile(r" (and no|but not an?|without an?) (\w+)\.?$")
    for sc in _scenes(WorldConfig(), 400):
        for style in ("web", "coco", "flickr"):
            for cap in captions_for(rng, sc, cfg, style):
                m = pattern.search(cap)
                assert m, cap
                assert m.group(2) in SHAPES and m.group(2) not in {o.shape for o in sc.objects}, (cap, sc.objects)
                counts[{"and": "no", "but": "not", "without": "without"}[m.group(1).split()[0]]] += 1
                assert cap.endswith(".") == (style == "flickr")
    total = sum(counts.values())
    for word, share in zip(("no", "not", "without"), NEGATION_MIX, strict=True):
        assert abs(counts[word] / total - share) < 0.03, counts


def test_knobs_off_draw_no_random_numbers() -> None:
    sc = _scenes(WorldConfig(), 1)[0]
    rng = np.random.default_rng(9)
    before = rng.bit_generator.state
    assert count_and_negate(rng, "a red circle", sc, CaptionConfig(), "coco") == "a red circle"
    assert rng.bit_generator.state == before


def test_negation_by_hand() -> None:
    """A scene showing every shape but the heart: the clause must name the heart."""
    objs = [Obj(i, s, list(COLOURS)[i], "small", "plain", "solid", 0.0, 0.0, 1.0)
            for i, s in enumerate(x for x in SHAPES if x != "heart")]
    sc = Scene("h", "black", objs)
    rng = np.random.default_rng(0)
    for _ in range(20):
        cap = count_and_negate(rng, "a red circle .", sc, CaptionConfig(negation_prob=1.0), "flickr")
        assert cap in ("a red circle and no heart.", "a red circle but not a heart.", "a red circle without a heart.")
