"""Training-data generators (``mine@<name>`` stages), keyed by the names used in params.yaml (``mine.<name>``).

A generator is a :class:`Generator` record: its config class (``mine.<name>`` in params), its ``run`` and the
set of **named outputs** it declares it writes. Every name has one file and one format (:data:`MINED`), so a
sampler reads what a method needs by name (:func:`read_mined`) whatever generator wrote it:

==================  =====================  =================================================================
name                file                   content
==================  =====================  =================================================================
``negatives``       ``negatives.json``     per image, per caption: a list of negative captions (may be empty)
``negative_types``  ``negative_types.json``  the same shape: each negative's type (``relation``, ``color``, ...)
``positives``       ``positives.json``     per image, per caption: a list of positive captions (hard positives)
``hard_images``     ``hard_images.npy``    int ``[n_images, K]``: each image's hard images (same split)
``distractors``     ``distractors.npy``    int ``[n_images, K]``: distractor images (same split)
==================  =====================  =================================================================

Adding a generator is a new module here that calls ``GENERATORS.add(name, Generator(...))``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..registry import Registry


@dataclass(frozen=True)
class MinedKind:
    file: str
    form: str  # "per_caption" (JSON [image][caption][...]) or "per_image" (npy int [n_images, K])


MINED: dict[str, MinedKind] = {
    "negatives": MinedKind("negatives.json", "per_caption"),
    "negative_types": MinedKind("negative_types.json", "per_caption"),
    "positives": MinedKind("positives.json", "per_caption"),
    "hard_images": MinedKind("hard_images.npy", "per_image"),
    "distractors": MinedKind("distractors.npy", "per_image"),
}


READS = ("base", "mlm", "none")
"""What a generator reads besides the world split (:attr:`Generator.reads`)."""


@dataclass(frozen=True)
class Generator:
    """``config``: the dataclass of ``mine.<name>``; ``run(cfg, *, world, model, nlp, seed, out_dir, parsed=None) ->
    summary`` writes the files of ``writes`` (names of :data:`MINED`) into ``out_dir``. ``parsed``: the folder of
    the split's saved spaCy parses (:mod:`vlcomp.text.parsed`), or None to parse with ``nlp``; the output is the
    same either way.

    ``reads``: what ``model`` is. ``base``: the chain's base CLIP (NegCLIP's hard images), so the generator runs
    once per chain (stage ``mine@<name>-b<k>``, seeded by the chain); ``mlm``: ``(masked LM, tokenizer)`` of the
    ``train_mlm`` stage; ``none``: None. The last two run once for every chain (stage ``mine@<name>``, seeded
    by ``root_seed``): TSVLC's text generators are a property of the corpus, as the authors' precomputed
    positives are."""

    config: type
    run: Callable[..., dict]
    writes: tuple[str, ...]
    reads: str = "base"

    def __post_init__(self) -> None:
        if self.reads not in READS:
            raise ValueError(f"generator reads={self.reads!r}: must be one of {READS}")
        unknown = sorted(set(self.writes) - set(MINED))
        if unknown:
            raise ValueError(f"generator declares unknown outputs {unknown}; known: {sorted(MINED)}")


GENERATORS: Registry[Generator] = Registry("generator", package=__name__)


def check_written(name: str, gen: Generator, out_dir: str | Path) -> None:
    """Every declared output of generator ``name`` is in ``out_dir`` and no undeclared mined file is."""
    out_dir = Path(out_dir)
    missing = [k for k in gen.writes if not (out_dir / MINED[k].file).is_file()]
    extra = [k for k, v in MINED.items() if k not in gen.writes and (out_dir / v.file).exists()]
    if missing or extra:
        raise ValueError(f"generator {name!r} declares {list(gen.writes)} but wrote "
                         f"{'no ' + ', '.join(missing) if missing else ''}"
                         f"{'; also undeclared ' + ', '.join(extra) if extra else ''} in {out_dir}")


def read_mined(mined: str | Path, names: Iterable[str], *, n_images: int, captions: list[list[str]] | None = None,
               generator: str = "?") -> dict[str, Any]:
    """The named outputs ``names`` of a generator's folder, each checked against the split (``n_images``, and
    for per-caption outputs the shape of ``captions``); an output the generator did not write is an error naming
    the folder, the output and the generator."""
    from ..io import read_json, read_npy

    mined, out = Path(mined), {}
    for name in names:
        if name not in MINED:
            raise ValueError(f"unknown mined output {name!r}; known: {sorted(MINED)}")
        kind = MINED[name]
        path = mined / kind.file
        if not path.is_file():
            raise FileNotFoundError(f"{path}: a method needs {name!r}, which generator {generator!r} did not write")
        if kind.form == "per_image":
            value = read_npy(path, ndim=2)
            if value.shape[0] != n_images:
                raise ValueError(f"{path}: {value.shape[0]} rows, expected one per image ({n_images})")
            if value.size and (value.min() < 0 or value.max() >= n_images):
                raise ValueError(f"{path}: image indices must lie in [0, {n_images})")
            value = value.astype(np.int64, copy=False)
        else:
            value = read_json(path)
            if not isinstance(value, list) or len(value) != n_images:
                raise ValueError(f"{path}: expected one entry per image ({n_images})")
            if captions is not None:
                for i, (v, caps) in enumerate(zip(value, captions, strict=True)):
                    if not isinstance(v, list) or len(v) != len(caps):
                        raise ValueError(f"{path}: image {i}: expected one list per caption ({len(caps)})")
        out[name] = value
    return out

