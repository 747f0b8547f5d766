"""The ARO / NegCLIP report of the **paper profile** (real weights and data), read from the metrics tree alone.

Inputs (nothing else is read):

- ``<metrics_dir>/<name>/{metrics,provenance}.json``: models trained or resolved by the pipeline (``clip`` and each
  fine-tuned variant of params ``variants``), source ``"pipeline"``;
- ``<metrics_dir>/released/<name>/{metrics,provenance}.json``: the papers' released checkpoints (keys of params
  ``paper_models``) evaluated as they are, source ``"released"``;
- the params YAML (sections ``variants``, ``methods``, ``paper_models``; each may be absent);
- the ARO paper's printed numbers (:func:`vlcomp.reporting.paper_values.load_paper_values`).

The other four papers' printed numbers for the same models are compared by
:mod:`vlcomp.reporting.released_values` (its :func:`~vlcomp.reporting.released_values.released_comparison` takes
the :class:`PaperReport` returned by :func:`load`).

A folder counts only if its ``provenance.json`` says ``"profile": "paper"`` (toy leftovers are listed as ignored).
Metric keys are those of :mod:`vlcomp.benchmarks`. A pipeline model is compared with the paper's row of its
method (``negclip-s0`` -> ``negclip``), a released checkpoint with the row of its name.

Every comparison table is long: one row per (table row, model) with ``reproduced``, ``paper``, ``difference``
(reproduced - paper) and the provenance columns; a pipeline method with several training seeds also gets a mean
row (mean and sample std over its seeds). A missing model or metric leaves an empty cell and a ``note``; no number
is ever filled in.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from ..benchmarks.aro import ORDER_METRIC_NAME
from ..benchmarks.retrieval import RETRIEVAL_METRIC_NAME
from ..eval.common import key_part
from ..metrics.aro import VG_RELATION_GROUP_OF
from .aro import T6_ROWS
from .paper_values import MACRO_GROUPS, load_paper_values, lookup

PIPELINE, RELEASED, SEED_MEAN = "pipeline", "released", "pipeline mean"
RELEASED_SUBDIR = "released"
PAPER_PROFILE = "paper"
BASE_MODEL = "clip"  # the pretrain stage's resolved base model (OpenAI CLIP ViT-B/32 in the paper profile)
PAPER_NAME = "aro"
PROVENANCE_COLUMNS: tuple[str, ...] = ("dvc_stage", "git_commit", "mlflow_run_id", "profile")
VG_DATASETS: tuple[str, ...] = ("vg_relation", "vg_attribution")
VG_R = "aro/vg_relation"
REL_KEY = re.compile(rf"^{VG_R}/rel/(?P<rel>.+)/acc$")

NOTE_NOT_EVALUATED = "no benchmark of this workspace scores it"
#: ARO Table 6's zero-shot datasets (benchmark ``zeroshot_aro``)
ZEROSHOT_ARO_TASKS = ("cifar10", "cifar100", "imagenet")
NOTE_MODEL_MISSING = "model not evaluated: no paper-profile metrics folder"
NOTE_METRIC_MISSING = "metric missing from the model's metrics.json"
NOTE_NO_PAPER = "no printed value in the ARO paper for this model"
OTHER_PAPERS_NOTE = ("This table lists reproduced values only. The printed numbers of the CE-CLIP, CoN-CLIP, TSVLC "
                     "and Hard-Positives papers for these checkpoints (and for the pipeline's `clip` and `negclip` "
                     "variants) follow, one section per paper (`vlcomp.reporting.released_values`, transcribed in "
                     "`vlcomp/data/released_paper_values.csv`).")

#: Headline metrics of the released-checkpoints table, in column order (keys of :mod:`vlcomp.benchmarks`).
HEADLINE_PATTERNS: tuple[re.Pattern[str], ...] = tuple(re.compile(p) for p in (
    rf"^{VG_R}/(macro_acc|spatial_macro_acc|verbs_macro_acc)$",
    r"^aro/vg_attribution/macro_acc$",
    rf"^aro/({'|'.join(ORDER_METRIC_NAME.values())})/acc$",
    rf"^retrieval/({'|'.join(RETRIEVAL_METRIC_NAME.values())})/(i2t|t2i)/recall_at_1$",
    r"^sugarcrepe/[^/]+/(micro|macro)_acc$",
    r"^valse/avg_(instruments|columns)$",
    r"^vlchecklist/(overall|.+/avg)$",
    r"^ccneg/acc(_code_tie_rule)?$",
    r"^hardpos/[^/]+/(orig|aug|brittleness)$",
))
COUNT_COLUMNS = frozenset({"n_training_seeds", "n_order_seeds", "paper_n_samples"})


# --------------------------------------------------------------------------- reading the metrics tree


@dataclass(frozen=True)
class ModelResult:
    """One model of the report: present (a paper-profile metrics folder) or expected but missing."""

    name: str  # folder name (``negclip-s0``; a released checkpoint's ``paper_models`` key)
    source: str  # PIPELINE or RELEASED
    method: str  # pipeline: the variant's method (``clip`` for the base); released: the name
    seed: str
    paper_model: str  # the paper CSV's model this is compared with ("" when the CSV has none)
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
class PaperReport:
    models: list[ModelResult]
    ignored: list[tuple[Path, str]]  # (folder, why it is not part of the report)
    params: dict[str, Any]
    paper: pd.DataFrame
    metrics_dir: Path
    models_dir: Path
    params_path: Path

    def present(self, source: str | None = None) -> list[ModelResult]:
        return [m for m in self.models if m.present and (source is None or m.source == source)]

    def missing(self, source: str | None = None) -> list[ModelResult]:
        return [m for m in self.models if not m.present and (source is None or m.source == source)]


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


def _section(params: Mapping[str, Any], name: str) -> dict[str, Any]:
    return dict(params.get(name) or {})


def paper_models_in_csv(paper: pd.DataFrame) -> frozenset[str]:
    """Models the paper CSV prints numbers for (not ``chance``, not the empty model of sample counts)."""
    return frozenset(m for m in paper["model"].unique() if m not in ("", "chance"))


def variant_method(name: str, provenance: Mapping[str, Any] | None, params: Mapping[str, Any]) -> str:
    """A pipeline model's method: its provenance's ``method``, else params ``variants.<name>.method``, else the
    name itself (the base model ``clip``)."""
    if provenance and provenance.get("method"):
        return str(provenance["method"])
    spec = _section(params, "variants").get(name) or {}
    return str(spec.get("method") or name)


def paper_model_of(source: str, method: str, name: str, paper: pd.DataFrame) -> str:
    """The paper CSV model a result is compared with: a pipeline model's method, a released checkpoint's name;
    "" when the CSV has no such model."""
    model = method if source == PIPELINE else name
    return model if model in paper_models_in_csv(paper) else ""


def _seed(name: str, provenance: Mapping[str, Any] | None, params: Mapping[str, Any]) -> str:
    seed = (provenance or {}).get("seed")
    if seed is None or seed == "":
        seed = (_section(params, "variants").get(name) or {}).get("seed", "")
    return "" if seed is None else str(seed)


def _scan(root: Path, source: str, params: Mapping[str, Any], paper: pd.DataFrame,
          skip: Iterable[str] = ()) -> tuple[dict[str, ModelResult], list[tuple[Path, str]]]:
    """Paper-profile model folders directly under ``root`` (those with a ``metrics.json``) and the ignored ones."""
    found: dict[str, ModelResult] = {}
    ignored: list[tuple[Path, str]] = []
    if not root.is_dir():
        return found, ignored
    for d in sorted(p for p in root.iterdir() if p.is_dir() and p.name not in set(skip)):
        if not (d / "metrics.json").exists():
            continue
        prov = read_provenance(d / "provenance.json")
        if prov is None:
            ignored.append((d, "no provenance.json"))
            continue
        if prov.get("profile") != PAPER_PROFILE:
            ignored.append((d, f"profile {prov.get('profile')!r}, not {PAPER_PROFILE!r}"))
            continue
        method = variant_method(d.name, prov, params) if source == PIPELINE else d.name
        found[d.name] = ModelResult(d.name, source, method, _seed(d.name, prov, params) if source == PIPELINE else "",
                                    paper_model_of(source, method, d.name, paper), d, True,
                                    read_metrics(d / "metrics.json"), prov)
    return found, ignored


def _ordered(found: dict[str, ModelResult], expected: list[str], source: str, root: Path,
             params: Mapping[str, Any], paper: pd.DataFrame) -> list[ModelResult]:
    """Expected models in params order (a missing one as a placeholder), then unexpected ones by name."""
    out = []
    for name in expected:
        if name in found:
            out.append(found[name])
            continue
        method = variant_method(name, None, params) if source == PIPELINE else name
        out.append(ModelResult(name, source, method, _seed(name, None, params) if source == PIPELINE else "",
                               paper_model_of(source, method, name, paper), root / name, False))
    return out + [found[n] for n in sorted(found) if n not in expected]


def load(metrics_dir: str | Path, params_path: str | Path, models_dir: str | Path = "models", *,
         released_subdir: str = RELEASED_SUBDIR, paper: pd.DataFrame | None = None) -> PaperReport:
    """Read the metrics tree: pipeline models (``clip`` + params ``variants``) and released checkpoints (params
    ``paper_models``), each present or missing, plus the folders ignored because they are not paper-profile."""
    metrics_dir, params_path = Path(metrics_dir), Path(params_path)
    params = read_params(params_path)
    paper = load_paper_values(PAPER_NAME) if paper is None else paper
    pipe, ign_pipe = _scan(metrics_dir, PIPELINE, params, paper, skip=(released_subdir,))
    rel_root = metrics_dir / released_subdir
    rel, ign_rel = _scan(rel_root, RELEASED, params, paper)
    expected_pipe = [BASE_MODEL, *(v for v in _section(params, "variants") if v != BASE_MODEL)]
    models = (_ordered(pipe, expected_pipe, PIPELINE, metrics_dir, params, paper)
              + _ordered(rel, list(_section(params, "paper_models")), RELEASED, rel_root, params, paper))
    return PaperReport(models, ign_pipe + ign_rel, params, paper, metrics_dir, Path(models_dir), params_path)


# --------------------------------------------------------------------------- paper values and metric keys


@dataclass(frozen=True)
class PaperCell:
    value: float
    std: float  # NaN when the paper prints none
    ref: str  # "ARO-T5 (Table 5)"


def paper_cell(paper: pd.DataFrame, artifact: str, dataset: str, model: str, metric: str,
               group: str = "") -> PaperCell | None:
    """One printed number of the paper CSV, or None."""
    v = lookup(paper, artifact, dataset, model, metric, group)
    if v is None:
        return None
    s = lookup(paper, artifact, dataset, model, metric, group, column="std")
    row = paper[(paper["artifact"] == artifact) & (paper["dataset"] == dataset) & (paper["model"] == model)
                & (paper["metric"] == metric) & (paper["group"] == group)].iloc[0]
    return PaperCell(v, math.nan if s is None else s, f"{artifact} ({row['source']})")


def first_paper_cell(paper: pd.DataFrame, artifacts: Iterable[str], dataset: str, model: str, metric: str,
                     group: str = "") -> PaperCell | None:
    """The first artifact in ``artifacts`` that prints this cell (e.g. Table 5 with its std before Table 6)."""
    for artifact in artifacts:
        cell = paper_cell(paper, artifact, dataset, model, metric, group)
        if cell is not None:
            return cell
    return None


def metric_key(dataset: str, metric: str) -> str | None:
    """The :mod:`vlcomp.benchmarks` key of a paper CSV (dataset, metric); None for a dataset no benchmark scores."""
    if dataset in VG_DATASETS or dataset in ORDER_METRIC_NAME.values():
        return f"aro/{dataset}/{metric}"
    if dataset in RETRIEVAL_METRIC_NAME.values():
        return f"retrieval/{dataset}/{metric}"
    if dataset in ZEROSHOT_ARO_TASKS:
        return f"zeroshot/{dataset}/{metric}"
    return None


def vg_relation_macro_key(group: str) -> str:
    """``overall`` -> ``aro/vg_relation/macro_acc``; ``spatial`` -> ``aro/vg_relation/spatial_macro_acc``."""
    return f"{VG_R}/macro_acc" if group == "overall" else f"{VG_R}/{group}_macro_acc"


# --------------------------------------------------------------------------- comparison rows

PaperFn = Callable[[str], PaperCell | None]


def _row(m: ModelResult, fields: Mapping[str, Any], key: str | None, cell: PaperCell | None,
         extra: Mapping[str, Any]) -> dict[str, Any]:
    reproduced = m.value(key)
    notes = []
    if key is None:
        notes.append(NOTE_NOT_EVALUATED)
    elif not m.present:
        notes.append(NOTE_MODEL_MISSING)
    elif math.isnan(reproduced):
        notes.append(NOTE_METRIC_MISSING)
    if cell is None:
        notes.append(NOTE_NO_PAPER)
    paper = cell.value if cell else math.nan
    return {**fields, "model": m.name, "source": m.source, "method": m.method, "seed": m.seed,
            "paper_model": m.paper_model, "metric_key": key or "", "reproduced": reproduced, **extra,
            "std_over_training_seeds": math.nan, "n_training_seeds": math.nan,
            "paper": paper, "paper_std": cell.std if cell else math.nan, "paper_ref": cell.ref if cell else "",
            "difference": reproduced - paper, "note": "; ".join(notes), **m.provenance_fields()}


def _joined(values: Iterable[str]) -> str:
    return ", ".join(dict.fromkeys(v for v in values if v))


#: Columns every comparison row has (the rest are table fields or per-table extras).
_BASE_KEYS = frozenset({"model", "source", "method", "seed", "paper_model", "metric_key", "reproduced",
                        "std_over_training_seeds", "n_training_seeds", "paper", "paper_std", "paper_ref",
                        "difference", "note", *PROVENANCE_COLUMNS})


def _seed_means(rows: list[dict[str, Any]], fields: Mapping[str, Any], paper_fn: PaperFn) -> list[dict[str, Any]]:
    """One mean row per pipeline method with a value on two or more training seeds."""
    by_method: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r["source"] == PIPELINE and not math.isnan(r["reproduced"]):
            by_method.setdefault(r["method"], []).append(r)
    out = []
    for method, members in by_method.items():
        if len(members) < 2:
            continue
        vals = np.array([r["reproduced"] for r in members])
        mean = float(vals.mean())
        pm = members[0]["paper_model"]
        cell = paper_fn(pm) if pm else None
        paper = cell.value if cell else math.nan
        seeds = [r["seed"] for r in members]
        out.append({**fields, "model": f"{method} (seeds {', '.join(seeds)})", "source": SEED_MEAN, "method": method,
                    "seed": ",".join(seeds), "paper_model": pm, "metric_key": members[0]["metric_key"],
                    "reproduced": mean, **{k: math.nan for k in members[0] if k not in _BASE_KEYS and k not in fields},
                    "std_over_training_seeds": float(vals.std(ddof=1)), "n_training_seeds": len(vals),
                    "paper": paper, "paper_std": cell.std if cell else math.nan, "paper_ref": cell.ref if cell else "",
                    "difference": mean - paper,
                    "note": f"mean over {len(vals)} training seeds" + ("" if cell else f"; {NOTE_NO_PAPER}"),
                    **{c: _joined(r[c] for r in members) for c in PROVENANCE_COLUMNS}})
    return out


def comparison_rows(models: Iterable[ModelResult], fields: Mapping[str, Any], key: str | None, paper_fn: PaperFn,
                    extra: Callable[[ModelResult], Mapping[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Rows of one table row (``fields``) for every model: pipeline models, their seed means, released ones."""
    models = list(models)

    def rows_of(source: str) -> list[dict[str, Any]]:
        return [_row(m, fields, key, paper_fn(m.paper_model) if m.paper_model else None,
                     extra(m) if extra else {}) for m in models if m.source == source]

    pipe = rows_of(PIPELINE)
    return pipe + _seed_means(pipe, fields, paper_fn) + rows_of(RELEASED)


def _frame(rows: list[dict[str, Any]], fields: Iterable[str], extra: Iterable[str] = ()) -> pd.DataFrame:
    cols = [*fields, "model", "source", "method", "seed", "paper_model", "metric_key", "reproduced", *extra,
            "std_over_training_seeds", "n_training_seeds", "paper", "paper_std", "paper_ref", "difference", "note",
            *PROVENANCE_COLUMNS]
    return pd.DataFrame(rows, columns=cols)


# --------------------------------------------------------------------------- the tables


def relations(report: PaperReport) -> list[tuple[str, str, str]]:
    """(relation, metric key, Table 2 section) for every relation of the paper's Table 2 or of any present
    model's metrics, ordered by section (spatial, verbs, other) then name."""
    p = report.paper
    names = set(p.loc[(p["artifact"] == "ARO-T2") & (p["metric"] == "acc"), "group"])
    by_part = {key_part(n): n for n in (*VG_RELATION_GROUP_OF, *names)}
    for m in report.present():
        for k in m.metrics:
            hit = REL_KEY.match(k)
            if hit:
                names.add(by_part.get(hit["rel"], hit["rel"]))
    order = {g: i for i, g in enumerate(dict.fromkeys(VG_RELATION_GROUP_OF.values()))}
    rows = [(n, f"{VG_R}/rel/{key_part(n)}/acc", VG_RELATION_GROUP_OF.get(n, "other")) for n in names]
    return sorted(rows, key=lambda r: (order.get(r[2], len(order)), r[0]))


def t2(report: PaperReport) -> pd.DataFrame:
    """ARO-T2: VG-Relation macro rows (overall, spatial, verbs) for every model, then per-relation accuracy for
    every present model; paper columns from Table 2 (and its sample counts)."""
    p, rows = report.paper, []
    for group in MACRO_GROUPS:
        fields = {"section": group, "relation": f"macro ({group})", "paper_n_samples": math.nan}
        rows += comparison_rows(report.models, fields, vg_relation_macro_key(group),
                                lambda pm, g=group: paper_cell(p, "ARO-T2", "vg_relation", pm, "macro_acc", g))
    for rel, key, section in relations(report):
        n = lookup(p, "ARO-T2", "vg_relation", "", "n_samples", rel)
        fields = {"section": section, "relation": rel, "paper_n_samples": math.nan if n is None else n}
        rows += comparison_rows(report.present(), fields, key,
                                lambda pm, r=rel: paper_cell(p, "ARO-T2", "vg_relation", pm, "acc", r))
    return _frame(rows, ("section", "relation", "paper_n_samples"))


def x1(report: PaperReport) -> pd.DataFrame:
    """ARO-X1: VG-Attribution macro accuracy per model, next to the paper's in-text numbers."""
    key = metric_key("vg_attribution", "macro_acc")
    rows = comparison_rows(report.models, {"task": "VG-Attribution"}, key,
                           lambda pm: paper_cell(report.paper, "ARO-X1", "vg_attribution", pm, "macro_acc"))
    return _frame(rows, ("task",))


def t6(report: PaperReport) -> pd.DataFrame:
    """ARO-T6: every row of Table 6, under the one metric key both profiles write. The zero-shot rows are
    reproduced when ``zeroshot_aro`` ran (image-folder exports of CIFAR10/100 and ImageNet in ``paper_inputs``),
    else they keep the paper's value with the note that the metric is missing."""
    rows = []
    for group, task, key, dataset, metric in T6_ROWS:
        rows += comparison_rows(report.models, {"group": group, "task": task}, key,
                                lambda pm, d=dataset, mt=metric: paper_cell(report.paper, "ARO-T6", d, pm, mt))
    return _frame(rows, ("group", "task"))


def order_table(report: PaperReport) -> pd.DataFrame:
    """COCO / Flickr30k-Order accuracy (mean over order seeds, with its std over them) per model; paper values from
    Table 5 (with std) where printed, else Table 6."""
    rows = []
    for dataset in ORDER_METRIC_NAME.values():
        key = metric_key(dataset, "acc")
        rows += comparison_rows(
            report.models, {"dataset": dataset}, key,
            lambda pm, d=dataset: first_paper_cell(report.paper, ("ARO-T5", "ARO-T6"), d, pm, "acc"),
            extra=lambda m, k=key, d=dataset: {"std_over_order_seeds": m.value(f"{k}_std"),
                                               "n_order_seeds": m.value(metric_key(d, "n_seeds"))})
    return _frame(rows, ("dataset",), ("std_over_order_seeds", "n_order_seeds"))


def headline_keys(models: Iterable[ModelResult]) -> list[str]:
    """Every headline metric key found in ``models``, in :data:`HEADLINE_PATTERNS` order, then by name."""
    found = {k for m in models for k in m.metrics}
    return [k for pat in HEADLINE_PATTERNS for k in sorted(found) if pat.match(k)]


def benchmarks_wide(report: PaperReport, sources: Iterable[str] = (RELEASED,)) -> pd.DataFrame:
    """Models of ``sources`` (rows, missing ones included) on every headline metric found among the present
    ones (columns); reproduced values only. A row's ``note`` counts its empty cells per benchmark."""
    models = [m for m in report.models if m.source in tuple(sources)]
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


def released_wide(report: PaperReport) -> pd.DataFrame:
    """The released checkpoints on every benchmark: :func:`benchmarks_wide` over source ``released``."""
    return benchmarks_wide(report, (RELEASED,))


def provenance_table(report: PaperReport) -> pd.DataFrame:
    """One row per model: where its numbers come from (DVC stage, commit, MLflow run, profile)."""
    rows = [{"model": m.name, "source": m.source, "method": m.method, "seed": m.seed,
             "status": "present" if m.present else "missing", "metrics_file": str(m.folder / "metrics.json"),
             **m.provenance_fields()} for m in report.models]
    return pd.DataFrame(rows, columns=["model", "source", "method", "seed", "status", "metrics_file",
                                       *PROVENANCE_COLUMNS])


def ignored_table(report: PaperReport) -> pd.DataFrame:
    """Folders with a metrics.json that are not part of the report, and why."""
    return pd.DataFrame([{"folder": str(d), "reason": why} for d, why in report.ignored], columns=["folder", "reason"])


def wide_view(long: pd.DataFrame, index: Iterable[str]) -> pd.DataFrame:
    """A readable pivot of a long comparison table: one row per ``index`` value, one reproduced column per
    model (``<model> (<source>)``) and one ``paper: <model>`` column per paper model."""
    index = list(index)
    rows: dict[tuple, dict[str, Any]] = {}
    for r in long.to_dict("records"):
        row = rows.setdefault(tuple(r[c] for c in index), {c: r[c] for c in index})
        row[f"{r['model']} ({r['source']})"] = r["reproduced"]
        pcol = f"paper: {r['paper_model']}"
        if r["paper_model"] and (pcol not in row or pd.isna(row[pcol])):
            row[pcol] = r["paper"]
    models = list(dict.fromkeys(f"{m} ({s})" for m, s in zip(long["model"], long["source"], strict=True)))
    papers = list(dict.fromkeys(f"paper: {m}" for m in long["paper_model"] if m))
    return pd.DataFrame(list(rows.values()), columns=[*index, *models, *papers])


# --------------------------------------------------------------------------- text and output


def _names(models: Iterable[ModelResult]) -> str:
    names = [f"`{m.name}`" for m in models]
    return ", ".join(names) if names else "none"


def intro_markdown(report: PaperReport) -> str:
    """Profile, which models are present and missing, and which folders were ignored."""
    lines = [
        f"**Profile:** `{PAPER_PROFILE}`: real weights and real data. The base model `{BASE_MODEL}` is OpenAI CLIP "
        "as resolved by the pretrain stage, the fine-tuned variants are trained by this pipeline, and the released "
        "checkpoints are the papers' own weights evaluated as they are; all are scored on the released benchmark "
        "files by `vlcomp.benchmarks`. Reproduced numbers are read from "
        f"`{report.metrics_dir}/<model>/metrics.json` (source *pipeline*) and "
        f"`{report.metrics_dir}/{RELEASED_SUBDIR}/<model>/metrics.json` (source *released*); the paper's numbers "
        f"from `vlcomp/data/{PAPER_NAME}_paper_values.csv` (the other papers' from "
        "`vlcomp/data/released_paper_values.csv`). *difference* = reproduced - paper.",
        "",
    ]
    if not report.present():
        lines += [f"**No paper-profile metrics found under `{report.metrics_dir}`.** No folder there has a "
                  f"`provenance.json` with `\"profile\": \"{PAPER_PROFILE}\"`, so every reproduced cell below is "
                  "empty (run the paper profile's evaluate stages and `scripts/evaluate_released.py` first).", ""]
    lines += [f"- Pipeline models present: {_names(report.present(PIPELINE))}; missing: "
              f"{_names(report.missing(PIPELINE))}.",
              f"- Released checkpoints present: {_names(report.present(RELEASED))}; missing: "
              f"{_names(report.missing(RELEASED))}."]
    methods = _section(report.params, "methods")
    if methods:
        lines.append("- Fine-tuning methods (params `methods`): " + "; ".join(
            f"`{name}` ({', '.join(f'{k}={v}' for k, v in (spec or {}).items())})" for name, spec in methods.items())
            + ". Methods with several training seeds also get a mean row (mean ± sample std over seeds).")
    if not report.params:
        lines.append(f"- No params read from `{report.params_path}` (missing or empty): no variants or released "
                     "checkpoints are expected, only folders found are listed.")
    if report.ignored:
        lines.append("- Ignored (not paper-profile): " + ", ".join(f"`{d}` ({why})" for d, why in report.ignored)
                     + ".")
    return "\n".join(lines)


def notes_markdown(df: pd.DataFrame) -> str:
    """One bullet per distinct note of a long table, naming the models (and row counts) it applies to."""
    if df.empty or "note" not in df:
        return ""
    by_note: dict[str, dict[str, int]] = {}
    for model, note in zip(df["model"], df["note"], strict=True):
        for n in filter(None, str(note).split("; ")):
            if n.startswith("mean over"):
                continue
            by_note.setdefault(n, {})
            by_note[n][model] = by_note[n].get(model, 0) + 1
    return "\n".join(f"- *{n}*: " + ", ".join(f"`{m}` ({c} row{'s' * (c > 1)})" for m, c in counts.items())
                     for n, counts in by_note.items())


def _fmt(column: str, v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, int | float | np.number) and not isinstance(v, bool):
        if column in COUNT_COLUMNS:
            return str(int(v))
        return f"{v:+.3f}" if column == "difference" else f"{v:.3f}"
    return str(v)


def markdown(df: pd.DataFrame, empty: str = "*(no rows)*") -> str:
    """A Markdown table: 3 decimals (signed for ``difference``), counts as ints, an empty cell for NaN."""
    if df.empty:
        return empty
    shown = pd.DataFrame({c: [_fmt(c, v) for v in df[c]] for c in df.columns}, columns=df.columns)
    return shown.to_markdown(index=False, disable_numparse=True)


def save(df: pd.DataFrame, out_dir: str | Path, name: str) -> pd.DataFrame:
    """Write ``<out_dir>/tables/<name>.csv`` (full precision, NaN as an empty cell) and ``.md``; return ``df``."""
    out = Path(out_dir) / "tables"
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / f"{name}.csv", index=False)
    (out / f"{name}.md").write_text(markdown(df) + "\n")
    return df


def section(df: pd.DataFrame, out_dir: str | Path, name: str, index: Iterable[str] | None = None) -> str:
    """Save ``df`` as ``tables/<name>`` (and its :func:`wide_view` over ``index`` as ``tables/<name>_wide``); return
    the Markdown to show: the wide view (or the table itself) followed by the table's notes."""
    save(df, out_dir, name)
    if index is not None and not df.empty:
        parts = [markdown(save(wide_view(df, index), out_dir, f"{name}_wide")),
                 f"Long form with provenance columns: `tables/{name}.csv`."]
    else:
        parts = [markdown(df)]
    notes = notes_markdown(df)
    if notes:
        parts.append("**Notes**\n\n" + notes)
    return "\n\n".join(parts)
