"""ARO's wrong-image control and text-swap cosine, and the engine pieces behind them: the derangement, the
control scores against a one-item loop, the aggregates by hand, identical options tied by their texts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vlcomp.benchmarks.aro import aggregate_vg_attribution, aggregate_vg_relation
from vlcomp.eval.common import derangement
from vlcomp.eval.engine import ChoiceTask, naive_task, score_task, tie_identical_options

from .helpers import assert_tables_match, toy_scorer, write_image, write_noise


@pytest.mark.parametrize("n", [2, 3, 10, 257])
def test_derangement_is_a_permutation_without_fixed_points(n: int) -> None:
    for seed in range(20):
        d = derangement(n, np.random.default_rng(seed))
        assert sorted(d.tolist()) == list(range(n))
        assert not np.any(d == np.arange(n))


def test_derangement_is_seeded_and_rejects_one_item() -> None:
    a = derangement(50, np.random.default_rng(4))
    assert np.array_equal(a, derangement(50, np.random.default_rng(4)))
    assert derangement(2, np.random.default_rng(0)).tolist() == [1, 0]
    with pytest.raises(ValueError, match="at least 2"):
        derangement(1, np.random.default_rng(0))


def _relation_table() -> pd.DataFrame:
    # 'a' (4 cases): own image 3/4, wrong image 1/4; 'b' (2): 1/2 and 2/2; 'c' excluded (1/1 and 0/1)
    return pd.DataFrame({
        "relation": ["a"] * 4 + ["b"] * 2 + ["c"], "relation_group": ["spatial"] * 4 + ["verbs"] * 2 + ["spatial"],
        "correct": [True, True, True, False, True, False, True],
        "wrong_correct": [True, False, False, False, True, True, False],
        "tie": [False] * 7, "text_cosine": [0.9, 0.9, 0.9, 0.9, 0.6, 0.6, 0.0], "excluded": [False] * 6 + [True]})


def test_vg_relation_controls_by_hand() -> None:
    out = aggregate_vg_relation({"vg_relation": _relation_table()})
    assert out["aro/vg_relation/macro_acc"] == pytest.approx((3 / 4 + 1 / 2) / 2)
    assert out["aro/vg_relation/wrong_image_macro_acc"] == pytest.approx((1 / 4 + 2 / 2) / 2)
    assert out["aro/vg_relation/text_swap_cosine"] == pytest.approx((4 * 0.9 + 2 * 0.6) / 6)  # excluded left out
    assert out["aro/vg_relation/spatial_macro_acc"] == pytest.approx(3 / 4)  # groups from the table's column
    assert out["aro/vg_relation/verbs_macro_acc"] == pytest.approx(1 / 2)


def test_vg_attribution_controls_by_hand() -> None:
    df = pd.DataFrame({"pair": ["red_blue"] * 3 + ["big_small"] * 2 + ["x_y"],
                       "correct": [True, True, False, True, True, False], "tie": [False] * 6,
                       "wrong_correct": [True, False, False, False, True, True],
                       "text_cosine": [1.0, 0.5, 0.0, 0.5, 0.5, 0.5]})
    out = aggregate_vg_attribution({"vg_attribution": df}, min_count=2)  # x_y has 1 case: dropped
    assert out["aro/vg_attribution/macro_acc"] == pytest.approx((2 / 3 + 1) / 2)
    assert out["aro/vg_attribution/wrong_image_macro_acc"] == pytest.approx((1 / 3 + 1 / 2) / 2)
    assert out["aro/vg_attribution/text_swap_cosine"] == pytest.approx(0.5)  # the mean over every case


def test_identical_options_tie_by_their_text() -> None:
    scores = np.array([[0.5, 0.50001, 0.2], [0.1, 0.3, 0.30002]], dtype=np.float32)
    got = tie_identical_options(scores.copy(), [("a b", "a b", "c"), ("x", "y", "y")])
    assert got.tolist() == [[0.5, 0.5, scores[0, 2]], [scores[1, 0], scores[1, 1], scores[1, 1]]]


def test_controls_and_text_pairs_match_a_one_item_loop(tmp_path) -> None:
    keys = [str(write_image(tmp_path / f"{i}.png", ids=(i,))) for i in range(4)]
    caps = [("the red circle", "the blue circle"), ("a star", "a cross"), ("a star", "a star"),
            ("the heart is above the arrow", "the arrow is above the heart")]
    from PIL import Image

    task = ChoiceTask(name="t", meta=pd.DataFrame({"i": range(4)}), image_keys=keys, captions=caps,
                      load_image=lambda k: Image.open(k).convert("RGB"),
                      finish=lambda m, s, extras=None: {"t": m.assign(s0=s[:, 0], s1=s[:, 1],
                                                                       w0=extras["wrong"][:, 0],
                                                                       w1=extras["wrong"][:, 1], cos=extras["cos"])},
                      controls={"wrong": [keys[j] for j in (1, 2, 3, 0)]}, text_pairs={"cos": (0, 1)})
    batched, naive = score_task(toy_scorer(), task), naive_task(toy_scorer(), task)
    assert_tables_match(batched, naive)
    t = batched["t"]
    assert t["cos"].iloc[2] == 1.0 and t["s0"].iloc[2] == t["s1"].iloc[2]  # the same caption twice
    direct = toy_scorer().score_pairs([Image.open(keys[1]).convert("RGB")], [caps[0][0]])  # item 0 on image 1
    np.testing.assert_allclose(t["w0"].iloc[0], float(direct[0]), atol=1e-5)
    with pytest.raises(ValueError, match="control 'wrong' has 3 image keys for 4 items"):
        ChoiceTask(name="t", meta=pd.DataFrame({"i": range(4)}), image_keys=keys, captions=caps,
                   load_image=None, finish=None, controls={"wrong": keys[:3]})


def test_image_shuffle_tasks_reuse_the_clean_caption_features(tmp_path) -> None:
    """An image perturbation leaves the texts alone: a shuffled-image retrieval task after the clean one encodes no
    caption again (and its scores equal a fresh, uncached run of the perturbed task)."""
    import torch
    from PIL import Image

    from vlcomp.eval.engine import FeatureCache, ImagePerturbedScorer, RetrievalTask
    from vlcomp.perturb_image import IMAGE_PERTURBATIONS

    keys = [str(write_image(tmp_path / f"{i}.png", ids=(i, i + 1))) for i in range(3)]
    texts = ["a red circle", "a blue square", "a star", "a cross", "a heart", "an arrow"]
    base = toy_scorer()
    calls = []
    real = base.encode_texts
    base.encode_texts = lambda t: calls.append(len(t)) or real(t)
    try:
        def task(view):
            return RetrievalTask(name="r", image_meta=pd.DataFrame({"i": range(3)}),
                                 text_meta=pd.DataFrame({"t": range(6)}), image_keys=keys, texts=texts,
                                 text_to_image=[0, 0, 1, 1, 2, 2], load_image=lambda k: Image.open(k).convert("RGB"),
                                 finish=lambda im, tm, a, b: {"s": pd.DataFrame(a)}, scorer_view=view)

        def view(s):
            gen = torch.Generator().manual_seed(0)
            return ImagePerturbedScorer(s, lambda x: IMAGE_PERTURBATIONS["shuffle_rows_4"](x, gen=gen), "rows")

        cache = FeatureCache(base)
        score_task(base, [task(None)], cache=cache)
        n_clean = sum(calls)
        shared = score_task(base, [task(view)], cache=cache)["s"]
        assert sum(calls) == n_clean == 6  # the shuffled-image task encoded no caption
        fresh = score_task(base, [task(view)])["s"]
        np.testing.assert_allclose(shared.to_numpy(), fresh.to_numpy(), atol=1e-6)
    finally:
        base.encode_texts = real


@pytest.mark.parametrize("budget_mb", [1024, 0])
def test_image_shuffle_views_read_each_image_once_and_keep_the_same_bits(tmp_path, budget_mb) -> None:
    """Two image-shuffle views of one run read each image once (the second takes the preprocessed pixels from the
    shared cache), and score bitwise as a run without the pixel cache (budget 0: every view reads again)."""
    import pandas as pd
    import torch
    from PIL import Image

    from vlcomp.eval.engine import EngineOptions, FeatureCache, ImagePerturbedScorer, RetrievalTask
    from vlcomp.perturb_image import IMAGE_PERTURBATIONS

    keys = [str(write_noise(tmp_path / f"{i}.png", seed=i)) for i in range(3)]
    texts = ["a red circle", "a blue square", "a star", "a cross", "a heart", "an arrow"]
    reads: list[str] = []

    def load(k):
        reads.append(k)
        return Image.open(k).convert("RGB")

    def task(seed):
        def view(s):
            gen = torch.Generator().manual_seed(seed)
            return ImagePerturbedScorer(s, lambda x: IMAGE_PERTURBATIONS["shuffle_rows_4"](x, gen=gen), "rows")

        return RetrievalTask(name=f"r{seed}", image_meta=pd.DataFrame({"i": range(3)}),
                             text_meta=pd.DataFrame({"t": range(6)}), image_keys=keys, texts=texts,
                             text_to_image=[0, 0, 1, 1, 2, 2], load_image=load,
                             finish=lambda im, tm, a, b, seed=seed: {f"s{seed}": pd.DataFrame(a)}, scorer_view=view)

    base = toy_scorer()
    options = EngineOptions(image_chunk=2, pixel_cache_mb=budget_mb)
    cache = FeatureCache(base)
    shared = score_task(base, [task(0), task(1)], options, cache=cache)
    assert len(reads) == (3 if budget_mb else 6)
    assert len(cache.pixels) == (3 if budget_mb else 0)
    no_cache = EngineOptions(image_chunk=2, pixel_cache_mb=0)  # fresh caches: every view reads its images
    alone = {**score_task(base, [task(0)], no_cache), **score_task(base, [task(1)], no_cache)}
    for name in ("s0", "s1"):
        assert np.array_equal(shared[name].to_numpy(), alone[name].to_numpy())
    assert not np.array_equal(shared["s0"].to_numpy(), shared["s1"].to_numpy())  # the two seeds do differ


def test_vg_relation_kind_split_by_hand() -> None:
    """Geometric: "above" 2 cases (1/2, wrong 2/2), "under" 1 case (1/1, wrong 0/1); role: "sitting on" (toy kind) 2
    cases (2/2, wrong 0/2), "wearing" (not geometric in ARO Table 2) 1 case (0/1, wrong 1/1); "beneath" excluded."""
    df = pd.DataFrame({
        "relation": ["above", "above", "under", "sitting on", "sitting on", "wearing", "beneath"],
        "correct": [True, False, True, True, True, False, True],
        "wrong_correct": [True, True, False, False, False, True, True],
        "tie": [False] * 7, "text_cosine": [0.5] * 7, "excluded": [False] * 6 + [True]})
    out = aggregate_vg_relation({"vg_relation": df})
    p = "aro/vg_relation"
    assert out[f"{p}/geometric_macro_acc"] == pytest.approx((1 / 2 + 1) / 2)
    assert out[f"{p}/geometric_wrong_image_macro_acc"] == pytest.approx((1 + 0) / 2)
    assert out[f"{p}/role_macro_acc"] == pytest.approx((1 + 0) / 2)
    assert out[f"{p}/role_wrong_image_macro_acc"] == pytest.approx((0 + 1) / 2)
    assert out[f"{p}/geometric_n_cases"] == 3 and out[f"{p}/role_n_cases"] == 3
    # the two halves' relations partition the macro's
    assert out[f"{p}/macro_acc"] == pytest.approx((1 / 2 + 1 + 1 + 0) / 4)


def test_relation_kind_rules() -> None:
    from vlcomp.metrics.aro import VG_GEOMETRIC_RELATIONS, relation_kind

    assert len(VG_GEOMETRIC_RELATIONS) == 8
    assert relation_kind("beneath") == relation_kind("to the left of") == "geometric"
    assert relation_kind("covering") == "geometric"  # the toy's own kind (any two shapes can overlap)
    assert relation_kind("pointing at") == relation_kind("hanging from") == relation_kind("holding") == "role"
