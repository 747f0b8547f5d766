"""Stage ``world`` of the real profile: index the real caption files and their images (nothing is generated).

``world`` in the real profile's params::

    world:
      image_size: 224            # decoded images: shorter side to 224 (bicubic), centre crop (open_clip eval)
      splits:
        coco_train: {annotations: $VLCOMP_DATA/coco/coco_karpathy_train.json, images: $VLCOMP_DATA/coco/images}
        coco_val:   {annotations: ..._val.json, images: ...}
        ...

Two annotation layouts are read, both BLIP's Karpathy files (the ones ARO and the NegCLIP fork use):

- one record per caption, ``{"image": str, "caption": str, ...}`` (``coco_karpathy_train.json``): records of
  the same image are grouped, in order of first appearance;
- one record per image, ``{"image": str, "caption": [str, ...]}`` (``coco_karpathy_val.json``, ``_test.json``,
  ``flickr30k_test.json``): image keys must be unique.

A split with ``format: caption_tsv`` is read from TSVLC's CC3M layout instead (``train_with_cap.csv``: tab-separated
``file`` and ``caption`` columns, one row per image; :mod:`vlcomp.formats.cc3m`), the format of TSVLC's CC3M and
of the LAION subset (``laion``: see profiles/real.yaml).

A split with ``format: coco_captions`` is read from the official COCO captions file (``captions_train2017.json``:
``images`` and ``annotations`` lists; :mod:`vlcomp.formats.coco_captions`), e.g. COCO 2017 train, the caption set
of the Hard Positives authors' released per-caption files::

    coco2017_train: {annotations: $VLCOMP_DATA/coco/annotations/captions_train2017.json,
                     images: $VLCOMP_DATA/coco/train2017, format: coco_captions}

Its images are listed in order of their first caption in ``annotations`` and each image's captions in
``annotations`` order; since COCO's ``annotations`` list is not grouped by image, the split's flat caption order
(``captions.json``, image by image) is a permutation of the file's. The stage therefore also writes
``<split>/annotation_order.json`` (:func:`vlcomp.formats.coco_captions.write_annotation_order`): per caption of
``captions.json``, in its shape, the caption's position in the file's ``annotations`` list. A file released one line
per COCO caption in the file's order (``hard_positives_ft/replace_hp.jsonl``: line ``i`` = ``annotations[i]``) maps
to the split by ``line[annotation_index[k][j]]`` for caption ``j`` of image ``k``
(:meth:`~vlcomp.formats.coco_captions.AnnotationOrder.align`; :mod:`vlcomp.generators.hardpos` does). The other
formats write no sidecar (a stale one is removed): their flat caption order is their only order.

Captions are kept as written (stripped), not ``pre_caption``-cleaned: the NegCLIP fork trains on the raw COCO
captions; the ARO evaluation loaders clean their own copies. Each split is written as the toy world's split is
(``<split>/captions.json`` in the Karpathy layout) plus ``<split>/index.json`` (image root, the images in caption
order, the decode size, the annotation file's SHA-256), which :class:`vlcomp.world.Split` reads lazily through
:class:`vlcomp.formats.images.ImageFiles`. Every image file is checked to exist before the stage succeeds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...config import build, expand_inputs
from ...formats.cc3m import read_caption_tsv
from ...formats.coco_captions import ORDER_FILE, read_coco_captions, write_annotation_order
from ...formats.karpathy import read_caption_file
from ...io import sha256_file, write_json

INDEX_FORMAT = "vlcomp-paper-split/1"
#: ``world.splits.<name>.format`` -> the reader of its annotation file.
CAPTION_FORMATS = {"karpathy": read_caption_file, "caption_tsv": read_caption_tsv,
                   "coco_captions": read_coco_captions}


@dataclass(frozen=True)
class PaperSplitSpec:
    """``world.splits.<name>`` in the real profile: the caption file (``format``: ``karpathy``, BLIP's JSON in
    either layout; ``caption_tsv``, TSVLC's CC3M ``*_with_cap.csv``; ``coco_captions``, COCO's official
    ``captions_*.json``) and the folder its image paths are relative to."""

    annotations: str
    images: str
    description: str = ""
    format: str = "karpathy"

    def __post_init__(self) -> None:
        if self.format not in CAPTION_FORMATS:
            raise ValueError(f"format={self.format!r}: must be one of {', '.join(CAPTION_FORMATS)}")


@dataclass(frozen=True)
class PaperWorldConfig:
    image_size: int = 224

    def __post_init__(self) -> None:
        if isinstance(self.image_size, bool) or not isinstance(self.image_size, int) or self.image_size < 1:
            raise ValueError(f"world.image_size={self.image_size!r}: must be a positive int")


def real_world_configs(world: Mapping[str, Any]) -> tuple[PaperWorldConfig, dict[str, PaperSplitSpec]]:
    w = dict(world or {})
    splits = w.pop("splits", None)
    if not isinstance(splits, Mapping) or not splits:
        raise ValueError("params: world.splits is missing or empty (real profile: caption files to index)")
    specs = {}
    for name, spec in splits.items():
        if not isinstance(spec, Mapping):
            raise ValueError(f"params: world.splits.{name} must be a mapping with `annotations` and `images`")
        s = build(PaperSplitSpec, dict(spec), f"world.splits.{name}")
        specs[name] = PaperSplitSpec(expand_inputs(s.annotations), expand_inputs(s.images), s.description, s.format)
    return build(PaperWorldConfig, w, "world"), specs


def read_split(name: str, spec: PaperSplitSpec) -> list[dict]:
    """The split's caption records, after checking that its image folder holds every image they name (the world
    stage and the doctor both check a split this way)."""
    records = CAPTION_FORMATS[spec.format](spec.annotations)
    root = Path(spec.images)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: image folder of split {name!r} not found (world.splits.{name}.images)")
    missing = [r["image"] for r in records if not (root / r["image"]).is_file()]
    if missing:
        raise FileNotFoundError(f"{root}: {len(missing)} of {len(records)} images of split {name!r} "
                                f"({spec.annotations}) are missing, e.g. {', '.join(missing[:3])}")
    return records


def index_split(name: str, spec: PaperSplitSpec, image_size: int, out_dir: Path) -> dict:
    """Write ``out_dir/<name>/captions.json`` and ``index.json`` (and, for ``format: coco_captions``,
    ``annotation_order.json``); returns the split's summary."""
    records = read_split(name, spec)
    root = Path(spec.images)
    d = out_dir / name
    d.mkdir(parents=True, exist_ok=True)
    annotations, sha = str(Path(spec.annotations).resolve()), sha256_file(spec.annotations)
    write_json(d / "captions.json", [{"image": r["image"], "caption": r["caption"]} for r in records])
    write_json(d / "index.json", {
        "format": INDEX_FORMAT, "image_root": str(root.resolve()), "images": [r["image"] for r in records],
        "image_size": image_size, "annotations": annotations,
        "annotations_sha256": sha, "annotations_format": spec.format,
        "description": spec.description})
    if records and "annotation_index" in records[0]:
        write_annotation_order(d, records, annotations=annotations, sha256=sha)
    elif (d / ORDER_FILE).exists():
        (d / ORDER_FILE).unlink()  # left by an earlier index of the split from a COCO captions file
    return {"n_images": len(records), "n_captions": sum(len(r["caption"]) for r in records)}


def index_world(world: Mapping[str, Any], out_dir: str | Path) -> dict:
    """Index every split of the real profile's ``world`` into ``out_dir``; returns ``{split: summary}``."""
    cfg, specs = real_world_configs(world)
    return {name: index_split(name, spec, cfg.image_size, Path(out_dir)) for name, spec in specs.items()}


def build_world(params: Mapping[str, Any], out: Path) -> dict[str, dict[str, Any]]:
    """Stage ``world``: :func:`index_world` of params' ``world`` (the toy profile's signature)."""
    from ...config import section

    return index_world(section(params, "world"), out)
