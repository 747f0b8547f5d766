"""Time the real-profile evaluation engine (batched) against the reference-style loop (naive) on ARO and
SugarCrepe, with open_clip ``ViT-B-32-quickgelu`` (random init: the weights do not change the cost).

(a) batched: ``Benchmark.run`` - every unique crop / image read once and encoded in batches, every unique
    caption encoded once, scores by dot product.
(b) naive: ``Benchmark.run_naive`` - written the way ARO's and SugarCrepe's scripts score: per case read
    the image (crop), preprocess and encode it alone, encode its captions (ARO: one call per case; SugarCrepe:
    one call per caption, as ``main_eval.py``), compare; no cache.

Fixtures are written in the released formats to a temporary folder: VG-Relation / VG-Attribution cases over a
few dozen synthetic images, several cases per union box and repeated captions (as in the real files), and
SugarCrepe items with the real ``swap_obj.json`` captions from ``../shared/real_samples`` when present
(synthetic COCO-sized images per file name; synthetic captions otherwise). The script also checks that both
paths give the same per-case scores (1e-5) and decisions.

    .venv/bin/python perf/bench_paper_eval.py --out perf/results/bench_paper_eval.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from PIL import Image  # noqa: E402

from vlcomp.benchmarks import BENCHMARKS  # noqa: E402
from vlcomp.eval.engine import naive_task, score_task  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
REAL_SUGARCREPE = REPO_ROOT.parent / "shared" / "real_samples" / "sugarcrepe_swap_obj.json"
DEFAULT_OUT = REPO_ROOT / "perf" / "results" / "bench_paper_eval.json"

NOUNS = ["man", "woman", "dog", "horse", "table", "chair", "shirt", "car", "tree", "grass", "plate", "building",
         "window", "street", "boy", "girl", "hat", "bench", "sign", "pole"]
RELATIONS = ["on", "behind", "in front of", "under", "above", "next to", "holding", "wearing", "riding", "sitting on",
             "near", "watching"]
#: A few ordered attribute pairs, so VG-A pairs reach the reference's 25-case floor of the macro.
ATTRIBUTE_PAIRS = [("white", "black"), ("red", "wooden"), ("small", "large"), ("green", "metal"), ("open", "brown"),
                   ("tall", "blue")]


def synthetic_image(rng: np.random.Generator, size: tuple[int, int]) -> Image.Image:
    """Smooth random colour fields (JPEG-friendly, like photos rather than noise)."""
    w, h = size
    low = rng.integers(0, 256, (6, 8, 3), dtype=np.uint8)
    return Image.fromarray(low).resize((w, h), Image.BICUBIC)


def write_images(folder: Path, names: list[str], rng: np.random.Generator, size: tuple[int, int]) -> None:
    for name in names:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        synthetic_image(rng, size).save(path, format="JPEG", quality=90)


def aro_fixture(root: Path, rng: np.random.Generator, n_images: int, n_cases: int, boxes_per_image: int) -> dict:
    """VG-R and VG-A files sharing ``n_images`` images; every case crops one of ``boxes_per_image`` union boxes
    of its image; each box has one object pair, so captions repeat whenever a (pair, relation) repeats."""
    images = root / "aro" / "images"
    names = [f"{2300000 + i}.jpg" for i in range(n_images)]
    size = (500, 375)
    write_images(images, names, rng, size)
    boxes = []
    for name in names:
        for _ in range(boxes_per_image):
            w, h = int(rng.integers(size[0] // 4, size[0] // 2)), int(rng.integers(size[1] // 4, size[1] // 2))
            x, y = int(rng.integers(0, size[0] - w)), int(rng.integers(0, size[1] - h))
            s, o = rng.choice(len(NOUNS), 2, replace=False)
            a1, a2 = ATTRIBUTE_PAIRS[int(rng.integers(len(ATTRIBUTE_PAIRS)))]
            boxes.append((name, (x, y, w, h), NOUNS[s], NOUNS[o], a1, a2))
    vgr, vga = [], []
    for _ in range(n_cases):
        name, (x, y, w, h), s, o, a1, a2 = boxes[int(rng.integers(len(boxes)))]
        rel = RELATIONS[int(rng.integers(len(RELATIONS)))]
        box = {"image_path": name, "bbox_x": x, "bbox_y": y, "bbox_w": w, "bbox_h": h}
        vgr.append({**box, "true_caption": f"the {s} is {rel} the {o}", "false_caption": f"the {o} is {rel} the {s}",
                    "relation_name": rel})
        name, (x, y, w, h), s, o, a1, a2 = boxes[int(rng.integers(len(boxes)))]
        box = {"image_path": name, "bbox_x": x, "bbox_y": y, "bbox_w": w, "bbox_h": h}
        vga.append({**box, "true_caption": f"the {a1} {s} and the {a2} {o}",
                    "false_caption": f"the {a2} {s} and the {a1} {o}", "attributes": [a1, a2]})
    (root / "aro" / "visual_genome_relation.json").write_text(json.dumps(vgr))
    (root / "aro" / "visual_genome_attribution.json").write_text(json.dumps(vga))
    excl = root / "aro" / "symmetric_relations.txt"
    excl.write_text("near\nnext to\n")
    return {"aro_vg_relation": str(root / "aro" / "visual_genome_relation.json"),
            "aro_vg_attribution": str(root / "aro" / "visual_genome_attribution.json"),
            "aro_images": str(images), "aro_relation_exclusions": str(excl)}


def sugarcrepe_fixture(root: Path, rng: np.random.Generator, n_synthetic: int) -> tuple[dict, str]:
    data = root / "sugarcrepe" / "data"
    data.mkdir(parents=True)
    if REAL_SUGARCREPE.exists():
        cases, source = json.loads(REAL_SUGARCREPE.read_text()), f"real captions: {REAL_SUGARCREPE}"
    else:
        cases, source = {}, "synthetic captions (real sample absent)"
        for i in range(n_synthetic):
            s, o = rng.choice(len(NOUNS), 2, replace=False)
            cases[str(i)] = {"filename": f"{i % (n_synthetic * 9 // 10):012d}.jpg",
                             "caption": f"A {NOUNS[s]} next to a {NOUNS[o]}.",
                             "negative_caption": f"A {NOUNS[o]} next to a {NOUNS[s]}."}
    (data / "swap_obj.json").write_text(json.dumps(cases))
    write_images(root / "coco" / "val2017", sorted({c["filename"] for c in cases.values()}), rng, (640, 480))
    return {"sugarcrepe_dir": str(data), "coco_val2017_images": str(root / "coco" / "val2017"),
            "sugarcrepe_categories": ["swap_obj"]}, source


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def compare(batched: dict, naive: dict, score_cols: tuple[str, ...]) -> dict:
    diff, same = 0.0, True
    for name, df in batched.items():
        for col in score_cols:
            if col in df:
                diff = max(diff, float(np.abs(df[col].to_numpy() - naive[name][col].to_numpy()).max()))
        same &= df["correct"].tolist() == naive[name]["correct"].tolist()
    return {"max_abs_score_diff": diff, "decisions_identical": bool(same)}


def bench_group(label: str, scorer, names: list[str], inputs: dict, score_cols: tuple[str, ...]) -> dict:
    tasks = [BENCHMARKS.get(n).prepare(inputs) for n in names]
    n_cases = sum(len(t.meta) for t in tasks)
    n_captions = sum(len(t.meta) * len(t.captions[0]) for t in tasks)
    unique_images = sum(len(set(t.image_keys)) for t in tasks)
    unique_captions = sum(len({c for caps in t.captions for c in caps}) for t in tasks)
    batched, t_b = _timed(lambda: {k: v for t in tasks for k, v in score_task(scorer, t).items()})
    naive, t_n = _timed(lambda: {k: v for t in tasks for k, v in naive_task(scorer, t).items()})
    metrics = {k: v for n in names for k, v in BENCHMARKS.get(n).aggregate(batched).items()
               if k.endswith(("macro_acc", "/acc"))}
    return {
        "benchmarks": names, "cases": n_cases, "caption_scores": n_captions,
        "unique_images_encoded_batched": unique_images, "unique_captions_encoded_batched": unique_captions,
        "images_encoded_naive": n_cases, "captions_encoded_naive": n_captions,
        "batched_s": t_b, "naive_s": t_n, "speedup": t_n / t_b,
        "batched_images_per_s": n_cases / t_b, "naive_images_per_s": n_cases / t_n,
        "batched_captions_per_s": n_captions / t_b, "naive_captions_per_s": n_captions / t_n,
        "parity": compare(batched, naive, score_cols), "metrics_random_init": metrics,
    }


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", default="ViT-B-32-quickgelu")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--images", type=int, default=24, help="synthetic VG images")
    ap.add_argument("--boxes-per-image", type=int, default=3)
    ap.add_argument("--aro-cases", type=int, default=200, help="cases per VG file (VG-R and VG-A each)")
    ap.add_argument("--sugarcrepe-synthetic", type=int, default=245, help="cases when the real sample is absent")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)

    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    import open_clip

    from vlcomp.models.factory import ModelSpec, create_model
    from vlcomp.models.scorers import OpenClipScorer

    model = create_model(ModelSpec(args.arch), init_seed=args.seed)
    preprocess = open_clip.image_transform(model.visual.image_size, is_train=False)
    scorer = OpenClipScorer(args.arch, model, preprocess, open_clip.get_tokenizer(args.arch))
    scorer.encode_images([Image.new("RGB", (64, 64))]), scorer.encode_texts(["warm-up"])  # first-call costs
    load_s = time.perf_counter() - t0

    rng = np.random.default_rng(args.seed)
    with tempfile.TemporaryDirectory(prefix="bench_paper_eval_") as tmp:
        root = Path(tmp)
        inputs = aro_fixture(root, rng, args.images, args.aro_cases, args.boxes_per_image)
        sc_inputs, sc_source = sugarcrepe_fixture(root, rng, args.sugarcrepe_synthetic)
        inputs.update(sc_inputs)
        results = {
            "aro": bench_group("aro", scorer, ["vg_relation", "vg_attribution"], inputs, ("score_false", "score_true")),
            "sugarcrepe": bench_group("sugarcrepe", scorer, ["sugarcrepe"], inputs, ("score_pos", "score_neg")),
        }
    report = {
        "model": f"{args.arch} (random init, pretrained=None)", "torch_threads": torch.get_num_threads(),
        "cpu_count": os.cpu_count(), "python": sys.version.split()[0], "torch": torch.__version__,
        "platform": platform.platform(), "model_load_s": load_s, "sugarcrepe_source": sc_source,
        "aro_fixture": {"images": args.images, "boxes_per_image": args.boxes_per_image,
                        "cases_per_file": args.aro_cases},
        "results": results, "total_s": time.perf_counter() - t0,
    }
    print(f"{'group':<11} {'cases':>5} {'uniq img':>8} {'uniq cap':>8} {'batched s':>9} {'naive s':>8} "
          f"{'img/s b|n':>12} {'cap/s b|n':>12} {'speed-up':>8}  parity")
    for name, r in results.items():
        print(f"{name:<11} {r['cases']:>5} {r['unique_images_encoded_batched']:>8} "
              f"{r['unique_captions_encoded_batched']:>8} {r['batched_s']:>9.1f} {r['naive_s']:>8.1f} "
              f"{r['batched_images_per_s']:>5.1f}|{r['naive_images_per_s']:<6.1f} "
              f"{r['batched_captions_per_s']:>5.1f}|{r['naive_captions_per_s']:<6.1f} {r['speedup']:>7.2f}x  "
              f"max diff {r['parity']['max_abs_score_diff']:.1e}, same decisions {r['parity']['decisions_identical']}")
    print(f"total {report['total_s']:.0f} s (model load {load_s:.1f} s); {sc_source}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")
        print(f"wrote {args.out}")
    return report


if __name__ == "__main__":
    main()
