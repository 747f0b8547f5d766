"""Fixtures in the released formats (written to tmp dirs) and small scorers for the real-profile engine tests.

- :class:`LookupScorer` - a dual scorer whose scores are a hand-written table ``s(image id, caption)``: an
  image's id is read from its pixels (solid-colour regions, so a VG crop has the id of its region), image
  features are one-hot, and each caption's feature holds its row of the table plus a slack dimension keeping
  it unit-norm. Dot products give back the table exactly; metrics can be computed by hand.
- :class:`LookupCrossScorer` - a cross scorer over a second table, with ``dual_view()`` = a LookupScorer.
- :func:`toy_scorer` - the packaged ``toy-vit-p8`` open_clip model, random init, behind ``OpenClipScorer``;
  :class:`ToyCrossScorer` wraps it as a cross scorer (parity tests on real encoders).
"""

from __future__ import annotations

import json
import zlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from vlcomp.eval.parity import near_tie_rows

N_IDS = 64  # image ids 0..63; pixel red value = 4 * id + 2


def id_color(image_id: int) -> tuple[int, int, int]:
    return (4 * image_id + 2, 40, 200)


def write_image(path: Path, ids: Sequence[int] = (0,), size: tuple[int, int] = (40, 20)) -> Path:
    """A solid image, or side-by-side vertical bands of the given ids (band i spans x in [i*w/n, (i+1)*w/n))."""
    w, h = size
    arr = np.zeros((h, w, 3), dtype=np.uint8)
    for n, i in enumerate(ids):
        arr[:, n * w // len(ids) : (n + 1) * w // len(ids)] = id_color(i)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(arr).save(path)  # PNG (lossless) whatever the name says: PIL reads by content
    return path


def write_noise(path: Path, seed: int, size: tuple[int, int] = (64, 48)) -> Path:
    arr = np.random.default_rng(seed).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(arr).save(path, format="PNG")
    return path


def write_json(path: Path, obj) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))
    return path


def image_id(image) -> int:
    r = int(np.asarray(image.convert("RGB"))[0, 0, 0])
    return (r - 2) // 4


Default = float | Callable[[int, str], float]


def _default(default: Default, i: int, t: str) -> float:
    return default(i, t) if callable(default) else default


class LookupScorer:
    """Dual scorer with ``score(image, caption) = table[(image id, caption)]`` (``default`` elsewhere: a number
    or a function of (image id, caption)). Caption features are unit-norm when the table row allows it."""

    kind = "dual"

    def __init__(self, table: Mapping[tuple[int, str], float], default: Default = 0.0, name: str = "lookup") -> None:
        self.name, self.table, self.default = name, dict(table), default
        self.image_calls: Counter = Counter()  # image id -> times encoded
        self.text_calls: Counter = Counter()  # caption -> times encoded

    def encode_images(self, images) -> torch.Tensor:
        out = torch.zeros(len(images), N_IDS + 1)
        for n, im in enumerate(images):
            i = image_id(im)
            self.image_calls[i] += 1
            out[n, i] = 1.0
        return out

    def encode_texts(self, texts) -> torch.Tensor:
        out = torch.zeros(len(texts), N_IDS + 1, dtype=torch.float64)
        for n, t in enumerate(texts):
            self.text_calls[t] += 1
            row = torch.tensor([self.table.get((i, t), _default(self.default, i, t)) for i in range(N_IDS)],
                               dtype=torch.float64)
            out[n, :N_IDS], out[n, N_IDS] = row, max(0.0, 1.0 - float((row**2).sum())) ** 0.5
        return out.float()

    def score_pairs(self, images, texts) -> torch.Tensor:
        return (self.encode_images(images) * self.encode_texts(texts)).sum(1)


class LookupCrossScorer:
    """Cross scorer: ``score_pairs`` looks the pair up in ``table``; ``dual_view()`` scores with ``itc``."""

    kind = "cross"

    def __init__(self, table: Mapping[tuple[int, str], float], itc: Mapping[tuple[int, str], float] | None = None,
                 default: Default = 0.0, name: str = "lookup-cross") -> None:
        self.name, self.table, self.default = name, dict(table), default
        self._dual = LookupScorer(itc or {}, name=f"{name}-itc")
        self.pairs: Counter = Counter()  # (image id, caption) -> times scored

    def score_pairs(self, images, texts) -> torch.Tensor:
        assert len(images) == len(texts)
        out = []
        for im, t in zip(images, texts, strict=True):
            self.pairs[(image_id(im), t)] += 1
            out.append(self.table.get((image_id(im), t), _default(self.default, image_id(im), t)))
        return torch.tensor(out, dtype=torch.float32)

    def dual_view(self) -> LookupScorer:
        return self._dual


class HashTokenizer:
    """Word-level tokenizer for the toy models' 128-id vocabulary: words hashed into 3..126, EOT = 127 (the
    largest id, where open_clip pools)."""

    def __init__(self, context_length: int = 32, vocab: int = 128) -> None:
        self.context_length, self.vocab = context_length, vocab

    def __call__(self, texts) -> torch.Tensor:
        out = torch.zeros(len(texts), self.context_length, dtype=torch.long)
        for n, t in enumerate(texts):
            ids = [2] + [3 + zlib.crc32(w.encode()) % (self.vocab - 4) for w in t.lower().split()]
            ids = ids[: self.context_length - 1] + [self.vocab - 1]
            out[n, : len(ids)] = torch.tensor(ids)
        return out


_TOY = {}


def toy_scorer():
    """``toy-vit-p8`` (48 px), seeded random init, as an ``OpenClipScorer`` (built once per session)."""
    if "scorer" not in _TOY:
        import open_clip

        from vlcomp.models.factory import ModelSpec, create_model
        from vlcomp.models.scorers import OpenClipScorer

        model = create_model(ModelSpec("toy-vit-p8"), init_seed=0)
        preprocess = open_clip.image_transform(48, is_train=False)
        _TOY["scorer"] = OpenClipScorer("toy-vit-p8", model, preprocess, HashTokenizer(), image_batch=16,
                                        text_batch=32)
    return _TOY["scorer"]


class ToyCrossScorer:
    """A cross scorer over the toy model: ``score_pairs`` = 2 x cosine + 0.01 x caption length (so it differs
    from the dual view), ``dual_view()`` = the toy dual scorer."""

    kind = "cross"
    name = "toy-cross"

    def __init__(self, k_test: int | None = None) -> None:
        self._dual = toy_scorer()
        if k_test is not None:
            self.k_test = k_test

    def score_pairs(self, images, texts) -> torch.Tensor:
        cos = self._dual.score_pairs(images, texts)
        return 2 * cos + 0.01 * torch.tensor([len(t) for t in texts], dtype=torch.float32)

    def dual_view(self):
        return self._dual


def assert_tables_match(batched: dict, naive: dict, atol: float = 1e-5) -> dict:
    """Batched vs naive per-item tables: same tables and columns, float columns within ``atol``, every other
    column (decisions) identical on the rows that are not near ties. Returns ``{table: near-tie row mask}``.

    Two encodings of the same image or caption agree only to float rounding, and that rounding depends on the
    CPU (AVX2 vs AVX-512 kernels) and on the batch; a decision between two scores closer than that is a coin
    toss of the machine, not a property of the model (ties that exist by construction are decided from the
    texts by the engine, so they never land here)."""
    import numpy as np
    import pandas as pd

    assert batched.keys() == naive.keys()
    out = {}
    for t, df in batched.items():
        ref = naive[t]
        assert list(df.columns) == list(ref.columns), t
        near = near_tie_rows(df, atol) | near_tie_rows(ref, atol)
        for col in df.columns:
            if pd.api.types.is_float_dtype(df[col]):
                np.testing.assert_allclose(df[col].to_numpy(), ref[col].to_numpy(), atol=atol, err_msg=f"{t}.{col}")
            else:
                a, b = df[col][~near], ref[col][~near]
                assert a.tolist() == b.tolist(), f"{t}.{col}"
        out[t] = near
    return out
