"""COCO and Flickr30k Karpathy-test twins: the ``coco_test`` and ``flickr_test`` world splits written as BLIP's /
ARO's ``coco_karpathy_test.json`` / ``flickr30k_test.json`` (a JSON list of ``{"image", "caption": [5 raw
captions]}``) with the images as PNG files beside them. They feed COCO/Flickr30k retrieval (ARO Tables 3-4, the
downstream columns of the other papers) and COCO/Flickr30k-Order (ARO Table 1 / 5)."""

from __future__ import annotations

from ..formats.karpathy import write_karpathy
from . import TWINS, TwinContext, TwinResult
from .images import image_file_name, write_pngs

#: input-key prefix -> (world split, annotation file name), as ``real_inputs`` names them
KARPATHY_SPLITS = {"coco": ("coco_test", "coco_karpathy_test.json"),
                   "flickr": ("flickr_test", "flickr30k_test.json")}


@TWINS.register("karpathy")
def build_karpathy(ctx: TwinContext) -> TwinResult:
    inputs, counts = {}, {}
    for prefix, (split_name, file_name) in KARPATHY_SPLITS.items():
        split = ctx.split(split_name)
        ann = split.annotations()
        names = [image_file_name(a["image"]) for a in ann]
        images = ctx.folder(f"{prefix}_images")
        write_pngs(images, split.images, names)
        path = ctx.folder() / file_name
        write_karpathy(path, [{"image": n, "caption": a["caption"]} for n, a in zip(names, ann, strict=True)])
        inputs |= {f"{prefix}_karpathy_test": ctx.rel(path), f"{prefix}_images": ctx.rel(images)}
        counts |= {f"{prefix}/n_images": len(ann), f"{prefix}/n_captions": sum(len(a["caption"]) for a in ann)}
    return TwinResult(inputs, counts)
