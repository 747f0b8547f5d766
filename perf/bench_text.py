"""Time the batched COCO-Order perturbations + NegCLIP mining against the reference's per-caption loop.

(a) batched: ``TextShuffler.order_options`` (one ``nlp.pipe`` pass, tagging components only) and
    ``mine_negatives`` (one ``nlp.pipe`` pass); also (a') the same with one shared parse.
(b) naive, written the way the reference code runs: the full spaCy pipeline, ``nlp(caption)`` once per
    caption *per spaCy perturbation* (ARO's ``TextShuffler``), then ``nlp(caption)`` once per caption in the
    miner (the NegCLIP gist, without its process pool).

Both paths draw from generators with the same seeds, so on the captions both ran the outputs must be equal;
the script checks that. The naive loop can run on a prefix (``--naive-limit``); its rate is then
extrapolated to all captions, and the report says so.

    .venv/bin/python perf/bench_text.py --out /tmp/bench_text.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from vlcomp.text.negclip_swaps import mine_negatives, negatives_for_doc
from vlcomp.text.nlp import DEFAULT_SPACY_MODEL, load_spacy, word_tokenize
from vlcomp.text.perturb import ORDER_KINDS, PERTURBATIONS, Tagged, TextShuffler
from vlcomp.text.preprocess import pre_caption

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CAPTIONS = REPO_ROOT.parent / "shared" / "real_samples" / "coco_karpathy_test.json"


def load_captions(path: Path, limit: int | None) -> list[str]:
    if not path.exists():
        raise SystemExit(
            f"captions file not found: {path} (a JSON list of {{image, caption: [...]}} records)"
        )
    records = json.loads(path.read_text())
    captions = [c for r in records for c in r["caption"]]
    return captions[:limit] if limit else captions


def naive_order_options(captions: list[str], rng: np.random.Generator, nlp) -> list[list[str]]:
    """ARO's COCO_Order construction: each spaCy perturbation calls ``nlp(caption)`` itself."""
    out = []
    for caption in captions:
        options = [caption]
        for kind in ORDER_KINDS:
            p = PERTURBATIONS[kind]
            tagged = Tagged.from_doc(nlp(caption)) if p.needs_spacy else None
            options.append(p(caption, tagged, rng))
        out.append([pre_caption(o, 30) for o in options])
    return out


def naive_negatives(captions: list[str], rng: np.random.Generator, nlp) -> list[list[str]]:
    """The NegCLIP gist's loop: one ``nlp(caption)`` per caption."""
    return [negatives_for_doc(nlp(caption), rng) for caption in captions]


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--captions", type=Path, default=DEFAULT_CAPTIONS)
    ap.add_argument("--limit", type=int, default=None, help="use only the first N captions")
    ap.add_argument(
        "--naive-limit", type=int, default=2000, help="run the naive loop on the first N (0 = all)"
    )
    ap.add_argument("--naive-pipeline", choices=["full", "trimmed"], default="full")
    ap.add_argument("--spacy-model", default=DEFAULT_SPACY_MODEL)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--n-process", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None, help="write the numbers to this JSON file")
    args = ap.parse_args(argv)

    captions = load_captions(args.captions, args.limit)
    n = len(captions)
    n_naive = n if not args.naive_limit else min(args.naive_limit, n)

    t = time.perf_counter()
    nlp = load_spacy(args.spacy_model)
    naive_nlp = load_spacy(
        args.spacy_model, exclude=() if args.naive_pipeline == "full" else ("ner", "lemmatizer")
    )
    for m in (nlp, naive_nlp):  # first-call warm-up, outside the timings
        m("A warm-up caption.")
    word_tokenize("A warm-up caption.")  # imports nltk (~1.5 s)
    load_s = time.perf_counter() - t
    shuffler = TextShuffler(nlp, batch_size=args.batch_size, n_process=args.n_process)

    # (a) batched, one parse per function
    t = time.perf_counter()
    opts = shuffler.order_options(captions, np.random.default_rng([args.seed, 1]))
    t_order = time.perf_counter() - t
    t = time.perf_counter()
    negs = mine_negatives(
        captions,
        np.random.default_rng([args.seed, 2]),
        nlp,
        batch_size=args.batch_size,
        n_process=args.n_process,
    )
    t_mine = time.perf_counter() - t
    batched_s = t_order + t_mine

    # (a') batched, one shared parse (tagger + parser) for both
    t = time.perf_counter()
    docs = list(nlp.pipe(captions, batch_size=args.batch_size, n_process=args.n_process))
    opts2 = shuffler.order_options(
        captions, np.random.default_rng([args.seed, 1]), tagged=[Tagged.from_doc(d) for d in docs]
    )
    negs2 = mine_negatives(captions, np.random.default_rng([args.seed, 2]), docs=docs)
    shared_s = time.perf_counter() - t
    del docs

    # (b) naive per-caption loop on the first n_naive captions
    t = time.perf_counter()
    naive_opts = naive_order_options(captions[:n_naive], np.random.default_rng([args.seed, 1]), naive_nlp)
    naive_negs = naive_negatives(captions[:n_naive], np.random.default_rng([args.seed, 2]), naive_nlp)
    naive_s = time.perf_counter() - t

    rate_batched, rate_shared, rate_naive = n / batched_s, n / shared_s, n_naive / naive_s
    extrapolated = n_naive < n
    report = {
        "captions_file": str(args.captions),
        "n_captions": n,
        "spacy_model": args.spacy_model,
        "batch_size": args.batch_size,
        "n_process": args.n_process,
        "seed": args.seed,
        "pipeline_load_s": round(load_s, 2),
        "batched": {
            "order_s": round(t_order, 2),
            "mine_s": round(t_mine, 2),
            "total_s": round(batched_s, 2),
            "captions_per_s": round(rate_batched, 1),
        },
        "batched_shared_parse": {"total_s": round(shared_s, 2), "captions_per_s": round(rate_shared, 1)},
        "naive": {
            "pipeline": args.naive_pipeline,
            "n_captions_timed": n_naive,
            "timed_s": round(naive_s, 2),
            "captions_per_s": round(rate_naive, 1),
            "rate_extrapolated_to_all": extrapolated,
            "est_total_s_all": round(n / rate_naive, 1),
        },
        "speedup": round(rate_batched / rate_naive, 2),
        "speedup_shared_parse": round(rate_shared / rate_naive, 2),
        "parity": {
            "order_equal_on_naive_subset": opts[:n_naive] == naive_opts,
            "negatives_equal_on_naive_subset": negs[:n_naive] == naive_negs,
            "shared_parse_equal": opts2 == opts and negs2 == negs,
            "order_mismatches": sum(a != b for a, b in zip(opts, naive_opts, strict=False)),
            "negative_mismatches": sum(a != b for a, b in zip(negs, naive_negs, strict=False)),
        },
        "negatives": {
            "captions_with_any": sum(bool(x) for x in negs),
            "total": sum(len(x) for x in negs),
            "per_count": {str(k): sum(len(x) == k for x in negs) for k in range(6)},
        },
        "order_ties": {  # options equal to the original after pre_caption (ties count as correct in ARO)
            kind: sum(o[0] == o[i + 1] for o in opts) for i, kind in enumerate(ORDER_KINDS)
        },
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
    }

    note = f" (extrapolated from {n_naive} captions)" if extrapolated else ""
    print(
        f"captions: {n}  (spaCy {args.spacy_model}, batch_size {args.batch_size}, n_process {args.n_process})"
    )
    print(f"(a)  batched order+mining : {batched_s:8.2f} s  {rate_batched:8.1f} captions/s")
    print(f"     order {t_order:.2f} s, mining {t_mine:.2f} s")
    print(f"(a') batched, shared parse: {shared_s:8.2f} s  {rate_shared:8.1f} captions/s")
    print(
        f"(b)  naive per-caption loop ({args.naive_pipeline} pipeline): {naive_s:.2f} s on {n_naive} captions, "
        f"{rate_naive:.1f} captions/s{note}; est. {n / rate_naive:.0f} s for all {n}"
    )
    print(f"speedup (a)/(b): {report['speedup']}x   (a')/(b): {report['speedup_shared_parse']}x")
    print(f"parity on the naive subset: {report['parity']}")
    print(f"negatives: {report['negatives']}")
    print(f"order ties with the original: {report['order_ties']}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")
        print(f"wrote {args.out}")
    return report


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
