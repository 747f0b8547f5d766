"""The Hard Positives benchmarks REPLACE and SWAP (Kamath et al., ECCV 2024; refcode catalog §3.2, §3.4;
hard_positives catalog §2.2-2.4) and their Orig / Aug / Brittleness metrics.

Format. Each benchmark is a **pair of files aligned row by row**: ``data/<file>`` holds ``(c, c_n)`` and
``swapped_data/<file>`` holds ``(c_p, c_n)`` - its ``true_caption`` is the hard positive, its
``false_caption`` the same hard negative.

- REPLACE (``vl_checklist_attributes.json`` 10,575 rows, ``vl_checklist_relations.json`` 16,868): a JSON list of
  ``{"image_id": str, "true_caption", "false_caption", "image_path"}``; ``image_path`` is relative to the
  hard_positives repo root (``data/VG_100K/<id>.jpg``); images are used whole.
- SWAP (``visual_genome_attribution.json``, 28,748 rows): ARO's VG-Attribution schema, read with
  :func:`vlcomp.formats.aro.load_vg` (``image_path`` relative to ARO's ``images/`` folder, ``bbox_*`` crop,
  ``attributes``); images are cropped to the box.

Records are named by position. ``image_id`` is not an id: one image carries many rows, and the released
REPLACE files hold exact duplicate rows (e.g. image 2347085 "walking woman" / "crouching woman" twice) that the
reference scores twice, so rows are never de-duplicated (a key repeated inside one row is refused).
Alignment is checked: equal row counts and, per row, the same image (``image_path``, plus ``image_id`` for
REPLACE and the box for SWAP) and the identical ``false_caption`` (catalog: "same image, identical
false_caption"; the SWAP pair files were not available to us, so this is assumed for SWAP too). When the row
counts differ, the error names the first row where the two files stop being aligned (a row deleted from the
middle of one file), in both files.

Writers (:func:`write_replace`, :func:`write_swap`) produce the same layout from cases / VG-A records; the toy
twin (:mod:`vlcomp.twins.hardpos`) uses them. JSON is written with sorted keys and a 2-space indent
(:func:`vlcomp.io.write_json`), so the same rows give the same bytes.

Metrics (paper §4.1, Eq. 1-2; all comparisons strict, so a tie fails every condition, as in the code):

- Orig = P[s(c) > s(c_n)]
- Aug = P[s(c) > s(c_n) and s(c_p) > s(c_n)]
- Brittleness = P[s(c) > s(c_n) > s(c_p)] + P[s(c_p) > s(c_n) > s(c)]

Scores are raw cosines (no logit scale). ``run_eval.py`` scores ``c_n`` twice (once per file); Orig uses the
``data/`` pass and Aug / Brittleness the ``swapped_data/`` pass (``s_n_swapped``; for a deterministic model the
two are equal). The table's Δ is Aug - Orig. REPLACE = attributes and relations **pooled** (instance-weighted,
:func:`pooled`), which the catalog verified for all rows but two (DAC-SAM; Our HN brittleness:
AMBIGUOUS, they equal the attributes-only values) - report the attributes-only numbers next to the pooled ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..io import write_json
from .aro import VGCase, load_vg
from .records import RecordError, field, listed_records, open_image, text, where

#: ``run_eval.py`` dataset name -> (file name, loader kind) under ``data/`` and ``swapped_data/``.
BENCHMARKS: dict[str, tuple[str, str]] = {
    "replace_att": ("vl_checklist_attributes.json", "replace"),
    "replace_rel": ("vl_checklist_relations.json", "replace"),
    "swap": ("visual_genome_attribution.json", "swap"),
}
#: Released sizes (paper and catalog), for checking a full download.
SIZES = {"replace_att": 10_575, "replace_rel": 16_868, "swap": 28_748}
DATA_DIR, SWAPPED_DIR = "data", "swapped_data"


@dataclass(frozen=True)
class HardPositiveCase:
    index: int
    image_path: str
    caption: str  # c, the original (true) caption
    positive: str  # c_p, the hard positive
    negative: str  # c_n, the hard negative
    image_id: str | None = None  # REPLACE only
    box: tuple[float, float, float, float] | None = None  # SWAP only: x, y, w, h of the crop

    def open_image(self, root: str | Path, source: str | Path = ""):
        """The image, read lazily: whole for REPLACE (``root`` = repo root), cropped to the box for SWAP
        (``root`` = ARO's images folder; a box outside the image is an error naming the record)."""
        if self.box is None:
            return open_image(Path(root) / self.image_path, where(source, self.index))
        return VGCase(self.index, self.image_path, self.box, self.caption, self.negative, "").crop(root, source)


def _replace_rows(path: Path) -> list[tuple[str, str, str, str]]:
    data = listed_records(path)
    rows = []
    for i, rec in enumerate(data):
        at = where(path, i)
        image_id = field(rec, "image_id", (str, int), at)
        if not str(image_id).strip():
            raise RecordError(f"{at}: field 'image_id' is empty")
        rows.append((str(image_id), text(rec, "image_path", at), text(rec, "true_caption", at),
                     text(rec, "false_caption", at)))
    return rows


def _check_counts(data_path: Path, n_data: int, swapped_path: Path, n_swapped: int) -> None:
    """Equal row counts; called once every row both files have agrees, so a missing row is a trailing one."""
    if n_data != n_swapped:
        longer, other = (data_path, swapped_path) if n_data > n_swapped else (swapped_path, data_path)
        raise RecordError(f"{longer}: record {min(n_data, n_swapped)}: no aligned row in {other} "
                          f"({n_data} rows in {data_path}, {n_swapped} in {swapped_path})")


def _mismatch(swapped_path: Path, data_path: Path, i: int, what: str, got: object, want: object) -> RecordError:
    return RecordError(f"{where(swapped_path, i)}: {what} {got!r} differs from {what} {want!r} of "
                       f"{where(data_path, i)}; the pair files must be aligned row by row")


#: Per row, the (name, value) pairs both files must share: the image and the hard negative.
AlignKey = tuple[tuple[str, object], ...]


def _first_divergence(data_keys: Sequence[AlignKey], swapped_keys: Sequence[AlignKey]) -> tuple[int, str] | None:
    """The first row index (and the field) where the two files stop being aligned, or None."""
    for i, (want, got) in enumerate(zip(data_keys, swapped_keys, strict=False)):  # up to the shorter file
        for (what, w), (_, g) in zip(want, got, strict=True):
            if g != w:
                return i, what
    return None


def _check_aligned(data_path: Path, data_keys: Sequence[AlignKey], swapped_path: Path,
                   swapped_keys: Sequence[AlignKey]) -> None:
    """Row ``i`` of both files must name the same image and the identical ``false_caption``.

    With equal row counts the first differing row is reported as a mismatch. With different counts (a row
    deleted or inserted) the error names the **first row where the files diverge** in both files, not the last
    row of the longer one, and says whether the rest lines up again once the extra rows are skipped.
    """
    n_data, n_swapped = len(data_keys), len(swapped_keys)
    first = _first_divergence(data_keys, swapped_keys)
    if first is None:
        _check_counts(data_path, n_data, swapped_path, n_swapped)
        return
    i, what = first
    got, want = dict(swapped_keys[i])[what], dict(data_keys[i])[what]
    if n_data == n_swapped:
        raise _mismatch(swapped_path, data_path, i, what, got, want)
    longer, shorter = (data_path, swapped_path) if n_data > n_swapped else (swapped_path, data_path)
    long_keys, short_keys = (data_keys, swapped_keys) if n_data > n_swapped else (swapped_keys, data_keys)
    skip = len(long_keys) - len(short_keys)
    realigns = list(long_keys[i + skip:]) == list(short_keys[i:])
    hint = (f"; skipping {skip} row(s) of {longer} at record {i} lines the rest up again, so {shorter} lacks "
            f"them" if realigns else "")
    raise RecordError(f"{where(longer, i)}: no aligned row in {shorter}: the pair files diverge at row {i} "
                      f"({what} {got!r} in {where(swapped_path, i)} vs {want!r} in {where(data_path, i)}; "
                      f"{n_data} rows in {data_path}, {n_swapped} in {swapped_path}){hint}")


def load_replace(data_path: str | Path, swapped_path: str | Path) -> list[HardPositiveCase]:
    """A REPLACE benchmark from its ``data/`` file (c, c_n) and ``swapped_data/`` file (c_p, c_n)."""
    data_path, swapped_path = Path(data_path), Path(swapped_path)
    original, swapped = _replace_rows(data_path), _replace_rows(swapped_path)
    _check_aligned(data_path, [_replace_key(r) for r in original], swapped_path, [_replace_key(r) for r in swapped])
    return [HardPositiveCase(i, image, c, c_p, c_n, image_id=image_id)
            for i, ((image_id, image, c, c_n), (_, _, c_p, _)) in enumerate(zip(original, swapped, strict=True))]


def _replace_key(row: tuple[str, str, str, str]) -> AlignKey:
    image_id, image, _, false_caption = row
    return (("image_id", image_id), ("image_path", image), ("false_caption", false_caption))


def _swap_key(case: VGCase) -> AlignKey:
    return (("image_path", case.image_path), ("box", case.box), ("false_caption", case.false_caption))


def load_swap(data_path: str | Path, swapped_path: str | Path) -> list[HardPositiveCase]:
    """The SWAP benchmark from ``data/visual_genome_attribution.json`` (c, c_n) and its ``swapped_data/`` twin
    (c_p, c_n), both in ARO's VG-Attribution schema."""
    data_path, swapped_path = Path(data_path), Path(swapped_path)
    original, swapped = load_vg(data_path, "attribution"), load_vg(swapped_path, "attribution")
    _check_aligned(data_path, [_swap_key(c) for c in original], swapped_path, [_swap_key(c) for c in swapped])
    return [HardPositiveCase(i, a.image_path, a.true_caption, b.true_caption, a.false_caption, box=a.box)
            for i, (a, b) in enumerate(zip(original, swapped, strict=True))]


def load_benchmark(root: str | Path, name: str) -> list[HardPositiveCase]:
    """``replace_att``, ``replace_rel`` or ``swap`` from a hard_positives checkout (``root/data``,
    ``root/swapped_data``)."""
    data_path, swapped_path = _file_pair(root, name)
    loader = load_replace if BENCHMARKS[name][1] == "replace" else load_swap
    return loader(data_path, swapped_path)


def _file_pair(root: str | Path, name: str) -> tuple[Path, Path]:
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}; known: {', '.join(BENCHMARKS)}")
    file = BENCHMARKS[name][0]
    return Path(root) / DATA_DIR / file, Path(root) / SWAPPED_DIR / file


def replace_rows(cases: Sequence[HardPositiveCase]) -> tuple[list[dict], list[dict]]:
    """The released REPLACE rows of ``cases``: ``data/`` rows ``(c, c_n)`` and ``swapped_data/`` rows
    ``(c_p, c_n)``, both ``{"image_id", "true_caption", "false_caption", "image_path"}``, aligned by position
    (``case.index`` is not written: a record is named by its position)."""
    data, swapped = [], []
    for n, case in enumerate(cases):
        if case.image_id is None or case.box is not None:
            raise ValueError(f"REPLACE case {n}: needs an image_id and no box (a whole image), got "
                             f"image_id={case.image_id!r} box={case.box!r}")
        for what, value in (("image_path", case.image_path), ("caption", case.caption),
                            ("positive", case.positive), ("negative", case.negative)):
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"REPLACE case {n}: {what} must be a non-empty string, got {value!r}")
        common = {"image_id": str(case.image_id), "image_path": case.image_path, "false_caption": case.negative}
        data.append({**common, "true_caption": case.caption})
        swapped.append({**common, "true_caption": case.positive})
    return data, swapped


def write_replace(root: str | Path, name: str, cases: Sequence[HardPositiveCase]) -> tuple[Path, Path]:
    """Write ``replace_att`` or ``replace_rel`` as released: ``root/data/<file>`` and ``root/swapped_data/<file>``
    (:func:`replace_rows`); returns the two paths. :func:`load_replace` reads them back as ``cases``."""
    if BENCHMARKS.get(name, ("", ""))[1] != "replace":
        raise ValueError(f"{name!r} is not a REPLACE benchmark; known: replace_att, replace_rel")
    if not cases:
        raise ValueError(f"{name}: no cases to write")
    data, swapped = replace_rows(cases)
    return _write_pair(root, name, data, swapped)


#: The fields of an ARO VG-Attribution record (:mod:`vlcomp.formats.aro`); other keys are kept as they are.
VGA_FIELDS = ("image_path", "bbox_x", "bbox_y", "bbox_w", "bbox_h", "true_caption", "false_caption", "attributes")


def swap_rows(records: Sequence[Mapping[str, Any]], positives: Sequence[str]) -> tuple[list[dict], list[dict]]:
    """SWAP rows: ``data/`` = the VG-Attribution ``records`` unchanged (c, c_n); ``swapped_data/`` = each record
    with ``true_caption`` replaced by its hard positive (c_p, c_n), every other field (image, box, ``attributes``,
    ``false_caption``) kept."""
    if len(records) != len(positives):
        raise ValueError(f"SWAP: {len(records)} records but {len(positives)} hard positives")
    data, swapped = [], []
    for n, (rec, positive) in enumerate(zip(records, positives, strict=True)):
        missing = [f for f in VGA_FIELDS if f not in rec]
        if missing:
            raise ValueError(f"SWAP record {n}: missing VG-Attribution field(s) {missing}")
        if not isinstance(positive, str) or not positive.strip():
            raise ValueError(f"SWAP record {n}: hard positive must be a non-empty string, got {positive!r}")
        data.append(dict(rec))
        swapped.append({**rec, "true_caption": positive})
    return data, swapped


def write_swap(root: str | Path, records: Sequence[Mapping[str, Any]], positives: Sequence[str]) -> tuple[Path, Path]:
    """Write SWAP as released (:func:`swap_rows`) to ``root/data/visual_genome_attribution.json`` and
    ``root/swapped_data/visual_genome_attribution.json``; returns the two paths (read back by :func:`load_swap`)."""
    if not records:
        raise ValueError("swap: no records to write")
    data, swapped = swap_rows(records, positives)
    return _write_pair(root, "swap", data, swapped)


def _write_pair(root: str | Path, name: str, data: list[dict], swapped: list[dict]) -> tuple[Path, Path]:
    data_path, swapped_path = _file_pair(root, name)
    for path, rows in ((data_path, data), (swapped_path, swapped)):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, rows)
    return data_path, swapped_path


def _scores(s_c, s_n, s_p, s_n_swapped) -> tuple[np.ndarray, ...]:
    arrays = [np.asarray(x, dtype=np.float64) for x in (s_c, s_n, s_p, s_n if s_n_swapped is None else s_n_swapped)]
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1 or arrays[0].ndim != 1:
        raise ValueError(f"s_c, s_n, s_p (and s_n_swapped) must be 1-D of one length, got {[a.shape for a in arrays]}")
    if arrays[0].size == 0:
        raise ValueError("no cases")
    if any(np.isnan(a).any() for a in arrays):
        raise ValueError("scores contain NaN")
    return tuple(arrays)


def outcomes(s_c: np.ndarray, s_n: np.ndarray, s_p: np.ndarray,
             s_n_swapped: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Per-case bool masks ``[N]``: ``orig`` (c > c_n), ``aug`` (c > c_n' and c_p > c_n') and ``brittle``
    (c > c_n' > c_p or c_p > c_n' > c), where c_n' is the swapped-pass score of c_n (default: ``s_n``)."""
    c, n, p, n2 = _scores(s_c, s_n, s_p, s_n_swapped)
    return {"orig": c > n, "aug": (c > n2) & (p > n2), "brittle": ((c > n2) & (n2 > p)) | ((p > n2) & (n2 > c))}


def metrics(s_c: np.ndarray, s_n: np.ndarray, s_p: np.ndarray,
            s_n_swapped: np.ndarray | None = None) -> dict[str, float]:
    """``orig``, ``aug``, ``brittleness`` (fractions), ``delta`` = aug - orig, and ``n`` (number of cases)."""
    o = outcomes(s_c, s_n, s_p, s_n_swapped)
    orig, aug = float(o["orig"].mean()), float(o["aug"].mean())
    return {"orig": orig, "aug": aug, "brittleness": float(o["brittle"].mean()), "delta": aug - orig,
            "n": int(o["orig"].size)}


def reference_counts(s_c: np.ndarray, s_n: np.ndarray, s_p: np.ndarray,
                     s_n_swapped: np.ndarray | None = None) -> dict[str, int]:
    """The five unlabelled counts ``run_eval.py`` prints, in order: c_n' below both, c > c_n' > c_p,
    c_p > c_n' > c, c_n' above both, c_n' tied with c or c_p."""
    c, _, p, n2 = _scores(s_c, s_n, s_p, s_n_swapped)
    return {"aug": int(((n2 < p) & (n2 < c)).sum()), "c>cn>cp": int(((c > n2) & (n2 > p)).sum()),
            "cp>cn>c": int(((p > n2) & (n2 > c)).sum()), "cn_above_both": int(((n2 > p) & (n2 > c)).sum()),
            "ties": int(((n2 == p) | (n2 == c)).sum())}


def pooled(results: Mapping[str, Mapping[str, float]] | Iterable[Mapping[str, float]]) -> dict[str, float]:
    """Instance-weighted mean of several :func:`metrics` results (REPLACE = attributes + relations):
    ``sum(m * n) / sum(n)`` for orig, aug and brittleness; ``delta`` and ``n`` follow."""
    parts = list(results.values()) if isinstance(results, Mapping) else list(results)
    if not parts:
        raise ValueError("nothing to pool")
    total = sum(int(r["n"]) for r in parts)
    out = {k: sum(r[k] * int(r["n"]) for r in parts) / total for k in ("orig", "aug", "brittleness")}
    return {**out, "delta": out["aug"] - out["orig"], "n": total}
