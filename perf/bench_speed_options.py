"""Issue 13 speed options under the CPU kernel pin: step times of pretraining, CLIP-FT and NegCLIP, and evaluation
image encoding, each side in its own worker process, interleaved unit by unit (1 thread each).

Sides differ in the kernel pin (``ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 MKL_CBWR=AVX2``, or none of it:
the CPU's best kernels) and in one option each: ``TrainConfig.precision="bf16"`` (bfloat16 towers, math
attention), ``TrainConfig.text_buckets=4`` (text batch in 4 length groups), and for evaluation
``OpenClipScorer(channels_last=True)``. All sides of a workload train on the same batches (same data, same seeds)
or encode the same images. The driver lets side 1 take one unit (a training step, or one batch of images), then
side 2, ..., round after round, so every side sees the same machine state; a unit is timed inside its worker (a
step: from its release to the loop's per-step log callback, so batch assembly, lookups, forward, loss, backward and
AdamW; an evaluation unit: preprocessing and encoding of one batch, timed separately).

    .venv/bin/python perf/bench_speed_options.py --workspace . --steps 25 --warmup 5 \
        --out perf/results/issue13_speed.json

``--workspace``: a workspace of a default run (data/world, data/mined/negclip-<base>, models/base/<base>,
models/lr/<method>-<base>, data/benchmarks; ``--base`` the chain, default b0
and its params.yaml). Writes medians per side, ratios against the pinned float32 side (and pinned vs unpinned), the
machine (CPU model, AVX-512 flags, torch), the 1-minute load average sampled every round, bitwise parity of
channels-last evaluation features, and the share of real tokens in the text batches with and without buckets.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PIN = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_CBWR": "AVX2"}

# side name -> (pinned, options); the first pinned fp32 side is every ratio's reference
TRAIN_SIDES = {
    "pinned fp32": (True, {}),
    "pinned bf16": (True, {"precision": "bf16"}),
    "pinned buckets4": (True, {"text_buckets": 4}),
    "pinned bf16+buckets4": (True, {"precision": "bf16", "text_buckets": 4}),
    "unpinned fp32": (False, {}),
    "unpinned bf16": (False, {"precision": "bf16"}),
}
EVAL_SIDES = {
    "pinned": (True, {"channels_last": False}),
    "pinned channels_last": (True, {"channels_last": True}),
    "unpinned": (False, {"channels_last": False}),
    "unpinned channels_last": (False, {"channels_last": True}),
}

WORKER = r"""
import json, sys, time
import torch
torch.set_num_threads(1)
from pathlib import Path
from dataclasses import replace
from vlcomp.config import load_params, section

ws, workload, steps, options = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
import os
BASE = os.environ.get("BENCH_BASE", "b0")  # the chain (--base)
params = load_params(ws / "params.yaml")
info = {"ready": True, "capability": torch.backends.cpu.get_cpu_capability(), "threads": torch.get_num_threads()}


def wait():
    line = sys.stdin.readline().strip()
    if line != "go":
        sys.exit(0)


def token_shares(sampler, tokenizer, rng, n_batches=20):
    # real tokens / tokens a trimmed encoder computes: one batch, and 4 length buckets
    from vlcomp.models.encode import length_buckets, text_lengths
    from vlcomp.train.loop import TextCache
    cache = TextCache(tokenizer, sampler.texts())
    real = one = four = 0
    for i, batch in enumerate(sampler.epoch(rng)):
        if i == n_batches:
            break
        lengths = text_lengths(cache(batch.all_texts()))
        real += int(lengths.sum())
        one += len(lengths) * int(lengths.max())
        four += sum(len(g) * int(lengths[g].max()) for g in length_buckets(lengths, 4))
    return {"real_over_one_batch": round(real / one, 4), "real_over_4_buckets": round(real / four, 4),
            "texts_per_batch": len(lengths)}


if workload == "eval_images":
    import glob
    from PIL import Image
    from vlcomp.io import read_json
    from vlcomp.models.factory import ModelSpec, create_model
    from vlcomp.models.scorers import toy_scorer
    from vlcomp.text.tokenizer import get_tokenizer
    meta = read_json(ws / "models/base" / BASE / "model.json")
    spec = ModelSpec(meta["arch"], str(ws / "models/base" / BASE / "model.pt"), meta["tokenizer"], meta["context_length"])
    batch = section(params, "evaluate.batch_size")
    files = sorted(glob.glob(str(ws / "data/benchmarks/**/*.png"), recursive=True))[::7][: 4 * batch]
    images = [Image.open(f).convert("RGB") for f in files]
    scorer = toy_scorer("bench", create_model(spec), get_tokenizer(spec.tokenizer, spec.arch, spec.context_length),
                        image_batch=batch, channels_last=options["channels_last"])
    parts = [images[s : s + batch] for s in range(0, len(images), batch)]
    with torch.no_grad():  # all images once: the features, for the bitwise comparison between sides
        feats = torch.cat([scorer.encode_image_tensor(scorer.preprocess_images(p)) for p in parts])
    torch.save(feats, sys.argv[5])
    info.update(images=len(images), batch=batch)
    print(json.dumps(info), flush=True)
    for i in range(steps):
        wait()
        t0 = time.perf_counter()
        x = scorer.preprocess_images(parts[i % len(parts)])
        t1 = time.perf_counter()
        scorer.encode_image_tensor(x)
        t2 = time.perf_counter()
        print(json.dumps({"seconds": t2 - t1, "preprocess_s": t1 - t0}), flush=True)
    sys.exit(0)

from vlcomp.train.loop import TrainConfig, train
from vlcomp.train.recipes import model_spec, train_config
from vlcomp.seeding import derive_seed, np_rng
from vlcomp.text.tokenizer import get_tokenizer
state = {}


def on_log(step, rec):
    print(json.dumps({"step": step, "seconds": time.perf_counter() - state["t"]}), flush=True)
    wait()
    state["t"] = time.perf_counter()


spec = model_spec(params)
tokenizer = get_tokenizer(spec.tokenizer, spec.arch, spec.context_length)
if workload == "pretrain":
    from vlcomp.losses import get_loss
    from vlcomp.models.factory import create_model
    from vlcomp.train.data import BatchSampler, rows_from_annotations
    from vlcomp.world import Split
    pcfg = dict(section(params, "pretrain"))
    split = Split(ws / "data/world", pcfg.pop("split"))
    base = train_config(pcfg, "pretrain")
    sampler = BatchSampler(rows_from_annotations(split.captions()), base.batch_size, together=split.twins())
    info["tokens"] = token_shares(sampler, tokenizer, np_rng(0, "bench", "tokens"))
    tcfg = replace(base, epochs=(steps + 1) / sampler.steps_per_epoch, log_every=1, **options)
    model = create_model(spec, init_seed=derive_seed(0, "pretrain", "init"))
    run = lambda: train(model, tokenizer, split.images, sampler, get_loss("clip"), tcfg, np_rng(0, "bench", "batches"),
                        on_log=on_log)
else:  # clip_ft, negclip: the fine-tuning stage's recipe from the base model
    from vlcomp.io import read_json
    from vlcomp.methods import make_sampler, method_config
    from vlcomp.train.finetune import FinetuneData, finetune_config, finetune_one, training_split, with_weights
    cfg = finetune_config(section(params, "finetune"))
    method = method_config(params, workload)
    data = FinetuneData(ws / "data/world", ws / "data/mined" / f"{method.generator}-{BASE}", cfg, method,
                        training_split(params, method))
    lr = read_json(ws / "models/lr" / f"{workload}-{BASE}" / "selection.json")["selected_lr"]
    sampler = make_sampler(data.rows, method, cfg.batch_size, data.mined)
    info["tokens"] = token_shares(sampler, tokenizer, np_rng(0, "bench", "tokens"))
    tcfg = replace(cfg.train_config(lr, (steps + 1) / sampler.steps_per_epoch), log_every=1, **options)
    run = lambda: finetune_one(with_weights(spec, ws / "models/base" / BASE / "model.pt"), data, method, tcfg, 0, "bench",
                               on_log=on_log)
info["batch"] = tcfg.batch_size
print(json.dumps(info), flush=True)
wait()
state["t"] = time.perf_counter()
run()
"""


def _env(pinned: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in PIN}
    env.update(PYTHONPATH=str(REPO / "src"), OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", VLCOMP_THREADS="1",
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", VLCOMP_TRACKING="off")
    if pinned:
        env.update(PIN, VLCOMP_CPU_PIN="on")
    else:
        env["VLCOMP_CPU_PIN"] = "off"
    return env


def _line(proc: subprocess.Popen) -> dict:
    line = proc.stdout.readline()
    if not line:
        raise SystemExit(f"worker exited early (code {proc.wait()})")
    return json.loads(line)


def _machine() -> dict:
    """The machine record every stage logs (vlcomp.determinism.machine_record), plus the platform string."""
    from vlcomp.determinism import machine_record

    return {**machine_record(), "platform": platform.platform()}


def bench(ws: Path, workload: str, sides: dict, steps: int, warmup: int, tmp: Path) -> dict:
    procs, info, times, pre, loads = {}, {}, {s: [] for s in sides}, {s: [] for s in sides}, []
    try:
        for name, (pinned, options) in sides.items():
            procs[name] = subprocess.Popen(
                [sys.executable, "-c", WORKER, str(ws), workload, str(steps + warmup), json.dumps(options),
                 str(tmp / f"{workload}-{name.replace(' ', '_')}.pt")],
                env=_env(pinned), text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=1)
        for name, pr in procs.items():
            info[name] = _line(pr)
            want = ("AVX2",) if sides[name][0] else ("AVX512",)
            if info[name]["capability"] not in want:
                raise SystemExit(f"{workload} {name}: torch runs {info[name]['capability']} kernels, expected {want}")
        t_start = time.time()
        for _ in range(steps + warmup):
            loads.append(os.getloadavg()[0])
            for name, pr in procs.items():  # one unit each, in turn
                pr.stdin.write("go\n")
                pr.stdin.flush()
                rec = _line(pr)
                times[name].append(rec["seconds"])
                if "preprocess_s" in rec:
                    pre[name].append(rec["preprocess_s"])
        for pr in procs.values():
            pr.stdin.write("stop\n")
            pr.stdin.flush()
            pr.wait(timeout=120)
    finally:
        for pr in procs.values():
            if pr.poll() is None:
                pr.kill()
    ref = next(iter(sides))
    out = {"workload": workload, "units_timed": steps, "warmup_units": warmup, "wall_s": round(time.time() - t_start, 1),
           "load_avg_1min": {"min": min(loads), "median": statistics.median(loads), "max": max(loads),
                             "per_round": [round(v, 2) for v in loads]},
           "worker": {k: {kk: vv for kk, vv in v.items() if kk != "ready"} for k, v in info.items()}, "sides": {}}
    for name in sides:
        kept = times[name][warmup:]
        med = statistics.median(kept)
        side = {"pinned": sides[name][0], "options": sides[name][1], "median_s": round(med, 5),
                "ratio_to_" + ref.replace(" ", "_"): round(statistics.median(times[ref][warmup:]) / med, 3),
                "all_s": [round(t, 5) for t in times[name]]}
        if pre[name]:
            side["median_preprocess_s"] = round(statistics.median(pre[name][warmup:]), 5)
        # paired per-round ratios: robust to load that changes between rounds
        side["paired_ratio_median"] = round(statistics.median(
            a / b for a, b in zip(times[ref][warmup:], kept, strict=True)), 3)
        out["sides"][name] = side
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workspace", type=Path, required=True)
    p.add_argument("--base", default="b0", help="the chain whose base, mined data and LR selection to use")
    p.add_argument("--workloads", nargs="+", default=["eval_images", "pretrain", "clip_ft", "negclip"])
    p.add_argument("--steps", type=int, default=25)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--sides", nargs="+", help="run only these sides (names of TRAIN_SIDES / EVAL_SIDES; the first "
                   "one kept is the reference of every ratio)")
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    os.environ["BENCH_BASE"] = args.base  # the workers read it
    import tempfile

    import torch

    ws = args.workspace.resolve()
    result = {"what": __doc__.split("\n\n")[0], "machine": _machine(), "pin": PIN,
              "load_avg_at_start": os.getloadavg(), "workloads": {}}
    with tempfile.TemporaryDirectory(prefix="vlcomp-bench-speed-") as tmp:
        for w in args.workloads:
            sides = EVAL_SIDES if w == "eval_images" else TRAIN_SIDES
            if args.sides:
                sides = {k: v for k, v in sides.items() if k in args.sides}
            r = bench(ws, w, sides, args.steps, args.warmup, Path(tmp))
            if w == "eval_images" and len(sides) == len(EVAL_SIDES):
                f = {s: torch.load(Path(tmp) / f"{w}-{s.replace(' ', '_')}.pt") for s in sides}
                r["features_bitwise_equal"] = {
                    "channels_last vs not, pinned": torch.equal(f["pinned"], f["pinned channels_last"]),
                    "channels_last vs not, unpinned": torch.equal(f["unpinned"], f["unpinned channels_last"]),
                    "pinned vs unpinned": torch.equal(f["pinned"], f["unpinned"])}
                r["features_max_abs_diff_channels_last_pinned"] = float(
                    (f["pinned"] - f["pinned channels_last"]).abs().max())
            result["workloads"][w] = r
            print(w, {s: (v["median_s"], v["paired_ratio_median"]) for s, v in r["sides"].items()},
                  "load", r["load_avg_1min"], flush=True)
    result["load_avg_at_end"] = os.getloadavg()
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    else:
        print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
