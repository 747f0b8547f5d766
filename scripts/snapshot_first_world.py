"""Snapshot of the first toy world's outputs, the "before" column of the reports' "what changed and why" sections.

The project re-runs its pipeline on the second world (``docs/world_v2.md``), which overwrites ``metrics/``,
``claims/`` and ``reports/``. Commit ``e9406c3`` holds the first world's complete outputs; this script reads them
from git objects (``git show <commit>:<path>``) and from the DVC cache, never from the working tree, and writes a
static, committed input of the reports (not a stage output):

- ``claims_aro.csv``, ``claims_tsvlc.csv``, ``params.yaml``: byte copies of ``claims/aro.csv``,
  ``claims/tsvlc.csv`` and ``params.yaml`` at the commit (the reports list the settings that changed from it).
- ``summary.csv``: one row per (run, key) for the base CLIPs (``clip-b0``..``b2``) and the ARO fine-tunes
  (``clip_ft-b*s0``, ``negclip-b*s0``), in the columns of the reports' long table (``model, method, base,
  base_seed, seed, key, value``: the run's chain from its provenance and the commit's params,
  :func:`vlcomp.reporting.tree.chain_of`) and ``source``:
  ``metrics.json`` for a key read from the run's metrics file at the commit, ``items`` for a key derived from the
  run's VG-Relation item table: the first world's metrics files predate the per-relation-kind keys
  (``aro/vg_relation/{geometric,role}_*``), so those are recomputed here with the library's own aggregate
  (:func:`vlcomp.benchmarks.aro.aggregate_vg_relation`, which splits with :func:`vlcomp.metrics.aro.relation_kind`).
  As a check the same call must give back the metrics file's ``aro/vg_relation/macro_acc``. A key the run's metrics
  file lacks (CC-Neg on a run that did not score it) is left out.

The item table is found through the locks at the commit: every ``dvc.lock`` names the ``metrics/<run>/items``
output's directory md5, whose ``.dir`` listing in ``<cache>/files/md5/<2 hex>/<rest>`` names the parquet file's
md5; both md5s are verified. Output is deterministic: rows sorted by (model, key), floats written with ``repr``.

Usage: python scripts/snapshot_first_world.py [--commit e9406c3] [--cache .dvc/cache] [--out calibration/first_world]
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import subprocess
from collections.abc import Iterable
from pathlib import Path

import pandas as pd
import yaml

from vlcomp.benchmarks.aro import aggregate_vg_relation
from vlcomp.reporting.tree import Chain, chain_of

REPO = Path(__file__).resolve().parents[1]
FIRST_WORLD_COMMIT = "e9406c3"
COPIES = {"claims/aro.csv": "claims_aro.csv", "claims/tsvlc.csv": "claims_tsvlc.csv", "params.yaml": "params.yaml"}
RUNS: tuple[str, ...] = tuple(f"{m}-b{b}{s}" for m, s in (("clip", ""), ("clip_ft", "s0"), ("negclip", "s0"))
                              for b in range(3))
#: Keys read from a run's metrics.json (left out when the file lacks them: CC-Neg).
METRIC_KEYS: tuple[str, ...] = (
    "zeroshot/cifar10/acc",
    "retrieval/coco/i2t/recall_at_1",
    "retrieval/coco/t2i/recall_at_1",
    "aro/vg_relation/macro_acc",
    "aro/vg_relation/wrong_image_macro_acc",
    "aro/vg_attribution/macro_acc",
    "aro/vg_attribution/wrong_image_macro_acc",
    "aro/coco_order/acc",
    "ccneg/acc",
)
#: Keys derived from the VG-Relation item table (absent from the first world's metrics files).
KIND_KEYS: tuple[str, ...] = tuple(
    f"aro/vg_relation/{kind}_{what}"
    for kind in ("geometric", "role")
    for what in ("macro_acc", "wrong_image_macro_acc", "n_cases")
)
COLUMNS = ("model", "method", "base", "base_seed", "seed", "key", "value", "source")
PARITY_TOL = 1e-12


def git_show(commit: str, path: str, repo: Path = REPO) -> bytes:
    """The bytes of ``path`` at ``commit`` (a clear error naming both when git has none)."""
    done = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=repo, capture_output=True, check=False)
    if done.returncode != 0:
        raise ValueError(f"git show {commit}:{path} failed: {done.stderr.decode().strip()}")
    return done.stdout


def lock_files(commit: str, repo: Path = REPO) -> list[str]:
    """Every ``dvc.lock`` tracked at ``commit`` (the root lock and the pipelines' own), sorted."""
    done = subprocess.run(["git", "ls-tree", "-r", "--name-only", commit], cwd=repo, capture_output=True,
                          check=True, text=True)
    return sorted(p for p in done.stdout.splitlines() if p == "dvc.lock" or p.endswith("/dvc.lock"))


def out_md5s(locks: Iterable[bytes]) -> dict[str, str]:
    """Output path -> md5 over the ``outs`` of every stage of the given lock files."""
    found: dict[str, str] = {}
    for text in locks:
        for stage in (yaml.safe_load(text) or {}).get("stages", {}).values():
            for out in stage.get("outs", []):
                found[out["path"]] = out["md5"]
    return found


def cache_path(cache: Path, md5: str) -> Path:
    return cache / "files" / "md5" / md5[:2] / md5[2:]


def read_cached(cache: Path, md5: str) -> bytes:
    """A cached file's bytes, checked against its md5 (a ``.dir`` listing's md5 is that of its JSON bytes, suffixed)."""
    path = cache_path(cache, md5)
    if not path.is_file():
        raise ValueError(f"{path}: not in the DVC cache (md5 {md5})")
    data = path.read_bytes()
    if hashlib.md5(data).hexdigest() != md5.removesuffix(".dir"):
        raise ValueError(f"{path}: content does not match its md5 {md5}")
    return data


def item_table(cache: Path, items_md5: str, name: str) -> pd.DataFrame:
    """The per-item table ``name`` (e.g. ``vg_relation.parquet``) of an ``items`` directory output."""
    listing = {e["relpath"]: e["md5"] for e in json.loads(read_cached(cache, items_md5))}
    if name not in listing:
        raise ValueError(f"items directory {items_md5} has no {name}")
    return pd.read_parquet(io.BytesIO(read_cached(cache, listing[name])))


def run_rows(run: str, chain: Chain, metrics: dict[str, float], vg_relation: pd.DataFrame) -> list[dict[str, object]]:
    """The summary rows of one run: its metrics-file keys and the VG-R relation-kind keys from its item table."""
    derived = aggregate_vg_relation({"vg_relation": vg_relation})
    stored = metrics["aro/vg_relation/macro_acc"]
    if abs(derived["aro/vg_relation/macro_acc"] - stored) > PARITY_TOL:
        raise ValueError(f"{run}: VG-R macro from the item table {derived['aro/vg_relation/macro_acc']!r} "
                         f"!= metrics.json's {stored!r}")
    head = dict(model=run, method=chain.method, base=chain.base, base_seed=chain.base_seed, seed=chain.seed)
    rows = [{**head, "key": k, "value": float(metrics[k]), "source": "metrics.json"} for k in METRIC_KEYS if k in metrics]
    rows += [{**head, "key": k, "value": float(derived[k]), "source": "items"} for k in KIND_KEYS if k in derived]
    return rows


def summary(commit: str, cache: Path, repo: Path = REPO) -> pd.DataFrame:
    """The summary table of the runs in :data:`RUNS` at ``commit`` (rows sorted by run and key)."""
    md5s = out_md5s(git_show(commit, lock, repo) for lock in lock_files(commit, repo))
    params = yaml.safe_load(git_show(commit, "params.yaml", repo))
    rows: list[dict[str, object]] = []
    for run in RUNS:
        items = f"metrics/{run}/items"
        if items not in md5s:
            raise ValueError(f"no dvc.lock at {commit} names the output {items}")
        metrics = json.loads(git_show(commit, f"metrics/{run}/metrics.json", repo))
        chain = chain_of(run, json.loads(git_show(commit, f"metrics/{run}/provenance.json", repo)), params)
        rows += run_rows(run, chain, metrics, item_table(cache, md5s[items], "vg_relation.parquet"))
    return pd.DataFrame(rows, columns=list(COLUMNS)).sort_values(["model", "key"], kind="stable").reset_index(drop=True)


def write_summary(table: pd.DataFrame, path: Path) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(COLUMNS)
        for row in table.itertuples(index=False):
            writer.writerow([row.model, row.method, row.base, row.base_seed, row.seed, row.key, repr(float(row.value)),
                             row.source])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commit", default=FIRST_WORLD_COMMIT, help="the first world's commit")
    parser.add_argument("--cache", type=Path, default=REPO / ".dvc" / "cache", help="the DVC cache folder")
    parser.add_argument("--out", type=Path, default=REPO / "calibration" / "first_world", help="output folder")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for source, name in COPIES.items():
        (args.out / name).write_bytes(git_show(args.commit, source))
    write_summary(summary(args.commit, args.cache), args.out / "summary.csv")


if __name__ == "__main__":
    main()
