"""Stage ``world``, toy profile: generate every split of ``world.splits`` (images, scene graphs, captions)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...config import section
from ...world import world_configs
from ...world.generate import generate_world


def build_world(params: Mapping[str, Any], out: Path) -> dict[str, dict[str, Any]]:
    """Write the world into ``out`` (an empty folder); returns ``{split: summary}`` (``n_images``, ...)."""
    wcfg, ccfg, specs = world_configs(dict(params))
    return generate_world(specs, wcfg, ccfg, section(params, "root_seed"), out, workers=os.cpu_count() or 1)
