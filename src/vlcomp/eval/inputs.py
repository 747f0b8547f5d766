"""The inputs manifest: what every benchmark reads, written once by the ``benchmarks`` stage in both profiles.

- Toy profile: every twin of ``benchmarks.twins`` is built from the world in its benchmark's released format
  (:mod:`vlcomp.twins`); its entries (paths relative to the benchmarks dir) make the manifest's inputs.
- Real profile: the inputs are ``real_inputs`` (``$VAR`` expanded), the released files on disk.

Then, in both, the ARO text perturbations are materialised once (:mod:`vlcomp.benchmarks.materialise`), every
benchmark of ``evaluate.benchmarks`` is prepared (every record validated) and every image it needs is looked for,
before any model is scored. ``manifest.json`` holds ``inputs`` (the same keys as ``real_inputs``), per benchmark
the items and distinct images, the twins' counts, and the SHA-256 of every annotation file, so a changed file
shows up in every evaluation's provenance. :func:`read_manifest` gives the evaluate stage its inputs back, with
relative paths resolved against the manifest's folder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..io import read_json, sha256_file
from .engine import RetrievalTask, as_tasks, check_image_files

#: ``inputs`` keys that are settings, not paths
SETTING_KEYS = frozenset({"order_seeds", "spacy_model", "seed", "ccneg_split", "ccneg_n_eval", "aro_box_tolerance_px",
                          "aro_vga_min_count", "sugarcrepe_categories", "valse_instruments",
                          "crepe_complexities", "zeroshot_aro_tasks", "zeroshot_conclip_tasks",
                          "zeroshot_elevater_tasks"})


@dataclass(frozen=True)
class BenchmarksConfig:
    """``benchmarks`` in params.yaml (both profiles): ARO's perturbation seeds and, in the toy profile, the twins
    to build with their options (``twins.<name>: {...}``)."""

    order_seeds: int = 3
    shuffle_seeds: int = 3
    twins: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("order_seeds", "shuffle_seeds"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"benchmarks.{name}={v!r}: must be an int >= 1")
        if not isinstance(self.twins, dict) or any(not isinstance(v, dict | type(None)) for v in self.twins.values()):
            raise ValueError("benchmarks.twins must map twin names to option mappings")


def resolve(inputs: Mapping[str, Any], root: str | Path) -> dict[str, Any]:
    """Relative paths of a manifest resolved against ``root`` (settings and absolute paths unchanged)."""
    root = Path(root)

    def one(key: str, value: Any) -> Any:
        if isinstance(value, Mapping):
            return {k: one(k, v) for k, v in value.items()}
        if key in SETTING_KEYS or not isinstance(value, str) or not value or Path(value).is_absolute():
            return value
        return str(root / value)

    return {k: one(k, v) for k, v in inputs.items()}


def annotation_files(inputs: Mapping[str, Any]) -> dict[str, str]:
    """The annotation files among ``inputs``: every regular file named, and the JSON / text files of every folder
    that is not an image folder (hashed into the manifest)."""
    out: dict[str, str] = {}

    def visit(key: str, value: Any) -> None:
        if isinstance(value, Mapping):
            for k, v in value.items():
                visit(f"{key}.{k}", v)
        elif isinstance(value, str) and value and key.split(".")[0] not in SETTING_KEYS:
            p = Path(value)
            if p.is_file():
                out[key] = str(p)
            elif p.is_dir() and not any(part.endswith("images") for part in key.split(".")):
                for f in sorted(p.rglob("*")):
                    if f.suffix.lower() in (".json", ".txt", ".pt", ".csv") and f.is_file():
                        out[f"{key}/{f.relative_to(p).as_posix()}"] = str(f)

    for k, v in inputs.items():
        visit(k, v)
    return out


def check_benchmarks(names: Sequence[str], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Prepare every benchmark (records validated), check its images exist; per benchmark its counts."""
    from ..benchmarks import benchmarks_named

    out: dict[str, Any] = {}
    for b in benchmarks_named(names):
        tasks = as_tasks(b.prepare(inputs))
        for t in tasks:
            check_image_files(t.image_keys, t.image_file, t.load_image, t.name)
        first = tasks[0]
        n_items = len(first.texts) if isinstance(first, RetrievalTask) else sum(len(t.image_keys) for t in tasks)
        out[b.name] = {"stands_for": b.stands_for, "n_items": int(n_items), "n_tasks": len(tasks),
                       "n_images": len({k for t in tasks for k in t.image_keys}), "tables": list(b.tables)}
    return out


def build_manifest(names: Sequence[str], inputs: Mapping[str, Any], out: Path, *, root_relative: bool,
                   counts: Mapping[str, int] | None = None) -> dict[str, Any]:
    """The manifest of ``inputs`` (already complete: twins or paper files, plus materialised entries). With
    ``root_relative`` the paths in ``inputs`` are relative to ``out`` (toy) and are stored that way."""
    resolved = resolve(inputs, out) if root_relative else dict(inputs)
    checked = check_benchmarks(names, resolved)  # fails in seconds on a bad file, before any hashing
    hashes = {k: sha256_file(p) for k, p in annotation_files(resolved).items()}
    return {"inputs": dict(inputs), "benchmarks": checked, "twin_counts": dict(counts or {}),
            "annotation_sha256": hashes}


def read_manifest(benchmarks_dir: str | Path, seed: int | None = None) -> dict[str, Any]:
    """The evaluation inputs of a ``benchmarks`` stage output: the manifest's inputs with relative paths resolved
    against its folder (and ``seed`` = ``root_seed`` for the benchmarks' seeded controls)."""
    d = Path(benchmarks_dir)
    manifest = read_json(d / "manifest.json")
    if not isinstance(manifest, dict) or not isinstance(manifest.get("inputs"), dict):
        raise ValueError(f"{d / 'manifest.json'}: no 'inputs' mapping (rerun the benchmarks stage)")
    inputs = resolve(manifest["inputs"], d)
    if seed is not None:
        inputs["seed"] = seed
    return inputs


def finish_benchmarks(params: Mapping[str, Any], inputs: Mapping[str, Any], out: Path, *,
                     counts: Mapping[str, int] | None = None, names: Sequence[str] | None = None) -> dict[str, Any]:
    """The ``benchmarks`` stage's shared work into ``out``: given the profile's ``inputs`` (the toy twins built
    into ``out``, or the real profile's released files; :mod:`vlcomp.profiles.toy.benchmarks` /
    :mod:`vlcomp.profiles.real.benchmarks`), the materialised ARO perturbations and the checked manifest (written
    to ``out/manifest.json`` and returned). ``names`` defaults to ``evaluate.benchmarks``."""
    from ..benchmarks.materialise import materialise
    from ..config import build, section
    from ..io import write_json
    from ..text.perturb import TextShuffler

    cfg = build(BenchmarksConfig, section(params, "benchmarks"), "benchmarks")
    names = list(names) if names is not None else evaluation_benchmarks(params)
    seed, spacy_model = section(params, "root_seed"), section(params, "nlp.spacy_model")
    inputs = dict(inputs)
    inputs |= materialise(names, resolve(inputs, out), out, order_seeds=cfg.order_seeds,
                          shuffle_seeds=cfg.shuffle_seeds, seed=seed, shuffler=TextShuffler(spacy_model=spacy_model))
    manifest = build_manifest(names, inputs, out, root_relative=True, counts=dict(counts or {}))
    write_json(out / "manifest.json", manifest)
    return manifest


def evaluation_benchmarks(params: Mapping[str, Any], method: str | None = None, base: str | None = None,
                          variant: str | None = None) -> list[str]:
    """``evaluate.benchmarks``: the benchmarks every model is scored on (both profiles), checked to be known. With
    ``variant`` (a fine-tuned run, a key of ``variants``), ``variants.<variant>.benchmarks`` (derived from
    ``methods.<m>.benchmarks`` for the run's chain, :func:`vlcomp.config.chain_benchmarks`); with ``method``, that
    method's own subset where ``methods.<method>.benchmarks`` names one for the first chain (an ablation row scored
    on its paper's benchmarks only); with ``base`` (a base model, no method of its own), its family's
    ``base_models.<family>.benchmarks`` (a chain's default base: every benchmark); kept in ``evaluate.benchmarks``'
    order; a name outside it is an error."""
    from ..benchmarks import benchmarks_named
    from ..config import chain_benchmarks

    names = (params.get("evaluate") or {}).get("benchmarks")
    if not names or not isinstance(names, list):
        raise ValueError("params: evaluate.benchmarks must be a non-empty list of benchmark names")
    try:
        benchmarks_named(names)
    except ValueError as e:
        raise ValueError(f"params evaluate.benchmarks: {e}") from None
    if variant is not None:
        variants = params.get("variants") or {}
        if variant not in variants:
            raise ValueError(f"params: variants has no {variant!r} (variants: {', '.join(variants) or 'none'})")
        own, where = variants[variant].get("benchmarks"), f"variants.{variant}.benchmarks"
    elif method:
        where = f"methods.{method}.benchmarks"
        own = chain_benchmarks(((params.get("methods") or {}).get(method) or {}).get("benchmarks"), True, where)
    else:
        own, where = None, ""
    if own is None and base is not None:
        family = ((params.get("bases") or {}).get(base) or {}).get("family")
        if family is not None:
            where = f"base_models.{family}.benchmarks"
            own = ((params.get("base_models") or {}).get(family) or {}).get("benchmarks")
    if own is None:
        return list(names)
    if not isinstance(own, list) or not own or any(n not in names for n in own):
        raise ValueError(f"params: {where}={own!r} must be a non-empty subset of "
                         f"evaluate.benchmarks ({', '.join(names)})")
    return [n for n in names if n in own]
