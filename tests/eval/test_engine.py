"""The batched engine: each unique image / caption / pair scored once, equal to the naive loop, ITC top-k
re-ranking for cross scorers, and errors that name what is wrong."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import torch

from vlcomp.eval.engine import (
    RERANK_FILL,
    ChoiceTask,
    EngineOptions,
    FeatureCache,
    naive_choice_scores,
    naive_retrieval_scores,
    retrieval_mode,
    retrieval_scores,
    score_choices,
    topk_stable,
)

from .helpers import LookupCrossScorer, LookupScorer, ToyCrossScorer, toy_scorer, write_image, write_noise


@pytest.fixture
def images(tmp_path):
    """Four noise images and a loader that counts reads."""
    paths = [str(write_noise(tmp_path / f"{i}.png", seed=i)) for i in range(4)]
    reads: Counter = Counter()

    def load(key):
        from PIL import Image

        reads[key] += 1
        return Image.open(key).convert("RGB")

    return paths, load, reads


CAPTIONS = ["a dog on a mat", "a mat on a dog", "two red cars", "a cat", "a dog on a mat"]


def _items(paths):
    keys = [paths[0], paths[1], paths[0], paths[2], paths[3], paths[1]]
    caps = [(CAPTIONS[0], CAPTIONS[1]), (CAPTIONS[2], CAPTIONS[3]), (CAPTIONS[1], CAPTIONS[0]),
            (CAPTIONS[0], CAPTIONS[4]), (CAPTIONS[3], CAPTIONS[2]), (CAPTIONS[2], CAPTIONS[1])]
    return keys, caps


class Counting:
    """Wraps a scorer, counting what reaches the encoders."""

    def __init__(self, inner):
        self.inner, self.kind, self.name = inner, inner.kind, inner.name
        self.images, self.texts, self.pairs = 0, Counter(), 0

    def encode_images(self, ims):
        self.images += len(ims)
        return self.inner.encode_images(ims)

    def encode_texts(self, texts):
        self.texts.update(texts)
        return self.inner.encode_texts(texts)

    def score_pairs(self, ims, texts):
        self.pairs += len(ims)
        return self.inner.score_pairs(ims, texts)

    def dual_view(self):
        return self.inner.dual_view()


def test_dual_encodes_each_unique_image_and_caption_once_and_matches_naive(images):
    paths, load, reads = images
    keys, caps = _items(paths)
    scorer = Counting(toy_scorer())
    got = score_choices(scorer, keys, caps, load, EngineOptions(image_chunk=3, text_chunk=2, score_block=4))
    assert scorer.images == 4 and set(scorer.texts.values()) == {1} and len(scorer.texts) == 4
    assert set(reads.values()) == {1}
    ref = naive_choice_scores(toy_scorer(), keys, caps, load)
    per_caption = naive_choice_scores(toy_scorer(), keys, caps, load, text_calls="per_caption")
    assert got.shape == (6, 2)
    np.testing.assert_allclose(got, ref, atol=1e-5)
    np.testing.assert_allclose(per_caption, ref, atol=1e-5)
    assert got[0, 0] == got[2, 1] and got[3, 0] == got[3, 1]  # same image + same caption string: one feature
    assert np.array_equal(got.argmax(1), ref.argmax(1))


def test_cross_scores_each_unique_pair_once_reading_each_image_once(images):
    paths, load, reads = images
    keys, caps = _items(paths)
    scorer = Counting(ToyCrossScorer())
    got = score_choices(scorer, keys, caps, load, EngineOptions(pair_batch=3))
    n_unique_pairs = len({(k, c) for k, cs in zip(keys, caps, strict=True) for c in cs})
    assert scorer.pairs == n_unique_pairs == 8
    assert set(reads.values()) == {1}  # pairs sorted by image: an image straddling two batches stays loaded
    ref = naive_choice_scores(ToyCrossScorer(), keys, caps, load)
    np.testing.assert_allclose(got, ref, atol=1e-5)


def test_cross_pair_batch_defaults_to_the_scorers_own(images):
    paths, load, _ = images
    keys, caps = _items(paths)
    sizes = []

    class Sized(ToyCrossScorer):
        pair_batch = 3

        def score_pairs(self, ims, texts):
            sizes.append(len(ims))
            return super().score_pairs(ims, texts)

    score_choices(Sized(), keys, caps, load)
    assert max(sizes) == 3 and sum(sizes) == 8
    sizes.clear()
    score_choices(Sized(), keys, caps, load, EngineOptions(pair_batch=5))
    assert sizes == [5, 3]


def test_feature_cache_is_shared_and_bound_to_its_scorer(images):
    paths, load, _ = images
    keys, caps = _items(paths)
    scorer = Counting(toy_scorer())
    cache = FeatureCache(scorer)
    a = score_choices(scorer, keys, caps, load, cache=cache)
    b = score_choices(scorer, keys[::-1], caps[::-1], load, cache=cache)
    assert scorer.images == 4 and len(scorer.texts) == 4 and set(scorer.texts.values()) == {1}
    np.testing.assert_array_equal(a[::-1], b)
    with pytest.raises(ValueError, match="FeatureCache belongs to scorer"):
        score_choices(Counting(toy_scorer()), keys, caps, load, cache=cache)


def test_lookup_scorer_gives_back_its_table(tmp_path):
    write_image(tmp_path / "a.png", ids=(1, 2))
    from PIL import Image

    im = Image.open(tmp_path / "a.png")
    left, right = im.crop((0, 0, 10, 10)), im.crop((25, 0, 40, 10))
    s = LookupScorer({(1, "x"): 0.7, (2, "x"): -0.2, (2, "y"): 0.5})
    got = score_choices(s, ["L", "R"], [("x", "y"), ("x", "y")], {"L": left, "R": right}.__getitem__)
    np.testing.assert_allclose(got, [[0.7, 0.0], [-0.2, 0.5]], atol=1e-6)


# --------------------------------------------------------------------------- retrieval


def _retrieval_fixture(tmp_path):
    keys = [str(write_image(tmp_path / f"r{i}.png", ids=(i,))) for i in range(3)]
    texts = ["t0", "t1", "t2", "t3", "t4", "t5"]

    def load(key):
        from PIL import Image

        return Image.open(key).convert("RGB")

    itc = {(0, "t0"): 0.9, (0, "t3"): 0.8, (0, "t1"): 0.5, (1, "t2"): 0.9, (1, "t1"): 0.3, (2, "t4"): 0.6,
           (2, "t5"): 0.5, (2, "t1"): 0.55}
    itm = {(i, t): 10.0 * i + k for i in range(3) for k, t in enumerate(texts)}  # cross scores: all distinct
    return keys, texts, load, LookupCrossScorer(itm, itc)


def test_rerank_scores_only_the_itc_top_k_and_fills_the_rest(tmp_path):
    keys, texts, load, scorer = _retrieval_fixture(tmp_path)
    i2t, t2i, mode = retrieval_scores(scorer, keys, texts, load, EngineOptions(k_test=2, pair_batch=2))
    assert mode == "rerank"
    # image 0's ITC top-2 texts are t0 (0.9) and t3 (0.8); they get the cross score, the others -100
    assert i2t[0].tolist() == [0.0, RERANK_FILL, RERANK_FILL, 3.0, RERANK_FILL, RERANK_FILL]
    # image 2: t4 (0.6) and t1 (0.55)
    assert i2t[2].tolist() == [RERANK_FILL, 21.0, RERANK_FILL, RERANK_FILL, 24.0, RERANK_FILL]
    # text t1: ITC 0.5 / 0.3 / 0.55 -> images 2 and 0; text t5: only image 2 scores > 0, then the
    # tie 0.0 / 0.0 goes to the lower index (image 0)
    assert t2i[:, 1].tolist() == [1.0, RERANK_FILL, 21.0]
    assert t2i[:, 5].tolist() == [5.0, RERANK_FILL, 25.0]
    assert sum(scorer.pairs.values()) == len(scorer.pairs)  # a pair both directions need is scored once
    ref_i2t, ref_t2i, _ = naive_retrieval_scores(scorer, keys, texts, load, k_test=2)
    np.testing.assert_array_equal(i2t, ref_i2t)
    np.testing.assert_array_equal(t2i, ref_t2i)


def test_retrieval_modes(tmp_path):
    keys, texts, load, scorer = _retrieval_fixture(tmp_path)
    scorer.retrieval_mode = "dual_view"  # FLAVA: unimodal cosine only
    i2t, t2i, mode = retrieval_scores(scorer, keys, texts, load)
    assert mode == "dual_view" and i2t is t2i and i2t[0, 0] == pytest.approx(0.9) and not scorer.pairs
    full, _, mode = retrieval_scores(LookupCrossScorer({(1, "t2"): 4.0}), keys, texts, load, mode="full")
    assert mode == "full" and full[1, 2] == 4.0 and full.shape == (3, 6)
    assert retrieval_mode(toy_scorer()) == "dual"
    with pytest.raises(ValueError, match="needs a cross scorer with dual_view"):
        retrieval_mode(toy_scorer(), "rerank")
    with pytest.raises(ValueError, match="retrieval mode must be one of"):
        retrieval_mode(toy_scorer(), "fast")


def test_toy_cross_rerank_matches_naive(images):
    paths, load, _ = images
    texts = CAPTIONS[:4] + ["a bird", "three boats"]
    i2t, t2i, _ = retrieval_scores(ToyCrossScorer(k_test=3), paths, texts, load)
    ref_i2t, ref_t2i, _ = naive_retrieval_scores(ToyCrossScorer(k_test=3), paths, texts, load)
    np.testing.assert_allclose(i2t, ref_i2t, atol=1e-5)
    np.testing.assert_allclose(t2i, ref_t2i, atol=1e-5)
    assert ((i2t != RERANK_FILL).sum(1) == 3).all() and ((t2i != RERANK_FILL).sum(0) == 3).all()


def test_topk_stable_breaks_ties_to_the_lower_index():
    s = np.array([[0.1, 0.5, 0.5, 0.2], [1.0, 1.0, 1.0, 1.0]])
    assert topk_stable(s, 2).tolist() == [[1, 2], [0, 1]]
    assert topk_stable(s, 10).shape == (2, 4)


# --------------------------------------------------------------------------- bad input


def test_bad_inputs_name_the_problem(images):
    paths, load, _ = images
    keys, caps = _items(paths)
    s = toy_scorer()
    with pytest.raises(ValueError, match="5 image keys but 6 caption lists"):
        score_choices(s, keys[:5], caps, load)
    with pytest.raises(ValueError, match="item 1 has 1 captions, item 0 has 2"):
        score_choices(s, keys[:2], [caps[0], caps[1][:1]], load)
    with pytest.raises(ValueError, match="item 0: caption '  ' is empty"):
        score_choices(s, keys[:1], [("  ", "a")], load)

    class Bad:
        name, kind = "bad", "dual"

        def encode_images(self, ims):
            return torch.zeros(len(ims) + 1, 4)

        def encode_texts(self, texts):
            return torch.zeros(len(texts), 4)

    with pytest.raises(ValueError, match=r"scorer 'bad': encode_images returned \(5, 4\) for 4 inputs"):
        score_choices(Bad(), keys, caps, load)
    Bad.kind = "triple"
    with pytest.raises(ValueError, match="kind must be 'dual' or 'cross', got 'triple'"):
        score_choices(Bad(), keys, caps, load)
    with pytest.raises(ValueError, match="pair_batch must be a positive int"):
        EngineOptions(pair_batch=0)
    import pandas as pd

    with pytest.raises(ValueError, match="x: 1 items in meta but 2 image keys"):
        ChoiceTask("x", pd.DataFrame({"a": [1]}), keys[:2], caps[:2], load, lambda m, s: {})
