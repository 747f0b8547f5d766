"""ARO decision rule, tie rules and macro accuracy (incl. ARO Table 2's macro rows)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vlcomp.metrics.aro import (
    ORDER_CORRECT_INDEX,
    ORDER_TIE_RULE,
    SUGARCREPE_TIE_RULE,
    VG_ATTRIBUTION_MIN_COUNT,
    VG_CORRECT_INDEX,
    VG_RELATION_GROUP_OF,
    VG_RELATION_MIN_COUNT,
    VG_SPATIAL_RELATIONS,
    VG_TIE_RULE,
    VG_VERB_RELATIONS,
    TieRule,
    accuracy,
    filter_groups,
    group_macro,
    macro_accuracy,
    macro_from_per_group,
    per_group_accuracy,
    pick_correct,
    vg_attribution_group,
)

# --------------------------------------------------------------------------------------------- constants


def test_tie_rule_constants_are_pinned() -> None:
    assert VG_TIE_RULE is TieRule.TIE_COUNTS_WRONG
    assert ORDER_TIE_RULE is TieRule.TIE_COUNTS_RIGHT
    assert SUGARCREPE_TIE_RULE is TieRule.TIE_COUNTS_WRONG
    assert VG_CORRECT_INDEX == 1 and ORDER_CORRECT_INDEX == 0
    assert TieRule("tie_counts_wrong") is TieRule.TIE_COUNTS_WRONG


def test_count_filters_are_pinned() -> None:
    assert VG_ATTRIBUTION_MIN_COUNT == 25
    assert VG_RELATION_MIN_COUNT == 0


def test_vg_relation_groups_match_table2() -> None:
    assert len(VG_SPATIAL_RELATIONS) == 13 and len(VG_VERB_RELATIONS) == 32
    assert len(VG_RELATION_GROUP_OF) == 45
    assert set(VG_RELATION_GROUP_OF.values()) == {"spatial", "verbs"}


def test_vg_attribution_group_is_ordered_pair() -> None:
    assert vg_attribution_group("white", "paved") == "white_paved"
    assert vg_attribution_group("paved", "white") != vg_attribution_group("white", "paved")


# ----------------------------------------------------------------------------------------- pick_correct


def _tied_scores(rng: np.random.Generator, n: int, n_options: int) -> np.ndarray:
    """Small-integer scores so that exact ties (including at the maximum) are frequent."""
    return rng.integers(0, 3, size=(n, n_options)).astype(np.float32)


def test_vg_layout_equals_np_argmax_including_ties() -> None:
    scores = _tied_scores(np.random.default_rng(0), 500, 2)  # [N, 2] = [false, true]
    assert (scores[:, 0] == scores[:, 1]).sum() > 50  # the test really covers ties
    got = pick_correct(scores, VG_CORRECT_INDEX, VG_TIE_RULE)
    np.testing.assert_array_equal(got, np.argmax(scores, 1) == 1)


def test_order_layout_equals_np_argmax_including_ties() -> None:
    scores = _tied_scores(np.random.default_rng(1), 500, 5)  # [N, 5] = [original, 4 perturbations]
    top_ties = (scores == scores.max(1, keepdims=True)).sum(1) > 1
    assert top_ties.sum() > 50
    got = pick_correct(scores, ORDER_CORRECT_INDEX, ORDER_TIE_RULE)
    np.testing.assert_array_equal(got, np.argmax(scores, 1) == 0)


def test_exact_ties_follow_the_named_rule() -> None:
    vg = np.array([[0.3, 0.3], [0.2, 0.5], [0.5, 0.2]])
    np.testing.assert_array_equal(pick_correct(vg, 1, VG_TIE_RULE), [False, True, False])
    order = np.array([[0.3, 0.3, 0.1, 0.3, 0.0], [0.3, 0.4, 0.1, 0.3, 0.0], [0.9, 0.1, 0.1, 0.1, 0.1]])
    np.testing.assert_array_equal(pick_correct(order, 0, ORDER_TIE_RULE), [True, False, True])
    # the same tie under the other rule flips
    np.testing.assert_array_equal(pick_correct(order, 0, TieRule.TIE_COUNTS_WRONG), [False, False, True])


def test_per_item_correct_index() -> None:
    scores = np.array([[1.0, 2.0, 0.0], [1.0, 2.0, 0.0], [5.0, 5.0, 5.0]])
    got = pick_correct(scores, np.array([1, 0, 2]), "tie_counts_right")
    np.testing.assert_array_equal(got, [True, False, True])


def test_pick_correct_accepts_ints_and_single_option() -> None:
    np.testing.assert_array_equal(pick_correct(np.array([[3, 1], [1, 3]]), 1, VG_TIE_RULE), [False, True])
    np.testing.assert_array_equal(pick_correct(np.zeros((2, 1)), 0, VG_TIE_RULE), [True, True])


@pytest.mark.parametrize(
    ("scores", "index", "match"),
    [
        (np.zeros((3, 1, 2)), 1, "scores"),
        (np.array([[np.nan, 1.0]]), 1, "NaN"),
        (np.zeros((3, 2)), 2, "correct_index"),
        (np.zeros((3, 2)), np.array([0, 1]), "correct_index"),
        (np.zeros((3, 2)), 0.5, "correct_index"),
    ],
)
def test_pick_correct_rejects_bad_input(scores: np.ndarray, index: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        pick_correct(scores, index, VG_TIE_RULE)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------ macro accuracy


def test_macro_accuracy_small_example() -> None:
    correct = np.array([True, True, False, True])
    groups = ["a", "a", "a", "b"]
    macro, per_group = macro_accuracy(correct, groups)
    assert macro == pytest.approx((2 / 3 + 1.0) / 2)
    assert accuracy(correct) == pytest.approx(0.75)  # micro differs from macro
    assert list(per_group.columns) == ["group", "accuracy", "count"]
    assert per_group["group"].tolist() == ["a", "b"]
    assert per_group["count"].tolist() == [3, 1]
    assert macro == pytest.approx(per_group["accuracy"].mean())

    macro_min, kept = macro_accuracy(correct, groups, min_count=2)
    assert macro_min == pytest.approx(2 / 3) and kept["group"].tolist() == ["a"]
    macro_ex, kept = macro_accuracy(correct, groups, exclude={"a", "not-present"})
    assert macro_ex == 1.0 and kept["group"].tolist() == ["b"]


def test_vg_attribution_min_count_keeps_exactly_25() -> None:
    groups = ["x_y"] * 25 + ["y_x"] * 24
    correct = np.array([True] * 25 + [False] * 24)
    macro, kept = macro_accuracy(correct, groups, min_count=VG_ATTRIBUTION_MIN_COUNT)
    assert kept["group"].tolist() == ["x_y"] and macro == 1.0
    assert len(per_group_accuracy(correct, groups)) == 2  # unfiltered table keeps both


def test_macro_accuracy_errors() -> None:
    with pytest.raises(ValueError, match="groups"):
        macro_accuracy(np.array([True, False]), ["a"])
    with pytest.raises(ValueError, match="no group left"):
        macro_accuracy(np.array([True]), ["a"], exclude={"a"})
    with pytest.raises(ValueError, match="min_count"):
        macro_accuracy(np.array([True]), ["a"], min_count=-1)
    with pytest.raises(ValueError, match="correct"):
        macro_accuracy(np.array([0.5, 1.0]), ["a", "b"])
    with pytest.raises(ValueError, match="missing columns"):
        macro_from_per_group(pd.DataFrame({"group": ["a"], "acc": [1.0]}))


def test_group_macro_unmapped_groups() -> None:
    per_group = pd.DataFrame(
        {"group": ["on", "riding", "near"], "accuracy": [0.2, 0.8, 0.0], "count": [5, 5, 5]}
    )
    assert group_macro(per_group, VG_RELATION_GROUP_OF) == {"spatial": 0.2, "verbs": 0.8}
    with pytest.raises(ValueError, match="near"):
        group_macro(per_group, VG_RELATION_GROUP_OF, strict=True)
    assert filter_groups(per_group, exclude={"near"})["group"].tolist() == ["on", "riding"]


# ------------------------------------------------------------- ARO Table 2 (catalog aro_negclip.md §4.5)

MODELS = ("CLIP", "NegCLIP", "CLIP-FT", "XVLM", "BLIP", "Flava")
# relation, (CLIP, NegCLIP, CLIP-FT, XVLM, BLIP, Flava), # samples -- transcribed from ARO Table 2.
TABLE2 = [
    ("above", (0.48, 0.60, 0.54, 0.80, 0.64, 0.55), 269),
    ("at", (0.59, 0.93, 0.71, 0.72, 0.49, 0.15), 75),
    ("behind", (0.56, 0.29, 0.34, 0.82, 0.77, 0.28), 574),
    ("below", (0.56, 0.46, 0.48, 0.74, 0.69, 0.44), 209),
    ("beneath", (0.80, 0.70, 0.70, 0.80, 0.70, 0.40), 10),
    ("in", (0.63, 0.89, 0.63, 0.73, 0.72, 0.09), 708),
    ("in front of", (0.54, 0.75, 0.70, 0.66, 0.55, 0.78), 588),
    ("inside", (0.50, 0.91, 0.67, 0.69, 0.72, 0.12), 58),
    ("on", (0.52, 0.86, 0.58, 0.86, 0.76, 0.12), 1684),
    ("on top of", (0.43, 0.75, 0.58, 0.85, 0.79, 0.19), 201),
    ("to the left of", (0.49, 0.50, 0.50, 0.52, 0.51, 0.50), 7741),
    ("to the right of", (0.49, 0.50, 0.50, 0.52, 0.49, 0.51), 7741),
    ("under", (0.64, 0.43, 0.54, 0.86, 0.73, 0.27), 132),
    ("carrying", (0.33, 0.83, 0.75, 0.75, 0.67, 0.08), 12),
    ("covered by", (0.47, 0.36, 0.36, 0.61, 0.58, 0.56), 36),
    ("covered in", (0.79, 0.50, 0.50, 0.14, 0.29, 0.14), 14),
    ("covered with", (0.56, 0.56, 0.50, 0.56, 0.50, 0.19), 16),
    ("covering", (0.39, 0.58, 0.45, 0.67, 0.55, 0.06), 33),
    ("cutting", (0.75, 0.83, 0.83, 0.67, 0.25, 0.00), 12),
    ("eating", (0.57, 1.00, 0.67, 0.62, 0.52, 0.00), 21),
    ("feeding", (0.90, 0.80, 0.80, 0.60, 0.30, 0.20), 10),
    ("grazing on", (0.10, 0.90, 0.30, 0.60, 0.40, 0.50), 10),
    ("hanging on", (0.79, 1.00, 0.93, 0.93, 0.79, 0.00), 14),
    ("holding", (0.58, 0.97, 0.79, 0.67, 0.44, 0.27), 142),
    ("leaning on", (0.67, 1.00, 1.00, 0.75, 0.58, 0.08), 12),
    ("looking at", (0.84, 1.00, 0.68, 0.68, 0.55, 0.26), 31),
    ("lying in", (0.47, 1.00, 0.60, 0.87, 0.67, 0.00), 15),
    ("lying on", (0.60, 0.88, 0.50, 0.93, 0.75, 0.17), 60),
    ("parked on", (0.67, 0.86, 0.38, 0.76, 0.86, 0.00), 21),
    ("reflected in", (0.64, 0.71, 0.57, 0.50, 0.43, 0.43), 14),
    ("resting on", (0.38, 0.85, 0.23, 0.92, 0.54, 0.15), 13),
    ("riding", (0.71, 0.98, 0.78, 0.82, 0.41, 0.02), 51),
    ("sitting at", (0.62, 1.00, 0.88, 0.88, 0.46, 0.00), 26),
    ("sitting in", (0.57, 0.96, 0.78, 0.87, 0.83, 0.30), 23),
    ("sitting on", (0.58, 0.97, 0.78, 0.94, 0.73, 0.14), 175),
    ("sitting on top of", (0.50, 0.90, 0.80, 1.00, 0.80, 0.10), 10),
    ("standing by", (0.67, 0.92, 0.67, 0.83, 0.67, 0.67), 12),
    ("standing in", (0.73, 0.98, 0.69, 0.69, 0.49, 0.05), 59),
    ("standing on", (0.60, 1.00, 0.63, 0.83, 0.73, 0.06), 52),
    ("surrounded by", (0.64, 0.71, 0.64, 0.71, 0.64, 0.79), 14),
    ("using", (0.84, 1.00, 1.00, 0.68, 0.58, 0.00), 19),
    ("walking in", (0.70, 1.00, 0.70, 0.60, 0.50, 0.00), 10),
    ("walking on", (0.79, 1.00, 0.79, 0.84, 0.42, 0.05), 19),
    ("watching", (0.45, 0.55, 0.27, 0.59, 0.68, 0.36), 22),
    ("wearing", (0.47, 0.99, 0.88, 0.68, 0.48, 0.64), 949),
]
# (overall, spatial, verbs) macro rows, to 3 decimals as verified in the catalog (§2.1).
TABLE2_MACRO = {
    "CLIP": (0.591, 0.556, 0.605),
    "NegCLIP": (0.804, 0.659, 0.862),
    "CLIP-FT": (0.636, 0.575, 0.660),
    "XVLM": (0.728, 0.736, 0.725),
    "BLIP": (0.592, 0.658, 0.565),
    "Flava": (0.237, 0.338, 0.196),
}


def _table2_per_group(model: str) -> pd.DataFrame:
    col = MODELS.index(model)
    return pd.DataFrame(
        {
            "group": [rel for rel, _, _ in TABLE2],
            "accuracy": [accs[col] for _, accs, _ in TABLE2],
            "count": [n for _, _, n in TABLE2],
        }
    )


def test_table2_transcription_is_complete() -> None:
    assert [rel for rel, _, _ in TABLE2] == list(VG_SPATIAL_RELATIONS) + list(VG_VERB_RELATIONS)
    assert sum(n for _, _, n in TABLE2) == 21_917  # catalog §2.1


@pytest.mark.parametrize("model", MODELS)
def test_table2_macro_rows_reproduced(model: str) -> None:
    per_group = _table2_per_group(model)
    overall = macro_from_per_group(per_group)
    sub = group_macro(per_group, VG_RELATION_GROUP_OF, strict=True)
    assert (round(overall, 3), round(sub["spatial"], 3), round(sub["verbs"], 3)) == TABLE2_MACRO[model]


def test_table2_negclip_micro_is_very_different() -> None:
    per_group = _table2_per_group("NegCLIP")
    micro = float(np.average(per_group["accuracy"], weights=per_group["count"]))
    assert micro == pytest.approx(0.586, abs=1e-3)  # catalog §2.1: "≈0.586"
    assert macro_from_per_group(per_group) - micro > 0.2


def test_table2_end_to_end_from_per_item_results() -> None:
    """Per-item results synthesised with Table 2's counts give back CLIP's macro rows (to rounding)."""
    correct_parts, groups = [], []
    for rel, accs, n in TABLE2 + [("near", (0.0,) * 6, 500)]:  # "near" is on the exclusion list
        k = round(accs[0] * n)
        correct_parts.append(np.arange(n) < k)
        groups += [rel] * n
    correct = np.concatenate(correct_parts)
    macro, per_group = macro_accuracy(correct, groups, min_count=VG_RELATION_MIN_COUNT, exclude={"near"})
    assert len(per_group) == 45
    sub = group_macro(per_group, VG_RELATION_GROUP_OF, strict=True)
    overall, spatial, verbs = TABLE2_MACRO["CLIP"]
    assert macro == pytest.approx(overall, abs=5e-3)
    assert sub["spatial"] == pytest.approx(spatial, abs=5e-3)
    assert sub["verbs"] == pytest.approx(verbs, abs=5e-3)
