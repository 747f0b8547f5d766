"""Stage ``pretrain`` of the real profile: resolve the pretrained base model instead of training one.

``model`` in the real profile names an open_clip architecture and its weights: an open_clip tag (``openai``,
read from the local open_clip / Hugging Face cache; nothing is downloaded at run time) or a local state-dict
file. The resolved weights are saved as ``models/base/model.pt`` with ``model.json``, exactly the layout the toy
``pretrain`` stage writes, so mining, fine-tuning and evaluation read the base model the same way in both
profiles.

The QuickGELU pitfall (ARO and SugarCrepe repositories): OpenAI's CLIP weights were trained with QuickGELU,
and open_clip's plain ``ViT-B-32`` config builds GELU, which silently shifts every score. A tag trained with
QuickGELU must therefore be given with the ``-quickgelu`` architecture (``ViT-B-32-quickgelu``), so that every
later stage, which rebuilds the model from ``model.json``'s architecture and the saved file, builds QuickGELU
too. Anything else is an error naming the fix.
"""

from __future__ import annotations

import torch

from ...models.factory import ModelSpec, create_model
from ...models.weights import is_file_ref, load_into, read_state_dict


def check_base_spec(spec: ModelSpec, where: str = "clip") -> None:
    """``<where>.weights`` must be given (``where``: ``clip``, or ``base_models.<family>`` for another base model); an OpenAI (QuickGELU) tag needs a QuickGELU architecture."""
    import open_clip

    from ...models.factory import register_toy_configs

    if not spec.weights:
        raise ValueError(f"{where}.weights: the real profile starts from pretrained weights; give an open_clip tag "
                         "(openai) or a state-dict file")
    register_toy_configs()
    cfg = open_clip.get_model_config(spec.arch)
    if cfg is None:
        raise ValueError(f"{where}.arch={spec.arch!r}: not an open_clip architecture")
    if is_file_ref(spec.weights):
        return
    tag = open_clip.get_pretrained_cfg(spec.arch, spec.weights)
    if not tag:
        tags = ", ".join(open_clip.list_pretrained_tags_by_model(spec.arch)) or "(none)"
        raise ValueError(f"{where}.weights={spec.weights!r}: not an open_clip tag of {spec.arch} (tags: {tags})")
    if tag.get("quick_gelu", False) and not cfg.get("quick_gelu", False):
        raise ValueError(f"{where}.arch={spec.arch!r} with {where}.weights={spec.weights!r}: these weights were trained "
                         f"with QuickGELU but {spec.arch} builds GELU; set {where}.arch: {spec.arch}-quickgelu")


def expand_weights(spec: ModelSpec, where: str = "clip") -> ModelSpec:
    """``<where>.weights`` with ``$VAR`` and ``~`` expanded (an unset variable is an error naming it)."""
    from dataclasses import replace

    if not spec.weights:
        return spec
    from ...config import expand_path

    return replace(spec, weights=expand_path(spec.weights, f"{where}.weights"))


def resolve_base(spec: ModelSpec, where: str = "clip") -> torch.nn.Module:
    """The base model with its pretrained weights loaded (CPU, eval mode); errors name ``<where>.*``."""
    spec = expand_weights(spec, where)
    check_base_spec(spec, where)
    if is_file_ref(spec.weights):
        model = create_model(ModelSpec(spec.arch, None, spec.tokenizer, spec.context_length), init_seed=0)
        load_into(model, read_state_dict(spec.weights, what=f"{where}.weights"), spec.weights,
                  what=f"{where}.weights")
        return model.eval()
    try:
        return create_model(spec).eval()
    except RuntimeError as e:  # open_clip cannot fetch the tag offline
        raise ValueError(f"{where}.weights={spec.weights!r} ({spec.arch}): not in the local open_clip / Hugging Face "
                         f"cache and nothing is downloaded at run time; put the weights in the cache or give a "
                         f"state-dict file ({e})") from None


def base_model(params, world: str, *, base: str | None = None, seed: int = 0, on_log=None
               ) -> tuple[torch.nn.Module, list[dict], str]:
    """Stage ``pretrain@<base>`` (the toy profile's signature): ``(resolved model, empty history, "resolved:
    <weights>")``; ``world``, ``seed`` and ``on_log`` are unused, since nothing is trained. Another base model
    (``bases.<base>.family``: TSVLC's ViT-B/16 and CyCLIP R50 rows) resolves its own released weights,
    ``base_models.<family>.weights`` (an open_clip tag, e.g. ViT-B-16-quickgelu + openai, or a state-dict file, e.g.
    CyCLIP's released R50 checkpoint, whose ``state_dict`` / DDP ``module.`` wrapping is removed); none given is an
    error naming that key."""
    from ...config import section
    from ...train.recipes import model_spec

    family = section(params, f"bases.{base}").get("family") if base is not None else None
    spec = model_spec(params, base)
    if family and not spec.weights:
        raise ValueError(f"params: base_models.{family}.weights is not set: the real profile resolves base model "
                         f"{family!r} (bases.{base}, {spec.arch}) from its released weights, an open_clip tag in the "
                         "local cache or a state-dict file (profiles/real.yaml)")
    return resolve_base(spec, f"base_models.{family}" if family else "clip"), [], f"resolved: {spec.weights}"
