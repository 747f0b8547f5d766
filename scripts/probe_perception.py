"""Perception probe (P1 of the toy-world issue): can the pipeline's image tower tell a single object's shape?

Why this exists: every base scores 0.12-0.16 zero-shot on the CIFAR10 twin (single random-colour objects, chance
0.10), and every relation skill seen in the project is keyed to colour. Before the world is changed, this probe
separates "the tower cannot see shapes at this resolution" from "contrastive pretraining never asked it to":

- ``--mode scratch``: the image tower of ``--arch`` from random init plus a linear head, trained *supervised* on
  the shape label (8 COCO-twin shapes) of single-object images, fresh images every step (a stream, so samples seen
  = steps x batch); the issue's target is small-object accuracy >= 0.95 within ~20k samples.
- ``--mode base-linear``: the pipeline's base (``--base``, chain b0) image tower frozen, a linear head fitted on its
  features of the same images (full-batch L-BFGS on ``--samples`` of them): what the base's features already
  encode about shape.

Images: one object on a random background (the world's renderer, :func:`vlcomp.world.render.render`), its shape,
colour (the 8 COCO-twin colours, independent of shape: no colour prior), material and position drawn at random,
solid with probability 1 - ``world.hollow_prob`` (0.15, the world's). Its half-extent is the world's
(``SIZES``: small 6, large 10 px at 48 px) times ``--object-scale``: 1.0 is today's world, larger values are the
"enlarged objects" the issue asks about; ``--image-size`` renders a larger canvas with everything scaled (the
tower then runs at that input size). Held-out sets: ``--n-eval`` images per size class, from a seed of their own.

Accuracy is scored with BatchNorm in eval mode (its running statistics, as every stage scores), and again with the
statistics re-estimated on 2,048 fresh training images (``*_bn_reest``): the world issue's item 11 measures how
much eval-mode scores swing from stale running statistics.

Each evaluation point appends one row to ``--out`` (CSV; rows with the same configuration are replaced). One torch
thread by default, so two runs can share the 2-core machine. Steps are counted, so a row is reproducible from its
seed (``seconds`` and ``git_commit`` are the only fields that are not).

Usage:
  python scripts/probe_perception.py --mode scratch --object-scale 1.0
  python scripts/probe_perception.py --mode base-linear --base models/base/b0
"""

from __future__ import annotations

from vlcomp.determinism import pin_environment

pin_environment()  # the stages' CPU kernel pin, before torch runs anything: rows comparable with theirs

import argparse  # noqa: E402
import fcntl  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from vlcomp.io import atomic_path  # noqa: E402
from vlcomp.models.batchnorm import reestimate_batchnorm  # noqa: E402
from vlcomp.models.factory import load_checkpoint, register_toy_configs, to_tensor  # noqa: E402
from vlcomp.seeding import derive_seed, np_rng  # noqa: E402
from vlcomp.tracking import git_commit  # noqa: E402
from vlcomp.world.concepts import BACKGROUNDS, COLOURS, MATERIALS, SHAPES, SIZES  # noqa: E402
from vlcomp.world.render import render  # noqa: E402
from vlcomp.world.scene import Obj, Scene  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
HOLLOW_PROB = 0.15  # world.hollow_prob of the toy profile
BN_REESTIMATE_IMAGES = 2048
KEY = ("probe", "mode", "arch", "image_size", "object_scale", "lr", "seed")


def sample_images(rng: np.random.Generator, n: int, image_size: int, object_scale: float,
                  size: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` single-object images uint8 [n, S, S, 3], their shape labels (index into SHAPES) and size labels (0
    small, 1 large); ``size`` fixes the size class."""
    scale = image_size / 48.0
    images, shapes, sizes = [], [], []
    for _ in range(n):
        sz = size if size is not None else list(SIZES)[rng.integers(len(SIZES))]
        half = SIZES[sz] * scale * object_scale
        k = int(rng.integers(len(SHAPES)))
        colour = list(COLOURS)[rng.integers(len(COLOURS))]
        state = "hollow" if rng.random() < HOLLOW_PROB else "solid"
        material = MATERIALS[rng.integers(len(MATERIALS))] if state == "solid" else "plain"
        obj = Obj(0, shape=SHAPES[k], colour=colour, size=sz, material=material, state=state,
                  x=float(rng.uniform(half + 1, image_size - half - 1)),
                  y=float(rng.uniform(half + 1, image_size - half - 1)), half=half,
                  heading=float(rng.uniform(0, 360)) if SHAPES[k] == "arrow" else 0.0)
        background = list(BACKGROUNDS)[rng.integers(len(BACKGROUNDS))]
        images.append(render(Scene("probe", background, [obj]), image_size))
        shapes.append(k)
        sizes.append(list(SIZES).index(sz))
    return np.stack(images), np.asarray(shapes), np.asarray(sizes)


def image_tower(arch: str, image_size: int, weights: Path | None, seed: int) -> torch.nn.Module:
    """The CLIP image tower of ``arch`` at ``image_size`` input: random init (seeded) or the base's weights."""
    import open_clip

    register_toy_configs()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(derive_seed(seed, "perception", "init"))
        model = open_clip.create_model(arch, pretrained=None, force_image_size=image_size)
    if weights is not None:
        load_checkpoint(model, weights)
    return model.visual


@torch.no_grad()
def features(tower: torch.nn.Module, images: np.ndarray, image_size: int, batch: int = 256) -> torch.Tensor:
    return torch.cat([tower(to_tensor(images[i:i + batch], image_size)) for i in range(0, len(images), batch)])


def accuracy(logits: torch.Tensor, y: np.ndarray) -> float:
    return round(float((logits.argmax(1).numpy() == y).mean()), 4)


def run_scratch(args, evalsets, record) -> None:
    tower = image_tower(args.arch, args.image_size, None, args.seed)
    head = torch.nn.Linear(tower.output_dim, len(SHAPES))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(derive_seed(args.seed, "perception", "head"))
        head.reset_parameters()
    params = [*tower.parameters(), *head.parameters()]
    opt = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.0)
    rng = np_rng(args.seed, "perception", "train")
    steps = args.samples // args.batch
    marks = {int(s) // args.batch for s in args.eval_at}
    for step in range(1, steps + 1):
        tower.train()
        for g in opt.param_groups:
            g["lr"] = args.lr * min(1.0, step / args.warmup)
        x, y, _ = sample_images(rng, args.batch, args.image_size, args.object_scale)
        loss = F.cross_entropy(head(tower(to_tensor(x, args.image_size))), torch.from_numpy(y))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step in marks or step == steps:
            tower.eval()
            row = {"samples": step * args.batch, "train_loss": round(float(loss.detach()), 4)}
            for name, (xe, ye) in evalsets.items():
                row[f"acc_{name}"] = accuracy(head(features(tower, xe, args.image_size)), ye)
            state = {k: v.clone() for k, v in tower.state_dict().items()}
            bn_images, _, _ = sample_images(np_rng(args.seed, "perception", "bn", step), BN_REESTIMATE_IMAGES,
                                            args.image_size, args.object_scale)
            reestimate_batchnorm(tower, bn_images, args.image_size)
            for name, (xe, ye) in evalsets.items():
                row[f"acc_{name}_bn_reest"] = accuracy(head(features(tower, xe, args.image_size)), ye)
            tower.load_state_dict(state)
            record(row)


def fit_linear(ftr: torch.Tensor, ytr: np.ndarray, seed: int, iters: int = 200) -> torch.nn.Linear:
    """A multinomial logistic-regression head on standardised features (full-batch L-BFGS, small L2)."""
    head = torch.nn.Linear(ftr.shape[1], len(SHAPES))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(derive_seed(seed, "perception", "linear"))
        head.reset_parameters()
    opt = torch.optim.LBFGS(head.parameters(), max_iter=iters, line_search_fn="strong_wolfe")
    y = torch.from_numpy(ytr)

    def closure():
        opt.zero_grad()
        loss = F.cross_entropy(head(ftr), y) + 1e-4 * head.weight.pow(2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    return head


def run_base_linear(args, evalsets, record) -> None:
    tower = image_tower(args.arch, args.image_size, Path(args.base) / "model.pt", args.seed).eval()
    rng = np_rng(args.seed, "perception", "train")
    x, y, _ = sample_images(rng, args.samples, args.image_size, args.object_scale)
    ftr = features(tower, x, args.image_size)
    mean, std = ftr.mean(0), ftr.std(0) + 1e-6
    fe = {name: ((features(tower, xe, args.image_size) - mean) / std, ye) for name, (xe, ye) in evalsets.items()}
    for n in sorted({int(s) for s in args.eval_at if int(s) <= args.samples} | {args.samples}):
        head = fit_linear((ftr[:n] - mean) / std, y[:n], args.seed)
        with torch.no_grad():
            row = {"samples": n, "train_loss": round(float(F.cross_entropy(head((ftr[:n] - mean) / std),
                                                                           torch.from_numpy(y[:n]))), 4)}
            row |= {f"acc_{name}": accuracy(head(f), ye) for name, (f, ye) in fe.items()}
        record(row)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", choices=("scratch", "base-linear"), required=True)
    p.add_argument("--arch", default="toy-rn16")
    p.add_argument("--image-size", type=int, default=48)
    p.add_argument("--object-scale", type=float, default=1.0)
    p.add_argument("--samples", type=int, default=20480, help="training images seen (scratch) or fitted on")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--warmup", type=int, default=20, help="linear LR warm-up steps (scratch)")
    p.add_argument("--eval-at", type=int, nargs="+", default=[2560, 5120, 10240, 20480])
    p.add_argument("--n-eval", type=int, default=800, help="held-out images per size class")
    p.add_argument("--base", default=str(REPO / "models" / "base" / "b0"))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", default=str(REPO / "calibration" / "world_perception.csv"))
    args = p.parse_args()
    if args.object_scale * SIZES["large"] * 2 + 2 > 48:
        raise SystemExit(f"--object-scale {args.object_scale}: a large object would not fit in the image")
    torch.set_num_threads(args.threads)

    evalsets = {}
    for size in SIZES:
        xe, ye, _ = sample_images(np_rng(args.seed, "perception", "eval", size), args.n_eval, args.image_size,
                                  args.object_scale, size)
        evalsets[size] = (xe, ye)
    config = {"probe": "P1", "mode": args.mode, "arch": args.arch, "image_size": args.image_size,
              "object_scale": args.object_scale, "lr": args.lr if args.mode == "scratch" else float("nan"),
              "seed": args.seed,
              "small_px": round(2 * SIZES["small"] * args.image_size / 48 * args.object_scale, 1),
              "large_px": round(2 * SIZES["large"] * args.image_size / 48 * args.object_scale, 1)}
    rows: list[dict] = []
    t0 = time.time()

    def record(row: dict) -> None:
        rows.append({**config, **row, "chance": round(1 / len(SHAPES), 4), "seconds": round(time.time() - t0, 1),
                     "git_commit": git_commit(REPO)})
        print(rows[-1], flush=True)

    (run_scratch if args.mode == "scratch" else run_base_linear)(args, evalsets, record)
    merge_rows(Path(args.out), pd.DataFrame(rows), {k: config[k] for k in KEY})


def merge_rows(out_path: Path, df: pd.DataFrame, key: dict) -> None:
    """Merge ``df`` into ``out_path``: the old rows whose ``key`` columns equal ``key`` (NaN matching NaN) are
    replaced; one writer at a time (two runs may finish together)."""
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with open(out_path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if out_path.exists():
            old = pd.read_csv(out_path)
            same = np.ones(len(old), dtype=bool)
            for k, v in key.items():
                same &= old[k].isna().to_numpy() if isinstance(v, float) and np.isnan(v) else (old[k] == v).to_numpy()
            df = pd.concat([old[~same], df], ignore_index=True)
        with atomic_path(out_path) as tmp:
            df.to_csv(tmp, index=False)


if __name__ == "__main__":
    main()
