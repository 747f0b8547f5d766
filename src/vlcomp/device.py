"""Which torch device a stage runs on: one rule for training and evaluation."""

from __future__ import annotations

import os


def resolve_device(device: str, *, param: str = "device") -> str:
    """``auto`` -> ``cuda:<LOCAL_RANK>`` (the local rank's GPU under torchrun, ``cuda:0`` alone) when CUDA is
    present, else ``cpu``; an explicit ``cuda...`` on a machine without CUDA is an error naming ``param``."""
    import torch

    if device == "auto":
        return f"cuda:{int(os.environ.get('LOCAL_RANK', '0'))}" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"{param}={device!r}: CUDA is not available on this machine")
    return device
