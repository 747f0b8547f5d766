"""The metrics tree, read the same way for both profiles: one folder per evaluated model.

Layout (the evaluate stages' DVC outputs):

- ``<metrics_dir>/<name>/{metrics,provenance}.json``: models trained or resolved by the pipeline, source
  :data:`PIPELINE`: one base model per chain (``clip-b<k>``, one per key of params ``bases``; the legacy single
  ``clip`` when params have no ``bases``) and each fine-tuned variant of params ``variants``
  (``<method>-b<k>s<s>``);
- ``<metrics_dir>/released/<name>/{metrics,provenance}.json``: the papers' released checkpoints (keys of params
  ``released_models``) evaluated as they are, source :data:`RELEASED`.

:func:`model_dirs`, :func:`read_metrics` and :func:`read_provenance` read the files (the toy report's long table,
:func:`vlcomp.reporting.collect.collect`, is built on them). :func:`read_tree` returns a :class:`MetricsTree`: every
expected model, present or missing, with its metrics and provenance; a folder counts only if its
``provenance.json`` names the profile asked for (leftovers of the other profile are listed as ignored). A model's
method, chain (``base``, a key of params ``bases``) and fine-tuning seed come from its provenance, else from params
(``variants``, ``bases``), never from its folder name. Each model is matched with a model of one paper's printed
values (:mod:`vlcomp.reporting.paper_values`): a pipeline model by its method (``negclip-b0s0`` -> ``negclip``), a
released checkpoint by its name.

``provenance.json`` holds deterministic fields only (:data:`PROVENANCE_COLUMNS` are the ones shown); a stage run's
git commit and MLflow run id live in MLflow (experiment ``evaluate``, filter ``tags.dvc_stage = '<stage>'``) and in
``runs/<stage>.json`` (:func:`run_record_fields`), which no stage and no report reads.

The views at the end (:func:`benchmarks_wide`, :func:`provenance_table`, :func:`ignored_table`) show reproduced
values and provenance only (each paper's introduction lives with its report code, e.g.
:func:`vlcomp.reporting.papers.aro.real.intro_markdown`); :mod:`vlcomp.reporting.comparison` puts them
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
from ..config import BASE_METHOD, base_model_name
from ..tracking import EVALUATE_EXPERIMENT, RUNS_DIR

TOY_PROFILE, REAL_PROFILE = "toy", "real"  # the values of params ``profile``
PIPELINE, RELEASED = "pipeline", "released"  # where a model comes from (ModelResult.source)
RELEASED_SUBDIR = "released"
#: The provenance fields every table shows (deterministic: the same re-run gives the same values).
PROVENANCE_COLUMNS: tuple[str, ...] = ("dvc_stage", "profile")
#: Where a stage run's record lives (commit, MLflow run id, machine, wall time): never read by a report.
RUN_RECORD_COLUMNS: tuple[str, ...] = ("run_record", "mlflow_runs")

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
class Chain:
    """Where a pipeline model sits among the whole-chain runs (pretrain -> mining -> LR selection -> fine-tune):
    its method, its chain (``base``, a key of params ``bases``), the chain's base seed and its fine-tuning seed
    (``""`` for a base model). ``base`` and ``base_seed`` are ``""`` where neither the provenance nor params name
    them (folders of the single-base layout)."""

    method: str
    base: str = ""
    base_seed: str = ""
    seed: str = ""

    @property
    def label(self) -> str:
        """``b0s1`` for a fine-tuned model, ``b0`` for a base model, ``s1`` when the chain is unknown."""
        base = f"b{self.base_seed}" if self.base_seed != "" else self.base
        return f"{base}s{self.seed}" if self.seed != "" else (base or "single run")


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def chain_of(name: str, provenance: Mapping[str, Any] | None, params: Mapping[str, Any]) -> Chain:
    """A pipeline model's :class:`Chain`, from its provenance (``method``, ``base``, ``seed``), else from params
    (``variants.<name>``; a base model is the ``bases`` key whose model is named ``name``, :func:`base_model_name`).
    A name params do not know is its own method (the legacy base model ``clip``)."""
    prov, bases = provenance or {}, _section(params, "bases")
    spec = _section(params, "variants").get(name) or {}
    base_key = next((b for b in bases if base_model_name(b) == name), "")
    method = _text(prov.get("method") or spec.get("method") or (BASE_METHOD if base_key else name))
    base = _text(prov.get("base") or spec.get("base") or base_key)
    base_seed = _text((bases.get(base) or {}).get("seed")) if base else ""
    seed = prov.get("seed") if prov.get("seed") not in (None, "") else spec.get("seed")
    return Chain(method, base, base_seed, _text(seed))


def variant_method(name: str, provenance: Mapping[str, Any] | None, params: Mapping[str, Any]) -> str:
    """A pipeline model's method (:func:`chain_of`)."""
    return chain_of(name, provenance, params).method


def expected_pipeline_models(params: Mapping[str, Any]) -> list[str]:
    """The pipeline's models in params order: one base model per key of ``bases`` (``clip-b<k>``; the legacy
    single ``clip`` when params have no ``bases``), then every variant."""
    bases = [base_model_name(b) for b in _section(params, "bases")] or [BASE_METHOD]
    return [*bases, *(v for v in _section(params, "variants") if v not in bases)]


def run_record_fields(stage: str) -> dict[str, str]:
    """Where the record of the stage run that wrote a model's metrics lives (commit, MLflow run id, machine, wall
    time): ``runs/<stage>.json`` and the MLflow runs of experiment ``evaluate`` tagged with the stage. Neither is a
    stage output; the report only names them."""
    if not stage:
        return dict.fromkeys(RUN_RECORD_COLUMNS, "")
    return {"run_record": f"{RUNS_DIR}/{stage}.json",
            "mlflow_runs": f"experiment {EVALUATE_EXPERIMENT}: tags.dvc_stage = '{stage}'"}


@dataclass(frozen=True)
class ModelResult:
    """One model of the tree: present (a metrics folder of the profile) or expected but missing."""

    name: str  # folder name (``negclip-b0s0``; a released checkpoint's ``released_models`` key)
    source: str  # PIPELINE or RELEASED
    method: str  # pipeline: the variant's method (``clip`` for a base model); released: the name
    seed: str  # the fine-tuning seed ("" for a base model and a released checkpoint)
    paper_model: str  # the printed values' model this is compared with ("" when they have none)
    folder: Path
    present: bool
    metrics: Mapping[str, float] = field(default_factory=dict)
    provenance: Mapping[str, Any] = field(default_factory=dict)
    base: str = ""  # the chain (a key of params bases); "" for a released checkpoint or when unknown
    base_seed: str = ""

    @property
    def chain(self) -> Chain:
        return Chain(self.method, self.base, self.base_seed, self.seed)

    def value(self, key: str | None) -> float:
        """The metric, or NaN when absent."""
        v = self.metrics.get(key, math.nan) if key else math.nan
        return float(v)

    def provenance_fields(self) -> dict[str, str]:
        return {c: _text(self.provenance.get(c)) for c in PROVENANCE_COLUMNS}


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


def paper_model_of(source: str, method: str, name: str, paper_values: pd.DataFrame) -> str:
    """The printed values' model a result is compared with: a pipeline model's method, a released checkpoint's
    name; "" when the printed values have no such model."""
    model = method if source == PIPELINE else name
    return model if model in printed_models(paper_values) else ""


def _model(name: str, source: str, folder: Path, prov: Mapping[str, Any] | None, params: Mapping[str, Any],
           paper_values: pd.DataFrame, metrics: Mapping[str, float] | None = None) -> ModelResult:
    chain = chain_of(name, prov, params) if source == PIPELINE else Chain(name)
    return ModelResult(name, source, chain.method, chain.seed, paper_model_of(source, chain.method, name, paper_values),
                       folder, metrics is not None, metrics or {}, prov or {}, chain.base, chain.base_seed)


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
        found[d.name] = _model(d.name, source, d, prov, params, paper_values, read_metrics(d / "metrics.json"))
    return found, ignored


def _ordered(found: dict[str, ModelResult], expected: list[str], source: str, root: Path,
             params: Mapping[str, Any], paper_values: pd.DataFrame) -> list[ModelResult]:
    """Expected models in params order (a missing one as a placeholder), then unexpected ones by name."""
    out = [found[name] if name in found else _model(name, source, root / name, None, params, paper_values)
           for name in expected]
    return out + [found[n] for n in sorted(found) if n not in expected]


def read_tree(metrics_dir: str | Path, params_path: str | Path, models_dir: str | Path = "models", *,
         paper_values: pd.DataFrame, profile: str, released_subdir: str = RELEASED_SUBDIR,
         models: Iterable[str] | None = None) -> MetricsTree:
    """Read the metrics tree of ``profile``: pipeline models (:func:`expected_pipeline_models`; with ``models``, a
    paper's :attr:`vlcomp.reporting.scope.Scope.models`, only those) and released checkpoints (params
    ``released_models``), each present or missing and matched with ``paper_values``, plus the folders ignored because
    they belong to no model of ``profile``."""
    metrics_dir, params_path = Path(metrics_dir), Path(params_path)
    params = read_params(params_path)
    pipe, ign_pipe = _scan(metrics_dir, PIPELINE, profile, params, paper_values, skip=(released_subdir,))
    expected = expected_pipeline_models(params)
    if models is not None:  # another paper's models are left out; folders of no model stay (unexpected, listed)
        wanted, every = set(models), set(expected)
        expected = [m for m in expected if m in wanted]
        pipe = {k: v for k, v in pipe.items() if k in wanted or k not in every}
    rel_root = metrics_dir / released_subdir
    rel, ign_rel = _scan(rel_root, RELEASED, profile, params, paper_values)
    models = (_ordered(pipe, expected, PIPELINE, metrics_dir, params, paper_values)
              + _ordered(rel, list(_section(params, "released_models")), RELEASED, rel_root, params, paper_values))
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


PROVENANCE_LEGEND = ("One row per evaluated model. `metrics/<model>/provenance.json` holds deterministic fields only; "
                     "the git commit, MLflow run id, machine and wall time of the stage run that wrote it are in "
                     f"`{RUNS_DIR}/<dvc_stage>.json` and in MLflow (experiment `{EVALUATE_EXPERIMENT}`, filter "
                     "`tags.dvc_stage = '<dvc_stage>'`; `make ui`).")
PROVENANCE_TABLE_COLUMNS: tuple[str, ...] = ("model", "source", "method", "base", "base_seed", "seed", "status",
                                             "metrics_file", *PROVENANCE_COLUMNS, *RUN_RECORD_COLUMNS)


def provenance_table(tree: MetricsTree) -> pd.DataFrame:
    """One row per model: where its numbers come from (its chain, DVC stage and profile) and where the record of
    the stage run lives (:func:`run_record_fields`)."""
    rows = [{"model": m.name, "source": m.source, "method": m.method, "base": m.base, "base_seed": m.base_seed,
             "seed": m.seed, "status": "present" if m.present else "missing",
             "metrics_file": str(m.folder / "metrics.json"), **m.provenance_fields(),
             **run_record_fields(_text(m.provenance.get("dvc_stage")))} for m in tree.models]
    return pd.DataFrame(rows, columns=list(PROVENANCE_TABLE_COLUMNS))


def ignored_table(tree: MetricsTree) -> pd.DataFrame:
    """Folders with a metrics.json that are not part of the tree, and why."""
    return pd.DataFrame([{"folder": str(d), "reason": why} for d, why in tree.ignored], columns=["folder", "reason"])


