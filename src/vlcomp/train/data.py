"""Batch assembly for contrastive training.

A training set is a list of rows ``(image_index, caption, negatives)``. Each epoch the rows are shuffled
(``drop_last``, as the NegCLIP fork's loader does; rows of images grouped by ``together``, the world's binding
twins, are shuffled as one unit and stay adjacent) and every batch of B rows becomes:

- plain CLIP: images ``[B]``, texts ``[B]``;
- NegCLIP: one random negative per row (texts ``[B; B⁻]``), and with ``hard_images`` one of the row image's
  K nearest-neighbour images, brought with one random row of its own (its caption and one of its negatives):
  images ``[I; I']`` (2B) and texts ``[T; T'; T⁻; T'⁻]`` (4B), the fork's layout.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Row:
    image: int
    caption: str
    negatives: tuple[str, ...] = ()


@dataclass
class Batch:
    images: np.ndarray  # int [N] indices into the image array
    texts: list[str]  # [M]: first N are the true captions of the images, the rest hard negatives


def rows_from_annotations(captions: Sequence[Sequence[str]], negatives: Sequence[Sequence[Sequence[str]]] | None = None,
                          *, require_negative: bool = False) -> list[Row]:
    """One row per (image, caption); with ``require_negative`` rows whose caption has no negative are dropped."""
    rows = []
    for i, caps in enumerate(captions):
        for j, cap in enumerate(caps):
            negs = tuple(negatives[i][j]) if negatives is not None else ()
            if require_negative and not negs:
                continue
            rows.append(Row(i, cap, negs))
    return rows


class BatchSampler:
    """Yields batches for one epoch at a time from an injected numpy Generator."""

    def __init__(self, rows: list[Row], batch_size: int, *, use_negatives: bool = False,
                 hard_images: np.ndarray | None = None, together: Sequence[Sequence[int]] = ()) -> None:
        if batch_size < 2:
            raise ValueError(f"batch_size={batch_size}: must be at least 2")
        if len(rows) < batch_size:
            raise ValueError(f"{len(rows)} training rows is fewer than one batch of {batch_size}")
        if use_negatives and any(not r.negatives for r in rows):
            raise ValueError("use_negatives=True but some rows have no negative caption")
        self.rows = rows
        self.batch_size = batch_size
        self.use_negatives = use_negatives
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

    def epoch(self, rng: np.random.Generator) -> Iterator[Batch]:
        if self.units is None:
            order = rng.permutation(len(self.rows))
        else:  # grouped rows stay adjacent, so they share a batch unless a batch boundary splits them
            order = np.asarray([k for u in rng.permutation(len(self.units)) for k in self.units[u]])
        for s in range(self.steps_per_epoch):
            idx = order[s * self.batch_size : (s + 1) * self.batch_size]
            rows = [self.rows[k] for k in idx]
            images = [r.image for r in rows]
            texts = [r.caption for r in rows]
            neg_texts = [r.negatives[rng.integers(len(r.negatives))] for r in rows] if self.use_negatives else []
            if self.hard_images is not None:
                nn_rows = []
                for r in rows:
                    cands = self._valid_nn.get(r.image) or [r.image]
                    j = int(cands[rng.integers(len(cands))])
                    own = self.rows_of_image[j]
                    nn_rows.append(self.rows[own[rng.integers(len(own))]])
                images += [r.image for r in nn_rows]
                texts += [r.caption for r in nn_rows]
                if self.use_negatives:
                    neg_texts += [r.negatives[rng.integers(len(r.negatives))] for r in nn_rows]
            yield Batch(np.asarray(images), texts + neg_texts)
