"""A fake workspace for the Hard Positives report tests: params with the paper's methods (and the shared rows of ARO
and TSVLC), metrics trees whose REPLACE / SWAP item tables are written from per-item *patterns* (so every number is
known by hand), the twins' pair files with tiny images, a generator summary and a blind reader.

Patterns (raw cosines, plus a per-method offset that moves all three scores and keeps their order):

====  ======  ======  ======  =====  =====  ========
name  s(c)    s(c_n)  s(c_p)  Orig   Aug    brittle
====  ======  ======  ======  =====  =====  ========
A     0.50    0.30    0.45    yes    yes    no
B     0.50    0.40    0.30    yes    no     yes (c > c_n > c_p)
C     0.30    0.40    0.50    no     no     yes (c_p > c_n > c)
D     0.30    0.50    0.35    no     no     no
E     0.40    0.40    0.45    no     no     no  (a tie: s(c) = s(c_n))
====  ======  ======  ======  =====  =====  ========

A model's part is a string of 10 pattern letters (item i has pattern ``s[i]``); on chain ``b<k>`` the first ``k``
D's become A's. So with counts a, b, c, d, e of a part: Orig = (a + b) / 10, Aug = a / 10, Brittleness =
(b + c) / 10, Aug - Orig = -b / 10, mean s(c) = (0.5 (a + b) + 0.3 (c + d) + 0.4 e) / 10 + offset.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from vlcomp.benchmarks.hardpos import aggregate_hardpos
from vlcomp.formats import hardpos as hp_format
from vlcomp.formats.hardpos import HardPositiveCase

PATTERNS = {"A": (0.50, 0.30, 0.45), "B": (0.50, 0.40, 0.30), "C": (0.30, 0.40, 0.50), "D": (0.30, 0.50, 0.35),
            "E": (0.40, 0.40, 0.45)}
N = 10
BASES = (0, 1, 2)
PARTS = ("replace_att", "replace_rel", "swap")

LABELS = {"hn_only": "Our HN", "hp_hn": "Our HP+HN", "hp_hn_swap": "Our HP+HN (Swap-only)",
          "hp_hn_replace": "Our HP+HN (Replace-only)", "hp_only": "0 HN", "hp_hn_w25": "0.25 HN",
          "hp_hn_w50": "0.50 HN", "hp_hn_w75": "0.75 HN"}
W_HN = {"hp_hn": 1.0, "hp_hn_w25": 0.25, "hp_hn_w50": 0.5, "hp_hn_w75": 0.75, "hp_only": 0.0, "hn_only": 1.0,
        "hp_hn_swap": 1.0, "hp_hn_replace": 1.0}
THREE = ("clip_ft", "negclip", "tsvlc_rbllm", "tsvlc_combined", "hn_only", "hp_hn")
ONE = ("hp_hn_swap", "hp_hn_replace", "hp_only", "hp_hn_w25", "hp_hn_w50", "hp_hn_w75")

#: Per method: the pattern strings of replace_att, replace_rel, swap on chain b0.
STRINGS: dict[str, tuple[str, str, str]] = {
    "clip": ("ADADBCABCD", "AABBCCDDDA", "DACBADABCD"),
    "negclip": ("AABBBCDDAA", "AABBBCDDAA", "AABBBCDDAE"),
    "tsvlc_rbllm": ("ABBBABDCAD", "ABBBCADDAA", "ABBADABCAD"),
    "tsvlc_combined": ("AAAABBCDDD", "AAAABBCDDD", "AAAABBCDDD"),
    "hn_only": ("AAAAABBCDD", "AAAAABBCDD", "AAAAABBCDD"),
    "hp_hn": ("AAAAAABCDD", "AAAAAABCDD", "AAAAAABCDD"),
    "clip_ft": ("AAABBCCDDD", "AAABBCCDDD", "AAABBCCDDD"),
    "hp_hn_swap": ("AAAABBCCDD", "AAAABBCCDD", "AAAAAAABCD"),
    "hp_hn_replace": ("AAAAAAABCD", "AAAAAAABCD", "AAAABBCCDD"),
    "hp_only": ("AAABCDDDDD", "AAABCDDDDD", "AAABCDDDDD"),
    "hp_hn_w25": ("AAAABCDDDD", "AAAABCDDDD", "AAAABCDDDD"),
    "hp_hn_w50": ("AAAAABCDDD", "AAAAABCDDD", "AAAAABCDDD"),
    "hp_hn_w75": ("AAAAABBCDD", "AAAAABBCDD", "AAAAABBCDD"),
}
OFFSET = {"negclip": -0.02, "tsvlc_rbllm": -0.04, "tsvlc_combined": -0.01, "hn_only": -0.03, "hp_hn": -0.005,
          "clip_ft": -0.01}

# the twins' captions: attributes (6 sizes, 4 colours), relations (3 synonyms 'above', 2 'next to', 3 converses
# 'to the left of', 2 'inside'), SWAP
ATT = [("large red circle", "small red circle", "big red circle")] * 4 + \
      [("small blue square", "large blue square", "little blue square")] * 2 + \
      [("large purple star", "large green star", "large violet star")] * 4
REL = [("red circle above blue square", "red circle below blue square", "red circle over blue square")] * 3 + \
      [("red circle next to blue square", "red circle in front of blue square", "red circle beside blue square")] * 2 + \
      [("red circle to the left of blue square", "red circle above blue square",
        "blue square to the right of red circle")] * 3 + \
      [("yellow star inside red circle", "yellow star covering red circle", "red circle surrounding yellow star")] * 2
SWAP = [("the red circle and the blue square", "the blue circle and the red square",
         "the blue square and the red circle")] * N
TWIN_CAPTIONS = {"replace_att": ATT, "replace_rel": REL, "swap": SWAP}
FREQ = {"large": 4, "small": 2, "purple": 4, "above": 3, "next to": 2, "to the left of": 3, "inside": 2}

ZS_KEYS = ("zeroshot/imagenet/acc", "zeroshot/imagenet/acc5", "retrieval/coco/t2i/recall_at_1",
           "retrieval/coco/i2t/recall_at_1", "retrieval/flickr30k/t2i/recall_at_1",
           "retrieval/flickr30k/i2t/recall_at_1", "zeroshot/elevater/mean_acc", "zeroshot/elevater/mean_acc5")
ZS_BASE = {"clip": 0.30, "clip_ft": 0.40, "hn_only": 0.42, "hp_hn": 0.425, "negclip": 0.35, "tsvlc_rbllm": 0.33,
           "tsvlc_combined": 0.34}


def pattern_string(method: str, part: str, k: int, strings: dict | None = None) -> str:
    s = list((strings or STRINGS)[method][PARTS.index(part)])
    flipped = 0
    for i, ch in enumerate(s):
        if ch == "D" and flipped < k:
            s[i] = "A"
            flipped += 1
    return "".join(s)


def counts(method: str, part: str, k: int) -> dict[str, int]:
    s = pattern_string(method, part, k)
    return {p: s.count(p) for p in "ABCDE"}


def by_hand(method: str, part: str, k: int) -> dict[str, float]:
    """The metrics of a part by the pattern formulas (``replace``: the two REPLACE parts pooled)."""
    parts = ("replace_att", "replace_rel") if part == "replace" else (part,)
    c = {p: sum(counts(method, q, k)[p] for q in parts) for p in "ABCDE"}
    n = N * len(parts)
    o = OFFSET.get(method, 0.0)
    return {"orig": (c["A"] + c["B"]) / n, "aug": c["A"] / n, "brittleness": (c["B"] + c["C"]) / n,
            "delta": -c["B"] / n, "mean_s_c": (0.5 * (c["A"] + c["B"]) + 0.3 * (c["C"] + c["D"]) + 0.4 * c["E"]) / n + o,
            "mean_s_n": (0.3 * c["A"] + 0.4 * (c["B"] + c["C"] + c["E"]) + 0.5 * c["D"]) / n + o,
            "mean_s_p": (0.45 * (c["A"] + c["E"]) + 0.3 * c["B"] + 0.5 * c["C"] + 0.35 * c["D"]) / n + o,
            "ties": c["E"]}


def item_table(method: str, table: str, k: int, strings: dict | None = None, offset: float | None = None
               ) -> pd.DataFrame:
    """A model's item table from its pattern strings (default :data:`STRINGS`; any length, captions cycle)."""
    rows = []
    parts = ("replace_att", "replace_rel") if table == "replace" else ("swap",)
    o = OFFSET.get(method, 0.0) if offset is None else offset
    for part in parts:
        s = pattern_string(method, part, k, strings)
        for i, ch in enumerate(s):
            c, n, p = (x + o for x in PATTERNS[ch])
            cap, neg, pos = TWIN_CAPTIONS[part][i % N]
            row = {"part": part, "index": i, "caption": cap, "positive": pos, "negative": neg}
            if table == "replace":
                row |= {"image_path": f"data/VG_100K/img{i:02d}.png", "image_id": f"vg_test/{i:06d}"}
            else:
                row |= {"image_path": f"vg{i:02d}.png", "bbox_x": 2, "bbox_y": 2, "bbox_w": 8, "bbox_h": 8}
            row |= {"s_n": n, "s_c": c, "s_n_swapped": n, "s_p": p}
            rows.append(row)
    df = pd.DataFrame(rows)
    o = hp_format.outcomes(df["s_c"].to_numpy(), df["s_n"].to_numpy(), df["s_p"].to_numpy(),
                           df["s_n_swapped"].to_numpy())
    return df.assign(orig=o["orig"], aug=o["aug"], brittle=o["brittle"])


def metrics_of(method: str, k: int, tables: dict[str, pd.DataFrame]) -> dict[str, float]:
    m: dict[str, float] = {}
    for t, df in tables.items():
        m |= aggregate_hardpos({t: df}, t)
    z = ZS_BASE.get(method, 0.3) + 0.01 * k
    m |= {key: z + 0.1 * ("acc5" in key) for key in ZS_KEYS}
    return m


def write_model(root: Path, name: str, method: str, k: int, seed: int | None, base: str | None = None,
                hardpos: bool = True, strings: dict | None = None, offset: float | None = None,
                extra: dict[str, float] | None = None) -> None:
    folder = root / name
    (folder / "items").mkdir(parents=True)
    tables = {t: item_table(method, t, k, strings, offset) for t in ("replace", "swap")} if hardpos else {}
    for t, df in tables.items():
        df.to_parquet(folder / "items" / f"{t}.parquet", index=False)
    metrics = metrics_of(method, k, tables) if hardpos else {"vlchecklist/object/avg": 0.5}
    metrics |= extra or {}
    (folder / "metrics.json").write_text(json.dumps(metrics))
    (folder / "provenance.json").write_text(json.dumps({"model": name, "method": method, "base": base or f"b{k}",
                                                        "seed": seed, "profile": "toy",
                                                        "dvc_stage": f"evaluate@{name}"}))


def params() -> dict:
    methods = {"clip_ft": {"paper": "aro", "label": "CLIP-FT", "generator": "negclip", "loss": "clip"},
               "negclip": {"paper": "aro", "label": "NegCLIP", "generator": "negclip", "loss": "negclip"},
               "tsvlc_rbllm": {"paper": "tsvlc", "label": "RB+LLM Negs"},
               "tsvlc_combined": {"paper": "tsvlc", "label": "Combined"},
               "tsvlc_vit_rbllm": {"paper": "tsvlc", "label": "ViT: RB+LLM Negs", "base_model": "vit"}}
    gen = {"hp_hn_swap": "hardpos_swap", "hp_hn_replace": "hardpos_replace"}
    for m, label in LABELS.items():
        spec = {"paper": "hard_positives", "label": label, "generator": gen.get(m, "hardpos"), "loss": "hardpos",
                "batch": {"rows": "all", "negatives": 0 if m == "hp_only" else 1, "positives": 0 if m == "hn_only" else 1}}
        if W_HN[m] != 1.0:
            spec["loss_weights"] = {"negatives_loss": W_HN[m]}
        methods[m] = spec
    variants = {f"{m}-b{k}s0": {"method": m, "base": f"b{k}", "seed": 0} for m in THREE for k in BASES}
    variants |= {f"{m}-b0s0": {"method": m, "base": "b0", "seed": 0} for m in ONE}
    variants["tsvlc_vit_rbllm-vit-b0s0"] = {"method": "tsvlc_vit_rbllm", "base": "vit-b0", "seed": 0}
    seeds = {m: [0] for m in THREE} | {m: {"seeds": [0], "chains": "first"} for m in (*ONE, "tsvlc_vit_rbllm")}
    return {"profile": "toy", "root_seed": 0, "base_seeds": list(BASES),
            "bases": {f"b{k}": {"seed": k} for k in BASES} | {"vit-b0": {"seed": 0, "family": "vit",
                                                                           "arch": "toy-vit-p8"}},
            "base_models": {"vit": {"arch": "toy-vit-p8"}, "cyclip": {"loss": "cyclip"}},
            "clip": {"arch": "toy-rn16"}, "world": {"captions": {"synonyms": "extended"}},
            "methods": methods, "variants": variants, "seeds": seeds,
            "mine": {"negclip": {"split": "coco_train"}, "hardpos": {"split": "coco_train", "synonyms": "extended"},
                     "hardpos_swap": {"generator": "hardpos", "split": "coco_train", "types": ["swap"]},
                     "hardpos_replace": {"generator": "hardpos", "split": "coco_train", "types": ["replace"]}},
            "mining": {"hardpos": {"generator": "hardpos", "split": "coco_train", "input": "data/world"},
                       "hardpos_swap": {"generator": "hardpos_swap", "split": "coco_train", "input": "data/world"},
                       "hardpos_replace": {"generator": "hardpos_replace", "split": "coco_train",
                                           "input": "data/world"}},
            "blind": {"blind-text": {"split": "coco_train", "smoothing": 1.0}},
            "benchmarks": {"twins": {"hardpos": {"replace_att_items": N, "replace_rel_items": N}}},
            "papers": ["aro", "tsvlc", "hard_positives"]}


SUMMARY = {"n_captions": 100.0, "candidates/paper_swap_filter": 30.0, "candidates/swap": 20.0,
           "candidates/replace": 90.0, "candidates/both": 15.0, "candidates/none": 5.0, "chosen/swap": 12.0,
           "chosen/replace": 83.0, "chosen_when_both/swap": 7.0, "chosen_when_both/replace": 8.0,
           "rule/replace_synonym": 50.0, "rule/replace_converse": 33.0, "captions_with_positive": 95.0,
           "captions_with_negative": 98.0, "share_with_positive": 0.95, "share_with_negative": 0.98,
           "negatives/replace_att": 40.0, "negatives/swap_obj": 58.0, "negclip_collision/n_positives": 95.0,
           "negclip_collision/n_collide": 6.0, "negclip_collision/share": 6 / 95,
           "negclip_collision/share_swap": 0.5, "negclip_collision/share_replace": 0.0}


def write_twins(bench: Path) -> None:
    from PIL import Image

    root = bench / "hardpos"
    for part in ("replace_att", "replace_rel"):
        cases = [HardPositiveCase(i, f"data/VG_100K/img{i:02d}.png", c, p, n, image_id=f"vg_test/{i:06d}")
                 for i, (c, n, p) in enumerate(TWIN_CAPTIONS[part])]
        hp_format.write_replace(root, part, cases)
    records = [{"image_path": f"vg{i:02d}.png", "bbox_x": 2, "bbox_y": 2, "bbox_w": 8, "bbox_h": 8,
                "true_caption": c, "false_caption": n, "attributes": ["red", "blue"]} for i, (c, n, _) in enumerate(SWAP)]
    hp_format.write_swap(root, records, [p for _, _, p in SWAP])
    (root / "data" / "VG_100K").mkdir(parents=True, exist_ok=True)
    (bench / "aro" / "images").mkdir(parents=True)
    for i in range(N):
        colour = (20 * i, 100, 200)
        Image.new("RGB", (8, 8), colour).save(root / "data" / "VG_100K" / f"img{i:02d}.png")
        Image.new("RGB", (16, 16), colour).save(bench / "aro" / "images" / f"vg{i:02d}.png")
    (bench / "manifest.json").write_text(json.dumps({
        "inputs": {"hard_positives_dir": "hardpos", "aro_images": "aro/images"},
        "twin_counts": {"hardpos/replace/n_images": N}}))


def build(root: Path) -> Path:
    """The whole workspace under ``root``: metrics/, params.yaml, benchmarks/, mined/."""
    metrics = root / "metrics"
    for k in BASES:
        write_model(metrics, f"clip-b{k}", "clip", k, None)
        for m in THREE:
            write_model(metrics, f"{m}-b{k}s0", m, k, 0)
    for m in ONE:
        write_model(metrics, f"{m}-b0s0", m, 0, 0)
    write_model(metrics, "clip-vit-b0", "clip_vit", 0, None, "vit-b0", hardpos=False)  # no REPLACE / SWAP
    write_model(metrics, "tsvlc_vit_rbllm-vit-b0s0", "tsvlc_vit_rbllm", 0, 0, "vit-b0", hardpos=False)
    blind = metrics / "blind" / "blind-text"
    blind.mkdir(parents=True)
    (blind / "metrics.json").write_text(json.dumps({"hardpos/replace/orig": 0.55, "hardpos/replace/aug": 0.4,
                                                    "hardpos/replace/brittleness": 0.3,
                                                    "hardpos/replace/delta": -0.15, "hardpos/swap/orig": 0.5}))
    (blind / "provenance.json").write_text(json.dumps({"model": "blind-text", "profile": "toy",
                                                       "counts": {"split": "coco_train"}}))
    (root / "params.yaml").write_text(yaml.safe_dump(params()))
    write_twins(root / "benchmarks")
    for key in ("hardpos", "hardpos_swap"):  # hardpos_replace not run yet
        d = root / "mined" / key
        d.mkdir(parents=True)
        (d / "summary.json").write_text(json.dumps({f"mine/hardpos/{k}": v for k, v in SUMMARY.items()}))
    return root


def chain_stats(method: str, part: str, measure: str, ks=BASES) -> tuple[float, float]:
    """(mean, sample sd) over the chains of a by-hand metric."""
    xs = [by_hand(method, part, k)[measure] for k in ks]
    return float(np.mean(xs)), float(np.std(xs, ddof=1)) if len(xs) > 1 else float("nan")
