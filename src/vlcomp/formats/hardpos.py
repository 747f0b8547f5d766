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
false_caption"; the SWAP pair files were not available to us, so this is assumed for SWAP too).

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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .aro import VGCase, load_vg
from .records import RecordError, field, open_image, read_json_strict, text, where

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
    data = read_json_strict(path)
    if not isinstance(data, list):
        raise RecordError(f"{path}: expected a JSON list of cases, got {type(data).__name__}")
    if not data:
        raise RecordError(f"{path}: no cases")
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
    if n_data != n_swapped:
        longer, other = (data_path, swapped_path) if n_data > n_swapped else (swapped_path, data_path)
        raise RecordError(f"{longer}: record {min(n_data, n_swapped)}: no aligned row in {other} "
                          f"({n_data} rows in {data_path}, {n_swapped} in {swapped_path})")


def _mismatch(swapped_path: Path, data_path: Path, i: int, what: str, got: object, want: object) -> RecordError:
    return RecordError(f"{where(swapped_path, i)}: {what} {got!r} differs from {what} {want!r} of "
                       f"{where(data_path, i)}; the pair files must be aligned row by row")


def load_replace(data_path: str | Path, swapped_path: str | Path) -> list[HardPositiveCase]:
    """A REPLACE benchmark from its ``data/`` file (c, c_n) and ``swapped_data/`` file (c_p, c_n)."""
    data_path, swapped_path = Path(data_path), Path(swapped_path)
    original, swapped = _replace_rows(data_path), _replace_rows(swapped_path)
    _check_counts(data_path, len(original), swapped_path, len(swapped))
    cases = []
    for i, ((image_id, image, c, c_n), (image_id2, image2, c_p, c_n2)) in enumerate(zip(original, swapped, strict=True)):
        for what, got, want in (("image_id", image_id2, image_id), ("image_path", image2, image),
                                ("false_caption", c_n2, c_n)):
            if got != want:
                raise _mismatch(swapped_path, data_path, i, what, got, want)
        cases.append(HardPositiveCase(i, image, c, c_p, c_n, image_id=image_id))
    return cases


def load_swap(data_path: str | Path, swapped_path: str | Path) -> list[HardPositiveCase]:
    """The SWAP benchmark from ``data/visual_genome_attribution.json`` (c, c_n) and its ``swapped_data/`` twin
    (c_p, c_n), both in ARO's VG-Attribution schema."""
    data_path, swapped_path = Path(data_path), Path(swapped_path)
    original, swapped = load_vg(data_path, "attribution"), load_vg(swapped_path, "attribution")
    _check_counts(data_path, len(original), swapped_path, len(swapped))
    cases = []
    for i, (a, b) in enumerate(zip(original, swapped, strict=True)):
        for what, got, want in (("image_path", b.image_path, a.image_path), ("box", b.box, a.box),
                                ("false_caption", b.false_caption, a.false_caption)):
            if got != want:
                raise _mismatch(swapped_path, data_path, i, what, got, want)
        cases.append(HardPositiveCase(i, a.image_path, a.true_caption, b.true_caption, a.false_caption, box=a.box))
    return cases


def load_benchmark(root: str | Path, name: str) -> list[HardPositiveCase]:
    """``replace_att``, ``replace_rel`` or ``swap`` from a hard_positives checkout (``root/data``,
    ``root/swapped_data``)."""
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}; known: {', '.join(BENCHMARKS)}")
    file, kind = BENCHMARKS[name]
    root = Path(root)
    loader = load_replace if kind == "replace" else load_swap
    return loader(root / DATA_DIR / file, root / SWAPPED_DIR / file)


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
