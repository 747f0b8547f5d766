"""What the HF cross encoders (:mod:`.blip`, :mod:`.flava`) share: loading a local HF directory, fixed-length
tokenisation, the cross-scorer contract and the dual view over unimodal features.

The released models are HF-format directories (``config.json``, ``model.safetensors`` or ``pytorch_model.bin``,
the tokenizer files), e.g. ``Salesforce/blip-itm-base-coco`` and ``facebook/flava-full`` saved locally. They load
with ``local_files_only=True`` (``weights_only`` for ``.bin``), and missing or unexpected weights are errors
(transformers would random-initialise them with a mere warning).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

import torch
from torch import nn

from ....models.weights import few_keys
from .spec import INT, STR, Key, batch_keys


def hf_keys() -> dict[str, Key]:
    """The keys of every HF family: ``path`` (the directory), ``tokenizer`` (a directory; null = ``path``),
    ``pair_batch`` and the unimodal batches."""
    return {"path": Key(STR, required=True, path=True), "tokenizer": Key(STR, nullable=True, path=True),
            "pair_batch": Key(INT, default=32, positive=True), **batch_keys(32, 256)}


def _hf_dir(name: str, path: str, key: str) -> Path:
    p = Path(path)
    if not p.is_dir():
        raise FileNotFoundError(f"{p}: directory of model {name!r} not found (spec key {key!r})")
    return p


def load_hf_model(cls: type, name: str, path: str, *, allow_missing: tuple[str, ...] = ()) -> nn.Module:
    """``cls.from_pretrained(path)`` offline and weights-only; missing (outside the ``allow_missing``
    prefixes), unexpected or mismatched weights are an error naming the directory."""
    p = _hf_dir(name, path, "path")
    if not (p / "config.json").is_file():
        raise FileNotFoundError(f"{p / 'config.json'}: not found (model {name!r} needs an HF-format "
                                "directory)")
    try:
        model, info = cls.from_pretrained(p, local_files_only=True, output_loading_info=True,
                                          weights_only=True)
    except Exception as e:  # noqa: BLE001 - OSError / ValueError / safetensors errors for a bad directory
        first = str(e).splitlines()[0] if str(e) else ""
        raise ValueError(f"{p}: cannot load {cls.__name__} ({type(e).__name__}: {first})") from None
    bad = {"missing": [k for k in info.get("missing_keys", ()) if not k.startswith(allow_missing)],
           "unexpected": list(info.get("unexpected_keys", ())),
           "mismatched": [str(m[0] if isinstance(m, tuple) else m) for m in info.get("mismatched_keys", ())]}
    if any(bad.values()):
        detail = "; ".join(f"{kind} {few_keys(keys)}" for kind, keys in bad.items() if keys)
        raise ValueError(f"{p}: weights do not fit {cls.__name__} ({detail})")
    return model.eval()


def load_hf_tokenizer(name: str, path: str, key: str, vocab_size: int):
    """The tokenizer saved in a local directory (no hub); its ids must fit the model's vocabulary."""
    from transformers import AutoTokenizer

    p = _hf_dir(name, path, key)
    try:
        tok = AutoTokenizer.from_pretrained(p, local_files_only=True)
    except Exception as e:  # noqa: BLE001
        raise ValueError(f"{p}: cannot load the tokenizer of model {name!r} "
                         f"({type(e).__name__}: {e})") from None
    if len(tok) > vocab_size:
        raise ValueError(f"{p}: tokenizer of model {name!r} has {len(tok)} ids, the model's vocabulary "
                         f"{vocab_size}")
    return tok


def _unique(items: Sequence) -> tuple[list, torch.Tensor]:
    """Distinct objects (by identity: a repeated PIL image is preprocessed and encoded once) + an index."""
    first: dict[int, int] = {}
    uniq, idx = [], []
    for it in items:
        if id(it) not in first:
            first[id(it)] = len(uniq)
            uniq.append(it)
        idx.append(first[id(it)])
    return uniq, torch.tensor(idx, dtype=torch.long)


def _check_pairs(images: Sequence, texts: Sequence[str]) -> None:
    if len(images) != len(texts):
        raise ValueError(f"score_pairs: {len(images)} images but {len(texts)} texts")


class Tokens:
    """Padded / truncated tokenisation at a fixed length (fixed shapes: no score depends on the batch)."""

    KEEP = ("input_ids", "attention_mask", "token_type_ids")

    def __init__(self, tokenizer, max_length: int, device: torch.device) -> None:
        self.tokenizer, self.max_length, self.device = tokenizer, max_length, device

    def __call__(self, texts: Sequence[str]) -> dict[str, torch.Tensor]:
        enc = self.tokenizer(list(texts), padding="max_length", truncation=True, max_length=self.max_length,
                             return_tensors="pt")
        return {k: v.to(self.device) for k, v in enc.items() if k in self.KEEP}


class DualView:
    """A dual scorer over a cross encoder's unimodal features (``image_fn`` / ``text_fn`` map chunks to
    L2-normalised CPU float32 rows)."""

    kind: Literal["dual"] = "dual"

    def __init__(self, name: str, image_fn: Callable, text_fn: Callable, image_batch: int,
                 text_batch: int) -> None:
        self.name, self._image_fn, self._text_fn = name, image_fn, text_fn
        self.image_batch, self.text_batch = image_batch, text_batch

    @torch.no_grad()
    def encode_images(self, images: Sequence) -> torch.Tensor:
        b = self.image_batch
        feats = [self._image_fn(images[s : s + b]) for s in range(0, len(images), b)]
        return torch.cat(feats) if feats else torch.zeros(0, 0)

    @torch.no_grad()
    def encode_texts(self, texts: Sequence[str]) -> torch.Tensor:
        b = self.text_batch
        feats = [self._text_fn(texts[s : s + b]) for s in range(0, len(texts), b)]
        return torch.cat(feats) if feats else torch.zeros(0, 0)

    @torch.no_grad()
    def score_pairs(self, images: Sequence, texts: Sequence[str]) -> torch.Tensor:
        _check_pairs(images, texts)
        return (self.encode_images(images) * self.encode_texts(texts)).sum(dim=1)


class CrossScorer:
    """The contract's unimodal methods for a cross scorer: there are none; its dual view has them."""

    kind: Literal["cross"] = "cross"
    name: str
    device: torch.device
    pair_batch: int

    def encode_images(self, images: Sequence) -> torch.Tensor:
        raise TypeError(f"scorer {self.name!r} is a cross encoder: use score_pairs, or "
                        "dual_view().encode_images")

    def encode_texts(self, texts: Sequence[str]) -> torch.Tensor:
        raise TypeError(f"scorer {self.name!r} is a cross encoder: use score_pairs, or "
                        "dual_view().encode_texts")

    @torch.no_grad()
    def score_pairs(self, images: Sequence, texts: Sequence[str]) -> torch.Tensor:
        """Pairs in chunks of ``pair_batch``; each chunk preprocesses its distinct images once."""
        _check_pairs(images, texts)
        out = []
        for s in range(0, len(images), self.pair_batch):
            uniq, idx = _unique(images[s : s + self.pair_batch])
            out.append(self._score_chunk(uniq, idx.to(self.device), texts[s : s + self.pair_batch]).cpu())
        return torch.cat(out) if out else torch.zeros(0)

    def _score_chunk(self, images: Sequence, idx: torch.Tensor, texts: Sequence[str]) -> torch.Tensor:
        """Scores of pairs ``(images[idx[i]], texts[i])``."""
        raise NotImplementedError
