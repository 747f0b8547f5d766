"""Build every ARO benchmark twin of the toy profile from the world (stage ``benchmarks``).

Layout under the output directory:

- ``vg_relation.json``, ``vg_attribution.json``: ARO's record format; images are keys into ``vg_test``.
- ``order/{coco,flickr}/seed{s}.json``: ``[{"image", "caption_options"}]``, one case per caption (the ARO
  code's convention, not one per image), option 0 the original, all options through ``pre_caption``.
- ``retrieval/{coco,flickr}/{strategy}/seed{s}.json``: every test caption (flattened, image-major) after
  ``pre_caption`` and the strategy (``none`` has one file, seed 0).
- ``zeroshot/{task}/images.npy``, ``labels.npy``, ``classes.json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...io import write_json, write_npy
from ...seeding import np_rng
from ...text.perturb import TextShuffler
from ...text.preprocess import pre_caption
from ...twins.aro_vg import build_vg_attribution, build_vg_relation
from ...world import Split
from ...world.concepts import RELATIONS, SYMMETRIC_RELATIONS
from ...world.scene import WorldConfig
from .zeroshot import TEMPLATES, ZEROSHOT_TASKS, build_zeroshot

TEXT_STRATEGIES = ("shuffle_nouns_and_adj", "shuffle_all_words", "shuffle_allbut_nouns_and_adj",
                   "shuffle_trigrams", "shuffle_within_trigrams")
IMAGE_STRATEGIES = ("shuffle_rows_4", "shuffle_cols_4", "shuffle_patches_9")
RETRIEVAL_SPLITS = {"coco": "coco_test", "flickr": "flickr_test"}
VG_SPLIT = "vg_test"


@dataclass(frozen=True)
class BenchmarksConfig:
    """``benchmarks`` in params.yaml."""

    order_seeds: int = 5
    shuffle_seeds: int = 3
    zeroshot_images_per_class: int = 20
    vga_min_count: int = 25  # ARO code: VG-A attribute pairs with fewer cases are dropped from the macro

    def __post_init__(self) -> None:
        for name in ("order_seeds", "shuffle_seeds", "zeroshot_images_per_class", "vga_min_count"):
            if getattr(self, name) < 1:
                raise ValueError(f"benchmarks.{name}={getattr(self, name)}: must be >= 1")


def build_all(world: str | Path, out: Path, cfg: BenchmarksConfig, wcfg: WorldConfig, shuffler: TextShuffler,
              seed: int) -> dict:
    summary: dict[str, int] = {}
    write_json(out / "settings.json", {"vga_min_count": cfg.vga_min_count})
    vg = Split(world, VG_SPLIT)
    scenes = vg.scenes()
    vgr = build_vg_relation(scenes, wcfg.image_size, np_rng(seed, "benchmarks", "vg_relation"))
    vga = build_vg_attribution(scenes, wcfg.image_size, np_rng(seed, "benchmarks", "vg_attribution"))
    write_json(out / "vg_relation.json", vgr)
    # Data, not code: the relations excluded from the VG-R macro (ARO's `symmetric` list; the toy world's
    # symmetric relations here, the authors' 157-name list in the paper profile) and the Table 2 groups.
    (out / "vg_relation_excluded.txt").write_text("\n".join(SYMMETRIC_RELATIONS) + "\n")
    write_json(out / "vg_relation_groups.json", {p: ("verbs" if r.group == "verb" else "spatial")
                                                 for p, r in RELATIONS.items() if not r.symmetric})
    write_json(out / "vg_attribution.json", vga)
    summary |= {"vg_relation/n_cases": len(vgr), "vg_attribution/n_cases": len(vga)}

    for short, split_name in RETRIEVAL_SPLITS.items():
        ann = Split(world, split_name).annotations()
        keys = [a["image"] for a in ann for _ in a["caption"]]
        raw = [c for a in ann for c in a["caption"]]
        tagged_raw = shuffler.tag(raw)
        for s in range(cfg.order_seeds):
            opts = shuffler.order_options(raw, np_rng(seed, "benchmarks", "order", short, s), tagged=tagged_raw)
            write_json(out / "order" / short / f"seed{s}.json",
                       [{"image": k, "caption_options": o} for k, o in zip(keys, opts, strict=True)])
        clean = [pre_caption(c) for c in raw]
        write_json(out / "retrieval" / short / "none" / "seed0.json", clean)
        tagged_clean = shuffler.tag(clean)
        for strategy in TEXT_STRATEGIES:
            for s in range(cfg.shuffle_seeds):
                rng = np_rng(seed, "benchmarks", "retrieval", short, strategy, s)
                texts = shuffler.perturb_batch(clean, [strategy], rng, tagged=tagged_clean)[strategy]
                write_json(out / "retrieval" / short / strategy / f"seed{s}.json", texts)
        summary |= {f"{short}_order/n_cases": len(raw), f"{short}_retrieval/n_images": len(ann),
                    f"{short}_retrieval/n_captions": len(raw)}

    for name, task in ZEROSHOT_TASKS.items():
        images, labels, classes = build_zeroshot(task, cfg.zeroshot_images_per_class, wcfg,
                                                 np_rng(seed, "benchmarks", "zeroshot", name))
        write_npy(out / "zeroshot" / name / "images.npy", images)
        write_npy(out / "zeroshot" / name / "labels.npy", labels.astype(np.int64))
        write_json(out / "zeroshot" / name / "classes.json",
                   {"classes": classes, "templates": list(TEMPLATES), "stands_for": task.stands_for})
        summary[f"{name}/n_images"] = int(len(labels))
    return summary
