"""A tiny NegCLIP run (toy-vit-p8, hard negatives and hard images) shared by the resume and distributed tests,
and its digest under the stages' kernel pin (:func:`pinned_digests`) for the speed-option and fingerprint tests.

Also a script, for the kill test: ``python tiny_run.py OUT CHECKPOINT_DIR [--sleep S]`` trains with
``resume=True`` (sleeping ``S`` seconds per logged step, to leave time to be killed) and writes the result to
OUT when it finishes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

from vlcomp.determinism import PIN
from vlcomp.losses import get_loss
from vlcomp.methods import MethodConfig, apply_modifiers
from vlcomp.models.factory import ModelSpec, create_model
from vlcomp.text.tokenizer import get_tokenizer
from vlcomp.train.checkpoint import plain_rng_state
from vlcomp.train.data import BatchSampler, Row
from vlcomp.train.loop import TrainConfig, train

ARCH = "toy-vit-p8"  # LayerNorm only, so data parallelism is exact (BatchNorm statistics would be per rank)
WORDS = "a the red blue green small large circle square star cross arrow above below left right of and".split()
# 16 rows, batch 4: 4 steps per epoch; 2.5 epochs = 10 steps, so checkpoints fall mid-epoch and mid-log-window
CFG = TrainConfig(lr=1e-3, epochs=2.5, batch_size=4, warmup_steps=2, log_every=2)
KILL_CFG = TrainConfig(lr=1e-3, epochs=2.5, batch_size=4, warmup_steps=2, log_every=1)


def data(n_images: int = 8, captions: int = 2, seed: int = 0) -> tuple[np.ndarray, list[Row], np.ndarray]:
    g = np.random.default_rng(seed)
    images = g.integers(0, 256, size=(n_images, 48, 48, 3), dtype=np.uint8)

    def text() -> str:
        return " ".join(g.choice(WORDS, size=int(g.integers(3, 8))))

    rows = [Row(i, text(), tuple(text() for _ in range(3))) for i in range(n_images) for _ in range(captions)]
    hard = np.asarray([[(i + d) % n_images for d in range(1, 4)] for i in range(n_images)])
    return images, rows, hard


def run(cfg: TrainConfig = CFG, *, arch: str = ARCH, n_images: int = 8, seed: int = 7, on_log=None,
        method: MethodConfig | None = None, **options):
    """Train a freshly initialised model (with ``method``'s model modifiers: frozen parts, LoRA adapters, left
    unmerged); returns (model, history, the sampler generator)."""
    images, rows, hard = data(n_images)
    model = create_model(ModelSpec(arch), init_seed=0)
    if method is not None:
        apply_modifiers(model, method, seed=0)
    sampler = BatchSampler(rows, cfg.batch_size, negatives=1, hard_images=hard)
    rng = np.random.default_rng(seed)
    history = train(model, get_tokenizer("world", arch, 32), images, sampler, get_loss("negclip"), cfg, rng,
                    on_log=on_log, **options)
    return model, history, rng


def result(model: torch.nn.Module, history: list[dict], rng: np.random.Generator) -> dict:
    """What must be bitwise equal between runs: weights, history without the timing field, generator state."""
    return {"state": {k: v.detach().clone() for k, v in model.state_dict().items()},
            "history": [{k: v for k, v in rec.items() if k != "samples_per_s"} for rec in history],
            "rng": plain_rng_state(rng)}


ARCHS = ("toy-vit-p8", "toy-rn16")  # the digests' architectures: LayerNorm and BatchNorm

#: Trains, for each setting (CFG's fields to replace), the tiny run of every architecture and prints torch's CPU
#: capability and the digests as JSON. The digest: sha256 (first 16 hex digits) of the final weights, the history
#: without timings and the sampler generator's state.
DIGEST_SCRIPT = r"""
import hashlib, json, sys
import torch
torch.set_num_threads(1)
sys.path.insert(0, sys.argv[1])
from tiny_run import ARCHS, CFG, run
from dataclasses import replace

def digest(model, history, rng):
    h = hashlib.sha256()
    for k, v in sorted(model.state_dict().items()):
        h.update(k.encode())
        h.update(v.detach().contiguous().numpy().tobytes())
    h.update(repr([{k: v for k, v in r.items() if k != "samples_per_s"} for r in history]).encode())
    h.update(repr(rng.bit_generator.state).encode())
    return h.hexdigest()[:16]

out = {"capability": torch.backends.cpu.get_cpu_capability()}
for name, options in json.loads(sys.argv[2]).items():
    cfg = replace(CFG, **options)
    out[name] = {arch: digest(*run(cfg, arch=arch)) for arch in ARCHS}
print(json.dumps(out))
"""
_DIGESTS: dict[str, dict[str, str]] = {}  # this process's digests, by the JSON of a setting
_CAPABILITY: dict[str, str] = {}


def pinned_digests(settings: dict[str, dict]) -> tuple[dict[str, dict[str, str]], str]:
    """``({name: {arch: digest}}, capability)``: the digests of the tiny run with each setting of ``settings``
    (CFG's fields to replace) per architecture of ARCHS, trained in a subprocess under the stages' kernel pin with
    one thread (whatever the calling process runs), and the CPU capability torch ran there. A setting is trained
    once per process, whichever test asks for it first."""
    keys = {name: json.dumps(options, sort_keys=True) for name, options in settings.items()}
    todo = sorted({key for key in keys.values() if key not in _DIGESTS})
    if todo or not _CAPABILITY:
        env = {**os.environ, **PIN, "OMP_NUM_THREADS": "1"}
        arg = json.dumps({key: json.loads(key) for key in todo})
        proc = subprocess.run([sys.executable, "-c", DIGEST_SCRIPT, str(Path(__file__).parent), arg],
                              env=env, capture_output=True, text=True, timeout=600, check=True)
        got = json.loads(proc.stdout.strip().splitlines()[-1])
        _CAPABILITY["capability"] = got.pop("capability")
        _DIGESTS.update(got)
    return {name: _DIGESTS[key] for name, key in keys.items()}, _CAPABILITY["capability"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("checkpoint_dir")
    ap.add_argument("--sleep", type=float, default=0.0)
    a = ap.parse_args()
    torch.set_num_threads(1)  # as tests/conftest.py: same kernels, same bits

    def slow(step: int, rec: dict) -> None:
        time.sleep(a.sleep)

    out = run(KILL_CFG, on_log=slow, checkpoint_dir=a.checkpoint_dir, checkpoint_every=2, resume=True)
    torch.save(result(*out), a.out + ".tmp")
    os.replace(a.out + ".tmp", a.out)


if __name__ == "__main__":
    main()
