"""A fingerprint of the float kernels the pipeline runs: which ops give the same bits on this CPU kind and pin.

The stages' outputs are the same bits on every CPU of a kind (:mod:`vlcomp.determinism`), not across kinds: a
whole pretraining run only says *that* two machines differ. The battery here says *where*: a fixed list of the ops
the toy models run (matmuls at the towers' shapes, the ResNet stem's convolutions forward and backward, batch and
layer norm, softmax and attention, GELU, an AdamW step, weight initialisation, numpy's BLAS and ufuncs) and a
20-step training run of the real toy CLIP, each on fixed inputs, each output hashed (sha256 of the tensors' bytes).
Two recordings (two CPU kinds, or two pins on one machine) are compared op by op with :func:`compare`;
``scripts/fingerprint.py`` records and compares, and ``calibration/fingerprint/<cpu kind>.json`` holds the
committed recordings of the default pin (``docs/fingerprint.md``).

Inputs come from ``numpy.random.default_rng`` (integer arithmetic and a portable ziggurat, the same on every CPU),
never from torch's RNG or a global one, so an op's hash depends on the op's kernel alone; torch's own random
kernels are fingerprinted as one op of their own (``init_toy_clip``). Wall times are recorded beside the hashes,
never in them.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from .determinism import PIN, PIN_SWITCH, THREADS_ENV, cpu_model_and_flags, mkl_cbwr_in_force, pin_enabled

FORMAT = 1
#: the toy architecture of ``params.yaml`` ``clip.arch`` (a test keeps the two in step)
TRAIN_ARCH = "toy-rn16"
TRAIN_STEPS = 20
#: rows of the fixed training batch: a quarter of pretraining's 256, so the convolutions and GEMMs run at a
#: pretraining step's shapes but for the batch dimension, and the battery stays a few seconds
TRAIN_BATCH = 64
#: environment variables that choose kernels or threads, recorded when set (informative; the comparison keys are
#: the pin variables)
KERNEL_ENV = (PIN_SWITCH, *PIN, THREADS_ENV, "MKL_ENABLE_INSTRUCTIONS", "MKL_NUM_THREADS", "OMP_NUM_THREADS",
              "OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES")

Array = torch.Tensor | np.ndarray


@dataclass(frozen=True)
class Output:
    """What one op of the battery produced: named arrays (hashed in this order) and, for a training run, the loss
    of every step."""

    arrays: list[tuple[str, Array]]
    losses: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class Op:
    """One entry of the battery: ``run(seed)`` computes it on inputs drawn from ``seed``."""

    name: str
    run: Callable[[int], Output]
    what: str


def digest(arrays: Sequence[tuple[str, Array]]) -> str:
    """sha256 over each array's name, dtype, shape and bytes (C order), in order: equal exactly when every array
    has the same bits."""
    h = hashlib.sha256()
    for name, a in arrays:
        x = a.detach().cpu().contiguous().numpy() if isinstance(a, torch.Tensor) else np.ascontiguousarray(a)
        h.update(f"{name}|{x.dtype.str}|{x.shape}|".encode())
        h.update(x.tobytes())
    return h.hexdigest()


def loss_text(value: float) -> str:
    """A logged loss to 9 decimals: the digits a reader compares between two recordings."""
    return f"{value:.9f}"


# ---- inputs ---------------------------------------------------------------------------------------------------


def _normal(rng: np.random.Generator, *shape: int, scale: float = 1.0) -> torch.Tensor:
    return torch.from_numpy(rng.standard_normal(shape, dtype=np.float32) * np.float32(scale))


def _leaf(rng: np.random.Generator, *shape: int, scale: float = 1.0) -> torch.Tensor:
    return _normal(rng, *shape, scale=scale).requires_grad_(True)


def _grads(*tensors: torch.Tensor, prefix: str = "grad") -> list[tuple[str, torch.Tensor]]:
    return [(f"{prefix}{i}", t.grad) for i, t in enumerate(tensors)]


def _causal_mask(n: int) -> torch.Tensor:
    """open_clip's text mask: ``-inf`` above the diagonal, a float mask added to the attention scores."""
    return torch.full((n, n), float("-inf")).triu_(1)


# ---- the ops ----------------------------------------------------------------------------------------------------


def _matmul(m: int, k: int, n: int, batch: int = 0) -> Callable[[int], Output]:
    def run(seed: int) -> Output:
        rng = np.random.default_rng(seed)
        lead = (batch,) if batch else ()
        a, b = _normal(rng, *lead, m, k), _normal(rng, *lead, k, n, scale=k ** -0.5)
        return Output([("out", a @ b)])

    return run


def _linear_backward(seed: int) -> Output:
    """``F.linear`` forward and backward at the text MLP's shape: the transposed GEMMs of every backward pass."""
    rng = np.random.default_rng(seed)
    x, w, b = _leaf(rng, 256, 64), _leaf(rng, 256, 64, scale=0.125), _leaf(rng, 256)
    y = F.linear(x, w, b)  # [256, 256]
    y.backward(_normal(rng, 256, 256))
    return Output([("out", y), *_grads(x, w, b)])


def _conv(batch: int, c_in: int, c_out: int, size: int, kernel: int, stride: int) -> Callable[[int], Output]:
    def run(seed: int) -> Output:
        rng = np.random.default_rng(seed)
        x = _leaf(rng, batch, c_in, size, size)
        w = _leaf(rng, c_out, c_in, kernel, kernel, scale=(c_in * kernel * kernel) ** -0.5)
        y = F.conv2d(x, w, stride=stride, padding=kernel // 2)
        y.backward(_normal(rng, *y.shape))
        return Output([("out", y), *_grads(x, w)])

    return run


def _batch_norm(seed: int) -> Output:
    """Train-mode batch norm after the stem (statistics of the batch, running statistics updated), and its
    backward."""
    rng = np.random.default_rng(seed)
    x, weight, bias = _leaf(rng, 16, 16, 24, 24, scale=2.0), _leaf(rng, 16), _leaf(rng, 16)
    running_mean, running_var = torch.zeros(16), torch.ones(16)
    y = F.batch_norm(x, running_mean, running_var, weight, bias, training=True, momentum=0.1, eps=1e-5)
    y.backward(_normal(rng, *y.shape))
    return Output([("out", y), ("running_mean", running_mean), ("running_var", running_var),
                   *_grads(x, weight, bias)])


def _layer_norm(seed: int) -> Output:
    rng = np.random.default_rng(seed)
    x, weight, bias = _leaf(rng, 16, 32, 64, scale=3.0), _leaf(rng, 64), _leaf(rng, 64)
    y = F.layer_norm(x, (64,), weight, bias, eps=1e-5)
    y.backward(_normal(rng, *y.shape))
    return Output([("out", y), *_grads(x, weight, bias)])


def _softmax(seed: int) -> Output:
    """Softmax and log-softmax over attention-score rows, and the CLIP loss's cross-entropy with its backward."""
    rng = np.random.default_rng(seed)
    scores = _normal(rng, 32, 32, 32, scale=4.0)
    logits = _leaf(rng, 64, 64, scale=10.0)
    loss = 0.5 * (F.cross_entropy(logits, torch.arange(64)) + F.cross_entropy(logits.T, torch.arange(64)))
    loss.backward()
    return Output([("softmax", scores.softmax(-1)), ("log_softmax", scores.log_softmax(-1)), ("loss", loss),
                   ("grad", logits.grad)])


def _sdpa(seed: int) -> Output:
    """``scaled_dot_product_attention`` with the text tower's shapes (2 heads of 32 over 32 tokens) and its float
    causal mask, forward and backward."""
    rng = np.random.default_rng(seed)
    q, k, v = (_leaf(rng, 16, 2, 32, 32) for _ in range(3))
    y = F.scaled_dot_product_attention(q, k, v, attn_mask=_causal_mask(32))
    y.backward(_normal(rng, *y.shape))
    return Output([("out", y), *_grads(q, k, v)])


def _multihead_attention(seed: int) -> Output:
    """One ``nn.MultiheadAttention`` as in the toy text tower (width 64, 2 heads, batch first, causal mask,
    ``need_weights=False``), forward and backward."""
    rng = np.random.default_rng(seed)
    attn = torch.nn.MultiheadAttention(64, 2, batch_first=True)
    with torch.no_grad():
        for p in attn.parameters():
            p.copy_(_normal(rng, *p.shape, scale=0.125))
    x = _leaf(rng, 16, 32, 64)
    y, _ = attn(x, x, x, need_weights=False, attn_mask=_causal_mask(32))
    y.backward(_normal(rng, *y.shape))
    return Output([("out", y), ("grad_x", x.grad), *((f"grad_{n}", p.grad) for n, p in attn.named_parameters())])


def _gelu(seed: int) -> Output:
    rng = np.random.default_rng(seed)
    x = _leaf(rng, 512, 256, scale=2.0)
    y = F.gelu(x)
    y.backward(_normal(rng, *y.shape))
    return Output([("out", y), ("grad", x.grad)])


def _adamw(seed: int) -> Output:
    """Three AdamW steps with the pipeline's betas, eps and weight decay on a weight and a bias."""
    rng = np.random.default_rng(seed)
    w, b = _leaf(rng, 64, 64, scale=0.1), _leaf(rng, 64, scale=0.1)
    opt = torch.optim.AdamW([{"params": [w], "weight_decay": 0.1}, {"params": [b], "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.98), eps=1e-6)
    for _ in range(3):
        w.grad, b.grad = _normal(rng, 64, 64), _normal(rng, 64)
        opt.step()
    state = [(f"{k}{i}", opt.state[p][k]) for i, p in enumerate((w, b)) for k in ("exp_avg", "exp_avg_sq")]
    return Output([("w", w), ("b", b), *state])


def _init_toy_clip(seed: int) -> Output:
    """The toy CLIP's random initialisation (torch's normal and uniform kernels under ``init_seed``)."""
    from .models.factory import ModelSpec, create_model

    model = create_model(ModelSpec(TRAIN_ARCH), init_seed=seed)
    return Output(sorted(model.state_dict().items()))


def _numpy_blas(seed: int) -> Output:
    """numpy's matmul (its own OpenBLAS, which picks kernels by CPU model, unlike the torch stack's pin)."""
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((256, 64)), rng.standard_normal((64, 64))
    return Output([("f64", a @ b), ("f32", a.astype(np.float32) @ b.astype(np.float32))])


def _numpy_ufuncs(seed: int) -> Output:
    """numpy's transcendental ufuncs (SIMD-dispatched by CPU features at run time)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(4096) * 3
    out = []
    for dtype in (np.float32, np.float64):
        v = x.astype(dtype)
        out += [(f"{f.__name__}_{np.dtype(dtype).name}", f(v)) for f in (np.exp, np.tanh, np.sin)]
        out.append((f"log_{np.dtype(dtype).name}", np.log(np.abs(v) + 1)))
    return Output(out)


def _train_toy_clip(seed: int, *, batch: int = TRAIN_BATCH, steps: int = TRAIN_STEPS) -> Output:
    """``steps`` steps of the pipeline's training loop (:func:`vlcomp.train.loop.train`: AdamW, warm-up and
    cosine schedule, clamped logit scale) on the toy CLIP with the CLIP loss, over ``batch`` fixed synthetic
    images and world-vocabulary captions: one batch an epoch, reshuffled each step. The weights after the last
    step are hashed; every step's loss is logged."""
    from .losses import get_loss
    from .models.factory import ModelSpec, create_model, image_size
    from .text.tokenizer import get_tokenizer
    from .train.data import BatchSampler, Row
    from .train.loop import TrainConfig, train
    from .world.concepts import world_words

    rng = np.random.default_rng(seed)
    model = create_model(ModelSpec(TRAIN_ARCH), init_seed=seed)
    size = image_size(model)
    images = rng.integers(0, 256, size=(batch, size, size, 3), dtype=np.uint8)
    words = world_words()
    rows = [Row(i, " ".join(rng.choice(words, size=int(rng.integers(3, 12))))) for i in range(batch)]
    cfg = TrainConfig(lr=1e-3, epochs=steps, batch_size=batch, warmup_steps=5, weight_decay=0.1, log_every=1)
    history = train(model, get_tokenizer("world", TRAIN_ARCH, 32), images, BatchSampler(rows, batch),
                    get_loss("clip"), cfg, rng)
    return Output(sorted(model.state_dict().items()), [rec["contrastive_loss"] for rec in history])


def _ops() -> list[Op]:
    return [
        Op("matmul_256x64x64", _matmul(256, 64, 64), "text tower linear: 8 captions x 32 tokens, width 64"),
        Op("matmul_256x64x256", _matmul(256, 64, 256), "text MLP up-projection"),
        Op("matmul_256x256x64", _matmul(256, 256, 64), "text MLP down-projection"),
        Op("matmul_32x512x512", _matmul(32, 512, 512), "ResNet attention pool projections (2 tokens x 16 images)"),
        Op("matmul_64x64x64", _matmul(64, 64, 64), "CLIP logits, 64 image x 64 caption features"),
        Op("matmul_100x77x33", _matmul(100, 77, 33), "an odd shape: the GEMM's edge handling"),
        Op("bmm_32x32x32x32", _matmul(32, 32, 32, batch=32), "batched attention scores, 16 captions x 2 heads"),
        Op("linear_backward", _linear_backward, "F.linear forward + backward, 256 x 64 -> 256"),
        Op("conv2d_stem", _conv(16, 3, 8, 48, 3, 2), "ResNet stem conv 3 -> 8, 3x3 stride 2, forward + backward"),
        Op("conv2d_3x3", _conv(16, 16, 16, 12, 3, 1), "bottleneck conv 16 -> 16, 3x3, forward + backward"),
        Op("conv2d_1x1", _conv(16, 16, 64, 12, 1, 1), "bottleneck conv 16 -> 64, 1x1, forward + backward"),
        Op("batch_norm_train", _batch_norm, "train-mode batch norm with running statistics, + backward"),
        Op("layer_norm", _layer_norm, "layer norm over width 64, + backward"),
        Op("softmax_cross_entropy", _softmax, "softmax, log-softmax, CLIP cross-entropy + backward"),
        Op("sdpa_causal", _sdpa, "scaled_dot_product_attention with a float causal mask, + backward"),
        Op("multihead_attention", _multihead_attention, "nn.MultiheadAttention as in the text tower, + backward"),
        Op("gelu", _gelu, "exact (erf) GELU, + backward"),
        Op("adamw", _adamw, "three AdamW steps (moments and weights)"),
        Op("init_toy_clip", _init_toy_clip, f"{TRAIN_ARCH}'s random initialisation (torch's RNG kernels)"),
        Op("numpy_blas", _numpy_blas, "numpy matmul, float64 and float32 (OpenBLAS)"),
        Op("numpy_ufuncs", _numpy_ufuncs, "numpy exp, tanh, sin, log, float32 and float64"),
        Op("train_toy_clip", _train_toy_clip,
           f"{TRAIN_STEPS} training steps of {TRAIN_ARCH}, batch {TRAIN_BATCH}, CLIP loss, AdamW: final weights"),
    ]


#: the battery, in the order it runs
OPS: dict[str, Op] = {op.name: op for op in _ops()}


# ---- where the bits come from ---------------------------------------------------------------------------------


def _cpu_vendor() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "vendor_id":
                    return value.strip()
    except OSError:
        pass
    return platform.machine()


def cpu_kind() -> dict[str, str]:
    """What names a CPU kind for the fingerprint: vendor, model name and instruction-set flags
    (:func:`vlcomp.determinism.cpu_model_and_flags`), torch's version and the kernels torch runs now."""
    model, flags = cpu_model_and_flags()
    return {"vendor": _cpu_vendor(), "model": model, "flags": " ".join(flags),
            "torch": torch.__version__.split("+")[0], "torch_capability": torch.backends.cpu.get_cpu_capability()}


def kind_text(kind: Mapping[str, str]) -> str:
    """One line for a reader: ``AuthenticAMD AMD EPYC | avx2 ... | torch 2.14.1, AVX2 kernels``."""
    return (f"{kind['vendor']} {kind['model']} | {kind['flags']} | torch {kind['torch']}, "
            f"{kind['torch_capability']} kernels")


_ISA_TAGS = (("avx512f", "avx512"), ("avx2", "avx2"), ("avx", "avx"), ("sse4_2", "sse42"))


def kind_slug(kind: Mapping[str, str]) -> str:
    """The recording's file stem: model name, the widest vector ISA and the torch version, e.g.
    ``amd-epyc-avx512-torch2.14.1`` (the full flags are checked inside the file)."""
    model = re.sub(r"\((r|tm|c)\)|\b(cpu|processor)\b", " ", kind["model"].lower())
    model = re.sub(r"[^a-z0-9.]+", "-", model).strip("-.") or "cpu"
    flags = kind["flags"].split()
    isa = next((tag for flag, tag in _ISA_TAGS if flag in flags), "x86-64")
    return f"{model}-{isa}-torch{kind['torch']}"


def _openblas_core() -> str:
    try:
        import threadpoolctl
    except ImportError:
        return ""
    cores = [i.get("architecture", "") for i in threadpoolctl.threadpool_info() if i.get("internal_api") == "openblas"]
    return ",".join(sorted(set(cores)))


def numerics(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The settings the bits depend on besides the CPU: the pin and what the libraries made of it, threads."""
    env = os.environ if environ is None else environ
    return {"cpu_pin": "on" if pin_enabled(env) else "off", **{k: env.get(k, "") for k in PIN},
            "mkl_cbwr_in_force": mkl_cbwr_in_force(), "torch_threads": torch.get_num_threads(),
            "numpy": np.__version__, "openblas_core": _openblas_core()}


#: the fields of :func:`numerics` that name a recording (the others are informative)
NUMERICS_KEYS = ("cpu_pin", *PIN, "torch_threads")


# ---- running and comparing -------------------------------------------------------------------------------------


def run_op(name: str, seed: int = 0) -> tuple[str, list[float], float, float]:
    """``(sha256, losses, wall seconds, CPU seconds)`` of battery op ``name`` on inputs drawn from ``seed``. The CPU
    seconds (this process's, all threads) are the fairer cost when other work shares the cores."""
    if name not in OPS:
        raise ValueError(f"fingerprint op {name!r}: unknown; ops: {', '.join(OPS)}")
    t0, c0 = time.perf_counter(), time.process_time()
    out = OPS[name].run(seed)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return digest(out.arrays), out.losses, wall, cpu


def _import_heavy_modules() -> None:
    """Import what the ops import (open_clip, the optimiser, the training loop) before the clock starts, so an
    op's time is its computation."""
    import open_clip  # noqa: F401
    import torch.optim  # noqa: F401

    from .losses import clip  # noqa: F401
    from .train import loop  # noqa: F401


def run_battery(names: Sequence[str] | None = None, *, seed: int = 0,
                environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Run the battery (or the ops ``names``) in this process and return its recording: ``format``,
    ``cpu_kind``, ``numerics``, ``environment`` (kernel variables that were set), ``ops`` (name -> sha256),
    ``losses`` (name -> per-step losses to 9 decimals), ``timings`` (name -> wall seconds) and ``cpu_seconds``
    (the two never compared).
    Call it after :func:`vlcomp.determinism.apply` when the recording is to stand for the stages."""
    env = os.environ if environ is None else environ
    _import_heavy_modules()
    settings = numerics(env)
    ops, losses, timings, cpu = {}, {}, {}, {}
    for name in names or list(OPS):
        ops[name], loss, timings[name], cpu[name] = run_op(name, seed)
        if loss:
            losses[name] = [loss_text(v) for v in loss]
    return {"format": FORMAT, "cpu_kind": cpu_kind(), "numerics": settings,
            "environment": {k: env[k] for k in KERNEL_ENV if env.get(k)}, "seed": seed, "ops": ops,
            "losses": losses, "timings": {k: round(v, 4) for k, v in timings.items()},
            "cpu_seconds": {k: round(v, 4) for k, v in cpu.items()}}


#: the fields of a recording that measure time, not bits
TIMING_FIELDS = ("timings", "cpu_seconds")


def hashed_part(recording: Mapping[str, Any]) -> dict[str, Any]:
    """What two recordings of the same CPU kind and pin must share: everything but the timings."""
    return {k: v for k, v in recording.items() if k not in TIMING_FIELDS}


def write_recording(recording: Mapping[str, Any], path: str | os.PathLike) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(recording, indent=1, sort_keys=False) + "\n")


def load_recording(path: str | os.PathLike) -> dict[str, Any]:
    """A recording written by :func:`write_recording`, or ValueError naming the file and what is wrong."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: fingerprint recording not found") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: not a fingerprint recording (invalid JSON: {e})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a fingerprint recording (expected a JSON object)")
    if data.get("format") != FORMAT:
        raise ValueError(f"{path}: fingerprint format {data.get('format')!r}, this code reads format {FORMAT}")
    for key, kind in (("cpu_kind", dict), ("numerics", dict), ("ops", dict), ("losses", dict)):
        if not isinstance(data.get(key), kind):
            raise ValueError(f"{path}: field {key!r} missing or not a JSON object")
    bad = [k for k, v in data["ops"].items() if not (isinstance(v, str) and re.fullmatch(r"[0-9a-f]{64}", v))]
    if bad:
        raise ValueError(f"{path}: ops {bad[:3]} have no sha256 hex digest")
    missing = [k for k in ("vendor", "model", "flags", "torch", "torch_capability") if k not in data["cpu_kind"]]
    if missing:
        raise ValueError(f"{path}: cpu_kind lacks {missing}")
    return data


@dataclass(frozen=True)
class Comparison:
    """Op by op, a recording against a reference: ``differ`` (same op, other bits), ``same``, and ops only one
    of them ran; ``loss_departs`` the first step (1-based) whose logged loss differs, per training run;
    ``identity`` the CPU-kind and pin fields that differ (why the bits may differ)."""

    same: list[str]
    differ: list[str]
    only_reference: list[str]
    only_current: list[str]
    loss_departs: dict[str, int]
    identity: dict[str, tuple[Any, Any]]

    @property
    def identical(self) -> bool:
        return not (self.differ or self.only_reference or self.only_current or self.loss_departs)


def identity(recording: Mapping[str, Any]) -> dict[str, Any]:
    """The fields that name a recording: its CPU kind and its pin (a recording stands for exactly these)."""
    return {**{f"cpu_kind.{k}": v for k, v in recording["cpu_kind"].items()},
            **{f"numerics.{k}": recording["numerics"].get(k) for k in NUMERICS_KEYS}}


def compare(reference: Mapping[str, Any], current: Mapping[str, Any]) -> Comparison:
    ref_ops, cur_ops = reference["ops"], current["ops"]
    common = [k for k in cur_ops if k in ref_ops]
    departs = {}
    for name, losses in current["losses"].items():
        ref = reference["losses"].get(name)
        if ref is None:
            continue
        first = next((i + 1 for i, (a, b) in enumerate(zip(ref, losses, strict=False)) if a != b), None)
        if first is None and len(ref) != len(losses):
            first = min(len(ref), len(losses)) + 1
        if first is not None:
            departs[name] = first
    ref_id, cur_id = identity(reference), identity(current)
    return Comparison(same=[k for k in common if ref_ops[k] == cur_ops[k]],
                      differ=[k for k in common if ref_ops[k] != cur_ops[k]],
                      only_reference=[k for k in ref_ops if k not in cur_ops],
                      only_current=[k for k in cur_ops if k not in ref_ops],
                      loss_departs=departs,
                      identity={k: (ref_id.get(k), cur_id.get(k)) for k in sorted({*ref_id, *cur_id})
                                if ref_id.get(k) != cur_id.get(k)})


def report(c: Comparison, reference: Mapping[str, Any], current: Mapping[str, Any]) -> str:
    """The comparison as lines for a terminal."""
    lines = [f"reference: {kind_text(reference['cpu_kind'])}; pin {_pin_text(reference)}",
             f"current:   {kind_text(current['cpu_kind'])}; pin {_pin_text(current)}"]
    lines += [f"  differs in {k}: {a!r} vs {b!r}" for k, (a, b) in c.identity.items()]
    lines.append(f"{len(c.same)} ops give the same bits, {len(c.differ)} depart"
                 + (f": {', '.join(c.differ)}" if c.differ else ""))
    for name, step in c.loss_departs.items():
        ref, cur = reference["losses"][name], current["losses"][name]
        i = step - 1
        shown = f" ({ref[i]} vs {cur[i]})" if i < min(len(ref), len(cur)) else ""
        lines.append(f"{name}: losses depart at step {step}{shown}")
    if c.only_reference:
        lines.append(f"only in the reference: {', '.join(c.only_reference)}")
    if c.only_current:
        lines.append(f"only in the current run: {', '.join(c.only_current)}")
    return "\n".join(lines)


def _pin_text(recording: Mapping[str, Any]) -> str:
    n = recording["numerics"]
    if n.get("cpu_pin") == "off":
        asked = ", ".join(f"{k}={n[k]}" for k in PIN if n.get(k)) or "no kernel variables"
        pin = f"off ({asked})"
    else:
        pin = "on"
    return f"{pin}, MKL runs CNR {n.get('mkl_cbwr_in_force') or '?'}, {n.get('torch_threads')} thread(s)"


def recording_path(root: str | os.PathLike, kind: Mapping[str, str] | None = None) -> Path:
    """Where the committed recording of ``kind`` (default: this machine's) lives under repository ``root``."""
    return Path(root) / "calibration" / "fingerprint" / f"{kind_slug(kind or cpu_kind())}.json"
