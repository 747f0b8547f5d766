"""CREPE's released productivity hard-negative files (Ma et al., CVPR 2023), read for the Negate fold
("CREPE-Negate", conclip catalog §2.6), and CREPE's retrieval scoring of them.

Where the layout comes from. The catalogs name CREPE-Negate (17K true pairs, 183K negated distractors, Table 1
examples) but not its files; the layout below is what CREPE's own evaluation code reads (RAIVNLab/CREPE:
``crepe_eval_utils.py::BaseCsvDataset``, ``crepe_params.py``, ``crepe_prod_eval_clip.py``,
``crepe_compo_eval_open_clip.py``):

- one CSV per complexity ``n`` = 4..12 (number of atoms: objects, attributes and relationships of the scene
  sub-graph the caption states): ``<input dir>/negate/prod_vg_hard_negs_negate_complexity_<n>.csv``, where
  ``<input dir>`` is CREPE's ``--input-dir`` (the ``prod_hard_negatives/`` folder);
- columns read (``pandas.read_csv``; other columns are ignored): ``image_id`` (a Visual Genome id, the image
  is ``<vg folder>/<image_id>.jpg``, looked up in ``VG_100K`` then ``VG_100K_2``), ``x``, ``y``, ``width``,
  ``height`` (the crop, ``TF.crop(image, y, x, height, width)``; ``--crop`` is on for productivity),
  ``caption`` (the true caption) and ``hard_negs`` (a Python list literal of the hard-negative captions,
  read with ``ast.literal_eval``).

Records have no ids: a record is its 0-based data row (pandas ``iloc``). Checks: the header holds the seven
columns, the box is non-negative integers with a positive size, the captions are non-empty strings,
``hard_negs`` is a non-empty list of non-empty strings. AMBIGUOUS: CREPE's CLIP script takes exactly 6 texts
per image (``text_emb[j*6:(j+1)*6]``: the caption and 5 hard negatives), its open_clip script one image at a
time with any number; the loader accepts any number (the benchmark scores each number as its own task).

Images: the toy twin writes PNG, so a case looks for ``<image_id>.jpg`` then ``<image_id>.png`` in each image
folder (:data:`IMAGE_EXTENSIONS`); CREPE looks for ``.jpg`` only. A box reaching outside the image is an error
(torchvision's crop would pad with black).

Scoring (``get_one2many_rank``): the options are ``[caption, *hard_negs]``, the true caption first; the
image's similarities to them are sorted with ``torch.argsort(descending=True)`` and the rank of option 0 is
kept; ``get_one2many_metrics`` reports ``R@k = mean(rank < k)`` for k in 1, 3, 5, 10 and the mean / median
rank. Tie rule (:data:`CREPE_TIE_RULE`): torch does not promise an order among equal scores; on CPU, rows of 6
come back in index order (observed with torch 2.x), which puts the true caption (index 0) ahead of a tied
negative, so a tie counts **right**: ``rank = #{negatives scoring > caption}``. :data:`STRICT_TIE_RULE` (a
tie counts wrong, ``rank = #{negatives scoring >= caption}``, CC-Neg's paper rule) is kept beside it.
"""

from __future__ import annotations

import ast
import csv
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..io import atomic_path
from ..metrics.aro import TieRule
from .records import RecordError, open_image, where

#: Complexities CREPE's productivity set covers (``COMPLEXITIES = list(range(4, 13))``).
COMPLEXITIES: tuple[int, ...] = tuple(range(4, 13))
#: Hard-negative types of the productivity set; this module is used for ``negate``.
HARD_NEG_TYPES = ("atom", "swap", "negate")
COLUMNS = ("image_id", "x", "y", "width", "height", "caption", "hard_negs")
IMAGE_EXTENSIONS = (".jpg", ".png")
#: CREPE's rank of the true caption: ``torch.argsort(descending=True)``, equal scores kept in index order.
CREPE_TIE_RULE = TieRule.TIE_COUNTS_RIGHT
#: The conservative alternative: a negative scoring exactly as the caption ranks ahead of it.
STRICT_TIE_RULE = TieRule.TIE_COUNTS_WRONG
#: ``get_one2many_metrics`` reports R@1, 3, 5, 10.
RECALL_KS: tuple[int, ...] = (1, 3, 5, 10)


@dataclass(frozen=True)
class CrepeCase:
    complexity: int
    index: int  # 0-based data row of its CSV file
    image_id: str
    box: tuple[int, int, int, int]  # x, y, width, height in pixels
    caption: str
    hard_negs: tuple[str, ...]

    @property
    def options(self) -> tuple[str, ...]:
        """``[caption, *hard_negs]``: the true caption is option 0, as in CREPE's ``CsvDataset``."""
        return (self.caption, *self.hard_negs)

    def candidates(self, roots: Sequence[str | Path]) -> list[Path]:
        """Where the image may be, in search order (each folder, each extension of :data:`IMAGE_EXTENSIONS`)."""
        return [Path(r) / f"{self.image_id}{ext}" for r in roots for ext in IMAGE_EXTENSIONS]

    def image_file(self, roots: Sequence[str | Path]) -> Path:
        """The first candidate that exists (the first candidate when none does, for the error message)."""
        paths = self.candidates(roots)
        return next((p for p in paths if p.is_file()), paths[0])

    def crop(self, roots: Sequence[str | Path], source: str | Path = ""):
        """The image cropped to the case's box (CREPE crops before the model's transform)."""
        at = where(source, self.index)
        path = self.image_file(roots)
        if not path.is_file():
            tried = ", ".join(str(p) for p in self.candidates(roots))
            raise FileNotFoundError(f"{at}: image {self.image_id!r} not found (tried {tried})")
        image = open_image(path, at)
        x, y, w, h = self.box
        W, H = image.size
        if x + w > W or y + h > H:
            raise RecordError(f"{at}: box x={x} y={y} width={w} height={h} lies outside image {path.name} "
                              f"of size {W}x{H}")
        return image.crop((x, y, x + w, y + h))


def negate_file(prod_dir: str | Path, complexity: int, kind: str = "negate") -> Path:
    """``<prod_dir>/<kind>/prod_vg_hard_negs_<kind>_complexity_<n>.csv`` (CREPE's path rule)."""
    if kind not in HARD_NEG_TYPES:
        raise ValueError(f"CREPE hard-negative type must be one of {', '.join(HARD_NEG_TYPES)}, got {kind!r}")
    return Path(prod_dir) / kind / f"prod_vg_hard_negs_{kind}_complexity_{int(complexity)}.csv"


def _box_value(row: Mapping[str, str], name: str, at: str, *, positive: bool) -> int:
    raw = row[name]
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise RecordError(f"{at}: field {name!r} must be a number, got {raw!r:.80}") from None
    if not math.isfinite(value) or not value.is_integer():
        raise RecordError(f"{at}: field {name!r} must be a whole number of pixels, got {raw!r}")
    if value < 0 or (positive and value == 0):
        raise RecordError(f"{at}: field {name!r} must be {'> 0' if positive else '>= 0'}, got {raw!r}")
    return int(value)


def _caption(row: Mapping[str, str], at: str) -> str:
    value = row["caption"]
    if value is None or not value.strip():
        raise RecordError(f"{at}: field 'caption' is an empty caption")
    return value


def _hard_negs(row: Mapping[str, str], at: str) -> tuple[str, ...]:
    raw = row["hard_negs"]
    try:
        value = ast.literal_eval(raw) if raw is not None else None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise RecordError(f"{at}: field 'hard_negs' is not a Python list literal: {raw!r:.80}") from None
    if not isinstance(value, list | tuple) or not value:
        raise RecordError(f"{at}: field 'hard_negs' must be a non-empty list of captions, got {raw!r:.80}")
    for j, neg in enumerate(value):
        if not isinstance(neg, str) or not neg.strip():
            raise RecordError(f"{at}: field 'hard_negs' item {j} must be a non-empty caption, got {neg!r:.80}")
    return tuple(value)


def parse_crepe_rows(lines: Iterable[str], path: str | Path, complexity: int) -> list[CrepeCase]:
    """Validate the rows of one CSV (header first) and return its cases in file order."""
    path = Path(path)
    reader = csv.DictReader(lines)
    header = reader.fieldnames
    if not header:
        raise RecordError(f"{path}: empty file (no CSV header)")
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise RecordError(f"{path}: CSV header lacks columns {missing} (has {list(header)})")
    cases = []
    for i, row in enumerate(reader):
        at = where(path, i)
        if None in row or any(row[c] is None for c in COLUMNS):
            raise RecordError(f"{at}: does not have the header's {len(header)} fields "
                              "(a truncated or mis-quoted line)")
        image_id = row["image_id"].strip()
        if not image_id:
            raise RecordError(f"{at}: field 'image_id' is empty")
        box = (_box_value(row, "x", at, positive=False), _box_value(row, "y", at, positive=False),
               _box_value(row, "width", at, positive=True), _box_value(row, "height", at, positive=True))
        cases.append(CrepeCase(complexity, i, image_id, box, _caption(row, at), _hard_negs(row, at)))
    if not cases:
        raise RecordError(f"{path}: no records")
    return cases


def read_crepe_csv(path: str | Path, complexity: int) -> list[CrepeCase]:
    """Read and validate one ``prod_vg_hard_negs_<kind>_complexity_<n>.csv``."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: file not found")
    try:
        with open(path, encoding="utf-8", newline="") as f:
            return parse_crepe_rows(f, path, complexity)
    except UnicodeDecodeError as e:
        raise RecordError(f"{path}: not UTF-8 ({e.reason} at byte {e.start})") from None
    except csv.Error as e:
        raise RecordError(f"{path}: not a readable CSV ({e})") from None


def load_crepe(prod_dir: str | Path, complexities: Iterable[int] | None = None,
               kind: str = "negate") -> dict[int, list[CrepeCase]]:
    """Cases by complexity. ``complexities=None`` reads every file of :data:`COMPLEXITIES` that exists (at least
    one must); a complexity asked for explicitly must have its file."""
    prod_dir = Path(prod_dir)
    if complexities is None:
        wanted = [n for n in COMPLEXITIES if negate_file(prod_dir, n, kind).is_file()]
        if not wanted:
            raise FileNotFoundError(f"{prod_dir / kind}: no prod_vg_hard_negs_{kind}_complexity_<n>.csv for any "
                                    f"n in {COMPLEXITIES[0]}..{COMPLEXITIES[-1]}")
    else:
        wanted = sorted({int(n) for n in complexities})
        if not wanted:
            raise ValueError("no complexities asked for")
    return {n: read_crepe_csv(negate_file(prod_dir, n, kind), n) for n in wanted}


def format_crepe_rows(rows: Sequence[Mapping[str, Any]]) -> str:
    """The CSV text of ``rows`` (dicts with :data:`COLUMNS`; ``hard_negs`` a list of str, written as its
    Python literal, as pandas writes a list column). Header first, ``\\n`` line ends, minimal quoting."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for i, row in enumerate(rows):
        missing = [c for c in COLUMNS if c not in row]
        if missing:
            raise ValueError(f"row {i} lacks {missing}")
        negs = row["hard_negs"]
        if isinstance(negs, str) or not isinstance(negs, Sequence):
            raise ValueError(f"row {i}: hard_negs must be a list of captions, got {type(negs).__name__}")
        writer.writerow([row["image_id"], row["x"], row["y"], row["width"], row["height"], row["caption"],
                         repr([str(n) for n in negs])])
    return buf.getvalue()


def write_crepe_csv(path: str | Path, rows: Sequence[Mapping[str, Any]], complexity: int) -> Path:
    """Write one complexity file; the text is checked by :func:`parse_crepe_rows` first, so a file this writes
    always loads. Same rows, same bytes."""
    path = Path(path)
    content = format_crepe_rows(rows)
    parse_crepe_rows(io.StringIO(content, newline=""), path, complexity)
    with atomic_path(path) as tmp:
        tmp.write_text(content, encoding="utf-8", newline="")
    return path


def caption_rank(scores: np.ndarray, tie_rule: TieRule | str = CREPE_TIE_RULE) -> np.ndarray:
    """0-based rank of option 0 (the true caption) in each row of ``scores`` ``[N, 1 + K]``:
    ``#{j >= 1 : s[j] > s[0]}`` under :data:`CREPE_TIE_RULE` (a tie counts right), ``#{j >= 1 : s[j] >= s[0]}``
    under :data:`STRICT_TIE_RULE`."""
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 2 or s.shape[1] < 2:
        raise ValueError(f"scores must be [N, 1 + K] with K >= 1, got {s.shape}")
    if np.isnan(s).any():
        raise ValueError("scores contain NaN")
    pos, negs = s[:, :1], s[:, 1:]
    beats = negs >= pos if TieRule(tie_rule) is TieRule.TIE_COUNTS_WRONG else negs > pos
    return beats.sum(axis=1).astype(np.int64)


def recall_at(ranks: np.ndarray, k: int) -> float:
    """``R@k = mean(rank < k)`` (``get_one2many_metrics``)."""
    r = np.asarray(ranks)
    if r.size == 0:
        raise ValueError("no ranks")
    return float((r < k).mean())
