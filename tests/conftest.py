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
