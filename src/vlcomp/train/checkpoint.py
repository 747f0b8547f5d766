"""Training checkpoints: written atomically, only the last one kept, exact to resume.

One file, ``<checkpoint_dir>/checkpoint.pt`` (a ``torch.save`` dict, loadable with ``weights_only=True``)::

    format      1
    run         what identifies the run: total_steps, batch_size, steps_per_epoch, rows, sampler_digest (hash
                of rows, negatives, hard images), config.<field> (the TrainConfig), loss (class name), amp
    step        optimisation steps done
    model       model.state_dict()
    optimizer   optimizer.state_dict() (AdamW moments and step counts)
    scaler      GradScaler.state_dict() with mixed precision, else {}
    sampler     {"epoch_rng": numpy bit-generator state at the start of the current epoch (plain ints/lists),
                 "position": batches of that epoch already drawn}
    torch_rng   torch.get_rng_state() (uint8 tensor); cuda_rng: the CUDA generator's state or None
    history     the logged records so far; window: the per-step values of the log window in progress

Why the epoch start and a position rather than the generator's current state: ``BatchSampler.epoch`` draws the
epoch's permutation first and then, batch by batch, the random negatives and hard images, so the current
state alone cannot rebuild the rest of the epoch. Resuming restores the state at the start of the epoch and
redraws (without training on) the ``position`` batches already used: the generator then sits exactly where
the uninterrupted run had it, at the cost of some numpy draws.

Each save goes to a temporary file beside the checkpoint that is then renamed onto it (``os.replace``, via
:func:`vlcomp.io.atomic_path`): a run killed while saving leaves the previous checkpoint whole (plus a stale
temporary file that the next run removes), and the previous checkpoint is never deleted before the new one is
in place.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..io import atomic_path

FILENAME = "checkpoint.pt"
FORMAT = 1
KEYS = ("format", "run", "step", "model", "optimizer", "scaler", "sampler", "torch_rng", "cuda_rng", "history",
        "window")


def checkpoint_file(directory: str | Path) -> Path:
    return Path(directory) / FILENAME


def plain_rng_state(rng: np.random.Generator) -> dict:
    """The generator's state with numpy arrays as lists (``weights_only`` loading accepts only plain types;
    PCG64's 128-bit integers are plain Python ints)."""

    def plain(obj: Any) -> Any:
        if isinstance(obj, dict):
            return {k: plain(v) for k, v in obj.items()}
        if isinstance(obj, np.ndarray):
            return obj.tolist()
        return obj.item() if isinstance(obj, np.generic) else obj

    return plain(rng.bit_generator.state)


def sampler_digest(sampler) -> str:
    """A short hash of what the sampler draws from (rows, negatives, hard images, grouped units), so a
    checkpoint of other training data is refused."""
    h = hashlib.sha256()
    for r in sampler.rows:
        h.update(repr((r.image, r.caption, r.negatives, r.positives)).encode())
    h.update(repr((sampler.negatives, sampler.positives, sampler.units)).encode())
    if sampler.hard_images is not None:
        hard = np.ascontiguousarray(sampler.hard_images)
        h.update(repr((hard.dtype.str, hard.shape)).encode() + hard.tobytes())
    return h.hexdigest()[:16]


def remove_stale_temporaries(directory: str | Path) -> None:
    """Delete temporary files a killed save left behind (``atomic_path`` names them ``.checkpoint.pt.*.tmp``)."""
    for tmp in Path(directory).glob(f".{FILENAME}.*.tmp"):
        tmp.unlink(missing_ok=True)


def save(path: Path, state: dict) -> None:
    missing = [k for k in KEYS if k not in state]
    if missing:
        raise ValueError(f"{path}: checkpoint state lacks {missing}")
    with atomic_path(path) as tmp:
        torch.save(state, tmp)


def load(path: Path, run: dict, model: torch.nn.Module) -> dict:
    """Read a checkpoint and check it belongs to this run; a ValueError names the file and the mismatch."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - torch raises many kinds for a truncated or foreign file
        raise ValueError(f"{path}: cannot read checkpoint ({type(e).__name__}: {e})") from None
    if not isinstance(state, dict) or state.get("format") != FORMAT or any(k not in state for k in KEYS):
        got = sorted(state) if isinstance(state, dict) else type(state).__name__
        raise ValueError(f"{path}: not a format-{FORMAT} training checkpoint (has {got})")
    for key, want in run.items():
        have = state["run"].get(key)
        if have != want:
            raise ValueError(f"{path}: checkpoint does not match this run: {key} is {have!r} in the checkpoint, "
                             f"{want!r} in this run (delete the checkpoint or use another checkpoint_dir)")
    _check_shapes(path, state["model"], model.state_dict())
    return state


def _check_shapes(path: Path, saved: dict, current: dict) -> None:
    missing, unexpected = sorted(set(current) - set(saved)), sorted(set(saved) - set(current))
    if missing or unexpected:
        raise ValueError(f"{path}: checkpoint does not match the model: missing {missing[:3]}, "
                         f"unexpected {unexpected[:3]}")
    for k, v in current.items():
        if tuple(saved[k].shape) != tuple(v.shape):
            raise ValueError(f"{path}: checkpoint does not match the model: {k} has shape "
                             f"{tuple(saved[k].shape)} in the checkpoint, {tuple(v.shape)} in the model")
