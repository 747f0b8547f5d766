"""Fixtures of the zoo tests: three PIL images of different sizes."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image


@pytest.fixture(scope="module")
def images() -> list[Image.Image]:
    rng = np.random.default_rng(0)
    sizes = ((40, 52), (48, 48), (30, 64))
    return [Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)) for h, w in sizes]
