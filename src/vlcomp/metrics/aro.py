"""ARO pick-the-right-caption scoring (VG-Relation, VG-Attribution, COCO/Flickr30k-Order) and macro accuracy.

Decision rule (ARO paper §5.1 / reference ``evaluate_scores``): each case has one image and ``L`` caption
options; the model scores every (image, option) pair and the case is correct iff the correct option wins.
No softmax or temperature is involved (arg-max is invariant to them).

Ties. The reference code takes ``np.argmax`` over the options, which returns the *first* maximum, so the
storage order decides ties:

- VG-R / VG-A store ``[false, true]`` (correct index 1): a tie picks the false caption, so **a tie counts
  wrong** (:data:`VG_TIE_RULE`). This matters for VG-A, where both captions hold the same multiset of words.
- COCO/Flickr-Order store ``[original, 4 perturbations]`` (correct index 0): a tie picks the original, so
  **a tie counts right** (:data:`ORDER_TIE_RULE`). Perturbations that return the caption unchanged tie.

Macro accuracy: VG-R is the unweighted mean over relations of per-relation accuracy after dropping the
reference's hard-coded exclusion list (no count filter); VG-A is the unweighted mean over ordered attribute
pairs ``f"{attr1}_{attr2}"`` with at least 25 cases. Micro (per-case) accuracy is not the headline.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd


class TieRule(enum.StrEnum):
    """How an exact tie between the correct option and the best other option is scored."""

    TIE_COUNTS_WRONG = "tie_counts_wrong"  # correct iff score[correct] >  max(other scores)
    TIE_COUNTS_RIGHT = "tie_counts_right"  # correct iff score[correct] >= max(other scores)


# Option layouts of the reference datasets (index of the correct caption in ``caption_options``).
VG_CORRECT_INDEX = 1  # VG-Relation / VG-Attribution: [false_caption, true_caption]
ORDER_CORRECT_INDEX = 0  # COCO-Order / Flickr30k-Order: [original, nouns_adj, allbut, within_tri, trigrams]

# np.argmax (first maximum) over those layouts gives these tie rules.
VG_TIE_RULE = TieRule.TIE_COUNTS_WRONG
ORDER_TIE_RULE = TieRule.TIE_COUNTS_RIGHT
# SugarCrepe's reference compares ``pos_score > neg_score`` (strict), so a tie counts wrong there too.
SUGARCREPE_TIE_RULE = TieRule.TIE_COUNTS_WRONG

# Per-group count filters of the reference code: VG-R has none, VG-A skips attribute pairs with < 25 cases.
VG_RELATION_MIN_COUNT = 0
VG_ATTRIBUTION_MIN_COUNT = 25

# ARO Table 2 sub-groups of VG-Relation (13 spatial + 32 verb relations).
VG_SPATIAL_RELATIONS: tuple[str, ...] = (
    "above", "at", "behind", "below", "beneath", "in", "in front of", "inside", "on", "on top of",
    "to the left of", "to the right of", "under",
)  # fmt: skip
VG_VERB_RELATIONS: tuple[str, ...] = (
    "carrying", "covered by", "covered in", "covered with", "covering", "cutting", "eating", "feeding",
    "grazing on", "hanging on", "holding", "leaning on", "looking at", "lying in", "lying on", "parked on",
    "reflected in", "resting on", "riding", "sitting at", "sitting in", "sitting on", "sitting on top of",
    "standing by", "standing in", "standing on", "surrounded by", "using", "walking in", "walking on",
    "watching", "wearing",
)  # fmt: skip
VG_RELATION_GROUP_OF: dict[str, str] = {
    **{r: "spatial" for r in VG_SPATIAL_RELATIONS},
    **{r: "verbs" for r in VG_VERB_RELATIONS},
}

#: ARO Table 2's geometric relations (catalog §4.5: 17,264 of VG-R's 21,917 cases; NegCLIP 0.529 vs CLIP 0.570):
#: either object can take either role, so the swapped caption is as plausible as text as the true one. Every other
#: VG-R relation is role-asymmetric ("on", "wearing", "holding", ...: where NegCLIP's gain is, 0.596 -> 0.863).
VG_GEOMETRIC_RELATIONS: tuple[str, ...] = (
    "to the left of", "to the right of", "above", "below", "behind", "in front of", "under", "beneath",
)  # fmt: skip


def relation_kind(relation: str) -> str:
    """``geometric`` or ``role`` for a VG-Relation relation. A toy-world relation has its own kind
    (:attr:`vlcomp.world.concepts.Relation.kind`: the toy's "covering" is drawn between any two shapes, so it is
    geometric there); any other relation is geometric iff ARO Table 2 lists it so (:data:`VG_GEOMETRIC_RELATIONS`)."""
    from ..world.concepts import ALL_RELATIONS

    if relation in ALL_RELATIONS:
        return ALL_RELATIONS[relation].kind
    return "geometric" if relation in VG_GEOMETRIC_RELATIONS else "role"


PER_GROUP_COLUMNS = ("group", "accuracy", "count")


def vg_attribution_group(attr1: str, attr2: str) -> str:
    """The reference's VG-A grouping key: the ordered attribute pair ``f"{attr1}_{attr2}"``."""
    return f"{attr1}_{attr2}"


def pick_correct(scores: np.ndarray, correct_index: int | np.ndarray, tie_rule: TieRule | str) -> np.ndarray:
    """Per-case correctness of a pick-the-right-option task.

    Definition: case ``i`` is correct iff ``scores[i, c_i]`` beats every other option's score, where an
    exact tie with the best other option is wrong under ``TIE_COUNTS_WRONG`` and right under
    ``TIE_COUNTS_RIGHT``. For the two reference layouts this equals ``np.argmax(scores, 1) == c`` exactly
    (VG: ``c=1`` with :data:`VG_TIE_RULE`; Order: ``c=0`` with :data:`ORDER_TIE_RULE`).

    Args:
        scores: ``[N, L]`` image-caption scores, one row per case (for the reference's ``N x 1 x L`` array
            pass ``scores[:, 0, :]``). NaN is rejected.
        correct_index: index of the correct option, an int or an int array ``[N]``.
        tie_rule: a :class:`TieRule` (or its string value).

    Returns:
        bool array ``[N]``.
    """
    tie_rule = TieRule(tie_rule)
    scores = np.asarray(scores)
    if scores.ndim != 2 or scores.shape[1] < 1:
        raise ValueError(f"scores must have shape [N, L] with L >= 1, got shape {scores.shape}")
    if not (np.issubdtype(scores.dtype, np.number) or scores.dtype == np.bool_):
        raise ValueError(f"scores must be numeric, got dtype {scores.dtype}")
    scores = scores.astype(np.float64, copy=False)
    if np.isnan(scores).any():
        raise ValueError("scores contains NaN; ties and NaN must be resolved explicitly before scoring")
    n, n_options = scores.shape
    idx = np.asarray(correct_index)
    if not np.issubdtype(idx.dtype, np.integer):
        raise ValueError(f"correct_index must be an int or int array, got dtype {idx.dtype}")
    idx = np.broadcast_to(idx, (n,)) if idx.ndim == 0 else idx
    if idx.shape != (n,):
        raise ValueError(f"correct_index must be an int or shape [{n}], got shape {idx.shape}")
    if n and (idx.min() < 0 or idx.max() >= n_options):
        raise ValueError(
            f"correct_index must lie in [0, {n_options - 1}], got range [{idx.min()}, {idx.max()}]"
        )

    rows = np.arange(n)
    correct_score = scores[rows, idx]  # [N]
    is_correct_option = np.zeros_like(scores, dtype=bool)  # [N, L]
    is_correct_option[rows, idx] = True
    best_other = np.where(is_correct_option, -np.inf, scores).max(axis=1)  # [N]; -inf when L == 1
    if tie_rule is TieRule.TIE_COUNTS_WRONG:
        return correct_score > best_other
    return correct_score >= best_other


def accuracy(correct: np.ndarray) -> float:
    """Micro accuracy: the mean of a per-case bool array (``nan`` is never returned; empty raises)."""
    correct = _as_bool_1d(correct, "correct")
    if correct.size == 0:
        raise ValueError("correct is empty")
    return float(correct.mean())


def per_group_accuracy(correct: np.ndarray, groups: Sequence[str]) -> pd.DataFrame:
    """Accuracy and case count of every group, sorted by group name.

    Returns a DataFrame with columns ``group`` (str), ``accuracy`` (mean of ``correct`` within the group)
    and ``count`` (number of cases), one row per distinct group.
    """
    correct = _as_bool_1d(correct, "correct")
    groups = np.asarray(groups, dtype=object)
    if groups.shape != correct.shape:
        raise ValueError(
            f"groups must have one entry per case: got {groups.shape} vs correct {correct.shape}"
        )
    frame = pd.DataFrame({"group": groups.astype(str), "correct": correct})
    table = frame.groupby("group", sort=True)["correct"].agg(accuracy="mean", count="size").reset_index()
    table["accuracy"] = table["accuracy"].astype(np.float64)
    table["count"] = table["count"].astype(np.int64)
    return table[list(PER_GROUP_COLUMNS)]


def filter_groups(
    per_group: pd.DataFrame, min_count: int = 0, exclude: Iterable[str] = frozenset()
) -> pd.DataFrame:
    """Drop groups named in ``exclude`` and groups with ``count < min_count`` (names not present are ignored)."""
    _check_per_group(per_group)
    if min_count < 0:
        raise ValueError(f"min_count must be >= 0, got {min_count}")
    exclude = set(exclude)
    keep = ~per_group["group"].isin(exclude) & (per_group["count"] >= min_count)
    return per_group.loc[keep].reset_index(drop=True)


def macro_from_per_group(per_group: pd.DataFrame) -> float:
    """Unweighted mean of the ``accuracy`` column (one vote per group, whatever its size)."""
    _check_per_group(per_group)
    if len(per_group) == 0:
        raise ValueError("per_group is empty: no group left to average")
    return float(per_group["accuracy"].mean())


def macro_accuracy(
    correct: np.ndarray,
    groups: Sequence[str],
    min_count: int = 0,
    exclude: Iterable[str] = frozenset(),
) -> tuple[float, pd.DataFrame]:
    """Macro accuracy: the unweighted mean over groups of per-group accuracy.

    Groups named in ``exclude`` and groups with fewer than ``min_count`` cases are dropped first
    (VG-R: ``exclude`` = the reference's exclusion list, ``min_count`` = :data:`VG_RELATION_MIN_COUNT`;
    VG-A: ``min_count`` = :data:`VG_ATTRIBUTION_MIN_COUNT`).

    Returns:
        ``(macro, per_group)`` where ``per_group`` (columns ``group, accuracy, count``) holds exactly the
        groups that were averaged, so ``macro == per_group.accuracy.mean()``. Use
        :func:`per_group_accuracy` for the unfiltered table.
    """
    kept = filter_groups(per_group_accuracy(correct, groups), min_count=min_count, exclude=exclude)
    if len(kept) == 0:
        raise ValueError(f"no group left after exclude ({len(set(exclude))} names) and min_count={min_count}")
    return macro_from_per_group(kept), kept


def group_macro(
    per_group: pd.DataFrame, group_of: Mapping[str, str], strict: bool = False
) -> dict[str, float]:
    """Macro accuracy within super-groups (e.g. ARO Table 2's "spatial" and "verbs" relations).

    Definition: for each super-group ``s``, the unweighted mean of ``accuracy`` over the rows of
    ``per_group`` whose ``group`` maps to ``s`` in ``group_of``. Rows whose group is not in ``group_of``
    are ignored (``strict=True`` raises instead); super-groups with no row present are left out.
    Keys follow the first-appearance order of the values of ``group_of``.
    """
    _check_per_group(per_group)
    mapped = per_group["group"].map(dict(group_of))
    if strict and mapped.isna().any():
        missing = sorted(per_group.loc[mapped.isna(), "group"])
        raise ValueError(f"group_of has no super-group for groups {missing[:10]}")
    out: dict[str, float] = {}
    for super_group in dict.fromkeys(group_of.values()):
        rows = per_group.loc[mapped == super_group, "accuracy"]
        if len(rows):
            out[super_group] = float(rows.mean())
    return out


def _as_bool_1d(values: np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D [N], got shape {arr.shape}")
    if arr.dtype != np.bool_:
        if arr.size and not np.isin(arr, (0, 1)).all():
            raise ValueError(f"{name} must be boolean (or 0/1), got values outside {{0, 1}}")
        arr = arr.astype(bool)
    return arr


def _check_per_group(per_group: pd.DataFrame) -> None:
    missing = [c for c in PER_GROUP_COLUMNS if c not in per_group.columns]
    if missing:
        raise ValueError(f"per_group is missing columns {missing}; expected {list(PER_GROUP_COLUMNS)}")
