"""Stage ``pretrain`` of the paper profile: resolve the pretrained base model instead of training one.

``model`` in the paper profile names an open_clip architecture and its weights: an open_clip tag (``openai``,
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


def check_base_spec(spec: ModelSpec) -> None:
    """``model.weights`` must be given; an OpenAI (QuickGELU) tag needs a QuickGELU architecture."""
    import open_clip

    from ...models.factory import register_toy_configs

    if not spec.weights:
        raise ValueError("model.weights: the paper profile starts from pretrained weights; give an open_clip tag "
                         "(openai) or a state-dict file")
    register_toy_configs()
    cfg = open_clip.get_model_config(spec.arch)
    if cfg is None:
        raise ValueError(f"model.arch={spec.arch!r}: not an open_clip architecture")
    if is_file_ref(spec.weights):
        return
    tag = open_clip.get_pretrained_cfg(spec.arch, spec.weights)
    if not tag:
        tags = ", ".join(open_clip.list_pretrained_tags_by_model(spec.arch)) or "(none)"
        raise ValueError(f"model.weights={spec.weights!r}: not an open_clip tag of {spec.arch} (tags: {tags})")
    if tag.get("quick_gelu", False) and not cfg.get("quick_gelu", False):
        raise ValueError(f"model.arch={spec.arch!r} with model.weights={spec.weights!r}: these weights were trained "
                         f"with QuickGELU but {spec.arch} builds GELU; set model.arch: {spec.arch}-quickgelu")


def expand_weights(spec: ModelSpec) -> ModelSpec:
    """``model.weights`` with ``$VAR`` and ``~`` expanded (an unset variable is an error naming it)."""
    from dataclasses import replace

    if not spec.weights:
        return spec
    from ...config import expand_path

    return replace(spec, weights=expand_path(spec.weights, "model.weights"))


def resolve_base(spec: ModelSpec) -> torch.nn.Module:
    """The base model with its pretrained weights loaded (CPU, eval mode)."""
    spec = expand_weights(spec)
    check_base_spec(spec)
    if is_file_ref(spec.weights):
        model = create_model(ModelSpec(spec.arch, None, spec.tokenizer, spec.context_length), init_seed=0)
        load_into(model, read_state_dict(spec.weights, what="model.weights"), spec.weights, what="model.weights")
        return model.eval()
    try:
        return create_model(spec).eval()
    except RuntimeError as e:  # open_clip cannot fetch the tag offline
        raise ValueError(f"model.weights={spec.weights!r} ({spec.arch}): not in the local open_clip / Hugging Face "
                         f"cache and nothing is downloaded at run time; put the weights in the cache or give a "
                         f"state-dict file ({e})") from None


def base_model(params, world: str, *, base: str | None = None, seed: int = 0, on_log=None
               ) -> tuple[torch.nn.Module, list[dict], str]:
    """Stage ``pretrain@<base>`` (the toy profile's signature): ``(resolved model, empty history, "resolved:
    <weights>")``; ``world``, ``seed`` and ``on_log`` are unused, since nothing is trained. Another base model
    (``base_models``: TSVLC's ViT-B/16 and CyCLIP R50 rows) has no released weights configured here yet: an error
    naming it."""
    from ...config import section
    from ...train.recipes import model_spec

    kind = section(params, f"bases.{base}").get("model") if base is not None else None
    if kind:
        raise ValueError(f"params: bases.{base} is base model {kind!r}; the paper profile resolves only model.weights "
                         "(no released weights are configured for base_models yet)")
    spec = model_spec(params)
    return resolve_base(spec), [], f"resolved: {spec.weights}"
