"""Create CLIP models by (architecture, weights) from the architecture registry.

Tiny toy architectures are open_clip JSON configs shipped in ``vlcomp/models/configs`` and registered with
``open_clip.add_model_config``; the real profile uses open_clip's own names (``ViT-B-32`` + ``openai``).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

import numpy as np
import torch

from ..registry import Registry

ARCHITECTURES: Registry = Registry("architecture")

OPENAI_MEAN = (0.48145466, 0.4578275, 0.40821073)
OPENAI_STD = (0.26862954, 0.26130258, 0.27577711)

_registered = False


def _config_dir() -> Path:
    return Path(str(resources.files("vlcomp.models") / "configs"))


def register_toy_configs() -> None:
    """Register the packaged JSON architectures with open_clip (idempotent)."""
    global _registered
    if _registered:
        return
    import open_clip

    open_clip.add_model_config(_config_dir())
    for path in sorted(_config_dir().glob("*.json")):
        ARCHITECTURES.add(path.stem, path)
    _registered = True


@dataclass(frozen=True)
class ModelSpec:
    """What identifies a model: architecture + weights (``None`` = random init, a tag, or a file path)."""

    arch: str
    weights: str | None = None
    tokenizer: str = "world"
    context_length: int = 32


@contextlib.contextmanager
def _seeded(seed: int | None):
    """Run a block with torch's global RNG seeded, restoring the caller's state afterwards."""
    if seed is None:
        yield
        return
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


@contextlib.contextmanager
def _quiet_random_init(active: bool):
    """Silence open_clip's "No pretrained weights loaded" warning where random init is what was asked for."""
    import logging

    if not active:
        yield
        return
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)


def create_model(spec: ModelSpec, *, init_seed: int | None = None) -> torch.nn.Module:
    """Build an open_clip model (``output_dict=True``); load a local state dict when ``weights`` is a path."""
    import open_clip

    register_toy_configs()
    if spec.arch not in ARCHITECTURES and spec.arch not in open_clip.list_models():
        raise ValueError(f"clip.arch={spec.arch!r}: unknown architecture; toy ones: {ARCHITECTURES.names()}")
    weights = spec.weights
    is_file = weights is not None and (weights.endswith((".pt", ".pth", ".safetensors")) or "/" in weights)
    with _seeded(init_seed), _quiet_random_init(weights is None or is_file):
        model = open_clip.create_model(spec.arch, pretrained=None if is_file else weights, output_dict=True)
    if is_file:
        load_checkpoint(model, weights)
    return model


def load_checkpoint(model: torch.nn.Module, path: str | Path) -> None:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: checkpoint not found")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - torch raises many kinds for a truncated file
        raise ValueError(f"{path}: cannot read checkpoint ({type(e).__name__}: {e})") from None
    if isinstance(state, dict) and "state_dict" in state:
        state = state["state_dict"]
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise ValueError(f"{path}: checkpoint does not fit the model (missing {missing[:3]}, unexpected {unexpected[:3]})")


def with_weights(spec: ModelSpec, path: str | Path) -> ModelSpec:
    """``spec`` with its weights read from ``path`` (a pipeline checkpoint)."""
    return replace(spec, weights=str(path))


def save_checkpoint(model: torch.nn.Module, path: str | Path) -> None:
    """``{"state_dict": ...}`` at ``path``, written atomically. The bytes are a function of the weights alone:
    ``torch.save`` to a file names the archive's records after that file (here the atomic write's temporary
    name), so the archive is built in memory (records under ``archive/``) and then written."""
    import io

    from ..io import atomic_path

    buf = io.BytesIO()
    torch.save({"state_dict": model.state_dict()}, buf)
    with atomic_path(path) as tmp:
        Path(tmp).write_bytes(buf.getvalue())


def image_size(model: torch.nn.Module) -> int:
    size = model.visual.image_size
    return int(size[0] if isinstance(size, tuple | list) else size)


def to_tensor(images: np.ndarray, size: int) -> torch.Tensor:
    """uint8 [N, H, W, 3] -> float [N, 3, size, size], CLIP-normalised; resized (bilinear) if needed."""
    if images.dtype != np.uint8 or images.ndim != 4 or images.shape[-1] != 3:
        raise ValueError(f"images: expected uint8 [N, H, W, 3], got {images.dtype} {images.shape}")
    x = torch.from_numpy(np.ascontiguousarray(images)).permute(0, 3, 1, 2).float().div_(255.0)  # [N, 3, H, W]
    if x.shape[-1] != size or x.shape[-2] != size:
        x = torch.nn.functional.interpolate(x, size=(size, size), mode="bilinear", antialias=True, align_corners=False)
    mean = torch.tensor(OPENAI_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(OPENAI_STD).view(1, 3, 1, 1)
    return (x - mean) / std
