"""The optimisation loop shared by pretraining and fine-tuning.

AdamW with linear warm-up then cosine annealing (the NegCLIP recipe, open_clip's ``cosine_lr``), learnable
logit scale clamped to ``[0, ln 100]`` as open_clip does. Steps are counted, not seconds, so a run is
reproducible from its seed.

The same loop runs the tiny CPU pipeline and ViT-B/32 on GPUs; everything beyond the plain loop is opt-in and
leaves a default call (one process, CPU, no checkpoint) computing exactly what it always did:

- **checkpoints** (``checkpoint_dir``/``checkpoint_every``/``resume``, see :mod:`vlcomp.train.checkpoint`):
  resuming gives bitwise the weights and history of an uninterrupted run, because the checkpoint holds every
  piece of state the remaining steps read (weights, AdamW moments, the sampler's generator at the start of the
  epoch and the position in it, torch's RNG, the log window);
- **data parallelism** (torch.distributed initialised, world size W > 1; :mod:`vlcomp.distributed`): every rank
  draws the *same* global batch from the same seeded generator and trains on its shard, features are gathered
  before the loss so the in-batch and hard negatives of the whole batch stay in every rank's loss, and the
  averaged gradients equal the one-process gradients. The run therefore follows the one-process run (to float
  rounding) instead of a different sample stream per rank. Exact only for LayerNorm towers: BatchNorm towers
  (toy-rn*) normalise with per-rank batch statistics, as under DDP without SyncBatchNorm;
- **CUDA** (``device="cuda"``): mixed precision (autocast + GradScaler, ``amp="auto"``) and pinned-memory,
  non-blocking host-to-device copies. None of it is used on the CPU;
- **speed options** of :class:`TrainConfig` (``text_buckets``, ``precision``; see
  :func:`vlcomp.models.encode.clip_forward`): off by default. Text buckets change results at float-rounding
  level, bfloat16 towers by a few per cent of an update (``perf/results/issue13_speed.md``).
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import numbers
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
import torch
from tqdm import tqdm

from .. import distributed as ddp
from ..models.encode import PRECISIONS, clip_forward
from ..models.factory import to_tensor
from . import checkpoint as ckpt
from .batch import Batch, Features, features, split_features
from .data import BatchSampler


@dataclass(frozen=True)
class TrainConfig:
    lr: float
    epochs: float
    batch_size: int
    warmup_steps: int = 50
    weight_decay: float = 0.2
    beta1: float = 0.9
    beta2: float = 0.98
    eps: float = 1e-6
    log_every: int = 20
    text_buckets: int = 0  # encode each text batch in this many length groups (0 or 1: one batch, as always)
    precision: str = "fp32"  # "bf16": both towers under bfloat16 autocast, math attention; the loss in float32

    def __post_init__(self) -> None:
        # a string such as YAML's "1e-3" (PyYAML reads it as str) must be named, not fail on the comparison
        if not (_is_number(self.lr) and self.lr > 0 and math.isfinite(self.lr)):
            raise ValueError(f"lr={self.lr!r}: must be a positive number")
        if not (_is_number(self.epochs) and self.epochs > 0 and math.isfinite(self.epochs)):
            raise ValueError(f"epochs={self.epochs!r}: must be positive")
        if self.warmup_steps < 0 or self.weight_decay < 0:
            raise ValueError(f"warmup_steps={self.warmup_steps}, weight_decay={self.weight_decay}: must be >= 0")
        check_speed_options(self.text_buckets, self.precision)


def check_speed_options(text_buckets: object, precision: object, prefix: str = "") -> None:
    """ValueError naming ``<prefix>text_buckets`` / ``<prefix>precision`` unless they are valid."""
    if isinstance(text_buckets, bool) or not isinstance(text_buckets, int) or text_buckets < 0:
        raise ValueError(f"{prefix}text_buckets={text_buckets!r}: must be an int >= 0 (0: one text batch)")
    if precision not in PRECISIONS:
        raise ValueError(f"{prefix}precision={precision!r}: must be one of {', '.join(PRECISIONS)}")


def _is_number(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def lr_at(step: int, total: int, base_lr: float, warmup: int) -> float:
    """Linear warm-up over ``warmup`` steps, then cosine from ``base_lr`` to 0 at ``total``."""
    if step < warmup:
        return base_lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return 0.5 * (1 + math.cos(math.pi * min(progress, 1.0))) * base_lr


def _param_groups(model: torch.nn.Module, wd: float) -> list[dict]:
    """open_clip's rule: no weight decay on gains, biases, embeddings and the logit scale."""
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        exclude = p.ndim < 2 or "bn" in name or "ln" in name or "bias" in name or "logit_scale" in name or "embedding" in name
        (no_decay if exclude else decay).append(p)
    return [{"params": no_decay, "weight_decay": 0.0}, {"params": decay, "weight_decay": wd}]


class TextCache:
    """Tokenise each unique text once; look rows up per batch."""

    def __init__(self, tokenizer, texts: list[str]) -> None:
        uniq = sorted(set(texts))
        self.index = {t: i for i, t in enumerate(uniq)}
        self.tokens = tokenizer(uniq) if uniq else None

    def __call__(self, texts: list[str]) -> torch.Tensor:
        return self.tokens[[self.index[t] for t in texts]]


@dataclass(frozen=True)
class Runtime:
    """How a run executes, resolved once by :func:`resolve_runtime`: the CUDA-only features are on only with CUDA,
    so on the CPU the loop runs exactly the plain float32 code."""

    device: torch.device
    amp: bool  # torch.autocast(float16) + GradScaler
    pin_memory: bool  # page-locked host batches, copied to the GPU with non_blocking=True
    world_size: int
    rank: int

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def to_device(self, t: torch.Tensor) -> torch.Tensor:
        if t.device == self.device:
            return t  # the CPU path: the tensor itself, no copy
        if self.pin_memory:
            return t.pin_memory().to(self.device, non_blocking=True)
        return t.to(self.device)

    def autocast(self) -> contextlib.AbstractContextManager:
        return torch.autocast("cuda", dtype=torch.float16) if self.amp else contextlib.nullcontext()


def resolve_runtime(device: str | torch.device = "cpu", amp: bool | str = "auto") -> Runtime:
    """``device``: where to train (default CPU). ``amp``: mixed precision, ``"auto"`` = on exactly when the device
    is CUDA; ``True`` elsewhere is an error rather than a silent float32 run. Rank and world size come from
    torch.distributed (1 process when it is not initialised)."""
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as e:
        raise ValueError(f"device={device!r}: not a torch device ({e})") from None
    cuda = dev.type == "cuda"
    if cuda and not torch.cuda.is_available():
        raise ValueError(f"device={device!r}: CUDA is not available on this machine; use device='cpu'")
    if amp == "auto":
        use_amp = cuda
    elif isinstance(amp, bool):
        if amp and not cuda:
            raise ValueError(f"amp=True: mixed precision needs a CUDA device, got device={device!r}")
        use_amp = amp
    else:
        raise ValueError(f"amp={amp!r}: expected 'auto', True or False")
    return Runtime(device=dev, amp=use_amp, pin_memory=cuda, world_size=ddp.world_size(), rank=ddp.rank())


def encode_batch(model: torch.nn.Module, batch: Batch, part: Batch, images: torch.Tensor, tokens: torch.Tensor,
                 *, text_buckets: int = 0, precision: str = "fp32") -> Features:
    """The loss's input for global ``batch``: this rank's ``part`` encoded (``images``: its image rows
    preprocessed, ``tokens``: its texts tokenised, both in block order; one forward pass per tower, or one per
    length group with ``text_buckets``), cut into named blocks and, under torch.distributed, each block
    all-gathered with gradients into the global batch's order (one process: ``part`` is ``batch`` and nothing is
    gathered). ``text_buckets``, ``precision``: see :func:`vlcomp.models.encode.clip_forward`."""
    out = clip_forward(model, images, tokens, text_buckets=text_buckets, precision=precision)
    img, txt = split_features(part, out["image_features"], out["text_features"])
    if ddp.world_size() > 1:
        img, txt = ddp.gather_blocks(img), ddp.gather_blocks(txt)
    return features(batch, img, txt, out["logit_scale"], out.get("logit_bias"))


def _digest(obj: object) -> int:
    """A 62-bit integer digest (fits int64 for a cross-rank comparison)."""
    return int.from_bytes(hashlib.sha256(repr(obj).encode()).digest()[:8], "little") & ((1 << 62) - 1)


def _run_identity(sampler: BatchSampler, cfg: TrainConfig, loss_fn: torch.nn.Module, total: int, amp: bool) -> dict:
    """What a checkpoint must share with the run that resumes it (else the remaining steps would differ)."""
    config = {f"config.{k}": (v.item() if isinstance(v, np.generic) else v) for k, v in asdict(cfg).items()}
    return {"total_steps": total, "batch_size": sampler.batch_size, "steps_per_epoch": sampler.steps_per_epoch,
            "rows": len(sampler.rows), "sampler_digest": ckpt.sampler_digest(sampler), **config,
            "loss": type(loss_fn).__name__, "amp": amp}


def train(
    model: torch.nn.Module,
    tokenizer,
    images: np.ndarray,
    sampler: BatchSampler,
    loss_fn: torch.nn.Module,
    cfg: TrainConfig,
    rng: np.random.Generator,
    on_log: Callable[[int, dict[str, float]], None] | None = None,
    *,
    checkpoint_dir: str | os.PathLike | None = None,
    checkpoint_every: int = 0,
    resume: bool = False,
    device: str | torch.device = "cpu",
    amp: bool | str = "auto",
) -> list[dict[str, float]]:
    """Train in place; returns the logged history (one dict per ``log_every`` steps).

    Options, all off by default (a default call computes bitwise what the loop always computed):

    - ``checkpoint_dir``, ``checkpoint_every``: save the training state every ``checkpoint_every`` steps and
      after the last step to ``checkpoint_dir/checkpoint.pt`` (atomically; only the last one is kept).
    - ``resume``: continue from that checkpoint if there is one, else start afresh (so a stage can always pass
      ``resume=True``). The result is bitwise the uninterrupted run's, history included (but for the timing
      field ``samples_per_s``). A checkpoint of another run (steps, batch size, data, config, loss, model
      shape) raises ValueError naming the file. Without ``resume`` an existing checkpoint is overwritten.
    - ``device``, ``amp``: see :func:`resolve_runtime`. The model is trained on ``device`` and moved back to
      the device it came on. With ``cfg.precision="bf16"`` the float16 mixed precision of ``amp="auto"`` stays
      off (bfloat16 needs no loss scaling); ``amp=True`` with it is an error.

    Under torch.distributed with W > 1 processes the global batch size must be divisible by W; rank 0 alone
    calls ``on_log``, shows progress and writes checkpoints (the others wait at a barrier); every rank returns
    the same history. Checkpoints must be on a filesystem every rank reads.
    """
    if cfg.precision != "fp32":
        if amp is True:
            raise ValueError(f"precision={cfg.precision!r} and amp=True: choose one kind of mixed precision")
        amp = False
    rt = resolve_runtime(device, amp)
    if sampler.batch_size % rt.world_size:
        raise ValueError(f"batch_size={sampler.batch_size} cannot be split evenly over {rt.world_size} processes "
                         f"(world size); choose a global batch size divisible by {rt.world_size}")
    if checkpoint_dir is None:
        if checkpoint_every or resume:
            raise ValueError(f"checkpoint_every={checkpoint_every}, resume={resume}: need a checkpoint_dir")
    elif isinstance(checkpoint_every, bool) or not isinstance(checkpoint_every, int) or checkpoint_every < 1:
        raise ValueError(f"checkpoint_every={checkpoint_every!r}: must be a positive number of steps "
                         f"when checkpoint_dir is set")
    cache = TextCache(tokenizer, sampler.texts())
    size = model.visual.image_size
    size = int(size[0] if isinstance(size, tuple | list) else size)
    total = max(1, int(round(cfg.epochs * sampler.steps_per_epoch)))
    home = next(model.parameters()).device
    model.to(rt.device)
    opt = torch.optim.AdamW(_param_groups(model, cfg.weight_decay), lr=cfg.lr, betas=(cfg.beta1, cfg.beta2), eps=cfg.eps)
    scaler = torch.amp.GradScaler("cuda") if rt.amp else None
    history: list[dict[str, float]] = []
    window: dict[str, list[float]] = {}
    step, skip = 0, 0  # skip: batches of the current epoch already trained on before a resume
    path = None if checkpoint_dir is None else ckpt.checkpoint_file(checkpoint_dir)
    run = {} if path is None else _run_identity(sampler, cfg, loss_fn, total, rt.amp)
    if path is not None:
        if rt.is_main:
            ckpt.remove_stale_temporaries(path.parent)
        if resume and path.exists():
            state = ckpt.load(path, run, model)
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["optimizer"])
            if scaler is not None and state["scaler"]:
                scaler.load_state_dict(state["scaler"])
            rng.bit_generator.state = state["sampler"]["epoch_rng"]
            skip = state["sampler"]["position"]
            torch.set_rng_state(state["torch_rng"])
            if rt.device.type == "cuda" and state["cuda_rng"] is not None:
                torch.cuda.set_rng_state(state["cuda_rng"], rt.device)
            step, history, window = state["step"], state["history"], state["window"]
    if rt.world_size > 1:
        # same weights (as DDP does), same sampler stream and same resume point on every rank, or fail loudly
        ddp.broadcast_module(model)
        ddp.check_same_on_all_ranks({"the sampler generator's state": _digest(ckpt.plain_rng_state(rng)),
                                     "the resumed step": step}, rt.device)
    model.train()
    t0, start = time.time(), step
    bar = tqdm(total=total, initial=step, desc="train", mininterval=5, disable=None if rt.is_main else True)
    # ``or skip``: a resumed run that was already finished still redraws the last epoch's batches, so the caller's
    # generator ends where the uninterrupted run left it
    while step < total or skip:
        epoch_rng = None if path is None else ckpt.plain_rng_state(rng)  # before the epoch draws its permutation
        pos = 0  # batches of this epoch drawn so far
        for batch in sampler.epoch(rng):
            if pos < skip:  # trained on before the resume: drawn again only to advance the generator
                pos += 1
                continue
            if step >= total:
                break
            lr = lr_at(step, total, cfg.lr, cfg.warmup_steps)
            for g in opt.param_groups:
                g["lr"] = lr
            # every rank drew the same global batch; it trains on its own rows (W = 1: the whole batch) and
            # gathers the features of the others' so the loss sees the global batch, negatives included
            part = batch.shard(rt.rank, rt.world_size)
            x = rt.to_device(to_tensor(images[part.image_rows()], size))
            tokens = rt.to_device(cache(part.all_texts()))
            with rt.autocast():
                terms = loss_fn(encode_batch(model, batch, part, x, tokens, text_buckets=cfg.text_buckets,
                                             precision=cfg.precision))
            loss = sum(v for k, v in terms.items() if k.endswith("_loss"))
            if not torch.isfinite(loss):
                raise FloatingPointError(f"loss became {loss.item()} at step {step} (lr={lr:g}); lower the learning rate")
            opt.zero_grad(set_to_none=True)
            if scaler is None:
                loss.backward()
                ddp.average_gradients(model)
                opt.step()
            else:
                scaler.scale(loss).backward()
                ddp.average_gradients(model)  # scaled gradients average to the scaled mean: the scale is shared
                scaler.step(opt)
                scaler.update()
            with torch.no_grad():
                model.logit_scale.clamp_(0, math.log(100))
            for k, v in terms.items():
                window.setdefault(k, []).append(float(v.detach()))
            step += 1
            pos += 1
            bar.update(1)
            if step % cfg.log_every == 0 or step == total:
                rec = {k: float(np.mean(v)) for k, v in window.items()}
                rec.update(step=step, lr=lr, logit_scale=float(model.logit_scale.detach().exp()),
                           samples_per_s=(step - start) * cfg.batch_size / (time.time() - t0))
                history.append(rec)
                window = {}
                if on_log and rt.is_main:
                    on_log(step, rec)
            if path is not None and (step % checkpoint_every == 0 or step == total):
                if rt.is_main:
                    ckpt.save(path, {
                        "format": ckpt.FORMAT, "run": run, "step": step, "model": model.state_dict(),
                        "optimizer": opt.state_dict(), "scaler": {} if scaler is None else scaler.state_dict(),
                        "sampler": {"epoch_rng": epoch_rng, "position": pos}, "torch_rng": torch.get_rng_state(),
                        "cuda_rng": torch.cuda.get_rng_state(rt.device) if rt.device.type == "cuda" else None,
                        "history": history, "window": window,
                    })
                ddp.barrier()
        skip = 0
    bar.close()
    model.eval()
    model.to(home)
    return history
