"""Rows and the batch sampler for contrastive training.

A training set is a list of rows ``(image_index, caption, negatives, positives)``. Each epoch the rows are
shuffled (``drop_last``, as the NegCLIP fork's loader does; rows of images grouped by ``together``, the world's
binding twins, are shuffled as one unit and stay adjacent) and every batch of B rows becomes a
:class:`vlcomp.train.batch.Batch` of named blocks:

- always: image block ``images`` ``[B]`` and text block ``captions`` ``[B]`` (owner: its image row);
- ``negatives=K``: text block ``negatives`` ``[B, K]``, K of the row's negatives drawn without replacement (K = 1:
  one uniformly drawn negative, the NegCLIP fork's ``random.choice``); a row with fewer than K has its missing
  slots masked;
- ``hard_images``: image block ``hard_images`` ``[B]``: one of the row image's K nearest-neighbour images, brought
  with one random row of its own, whose caption (and negatives, and positives) join the text blocks, so the
  text blocks have 2B rows: the fork's layout images ``[I; I']``, texts ``[T; T'; T-; T'-]``;
- ``positives=P``: text block ``positives`` ``[rows, P]``, drawn and masked as the negatives.

With ``missing="mask"`` a row may lack negatives or positives (TSVLC: a caption with no list word has no
rule-based negative, and its row still trains the contrastive term): its slots hold :data:`PAD`, masked, and no
random number is drawn for it. The default, ``missing="error"``, refuses such a row (NegCLIP trains only rows
with a negative), and with every row complete both settings draw and return exactly the same batches.

The generator is injected; draws happen in a fixed order (negatives of the rows, the hard images with their
rows, the negatives of those rows, then positives), so a batch is a pure function of the generator's state.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from .batch import PAD, Batch, TextBlock


@dataclass(frozen=True)
class Row:
    image: int
    caption: str
    negatives: tuple[str, ...] = ()
    positives: tuple[str, ...] = ()


def rows_from_annotations(captions: Sequence[Sequence[str]], negatives: Sequence[Sequence[Sequence[str]]] | None = None,
                          *, require_negative: bool = False,
                          positives: Sequence[Sequence[Sequence[str]]] | None = None) -> list[Row]:
    """One row per (image, caption) with the caption's negatives and positives (lists shaped like ``captions``);
    with ``require_negative`` rows whose caption has no negative are dropped."""
    rows = []
    for i, caps in enumerate(captions):
        for j, cap in enumerate(caps):
            negs = tuple(negatives[i][j]) if negatives is not None else ()
            if require_negative and not negs:
                continue
            rows.append(Row(i, cap, negs, tuple(positives[i][j]) if positives is not None else ()))
    return rows


def _draw(pool: Sequence[Sequence[str]], k: int, rng: np.random.Generator) -> tuple[list[str], np.ndarray | None]:
    """``k`` texts from each row's ``pool``: k = 1 one uniform draw per row (``rng.integers``); k > 1 up to k
    distinct ones per row (``rng.choice`` without replacement), missing slots :data:`PAD` and masked. An empty
    pool (allowed only under ``missing="mask"``) draws nothing: all its slots are :data:`PAD`, masked."""
    if k == 1:
        if all(pool):
            return [p[rng.integers(len(p))] for p in pool], None
        texts = [p[rng.integers(len(p))] if p else PAD for p in pool]
        return texts, np.asarray([[bool(p)] for p in pool], dtype=bool).reshape(len(pool), 1)
    texts, mask = [], np.ones((len(pool), k), dtype=bool)
    for i, p in enumerate(pool):
        got = [p[j] for j in rng.choice(len(p), size=min(k, len(p)), replace=False)] if p else []
        mask[i, len(got):] = False
        texts += got + [PAD] * (k - len(got))
    return texts, None if mask.all() else mask


class BatchSampler:
    """Yields named-block batches for one epoch at a time from an injected numpy Generator."""

    def __init__(self, rows: list[Row], batch_size: int, *, negatives: int = 0, positives: int = 0,
                 hard_images: np.ndarray | None = None, together: Sequence[Sequence[int]] = (),
                 missing: str = "error") -> None:
        if missing not in ("error", "mask"):
            raise ValueError(f"missing={missing!r}: must be 'error' (every row has its negatives / positives) or "
                             "'mask' (a row without gets masked slots)")
        if batch_size < 2:
            raise ValueError(f"batch_size={batch_size}: must be at least 2")
        if len(rows) < batch_size:
            raise ValueError(f"{len(rows)} training rows is fewer than one batch of {batch_size}")
        for what, k in (("negatives", negatives), ("positives", positives)):
            if isinstance(k, bool) or not isinstance(k, int) or k < 0:
                raise ValueError(f"{what}={k!r}: must be an int >= 0 ({what} per row)")
            if k and missing == "error" and any(not getattr(r, what) for r in rows):
                first = next(i for i, r in enumerate(rows) if not getattr(r, what))
                raise ValueError(f"{what}={k} but row {first} (image {rows[first].image}, caption "
                                 f"{rows[first].caption!r:.60}) has no {what[:-1]} caption")
        self.rows = rows
        self.missing = missing
        self.batch_size = batch_size
        self.negatives = negatives
        self.positives = positives
        self.hard_images = hard_images  # int [n_images, K]
        self.rows_of_image: dict[int, list[int]] = {}
        for k, r in enumerate(rows):
            self.rows_of_image.setdefault(r.image, []).append(k)
        # units shuffled as one: the rows of each group of images in ``together`` (binding twins), else single rows
        self.units: list[list[int]] | None = None
        if together:
            grouped: set[int] = set()
            self.units = []
            for group in together:
                unit = [k for i in group for k in self.rows_of_image.get(int(i), [])]
                if grouped & set(unit):
                    raise ValueError(f"image group {list(group)} shares an image with an earlier group")
                grouped |= set(unit)
                if unit:
                    self.units.append(unit)
            self.units += [[k] for k in range(len(rows)) if k not in grouped]
        if hard_images is not None:
            missing = {int(j) for j in np.unique(hard_images)} - set(self.rows_of_image)
            if missing:
                # a neighbour without a training row cannot bring a caption: fall back to the nearest with one
                self._valid_nn = {i: [j for j in hard_images[i] if int(j) in self.rows_of_image] for i in self.rows_of_image}
            else:
                self._valid_nn = {i: list(hard_images[i]) for i in self.rows_of_image}

    @property
    def steps_per_epoch(self) -> int:
        return len(self.rows) // self.batch_size

    def texts(self) -> list[str]:
        """Every text a batch may hold (for tokenising once)."""
        out = [r.caption for r in self.rows] + [t for r in self.rows for t in r.negatives + r.positives]
        padded = self.negatives > 1 or self.positives > 1 or self.missing == "mask"
        return out + [PAD] if padded else out

    def epoch(self, rng: np.random.Generator) -> Iterator[Batch]:
        if self.units is None:
            order = rng.permutation(len(self.rows))
        else:  # grouped rows stay adjacent, so they share a batch unless a batch boundary splits them
            order = np.asarray([k for u in rng.permutation(len(self.units)) for k in self.units[u]])
        for s in range(self.steps_per_epoch):
            idx = order[s * self.batch_size : (s + 1) * self.batch_size]
            rows = [self.rows[k] for k in idx]
            images = {"images": np.asarray([r.image for r in rows])}
            neg, neg_mask = _draw([r.negatives for r in rows], self.negatives, rng) if self.negatives else ([], None)
            if self.hard_images is not None:
                nn_rows = []
                for r in rows:
                    cands = self._valid_nn.get(r.image) or [r.image]
                    j = int(cands[rng.integers(len(cands))])
                    own = self.rows_of_image[j]
                    nn_rows.append(self.rows[own[rng.integers(len(own))]])
                images["hard_images"] = np.asarray([r.image for r in nn_rows])
                if self.negatives:
                    more, more_mask = _draw([r.negatives for r in nn_rows], self.negatives, rng)
                    neg, neg_mask = neg + more, _stack_masks(neg_mask, more_mask, len(rows), len(nn_rows), self.negatives)
                rows = rows + nn_rows
            owner = np.arange(len(rows))
            texts = {"captions": TextBlock([r.caption for r in rows], owner)}
            if self.negatives:
                texts["negatives"] = TextBlock(neg, owner, self.negatives, neg_mask)
            if self.positives:
                pos, pos_mask = _draw([r.positives for r in rows], self.positives, rng)
                texts["positives"] = TextBlock(pos, owner, self.positives, pos_mask)
            yield Batch(images, texts)


def _stack_masks(a: np.ndarray | None, b: np.ndarray | None, na: int, nb: int, k: int) -> np.ndarray | None:
    if a is None and b is None:
        return None
    return np.concatenate([np.ones((na, k), bool) if a is None else a, np.ones((nb, k), bool) if b is None else b])
