"""Image<->text retrieval Recall@K as in ARO's ``COCO_Retrieval.evaluate_scores`` (and Flickr30k).

Directions and definitions (``scores[i, j]`` = similarity of image ``i`` and caption ``j``):

- ``i2t/recall_at_K`` (ARO "Text Recall@K", "TextPrec@K", Table 3/6 "Text R@K"): image->text retrieval.
  An image is a hit iff **any** of its ground-truth captions is among its top-K captions; averaged over
  **images**.
- ``t2i/recall_at_K`` (ARO "Image Recall@K", "ImagePrec@K", "Image R@K"): text->image retrieval. A caption
  is a hit iff its image is among its top-K images; averaged over **captions**.

Tie rule (:data:`RETRIEVAL_TIE_RULE`): candidates are ranked in a *stable descending* order of score, so
among equal scores the candidate with the **lower index ranks first**. The rank of a target is therefore
``#{scores > s} + #{scores == s with a lower index}`` (0-based) and "in the top-K" means ``rank < K``.
The reference uses ``np.argsort(row)[-K:]`` with NumPy's default, *unstable* sort, so its order among tied
scores is unspecified (for short rows insertion sort makes it stable ascending, which puts the *higher*
index at the top); with continuous scores ties are rare, but identical captions (e.g. duplicate or
unchanged perturbed captions) tie exactly, so we pin a deterministic rule instead.

Ranks are computed by counting, not sorting, in row blocks of at most ``max_block_elems`` elements, so a
5k x 25k COCO matrix needs only tens of MB of scratch memory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import numpy as np

RETRIEVAL_TIE_RULE = "stable_descending_lower_index_first"
DEFAULT_KS: tuple[int, ...] = (1, 5)
DEFAULT_MAX_BLOCK_ELEMS = 1 << 22  # 4M scores per block: ~16 MB float32 + a few 4 MB masks


def recall_key(direction: str, k: int) -> str:
    """MLflow-safe metric key, e.g. ``recall_key("t2i", 1) == "t2i/recall_at_1"``."""
    if direction not in ("i2t", "t2i"):
        raise ValueError(f"direction must be 'i2t' or 't2i', got {direction!r}")
    return f"{direction}/recall_at_{int(k)}"


def target_ranks(
    scores: np.ndarray,
    rows: np.ndarray,
    cols: np.ndarray,
    max_block_elems: int = DEFAULT_MAX_BLOCK_ELEMS,
) -> np.ndarray:
    """0-based rank of ``scores[rows[q], cols[q]]`` within row ``rows[q]`` under the stable descending order.

    Definition: ``rank[q] = #{m : s[r, m] > s[r, c]} + #{m < c : s[r, m] == s[r, c]}`` with ``r = rows[q]``,
    ``c = cols[q]`` -- the position of column ``c`` in ``np.argsort(-s[r], kind="stable")``.

    Args:
        scores: ``[R, M]`` score matrix (no NaN).
        rows, cols: int arrays ``[Q]``.
        max_block_elems: at most this many scores are gathered at once.

    Returns:
        int64 array ``[Q]``.
    """
    scores = np.asarray(scores)
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    if scores.ndim != 2:
        raise ValueError(f"scores must be 2-D [R, M], got shape {scores.shape}")
    if rows.shape != cols.shape or rows.ndim != 1:
        raise ValueError(f"rows and cols must be 1-D of equal length, got {rows.shape} and {cols.shape}")
    return _ranks(lambda q: scores[rows[q]], cols, scores.shape[1], max_block_elems)


def retrieval_ranks(
    scores: np.ndarray,
    text_to_image: np.ndarray,
    scores_t2i: np.ndarray | None = None,
    max_block_elems: int = DEFAULT_MAX_BLOCK_ELEMS,
) -> dict[str, np.ndarray]:
    """Per-item 0-based ranks of the ground truth, for both retrieval directions.

    Args:
        scores: ``[n_images, n_texts]`` similarity matrix used for image->text retrieval (and for
            text->image when ``scores_t2i`` is None).
        text_to_image: int array ``[n_texts]``, the image index of every caption.
        scores_t2i: optional separate ``[n_images, n_texts]`` matrix for text->image retrieval (the
            reference's tuple case, e.g. BLIP's re-ranked scores transposed to images x texts).

    Returns:
        ``{"i2t": int64 [n_images], "t2i": int64 [n_texts]}``. ``i2t[i]`` is the best (smallest) rank among
        image ``i``'s captions; an image without captions gets ``n_texts`` (never a hit). ``t2i[j]`` is the
        rank of caption ``j``'s image among all images.
    """
    scores, text_to_image = _check_inputs(scores, text_to_image, "scores")
    scores_t2i = scores if scores_t2i is None else _check_inputs(scores_t2i, text_to_image, "scores_t2i")[0]
    if scores_t2i.shape != scores.shape:
        raise ValueError(f"scores_t2i shape {scores_t2i.shape} differs from scores shape {scores.shape}")
    n_images, n_texts = scores.shape
    caption_ids = np.arange(n_texts)

    # image -> text: rank of every caption within its own image's row, then the best per image.
    caption_rank_in_own_row = _ranks(
        lambda q: scores[text_to_image[q]], caption_ids, n_texts, max_block_elems
    )
    i2t = np.full(n_images, n_texts, dtype=np.int64)  # [n_images]
    np.minimum.at(i2t, text_to_image, caption_rank_in_own_row)

    # text -> image: rank of the caption's image within the caption's column.
    t2i = _ranks(lambda q: scores_t2i[:, q].T, text_to_image, n_images, max_block_elems)  # [n_texts]
    return {"i2t": i2t, "t2i": t2i}


def hits_from_ranks(ranks: Mapping[str, np.ndarray], ks: Iterable[int] = DEFAULT_KS) -> dict[str, np.ndarray]:
    """Per-item hits ``rank < K`` keyed like the recall they average to, e.g. ``"i2t/recall_at_1"``."""
    ks = _check_ks(ks)
    return {recall_key(d, k): np.asarray(ranks[d]) < k for d in ("i2t", "t2i") if d in ranks for k in ks}


def retrieval_hits(
    scores: np.ndarray,
    text_to_image: np.ndarray,
    ks: Iterable[int] = DEFAULT_KS,
    scores_t2i: np.ndarray | None = None,
    max_block_elems: int = DEFAULT_MAX_BLOCK_ELEMS,
) -> dict[str, np.ndarray]:
    """Per-item hits: ``i2t/recall_at_K`` -> bool ``[n_images]``, ``t2i/recall_at_K`` -> bool ``[n_texts]``.

    See the module docstring for the definitions and the tie rule; save these arrays as per-item results.
    """
    ranks = retrieval_ranks(scores, text_to_image, scores_t2i=scores_t2i, max_block_elems=max_block_elems)
    return hits_from_ranks(ranks, ks)


def recall_from_hits(hits: Mapping[str, np.ndarray]) -> dict[str, float]:
    """Recall@K = mean of the per-item hits (over images for ``i2t``, over captions for ``t2i``)."""
    out = {}
    for key, value in hits.items():
        value = np.asarray(value)
        if value.ndim != 1 or value.size == 0:
            raise ValueError(f"hits[{key!r}] must be a non-empty 1-D array, got shape {value.shape}")
        out[key] = float(value.mean())
    return out


def recall_at_k(
    scores: np.ndarray,
    text_to_image: np.ndarray,
    ks: Iterable[int] = DEFAULT_KS,
    scores_t2i: np.ndarray | None = None,
    max_block_elems: int = DEFAULT_MAX_BLOCK_ELEMS,
) -> dict[str, float]:
    """Recall@K in both directions: keys ``i2t/recall_at_K`` and ``t2i/recall_at_K`` for every K in ``ks``."""
    return recall_from_hits(retrieval_hits(scores, text_to_image, ks, scores_t2i, max_block_elems))


def _ranks(
    gather_rows: Callable[[slice], np.ndarray], target_cols: np.ndarray, n_cols: int, max_block_elems: int
) -> np.ndarray:
    """Rank of ``target_cols[q]`` in row ``gather_rows(q)`` (stable descending), processed in blocks."""
    if max_block_elems < 1:
        raise ValueError(f"max_block_elems must be >= 1, got {max_block_elems}")
    n_queries = target_cols.shape[0]
    out = np.empty(n_queries, dtype=np.int64)
    if n_queries == 0:
        return out
    if target_cols.min() < 0 or target_cols.max() >= n_cols:
        raise ValueError(f"target columns must lie in [0, {n_cols - 1}]")
    block = max(1, max_block_elems // max(n_cols, 1))
    col_ids = np.arange(n_cols)[None, :]  # [1, M]
    for start in range(0, n_queries, block):
        q = slice(start, min(start + block, n_queries))
        rows = np.asarray(gather_rows(q))  # [B, M]
        tgt = target_cols[q]  # [B]
        value = rows[np.arange(rows.shape[0]), tgt][:, None]  # [B, 1]
        greater = (rows > value).sum(axis=1)
        tied_before = ((rows == value) & (col_ids < tgt[:, None])).sum(axis=1)
        out[q] = greater + tied_before
    return out


def _check_inputs(scores: np.ndarray, text_to_image: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    scores = np.asarray(scores)
    if scores.ndim != 2:
        raise ValueError(f"{name} must be 2-D [n_images, n_texts], got shape {scores.shape}")
    if not np.issubdtype(scores.dtype, np.number):
        raise ValueError(f"{name} must be numeric, got dtype {scores.dtype}")
    if np.issubdtype(scores.dtype, np.floating) and _has_nan(scores):
        raise ValueError(f"{name} contains NaN")
    t2i = np.asarray(text_to_image)
    if t2i.ndim != 1 or not np.issubdtype(t2i.dtype, np.integer):
        raise ValueError(f"text_to_image must be a 1-D int array, got shape {t2i.shape} dtype {t2i.dtype}")
    n_images, n_texts = scores.shape
    if t2i.shape[0] != n_texts:
        raise ValueError(f"text_to_image has {t2i.shape[0]} entries but {name} has {n_texts} text columns")
    if n_texts and (t2i.min() < 0 or t2i.max() >= n_images):
        raise ValueError(f"text_to_image values must lie in [0, {n_images - 1}]")
    return scores, t2i.astype(np.int64, copy=False)


def _has_nan(scores: np.ndarray, max_block_elems: int = DEFAULT_MAX_BLOCK_ELEMS) -> bool:
    """NaN check in row blocks (a full ``np.isnan`` mask of a 5k x 25k matrix would cost 125 MB)."""
    block = max(1, max_block_elems // max(scores.shape[1], 1))
    return any(np.isnan(scores[i : i + block]).any() for i in range(0, scores.shape[0], block))


def _check_ks(ks: Iterable[int]) -> tuple[int, ...]:
    ks = tuple(int(k) for k in ks)
    if not ks or any(k < 1 for k in ks):
        raise ValueError(f"ks must be a non-empty sequence of positive ints, got {ks}")
    return ks
