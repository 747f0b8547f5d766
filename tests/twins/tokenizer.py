"""The tokenizer of the repository's params (``clip.tokenizer``: the world in use's vocabulary), for the twin tests'
closed-vocabulary checks and toy scorers over the tiny world built from the same params."""

from __future__ import annotations

from pathlib import Path

from vlcomp.config import load_params
from vlcomp.text.tokenizer import get_tokenizer

REPO = Path(__file__).resolve().parents[2]


def params_tokenizer(context_length: int = 32):
    clip = load_params(REPO / "params.yaml")["clip"]
    return get_tokenizer(clip["tokenizer"], clip["arch"], context_length)
