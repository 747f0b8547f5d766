"""Writing twin images as PNG files, byte-identical for the same pixels (no timestamps, fixed compression)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..io import atomic_path


def write_png(path: str | Path, image: np.ndarray) -> Path:
    """Write uint8 ``[H, W, 3]`` as an RGB PNG (deterministic bytes: PIL writes no time chunk)."""
    from PIL import Image

    arr = np.asarray(image)
    if arr.dtype != np.uint8 or arr.ndim != 3 or arr.shape[-1] != 3:
        raise ValueError(f"{path}: expected a uint8 [H, W, 3] image, got {arr.dtype} {arr.shape}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        Image.fromarray(arr, mode="RGB").save(tmp, format="PNG", compress_level=6, optimize=False)
    return path


def write_pngs(folder: str | Path, images: np.ndarray | Sequence[np.ndarray], names: Sequence[str]) -> list[Path]:
    """``images[i]`` -> ``folder / names[i]`` (names may contain sub-folders); names must be unique."""
    if len(images) != len(names):
        raise ValueError(f"{folder}: {len(images)} images but {len(names)} names")
    if len(set(names)) != len(names):
        raise ValueError(f"{folder}: image names repeat")
    folder = Path(folder)
    return [write_png(folder / n, im) for im, n in zip(images, names, strict=True)]


def image_file_name(image_id: str, ext: str = ".png") -> str:
    """A world image id (``vg_test/000123``) as a flat file name (``vg_test_000123.png``)."""
    return image_id.replace("/", "_") + ext
