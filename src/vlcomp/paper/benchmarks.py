"""Stage ``benchmarks`` of the paper profile: load and check every released benchmark before any GPU time.

Each benchmark named in ``paper_evaluate.benchmarks`` is prepared through its loader (every record validated,
errors naming the file and the record) and every image it needs is looked for. The stage writes
``data/benchmarks/manifest.json``: per benchmark, the number of items and distinct images, and the SHA-256 of
each annotation file it read, so a changed file on disk shows up in the provenance of every evaluation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..benchmarks.registry import benchmarks_named
from ..eval.engine import RetrievalTask, check_image_files
from .world import sha256_file


def annotation_files(inputs: Mapping[str, Any]) -> dict[str, str]:
    """The annotation files among ``inputs`` (every existing regular file it names, directories' JSON files)."""
    out: dict[str, str] = {}

    def visit(key: str, value: Any) -> None:
        if isinstance(value, Mapping):
            for k, v in value.items():
                visit(f"{key}.{k}", v)
        elif isinstance(value, str) and value:
            p = Path(value)
            if p.is_file():
                out[key] = str(p)
            elif p.is_dir() and not any(part.endswith("images") for part in key.split(".")):  # not image folders
                for f in sorted(p.glob("*.json")):
                    out[f"{key}/{f.name}"] = str(f)

    for k, v in inputs.items():
        visit(k, v)
    return out


def check_benchmarks(names: Sequence[str], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Prepare every benchmark (records validated) and check its images exist; returns the manifest."""
    benches = benchmarks_named(names)
    manifest: dict[str, Any] = {"benchmarks": {}}
    for b in benches:
        task = b.prepare(inputs)
        check_image_files(task.image_keys, task.image_file, task.load_image, task.name)
        n_items = len(task.texts) if isinstance(task, RetrievalTask) else len(task.meta)
        manifest["benchmarks"][b.name] = {"stands_for": b.stands_for, "n_items": int(n_items),
                                          "n_images": len(set(task.image_keys)), "tables": list(b.tables)}
    manifest["annotation_sha256"] = {k: sha256_file(p) for k, p in annotation_files(inputs).items()
                                     if Path(p).suffix.lower() not in (".jpg", ".jpeg", ".png")}
    return manifest
