"""ARO's released VG-Relation / VG-Attribution files (``visual_genome_relation.json``,
``visual_genome_attribution.json``; refcode catalog §1.1).

Each file is a JSON list of objects with ``image_path`` (relative to the images folder), ``bbox_x``,
``bbox_y``, ``bbox_w``, ``bbox_h``, ``true_caption``, ``false_caption`` and ``relation_name`` (VG-R) or
``attributes`` (VG-A, two strings; the macro's group key is ``f"{a0}_{a1}"``). Other keys are ignored. Options
are scored in the reference order ``[false_caption, true_caption]``: the correct option is index 1, so under
``np.argmax`` a tie counts as wrong (``vlcomp.metrics.aro``). Records have no ids: a record is named by its
position in the list. Images are read lazily, cropped to the box (:meth:`VGCase.crop`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .records import RecordError, field, listed_records, number, open_image, text, where

#: Index of the correct caption in ``VGCase.caption_options`` (ARO's ``[false, true]`` order).
CORRECT_OPTION = 1


@dataclass(frozen=True)
class VGCase:
    index: int
    image_path: str
    box: tuple[float, float, float, float]  # x, y, w, h in pixels
    true_caption: str
    false_caption: str
    group: str  # relation name (VG-R) or "attr0_attr1" (VG-A)
    attributes: tuple[str, str] | None = None

    @property
    def caption_options(self) -> tuple[str, str]:
        return (self.false_caption, self.true_caption)

    def crop(self, images_dir: str | Path, source: str | Path = "", *, tolerance_px: float = 0.0):
        """The case's image cropped to its box, as ARO does before the model's transform
        (``image.crop((x, y, x + w, y + h))``). A box reaching outside the image (by more than ``tolerance_px``)
        is an error that names the file, the record and the image size."""
        at = where(source, self.index)
        image = open_image(Path(images_dir) / self.image_path, at)
        x, y, w, h = self.box
        W, H = image.size
        t = tolerance_px
        if x < -t or y < -t or x + w > W + t or y + h > H + t:
            raise RecordError(f"{at}: box x={x} y={y} w={w} h={h} lies outside image {self.image_path} "
                              f"of size {W}x{H}")
        return image.crop((x, y, x + w, y + h))


def _case(rec: object, i: int, path: Path, kind: str) -> VGCase:
    at = where(path, i)
    image_path = text(rec, "image_path", at)
    box = (number(rec, "bbox_x", at, minimum=0), number(rec, "bbox_y", at, minimum=0),
           number(rec, "bbox_w", at, positive=True), number(rec, "bbox_h", at, positive=True))
    true_caption, false_caption = text(rec, "true_caption", at), text(rec, "false_caption", at)
    if kind == "relation":
        return VGCase(i, image_path, box, true_caption, false_caption, text(rec, "relation_name", at))
    attrs = field(rec, "attributes", list, at)
    if len(attrs) != 2 or not all(isinstance(a, str) and a.strip() for a in attrs):
        raise RecordError(f"{at}: field 'attributes' must be a list of 2 non-empty strings, got {attrs!r:.80}")
    return VGCase(i, image_path, box, true_caption, false_caption, f"{attrs[0]}_{attrs[1]}", (attrs[0], attrs[1]))


def load_vg(path: str | Path, kind: str) -> list[VGCase]:
    """Read and check every record of a VG-Relation (``kind="relation"``) or VG-Attribution
    (``kind="attribution"``) file; the first bad record stops the load with its position named."""
    if kind not in ("relation", "attribution"):
        raise ValueError(f"kind must be 'relation' or 'attribution', got {kind!r}")
    path = Path(path)
    return [_case(rec, i, path, kind) for i, rec in enumerate(listed_records(path))]


def load_exclusions(path: str | Path) -> frozenset[str]:
    """Relation names left out of the VG-R macro (one per line; ``#`` starts a comment). ARO's notebook keeps a
    157-entry list; the real profile reads it from a file (params), not from code."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: relation exclusion list not found")
    names = [line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines()]
    return frozenset(n for n in names if n)


def write_vg(path: str | Path, records: list[dict], kind: str) -> Path:
    """Write ARO's released VG-Relation / VG-Attribution layout (a JSON list of records with ``image_path``,
    ``bbox_*``, ``true_caption``, ``false_caption`` and ``relation_name`` or ``attributes``; extra keys are kept,
    the loader ignores them). Every record is checked with the loader's rules first, so what is written loads."""
    from ..io import write_json

    if kind not in ("relation", "attribution"):
        raise ValueError(f"kind must be 'relation' or 'attribution', got {kind!r}")
    path = Path(path)
    if not records:
        raise RecordError(f"{path}: no cases to write")
    for i, rec in enumerate(records):
        _case(rec, i, path, kind)
    write_json(path, records)
    return path
