"""Family ``tsvlc``: OpenAI CLIP + the TSVLC / DAC LoRA, applied through peft and merged.

The released file (an open_clip fork with Microsoft's loralib) is the open_clip training checkpoint, whose state
dict holds every base weight plus the LoRA factors (names and conversion: :func:`convert_tsvlc_lora`). The base
weights were frozen, so the file's non-LoRA entries are checked against ``weights`` (``logit_scale`` excepted:
the training loop clamps it in place to ln 100). Always QuickGELU (fine-tuned from OpenAI CLIP).

The adapters go through the same peft helpers as LoRA training (:mod:`vlcomp.models.lora`: inject, fill,
merge); this module only maps the fork's names and shapes onto them.

AMBIGUOUS (documented choice): TSVLC's LoRA on the patch-embedding ``Conv2d`` factorises the weight reshaped to
``(out*k, in*k)`` (rank ``r*k``), which peft's conv LoRA (rank ``r`` on ``(out, in*k*k)``) cannot represent: that
delta is folded into the base weight directly (exact).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from ....models.lora import STATE_PREFIX, LoraTargets, inject_lora, load_lora_state, merge_lora
from ....models.scorers import ImageTextScorer
from ....models.weights import check_frozen, create_open_clip, read_state_dict, resolve_quick_gelu
from .openclip import open_clip_keys, open_clip_scorer
from .spec import INT, NUM, STR, ZOO, Family, Key

#: ``<module>.in_proj_weight_lora_A`` (the fork's MultiheadAttention) or ``<module>.lora_A`` (loralib layers).
_LORA_KEY = re.compile(r"^(?P<module>.+)\.(?P<param>(?:in|q|k|v)_proj_weight_lora_[AB]|lora_[AB])$")


def is_lora_key(key: str) -> bool:
    return "lora_" in key.rsplit(".", 1)[-1]


@dataclass
class LoraConversion:
    """A TSVLC LoRA checkpoint in peft's terms: attention ``in_proj_weight`` (``parameter_targets``, peft
    ``target_parameters``), every Linear, attention ``out_proj`` included (``module_targets``, peft
    ``target_modules``), their adapter states under peft's saved-adapter names (``parameters``, ``modules``), and
    ``folded``: already-scaled weight deltas added directly (convolutions)."""

    parameters: dict[str, torch.Tensor] = field(default_factory=dict)
    parameter_targets: set[str] = field(default_factory=set)
    modules: dict[str, torch.Tensor] = field(default_factory=dict)
    module_targets: set[str] = field(default_factory=set)
    folded: dict[str, torch.Tensor] = field(default_factory=dict)


def convert_tsvlc_lora(lora: Mapping[str, torch.Tensor], model: nn.Module, *, r: int, alpha: float = 1.0,
                       source: str = "adapter") -> LoraConversion:
    """Map the TSVLC fork's loralib names onto peft's (``P`` = a module path of the open_clip model)::

        fork key [shape]                   peft target                      peft adapter key (base_model.model.)
        P.attn.in_proj_weight_lora_A [r,d]   parameter P.attn.in_proj_weight  P.attn.lora_A.weight
        P.attn.in_proj_weight_lora_B [3d,r]                                   P.attn.lora_B.weight
        P.attn.out_proj.lora_A [r,d]         module P.attn.out_proj           P.attn.out_proj.lora_A.weight
        P.attn.out_proj.lora_B [d,r]         (a Linear)                       P.attn.out_proj.lora_B.weight
        P.mlp.c_fc.lora_A [r,in], _B [out,r] module P.mlp.c_fc (any Linear)   P.mlp.c_fc.lora_A.weight, ..._B...
        visual.conv1.lora_A [r*k, in*k]      folded: W += s * (B @ A).view(W.shape)
        visual.conv1.lora_B [out*k, r*k]

    Both sides compute ``W + s * B @ A`` with ``s = alpha / r``: the fork's ``lora_alpha=1`` gives
    ``s = 0.25`` at ``r=4``; peft's ``LoraConfig(r, lora_alpha)`` the same (no rsLoRA). Attention is adapted as
    a parameter (in_proj) plus a Linear (out_proj), not through peft's ``MultiheadAttention`` layer, which
    applies the out_proj delta twice (:mod:`vlcomp.models.lora`; the hand-computed test catches it). Every A
    needs its B; shapes are checked against ``r`` and the module; any other LoRA-looking key is an error naming
    it and ``source``.
    """
    modules = dict(model.named_modules())
    pairs: dict[tuple[str, str], dict[str, torch.Tensor]] = {}  # (module path, "in_proj" | "module") -> A, B
    for key, t in lora.items():
        m = _LORA_KEY.match(key)
        if m is None:
            raise ValueError(f"{source}: {key!r} is not a TSVLC LoRA key")
        path, param = m["module"], m["param"]
        if param[0] in "qkv":
            raise ValueError(f"{source}: {key!r}: separate q/k/v LoRA (kdim != embed_dim) is not supported")
        mod = modules.get(path)
        if mod is None:
            raise ValueError(f"{source}: LoRA key {key!r}: the model has no module {path!r}")
        kind = "in_proj" if param.startswith("in_proj") else "module"
        if kind == "in_proj" and not isinstance(mod, nn.MultiheadAttention):
            raise ValueError(f"{source}: {key!r}: {path!r} is a {type(mod).__name__}, not a "
                             "MultiheadAttention")
        if kind == "module" and not isinstance(mod, nn.Linear | nn.Conv2d):
            raise ValueError(f"{source}: {key!r}: LoRA on a {type(mod).__name__} ({path!r}) is not supported")
        pairs.setdefault((path, kind), {})[param[-1]] = t
    out = LoraConversion()
    scale = alpha / r
    for (path, kind), ab in sorted(pairs.items()):
        stem = f"{path}.in_proj_weight_lora_" if kind == "in_proj" else f"{path}.lora_"
        for side in "AB":
            if side not in ab:
                raise ValueError(f"{source}: {stem}{'BA'[side == 'B']} has no matching {stem}{side}")
        a, b = ab["A"], ab["B"]
        mod = modules[path]
        if kind == "module" and isinstance(mod, nn.Conv2d):
            k = mod.kernel_size[0]
            want_a, want_b = (r * k, mod.in_channels * k), (mod.out_channels * k, r * k)
            if tuple(a.shape) != want_a or tuple(b.shape) != want_b:
                raise ValueError(f"{source}: {stem}A/B have shapes {tuple(a.shape)}/{tuple(b.shape)}, "
                                 f"expected {want_a}/{want_b} for lora_r={r}")
            out.folded[f"{path}.weight"] = (b.float() @ a.float()).view(mod.weight.shape) * scale
            continue
        if kind == "in_proj":
            d_in, d_out = mod.embed_dim, 3 * mod.embed_dim
            state, targets, target = out.parameters, out.parameter_targets, f"{path}.in_proj_weight"
        else:
            d_in, d_out = mod.in_features, mod.out_features
            state, targets, target = out.modules, out.module_targets, path
        if tuple(a.shape) != (r, d_in) or tuple(b.shape) != (d_out, r):
            raise ValueError(f"{source}: {stem}A/B have shapes {tuple(a.shape)}/{tuple(b.shape)}, expected "
                             f"{(r, d_in)}/{(d_out, r)} for lora_r={r}")
        targets.add(target)
        state[f"{STATE_PREFIX}{path}.lora_A.weight"] = a
        state[f"{STATE_PREFIX}{path}.lora_B.weight"] = b
    return out


def apply_tsvlc_lora(model: nn.Module, lora: Mapping[str, torch.Tensor], *, r: int, alpha: float = 1.0,
                     source: str = "adapter") -> nn.Module:
    """The model with TSVLC's LoRA merged in (``W + alpha/r * B @ A`` everywhere): convolutions folded, the rest
    through peft (:func:`vlcomp.models.lora.inject_lora`, :func:`~vlcomp.models.lora.load_lora_state`,
    :func:`~vlcomp.models.lora.merge_lora`). Returns the plain model, peft wrappers unloaded: inference costs
    nothing extra and the text tower keeps open_clip's fast paths."""
    conv = convert_tsvlc_lora(lora, model, r=r, alpha=alpha, source=source)
    with torch.no_grad():
        for key, delta in conv.folded.items():
            p = model.get_parameter(key)
            p.add_(delta.to(p.dtype))
    targets = LoraTargets(frozenset(conv.module_targets), frozenset(conv.parameter_targets))
    if targets:
        inject_lora(model, targets, r=r, alpha=alpha)
        load_lora_state(model, {**conv.parameters, **conv.modules}, source=source)
        model = merge_lora(model)
    return model


def build_tsvlc(name: str, spec: dict[str, Any], device: torch.device) -> ImageTextScorer:
    qg = resolve_quick_gelu(name, spec["arch"], spec["weights"], openai_derived=True)
    path = spec["adapter"]
    state = read_state_dict(path, what=f"TSVLC adapter of model {name!r}")
    lora = {k: v for k, v in state.items() if is_lora_key(k)}
    if not lora:
        raise ValueError(f"{path}: TSVLC adapter of model {name!r} has no LoRA entries (*lora_A / *lora_B)")
    model, preprocess = create_open_clip(name, spec["arch"], spec["weights"], quick_gelu=qg)
    check_frozen(model, {k: v for k, v in state.items() if not is_lora_key(k)}, path, what="TSVLC adapter")
    model = apply_tsvlc_lora(model, lora, r=spec["lora_r"], alpha=float(spec["lora_alpha"]), source=str(path))
    return open_clip_scorer(name, model.eval(), preprocess, spec, device)


ZOO.add("tsvlc", Family(
    {**open_clip_keys(), "adapter": Key(STR, required=True, path=True),
     "lora_r": Key(INT, required=True, positive=True), "lora_alpha": Key(NUM, default=1, positive=True)},
    build_tsvlc, "OpenAI CLIP + TSVLC LoRA through peft, merged"))
