"""The blind-text ceilings in the reports and the matrix: reading ``metrics/blind/<name>/`` and the tables that put
the ceiling beside each model's own-image and wrong-image scores.

A blind reader (params ``blind.<name>``, stage ``evaluate_blind@<name>``, :mod:`vlcomp.eval.blind`) knows only
one split's scene-graph co-occurrence counts: no training, no image. Its folder sits under the metrics tree but is
no model folder (:data:`BLIND_SUBDIR`; :func:`vlcomp.reporting.tree.model_dirs` lists only folders holding a
``metrics.json`` directly under ``metrics/``), so it never enters a method's rows, a claims ledger, a spread over
chains or the MLflow summary runs. The reports and the matrix show each reader as one reference row labelled
:data:`BLIND_LABEL`: one deterministic value per cell, no spread (nothing varies between runs of a count).

:func:`ceiling_table` is the one table both papers' reports show: every choice benchmark's measures (rows), the
reader's value, and per method shown its own-image and wrong-image scores (mean ± sample std over whole chains).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

#: The folder of the blind readers under the metrics tree: ``metrics/blind/<name>/``.
BLIND_SUBDIR = "blind"
#: The label of a blind reader's row (one reader; several add their name).
BLIND_LABEL = "blind-text ceiling (scene-graph counts, no image)"
#: The ``source`` of a blind reader's rows in the long tables (beside ``toy`` and ``paper only``).
BLIND_SOURCE = "blind text"
#: What its row's "runs" say: it is no run of a method.
BLIND_RUNS = "no run: counts of one split, no image, no training"


@dataclass(frozen=True)
class BlindResult:
    """One blind reader's metrics (``metrics/blind/<name>/metrics.json``) and provenance."""

    name: str
    label: str
    metrics: Mapping[str, float] = field(default_factory=dict)
    provenance: Mapping[str, Any] = field(default_factory=dict)
    folder: Path = Path()

    def value(self, key: str | None) -> float:
        """The metric, or NaN when the reader has none (a benchmark it skips, a key it cannot have)."""
        return float(self.metrics.get(key, math.nan)) if key else math.nan

    @property
    def split(self) -> str:
        return str(self.provenance.get("split") or (self.provenance.get("counts") or {}).get("split") or "")


def blind_names(params: Mapping[str, Any]) -> list[str]:
    """The blind readers params define (keys of ``blind``), in params order."""
    spec = params.get("blind") or {}
    if not isinstance(spec, Mapping):
        raise ValueError(f"params: blind must map reader names to {{split, smoothing}}, got {spec!r}")
    return list(spec)


def read_blind(metrics_dir: str | Path, params: Mapping[str, Any]) -> list[BlindResult]:
    """Every blind reader of params whose folder holds a ``metrics.json`` of params' profile (one not run yet, or
    left by another profile, is absent: its rows are simply not shown)."""
    from .tree import read_metrics, read_provenance

    names = blind_names(params)
    profile = params.get("profile", "toy")
    out = []
    for name in names:
        folder = Path(metrics_dir) / BLIND_SUBDIR / name
        if not (folder / "metrics.json").is_file():
            continue
        prov = read_provenance(folder / "provenance.json") or {}
        if prov.get("profile") != profile:
            continue
        label = BLIND_LABEL if len(names) == 1 else f"{BLIND_LABEL}: {name}"
        out.append(BlindResult(name, label, read_metrics(folder / "metrics.json"), prov, folder))
    return out


# --------------------------------------------------------------------------- the ceiling table


@dataclass(frozen=True)
class Measure:
    """One row of the ceiling table: a benchmark's metric and, where the benchmark scores one, its wrong-image
    counterpart."""

    label: str
    benchmark: str
    key: str
    wrong: str | None = None


def wrong_image_key(key: str) -> str | None:
    """The wrong-image control's key of an own-image key, where the benchmarks write one: VG ``.../macro_acc`` ->
    ``.../wrong_image_macro_acc`` (``.../<kind>_macro_acc`` -> ``.../<kind>_wrong_image_macro_acc``); SugarCrepe /
    VALSE ``.../<subset>/acc`` -> ``.../wrong_image_acc``;
    VL-CheckList ``vlchecklist/<group>/avg`` -> ``vlchecklist/wrong_image/<group>/avg``."""
    if key.startswith("aro/vg_") and key.endswith("macro_acc") and "wrong_image" not in key:
        return key[: -len("macro_acc")] + "wrong_image_macro_acc"  # also .../geometric_macro_acc and the like
    if key.startswith(("sugarcrepe/", "valse/")) and key.endswith("/acc") and key.count("/") == 2:
        return key[: -len("acc")] + "wrong_image_acc"
    if key.startswith("vlchecklist/") and "/wrong_image/" not in key and key.endswith("/avg"):
        return key.replace("vlchecklist/", "vlchecklist/wrong_image/", 1)
    return None


def measures(benchmarks: Sequence[str], keys: set[str]) -> list[Measure]:
    """The ceiling table's rows for ``benchmarks`` (``evaluate.benchmarks`` order), those of them found in
    ``keys`` (the metric keys of the reader and the models shown): VG-R (and its geometric / role-asymmetric halves,
    where the benchmark splits them) and VG-A macro, the Order accuracies, each
    SugarCrepe category, each VALSE instrument, VL-CheckList's three groups, CC-Neg, CREPE-Negate's Recall@1 and
    the Hard Positives' Orig accuracies."""
    from ..eval.common import key_part
    from ..formats import sugarcrepe as sc
    from ..formats import valse

    per: dict[str, list[tuple[str, str]]] = {
        "vg_relation": [("VG-Relation (macro)", "aro/vg_relation/macro_acc"),
                        ("VG-Relation geometric (macro)", "aro/vg_relation/geometric_macro_acc"),
                        ("VG-Relation role-asymmetric (macro)", "aro/vg_relation/role_macro_acc")],
        "vg_attribution": [("VG-Attribution (macro)", "aro/vg_attribution/macro_acc")],
        "coco_order": [("COCO-Order", "aro/coco_order/acc")],
        "flickr_order": [("Flickr30k-Order", "aro/flickr30k_order/acc")],
        "sugarcrepe": [(f"SugarCrepe {c}", f"sugarcrepe/{c}/acc") for c in sc.CATEGORIES],
        "valse": [(f"VALSE {i}", f"valse/{key_part(i)}/acc") for i in valse.INSTRUMENTS],
        "vlchecklist": [(f"VL-CheckList {g.capitalize()}", f"vlchecklist/{g}/avg")
                        for g in ("object", "attribute", "relation")],
        "ccneg": [("CC-Neg", "ccneg/acc")],
        "crepe_negate": [("CREPE-Negate (R@1)", "crepe/negate/acc")],
        "replace": [("Hard Positives REPLACE (Orig)", "hardpos/replace/orig")],
        "swap": [("Hard Positives SWAP (Orig)", "hardpos/swap/orig")],
    }
    out = []
    for b in benchmarks:
        for label, key in per.get(b, []):
            if key in keys:
                wrong = wrong_image_key(key)
                out.append(Measure(label, b, key, wrong if wrong in keys else None))
    return out


#: Columns of the ceiling table's CSV (one row per measure and method, blind readers as their own rows).
CEILING_COLUMNS = ("benchmark", "measure", "metric_key", "model", "method", "source", "own_image", "own_image_sd",
                   "wrong_image", "wrong_image_sd", "n")


def ceiling_long(summ: pd.DataFrame, methods, shown: Sequence[str], blind: Sequence[BlindResult],
                 benchmarks: Sequence[str]) -> pd.DataFrame:
    """The ceiling table, long and numeric: per measure (:func:`measures`) one row per blind reader (its value in
    both image columns: it reads no image, so its wrong-image score is its own), then one per method of ``shown``
    (mean and sample std over its whole chains, :func:`vlcomp.reporting.collect.summary`; n chains)."""
    from .collect import value

    keys = set(summ.loc[summ["method"].isin(list(shown)), "key"]) | {k for b in blind for k in b.metrics}
    rows = []
    for m in measures(benchmarks, keys):
        base = {"benchmark": m.benchmark, "measure": m.label, "metric_key": m.key}
        for b in blind:
            v = b.value(m.key)
            rows.append({**base, "model": b.label, "method": b.name, "source": BLIND_SOURCE, "own_image": v,
                         "own_image_sd": math.nan, "wrong_image": b.value(m.wrong) if m.wrong else math.nan,
                         "wrong_image_sd": math.nan, "n": pd.NA})
        for meth in shown:
            n = value(summ, meth, m.key, "n")
            rows.append({**base, "model": methods.label(meth), "method": meth, "source": "toy",
                         "own_image": value(summ, meth, m.key), "own_image_sd": value(summ, meth, m.key, "std"),
                         "wrong_image": value(summ, meth, m.wrong) if m.wrong else math.nan,
                         "wrong_image_sd": value(summ, meth, m.wrong, "std") if m.wrong else math.nan,
                         "n": pd.NA if math.isnan(n) else int(n)})
    return pd.DataFrame(rows, columns=list(CEILING_COLUMNS)).astype({"n": "Int64"})


def ceiling_wide(long: pd.DataFrame, fmt: Callable[[float, float, Any], str] | None = None) -> pd.DataFrame:
    """For reading: one row per measure; the blind readers' column(s), then per method ``<label>, own image`` and
    ``<label>, wrong image``, each cell ``fmt(mean, sd, n)`` (default :func:`vlcomp.reporting.render.cell`:
    ``mean ± sd``, ``(n=1)`` for one chain; empty where not measured)."""
    from .render import cell

    fmt = fmt or cell
    rows: dict[str, dict[str, Any]] = {}
    for r in long.to_dict("records"):
        row = rows.setdefault(r["measure"], {"benchmark": r["benchmark"], "measure": r["measure"]})
        if r["source"] == BLIND_SOURCE:
            row[r["model"]] = fmt(r["own_image"], math.nan, math.nan)
        else:
            n = math.nan if r["n"] is pd.NA else r["n"]
            row[f"{r['model']}, own image"] = fmt(r["own_image"], r["own_image_sd"], n)
            row[f"{r['model']}, wrong image"] = fmt(r["wrong_image"], r["wrong_image_sd"], n)
    return pd.DataFrame(list(rows.values())).fillna("")


CEILING_INTRO = (
    "Not a paper artifact (issue 27, item 6). ARO's premise is that a model can score well on VG-Relation and "
    "VG-Attribution from a text prior alone, without looking at the image. The **blind-text ceiling** is a reader "
    "that knows only the scene-graph co-occurrence counts of one training split (P(attribute | shape), P(relation | "
    "subject shape, object shape), shape frequencies; add-one smoothing), reads each caption with the world's "
    "closed grammar into facts and scores it by the sum of their log-probabilities: no training, no image "
    "(`vlcomp.eval.blind`, stage `evaluate_blind@<name>`, `metrics/blind/<name>/`). It is scored by the same engine "
    "and benchmark code as the models, so each benchmark's own tie rule applies to captions it reads the same. Its "
    "wrong-image score is its own-image score (it reads no image). A model near or below the ceiling is not shown "
    "to read anything off the image that the text prior does not already give; own image minus wrong image is "
    "what it does read off the image.")


def ceiling_notes(blind: Sequence[BlindResult]) -> list[str]:
    """What each reader counted, and the two properties of a sum of log-probabilities the numbers show."""
    notes = []
    for b in blind:
        c = b.provenance.get("counts") or {}
        skipped = ", ".join(sorted(b.provenance.get("skipped") or {})) or "none"
        notes.append(f"*{b.label}* (`{b.name}`): counts of split `{c.get('split', b.split)}` ({c.get('n_scenes', '?')} "
                     f"scenes, {c.get('n_objects', '?')} objects, {c.get('n_relations', '?')} relation records), "
                     f"smoothing {b.provenance.get('smoothing', '?')}; benchmarks skipped (no choice between "
                     f"captions): {skipped}. One deterministic value per cell: no spread.")
    notes.append("How to read the reader's low and high cells: a caption that states fewer facts scores higher (so "
                 "it beats SugarCrepe's add-* negatives and loses to the word salads of the Order shuffles, which "
                 "read fewer facts), and a denied fact is usually more likely than the same fact stated (so it "
                 "prefers the negated caption on CC-Neg and CREPE-Negate). Numbers and plurals are not in its "
                 "grammar: VALSE's counting and plural foils read the same as their captions, and VALSE counts "
                 "a tie wrong.")
    return notes


# --------------------------------------------------------------------------- rows for the other tables


def blind_values(blind: Sequence[BlindResult], key: str | None) -> list[tuple[BlindResult, float]]:
    """``(reader, its value of key)`` for every reader that has ``key``."""
    return [(b, b.value(key)) for b in blind if key and not math.isnan(b.value(key))]


def matrix_rows(blind: Sequence[BlindResult], keys: Sequence[str]) -> pd.DataFrame:
    """The matrix's rows of the blind readers (:func:`vlcomp.reporting.matrix.model_matrix`'s columns): one value
    per headline key the reader has, no spread, n empty."""
    rows = [{"method": b.name, "key": k, "mean": b.value(k), "std": math.nan, "n": math.nan, "min": b.value(k),
             "max": b.value(k)} for b in blind for k in keys if not math.isnan(b.value(k))]
    return pd.DataFrame(rows, columns=["method", "key", "mean", "std", "n", "min", "max"])
