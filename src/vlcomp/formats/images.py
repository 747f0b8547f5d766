"""Real image files as a lazily decoded uint8 array ``[N, S, S, 3]``.

The toy pipeline indexes an in-memory ``images.npy``; the real profile indexes :class:`ImageFiles` the same way
(``images[idx]`` with an int, a slice or an int array), so the train loop, the miners and the encoders run
unchanged. Each image is decoded with PIL when it is indexed, converted to RGB, resized so that its shorter side
is ``S`` (bicubic) and centre-cropped to ``S x S``: open_clip's evaluation transform for CLIP models
(``Resize(S, bicubic)`` + ``CenterCrop(S)``, pixel for pixel: a test compares with torchvision), before the CLIP mean/std normalisation that
:func:`vlcomp.models.factory.to_tensor` applies. Training uses the same transform, not open_clip's
``RandomResizedCrop(scale=(0.9, 1.0))`` (a documented deviation of the real profile: the NegCLIP fork trains
with open_clip's default train augmentation).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np


def load_rgb(path: str | Path, size: int) -> np.ndarray:
    """One image file -> uint8 ``[size, size, 3]`` (shorter side to ``size`` bicubic, centre crop)."""
    from PIL import Image, UnidentifiedImageError

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: image not found")
    try:
        with Image.open(path) as im:
            im = im.convert("RGB")
            w, h = im.size
            # torchvision Resize(size): the short side becomes ``size``, the long one int(size * long / short)
            nw, nh = (size, int(size * h / w)) if w <= h else (int(size * w / h), size)
            im = im.resize((nw, nh), Image.Resampling.BICUBIC)
            # torchvision CenterCrop: offsets int(round((n - size) / 2)) (half to even)
            left, top = int(round((nw - size) / 2.0)), int(round((nh - size) / 2.0))
            im = im.crop((left, top, left + size, top + size))
            return np.asarray(im, dtype=np.uint8)
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as e:
        raise ValueError(f"{path}: cannot decode image ({type(e).__name__}: {e})") from None


class ImageFiles:
    """A read-only ``uint8 [N, S, S, 3]`` array-like over image files, decoded on indexing (``workers`` threads)."""

    dtype = np.dtype(np.uint8)
    ndim = 4

    def __init__(self, paths: Sequence[str | Path], size: int, *, workers: int | None = None) -> None:
        if size < 1:
            raise ValueError(f"image size {size}: must be positive")
        self.paths = [Path(p) for p in paths]
        self.size = int(size)
        self.workers = max(1, workers if workers is not None else min(8, os.cpu_count() or 1))

    def __len__(self) -> int:
        return len(self.paths)

    @property
    def shape(self) -> tuple[int, int, int, int]:
        return (len(self.paths), self.size, self.size, 3)

    def missing(self) -> list[Path]:
        """The files that do not exist (a cheap check before any GPU time; decoding errors show on use)."""
        return [p for p in self.paths if not p.is_file()]

    def __getitem__(self, idx) -> np.ndarray:
        if isinstance(idx, int | np.integer):
            return load_rgb(self.paths[int(idx)], self.size)
        if isinstance(idx, slice):
            rows = range(len(self.paths))[idx]
        else:
            arr = np.zeros(0, dtype=np.int64) if isinstance(idx, list | tuple) and not idx else np.asarray(idx)
            if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer):
                raise TypeError(f"ImageFiles index must be an int, a slice or a 1-D int array, got {arr.dtype} {arr.shape}")
            rows = [int(i) for i in arr]
        out = np.empty((len(rows), self.size, self.size, 3), dtype=np.uint8)
        if not rows:
            return out
        if self.workers == 1 or len(rows) == 1:
            for k, i in enumerate(rows):
                out[k] = load_rgb(self.paths[i], self.size)
            return out
        with ThreadPoolExecutor(self.workers) as pool:  # PIL decodes and resizes with the GIL released
            for k, im in enumerate(pool.map(lambda i: load_rgb(self.paths[i], self.size), rows)):
                out[k] = im
        return out
