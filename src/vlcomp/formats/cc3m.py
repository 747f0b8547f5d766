"""CC3M (and any other image-text corpus) as TSVLC's training code reads it: ``train_with_cap.csv`` /
``val_with_cap.csv``, tab-separated, a header row naming the columns ``file`` (the image path) and ``caption`` (one
alt-text), one row per image (catalog tsvlc.md §2.1; the reference passes them to open_clip's ``CsvDataset`` with
``csv_img_key=file``, ``csv_caption_key=caption``, ``csv_separator="\\t"``, which reads them with pandas' default
quoting; the ``csv`` module here quotes the same way).

:func:`read_caption_tsv` returns the Karpathy layout every split of the pipeline is stored in
(``[{"image", "caption": [str]}]``, :mod:`vlcomp.formats.karpathy`), so the world stage, the generators and the
fine-tuning read a CC3M split exactly as a COCO one. Other columns are ignored. A row without a file or caption, a
repeated file, or a missing column is an error naming the file and line. :func:`write_caption_tsv` writes the
layout back (fixtures, subsets).
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from .records import RecordError

IMAGE_COLUMN = "file"
CAPTION_COLUMN = "caption"


def read_caption_tsv(path: str | Path, *, image_column: str = IMAGE_COLUMN,
                     caption_column: str = CAPTION_COLUMN) -> list[dict]:
    """``path`` (tab-separated, header row) -> ``[{"image": <file>, "caption": [<caption>]}]`` in file order,
    captions stripped."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: caption file not found")
    records: list[dict] = []
    seen: dict[str, int] = {}
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f, delimiter="\t")
        columns = reader.fieldnames or []
        missing = [c for c in (image_column, caption_column) if c not in columns]
        if missing:
            raise RecordError(f"{path}: header row {columns!r} lacks the column(s) {missing} (expected tab-separated "
                              f"columns {image_column!r} and {caption_column!r}, as TSVLC's train_with_cap.csv)")
        for row in reader:
            line = reader.line_num
            image, caption = row.get(image_column), row.get(caption_column)
            if not isinstance(image, str) or not image.strip():
                raise RecordError(f"{path}: line {line}: empty {image_column!r}")
            if not isinstance(caption, str) or not caption.strip():
                raise RecordError(f"{path}: line {line} ({image}): empty {caption_column!r}")
            image = image.strip()
            if image in seen:
                raise RecordError(f"{path}: line {line}: image {image!r} repeats line {seen[image]} (one row per image)")
            seen[image] = line
            records.append({"image": image, "caption": [caption.strip()]})
    if not records:
        raise RecordError(f"{path}: no rows after the header")
    return records


def write_caption_tsv(path: str | Path, records: Sequence[dict]) -> Path:
    """Write ``[{"image", "caption": [str]}]`` (one caption per image) as TSVLC's ``*_with_cap.csv``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow([IMAGE_COLUMN, CAPTION_COLUMN])
        for i, r in enumerate(records):
            caps = r["caption"] if isinstance(r["caption"], list) else [r["caption"]]
            if len(caps) != 1:
                raise RecordError(f"{path}: record {i} ({r['image']}): the TSV holds one caption per image, "
                                  f"got {len(caps)}")
            w.writerow([r["image"], caps[0]])
    return path


#: The positive the reference's BLOOM prompting writes when its generation fails (catalog tsvlc.md §3.5).
FAILED_POSITIVE = "invalid"


def positive_file(folder: str | Path, image: str) -> Path:
    """The released positive of ``image``: ``<folder>/<image basename without extension>.json`` (catalog: "one JSON
    per CC3M image, file name ``<image basename>.json``"; AMBIGUOUS whether the basename keeps its extension: the
    reference's CC3M images are ``<n>.jpg`` and its positives ``<n>.json``, so without)."""
    return Path(folder) / f"{Path(image).stem}.json"


def read_released_positives(folder: str | Path, images: Sequence[str]) -> list[str | None]:
    """TSVLC's released analogy positives (``CC3M_positives/``: one JSON ``{"positive": str, "caption": str}`` per
    image) for ``images`` in order: the positive, or None where the image has no file, or its positive is empty or
    the generator's failure marker ``"invalid"`` (the reference then trains on the caption itself; here the
    analogy term of that row is masked, as for every source: vlcomp.generators.tsvlc). A file that is not a JSON
    object with a string ``positive`` is an error naming it."""
    import json

    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: folder of released positives not found")
    out: list[str | None] = []
    for image in images:
        path = positive_file(folder, image)
        if not path.is_file():
            out.append(None)
            continue
        try:
            rec = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise RecordError(f"{path}: not a JSON file ({e})") from None
        if not isinstance(rec, dict) or not isinstance(rec.get("positive"), str):
            raise RecordError(f"{path}: expected a JSON object with a string field 'positive' (positive of {image!r})")
        text = rec["positive"].strip()
        out.append(text if text and text != FAILED_POSITIVE else None)
    return out
