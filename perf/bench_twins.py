"""Time the batched evaluation engine against the reference-style loop on every toy twin of ``evaluate.benchmarks``.

Setup (not timed against each other): a world with only the test splits the twins read (``vg_test``,
``coco_test``, ``flickr_test``; sizes of params.yaml, times ``--scale``) is generated into a temporary folder,
then every twin of ``benchmarks.twins`` is built there by the ``benchmarks`` stage's own code
(``vlcomp.profiles.toy.benchmarks.build_benchmarks``; for ``--scale`` < 1 the twins' size options are scaled down too), and the inputs are read
back from its manifest. The scorer is the toy ``toy-rn16`` (random init, or ``--checkpoint models/base``) behind
``toy_scorer``, with the world tokenizer.

Per benchmark its task (or list of tasks: retrieval is the clean task plus every text and image shuffle) is
prepared once, then scored ``--repeats`` times each way:

(a) batched: ``score_task(scorer, tasks)`` - every unique image and caption of a task encoded once, in batches.
    A fresh call per benchmark (no feature cache shared across benchmarks; the evaluate stage shares one, so
    the script also times one ``run_benchmarks`` pass over all of them, as ``evaluate@<model>`` scores).
(b) naive: ``naive_task(scorer, tasks)`` - one item at a time, as the reference scripts score.

Decisions are compared with the rule of ``tests/eval/helpers.py::assert_tables_match``: float columns within
1e-5; every other column identical on the rows that are not near ties (two score columns within 2e-5). Items:
choice items, retrieval captions (queries; summed over the shuffled tasks), classified images.

    .venv/bin/python perf/bench_twins.py --out perf/results/bench_twins.json
    .venv/bin/python perf/bench_twins.py --scale 0.05 --repeats 1 --out /tmp/bench_twins.json   # quick check
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402

from vlcomp.benchmarks import BENCHMARKS, run_benchmarks  # noqa: E402
from vlcomp.config import load_params, section  # noqa: E402
from vlcomp.eval.engine import (  # noqa: E402
    ClassificationTask,
    RetrievalTask,
    as_tasks,
    naive_task,
    retrieval_scores,
    score_task,
)
from vlcomp.eval.parity import near_tie_rows  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO_ROOT / "perf" / "results" / "bench_twins.json"
#: The world splits the twins read (never the training splits).
TWIN_SPLITS = ("vg_test", "coco_test", "flickr_test")
#: Twin options that are sizes (scaled with ``--scale`` < 1); ``vga_min_count`` is the VG-A macro's floor,
#: scaled with the number of VG-A cases.
SIZE_OPTIONS = frozenset({"items_per_subset", "images_per_class", "n_per_instrument", "items_per_file",
                          "replace_att_items", "replace_rel_items", "n_items", "vga_min_count"})
ATOL = 1e-5


# --------------------------------------------------------------------------- setup


def scaled_params(params: dict, scale: float) -> dict:
    """params.yaml with the twins' test splits (and, for ``scale`` < 1, the twins' size options) scaled."""
    params = copy.deepcopy(params)
    splits = params["world"]["splits"]
    for name in TWIN_SPLITS:
        splits[name]["n_images"] = max(1, round(splits[name]["n_images"] * scale))
    if scale < 1:  # also one ARO perturbation seed: the shuffled retrieval tasks multiply the naive loop's cost
        for key in ("order_seeds", "shuffle_seeds"):
            params["benchmarks"][key] = max(1, round(params["benchmarks"].get(key, 1) * scale))
        twins = params["benchmarks"]["twins"]
        for twin, opts in twins.items():
            twins[twin] = {k: (max(size_floor(twin, k, opts), round(v * scale))
                               if k in SIZE_OPTIONS and isinstance(v, int) else v)
                           for k, v in (opts or {}).items()}
    return params


def size_floor(twin: str, key: str, options: dict) -> int:
    """The smallest value a twin accepts for a size option (CREPE: one item per complexity)."""
    if twin == "crepe_negate" and key == "n_items":
        from vlcomp.twins.crepe import DEFAULTS

        return len(options.get("complexities", DEFAULTS["complexities"]))
    return 1


def build_inputs(params: dict, names: list[str], root: Path) -> tuple[dict, dict]:
    """World (test splits only) and every twin under ``root``; the evaluation inputs and the setup's record."""
    from vlcomp.eval.inputs import read_manifest
    from vlcomp.profiles.toy.benchmarks import build_benchmarks
    from vlcomp.world import world_configs
    from vlcomp.world.generate import generate_world

    seed = section(params, "root_seed")
    wcfg, ccfg, specs = world_configs(params)
    specs = [s for s in specs if s.name in TWIN_SPLITS]
    t = time.perf_counter()
    generate_world(specs, wcfg, ccfg, seed, root / "world", workers=1)
    world_s = time.perf_counter() - t
    t = time.perf_counter()
    (root / "benchmarks").mkdir()
    manifest = build_benchmarks(params, root / "world", root / "benchmarks", names)
    twins_s = time.perf_counter() - t
    setup = {"world_splits": {s.name: s.n_images for s in specs}, "twin_options": params["benchmarks"]["twins"],
             "order_seeds": params["benchmarks"].get("order_seeds"),
             "shuffle_seeds": params["benchmarks"].get("shuffle_seeds"),
             "world_s": round(world_s, 2), "twins_s": round(twins_s, 2), "twin_counts": manifest["twin_counts"]}
    return read_manifest(root / "benchmarks", seed=seed), setup


def make_scorer(checkpoint: Path | None, seed: int):
    from vlcomp.models.factory import ModelSpec, create_model
    from vlcomp.models.scorers import toy_scorer
    from vlcomp.text.tokenizer import WorldTokenizer

    if checkpoint is not None:
        weights = checkpoint / "model.pt" if checkpoint.is_dir() else checkpoint
        if not weights.is_file():
            raise SystemExit(f"--checkpoint {checkpoint}: no model.pt (run the pretrain stage first)")
        model, label = create_model(ModelSpec("toy-rn16", str(weights))), f"toy-rn16 ({weights})"
    else:
        model, label = create_model(ModelSpec("toy-rn16"), init_seed=seed), f"toy-rn16 (random init, seed {seed})"
    return toy_scorer("bench", model, WorldTokenizer(32)), label


# --------------------------------------------------------------------------- counting and comparing


def task_counts(tasks: list) -> dict:
    """Items, distinct images / captions of the task list, and the encoder calls each engine makes (per item:
    batched per task - a fresh cache per task, so shuffled retrieval tasks re-encode; naive per item)."""
    items = b_img = b_txt = n_img = n_txt = 0
    images: set = set()
    captions: set = set()
    for t in tasks:
        if isinstance(t, RetrievalTask):
            keys, texts = list(t.image_keys), list(t.texts)
            items += len(texts)
            n_img, n_txt = n_img + len(keys), n_txt + len(texts)
        elif isinstance(t, ClassificationTask):
            keys = list(t.image_keys)
            texts = [p for ps in t.templates for row in t.prompts(ps) for p in row]
            items += len(keys)
            n_img, n_txt = n_img + len(keys), n_txt + len(texts)
        else:
            keys = list(t.image_keys) + [k for ks in t.controls.values() for k in ks]
            texts = [c for caps in t.captions for c in caps]
            n, k, c = len(t.image_keys), len(t.captions[0]), len(t.controls)
            items += n
            n_img += n * (1 + c)
            n_txt += n * k * (1 + c) + 2 * n * len(t.text_pairs)
        b_img, b_txt = b_img + len(set(keys)), b_txt + len(set(texts))
        images |= set(keys)
        captions |= set(texts)
    return {"tasks": len(tasks), "items": items, "unique_images": len(images), "unique_captions": len(captions),
            "images_encoded_batched": b_img, "captions_encoded_batched": b_txt,
            "images_encoded_naive": n_img, "captions_encoded_naive": n_txt}


def _same(a: pd.Series, b: pd.Series) -> np.ndarray:
    """Row-wise equality (missing values equal to missing values)."""
    a, b = a.reset_index(drop=True), b.reset_index(drop=True)
    return ((a == b) | (a.isna() & b.isna())).to_numpy(dtype=bool)


def retrieval_matrix_ties(scorer, tasks: list, atol: float = ATOL) -> dict[str, np.ndarray]:
    """Per retrieval table (rows in ``score_task``'s concatenation order), the rows whose decision lies within
    float rounding in the task's batched score matrix: another candidate within ``2 * atol`` of the ground
    truth's score, or of the top score. A retrieval table holds no ``score_*`` columns, so the near-tie rule of
    :func:`near_tie_rows` cannot see those; this applies the same rule to the matrix row (diagnostic only)."""
    masks: dict[str, list[np.ndarray]] = {}
    for t in tasks:
        if not isinstance(t, RetrievalTask):
            continue
        view = t.scorer_view(scorer) if t.scorer_view is not None else scorer
        sim, _, _ = retrieval_scores(view, t.image_keys, t.texts, t.load_image)
        n_img, n_txt = sim.shape
        cols = np.arange(n_txt)
        own = np.zeros(sim.shape, dtype=bool)
        own[t.text_to_image, cols] = True
        gt = sim[t.text_to_image, cols]
        best = np.full(n_img, -np.inf)
        np.maximum.at(best, t.text_to_image, gt)
        top2_t = -np.sort(-sim, axis=0)[:2]  # per caption: the two best images
        top2_i = -np.sort(-sim, axis=1)[:, :2]  # per image: the two best captions
        near_t = ((np.abs(sim - gt[None, :]) <= 2 * atol) & ~own).any(axis=0)
        near_t |= (top2_t[0] - top2_t[1] <= 2 * atol) if n_img > 1 else False
        near_i = ((np.abs(sim - best[:, None]) <= 2 * atol) & ~own).any(axis=1)
        near_i |= (top2_i[:, 0] - top2_i[:, 1] <= 2 * atol) if n_txt > 1 else False
        for name, df in t.finish(t.image_meta, t.text_meta, sim, sim).items():
            mask = near_i if name.endswith("_i2t") else near_t if name.endswith("_t2i") else np.zeros(len(df), bool)
            masks.setdefault(name, []).append(mask if len(mask) == len(df) else np.zeros(len(df), bool))
    return {k: np.concatenate(v) for k, v in masks.items()}


def compare_tables(batched: dict, naive: dict, atol: float = ATOL, matrix_ties: dict | None = None) -> dict:
    """The rule of ``assert_tables_match``, reported instead of asserted: float columns within ``atol`` (rtol
    1e-7, as ``assert_allclose``), every other column identical on the rows that are not near ties. With
    ``matrix_ties`` (retrieval) also how many differing rows are near ties of the score matrix.
    ``differing_rows_any`` counts rows with any non-float difference, near ties included (REPLACE / SWAP score
    ``c_n`` twice by construction, so the rule marks every row a near tie and checks none of their decisions)."""
    out = {"decisions_identical": True, "floats_within_atol": True, "max_abs_float_diff": 0.0,
           "near_tie_rows": 0, "differing_rows": 0, "differing_rows_any": 0, "differences": []}
    if matrix_ties is not None:
        out["differing_rows_matrix_near_ties"] = 0
    if batched.keys() != naive.keys():
        out.update(decisions_identical=False, floats_within_atol=False,
                   differences=[f"tables differ: {sorted(batched)} vs {sorted(naive)}"])
        return out
    for t, df in batched.items():
        ref = naive[t]
        if list(df.columns) != list(ref.columns) or len(df) != len(ref):
            out["decisions_identical"] = out["floats_within_atol"] = False
            out["differences"].append(f"{t}: columns or lengths differ")
            continue
        near = near_tie_rows(df, atol) | near_tie_rows(ref, atol)
        out["near_tie_rows"] += int(near.sum())
        bad, bad_any = np.zeros(len(df), dtype=bool), np.zeros(len(df), dtype=bool)
        for col in df.columns:
            if pd.api.types.is_float_dtype(df[col]):
                a, b = df[col].to_numpy(dtype=np.float64), ref[col].to_numpy(dtype=np.float64)
                both = np.isfinite(a) & np.isfinite(b)
                ok = np.isclose(a, b, rtol=1e-7, atol=atol, equal_nan=True)
                if both.any():
                    out["max_abs_float_diff"] = max(out["max_abs_float_diff"], float(np.abs(a - b)[both].max()))
                if not ok.all():
                    out["floats_within_atol"] = False
                    out["differences"].append(f"{t}.{col}: {int((~ok).sum())} values beyond {atol:g}")
            else:
                strict = ~_same(df[col], ref[col])
                bad_any |= strict
                diff = strict & ~near
                if diff.any():
                    out["decisions_identical"] = False
                    out["differences"].append(f"{t}.{col}: {int(diff.sum())} rows differ (not near ties)")
                    bad |= diff
        out["differing_rows"] += int(bad.sum())
        out["differing_rows_any"] += int(bad_any.sum())  # near ties included: what the rule lets through
        if matrix_ties is not None and t in matrix_ties and len(matrix_ties[t]) == len(df):
            out["differing_rows_matrix_near_ties"] += int((bad & matrix_ties[t]).sum())
    return out


# --------------------------------------------------------------------------- timing


def timed_runs(fn, repeats: int) -> tuple[dict, list[float]]:
    """``repeats`` calls of ``fn``; the last output and every call's seconds."""
    out, runs = None, []
    for _ in range(repeats):
        out = None
        gc.collect()
        t = time.perf_counter()
        out = fn()
        runs.append(time.perf_counter() - t)
    return out, runs


def bench_one(name: str, scorer, inputs: dict, repeats: int, naive: bool) -> dict:
    bench = BENCHMARKS.get(name)
    t = time.perf_counter()
    tasks = as_tasks(bench.prepare(inputs))
    prepare_s = time.perf_counter() - t
    row = {"benchmark": name, **task_counts(tasks), "prepare_s": round(prepare_s, 3)}
    batched, b_runs = timed_runs(lambda: score_task(scorer, tasks), repeats)
    row |= {"batched_s": statistics.median(b_runs), "batched_runs_s": [round(s, 4) for s in b_runs]}
    row["batched_items_per_s"] = row["items"] / row["batched_s"]
    if not naive:
        row |= {"naive_skipped": True, "naive_s": None, "naive_runs_s": None, "naive_items_per_s": None,
                "speedup": None, "parity": None}
        return row
    ref, n_runs = timed_runs(lambda: naive_task(scorer, tasks), repeats)
    row |= {"naive_skipped": False, "naive_s": statistics.median(n_runs), "naive_runs_s": [round(s, 4) for s in n_runs]}
    row["naive_items_per_s"] = row["items"] / row["naive_s"]
    row["speedup"] = row["naive_s"] / row["batched_s"]
    row["parity"] = compare_tables(batched, ref)
    if not row["parity"]["decisions_identical"] and any(isinstance(t, RetrievalTask) for t in tasks):
        row["parity"] = compare_tables(batched, ref, matrix_ties=retrieval_matrix_ties(scorer, tasks))
    return row


def machine() -> dict:
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu_model": cpu, "cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(),
            "torch": torch.__version__, "python": sys.version.split()[0], "platform": platform.platform(),
            "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "loadavg_start": _loadavg()}


def _loadavg() -> list[float] | None:
    """1/5/15-minute load averages (the machine may be shared: read the timings against them)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def print_table(rows: list[dict], totals: dict) -> None:
    print(f"{'benchmark':<17} {'tasks':>5} {'items':>7} {'uniq img':>8} {'uniq cap':>8} {'batched s':>9} "
          f"{'naive s':>8} {'speed-up':>8} {'items/s b|n':>15}  {'same':>5} {'ties':>4}")
    for r in rows:
        if r["naive_skipped"]:
            naive, speed, rate_n, same, ties = "skipped", "-", "-", "-", "-"
        else:
            naive, speed = f"{r['naive_s']:.2f}", f"{r['speedup']:.1f}x"
            rate_n, same, ties = f"{r['naive_items_per_s']:.0f}", str(r["parity"]["decisions_identical"]), \
                str(r["parity"]["near_tie_rows"])
        print(f"{r['benchmark']:<17} {r['tasks']:>5} {r['items']:>7} {r['unique_images']:>8} "
              f"{r['unique_captions']:>8} {r['batched_s']:>9.2f} {naive:>8} {speed:>8} "
              f"{r['batched_items_per_s']:>7.0f}|{rate_n:<7}  {same:>5} {ties:>4}")
    print(f"total batched {totals['batched_s']:.1f} s (fresh call per benchmark; one shared-cache run_benchmarks "
          f"pass as evaluate@<model>: {totals['run_benchmarks_s']:.1f} s; model load {totals['model_load_s']:.1f} s)")
    if totals["naive_benchmarks"]:
        print(f"total naive {totals['naive_s']:.1f} s vs batched {totals['batched_s_same_benchmarks']:.1f} s on the "
              f"{len(totals['naive_benchmarks'])} benchmarks timed both ways "
              f"({totals['naive_s'] / totals['batched_s_same_benchmarks']:.1f}x)")
    if totals["naive_skipped"]:
        print(f"naive loop skipped (--skip-naive): {', '.join(totals['naive_skipped'])}")
    for r in rows:
        if r["parity"] and r["parity"]["differences"]:
            ties = r["parity"].get("differing_rows_matrix_near_ties")
            why = "" if ties is None else (f" [{ties} of the {r['parity']['differing_rows']} differing rows are near "
                                           f"ties (<= {2 * ATOL:g}) in the batched score matrix]")
            print(f"  {r['benchmark']}: " + "; ".join(r["parity"]["differences"][:6]) + why)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--params", type=Path, default=REPO_ROOT / "params.yaml")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiply the test splits' sizes (and, below 1, the twins' size options)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per engine and benchmark (median reported)")
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    ap.add_argument("--checkpoint", type=Path, default=None,
                    help="a pipeline model folder with model.pt (models/base) instead of the random init")
    ap.add_argument("--benchmarks", nargs="+", default=None, help="a subset (default: evaluate.benchmarks)")
    ap.add_argument("--skip-naive", nargs="+", default=[], metavar="BENCH",
                    help="benchmarks timed batched only (the naive retrieval loop takes minutes at full size)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    if args.scale <= 0 or args.repeats < 1 or args.threads < 1:
        ap.error("--scale must be > 0, --repeats and --threads >= 1")

    torch.set_num_threads(args.threads)
    from vlcomp.eval.inputs import evaluation_benchmarks

    t_start = time.perf_counter()
    host = machine()
    params = scaled_params(load_params(args.params), args.scale)
    all_names = evaluation_benchmarks(params)
    names = args.benchmarks or all_names
    unknown = sorted(set(names + args.skip_naive) - set(all_names))
    if unknown:
        ap.error(f"not in evaluate.benchmarks of {args.params}: {unknown}")
    seed = section(params, "root_seed")

    t = time.perf_counter()
    scorer, model_label = make_scorer(args.checkpoint, seed)
    from PIL import Image

    scorer.encode_images([Image.new("RGB", (48, 48))]), scorer.encode_texts(["warm up"])  # first-call costs
    load_s = time.perf_counter() - t

    with tempfile.TemporaryDirectory(prefix="bench_twins_") as tmp:
        inputs, setup = build_inputs(params, names, Path(tmp))
        print(f"world {setup['world_splits']} in {setup['world_s']:.0f} s, twins in {setup['twins_s']:.0f} s",
              flush=True)
        rows = []
        for name in names:
            row = bench_one(name, scorer, inputs, args.repeats, naive=name not in args.skip_naive)
            rows.append(row)
            naive = "skipped" if row["naive_skipped"] else f"{row['naive_s']:.2f} s ({row['speedup']:.1f}x)"
            print(f"  {name}: {row['items']} items, batched {row['batched_s']:.2f} s, naive {naive}", flush=True)
        gc.collect()
        t = time.perf_counter()
        _, per_bench = run_benchmarks(scorer, names, inputs, timings=True)
        shared_s = time.perf_counter() - t

    timed_both = [r for r in rows if not r["naive_skipped"]]
    totals = {"batched_s": sum(r["batched_s"] for r in rows),
              "run_benchmarks_s": shared_s, "run_benchmarks_per_benchmark_s": per_bench,
              "model_load_s": load_s,
              "naive_benchmarks": [r["benchmark"] for r in timed_both],
              "naive_s": sum(r["naive_s"] for r in timed_both),
              "batched_s_same_benchmarks": sum(r["batched_s"] for r in timed_both),
              "naive_skipped": [r["benchmark"] for r in rows if r["naive_skipped"]],
              "below_3x": [r["benchmark"] for r in timed_both if r["speedup"] < 3],
              "decisions_differ": [r["benchmark"] for r in timed_both if not r["parity"]["decisions_identical"]],
              "wall_s": time.perf_counter() - t_start}
    report = {
        "machine": host | {"loadavg_end": _loadavg()}, "model": model_label,
        "scorer": {"image_batch": scorer.image_batch, "text_batch": scorer.text_batch},
        "command": " ".join([Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])]),
        "scale": args.scale, "repeats": args.repeats, "atol": ATOL, "setup": setup,
        "items_definition": "choice items; retrieval captions (queries) summed over the clean and shuffled tasks; "
                            "classified images",
        "rows": rows, "totals": totals,
    }
    print_table(rows, totals)
    print(f"wall {totals['wall_s']:.0f} s")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2, default=float) + "\n")
        print(f"wrote {args.out}")
    return report


if __name__ == "__main__":
    main()
