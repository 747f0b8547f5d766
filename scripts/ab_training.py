"""Bitwise A/B of training between two versions of the code: does a change that should not change results
leave every trained tensor and training history exactly as it was?

Usage:
  python scripts/ab_training.py --base REV                  # the smoke configuration, REV vs this checkout
  python scripts/ab_training.py --base REV --full WORKSPACE --variant negclip-b0s0
                                                            # one full default fine-tune against WORKSPACE's output

Smoke mode builds two smoke workspaces (params.yaml + params.smoke.yaml, as `make smoke`), one from a `git
worktree` of REV and one from this checkout, and runs every stage up to fine-tuning in each (`dvc repro
finetune`: world, pretrain, mining, LR selection, every fine-tuned variant) with that side's ``src`` first on
PYTHONPATH. Full mode re-runs ``finetune@<variant>`` with this checkout's code on the inputs of a workspace that
a full `make repro` produced (its data/world, data/mined/<generator>-<base>, models/base/<base>, models/lr/<selection> and
params.yaml) and compares
the result with the workspace's own output.

Compared: every model tensor (``torch.equal``), every history record but the timing field ``samples_per_s``,
LR selections, mined data (byte for byte). Prints one line per file and exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _env(src: Path, workdir: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(src), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "MLFLOW_DISABLE_TELEMETRY": "true", "MLFLOW_TRACKING_URI": f"sqlite:///{workdir / 'mlflow.db'}",
            "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}


def smoke_side(tree: Path, workdir: Path) -> None:
    """A smoke workspace built by ``tree``'s own scripts/smoke.py, trained up to every fine-tuned variant."""
    workdir.mkdir(parents=True, exist_ok=True)
    env = _env(tree / "src", workdir)
    prep = f"import sys; sys.path.insert(0, {str(tree / 'scripts')!r}); import smoke; from pathlib import Path; " \
           f"smoke.prepare(Path({str(workdir)!r}))"
    subprocess.run([sys.executable, "-c", prep], check=True, env=env, cwd=tree)
    subprocess.run(["dvc", "repro", "finetune"], check=True, env=env, cwd=workdir, stdout=subprocess.DEVNULL)


def _history(path: Path) -> list[dict]:
    return [{k: v for k, v in rec.items() if k != "samples_per_s"} for rec in json.loads(path.read_text())]


def same_model(a: Path, b: Path) -> str | None:
    """None when the two checkpoints hold equal tensors under equal names, else what differs."""
    import torch

    sa, sb = torch.load(a, map_location="cpu", weights_only=True), torch.load(b, map_location="cpu", weights_only=True)
    sa, sb = sa.get("state_dict", sa), sb.get("state_dict", sb)
    if set(sa) != set(sb):
        return f"tensor names differ: {sorted(set(sa) ^ set(sb))[:5]}"
    bad = [k for k in sa if not torch.equal(sa[k], sb[k])]
    return f"{len(bad)} of {len(sa)} tensors differ (first: {bad[0]})" if bad else None


def compare(a: Path, b: Path, rel: list[str]) -> list[str]:
    """Compare the files ``rel`` (and every file under them) between workspaces ``a`` and ``b``."""
    diffs = []
    files = sorted({p.relative_to(a) for r in rel for p in ([a / r] if (a / r).is_file() else (a / r).rglob("*"))
                    if p.is_file()} | {p.relative_to(b) for r in rel for p in
                                       ([b / r] if (b / r).is_file() else (b / r).rglob("*")) if p.is_file()})
    for f in files:
        fa, fb = a / f, b / f
        if not fa.exists() or not fb.exists():
            why = f"only in {'A' if fa.exists() else 'B'}"
        elif f.suffix == ".pt":
            why = same_model(fa, fb)
        elif f.name == "history.json":
            why = None if _history(fa) == _history(fb) else "history records differ"
        elif f.name == "model.json" or f.name == "summary.json":
            why = None if json.loads(fa.read_text()) == json.loads(fb.read_text()) else "JSON differs"
        else:
            why = None if filecmp.cmp(fa, fb, shallow=False) else "bytes differ"
        print(f"{'SAME' if why is None else 'DIFF'}  {f}" + ("" if why is None else f"  ({why})"))
        if why is not None:
            diffs.append(str(f))
    return diffs


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base", help="git revision of the A side (smoke mode)")
    p.add_argument("--full", type=Path, help="a workspace of a full `make repro` (full mode)")
    p.add_argument("--variant", default="negclip-b0s0", help="full mode: the variant to re-train")
    p.add_argument("--workdir", type=Path, help="where to build (default: a temporary folder, removed)")
    args = p.parse_args()
    root = args.workdir or Path(tempfile.mkdtemp(prefix="vlcomp-ab-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        if args.full:
            ws = args.full.resolve()
            import yaml

            spec = (yaml.safe_load((ws / "params.yaml").read_text()).get("variants") or {}).get(args.variant)
            if spec is None:
                p.error(f"--variant {args.variant}: not in {ws / 'params.yaml'} variants")
            chain = spec["base"]
            out = root / "finetune" / args.variant
            cmd = [sys.executable, str(REPO / "stages" / "finetune.py"), "--params", str(ws / "params.yaml"),
                   "--variant", args.variant, "--world", str(ws / "data/world"),
                   "--base", str(ws / "models/base" / chain),
                   "--mined", str(ws / "data/mined" / f"{spec['generator']}-{chain}"),
                   "--lr-dir", str(ws / "models/lr" / spec["selection"]), "--out", str(out)]
            subprocess.run(cmd, check=True, env={**_env(REPO / "src", root), "VLCOMP_THREADS": "1"}, cwd=root)
            diffs = compare(ws / "models" / "finetune" / args.variant, out, ["."])
        else:
            if not args.base:
                p.error("give --base REV (smoke mode) or --full WORKSPACE")
            tree = root / "base-tree"
            subprocess.run(["git", "worktree", "add", "-q", "--detach", str(tree), args.base], check=True, cwd=REPO)
            try:
                for side, src in (("A", tree), ("B", REPO)):
                    print(f"{side}: {'git ' + args.base if side == 'A' else 'this checkout'} -> {root / side}", flush=True)
                    smoke_side(src, root / side)
            finally:
                subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, check=False)
            diffs = compare(root / "A", root / "B", ["models", "data/mined"])
        print(f"{len(diffs)} file(s) differ" if diffs else "bitwise identical")
        sys.exit(1 if diffs else 0)
    finally:
        if not args.workdir:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
