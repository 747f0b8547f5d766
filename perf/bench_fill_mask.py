"""Time TSVLC's unmasking negatives on the real COCO Karpathy-test captions: batched fill-mask vs one call per text.

Both sides run :mod:`vlcomp.text.unmask` with the same small masked LM, the same spaCy parses and the same seed:

(a) batched: ``unmask_negatives`` - every masked text built first, sorted by token length, sent through the
    transformers ``fill-mask`` pipeline ``--batch-size`` texts per call;
(a') batched, ``engine="model"``: the same chunks, each tokenised in one call and scored by one forward of the
    pipeline's model (softmax + top-k at the mask, as the pipeline's postprocess), skipping the pipeline's
    per-text pre- and post-processing;
(b) one at a time: ``unmask_negatives_one_at_a_time`` - one pipeline call per masked text, as the reference
    (``NegativesLLM``) calls the pipeline once per sample.

Setup, not timed against each other (each reported): the word tokenizer over the captions and the masked LM
trained with ``MlmConfig`` defaults for ``--epochs`` epochs (default 1; 0 = random init; the weights do not change
the cost, but a trained model gives sensible negatives and realistic, peaked scores for the parity check), and one
spaCy parse of all captions (``nlp.pipe``). Then a batch-size sweep of (a) and (a') (one run each, all
captions), then ``--rounds`` rounds of (a), (a') and (b), interleaved (the side that goes first rotates), reporting
medians; ``ratio`` is (a) over (b), ``ratio_model_engine`` (a') over (b). Outputs of (a), (a') and (b) must be
identical (same seed: same draws); the script checks that every round. When (b) runs on a prefix
(``--naive-limit``), its rate is measured on that prefix and (a), (a') are also run once on the prefix for the
parity check.

Threads and kernels are pinned as in the stages (``vlcomp.determinism``: CPU pin, ``VLCOMP_THREADS``, default 1).

    .venv/bin/python perf/bench_fill_mask.py                                 # writes perf/results/bench_fill_mask.json
    .venv/bin/python perf/bench_fill_mask.py --limit 2000 --rounds 1 --out /tmp/bench_fill_mask.json   # quick check
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from vlcomp.determinism import apply, pin_environment  # noqa: E402

pin_environment()  # before torch runs anything

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import datetime as dt  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from vlcomp.text.mlm import (  # noqa: E402
    MlmConfig,
    fill_mask_pipeline,
    init_mlm,
    train_mlm,
    word_tokenizer,
)
from vlcomp.text.nlp import DEFAULT_SPACY_MODEL, load_spacy  # noqa: E402
from vlcomp.text.unmask import UnmaskConfig, unmask_negatives, unmask_negatives_one_at_a_time  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CAPTIONS = REPO_ROOT.parent / "shared" / "real_samples" / "coco_karpathy_test.json"
DEFAULT_OUT = REPO_ROOT / "perf" / "results" / "bench_fill_mask.json"
#: The batched engines of ``unmask_negatives``, and the sides timed each round.
BATCHED = ("pipeline", "model")
SIDES = (*BATCHED, "naive")


def load_captions(path: Path, limit: int | None) -> list[str]:
    if not path.exists():
        raise SystemExit(f"captions file not found: {path} (a JSON list of {{image, caption: [5 strings]}} records, "
                         f"the COCO Karpathy test split; it is read from there, never copied into the repository)")
    records = json.loads(path.read_text())
    captions = [c for r in records for c in r["caption"]]
    return captions[:limit] if limit else captions


def build_model(captions: list[str], epochs: int, seed: int) -> tuple[object, object, dict]:
    cfg = dataclasses.replace(MlmConfig(), epochs=max(1, epochs))  # the defaults; epochs unused for random init
    t = time.perf_counter()
    if epochs == 0:
        tokenizer = word_tokenizer(captions, min_count=cfg.min_count, max_length=cfg.max_length)
        model = init_mlm(tokenizer, cfg, seed=seed).eval()
        history: list[dict] = []
    else:
        model, tokenizer, history = train_mlm(captions, cfg, seed=seed)
    seconds = time.perf_counter() - t
    info = {"how": "random init" if epochs == 0 else f"trained {epochs} epoch(s) on the captions (train_mlm)",
            "config": {k: getattr(cfg, k) for k in cfg.__dataclass_fields__}, "vocab_size": len(tokenizer),
            "parameters": sum(p.numel() for p in model.parameters()), "setup_s": round(seconds, 2),
            "steps": len(history), "final_loss": round(history[-1]["loss"], 4) if history else None,
            "mean_loss_last_50_steps": round(float(np.mean([h["loss"] for h in history[-50:]])), 4)
            if history else None}
    return model, tokenizer, info


def run_side(side: str, captions, docs, fill_mask, seed: int, k: int, cfg: UnmaskConfig):
    """One timed run of a side: ``pipeline`` / ``model`` (the batched engines) or ``naive``."""
    rng = np.random.default_rng([seed, 7])
    t = time.perf_counter()
    if side == "naive":
        out = unmask_negatives_one_at_a_time(captions, docs, fill_mask, rng, k=k, cfg=cfg)
    else:
        out = unmask_negatives(captions, docs, fill_mask, rng, k=k, cfg=cfg, engine=side)
    return out, time.perf_counter() - t


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--captions", type=Path, default=DEFAULT_CAPTIONS)
    ap.add_argument("--limit", type=int, default=None, help="use only the first N captions")
    ap.add_argument("--naive-limit", type=int, default=0,
                    help="time the one-at-a-time side on the first N captions only (0 = all)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=UnmaskConfig().batch_size)
    ap.add_argument("--sweep", default="16,32,64,128,256",
                    help="batch sizes tried once each per engine before the rounds ('' = none)")
    ap.add_argument("--epochs", type=int, default=1, help="masked-LM training epochs (0 = random init)")
    ap.add_argument("--k", type=int, default=1, help="negatives per caption")
    ap.add_argument("--spacy-model", default=DEFAULT_SPACY_MODEL)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    machine = apply()
    load_start = os.getloadavg()

    captions = load_captions(args.captions, args.limit)
    n = len(captions)
    n_naive = n if not args.naive_limit else min(args.naive_limit, n)
    print(f"captions: {n} from {args.captions}; one-at-a-time side on {n_naive}", flush=True)

    model, tokenizer, model_info = build_model(captions, args.epochs, args.seed)
    print(f"masked LM: {model_info['how']}, vocab {model_info['vocab_size']}, {model_info['parameters']} "
          f"parameters, {model_info['setup_s']} s", flush=True)
    fill_mask = fill_mask_pipeline(model, tokenizer, top_k=UnmaskConfig().top_k)

    t = time.perf_counter()
    nlp = load_spacy(args.spacy_model)
    nlp("A warm-up caption.")
    spacy_load_s = time.perf_counter() - t
    t = time.perf_counter()
    docs = list(nlp.pipe(captions, batch_size=256))
    parse_s = time.perf_counter() - t
    print(f"spaCy {args.spacy_model}: load {spacy_load_s:.1f} s, parse {parse_s:.1f} s "
          f"({n / parse_s:.0f} captions/s)", flush=True)

    cfg = UnmaskConfig(batch_size=args.batch_size)
    for side in SIDES:  # warm-up (first calls allocate and import)
        run_side(side, captions[:64], docs[:64], fill_mask, args.seed, args.k, cfg)

    sweep: dict[str, dict] = {}
    reference = None
    for engine in BATCHED:
        sweep[engine] = {}
        for bs in [int(x) for x in args.sweep.split(",") if x.strip()]:
            out, s = run_side(engine, captions, docs, fill_mask, args.seed, args.k, UnmaskConfig(batch_size=bs))
            reference = out if reference is None else reference
            sweep[engine][str(bs)] = {"seconds": round(s, 2), "captions_per_s": round(n / s, 1),
                                      "same_output": out == reference}
            print(f"sweep {engine:8s} batch_size {bs:4d}: {s:7.2f} s  {n / s:7.1f} captions/s  same output: "
                  f"{out == reference}", flush=True)

    seconds: dict[str, list[float]] = {side: [] for side in SIDES}
    parity: list[dict[str, bool]] = []
    loads: list[float] = []
    outs: dict[str, list] = {}
    for r in range(args.rounds):
        order = SIDES[r % len(SIDES):] + SIDES[: r % len(SIDES)]  # who goes first rotates
        for side in order:
            size = n_naive if side == "naive" else n
            outs[side], s = run_side(side, captions[:size], docs[:size], fill_mask, args.seed, args.k, cfg)
            seconds[side].append(round(s, 2))
            loads.append(os.getloadavg()[0])
            print(f"round {r} {side:8s}: {s:7.2f} s  {size / s:7.1f} captions/s", flush=True)
        if n_naive == n:
            same = {engine: outs[engine] == outs["naive"] for engine in BATCHED}
        else:  # the draws depend on the caption list: compare with the batched engines run on the prefix
            same = {engine: run_side(engine, captions[:n_naive], docs[:n_naive], fill_mask, args.seed, args.k,
                                     cfg)[0] == outs["naive"] for engine in BATCHED}
        parity.append(same)
        print(f"round {r} outputs identical to one-at-a-time: {same}", flush=True)

    med = {side: statistics.median(v) for side, v in seconds.items()}
    rate = {side: (n_naive if side == "naive" else n) / med[side] for side in SIDES}
    batched_out = outs["pipeline"]
    pos_counts = Counter(p for negs in batched_out for _, p in negs)
    report = {
        "what": __doc__.split("\n\n")[0],
        "command": " ".join(["perf/bench_fill_mask.py", *(argv if argv is not None else sys.argv[1:])]),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {**machine, "platform": platform.platform(), "loadavg_start": list(load_start),
                    "loadavg_end": list(os.getloadavg())},
        "captions_file": str(args.captions),
        "n_captions": n,
        "n_captions_one_at_a_time": n_naive,
        "one_at_a_time_on_prefix": n_naive < n,
        "k": args.k,
        "seed": args.seed,
        "unmask_config": {"pos": list(cfg.pos), "top_k": cfg.top_k, "batch_size": cfg.batch_size},
        "masked_lm": model_info,
        "spacy": {"model": args.spacy_model, "load_s": round(spacy_load_s, 2), "parse_s": round(parse_s, 2),
                  "captions_per_s": round(n / parse_s, 1), "timed_with_unmasking": False},
        "batch_size_sweep": sweep,
        "rounds": args.rounds,
        "batched": {"engine": "pipeline", "batch_size": cfg.batch_size, "seconds": seconds["pipeline"],
                    "median_s": med["pipeline"], "captions_per_s": round(rate["pipeline"], 1)},
        "batched_model_engine": {"engine": "model", "batch_size": cfg.batch_size, "seconds": seconds["model"],
                                 "median_s": med["model"], "captions_per_s": round(rate["model"], 1)},
        "one_at_a_time": {"seconds": seconds["naive"], "median_s": med["naive"],
                          "captions_per_s": round(rate["naive"], 1), "est_total_s_all": round(n / rate["naive"], 1)},
        "ratio": round(rate["pipeline"] / rate["naive"], 2),
        "ratio_model_engine": round(rate["model"] / rate["naive"], 2),
        "outputs_identical": parity,
        "load_avg_after_each_run": loads,
        "negatives": {"captions_with_any": sum(bool(x) for x in batched_out),
                      "total": sum(len(x) for x in batched_out), "by_pos": dict(sorted(pos_counts.items())),
                      "examples": [[c, negs] for c, negs in zip(captions[:5], batched_out[:5], strict=True)]},
    }
    note = f" (on the first {n_naive})" if n_naive < n else ""
    print(f"batched, pipeline engine (batch_size {cfg.batch_size}): median {med['pipeline']:.2f} s, "
          f"{rate['pipeline']:.1f} captions/s")
    print(f"batched, model engine (batch_size {cfg.batch_size}): median {med['model']:.2f} s, "
          f"{rate['model']:.1f} captions/s")
    print(f"one at a time{note}: median {med['naive']:.2f} s, {rate['naive']:.1f} captions/s")
    print(f"ratio: pipeline engine {report['ratio']}x, model engine {report['ratio_model_engine']}x over "
          f"{args.rounds} rounds; outputs identical: {parity}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.out}")
    return report


if __name__ == "__main__":
    sys.exit(0 if all(all(r.values()) for r in main()["outputs_identical"]) else 1)
