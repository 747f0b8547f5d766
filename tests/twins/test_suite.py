"""The VG scorers' wrong-image control: the derangement, batched scoring against a naive loop, the aggregates."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from vlcomp.eval.toy_suite import (
    EvalContext,
    _pair_scores,
    aggregate_vg_attribution,
    aggregate_vg_relation,
    derangement,
)
from vlcomp.models.encode import encode_images, encode_texts
from vlcomp.models.factory import ModelSpec, create_model
from vlcomp.text.tokenizer import get_tokenizer


@pytest.mark.parametrize("n", [2, 3, 10, 257])
def test_derangement_is_a_permutation_without_fixed_points(n: int) -> None:
    for seed in range(20):
        d = derangement(n, np.random.default_rng(seed))
        assert sorted(d.tolist()) == list(range(n))
        assert not np.any(d == np.arange(n))


def test_derangement_is_seeded_and_rejects_one_item() -> None:
    a = derangement(50, np.random.default_rng(4))
    b = derangement(50, np.random.default_rng(4))
    assert np.array_equal(a, b)
    assert derangement(2, np.random.default_rng(0)).tolist() == [1, 0]
    with pytest.raises(ValueError, match="at least 2"):
        derangement(1, np.random.default_rng(0))


def test_pair_scores_match_a_one_case_loop(tmp_path: Path) -> None:
    spec = ModelSpec("toy-rn16", None, "world", 32)
    model = create_model(spec, init_seed=1).eval()
    tok = get_tokenizer("world", spec.arch, 32)
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8) for h, w in ((20, 30), (48, 48), (13, 40), (30, 22))]
    options = [["the red circle and the blue square", "the blue circle and the red square"],
               ["the star is above the cross", "the cross is above the star"],
               ["the star is above the cross", "a heart"],  # a caption shared with another case
               ["the green heart and the white arrow", "the white heart and the green arrow"]]
    wrong = np.array([2, 3, 1, 0])
    ctx = EvalContext(model, tok, tmp_path, tmp_path, seed=0, batch_size=3)
    own, other = _pair_scores(ctx, images, options, image_of=(wrong,))
    assert ctx.n_encoded_texts == 7  # each unique caption once
    keyed = _pair_scores(ctx, images, options, image_of=(wrong,), keys=[("a",), ("b",), ("c",), ("d",)])
    assert ctx.n_encoded_crops == 4 and ctx.n_encoded_texts == 7
    np.testing.assert_allclose(keyed[0], own, atol=1e-5)
    np.testing.assert_allclose(keyed[1], other, atol=1e-5)
    for n in range(len(options)):
        ft = encode_texts(model, tok, options[n])
        for got, img in ((own, images[n]), (other, images[wrong[n]])):
            fi = encode_images(model, [img])
            torch.testing.assert_close(torch.as_tensor(got[n]), (fi @ ft.T)[0], atol=1e-5, rtol=1e-5)


def _relation_items() -> pd.DataFrame:
    # 'a' (4 cases): own image 3/4, wrong image 1/4; 'b' (2 cases): 1/2 and 2/2; 'c' excluded (1/1 and 0/1)
    return pd.DataFrame({
        "relation": ["a"] * 4 + ["b"] * 2 + ["c"],
        "correct": [1, 1, 1, 0, 1, 0, 1], "wrong_correct": [1, 0, 0, 0, 1, 1, 0],
        "text_cosine": [0.9, 0.9, 0.9, 0.9, 0.6, 0.6, 0.0],
        "excluded": [False] * 6 + [True], "group": ["spatial"] * 4 + ["verb"] * 2 + ["spatial"],
    }).astype({"correct": bool, "wrong_correct": bool})


def test_vg_relation_wrong_image_macro_by_hand() -> None:
    out = aggregate_vg_relation({"vg_relation": _relation_items()}, {})
    assert out["aro/vg_relation/macro_acc"] == pytest.approx((3 / 4 + 1 / 2) / 2)
    assert out["aro/vg_relation/wrong_image_macro_acc"] == pytest.approx((1 / 4 + 2 / 2) / 2)
    assert out["aro/vg_relation/text_swap_cosine"] == pytest.approx((4 * 0.9 + 2 * 0.6) / 6)  # excluded case left out


def test_vg_attribution_wrong_image_macro_by_hand() -> None:
    df = pd.DataFrame({"pair": ["red_blue"] * 3 + ["big_small"] * 2 + ["x_y"],
                       "kind": ["colour"] * 3 + ["size"] * 2 + ["colour"],
                       "correct": [True, True, False, True, True, False],
                       "wrong_correct": [True, False, False, False, True, True],
                       "text_cosine": [1.0, 0.5, 0.0, 0.5, 0.5, 0.5]})
    out = aggregate_vg_attribution({"vg_attribution": df}, {"vga_min_count": 2})  # x_y has 1 case: dropped
    assert out["aro/vg_attribution/macro_acc"] == pytest.approx((2 / 3 + 1) / 2)
    assert out["aro/vg_attribution/wrong_image_macro_acc"] == pytest.approx((1 / 3 + 1 / 2) / 2)
    assert out["aro/vg_attribution/text_swap_cosine"] == pytest.approx(0.5)


def test_crops_with_equal_keys_are_encoded_once_and_match(tmp_path: Path) -> None:
    spec = ModelSpec("toy-rn16", None, "world", 32)
    model = create_model(spec, init_seed=2).eval()
    ctx = EvalContext(model, get_tokenizer("world", spec.arch, 32), tmp_path, tmp_path, seed=0, batch_size=2)
    rng = np.random.default_rng(1)
    a, b = (rng.integers(0, 256, size=(20, 26, 3), dtype=np.uint8) for _ in range(2))
    first = ctx.crops([("i0", 1), ("i1", 2), ("i0", 1)], [a, b, a])
    again = ctx.crops([("i1", 2), ("i0", 1)], [b, a])  # a second benchmark asking for the same crops
    assert ctx.n_encoded_crops == 2
    ref = encode_images(model, [a, b])
    torch.testing.assert_close(first, ref[[0, 1, 0]], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(again, ref[[1, 0]], atol=1e-5, rtol=1e-5)
