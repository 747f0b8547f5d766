"""Every paper's printed numbers, transcribed once: one packaged CSV per paper, one schema, one loader.

``vlcomp/data/printed/<paper>.csv`` (a paper of :data:`PAPERS`: ``aro``, ``tsvlc``, ``ceclip``, ``conclip``,
``hardpos``) holds one row per number the paper prints, in the columns :data:`COLUMNS`::

    paper, artifact, source, model, dataset, group, metric, text, value, std, note

- ``paper``: the file's paper; ``artifact``: the catalog's artifact id (``ARO-T2``, ``TSVLC-T1a``, ``CE-T1``,
  ``CONCLIP-T7``, ``HP-T1``: it starts with the paper's prefix); ``source``: where the paper prints it
  (``Table 2``, ``Table 1(a)``, ``text, E2 (Sec. 5)``);
- ``model``: whose number it is, named as the code comparing it names models: ARO's models (``clip``,
  ``negclip``, ..., ``chance``; empty for Table 2's sample counts), the real profile's ``released_models`` keys for
  CE-CLIP and CoN-CLIP, and for TSVLC and Hard Positives the toy method the printed row stands for (a ``methods``
  key of params, or one to come; ``clip`` for the un-fine-tuned default base, ``clip_vit`` / ``clip_cyclip`` for
  the other base models; Hard Positives' reference rows ``chance`` and ``human``, as ARO's ``chance``; empty where
  the toy has no counterpart);
- ``dataset``: the benchmark the number is on (ARO's dataset names; a
  :data:`vlcomp.benchmarks.registry.BENCHMARKS` name for the other papers);
- ``metric``: ARO keeps its (``dataset``, ``metric``) pairs (``vg_relation`` + ``macro_acc``); the other papers
  the full key their benchmark writes (``sugarcrepe/replace/macro_acc``, ``vlchecklist/attribute/avg``). A
  printed difference has a key ending in ``/delta`` (:data:`DELTA_SUFFIX`: Hard Positives' Aug - Orig, TSVLC's
  delta against the section's first row) and may be negative;
- ``group``: what else tells the printed cell apart: ARO's Table 2 relation or section (``overall``, ``spatial``,
  ``verbs``), Tables 3-4's shuffling strategy, ARO-X2's section; for TSVLC the printed row and its setting,
  encoded as ``row=<the paper's row name>; train=<training data>; init=<pretrained|scratch>; arch=<architecture>``
  (:func:`tsvlc_row` reads it); for Hard Positives the printed row (many have no toy model, so the row, not the
  ``model``, tells them apart), encoded as ``row=<the paper's row name>`` followed by, in this order and only where
  printed, ``; section=<a-f>`` (the table's row-group letter (a)-(f); none for the Random Chance and Human Estimate
  rows, nor in Tables 2 and 9) and ``; replacement=<the hand-written synonym>`` (Tables 4-6, whose ``row`` is the
  replaced word); in Figures 1 and 3 ``row`` is the score column (``CLIP``, ``DAC-LLM``, ``Ours``)
  (:func:`hardpos_row` reads it); empty otherwise;
- ``text``: the number exactly as printed (``0.8`` and ``0.80`` kept apart; ``80.93%``, ``+6.6%``, ``+11.05``:
  TSVLC's Table 1d prints three deltas without ``%``), minus signs written ``-``;
- ``value``: ``text`` in the unit of the toy metrics, a plain decimal: ARO prints fractions, so ``value`` is
  ``text`` (and Table 2's sample counts are counts); the other papers print percentages, so ``value`` is ``text``
  / 100 (``80.93%`` -> ``0.8093``, ``+11.05`` -> ``0.1105``; in [0, 1], or [-1, 1] for a ``/delta`` key)
  (:data:`UNITS`). Two kinds of numbers keep their own unit whatever the paper's, told by the metric key's last
  component (:data:`METRIC_UNITS`, :func:`unit_of`): raw image-text scores (``s_c``, ``s_n``, ``s_p``,
  ``mean_s_c``, ``mean_s_n``, ``mean_s_p``: Hard Positives' cosines, ``0.234`` -> ``0.234``, in [-1, 1]; unit
  ``score``) and counts (``n``: Hard Positives' Tables 4-6 frequencies, ``6173`` -> ``6173``, a whole number >= 0;
  unit ``count``; ``hardpos/<part>/n`` is a count in the benchmark's keys too). Checked against ``text`` in
  decimal arithmetic, exactly: the column is there to be read, never to disagree;
- ``std``: the printed ± in the unit of ``value``, empty where the paper prints none;
- ``note``: the transcription's caveats (an AMBIGUOUS catalog note, a model or metric mapping that is not
  certain), separated by ``" | "`` (:data:`NOTE_SEPARATOR`), or empty.

(paper, artifact, model, dataset, group, metric) (:data:`KEY_COLUMNS`) is unique within a file, so a number the
paper prints once is one row; one it prints twice (TSVLC's Table 2 repeating rows of Table 1a) is one row per
artifact.

:func:`load_printed` reads one paper's file and checks every row (the header, the field count, the paper and its
artifact prefix, a non-empty source, ``text`` parsing in the row's unit, ``value`` matching ``text``, ``std``,
the note's parts, TSVLC's and Hard Positives' ``group`` encodings, uniqueness, and the caller's own
``check_row``): the first bad row raises a ValueError naming the file and the line. The per-paper modules are views
over it: :mod:`.paper_values` (ARO's printed values), :mod:`.released_values` (the released checkpoints next to the
CE-CLIP, CoN-CLIP, TSVLC and Hard-Positives numbers), :mod:`.papers.tsvlc.printed` (TSVLC's tables as printed) and
:mod:`.papers.hard_positives.printed` (Hard Positives' tables and figure score tables as printed).
"""

from __future__ import annotations

import csv
import importlib.resources
import re
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal
from pathlib import Path

import pandas as pd

COLUMNS: tuple[str, ...] = ("paper", "artifact", "source", "model", "dataset", "group", "metric", "text", "value",
                            "std", "note")
KEY_COLUMNS: tuple[str, ...] = ("paper", "artifact", "model", "dataset", "group", "metric")
FRACTION, PERCENT = "fraction", "percentage"
SCORE, COUNT = "score", "count"  # raw image-text scores and counts: the units of some keys whatever the paper's
#: Paper key -> the artifact id prefix of its catalog and the unit its tables print numbers in.
PAPERS: dict[str, tuple[str, str]] = {
    "aro": ("ARO-", FRACTION),
    "tsvlc": ("TSVLC-", PERCENT),
    "ceclip": ("CE-", PERCENT),
    "conclip": ("CONCLIP-", PERCENT),
    "hardpos": ("HP-", PERCENT),
}
#: Printed unit -> what a printed number is divided by to be in the toy metrics' unit (fractions; raw scores and
#: counts as they are).
UNITS: dict[str, int] = {FRACTION: 1, PERCENT: 100, SCORE: 1, COUNT: 1}
#: A metric key's last ``/`` component -> the unit its numbers are printed in whatever the paper's unit
#: (:func:`unit_of`): raw image-text scores (Hard Positives' mean cosines, Tables 2 and 9, and the per-caption
#: scores of Figures 1 and 3) and counts (its Tables 4-6's frequencies).
METRIC_UNITS: dict[str, str] = {**{name: SCORE for name in ("s_c", "s_n", "s_p", "mean_s_c", "mean_s_n", "mean_s_p")},
                                "n": COUNT}
DATA_DIR = "printed"  # under the package's ``data``
DELTA_SUFFIX = "/delta"
NOTE_SEPARATOR = " | "
#: The fields of TSVLC's ``group`` encoding, in order (:func:`tsvlc_row`).
TSVLC_ROW_FIELDS: tuple[str, ...] = ("row", "train", "init", "arch")
TSVLC_INITS: tuple[str, ...] = ("pretrained", "scratch")
#: The fields of Hard Positives' ``group`` encoding (:func:`hardpos_row`): ``row`` first and always, then the others
#: in this order where printed.
HARDPOS_ROW_FIELDS: tuple[str, ...] = ("row", "section", "replacement")
#: Hard Positives' row-group letters ((a)-(f): Table 8 has six groups).
HARDPOS_SECTIONS: tuple[str, ...] = tuple("abcdef")

_TEXT = re.compile(r"(?P<number>[+-]?\d+(?:\.\d+)?)(?P<percent>%?)")
_DECIMAL = re.compile(r"-?\d+(\.\d+)?")
_COUNT = re.compile(r"\d+")

RowCheck = Callable[[dict[str, str]], str | None]  # a view's own row check: a problem description or None


def data_file(paper: str) -> str:
    """The packaged file of ``paper``, relative to ``vlcomp/data`` (``printed/aro.csv``)."""
    if paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; known: {', '.join(PAPERS)}")
    return f"{DATA_DIR}/{paper}.csv"


def unit_of(paper: str, metric: str) -> str:
    """The unit ``paper`` prints the numbers of ``metric`` in: :data:`METRIC_UNITS` by the key's last component
    (``hardpos/replace/mean_s_c`` -> ``score``, ``hardpos/replace_rel/n`` -> ``count``), else the paper's."""
    if paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; known: {', '.join(PAPERS)}")
    return METRIC_UNITS.get(metric.rsplit("/", 1)[-1], PAPERS[paper][1])


def _number(text: str, unit: str) -> str:
    """The number part of a printed text (its sign kept, a ``%`` dropped); ValueError when ``text`` is no number as
    ``unit`` tables print it (a ``%`` only in percentages)."""
    m = _TEXT.fullmatch(text)
    if m is None or (m["percent"] and unit != PERCENT):
        raise ValueError(f"{text!r}: not a printed {unit}")
    return m["number"]


def printed_value(text: str, unit: str) -> float:
    """A printed number in the toy metrics' unit: ``"0.59"`` (fractions) -> 0.59; ``"80.93%"`` -> 0.8093,
    ``"+6.6%"`` -> 0.066, ``"+11.05"`` -> 0.1105 (percentages, with or without ``%``). Float arithmetic (the printed
    number's float divided by :data:`UNITS` ``[unit]``), as the reports have always computed it; :func:`exact_value`
    is the exact decimal."""
    return float(_number(text, unit)) / UNITS[unit]


def exact_value(text: str, unit: str) -> Decimal:
    """:func:`printed_value` in decimal arithmetic, exactly (what the ``value`` column must equal)."""
    return Decimal(_number(text, unit)) / UNITS[unit]


def tsvlc_row(group: str) -> dict[str, str]:
    """TSVLC's ``group`` encoding read back: ``{"row": ..., "train": ..., "init": ..., "arch": ...}``; ValueError
    when ``group`` is not ``row=<name>; train=<data>; init=<pretrained|scratch>; arch=<architecture>``."""
    parts = [p.partition("=") for p in group.split("; ")]
    fields = {k: v for k, sep, v in parts if sep and v}
    if tuple(k for k, _, _ in parts) != TSVLC_ROW_FIELDS or len(fields) != len(TSVLC_ROW_FIELDS):
        raise ValueError(f"group {group!r} is not '{'; '.join(f'{k}=...' for k in TSVLC_ROW_FIELDS)}'")
    if fields["init"] not in TSVLC_INITS:
        raise ValueError(f"group {group!r}: init must be one of {', '.join(TSVLC_INITS)}")
    return fields


def hardpos_row(group: str) -> dict[str, str]:
    """Hard Positives' ``group`` encoding read back: ``{"row": ...}`` plus ``"section"`` / ``"replacement"`` where
    printed; ValueError when ``group`` is not ``row=<name>[; section=<a-f>][; replacement=<word>]`` (each field
    once, non-empty, in :data:`HARDPOS_ROW_FIELDS`' order)."""
    parts = [p.partition("=") for p in group.split("; ")]
    names = [k for k, _, _ in parts]
    if (names[0] != "row" or len(set(names)) != len(names) or any(k not in HARDPOS_ROW_FIELDS for k in names)
            or names != sorted(names, key=HARDPOS_ROW_FIELDS.index)
            or any(not sep or not v.strip() for _, sep, v in parts)):
        raise ValueError(f"group {group!r} is not 'row=...[; section=<{'|'.join(HARDPOS_SECTIONS)}>]"
                         "[; replacement=...]'")
    fields = {k: v for k, _, v in parts}
    if "section" in fields and fields["section"] not in HARDPOS_SECTIONS:
        raise ValueError(f"group {group!r}: section must be one of {', '.join(HARDPOS_SECTIONS)}")
    return fields


#: The papers whose ``group`` has an encoding, and the function reading it back (checked on every row).
GROUP_ENCODINGS: dict[str, Callable[[str], dict[str, str]]] = {"tsvlc": tsvlc_row, "hardpos": hardpos_row}


def checked_rows(lines: Iterable[str], source_name: str, columns: tuple[str, ...], key_columns: Iterable[str],
                 check_row: RowCheck) -> Iterator[dict[str, str]]:
    """The rows of a transcribed-values CSV, each checked by ``check_row`` (a problem description or None) and
    unique on ``key_columns``; a bad header or row raises ValueError naming ``source_name`` and the line."""
    reader = csv.DictReader(lines)
    found = tuple(reader.fieldnames or ())
    if found != columns:
        unknown = [c for c in found if c not in columns]
        missing = [c for c in columns if c not in found]
        raise ValueError(f"{source_name}: line 1 (header): columns {list(found)} != expected {list(columns)}"
                         + (f"; unknown: {unknown}" if unknown else "") + (f"; missing: {missing}" if missing else ""))
    key_columns = tuple(key_columns)
    seen: dict[tuple[str, ...], int] = {}
    for row in reader:
        lineno = reader.line_num
        if None in row or any(v is None for v in row.values()):
            raise ValueError(f"{source_name}: line {lineno}: expected {len(columns)} fields")
        problem = check_row(row)
        if problem:
            raise ValueError(f"{source_name}: line {lineno}: {problem}")
        key = tuple(row[c] for c in key_columns)
        if key in seen:
            raise ValueError(f"{source_name}: line {lineno}: duplicate of line {seen[key]} {key}")
        seen[key] = lineno
        yield row


def _problem(row: dict[str, str], paper: str) -> str | None:
    """What is wrong with one row of ``paper``'s file by the schema (not by a view's vocabulary), or None."""
    prefix, unit = PAPERS[paper][0], unit_of(paper, row["metric"])
    if row["paper"] != paper:
        return f"paper {row['paper']!r} in the file of {paper!r}"
    if not row["artifact"].startswith(prefix) or row["artifact"] == prefix:
        return f"artifact {row['artifact']!r} is not a {paper} catalog id ({prefix}...)"
    if not row["source"].strip():
        return "empty source"
    try:
        expected = exact_value(row["text"], unit)
    except ValueError as err:
        return f"unparseable text: {err}"
    if not _DECIMAL.fullmatch(row["value"]):
        return f"value {row['value']!r} is not a plain decimal number"
    if Decimal(row["value"]) != expected:
        return f"value {row['value']} does not match text {row['text']!r} (as a printed {unit}: {expected})"
    if unit == PERCENT:
        low = -1 if row["metric"].endswith(DELTA_SUFFIX) else 0
        if not low <= expected <= 1:
            return f"value {row['value']} outside [{low}, 1] (a percentage as a fraction)"
    elif unit == SCORE and not -1 <= expected <= 1:
        return f"value {row['value']} outside [-1, 1] (a raw cosine score)"
    elif unit == COUNT and not _COUNT.fullmatch(row["text"]):
        return f"text {row['text']!r} is not a count (a whole number >= 0)"
    if row["std"] and (not _DECIMAL.fullmatch(row["std"]) or Decimal(row["std"]) < 0):
        return f"std {row['std']!r} is not a non-negative decimal"
    if row["note"] and any(not part.strip() for part in row["note"].split(NOTE_SEPARATOR)):
        return f"note {row['note']!r} has an empty part between {NOTE_SEPARATOR!r} separators"
    if paper in GROUP_ENCODINGS:
        try:
            GROUP_ENCODINGS[paper](row["group"])
        except ValueError as err:
            return str(err)
    return None


def parse_printed(lines: Iterable[str], source_name: str, paper: str,
                  check_row: RowCheck | None = None) -> pd.DataFrame:
    """Parse and check the printed-values CSV text of ``paper`` (then ``check_row``, a view's own check: a
    problem description or None); raise ValueError naming ``source_name`` and the line. Columns :data:`COLUMNS`,
    ``value`` and ``std`` as floats (``std`` NaN when none is printed), the rest as text, in the file's order."""
    if paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; known: {', '.join(PAPERS)}")

    def check(row: dict[str, str]) -> str | None:
        return _problem(row, paper) or (check_row(row) if check_row is not None else None)

    records = [{**row, "value": float(row["value"]), "std": float(row["std"]) if row["std"] else float("nan")}
               for row in checked_rows(lines, source_name, COLUMNS, KEY_COLUMNS, check)]
    if not records:
        raise ValueError(f"{source_name}: no rows")
    return pd.DataFrame.from_records(records, columns=list(COLUMNS)).astype({"value": "float64", "std": "float64"})


def load_printed(paper: str, path: str | Path | None = None, check_row: RowCheck | None = None) -> pd.DataFrame:
    """The printed values of ``paper``: its packaged ``vlcomp/data/printed/<paper>.csv``, or the file ``path``
    in the same schema; checked as :func:`parse_printed`."""
    if path is not None:
        with Path(path).open("r", encoding="utf-8", newline="") as f:
            return parse_printed(f, str(path), paper, check_row)
    name = data_file(paper)
    with importlib.resources.files("vlcomp").joinpath("data", name).open("r", encoding="utf-8", newline="") as f:
        return parse_printed(f, f"vlcomp/data/{name}", paper, check_row)
