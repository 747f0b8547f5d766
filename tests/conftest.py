"""Shared test setup: offline, no tracking, one thread, the CPU pin; small fixtures used by several test folders."""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["VLCOMP_TRACKING"] = "off"
os.environ["MLFLOW_DISABLE_TELEMETRY"] = "true"

from vlcomp.determinism import pin_environment  # noqa: E402

pin_environment()  # the stages' CPU kernel pin, before torch runs anything (tests compare bits with the stages)

from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)

REAL_SAMPLES = Path(__file__).resolve().parents[1].parent / "shared" / "real_samples"


def pytest_collection_modifyitems(config, items) -> None:
    """Whole-DAG tests first, then the other slow ones, then the rest (stable within each group): `make test` runs
    the suite on every core with pytest-xdist, handing out one test file at a time in this order (`--dist loadfile
    --no-loadscope-reorder`), so the minutes-long DAG runs start at once, on different workers, instead of last."""
    def rank(item) -> int:
        return 0 if item.get_closest_marker("pipeline") else 1 if item.get_closest_marker("slow") else 2
    items.sort(key=rank)


@pytest.fixture
def rng() -> np.random.Generator:
    """A fresh seeded numpy generator per test."""
    return np.random.default_rng(0)


@pytest.fixture
def torch_generator() -> torch.Generator:
    """A fresh seeded torch generator per test."""
    return torch.Generator().manual_seed(0)


@pytest.fixture(scope="session")
def real_samples() -> Path:
    """``../shared/real_samples`` (tests using it skip themselves when a file is absent)."""
    return REAL_SAMPLES


def word_level_tokenizer(texts: list[str]):
    """A word-level Hugging Face tokenizer over the words of ``texts`` (``<pad>``, ``<unk>``, ``</s>`` first): tiny
    causal LMs in tests (the analogy generator's tests and the real-profile pipeline fixture) are built on it."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    pre = pre_tokenizers.Whitespace()
    words = sorted({w for t in texts for w, _ in pre.pre_tokenize_str(t)})
    vocab = {w: i for i, w in enumerate(["<pad>", "<unk>", "</s>", *words])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", unk_token="<unk>", eos_token="</s>")


@pytest.fixture(scope="session")
def word_tokenizer():
    """:func:`word_level_tokenizer`, as a fixture (test folders are separate packages: no cross-folder imports)."""
    return word_level_tokenizer
