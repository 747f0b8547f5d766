"""Stage ``benchmarks``, real profile: the released files of ``real_inputs`` (``$VAR`` expanded, absolute paths),
then the shared perturbations and checked manifest (:func:`vlcomp.eval.inputs.finish_benchmarks`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...config import expand_inputs, section
from ...eval.inputs import finish_benchmarks


def build_benchmarks(params: Mapping[str, Any], world: str | Path, out: Path,
                     names: Sequence[str] | None = None) -> dict[str, Any]:
    """Check the released files and finish the benchmarks in ``out``; returns the manifest. ``world`` is unused
    (the released benchmarks bring their own images); it keeps the toy profile's signature."""
    # absolute paths: the manifest's relative paths are its own (the twins' files under ``out``)
    inputs = {k: (str(Path(v).resolve()) if isinstance(v, str) and v and Path(v).exists() else v)
              for k, v in expand_inputs(section(params, "real_inputs")).items()}
    return finish_benchmarks(params, inputs, out, names=names)
