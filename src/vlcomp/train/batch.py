"""Named-block batches: what a sampler draws, what the training loop encodes and what a loss reads.

A :class:`Batch` holds **image blocks** (``images``, ``hard_images``, ``distractors``, ...: indices into the
training image array) and **text blocks** (``captions``, ``negatives``, ``positives``, ...), each text block
with its **owner**: for every row, the image row it belongs to. Image rows are numbered across the image blocks
in their order (block ``images`` first), so NegCLIP's batch with nearest-neighbour hard images is

    images       {"images": I [B], "hard_images": I' [B]}          image rows 0..2B-1
    captions     [T; T']  [2B]      owner 0..2B-1
    negatives    [T-; T'-] [2B, 1]  owner 0..2B-1

A text block is either *plain* (one text per row, ``width=None``: features ``[rows, D]``) or *grouped* (``width
= K`` texts per row: features ``[rows, K, D]``) with an optional validity ``mask [rows, K]``; a masked slot
holds :data:`PAD` (encoded like any text, ignored by the losses), so every block has a fixed shape and shards
evenly across processes.

The loop encodes all image rows in one forward pass and all texts in one forward pass, in block order (so a
BatchNorm tower normalises over the whole batch, and the float work is that of one concatenated batch), then
splits the features back into named blocks: :class:`Features`, what a loss receives.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import torch

PAD = ""  # the text of a masked (absent) slot of a grouped text block


@dataclass(frozen=True)
class TextBlock:
    """``texts`` row-major (row ``r``'s texts are ``texts[r*K:(r+1)*K]`` for width K), ``owner`` int ``[rows]``
    (an image row of the batch), ``width`` None (plain) or K, ``mask`` bool ``[rows, K]`` or None (all valid)."""

    texts: list[str]
    owner: np.ndarray
    width: int | None = None
    mask: np.ndarray | None = None

    def __post_init__(self) -> None:
        rows, per = len(self.owner), 1 if self.width is None else self.width
        if self.width is not None and self.width < 1:
            raise ValueError(f"text block: width={self.width} must be >= 1 (or None for one text per row)")
        if len(self.texts) != rows * per:
            raise ValueError(f"text block: {len(self.texts)} texts for {rows} rows x {per}")
        if self.mask is not None:
            if self.width is None or self.mask.shape != (rows, self.width):
                raise ValueError(f"text block: mask of shape {getattr(self.mask, 'shape', None)} for {rows} rows of "
                                 f"width {self.width}; a mask needs a grouped block and shape [rows, width]")

    @property
    def rows(self) -> int:
        return len(self.owner)

    def take(self, rows: slice) -> TextBlock:
        per = 1 if self.width is None else self.width
        return TextBlock(self.texts[rows.start * per : rows.stop * per], self.owner[rows], self.width,
                         None if self.mask is None else self.mask[rows])


@dataclass(frozen=True)
class Batch:
    """Image blocks and text blocks, in order (dicts keep insertion order)."""

    images: dict[str, np.ndarray]
    texts: dict[str, TextBlock] = field(default_factory=dict)

    @property
    def n_images(self) -> int:
        return sum(len(v) for v in self.images.values())

    def image_rows(self) -> np.ndarray:
        """Every image index, blocks concatenated in order (what the image tower encodes)."""
        blocks = list(self.images.values())
        return blocks[0] if len(blocks) == 1 else np.concatenate(blocks)

    def all_texts(self) -> list[str]:
        """Every text, blocks concatenated in order (what the text tower encodes)."""
        return [t for block in self.texts.values() for t in block.texts]

    def shard(self, r: int, w: int) -> Batch:
        """Rank ``r`` of ``w``'s part: every block cut into ``w`` contiguous equal row ranges. Owners keep their
        global numbering: a shard is only encoded; the loss reads the gathered features with the global batch's
        owners and masks."""
        if w == 1:
            return self
        return Batch({k: np.asarray(v)[_rows(len(v), r, w, f"image block {k!r}")] for k, v in self.images.items()},
                     {k: b.take(_rows(b.rows, r, w, f"text block {k!r}")) for k, b in self.texts.items()})


def _rows(n: int, r: int, w: int, what: str) -> slice:
    if n % w:
        raise ValueError(f"{what}: {n} rows cannot be split evenly over {w} processes; "
                         f"choose a batch size divisible by the number of processes")
    k = n // w
    return slice(r * k, (r + 1) * k)


@dataclass
class Features:
    """A loss's input: L2-normalised features of every named block, with the owners and masks of the global batch.

    ``images[name]`` ``[n, D]``; ``texts[name]`` ``[rows, D]`` (plain) or ``[rows, K, D]`` (grouped);
    ``owner[name]`` long ``[rows]`` (image row, see :meth:`image_rows`); ``mask[name]`` bool ``[rows, K]`` or
    None (all valid)."""

    images: dict[str, torch.Tensor]
    texts: dict[str, torch.Tensor]
    owner: dict[str, torch.Tensor]
    mask: dict[str, torch.Tensor | None]
    logit_scale: torch.Tensor
    logit_bias: torch.Tensor | None = None

    def image_rows(self) -> torch.Tensor:
        """``[N, D]``: every image block concatenated in order (image row i is row i)."""
        blocks = list(self.images.values())
        return blocks[0] if len(blocks) == 1 else torch.cat(blocks)

    def flat(self, name: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Text block ``name`` as ``(features [rows*K, D], owner [rows*K], valid [rows*K] or None)``."""
        f, owner, mask = self.texts[name], self.owner[name], self.mask.get(name)
        if f.ndim == 2:
            return f, owner, None
        k = f.shape[1]
        return f.reshape(-1, f.shape[-1]), owner.repeat_interleave(k), None if mask is None else mask.reshape(-1)


def split_features(batch: Batch, image_features: torch.Tensor, text_features: torch.Tensor
                   ) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """The features of a batch's concatenated image rows and texts, cut back into its named blocks."""
    images = dict(zip(batch.images, torch.split(image_features, [len(v) for v in batch.images.values()]),
                      strict=True))
    sizes = [len(b.texts) for b in batch.texts.values()]
    texts = {}
    for (name, block), f in zip(batch.texts.items(), torch.split(text_features, sizes), strict=True):
        texts[name] = f if block.width is None else f.reshape(block.rows, block.width, f.shape[-1])
    return images, texts


def features(batch: Batch, images: Mapping[str, torch.Tensor], texts: Mapping[str, torch.Tensor],
             logit_scale: torch.Tensor, logit_bias: torch.Tensor | None = None) -> Features:
    """:class:`Features` of the global ``batch`` (owners and masks as tensors on the features' device)."""
    n = batch.n_images
    for name, block in batch.texts.items():
        if block.rows and (int(np.min(block.owner)) < 0 or int(np.max(block.owner)) >= n):
            raise ValueError(f"text block {name!r}: owner out of range for {n} image rows")
    device = logit_scale.device
    owner = {k: torch.as_tensor(b.owner, dtype=torch.long, device=device) for k, b in batch.texts.items()}
    mask = {k: None if b.mask is None else torch.as_tensor(b.mask, dtype=torch.bool, device=device)
            for k, b in batch.texts.items()}
    return Features(dict(images), dict(texts), owner, mask, logit_scale, logit_bias)
