"""Reading released weights into open_clip models: checkpoint I/O and the QuickGELU rule.

**Loading.** Checkpoints are read with ``torch.load(weights_only=True)`` or safetensors; nothing is unpickled
freely. ``argparse.Namespace`` is allowed because CoN-CLIP stores its ``args`` that way (a Namespace only
holds attribute values, themselves restricted to weights-only types). A ``state_dict`` / ``model`` wrapper and
a DDP ``module.`` prefix are removed. A missing file is ``FileNotFoundError``; a truncated or unreadable file,
a non-tensor entry, missing or unexpected keys and shape mismatches are ``ValueError``, all naming the file.

**QuickGELU.** OpenAI CLIP was trained with QuickGELU. open_clip's plain ``ViT-B-32`` config builds
``nn.GELU``: given the ``openai`` tag, open_clip 3.x only *warns*; given a checkpoint by path it says
nothing - the bug behind ARO issues #32 / #35 and sugar-crepe #7 (NegCLIP / CE-CLIP numbers shift by points).
:func:`resolve_quick_gelu` forces QuickGELU for a tag whose open_clip pretrained config says ``quick_gelu``
(``openai``) and for ``openai_derived: true`` checkpoints (the real profile's zoo passes ``openai_derived`` for
every CoN-CLIP / TSVLC model). A file without ``openai_derived`` is an error (no silent default); so is
``quick_gelu: false`` with OpenAI-derived weights, and an ``openai_derived`` contradicting the tag.
"""

from __future__ import annotations

import argparse
import logging
import os
import pickle
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from .factory import register_toy_configs

#: Entries of an OpenAI / old open_clip state dict that are not parameters (the OpenAI JIT archive's
#: metadata; a constant causal mask). Dropped before loading.
IGNORED_KEYS = frozenset({"input_resolution", "context_length", "vocab_size", "attn_mask"})
#: Entries a fine-tuning run changes even when every weight is frozen (the logit-scale clamp to ln 100).
UNFROZEN_KEYS = frozenset({"logit_scale", "logit_bias"})
#: Tolerance when checking that a file's frozen entries equal the base weights (fp16 -> fp32 round trips).
FROZEN_RTOL, FROZEN_ATOL = 1e-3, 1e-5
_FILE_SUFFIXES = (".pt", ".pth", ".bin", ".safetensors", ".ckpt")


def is_file_ref(weights: str) -> bool:
    """Whether a ``weights`` value names a file (else it is an open_clip pretrained tag)."""
    return "/" in weights or os.sep in weights or weights.endswith(_FILE_SUFFIXES)


def few_keys(keys: Sequence[str], n: int = 4) -> str:
    """The first ``n`` of ``keys`` (sorted) and how many there are, for error messages."""
    keys = sorted(keys)
    return ", ".join(keys[:n]) + (f", ... ({len(keys)} in all)" if len(keys) > n else "")


# --------------------------------------------------------------------------- reading checkpoints


def read_checkpoint(path: str | Path, *, what: str = "checkpoint") -> Any:
    """The object in a ``.safetensors`` / ``torch.save`` file, read without arbitrary unpickling."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: {what} not found")
    if path.suffix == ".safetensors":
        from safetensors.torch import load_file

        try:
            return load_file(str(path), device="cpu")
        except Exception as e:  # noqa: BLE001 - safetensors raises its own error type for a truncated file
            raise ValueError(f"{path}: cannot read {what} ({type(e).__name__}: {e})") from None
    try:
        with torch.serialization.safe_globals([argparse.Namespace]):
            return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - torch raises many kinds for a truncated or pickled file
        hint = (" (it holds pickled objects other than tensors; refusing to unpickle it)"
                if isinstance(e, pickle.UnpicklingError) else "")
        first = str(e).splitlines()[0] if str(e) else ""
        raise ValueError(f"{path}: cannot read {what}{hint} ({type(e).__name__}: {first})") from None


def read_state_dict(path: str | Path, *, what: str = "checkpoint") -> dict[str, torch.Tensor]:
    """A state dict from a file: unwrapped from ``state_dict`` / ``model``, DDP ``module.`` prefix removed."""
    obj: Any = read_checkpoint(path, what=what)
    if isinstance(obj, Mapping):
        for wrapper in ("state_dict", "model"):
            if isinstance(obj.get(wrapper), Mapping):
                obj = obj[wrapper]
                break
    if not isinstance(obj, Mapping) or not obj:
        raise ValueError(f"{path}: {what} holds no state dict (expected tensors, or a 'state_dict' / 'model' "
                         "entry)")
    for k, v in obj.items():
        if not isinstance(k, str) or not isinstance(v, torch.Tensor):
            raise ValueError(f"{path}: {what} entry {k!r} is a {type(v).__name__}, not a tensor "
                             "(expected a state dict, or one under 'state_dict' / 'model')")
    state = dict(obj)
    if all(k.startswith("module.") for k in state):
        state = {k[len("module."):]: v for k, v in state.items()}
    return {k: v for k, v in state.items() if k not in IGNORED_KEYS}


def load_into(model: nn.Module, state: Mapping[str, torch.Tensor], path: str | Path, *,
              what: str = "checkpoint", allow_missing: Callable[[str], bool] | None = None) -> None:
    """``model.load_state_dict(state)``; missing keys (unless allowed), unexpected keys and shape mismatches
    are a ``ValueError`` naming the file."""
    try:
        missing, unexpected = model.load_state_dict(dict(state), strict=False)
    except RuntimeError as e:
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
        detail = "; ".join(lines[1:4]) or lines[0]
        raise ValueError(f"{path}: {what} does not fit the model ({detail})") from None
    missing = [k for k in missing if not (allow_missing and allow_missing(k))]
    if missing or unexpected:
        parts = [f"{kind} {few_keys(keys)}" for kind, keys in (("missing", missing), ("unexpected", unexpected))
                 if keys]
        raise ValueError(f"{path}: {what} does not fit the model ({'; '.join(parts)})")


def check_frozen(model: nn.Module, state: Mapping[str, torch.Tensor], path: str | Path, *, what: str,
                 hint: str = "") -> None:
    """Entries of ``state`` that training left frozen must equal the model's (the base weights)."""
    own = model.state_dict()
    unexpected = [k for k in state if k not in own]
    if unexpected:
        raise ValueError(f"{path}: {what} has entries the model does not ({few_keys(unexpected)})")
    for k, v in state.items():
        mine = own[k]
        if k in UNFROZEN_KEYS:
            continue
        same = v.shape == mine.shape and torch.allclose(v.float(), mine.float(), rtol=FROZEN_RTOL,
                                                        atol=FROZEN_ATOL)
        if not same:
            diff = (f"{(v.float() - mine.float()).abs().max().item():.3g}" if v.shape == mine.shape
                    else "shape")
            raise ValueError(f"{path}: {what} entry {k!r} differs from the base weights (max |diff| {diff}); "
                             f"wrong base `weights`?{hint}")


# --------------------------------------------------------------------------- QuickGELU and open_clip models


def resolve_quick_gelu(name: str, arch: str, weights: str | None, *, openai_derived: bool | None,
                       quick_gelu: bool | None = None) -> bool:
    """Whether the model must be built with QuickGELU (module docstring). ``weights`` is a tag, a file or
    None; ``openai_derived`` must be given (not None) for a file."""
    import open_clip

    register_toy_configs()
    cfg = open_clip.get_model_config(arch)
    if cfg is None:
        raise ValueError(f"model {name!r}: key 'arch'={arch!r} is not an open_clip architecture")
    config_qg = bool(cfg.get("quick_gelu", False))
    tag_qg: bool | None = None
    if weights is not None and not is_file_ref(weights):
        tag_cfg = open_clip.get_pretrained_cfg(arch, weights)
        if not tag_cfg:
            tags = ", ".join(open_clip.list_pretrained_tags_by_model(arch)) or "(none)"
            raise ValueError(f"model {name!r}: key 'weights'={weights!r} is neither a file nor an open_clip "
                             f"tag for {arch} (tags: {tags})")
        tag_qg = bool(tag_cfg.get("quick_gelu", False))
    elif weights is not None and openai_derived is None:
        raise ValueError(f"model {name!r}: key 'openai_derived' is required when 'weights' is a file "
                         f"({weights}): true for checkpoints fine-tuned from OpenAI CLIP (NegCLIP, CE-CLIP), "
                         "which need QuickGELU")
    if openai_derived is not None and tag_qg is not None and openai_derived != tag_qg:
        act = "QuickGELU" if tag_qg else "GELU"
        raise ValueError(f"model {name!r}: key 'openai_derived'={str(openai_derived).lower()} contradicts "
                         f"'weights'={weights!r}, an open_clip tag trained with {act}")
    needed = bool(openai_derived) or bool(tag_qg)
    if quick_gelu is False and (needed or config_qg):
        why = "the weights were trained with QuickGELU" if needed else "the config is a QuickGELU one"
        raise ValueError(f"model {name!r}: key 'quick_gelu'=false but {why} ({arch}, weights={weights!r}); "
                         "GELU would silently shift every score")
    return needed or config_qg or bool(quick_gelu)


def create_open_clip(name: str, arch: str, weights: str | None, *,
                     quick_gelu: bool) -> tuple[nn.Module, Callable]:
    """An open_clip model + its eval transform. A tag loads through open_clip; a file is read weights-only
    here and must fit exactly."""
    import open_clip

    register_toy_configs()
    is_file = weights is not None and is_file_ref(weights)
    if is_file and not Path(weights).is_file():
        raise FileNotFoundError(f"{weights}: weights of model {name!r} not found (spec key 'weights')")
    state = read_state_dict(weights, what=f"weights of model {name!r}") if is_file else None
    logging.disable(logging.WARNING)  # open_clip's "No pretrained weights loaded": we load the file ourselves
    try:
        model, _, preprocess = open_clip.create_model_and_transforms(
            arch, pretrained=None if is_file else weights, force_quick_gelu=quick_gelu, output_dict=True)
    except RuntimeError as e:
        raise ValueError(f"model {name!r}: open_clip could not load {arch} / {weights!r} ({e}); offline, put "
                         "the weights in the HF cache or give a file") from None
    finally:
        logging.disable(logging.NOTSET)
    if state is not None:
        load_into(model, state, weights, what=f"weights of model {name!r}")
    return model.eval(), preprocess


__all__ = ["FROZEN_ATOL", "FROZEN_RTOL", "IGNORED_KEYS", "UNFROZEN_KEYS", "check_frozen", "create_open_clip",
           "few_keys", "is_file_ref", "load_into", "read_checkpoint", "read_state_dict", "resolve_quick_gelu"]
