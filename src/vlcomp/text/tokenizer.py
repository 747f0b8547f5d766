"""Tokenizers, keyed by the names used in params.yaml (``clip.tokenizer``).

- ``world``: a word-level tokenizer over the toy world's closed vocabulary (about 110 ids), shipped with the
  package. It makes the tiny models about 15x smaller than open_clip's 49,408-row BPE table would.
- ``world-v2``: the same with the words of the later world knobs appended (bars, the extended synonyms, "four",
  "but": :func:`vlcomp.world.concepts.world_words` version 2). Version 1's words keep their ids; the end token
  moves (it is the largest id), so a model trained with one does not read the other's tokens.
- ``open_clip``: open_clip's own tokenizer for an architecture (the real profile).

Both return ``LongTensor[N, context_length]``, open_clip's layout: start token, ids, end token (the largest
id, which open_clip's text tower pools at), zero padding.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import torch

from ..registry import Registry
from ..world.concepts import world_words

TOKENIZERS: Registry = Registry("tokenizer")

_NON_WORD = re.compile(r"[^a-z0-9 ]+")


class WorldTokenizer:
    """Lower-cases, drops punctuation, splits on whitespace; unknown words map to ``<unk>``."""

    PAD, UNK, SOT = 0, 1, 2

    def __init__(self, context_length: int = 32, version: int = 1) -> None:
        if context_length < 3:
            raise ValueError(f"clip.context_length={context_length}: must be at least 3")
        self.context_length = context_length
        self.words = world_words(version)
        self.ids = {w: i + 3 for i, w in enumerate(self.words)}
        self.EOT = len(self.words) + 3
        self.vocab_size = self.EOT + 1

    def encode(self, text: str) -> list[int]:
        return [self.ids.get(w, self.UNK) for w in _NON_WORD.sub(" ", text.lower()).split()]

    def __call__(self, texts: str | Sequence[str]) -> torch.Tensor:
        if isinstance(texts, str):
            texts = [texts]
        out = np.zeros((len(texts), self.context_length), dtype=np.int64)  # filled in numpy: ~10x faster
        for i, t in enumerate(texts):
            ids = [self.SOT, *self.encode(t)][: self.context_length - 1] + [self.EOT]
            out[i, : len(ids)] = ids
        return torch.from_numpy(out)


@TOKENIZERS.register("world")
def _world(arch: str, context_length: int) -> WorldTokenizer:
    return WorldTokenizer(context_length)


@TOKENIZERS.register("world-v2")
def _world_v2(arch: str, context_length: int) -> WorldTokenizer:
    return WorldTokenizer(context_length, version=2)


@TOKENIZERS.register("open_clip")
def _open_clip(arch: str, context_length: int):
    import open_clip

    return open_clip.get_tokenizer(arch, context_length=context_length)


def get_tokenizer(name: str, arch: str, context_length: int):
    return TOKENIZERS.get(name)(arch, context_length)
