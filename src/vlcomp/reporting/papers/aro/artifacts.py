"""ARO-D1..D4 (datasets) and ARO-M1/M2 (checkpoints): what the pipeline built, counted from its own outputs.

Every count is read from the files the stages wrote (``data/benchmarks``, ``data/mined/<generator>-<base>`` of
the first chain, ``models/finetune``), next to the size the paper states. The toy world is far smaller than VG / COCO, so the
counts are not expected to match; the table documents the conventions (one Order case per caption; captions
without a negative dropped; K nearest-neighbour images) and where each artifact lives.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from ....eval.inputs import read_manifest
from ....formats.aro import load_exclusions
from ....io import read_json
from ....metrics.aro import VG_ATTRIBUTION_MIN_COUNT, vg_attribution_group
from ...collect import runs_phrase
from ...tree import Chain

PAPER = {
    "ARO-D1": "23,937 cases, 48 relations (Table 2 lists 45 with 21,917 cases)",
    "ARO-D2": "28,748 cases, 117 attribute pairs",
    "ARO-D3": "COCO ≈25,010 / Flickr30k ≈5,000 cases (one per caption, the code); Fig. 1 says 6,000 (one per image)",
    "ARO-D4": "COCO train captions with ≤5 swap negatives (none: dropped) + top-3 NN images",
    "ARO-M1": "ViT-B/32 from OpenAI CLIP, 5 epochs on COCO with hard negatives and NN images",
    "ARO-M2": "the same recipe without hard negatives",
}


def vg_relation_counts(cases: list[dict], excluded: set[str]) -> dict[str, int]:
    rel = Counter(c["relation_name"] for c in cases)
    kept = {r: n for r, n in rel.items() if r not in excluded}
    return {"cases": len(cases), "relations": len(rel), "relations_in_macro": len(kept),
            "cases_in_macro": sum(kept.values())}


def vg_attribution_counts(cases: list[dict], min_count: int) -> dict[str, int]:
    """Attribute pairs keyed as the ARO code's macro groups them: the ordered pair ``attr1_attr2``."""
    pairs = Counter(vg_attribution_group(*c["attributes"]) for c in cases)
    return {"cases": len(cases), "pairs": len(pairs),
            "pairs_in_macro": sum(1 for n in pairs.values() if n >= min_count)}


def _n_params(path: Path) -> int:
    import torch

    state = torch.load(path, map_location="cpu", weights_only=True)
    state = state.get("state_dict", state)
    return int(sum(v.numel() for v in state.values() if hasattr(v, "numel")))


def _chains(names: list[str], variants: dict[str, dict], bases: dict[str, dict]) -> list[Chain]:
    chains = []
    for n in names:
        v = variants[n]
        base = str(v.get("base") or "")
        seed = "" if v.get("seed") is None else str(v.get("seed"))
        chains.append(Chain(str(v.get("method")), base, str((bases.get(base) or {}).get("seed", "")), seed))
    return chains


def artifact_inventory(benchmarks_dir: str | Path, mined_dir: str | Path, models_dir: str | Path,
                       variants: dict[str, dict], epochs: float, bases: dict[str, dict] | None = None) -> pd.DataFrame:
    """One row per catalog artifact (ARO-D1..D4, ARO-M1, ARO-M2) with the toy counts and the paper's size;
    ``bases`` (params ``bases``) names each checkpoint's chain."""
    bench, mined, models = Path(benchmarks_dir), Path(mined_dir), Path(models_dir)
    manifest = read_json(bench / "manifest.json")
    rel, inputs = manifest["inputs"], read_manifest(bench)

    def where(key: str) -> str:
        return f"data/benchmarks/{rel[key]}"

    excluded = set(load_exclusions(inputs["aro_relation_exclusions"]))
    min_count = int(inputs.get("aro_vga_min_count") or VG_ATTRIBUTION_MIN_COUNT)
    rows = []
    r = vg_relation_counts(read_json(inputs["aro_vg_relation"]), excluded)
    rows.append(("ARO-D1", "VG-Relation twin", where("aro_vg_relation"),
                 f"{r['cases']:,} cases, {r['relations']} relations; macro over {r['relations_in_macro']} "
                 f"({r['cases_in_macro']:,} cases; symmetric {', '.join(sorted(excluded))} excluded)"))
    a = vg_attribution_counts(read_json(inputs["aro_vg_attribution"]), min_count)
    rows.append(("ARO-D2", "VG-Attribution twin", where("aro_vg_attribution"),
                 f"{a['cases']:,} cases, {a['pairs']} attribute pairs; {a['pairs_in_macro']} with "
                 f"≥{min_count} cases enter the macro"))
    parts = []
    for name in ("coco_order", "flickr_order"):
        folder = Path(inputs[f"{name}_options"])
        seeds = sorted(folder.glob("seed*.json"))
        if not seeds:
            raise FileNotFoundError(f"{folder}: no seed*.json order files")
        cases = read_json(seeds[0])
        n_opts = {len(c["caption_options"]) for c in cases}
        parts.append(f"{name.split('_')[0]}: {len(cases):,} cases × {len(seeds)} seeds, "
                     f"{'/'.join(map(str, sorted(n_opts)))} options (original + 4 perturbations)")
    rows.append(("ARO-D3", "COCO-Order / Flickr30k-Order twins", "data/benchmarks/order/", "; ".join(parts)))
    negatives = read_json(mined / "negatives.json")
    per_caption = [len(n) for img in negatives for n in img]
    kept = [n for n in per_caption if n > 0]
    knn = np.load(mined / "hard_images.npy")
    if knn.ndim != 2 or len(knn) != len(negatives):
        raise ValueError(f"{mined / 'hard_images.npy'}: shape {knn.shape}, expected [{len(negatives)}, K]")
    rows.append(("ARO-D4", f"NegCLIP training data ({mined.name})", f"data/mined/{mined.name}/",
                 f"{len(per_caption):,} captions of {len(negatives):,} images; {len(kept):,} with ≥1 negative "
                 f"(mean {np.mean(kept) if kept else 0:.2f}, max {max(kept, default=0)}); "
                 f"{knn.shape[1]} NN images per image"))
    for art, method, label in (("ARO-M1", "negclip", "NegCLIP checkpoints"), ("ARO-M2", "clip_ft", "CLIP-FT checkpoints")):
        names = sorted(k for k, v in variants.items() if v.get("method") == method)
        if not names:
            rows.append((art, label, "—", "no variant of this method in params.yaml"))
            continue
        metas = [read_json(models / "finetune" / n / "model.json") for n in names]
        n_params = _n_params(models / "finetune" / names[0] / "model.pt")
        lrs = sorted({m["lr"] for m in metas})
        rows.append((art, label, f"models/finetune/{{{','.join(names)}}}/model.pt",
                     f"{runs_phrase(_chains(names, variants, bases or {}))} of {metas[0]['arch']} "
                     f"({n_params / 1e6:.2f} M params), each from its chain's base model, {epochs:g} epochs at lr "
                     f"{', '.join(f'{x:g}' for x in lrs)}, {metas[0]['n_rows']:,} training rows"))
    df = pd.DataFrame(rows, columns=["artifact", "what", "where", "toy (counted from the outputs)"])
    df["paper"] = df["artifact"].map(PAPER)
    return df
