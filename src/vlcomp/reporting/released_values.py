"""Printed numbers of the CE-CLIP, CoN-CLIP, TSVLC and Hard-Positives papers for the models the real profile
can load, next to the reproduced ones.

The numbers are transcribed once from the paper catalogs (``/work/shared/papers/{ce_clip,conclip,tsvlc,
hard_positives}.md``) into the packaged ``vlcomp/data/printed/<paper>.csv`` (the schema every paper shares,
:mod:`.printed_values`). This module is a view over them, one row per printed number (:data:`COLUMNS`)::

    paper, artifact, model, benchmark, metric_key, value, source, note

- ``paper``: ``ceclip``, ``conclip``, ``tsvlc`` or ``hardpos`` (:data:`PAPERS`);
- ``artifact``: the catalog's artifact id (``CE-T1``, ``CONCLIP-T3``, ``TSVLC-T1a``, ``HP-T7``, ...);
- ``model``: a ``released_models`` key of the real profile (:data:`MODELS`);
- ``benchmark``: a :data:`vlcomp.benchmarks.registry.BENCHMARKS` name (the files' ``dataset``), ``metric_key``
  the exact key its aggregate function writes (the files' ``metric``, e.g. ``sugarcrepe/replace/macro_acc``,
  ``ccneg/word/no/k/1/acc``);
- ``value``: the printed percentage as a fraction (``59.3`` -> ``0.593``); only ``hardpos/.../delta`` keys (Aug -
  Orig) may be negative;
- ``source``: table / figure / section of the paper; ``note``: the catalog caveats that apply (AMBIGUOUS notes,
  the TSVLC variant, a metric mapping that is not certain), separated by ``" | "`` (:data:`NOTE_SEPARATOR`), or
  empty.

CE-CLIP's and CoN-CLIP's files hold only such numbers, named by ``released_models`` keys (checked here: models,
benchmarks, metric keys). TSVLC's file holds every printed cell of its Tables 1-3, named by the toy methods the
printed rows stand for; this view takes the VL-CheckList values (no deltas) of the rows a released checkpoint stands
for (:data:`TSVLC_RELEASED`, :data:`TSVLC_BENCHMARK`) and reads Table 3's attribute columns as the released
checkpoint's categories (:data:`TSVLC_T3_KEYS`). Hard Positives' file also holds every printed number (Tables 1-10,
Figures 1 and 3), named by the toy methods; this view takes the REPLACE / SWAP and retrieval cells (deltas
included) of Tables 1, 3, 8, 7 and 10 in the rows a released checkpoint stands for (:data:`HARDPOS_RELEASED`,
:data:`HARDPOS_ARTIFACTS`, :data:`HARDPOS_BENCHMARKS`): the numbers, keys and notes this view has always shown.

:func:`released_comparison` puts every transcribed row next to the matching models of a
:class:`~vlcomp.reporting.tree.MetricsTree`, mapped as :mod:`~vlcomp.reporting.tree` maps them to a paper's
printed values: a released checkpoint by its name, a pipeline model by its method (the pipeline's base models
``clip-b<k>`` are OpenAI CLIP, ``negclip-b0s0`` -> ``negclip``; methods with two or more whole-chain runs also get a
mean row). A transcribed
model that no model of the tree maps to still gets a row, with an empty reproduced cell and a note: no number is
ever filled in.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ..benchmarks.aro import ORDER_METRIC_NAME
from ..benchmarks.registry import BENCHMARKS
from ..benchmarks.retrieval import RETRIEVAL_METRIC_NAME
from .comparison import CHAIN_MEAN, PaperCell, comparison_rows, table
from .printed_values import DELTA_SUFFIX, NOTE_SEPARATOR, load_printed
from .printed_values import PAPERS as PRINTED_PAPERS
from .render import Table
from .tree import PIPELINE, PROVENANCE_COLUMNS, RELEASED, RELEASED_SUBDIR, MetricsTree, ModelResult

COLUMNS: tuple[str, ...] = ("paper", "artifact", "model", "benchmark", "metric_key", "value", "source", "note")
#: Paper key -> (title shown in reports, artifact id prefix of its catalog).
PAPERS: dict[str, tuple[str, str]] = {
    paper: (title, PRINTED_PAPERS[paper][0])
    for paper, title in (("ceclip", "CE-CLIP"), ("conclip", "CoN-CLIP"), ("tsvlc", "TSVLC"), ("hardpos", "Hard Positives"))
}
#: The models the real profile loads (``released_models`` keys of ``profiles/real.yaml``).
MODELS = frozenset({"clip", "negclip", "ceclip", "conclip", "tsvlc", "blip", "flava"})
#: The metric-key prefix each benchmark's aggregate function writes.
KEY_PREFIX: dict[str, str] = {
    "vg_relation": "aro/vg_relation/",
    "vg_attribution": "aro/vg_attribution/",
    **{name: f"aro/{metric}/" for name, metric in ORDER_METRIC_NAME.items()},
    **{name: f"retrieval/{metric}/" for name, metric in RETRIEVAL_METRIC_NAME.items()},
    "sugarcrepe": "sugarcrepe/",
    "valse": "valse/",
    "vlchecklist": "vlchecklist/",
    "ccneg": "ccneg/",
    "replace": "hardpos/replace",  # hardpos/replace/..., hardpos/replace_att/..., hardpos/replace_rel/...
    "swap": "hardpos/swap/",
    "crepe_negate": "crepe/negate/",
    "zeroshot_aro": "zeroshot/",
    "zeroshot_conclip": "zeroshot/conclip/",
    "zeroshot_elevater": "zeroshot/elevater/",
}
KEY_COLUMNS: tuple[str, ...] = ("paper", "artifact", "model", "metric_key")
#: TSVLC's printed rows a released checkpoint is compared with, by the toy method the row stands for (the
#: ``model`` of ``tsvlc.csv``) -> the checkpoint: the un-fine-tuned CLIP ViT-B/32, and the RB+LLM-negatives LoRA
#: adapter, the one TSVLC released (what ``tsvlc`` loads).
TSVLC_RELEASED: dict[str, str] = {"clip": "clip", "tsvlc_rbllm": "tsvlc"}
#: The benchmark of TSVLC's numbers the released checkpoints are compared on: the real profile has VL-CheckList
#: files but no ELEVATER ones (``profiles/real.yaml``), so the 21-task zero-shot means are left out.
TSVLC_BENCHMARK = "vlchecklist"
#: Table 3's attribute columns (``tsvlc.csv``'s keys: the printed labels) -> the released checkpoint's key compared
#: with each. TSVLC's evaluation code prints the corpus categories under shifted labels
#: (:data:`vlcomp.formats.vlchecklist.TSVLC_PRINTED_LABELS`: printed A-Size = action_a, A-State = size, A-Action =
#: state); the comparison assumes Table 3 was built from those labels (each such row's AMBIGUOUS note says so).
TSVLC_T3_KEYS: dict[str, str] = {
    "vlchecklist/attribute/size": "vlchecklist/attribute/action",
    "vlchecklist/attribute/state": "vlchecklist/attribute/size",
    "vlchecklist/attribute/action": "vlchecklist/attribute/state",
}
#: Hard Positives' printed rows a released checkpoint is compared with, by the toy method the row stands for (the
#: ``model`` of ``hardpos.csv``) -> the checkpoint: CLIP ViT-B/32, NegCLIP, and SVLC (TSVLC's released RB+LLM-
#: negatives adapter, what ``tsvlc`` loads).
HARDPOS_RELEASED: dict[str, str] = {"clip": "clip", "negclip": "negclip", "tsvlc_rbllm": "tsvlc"}
#: The artifacts of Hard Positives' numbers the released checkpoints are compared with, in the order shown (Table 1
#: and the tables repeating CLIP's row, then the REPLACE split and the retrieval of Table 10). Tables 2 and 9 and
#: the figures are raw scores, Tables 4-6 counts: no released-checkpoint comparison.
HARDPOS_ARTIFACTS: tuple[str, ...] = ("HP-T1", "HP-T3", "HP-T8", "HP-T7", "HP-T10")
#: Their benchmarks: the real profile evaluates no zero-shot classification (``profiles/real.yaml``), so Table
#: 10's ImageNet and VTAB columns are left out.
HARDPOS_BENCHMARKS: tuple[str, ...] = ("replace", "swap", "coco_retrieval", "flickr_retrieval")
#: Shown under the released checkpoints' table of reproduced values (:func:`vlcomp.reporting.tree.released_wide`).
OTHER_PAPERS_NOTE = ("This table lists reproduced values only. The printed numbers of the CE-CLIP, CoN-CLIP, TSVLC "
                     "and Hard-Positives papers for these checkpoints (and for the pipeline's `clip` and `negclip` "
                     "variants) follow, one section per paper (`vlcomp.reporting.released_values`, transcribed in "
                     "`vlcomp/data/printed/<paper>.csv`).")

_KEY = re.compile(r"[A-Za-z0-9_.\-/]+")

#: Column order of :func:`released_comparison` (``paper`` is the printed value, as in every comparison table).
TABLE_COLUMNS: tuple[str, ...] = (
    "paper_id", "artifact", "benchmark", "metric_key", "model", "source", "method", "base", "seed", "paper_model",
    "reproduced", "std_over_chains", "n_chains", "paper", "paper_ref", "difference", "note",
    "paper_note", *PROVENANCE_COLUMNS,
)


# --------------------------------------------------------------------------- the printed values


def _check_row(row: dict[str, str]) -> str | None:
    """What is wrong with one row of the CE-CLIP or CoN-CLIP file by this view's vocabulary, or None (the schema is
    :mod:`.printed_values`'s to check)."""
    model, bench, key = row["model"], row["dataset"], row["metric"]
    if model not in MODELS:
        return f"unknown model {model!r}; known: {', '.join(sorted(MODELS))}"
    if bench not in BENCHMARKS:
        return f"unknown benchmark {bench!r}; known: {', '.join(BENCHMARKS)}"
    if not _KEY.fullmatch(key) or not key.startswith(KEY_PREFIX[bench]):
        return f"metric_key {key!r} is not a {bench} key ({KEY_PREFIX[bench]}...)"
    if row["group"] or row["std"]:
        return "group and std must be empty (one number per model and metric key, no ± printed)"
    return None


def _tsvlc_released(printed: pd.DataFrame) -> pd.DataFrame:
    """TSVLC's printed numbers a released checkpoint is compared with, named as the checkpoint and its keys."""
    keep = (printed["model"].isin(list(TSVLC_RELEASED)) & (printed["dataset"] == TSVLC_BENCHMARK)
            & ~printed["metric"].str.endswith(DELTA_SUFFIX))
    df = printed[keep]
    t3 = df["artifact"] == "TSVLC-T3"
    return df.assign(model=df["model"].map(TSVLC_RELEASED),
                     metric=df["metric"].where(~t3, df["metric"].replace(TSVLC_T3_KEYS)))


def _hardpos_released(printed: pd.DataFrame) -> pd.DataFrame:
    """Hard Positives' printed numbers a released checkpoint is compared with, named as the checkpoint, in
    :data:`HARDPOS_ARTIFACTS`' order (the file's order within an artifact)."""
    keep = (printed["model"].isin(list(HARDPOS_RELEASED)) & printed["artifact"].isin(HARDPOS_ARTIFACTS)
            & printed["dataset"].isin(HARDPOS_BENCHMARKS))
    df = printed[keep].assign(model=lambda d: d["model"].map(HARDPOS_RELEASED))
    return df.sort_values("artifact", key=lambda a: a.map(HARDPOS_ARTIFACTS.index), kind="stable")


def load_released_paper_values(paths: Mapping[str, str | Path] | None = None) -> pd.DataFrame:
    """The printed numbers of :data:`PAPERS` the released checkpoints are compared with (:data:`COLUMNS`), from
    each paper's packaged ``vlcomp/data/printed/<paper>.csv``, or from ``paths[paper]`` (same schema) instead."""
    frames = []
    for paper in PAPERS:
        path = (paths or {}).get(paper)
        if paper == "tsvlc":
            frames.append(_tsvlc_released(load_printed(paper, path)))
        elif paper == "hardpos":
            frames.append(_hardpos_released(load_printed(paper, path)))
        else:
            frames.append(load_printed(paper, path, _check_row))
    df = pd.concat(frames, ignore_index=True).rename(columns={"dataset": "benchmark", "metric": "metric_key"})
    return df[list(COLUMNS)].astype({"value": "float64"})


# --------------------------------------------------------------------------- the comparison


def released_model_of(m: ModelResult) -> str:
    """The transcribed model a tree model is compared with: a released checkpoint's name, a pipeline model's
    method (as :func:`~vlcomp.reporting.tree.paper_model_of`); "" when it is none of :data:`MODELS`."""
    model = m.method if m.source == PIPELINE else m.name
    return model if model in MODELS else ""


def _models_for(tree: MetricsTree, model: str) -> list[ModelResult]:
    """Tree models compared with ``model`` (its ``paper_model`` set to it), or one missing placeholder."""
    found = [dataclasses.replace(m, paper_model=model) for m in tree.models if released_model_of(m) == model]
    if found:
        return found
    return [ModelResult(model, RELEASED, model, "", model, tree.metrics_dir / RELEASED_SUBDIR / model, False)]


def released_comparison(tree: MetricsTree, paper: str | None = None,
                        values: pd.DataFrame | None = None) -> pd.DataFrame:
    """Long table: every transcribed row (of ``paper``, or of all papers) against each tree model mapping to
    its model (pipeline models, their seed means, released checkpoints), with ``reproduced``, ``paper`` (the
    printed value), ``difference`` = reproduced - paper, ``note`` (model / metric missing) and ``paper_note``
    (the transcription's caveat). Columns :data:`TABLE_COLUMNS`."""
    values = load_released_paper_values() if values is None else values
    if paper is not None:
        if paper not in PAPERS:
            raise ValueError(f"unknown paper {paper!r}; known: {', '.join(PAPERS)}")
        values = values[values["paper"] == paper]
    rows: list[dict[str, Any]] = []
    for r in values.to_dict("records"):
        cell = PaperCell(float(r["value"]), math.nan, f"{r['artifact']} ({r['source']})")
        fields = {"paper_id": r["paper"], "artifact": r["artifact"], "benchmark": r["benchmark"],
                  "paper_note": r["note"]}
        rows += comparison_rows(_models_for(tree, r["model"]), fields, r["metric_key"],
                                lambda pm, model=r["model"], c=cell: c if pm == model else None)
    df = pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
    return df.astype({"reproduced": "float64", "paper": "float64", "difference": "float64"})


def paper_note_lines(df: pd.DataFrame) -> list[str]:
    """One line per distinct transcription caveat (the :data:`NOTE_SEPARATOR` parts of ``paper_note``), naming
    the artifacts and paper models it applies to and how many printed numbers."""
    if df.empty:
        return []
    by_note: dict[str, dict[str, set[str]]] = {}
    for r in df[df["source"] != CHAIN_MEAN].to_dict("records"):
        for note in filter(None, str(r["paper_note"]).split(NOTE_SEPARATOR)):
            where = by_note.setdefault(note, {})
            where.setdefault(f"{r['artifact']} `{r['paper_model']}`", set()).add(r["metric_key"])
    lines = []
    for note, where in by_note.items():
        applies = ", ".join(f"{w}: {len(keys)} value" + "s" * (len(keys) > 1) for w, keys in where.items())
        lines.append(f"*Transcription note* (column `paper_note`): {note} ({applies})")
    return lines


def title(paper: str) -> str:
    """The report title of a paper key (``conclip`` -> ``CoN-CLIP``)."""
    return PAPERS[paper][0]


def released_table(tree: MetricsTree, paper: str, values: pd.DataFrame | None = None) -> Table:
    """One paper's released-checkpoint table for a report page: :func:`released_comparison` (the CSV, long) shown
    as its wide view, one row per printed metric, with the status notes and the transcription notes under it."""
    df = released_comparison(tree, paper, values)
    return table(df, index=("artifact", "benchmark", "metric_key"), notes=paper_note_lines(df))
