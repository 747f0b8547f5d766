"""The metrics tree, read the same way for both profiles: one folder per evaluated model.

Layout (the evaluate stages' DVC outputs):

- ``<metrics_dir>/<name>/{metrics,provenance}.json``: models trained or resolved by the pipeline (the base model
  ``clip`` and each fine-tuned variant of params ``variants``), source :data:`PIPELINE`;
- ``<metrics_dir>/released/<name>/{metrics,provenance}.json``: the papers' released checkpoints (keys of params
  ``paper_models``) evaluated as they are, source :data:`RELEASED`.

:func:`model_dirs`, :func:`read_metrics` and :func:`read_provenance` read the files (the toy report's long table,
:func:`vlcomp.reporting.collect.collect`, is built on them). :func:`read_tree` returns a :class:`MetricsTree`: every
expected model, present or missing, with its metrics and provenance; a folder counts only if its
``provenance.json`` names the profile asked for (leftovers of the other profile are listed as ignored). Each
model is matched with a model of one paper's printed values (:mod:`vlcomp.reporting.paper_values`): a pipeline
model by its method (``negclip-s0`` -> ``negclip``), a released checkpoint by its name.

The views at the end (:func:`benchmarks_wide`, :func:`provenance_table`, :func:`ignored_table`,
:func:`intro_markdown`) show reproduced values and provenance only; :mod:`vlcomp.reporting.comparison` puts them
next to printed values.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from ..benchmarks.aro import ORDER_METRIC_NAME
from ..benchmarks.retrieval import RETRIEVAL_METRIC_NAME
from .paper_values import PAPER_FILES

TOY_PROFILE, PAPER_PROFILE = "toy", "paper"  # the values of params ``profile``
PIPELINE, RELEASED = "pipeline", "released"  # where a model comes from (ModelResult.source)
RELEASED_SUBDIR = "released"
BASE_METHOD = "clip"  # the pretrained base model every method starts from (folder and method name)
PROVENANCE_COLUMNS: tuple[str, ...] = ("dvc_stage", "git_commit", "mlflow_run_id", "profile")

NOTE_MODEL_MISSING = "model not evaluated: no metrics folder of this profile"
NOTE_METRIC_MISSING = "metric missing from the model's metrics.json"

#: Headline metrics of :func:`benchmarks_wide`, in column order (keys of :mod:`vlcomp.benchmarks`).
HEADLINE_PATTERNS: tuple[re.Pattern[str], ...] = tuple(re.compile(p) for p in (
    r"^aro/vg_relation/(macro_acc|spatial_macro_acc|verbs_macro_acc)$",
    r"^aro/vg_attribution/macro_acc$",
    rf"^aro/({'|'.join(ORDER_METRIC_NAME.values())})/acc$",
    rf"^retrieval/({'|'.join(RETRIEVAL_METRIC_NAME.values())})/(i2t|t2i)/recall_at_1$",
    r"^sugarcrepe/[^/]+/(micro|macro)_acc$",
    r"^valse/avg_(instruments|columns)$",
    r"^vlchecklist/(overall|.+/avg)$",
    r"^ccneg/acc(_code_tie_rule)?$",
    r"^hardpos/[^/]+/(orig|aug|brittleness)$",
))


# --------------------------------------------------------------------------- the files


def _read_object(path: Path) -> dict[str, Any]:
    try:
        obj = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{path}: expected a JSON object, got {type(obj).__name__}")
    return obj


def read_metrics(path: str | Path) -> dict[str, float]:
    """A ``metrics.json``: a JSON object of numbers (bools and strings are errors). Raises ValueError naming the
    file otherwise."""
    path = Path(path)
    obj = _read_object(path)
    for key, v in obj.items():
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise ValueError(f"{path}: expected a JSON object of numbers, but {key!r} is {v!r}")
    return {k: float(v) for k, v in obj.items()}


def read_provenance(path: str | Path) -> dict[str, Any] | None:
    """A ``provenance.json`` object, or None when the file does not exist."""
    path = Path(path)
    return _read_object(path) if path.exists() else None


def read_params(path: str | Path) -> dict[str, Any]:
    """The params YAML as a dict ({} for a missing or empty file)."""
    path = Path(path)
    if not path.exists():
        return {}
    params = yaml.safe_load(path.read_text()) or {}
    if not isinstance(params, dict):
        raise ValueError(f"{path}: expected a YAML mapping, got {type(params).__name__}")
    return params


def model_dirs(root: str | Path, skip: Iterable[str] = ()) -> list[Path]:
    """The model folders directly under ``root`` (those holding a ``metrics.json``), by name; none when ``root``
    does not exist."""
    root, skip = Path(root), set(skip)
    if not root.is_dir():
        return []
    return [d for d in sorted(root.iterdir()) if d.is_dir() and d.name not in skip and (d / "metrics.json").exists()]


# --------------------------------------------------------------------------- the models


@dataclass(frozen=True)
class ModelResult:
    """One model of the tree: present (a metrics folder of the profile) or expected but missing."""

    name: str  # folder name (``negclip-s0``; a released checkpoint's ``paper_models`` key)
    source: str  # PIPELINE or RELEASED
    method: str  # pipeline: the variant's method (``clip`` for the base); released: the name
    seed: str
    paper_model: str  # the printed values' model this is compared with ("" when they have none)
    folder: Path
    present: bool
    metrics: Mapping[str, float] = field(default_factory=dict)
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def value(self, key: str | None) -> float:
        """The metric, or NaN when absent."""
        v = self.metrics.get(key, math.nan) if key else math.nan
        return float(v)

    def provenance_fields(self) -> dict[str, str]:
        return {c: "" if self.provenance.get(c) is None else str(self.provenance.get(c)) for c in PROVENANCE_COLUMNS}


@dataclass
class MetricsTree:
    """The models of one profile's metrics tree, matched with one paper's printed values."""

    models: list[ModelResult]
    ignored: list[tuple[Path, str]]  # (folder, why it is not part of the tree)
    params: dict[str, Any]
    paper_values: pd.DataFrame  # the printed values (vlcomp.reporting.paper_values) models are matched with
    profile: str
    metrics_dir: Path
    models_dir: Path
    params_path: Path

    def present(self, source: str | None = None) -> list[ModelResult]:
        return [m for m in self.models if m.present and (source is None or m.source == source)]

    def missing(self, source: str | None = None) -> list[ModelResult]:
        return [m for m in self.models if not m.present and (source is None or m.source == source)]


def _section(params: Mapping[str, Any], name: str) -> dict[str, Any]:
    return dict(params.get(name) or {})


def printed_models(paper_values: pd.DataFrame) -> frozenset[str]:
    """Models the printed values have numbers for (not ``chance``, not the empty model of sample counts)."""
    return frozenset(m for m in paper_values["model"].unique() if m not in ("", "chance"))


def variant_method(name: str, provenance: Mapping[str, Any] | None, params: Mapping[str, Any]) -> str:
    """A pipeline model's method: its provenance's ``method``, else params ``variants.<name>.method``, else the
    name itself (the base model ``clip``)."""
    if provenance and provenance.get("method"):
        return str(provenance["method"])
    spec = _section(params, "variants").get(name) or {}
    return str(spec.get("method") or name)


def paper_model_of(source: str, method: str, name: str, paper_values: pd.DataFrame) -> str:
    """The printed values' model a result is compared with: a pipeline model's method, a released checkpoint's
    name; "" when the printed values have no such model."""
    model = method if source == PIPELINE else name
    return model if model in printed_models(paper_values) else ""


def _seed(name: str, provenance: Mapping[str, Any] | None, params: Mapping[str, Any]) -> str:
    seed = (provenance or {}).get("seed")
    if seed is None or seed == "":
        seed = (_section(params, "variants").get(name) or {}).get("seed", "")
    return "" if seed is None else str(seed)


def _scan(root: Path, source: str, profile: str, params: Mapping[str, Any], paper_values: pd.DataFrame,
          skip: Iterable[str] = ()) -> tuple[dict[str, ModelResult], list[tuple[Path, str]]]:
    """The model folders of ``profile`` directly under ``root`` and the ignored ones."""
    found: dict[str, ModelResult] = {}
    ignored: list[tuple[Path, str]] = []
    for d in model_dirs(root, skip):
        prov = read_provenance(d / "provenance.json")
        if prov is None:
            ignored.append((d, "no provenance.json"))
            continue
        if prov.get("profile") != profile:
            ignored.append((d, f"profile {prov.get('profile')!r}, not {profile!r}"))
            continue
        method = variant_method(d.name, prov, params) if source == PIPELINE else d.name
        found[d.name] = ModelResult(d.name, source, method, _seed(d.name, prov, params) if source == PIPELINE else "",
                                    paper_model_of(source, method, d.name, paper_values), d, True,
                                    read_metrics(d / "metrics.json"), prov)
    return found, ignored


def _ordered(found: dict[str, ModelResult], expected: list[str], source: str, root: Path,
             params: Mapping[str, Any], paper_values: pd.DataFrame) -> list[ModelResult]:
    """Expected models in params order (a missing one as a placeholder), then unexpected ones by name."""
    out = []
    for name in expected:
        if name in found:
            out.append(found[name])
            continue
        method = variant_method(name, None, params) if source == PIPELINE else name
        out.append(ModelResult(name, source, method, _seed(name, None, params) if source == PIPELINE else "",
                               paper_model_of(source, method, name, paper_values), root / name, False))
    return out + [found[n] for n in sorted(found) if n not in expected]


def read_tree(metrics_dir: str | Path, params_path: str | Path, models_dir: str | Path = "models", *,
         paper_values: pd.DataFrame, profile: str, released_subdir: str = RELEASED_SUBDIR) -> MetricsTree:
    """Read the metrics tree of ``profile``: pipeline models (``clip`` + params ``variants``) and released
    checkpoints (params ``paper_models``), each present or missing and matched with ``paper_values``, plus the
    folders ignored because they belong to no model of ``profile``."""
    metrics_dir, params_path = Path(metrics_dir), Path(params_path)
    params = read_params(params_path)
    pipe, ign_pipe = _scan(metrics_dir, PIPELINE, profile, params, paper_values, skip=(released_subdir,))
    rel_root = metrics_dir / released_subdir
    rel, ign_rel = _scan(rel_root, RELEASED, profile, params, paper_values)
    expected_pipe = [BASE_METHOD, *(v for v in _section(params, "variants") if v != BASE_METHOD)]
    models = (_ordered(pipe, expected_pipe, PIPELINE, metrics_dir, params, paper_values)
              + _ordered(rel, list(_section(params, "paper_models")), RELEASED, rel_root, params, paper_values))
    return MetricsTree(models, ign_pipe + ign_rel, params, paper_values, profile, metrics_dir, Path(models_dir),
                       params_path)


# --------------------------------------------------------------------------- views without printed values


def headline_keys(models: Iterable[ModelResult]) -> list[str]:
    """Every headline metric key found in ``models``, in :data:`HEADLINE_PATTERNS` order, then by name."""
    found = {k for m in models for k in m.metrics}
    return [k for pat in HEADLINE_PATTERNS for k in sorted(found) if pat.match(k)]


def benchmarks_wide(tree: MetricsTree, sources: Iterable[str] = (RELEASED,)) -> pd.DataFrame:
    """Models of ``sources`` (rows, missing ones included) on every headline metric found among the present
    ones (columns); reproduced values only. A row's ``note`` counts its empty cells per benchmark."""
    models = [m for m in tree.models if m.source in tuple(sources)]
    keys = headline_keys(m for m in models if m.present)
    rows = []
    for m in models:
        values = {k: m.value(k) for k in keys}
        empty: dict[str, int] = {}
        for k, v in values.items():
            if math.isnan(v):
                empty[k.split("/")[0]] = empty.get(k.split("/")[0], 0) + 1
        if not m.present:
            note = NOTE_MODEL_MISSING
        elif empty:
            note = f"{NOTE_METRIC_MISSING}: " + ", ".join(f"{b} ({n} cells)" for b, n in empty.items())
        else:
            note = ""
        rows.append({"model": m.name, "source": m.source, **values, "note": note, **m.provenance_fields()})
    return pd.DataFrame(rows, columns=["model", "source", *keys, "note", *PROVENANCE_COLUMNS])


def released_wide(tree: MetricsTree) -> pd.DataFrame:
    """The released checkpoints on every benchmark: :func:`benchmarks_wide` over source ``released``."""
    return benchmarks_wide(tree, (RELEASED,))


def provenance_table(tree: MetricsTree) -> pd.DataFrame:
    """One row per model: where its numbers come from (DVC stage, commit, MLflow run, profile)."""
    rows = [{"model": m.name, "source": m.source, "method": m.method, "seed": m.seed,
             "status": "present" if m.present else "missing", "metrics_file": str(m.folder / "metrics.json"),
             **m.provenance_fields()} for m in tree.models]
    return pd.DataFrame(rows, columns=["model", "source", "method", "seed", "status", "metrics_file",
                                       *PROVENANCE_COLUMNS])


def ignored_table(tree: MetricsTree) -> pd.DataFrame:
    """Folders with a metrics.json that are not part of the tree, and why."""
    return pd.DataFrame([{"folder": str(d), "reason": why} for d, why in tree.ignored], columns=["folder", "reason"])


def _names(models: Iterable[ModelResult]) -> str:
    names = [f"`{m.name}`" for m in models]
    return ", ".join(names) if names else "none"


def intro_markdown(tree: MetricsTree, paper: str) -> str:
    """The paper profile's introduction: where the numbers come from (``paper``'s printed values among them),
    which models are present and missing, and which folders were ignored."""
    lines = [
        f"**Profile:** `{tree.profile}`: real weights and real data. The base model `{BASE_METHOD}` is OpenAI CLIP "
        "as resolved by the pretrain stage, the fine-tuned variants are trained by this pipeline, and the released "
        "checkpoints are the papers' own weights evaluated as they are; all are scored on the released benchmark "
        "files by `vlcomp.benchmarks`. Reproduced numbers are read from "
        f"`{tree.metrics_dir}/<model>/metrics.json` (source *pipeline*) and "
        f"`{tree.metrics_dir}/{RELEASED_SUBDIR}/<model>/metrics.json` (source *released*); the paper's numbers "
        f"from `vlcomp/data/{PAPER_FILES[paper]}` (the other papers' from "
        "`vlcomp/data/released_paper_values.csv`). *difference* = reproduced - paper.",
        "",
    ]
    if not tree.present():
        lines += [f"**No {tree.profile}-profile metrics found under `{tree.metrics_dir}`.** No folder there has a "
                  f"`provenance.json` with `\"profile\": \"{tree.profile}\"`, so every reproduced cell below is "
                  "empty (run the paper profile's evaluate stages and `scripts/evaluate_released.py` first).", ""]
    lines += [f"- Pipeline models present: {_names(tree.present(PIPELINE))}; missing: "
              f"{_names(tree.missing(PIPELINE))}.",
              f"- Released checkpoints present: {_names(tree.present(RELEASED))}; missing: "
              f"{_names(tree.missing(RELEASED))}."]
    methods = _section(tree.params, "methods")
    if methods:
        lines.append("- Fine-tuning methods (params `methods`): " + "; ".join(
            f"`{name}` ({', '.join(f'{k}={v}' for k, v in (spec or {}).items())})" for name, spec in methods.items())
            + ". Methods with several training seeds also get a mean row (mean ± sample std over seeds).")
    if not tree.params:
        lines.append(f"- No params read from `{tree.params_path}` (missing or empty): no variants or released "
                     "checkpoints are expected, only folders found are listed.")
    if tree.ignored:
        lines.append(f"- Ignored (not {tree.profile}-profile): "
                     + ", ".join(f"`{d}` ({why})" for d, why in tree.ignored) + ".")
    return "\n".join(lines)
