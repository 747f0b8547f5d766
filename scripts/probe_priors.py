"""Prior-uptake probe (P3 of the toy-world issue, issue 27): can the text tower learn the world's co-occurrence
prior at all, or does NegCLIP fine-tuning just not give it enough steps (or let the image side dominate)?

Why this exists: the toy world has priors (typical colours per shape, ``world.colour_prior``; a typical elevation
order of shapes, ``world.layout_prior``): a text-only reader of the ``coco_train`` scene-graph counts scores well
above chance on the VG-Relation twin and on VG-Attribution's colour cases, and most of NegCLIP's training swap
negatives name the rarer direction. Yet every fine-tuned model's wrong-image control
(``aro/vg_relation/wrong_image_macro_acc``: each case scored on another case's crop, so what survives is a text-side
prior) stays at chance and the caption / swapped-caption cosine at 0.985-0.997. This probe separates the
explanations with four arms (``--arms``), all from chain ``--base``'s pipeline outputs:

  text-only             the base's text tower (``models/<base>/model.pt``) and a linear head on its L2-normalised
                        text feature, score(t) = w . f(t) / |f(t)| (a CLIP whose "image" is one learned vector, so
                        it can hold only a text prior). Trained pairwise on the ``coco_train`` rows NegCLIP trains on
                        (every caption with a mined negative, ``data/mined/negclip-<base>/negatives.json``, one
                        negative drawn uniformly per row and step as NegCLIP's sampler does), logistic loss on the
                        score difference, softplus(score(negative) - score(caption)); tower and head both train.
                        ``--heldout`` of the coco_train images (10 %) are kept out for ``text_pair_acc``.
  text-only-fresh       the same with a randomly initialised text tower: the no-pretraining reference.
  negclip-frozen-image  the base fine-tuned with NegCLIP's loss (``vlcomp.losses`` "negclip") on the pipeline's own
                        NegCLIP batches (``methods.negclip``: rows with a negative, one negative per row, one
                        nearest-neighbour hard image per row: 2B images x 4B texts), the pipeline's recipe
                        (``finetune``: batch 128, warm-up 50, weight decay 0.2, the LR selected for chain b0 in
                        ``models/lr/negclip-<base>/selection.json``, cosine over ``--steps``), with the image tower
                        frozen: no gradient AND kept in eval mode, so its BatchNorm statistics do not move either
                        (the pipeline's ``tuning.freeze: [image]`` alone would leave the loop's ``model.train()``
                        updating them). Only the text tower and the logit scale learn.
  negclip-full          the same with nothing frozen (the pipeline's NegCLIP, longer): the reference.

Both NegCLIP arms draw the same batches (one generator per seed), so they differ only in what is frozen. Their rows
at intermediate ``steps`` are checkpoints of one ``schedule_steps``-long cosine schedule (not separately annealed
runs); the pipeline's ``negclip-<base>s0`` is 341 steps (one epoch). Step 0 is the base itself.

Scoring: the pipeline's VG-Relation and VG-Attribution twins (``data/benchmarks``, :func:`vlcomp.eval.inputs.
read_manifest` with ``root_seed``, each benchmark's own per-item tables and aggregate), so ``*_macro`` is the
benchmark's macro accuracy and ``*_wrong_image`` its own wrong-image control. The text-only arms are scored through
the same engine as a cross scorer that ignores the image (no image is read), so for them ``*_wrong_image`` equals
``*_macro`` by construction.

Columns (one row per arm and evaluation point; a rerun replaces the rows of the same probe, arm, base, seed and
schedule length):

  probe, arm, base, seed  ``P3``, the arm, the chain, the probe's seed (streams derived from the chain's seed with
                          :mod:`vlcomp.seeding`);
  steps, samples          optimiser steps so far; training rows seen (text-only: caption/negative pairs, B a step;
                          NegCLIP: image-caption rows, 2B a step, each with one negative);
  vgr_macro, vgr_wrong_image, vga_macro, vga_wrong_image   the twins' macro accuracy on the own image and on the
                          benchmark's wrong image;
  text_pair_acc           text-only arms: share of held-out coco_train (caption, negative) pairs, every mined
                          negative of every caption of the held-out images, whose caption scores higher (a tie is
                          wrong); empty for the NegCLIP arms;
  vga_colour              VG-Attribution accuracy on its colour cases (micro; where the colour prior lives);
  vgr_text_cosine, vga_text_cosine   mean cosine of a case's true and swapped caption under the text tower;
  train_pair_acc          mean training pair accuracy since the previous row (text-only: score(caption) >
                          score(negative); NegCLIP: the loss's ``hard_negative_acc``, own image);
  schedule_steps, lr      the run's length (its cosine schedule) and peak learning rate of the tower;
  blind_vgr_macro, blind_vga_macro, blind_vga_colour   the blind-text ceiling (``evaluate_blind@blind-text``:
                          ``metrics/blind/blind-text/metrics.json`` and its VG-A per-item table), empty when that
                          output does not exist; ``--refresh-blind`` fills them in for the rows already written;
  seconds, git_commit     wall time of the run so far (beside other work) and the commit.

One torch thread by default. Steps are counted, so a row is reproducible from its seed (but for ``seconds``).

Usage: python scripts/probe_priors.py --arms text-only text-only-fresh negclip-frozen-image negclip-full
       python scripts/probe_priors.py --refresh-blind
"""

from __future__ import annotations

from vlcomp.determinism import pin_environment

pin_environment()  # the stages' CPU kernel pin, before torch runs anything: rows comparable with theirs

import argparse  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from dataclasses import dataclass, replace  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from probe_perception import merge_rows  # noqa: E402 (scripts/ is on sys.path)

from vlcomp.benchmarks import BENCHMARKS  # noqa: E402
from vlcomp.config import chain_seed, load_params  # noqa: E402
from vlcomp.eval.engine import ChoiceTask, EngineOptions, as_tasks, score_task  # noqa: E402
from vlcomp.eval.inputs import read_manifest  # noqa: E402
from vlcomp.generators import read_mined  # noqa: E402
from vlcomp.io import read_json  # noqa: E402
from vlcomp.methods import make_loss, make_sampler, method_config, method_rows  # noqa: E402
from vlcomp.models.encode import encode_text_buckets  # noqa: E402
from vlcomp.models.factory import create_model, to_tensor  # noqa: E402
from vlcomp.models.scorers import toy_scorer  # noqa: E402
from vlcomp.models.towers import freeze  # noqa: E402
from vlcomp.seeding import derive_seed, np_rng  # noqa: E402
from vlcomp.text.tokenizer import get_tokenizer  # noqa: E402
from vlcomp.tracking import git_commit  # noqa: E402
from vlcomp.train.data import BatchSampler, Row  # noqa: E402
from vlcomp.train.finetune import finetune_config  # noqa: E402
from vlcomp.train.loop import TextCache, _param_groups, encode_batch, lr_at  # noqa: E402
from vlcomp.train.recipes import model_spec  # noqa: E402
from vlcomp.world import Split  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PROBE = "P3"
ARMS = ("text-only", "text-only-fresh", "negclip-frozen-image", "negclip-full")
COLUMNS = ("probe", "arm", "base", "seed", "steps", "samples", "vgr_macro", "vgr_wrong_image", "vga_macro",
           "vga_wrong_image", "text_pair_acc", "vga_colour", "vgr_text_cosine", "vga_text_cosine", "train_pair_acc",
           "schedule_steps", "lr", "blind_vgr_macro", "blind_vga_macro", "blind_vga_colour", "seconds", "git_commit")
RUN_KEY = ("probe", "arm", "base", "seed", "schedule_steps")  # the rows a rerun replaces
BLIND_COLUMNS = ("blind_vgr_macro", "blind_vga_macro", "blind_vga_colour")


# --------------------------------------------------------------------------- the text-only arms


def pairwise_logistic_loss(score_true: torch.Tensor, score_neg: torch.Tensor) -> torch.Tensor:
    """Mean of ``-log sigmoid(score_true - score_neg)`` = ``softplus(score_neg - score_true)``: the logistic loss of
    "the caption scores above its negative" (a Bradley-Terry pair)."""
    if score_true.shape != score_neg.shape:
        raise ValueError(f"pairwise loss: {tuple(score_true.shape)} true scores but {tuple(score_neg.shape)} negatives")
    return F.softplus(score_neg - score_true).mean()


class TextHead(torch.nn.Module):
    """A CLIP's text tower and a linear head on its L2-normalised feature: ``score(t) = w . f(t) / |f(t)|`` (no bias:
    it cancels in every comparison). The head starts at 0, so every text starts tied."""

    def __init__(self, clip: torch.nn.Module, dim: int, text_buckets: int = 0) -> None:
        super().__init__()
        self.clip, self.text_buckets = clip, text_buckets
        self.head = torch.nn.Linear(dim, 1, bias=False)
        torch.nn.init.zeros_(self.head.weight)

    def features(self, tokens: torch.Tensor) -> torch.Tensor:
        return encode_text_buckets(self.clip, tokens, self.text_buckets, normalize=True)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(tokens)).squeeze(-1)


def text_model(spec, weights: str | None, init_seed: int, text_buckets: int) -> TextHead:
    """:class:`TextHead` over ``spec``'s CLIP with ``weights`` (None: a random initialisation from ``init_seed``);
    the image tower and the logit scale are frozen (they never enter a text-only score)."""
    clip = create_model(replace(spec, weights=weights), init_seed=None if weights else init_seed)
    freeze(clip, ("image", "logit_scale"))
    tok = get_tokenizer(spec.tokenizer, spec.arch, spec.context_length)
    with torch.no_grad():
        dim = int(encode_text_buckets(clip.eval(), tok(["a"]), 0).shape[-1])
    return TextHead(clip, dim, text_buckets)


def split_rows(rows: Sequence[Row], n_images: int, share: float,
               rng: np.random.Generator) -> tuple[list[Row], list[Row]]:
    """(training rows, held-out rows): the rows of a random ``share`` of the images are held out (whole images, so
    no held-out caption shares an image with a training one)."""
    held = set(rng.permutation(n_images)[: int(round(share * n_images))].tolist())
    return [r for r in rows if r.image not in held], [r for r in rows if r.image in held]


@torch.no_grad()
def text_scores(model: TextHead, tok, texts: Sequence[str], batch: int = 1024) -> dict[str, float]:
    """``{text: score}`` for every unique text (eval mode; the caller restores the mode)."""
    model.eval()
    uniq = sorted(set(texts))
    out: dict[str, float] = {}
    for s in range(0, len(uniq), batch):
        part = uniq[s : s + batch]
        out.update(zip(part, model(tok(part)).tolist(), strict=True))
    return out


def text_pair_accuracy(model: TextHead, tok, rows: Sequence[Row]) -> float:
    """Share of (caption, negative) pairs, every negative of every row, whose caption scores higher (a tie is
    wrong, the VG rule)."""
    pairs = [(r.caption, n) for r in rows for n in r.negatives]
    if not pairs:
        return float("nan")
    s = text_scores(model, tok, [t for p in pairs for t in p])
    return float(np.mean([s[a] > s[b] for a, b in pairs]))


def train_text_only(model: TextHead, cache: Callable[[list[str]], torch.Tensor], rows: Sequence[Row], steps: int,
                    batch_size: int, lr: float, head_lr: float, weight_decay: float, warmup: int,
                    rng: np.random.Generator, on_eval: Callable[[int, list[float]], None] | None = None,
                    eval_every: int = 0) -> list[float]:
    """Pairwise training: each step B rows (epochs of a random permutation, last partial batch dropped, as the
    pipeline's sampler) and one negative per row drawn uniformly; AdamW (the pipeline's groups for the tower, the
    head at ``head_lr`` without decay), linear warm-up then cosine. ``on_eval(step, window)`` is called every
    ``eval_every`` steps and after the last one with the training pair accuracies since the previous call."""
    if len(rows) < batch_size:
        raise ValueError(f"{len(rows)} training rows for a batch of {batch_size}")
    groups = _param_groups(model.clip, weight_decay) + [{"params": list(model.head.parameters()), "weight_decay": 0.0}]
    scale = [1.0] * (len(groups) - 1) + [head_lr / lr]
    opt = torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.98), eps=1e-6)
    window: list[float] = []
    step, per_epoch = 0, len(rows) // batch_size
    model.train()
    while step < steps:
        order = rng.permutation(len(rows))
        for b in range(per_epoch):
            if step >= steps:
                break
            part = [rows[k] for k in order[b * batch_size : (b + 1) * batch_size]]
            negs = [r.negatives[rng.integers(len(r.negatives))] for r in part]
            for g, sc in zip(opt.param_groups, scale, strict=True):
                g["lr"] = lr_at(step, steps, lr, warmup) * sc
            s = model(cache([r.caption for r in part] + negs))
            loss = pairwise_logistic_loss(s[:batch_size], s[batch_size:])
            if not torch.isfinite(loss):
                raise FloatingPointError(f"text-only loss became {loss.item()} at step {step}")
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            window.append(float((s[:batch_size] > s[batch_size:]).float().mean()))
            step += 1
            if on_eval is not None and ((eval_every and step % eval_every == 0) or step == steps):
                on_eval(step, window)
                window = []
                model.train()
    model.eval()
    return window


class TextHeadScorer:
    """A :class:`TextHead` behind the engine's cross-scorer contract: ``score_pairs`` ignores the images and gives
    each text its head score (memoised per string); its ``dual_view`` is the text tower's own normalised features,
    which the VG tasks' text-swap cosine reads."""

    kind = "cross"
    pair_batch = 8192

    def __init__(self, model: TextHead, tokenizer, name: str = "text-only") -> None:
        self.name, self.model, self.tokenizer = name, model, tokenizer
        self._scores: dict[str, float] = {}

    def score_pairs(self, images: Sequence, texts: Sequence[str]) -> torch.Tensor:
        if len(images) != len(texts):
            raise ValueError(f"score_pairs: {len(images)} images but {len(texts)} texts")
        missing = [t for t in dict.fromkeys(texts) if t not in self._scores]
        if missing:
            self._scores.update(text_scores(self.model, self.tokenizer, missing))
        return torch.tensor([self._scores[t] for t in texts], dtype=torch.float32)

    def dual_view(self) -> _TextFeatures:
        return _TextFeatures(self.model, self.tokenizer, self.name)


class _TextFeatures:
    kind = "dual"

    def __init__(self, model: TextHead, tokenizer, name: str) -> None:
        self.model, self.tokenizer, self.name = model, tokenizer, name

    @torch.no_grad()
    def encode_texts(self, texts: Sequence[str]) -> torch.Tensor:
        self.model.eval()
        return torch.cat([self.model.features(self.tokenizer(list(texts[s : s + 1024])))
                          for s in range(0, len(texts), 1024)]) if texts else torch.zeros(0, 0)

    def encode_images(self, images: Sequence) -> torch.Tensor:
        raise ValueError(f"scorer {self.name!r} is text-only: it has no image features")


def _no_image(key: Any) -> None:
    return None


# --------------------------------------------------------------------------- the NegCLIP arms


def set_train_mode(model: torch.nn.Module, frozen_image: bool) -> torch.nn.Module:
    """``model.train()``, then the image tower back to eval mode when it is frozen (BatchNorm statistics fixed)."""
    model.train()
    if frozen_image:
        model.visual.eval()
    return model


def negclip_model(spec, weights: str, frozen_image: bool) -> torch.nn.Module:
    """The base with NegCLIP's trainable parts: everything, or everything but the image tower (no gradient, and
    no optimiser state: :func:`vlcomp.models.towers.freeze`)."""
    model = create_model(replace(spec, weights=weights))
    if frozen_image:
        freeze(model, ("image",))
    return model


def train_negclip(model: torch.nn.Module, tokenizer, images: np.ndarray, sampler: BatchSampler,
                  loss_fn: torch.nn.Module, steps: int, lr: float, rng: np.random.Generator, *, frozen_image: bool,
                  warmup: int = 50, weight_decay: float = 0.2, text_buckets: int = 0, precision: str = "fp32",
                  on_eval: Callable[[int, list[float]], None] | None = None, eval_every: int = 0) -> list[float]:
    """The pipeline's fine-tuning step (:func:`vlcomp.train.loop.train`: its batches, encoding, loss, optimiser
    groups, schedule and logit-scale clamp) for ``steps`` steps, with the image tower kept in eval mode when
    ``frozen_image``. ``on_eval(step, window)`` as in :func:`train_text_only` (``window``: ``hard_negative_acc``)."""
    cache = TextCache(tokenizer, sampler.texts())
    size = model.visual.image_size
    size = int(size[0] if isinstance(size, tuple | list) else size)
    opt = torch.optim.AdamW(_param_groups(model, weight_decay), lr=lr, betas=(0.9, 0.98), eps=1e-6)
    window: list[float] = []
    step = 0
    set_train_mode(model, frozen_image)
    while step < steps:
        for batch in sampler.epoch(rng):
            if step >= steps:
                break
            for g in opt.param_groups:
                g["lr"] = lr_at(step, steps, lr, warmup)
            x = to_tensor(images[batch.image_rows()], size)
            terms = loss_fn(encode_batch(model, batch, batch, x, cache(batch.all_texts()), text_buckets=text_buckets,
                                         precision=precision))
            loss = sum(v for k, v in terms.items() if k.endswith("_loss"))
            if not torch.isfinite(loss):
                raise FloatingPointError(f"NegCLIP loss became {loss.item()} at step {step}")
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            with torch.no_grad():
                model.logit_scale.clamp_(0, math.log(100))
            if "hard_negative_acc" in terms:
                window.append(float(terms["hard_negative_acc"]))
            step += 1
            if on_eval is not None and ((eval_every and step % eval_every == 0) or step == steps):
                on_eval(step, window)
                window = []
                set_train_mode(model, frozen_image)
    model.eval()
    return window


# --------------------------------------------------------------------------- scoring


def colour_mask(items: pd.DataFrame, records: Sequence[dict]) -> np.ndarray:
    """Which VG-Attribution rows are colour cases (the toy twin's ``attribute_kind``; none when it is absent)."""
    kind = [r.get("attribute_kind", "") if isinstance(r, dict) else "" for r in records]
    return items["index"].map(lambda i: kind[int(i)] == "colour").to_numpy(dtype=bool)


def vg_scores(scorer: Any, inputs: dict[str, Any], *, text_only: bool = False) -> dict[str, float]:
    """VG-Relation and VG-Attribution through the engine and each benchmark's own aggregate. ``text_only``: the
    tasks are handed over with a loader that reads no image (the scorer ignores images)."""
    out: dict[str, float] = {}
    for name, short in (("vg_relation", "vgr"), ("vg_attribution", "vga")):
        b = BENCHMARKS.get(name)
        tasks = as_tasks(b.prepare(inputs))
        if text_only:
            tasks = [replace(t, load_image=_no_image, image_file=None) if isinstance(t, ChoiceTask) else t
                     for t in tasks]
        tables = score_task(scorer, tasks, EngineOptions(check_images=not text_only))
        m = b.metrics(tables, inputs)
        p = f"aro/{name}"
        out[f"{short}_macro"] = m[f"{p}/macro_acc"]
        out[f"{short}_wrong_image"] = m.get(f"{p}/wrong_image_macro_acc", float("nan"))
        out[f"{short}_text_cosine"] = m.get(f"{p}/text_swap_cosine", float("nan"))
        if name == "vg_attribution":
            df = tables[name]
            colour = colour_mask(df, read_json(inputs["aro_vg_attribution"]))
            out["vga_colour"] = float(df.loc[colour, "correct"].mean()) if colour.any() else float("nan")
    return {k: round(float(v), 4) for k, v in out.items()}


def blind_ceiling(blind_dir: Path, inputs: dict[str, Any] | None = None) -> dict[str, float]:
    """The blind-text reader's VG-R / VG-A macro (``blind_dir/metrics.json``) and, when its per-item table and
    ``inputs`` are there, its accuracy on VG-A's colour cases; NaN for whatever does not exist."""
    out = dict.fromkeys(BLIND_COLUMNS, float("nan"))
    path = Path(blind_dir) / "metrics.json"
    if not path.is_file():
        return out
    m = read_json(path)
    for col, key in (("blind_vgr_macro", "aro/vg_relation/macro_acc"),
                     ("blind_vga_macro", "aro/vg_attribution/macro_acc")):
        if key in m:
            out[col] = round(float(m[key]), 4)
    items = Path(blind_dir) / "items" / "vg_attribution.parquet"
    if inputs is not None and items.is_file() and inputs.get("aro_vg_attribution"):
        df = pd.read_parquet(items)
        colour = colour_mask(df, read_json(inputs["aro_vg_attribution"]))
        if colour.any():
            out["blind_vga_colour"] = round(float(df.loc[colour, "correct"].mean()), 4)
    return out


# --------------------------------------------------------------------------- rows


def write_rows(out: Path, rows: Sequence[dict]) -> pd.DataFrame:
    """Merge one run's rows into ``out`` (:func:`probe_perception.merge_rows`): the old rows of the same
    :data:`RUN_KEY` are replaced, every other row kept; columns in :data:`COLUMNS` order. Returns what was added."""
    df = pd.DataFrame(list(rows)).reindex(columns=list(COLUMNS))
    keys = {tuple(r[k] for k in RUN_KEY) for r in rows}
    if len(keys) != 1:
        raise ValueError(f"write_rows: the rows belong to {len(keys)} runs ({sorted(keys)}); write one run at a time")
    merge_rows(Path(out), df, {k: rows[0][k] for k in RUN_KEY})
    return df


def refresh_blind(out: Path, blind: dict[str, float]) -> pd.DataFrame:
    """Set the blind-ceiling columns of every P3 row already in ``out`` (the ceiling is one number per file)."""
    df = pd.read_csv(out)
    mine = df["probe"] == PROBE
    for k, v in blind.items():
        df.loc[mine, k] = v
    merge_rows(Path(out), df.loc[mine].reindex(columns=list(COLUMNS)), {"probe": PROBE})
    return df.loc[mine]


# --------------------------------------------------------------------------- main


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--arms", nargs="+", choices=ARMS, default=list(ARMS))
    p.add_argument("--steps", type=int, default=1200, help="NegCLIP arms: optimiser steps (the pipeline: 341)")
    p.add_argument("--text-steps", type=int, default=1200, help="text-only arms: optimiser steps")
    p.add_argument("--eval-every", type=int, default=300)
    p.add_argument("--text-batch", type=int, default=256, help="text-only arms: pairs a step (NegCLIP's rows a step)")
    p.add_argument("--lr", type=float, default=None,
                   help="tower LR (default: the LR selected for NegCLIP on the chain)")
    p.add_argument("--head-lr", type=float, default=0.01, help="text-only arms: the linear head's LR")
    p.add_argument("--heldout", type=float, default=0.1, help="text-only arms: share of coco_train images held out")
    p.add_argument("--params", default=str(REPO / "params.yaml"))
    p.add_argument("--world", default=str(REPO / "data" / "world"))
    p.add_argument("--benchmarks", default=str(REPO / "data" / "benchmarks"))
    p.add_argument("--models", default=str(REPO / "models"))
    p.add_argument("--mined", default=str(REPO / "data" / "mined"))
    p.add_argument("--base", default="b0", help="the chain (its base, mined negatives, selected LR and seed)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--blind", default=str(REPO / "metrics" / "blind" / "blind-text"),
                   help="the blind-text ceiling's output folder (metrics.json); absent: the columns stay empty")
    p.add_argument("--refresh-blind", action="store_true", help="only fill the blind columns of the rows in --out")
    p.add_argument("--out", default=str(REPO / "calibration" / "prior_uptake.csv"))
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    params = load_params(args.params)
    inputs = read_manifest(args.benchmarks, seed=params["root_seed"])
    blind = blind_ceiling(Path(args.blind), inputs)
    if args.refresh_blind:
        print(refresh_blind(Path(args.out), blind).to_string(index=False))
        return
    chain = chain_seed(params, args.base)
    spec = model_spec(params, args.base)
    weights = str(Path(args.models) / "base" / args.base / "model.pt")
    tok = get_tokenizer(spec.tokenizer, spec.arch, spec.context_length)
    method = method_config(params, "negclip")
    fcfg = finetune_config(params["finetune"])
    selection = Path(args.models) / "lr" / f"negclip-{args.base}" / "selection.json"
    lr = args.lr or float(read_json(selection)["selected_lr"])
    batch_size = method.batch_size or fcfg.batch_size
    warmup = method.warmup_steps if method.warmup_steps is not None else fcfg.warmup_steps
    wd = method.weight_decay if method.weight_decay is not None else fcfg.weight_decay
    split = Split(Path(args.world), params["mine"]["negclip"]["split"])
    captions = split.captions()
    mined = read_mined(Path(args.mined) / f"negclip-{args.base}", method.batch.needs(), n_images=len(captions),
                       captions=captions, generator="negclip")
    rows = method_rows(captions, mined, method.batch)
    setup = Setup(args=args, inputs=inputs, blind=blind, chain=chain, spec=spec, weights=weights, tok=tok,
                  method=method, text_buckets=fcfg.text_buckets, precision=fcfg.precision, lr=lr,
                  batch_size=batch_size, warmup=warmup, weight_decay=wd, split=split, n_images=len(captions), rows=rows,
                  mined=mined)
    base_scores: dict[str, float] = {}  # step 0 (the base itself) is the same for both NegCLIP arms: scored once
    for arm in args.arms:
        write_rows(Path(args.out), run_arm(arm, setup, base_scores))


@dataclass(frozen=True)
class Setup:
    """What every arm of one invocation shares: the options, the benchmark inputs, the blind ceiling, the chain's
    seed, base, tokenizer, NegCLIP method and recipe, and the coco_train rows with their mined outputs."""

    args: argparse.Namespace
    inputs: dict[str, Any]
    blind: dict[str, float]
    chain: int
    spec: Any
    weights: str
    tok: Any
    method: Any
    text_buckets: int
    precision: str
    lr: float
    batch_size: int
    warmup: int
    weight_decay: float
    split: Split
    n_images: int
    rows: list[Row]
    mined: dict[str, Any]


def run_arm(arm: str, s: Setup, base_scores: dict[str, float]) -> list[dict]:
    """Train and score one arm; its rows (one per evaluation point)."""
    args, t0, out_rows = s.args, time.time(), []
    text = arm.startswith("text-only")
    steps = args.text_steps if text else args.steps
    common = {"probe": PROBE, "arm": arm, "base": args.base, "seed": args.seed, "schedule_steps": steps, "lr": s.lr}

    def record(step: int, window: list[float], scores: dict[str, float], per_step: int, **extra) -> None:
        row = {**common, "steps": step, "samples": step * per_step, **scores, **extra,
               "train_pair_acc": round(float(np.mean(window)), 4) if window else float("nan"), **s.blind,
               "seconds": round(time.time() - t0, 1), "git_commit": git_commit(REPO)}
        out_rows.append(row)
        print({k: row[k] for k in COLUMNS if k in row}, flush=True)

    if text:
        train_rows, held_rows = split_rows(s.rows, s.n_images, args.heldout,
                                           np_rng(s.chain, "probe_priors", "heldout"))
        model = text_model(s.spec, None if arm == "text-only-fresh" else s.weights,
                           derive_seed(s.chain, "probe_priors", "fresh-init", args.seed), s.text_buckets)
        cache = TextCache(s.tok, [r.caption for r in train_rows] + [n for r in train_rows for n in r.negatives])

        def on_text_eval(step: int, window: list[float]) -> None:
            scores = vg_scores(TextHeadScorer(model, s.tok, arm), s.inputs, text_only=True)
            record(step, window, scores, args.text_batch,
                   text_pair_acc=round(text_pair_accuracy(model, s.tok, held_rows), 4))

        train_text_only(model, cache, train_rows, steps, args.text_batch, s.lr, args.head_lr, s.weight_decay,
                        s.warmup, np_rng(s.chain, "probe_priors", "text", args.seed), on_text_eval, args.eval_every)
        return out_rows
    frozen = arm == "negclip-frozen-image"
    model = negclip_model(s.spec, s.weights, frozen)
    if not base_scores:
        base_scores.update(vg_scores(toy_scorer("base", model, s.tok), s.inputs))
    record(0, [], base_scores, 2 * s.batch_size)

    def on_negclip_eval(step: int, window: list[float]) -> None:
        record(step, window, vg_scores(toy_scorer(arm, model, s.tok), s.inputs), 2 * s.batch_size)

    train_negclip(model, s.tok, s.split.images, make_sampler(s.rows, s.method, s.batch_size, s.mined),
                  make_loss(s.method), steps, s.lr, np_rng(s.chain, "probe_priors", "negclip", args.seed),
                  frozen_image=frozen, warmup=s.warmup, weight_decay=s.weight_decay, text_buckets=s.text_buckets,
                  precision=s.precision, on_eval=on_negclip_eval, eval_every=args.eval_every)
    return out_rows


if __name__ == "__main__":
    main()
