"""BatchNorm statistics as a noise source (item 11 of the toy-world issue).

The toy ResNet image towers carry BatchNorm running statistics (exponential averages, momentum 0.1) from their last
training batches, so a model's eval-mode features depend on which few batches came last. In a supervised shape probe
of the same tower, eval-mode accuracy swung by up to 0.2 between checkpoints 16 steps apart while re-estimated
statistics kept it within 0.03 (``calibration/world_perception.csv``). This probe asks how much of the pipeline's
chain-to-chain spread comes from that.

For every pipeline checkpoint named by ``--models`` (``models/base/<chain>`` or ``models/finetune/<run>``) it scores
the ARO suite's image-dependent keys twice:

- ``stored``: the checkpoint as the pipeline evaluates it;
- ``reestimated``: the same weights with every BatchNorm layer's running mean and variance recomputed as the plain
  average (``momentum=None``) over ``--images`` fixed images of ``--split`` (the first ones: no randomness), in
  batches of ``--batch-size`` (the fine-tuning batch), weights untouched.

One row per (model, stats) with the keys of :data:`KEYS`; ``seconds`` and ``git_commit`` are the only fields that are
not a function of the checkpoints. The summary (``--summary``) gives, per method and key, the SD over chains with
stored and with re-estimated statistics and the NegCLIP - CLIP-FT differences per chain.

Usage: python scripts/probe_batchnorm.py --models base/b0 base/b1 base/b2 finetune/clip_ft-b0s0 ...
"""

from __future__ import annotations

from vlcomp.determinism import pin_environment

pin_environment()  # the stages' CPU kernel pin, before torch runs anything

import argparse  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import pandas as pd  # noqa: E402
import torch  # noqa: E402
from probe_perception import merge_rows  # noqa: E402 (scripts/ is on sys.path)

from vlcomp.benchmarks import BENCHMARKS  # noqa: E402
from vlcomp.config import load_params  # noqa: E402
from vlcomp.eval.inputs import read_manifest  # noqa: E402
from vlcomp.models.batchnorm import batchnorm_layers, reestimate_batchnorm  # noqa: E402
from vlcomp.models.factory import create_model, image_size, with_weights  # noqa: E402
from vlcomp.models.scorers import toy_scorer  # noqa: E402
from vlcomp.text.tokenizer import get_tokenizer  # noqa: E402
from vlcomp.tracking import git_commit  # noqa: E402
from vlcomp.train.recipes import model_spec  # noqa: E402
from vlcomp.world import Split  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BENCHES = ("vg_relation", "vg_attribution", "coco_order", "coco_retrieval")
KEYS = ("aro/vg_relation/macro_acc", "aro/vg_relation/wrong_image_macro_acc", "aro/vg_attribution/macro_acc",
        "aro/coco_order/acc", "retrieval/coco/i2t/recall_at_1", "retrieval/coco/t2i/recall_at_1")
RUN = re.compile(r"^(?P<method>.+)-(?P<chain>b\d+)s(?P<seed>\d+)$")


def benchmark_metrics(scorer, names, inputs: dict) -> dict[str, float]:
    """Every metric of the benchmarks ``names`` for ``scorer``, by the benchmarks' own code (the probes' one
    scoring loop: ``probe_base_gate.py`` uses it too)."""
    out: dict[str, float] = {}
    for name in names:
        b = BENCHMARKS.get(name)
        out |= b.metrics(b.run(scorer, inputs), inputs)
    return out


def score(model: torch.nn.Module, tokenizer, inputs: dict) -> dict[str, float]:
    model.eval()
    out = benchmark_metrics(toy_scorer("probe", model, tokenizer), BENCHES, inputs)
    return {k: round(float(out[k]), 6) for k in KEYS if k in out}


def identity(path: str) -> dict[str, str]:
    kind, name = path.split("/", 1)
    if kind == "base":
        return {"model": path, "method": "base", "chain": name.split("-")[-1] if "-" in name else name}
    m = RUN.match(name)
    if kind != "finetune" or m is None:
        raise SystemExit(f"--models {path!r}: expected base/<chain> or finetune/<method>-b<k>s<s>")
    return {"model": path, "method": m["method"], "chain": m["chain"]}


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per (method, key, stats): mean and SD over chains; and NegCLIP - CLIP-FT per chain, mean and SD."""
    long = df.melt(id_vars=["method", "chain", "stats"], value_vars=[k for k in KEYS if k in df], var_name="key")
    rows = long.groupby(["method", "key", "stats"])["value"].agg(["mean", "std", "count"]).reset_index()
    wide = long.pivot_table(index=["chain", "key", "stats"], columns="method", values="value").reset_index()
    if {"negclip", "clip_ft"} <= set(wide.columns):
        wide["diff"] = wide["negclip"] - wide["clip_ft"]
        d = wide.groupby(["key", "stats"])["diff"].agg(["mean", "std", "count"]).reset_index()
        d.insert(0, "method", "negclip-clip_ft")
        rows = pd.concat([rows, d], ignore_index=True)
    return rows.round(6)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="+", required=True, help="base/<chain> or finetune/<run> under models/")
    p.add_argument("--params", default=str(REPO / "params.yaml"))
    p.add_argument("--world", default=str(REPO / "data" / "world"))
    p.add_argument("--benchmarks", default=str(REPO / "data" / "benchmarks"))
    p.add_argument("--split", default="coco_train")
    p.add_argument("--images", type=int, default=2048)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", default=str(REPO / "calibration" / "batchnorm.csv"))
    p.add_argument("--summary", default=str(REPO / "calibration" / "batchnorm_summary.csv"))
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    params = load_params(args.params)
    inputs = read_manifest(args.benchmarks, seed=int(params["root_seed"]))
    images = Split(args.world, args.split).images[: args.images]
    for path in args.models:
        who = identity(path)
        ckpt = REPO / "models" / path / "model.pt"
        spec = model_spec(params, who["chain"])
        tokenizer = get_tokenizer(spec.tokenizer, spec.arch, spec.context_length)
        for stats in ("stored", "reestimated"):
            t0 = time.time()
            model = create_model(with_weights(spec, ckpt))
            n_layers = len(batchnorm_layers(model))
            if stats == "reestimated":
                model.eval()
                reestimate_batchnorm(model.visual, images, image_size(model), args.batch_size)
            row = {"probe": "batchnorm", **who, "stats": stats, "bn_layers": n_layers,
                   "reestimate_images": args.images if stats == "reestimated" else 0,
                   **score(model, tokenizer, inputs), "seconds": round(time.time() - t0, 1),
                   "git_commit": git_commit(REPO)}
            print(row, flush=True)
            merge_rows(Path(args.out), pd.DataFrame([row]), {k: row[k] for k in ("probe", "model", "stats")})
    df = pd.read_csv(args.out)
    summary(df).to_csv(args.summary, index=False)
    print(summary(df).to_string())


if __name__ == "__main__":
    main()
