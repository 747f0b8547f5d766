"""The base gate of the toy-world issue (item 2): is a pretrained base one whose claims can be tested?

A base passes when it sees shapes (zero-shot shape accuracy >= 0.7: P4, ``scripts/probe_pretraining.py``), retrieves
COCO-twin images clearly better than the first world's base, and still behaves like a bag of words on the VG twins
(VG-Relation and VG-Attribution <= 0.6, the wrong-image control at chance: ARO's premise, which NegCLIP is meant to
fix). This script scores a saved base (``--base DIR/model.pt``, e.g. from ``probe_pretraining.py --save``) with the
project's benchmark code on a benchmarks folder built from its own world (``stages/benchmarks.py --params P --world W
--out B``), and appends one row to ``--out``: the gate's keys, the VG-R relation-kind split and the zero-shot
CIFAR10-twin accuracy.

Rows are keyed by (world, base_model); ``seconds`` and ``git_commit`` are the only fields that are not a function of
the checkpoint and the benchmarks.

Usage: python scripts/probe_base_gate.py --base /tmp/bases_v2/e16 --params /tmp/params_v2.yaml \\
           --benchmarks /tmp/bench_v2 --world-name world_v2
"""

from __future__ import annotations

from vlcomp.determinism import pin_environment

pin_environment()  # the stages' CPU kernel pin, before torch runs anything

import argparse  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import pandas as pd  # noqa: E402
import torch  # noqa: E402
from probe_batchnorm import benchmark_metrics  # noqa: E402 (scripts/ is on sys.path)
from probe_perception import merge_rows  # noqa: E402

from vlcomp.config import load_params  # noqa: E402
from vlcomp.eval.inputs import read_manifest  # noqa: E402
from vlcomp.models.factory import create_model, with_weights  # noqa: E402
from vlcomp.models.scorers import toy_scorer  # noqa: E402
from vlcomp.text.tokenizer import get_tokenizer  # noqa: E402
from vlcomp.tracking import git_commit  # noqa: E402
from vlcomp.train.recipes import model_spec  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BENCHES = ("vg_relation", "vg_attribution", "coco_retrieval", "zeroshot_aro")
KEYS = {
    "vgr": "aro/vg_relation/macro_acc",
    "vgr_wrong_image": "aro/vg_relation/wrong_image_macro_acc",
    "vgr_geometric": "aro/vg_relation/geometric_macro_acc",
    "vgr_geometric_wrong_image": "aro/vg_relation/geometric_wrong_image_macro_acc",
    "vgr_role": "aro/vg_relation/role_macro_acc",
    "vgr_role_wrong_image": "aro/vg_relation/role_wrong_image_macro_acc",
    "vgr_role_n_cases": "aro/vg_relation/role_n_cases",
    "vga": "aro/vg_attribution/macro_acc",
    "vga_wrong_image": "aro/vg_attribution/wrong_image_macro_acc",
    "coco_i2t_r1": "retrieval/coco/i2t/recall_at_1",
    "coco_t2i_r1": "retrieval/coco/t2i/recall_at_1",
    "cifar10_zs": "zeroshot/cifar10/acc",
}
VG_MAX, ZS_MIN = 0.6, 0.7  # the gate


def gate_row(metrics: dict[str, float]) -> dict[str, float]:
    """The gate's keys from a benchmark metrics dict (missing keys left out)."""
    return {short: round(float(metrics[key]), 4) for short, key in KEYS.items() if key in metrics}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base", required=True, help="folder with model.pt")
    p.add_argument("--params", default=str(REPO / "params.yaml"))
    p.add_argument("--benchmarks", default=str(REPO / "data" / "benchmarks"))
    p.add_argument("--world-name", default="world")
    p.add_argument("--chain", default="b0")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", default=str(REPO / "calibration" / "world_base_gate.csv"))
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    t0 = time.time()
    params = load_params(args.params)
    spec = model_spec(params, args.chain)
    model = create_model(with_weights(spec, Path(args.base) / "model.pt"))
    model.eval()
    scorer = toy_scorer("gate", model, get_tokenizer(spec.tokenizer, spec.arch, spec.context_length))
    inputs = read_manifest(args.benchmarks, seed=int(params["root_seed"]))
    metrics = benchmark_metrics(scorer, BENCHES, inputs)
    row = {"probe": "base_gate", "world": args.world_name, "base_model": Path(args.base).name,
           "tokenizer": spec.tokenizer, **gate_row(metrics), "seconds": round(time.time() - t0, 1),
           "git_commit": git_commit(REPO)}
    print(row, flush=True)
    merge_rows(Path(args.out), pd.DataFrame([row]), {k: row[k] for k in ("probe", "world", "base_model")})


if __name__ == "__main__":
    main()
