"""LoRA on open_clip models through peft, shared by training (a method's model modifier) and loading (the
real profile's TSVLC checkpoints).

An adapted weight computes ``W + alpha / r * B @ A`` (A ``[r, in]``, B ``[out, r]``): peft's
``LoraConfig(r, lora_alpha)``, no rsLoRA, no dropout (peft cannot apply dropout to a parameter target, and TSVLC
uses none).

**Where** (:class:`LoraSpec`, ``methods.<m>.tuning.lora`` in params.yaml): ``towers`` (``image`` = ``visual.*``,
``text`` = the rest; :mod:`vlcomp.models.towers`) and ``layers``:

- ``attn``: every ``nn.MultiheadAttention``, its packed q/k/v ``in_proj_weight`` and its ``out_proj``;
- ``mlp``: every Linear of a block's MLP (open_clip's ``mlp.c_fc`` and ``mlp.c_proj``);
- ``patch_embed``: the ViT patch embedding ``visual.conv1``, through peft's Conv2d LoRA;
- ``conv``: every other Conv2d of a ResNet image tower (the stem's three, each bottleneck's and each downsample
  conv), through peft's Conv2d LoRA; ``attnpool``: the ResNet attention pool's ``q_proj`` / ``k_proj`` / ``v_proj``
  / ``c_proj`` Linears. TSVLC's CyCLIP R50 runs adapt exactly these (catalog §3.6, the reference's ResNet LoRA),
  and the toy profile's ResNet base (``toy-rn16``) takes them where a ViT would take ``patch_embed``.

TSVLC (catalog §3.6, reference code §1.7) adapts all three in both towers at r=4, alpha=1 (scaling 0.25) and
trains nothing else, the logit scale included: ``lora: {towers: [image, text], rank: 4, alpha: 1, layers:
[attn, mlp, patch_embed]}`` with ``freeze: [logit_scale]``. Two differences remain (AMBIGUOUS, documented):
TSVLC's loralib Conv2d LoRA factorises the weight reshaped to ``(out*k, in*k)`` at rank ``r*k``, peft's the weight
as ``(out, in*k*k)`` at rank ``r`` (a smaller update); and TSVLC's attention LoRA initialises both A and B (the
model moves before the first step), peft's A Kaiming-uniform and B zero (step 0 is the base model).
:func:`add_lora` adds the adapters and freezes every base weight of the adapted towers; initialisation draws
from a seeded generator, never the caller's.

**Attention through peft.** torch's ``nn.MultiheadAttention`` has no Linear for q/k/v (``in_proj_weight`` is a
bare parameter) and never calls ``out_proj.forward`` (it reads ``out_proj.weight``). peft's own
``MultiheadAttention`` layer merges both deltas around each forward, but applies the out_proj delta twice, in
forward and in merge (peft 0.21.2; huggingface/peft PR #3774, open). So attention is two peft layers:
``in_proj_weight`` as a ``target_parameters`` entry (peft's ``ParamWrapper``, which parametrises the weight
during the attention's forward) and ``out_proj`` as a ``target_modules`` Linear, whose delta a forward pre-hook
on the attention adds to ``out_proj.weight`` by the same torch parametrisation, removed after the forward
(gradients reach A and B; the base weight is never written). Modules are injected before parameters (wrapping
the attention first would hide ``attn.out_proj`` from peft's name matching); parameter targets are injected
from their module's parent, because peft matches ``target_parameters`` by suffix and
``transformer.resblocks.0.attn.in_proj_weight`` is a suffix of the image tower's
``visual.transformer.resblocks.0.attn.in_proj_weight``.

:func:`merge_lora` folds every delta into its base weight and unloads the wrappers (nested ones too: the
out_proj adapter sits inside the in_proj wrapper), returning the plain open_clip model, its state-dict keys in
their original order: what ``model.pt`` holds and evaluation loads.

**Adapter state names** (:func:`load_lora_state`) are peft's saved-adapter names,
``base_model.model.<path>.lora_A.weight`` / ``lora_B``, ``<path>`` the adapted module of the plain model (the
attention for its ``in_proj_weight``).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.nn.utils import parametrize

from .towers import TOWERS, part_of
from .weights import few_keys

LAYERS = ("attn", "mlp", "patch_embed", "conv", "attnpool")
#: peft's adapter name for every adapter added here.
ADAPTER = "default"
#: The prefix of peft's saved-adapter names (``get_peft_model_state_dict`` of a ``PeftModel``).
STATE_PREFIX = "base_model.model."


@dataclass(frozen=True)
class LoraSpec:
    """``methods.<m>.tuning.lora``: LoRA adapters on ``layers`` of ``towers``, rank ``rank``, scaling
    ``alpha / rank``."""

    towers: tuple[str, ...] = TOWERS
    rank: int = 4  # TSVLC: 4
    alpha: float = 1.0  # TSVLC: 1 (scaling 0.25 at rank 4)
    layers: tuple[str, ...] = ("attn", "mlp")  # of LAYERS; TSVLC adds patch_embed

    def __post_init__(self) -> None:
        for name, allowed in (("towers", TOWERS), ("layers", LAYERS)):
            value = getattr(self, name)
            if isinstance(value, list):
                value = tuple(value)
                object.__setattr__(self, name, value)
            if (not isinstance(value, tuple) or not value or len(set(value)) != len(value)
                    or any(v not in allowed for v in value)):
                raise ValueError(f"{name}={value!r}: must be a non-empty list of distinct names from "
                                 f"{list(allowed)}")
        if isinstance(self.rank, bool) or not isinstance(self.rank, int) or self.rank < 1:
            raise ValueError(f"rank={self.rank!r}: must be a positive integer")
        if (isinstance(self.alpha, bool) or not isinstance(self.alpha, int | float)
                or not (math.isfinite(self.alpha) and self.alpha > 0)):
            raise ValueError(f"alpha={self.alpha!r}: must be a positive number")


@dataclass(frozen=True)
class LoraTargets:
    """What to adapt, by path in the plain model: Linear / Conv2d ``modules`` (peft ``target_modules``) and
    ``MultiheadAttention.in_proj_weight`` ``parameters`` (peft ``target_parameters``)."""

    modules: frozenset[str] = frozenset()
    parameters: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.modules or self.parameters)


def lora_targets(model: nn.Module, spec: LoraSpec) -> LoraTargets:
    """The modules and parameters of ``spec.layers`` in ``spec.towers``; a tower where nothing matches is a
    ``ValueError`` naming ``lora.layers``."""
    modules: set[str] = set()
    parameters: set[str] = set()
    found: dict[str, int] = defaultdict(int)
    for name, mod in model.named_modules():
        tower = part_of(name)
        if tower not in spec.towers:
            continue
        parts = name.split(".")
        if "attn" in spec.layers and isinstance(mod, nn.MultiheadAttention):
            if not mod._qkv_same_embed_dim:
                raise ValueError(f"lora.layers: attn: {name} has separate q/k/v weights (kdim / vdim != "
                                 "embed_dim), which LoRA here does not adapt")
            parameters.add(f"{name}.in_proj_weight")
            modules.add(f"{name}.out_proj")
        elif "mlp" in spec.layers and isinstance(mod, nn.Linear) and len(parts) > 1 and parts[-2] == "mlp":
            modules.add(name)
        elif ("patch_embed" in spec.layers and name == "visual.conv1" and isinstance(mod, nn.Conv2d)
              and mod.kernel_size == mod.stride):
            modules.add(name)
        elif ("conv" in spec.layers and isinstance(mod, nn.Conv2d) and tower == "image"
              and not (name == "visual.conv1" and mod.kernel_size == mod.stride and mod.kernel_size != (1, 1))):
            modules.add(name)
        elif ("attnpool" in spec.layers and isinstance(mod, nn.Linear) and len(parts) > 1
              and parts[-2] == "attnpool"):
            modules.add(name)
        else:
            continue
        found[tower] += 1
    empty = [t for t in spec.towers if not found[t]]
    if empty:
        raise ValueError(f"lora.layers={list(spec.layers)}: no such layer in the {' and '.join(empty)} "
                         f"tower(s) of this {type(model).__name__}")
    return LoraTargets(frozenset(modules), frozenset(parameters))


def add_lora(model: nn.Module, spec: LoraSpec, *, seed: int = 0) -> nn.Module:
    """Add the adapters ``spec`` describes (in place) and freeze every base weight of the adapted towers; the
    other tower and the logit scale keep their ``requires_grad``. A initialised from ``seed``, B zero."""
    targets = lora_targets(model, spec)
    adapted = [p for name, p in model.named_parameters() if part_of(name) in spec.towers]
    inject_lora(model, targets, r=spec.rank, alpha=spec.alpha, seed=seed)
    for p in adapted:
        p.requires_grad_(False)
    return model


# --------------------------------------------------------------------------- peft layers in and out


class _State:
    """What :func:`inject_lora` leaves on a model for :func:`merge_lora`: the out_proj hooks, and each
    adapted module's parameter order (torch's parametrisation re-registers a weight last)."""

    def __init__(self) -> None:
        self.hooks: list[Any] = []
        self.order: dict[nn.Module, list[str]] = {}


class _AddDelta(nn.Module):
    """A parametrisation adding this forward's LoRA delta to a weight."""

    def __init__(self, delta: torch.Tensor) -> None:
        super().__init__()
        self.delta = delta

    def forward(self, weight: torch.Tensor) -> torch.Tensor:
        return weight + self.delta


#: Modules that read adapted Linears' ``.weight`` instead of calling them, and the children concerned: torch's
#: attention reads ``out_proj.weight``; open_clip's ResNet ``AttentionPool2d`` hands ``q_proj``/``k_proj``/
#: ``v_proj``/``c_proj`` weights to ``F.multi_head_attention_forward``. Their deltas are added around the owner's
#: forward (:func:`_weights_on`), as for out_proj (module docstring).
WEIGHT_READERS: dict[str, tuple[str, ...]] = {"MultiheadAttention": ("out_proj",),
                                              "AttentionPool2d": ("q_proj", "k_proj", "v_proj", "c_proj")}


def _weight_read_adapters(owner: nn.Module) -> list[nn.Module]:
    from peft.tuners.tuners_utils import BaseTunerLayer

    # by the class's ancestry: torch's parametrisation (peft's in_proj wrapper) swaps in a subclass during forward
    names = [k.__name__ for k in type(owner).__mro__]
    children = next((WEIGHT_READERS[n] for n in names if n in WEIGHT_READERS), ())
    return [getattr(owner, c) for c in children if isinstance(getattr(owner, c, None), BaseTunerLayer)]


def _weights_on(owner: nn.Module, args: tuple) -> None:
    for layer in _weight_read_adapters(owner):
        if layer.merged or layer.disable_adapters or ADAPTER not in layer.active_adapters:
            continue
        delta = _AddDelta(layer.get_delta_weight(ADAPTER))  # [out, in], differentiable in A and B
        parametrize.register_parametrization(layer.get_base_layer(), "weight", delta, unsafe=True)


def _weights_off(owner: nn.Module, args: tuple, output: Any) -> None:
    for layer in _weight_read_adapters(owner):
        base = layer.get_base_layer()
        if parametrize.is_parametrized(base, "weight"):
            parametrize.remove_parametrizations(base, "weight", leave_parametrized=False)


def _config(r: int, alpha: float, *, modules: list[str] | None = None, parameters: list[str] | None = None):
    import peft

    exact = None if not modules else "^(?:" + "|".join(map(re.escape, modules)) + ")$"  # full names, exactly
    return peft.LoraConfig(r=r, lora_alpha=alpha, lora_dropout=0.0, bias="none", use_rslora=False,
                           target_modules=exact, target_parameters=parameters)


def _inject(config, root: nn.Module) -> None:
    import peft

    peft.inject_adapter_in_model(config, root, adapter_name=ADAPTER)
    if "peft_config" in vars(root):
        del root.peft_config  # peft's bookkeeping: the adapters are managed here


def inject_lora(model: nn.Module, targets: LoraTargets, *, r: int, alpha: float, seed: int = 0) -> nn.Module:
    """Wrap every target in a peft LoRA layer (in place; module docstring): A drawn from a generator seeded with
    ``seed`` (the caller's torch generator is untouched), B zero. No base parameter changes ``requires_grad``."""

    if lora_layers(model):
        raise ValueError("the model already carries LoRA adapters; merge them (merge_lora) before adding others")
    if not targets:
        raise ValueError("no LoRA target given")
    grads = {p: p.requires_grad for p in model.parameters()}
    state = _State()
    for path in sorted(targets.modules | {t.rsplit(".", 1)[0] for t in targets.parameters}):
        mod = model.get_submodule(path)
        state.order[mod] = list(mod._parameters)
    by_parent: dict[str, list[str]] = defaultdict(list)
    for target in sorted(targets.parameters):
        owner, _, param = target.rpartition(".")
        parent, _, child = owner.rpartition(".")
        by_parent[parent].append(f"{child}.{param}")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        if targets.modules:
            _inject(_config(r, alpha, modules=sorted(targets.modules)), model)
        for parent, names in by_parent.items():
            _inject(_config(r, alpha, parameters=names), model.get_submodule(parent))
    got = set(lora_layers(model))
    want = set(targets.modules | targets.parameters)
    if got != want:
        raise ValueError(f"LoRA adapters landed on {few_keys(sorted(got - want)) or 'nothing else'} and missed "
                         f"{few_keys(sorted(want - got)) or 'nothing'}")
    for p in model.parameters():
        if p in grads:
            p.requires_grad_(grads[p])
    for mod in model.modules():
        if _weight_read_adapters(mod):
            state.hooks.append(mod.register_forward_pre_hook(_weights_on))
            state.hooks.append(mod.register_forward_hook(_weights_off, always_call=True))
    model._lora_state = state
    return model


def lora_layers(model: nn.Module) -> dict[str, nn.Module]:
    """The peft LoRA layers of ``model`` by target (path in the plain model; ``<attention>.in_proj_weight`` for
    a parameter target)."""
    from peft.tuners.tuners_utils import BaseTunerLayer

    out = {}
    for name, mod in model.named_modules():
        if isinstance(mod, BaseTunerLayer):
            path = ".".join(p for p in name.split(".") if p != "base_layer")
            param = getattr(mod, "parameter_name", None)
            out[f"{path}.{param}" if param else path] = mod
    return out


def load_lora_state(model: nn.Module, state: Mapping[str, torch.Tensor], *, source: str = "adapter") -> None:
    """Fill every adapter of ``model`` from ``state`` (peft's saved-adapter names, module docstring); a missing,
    unexpected or misshapen entry is a ``ValueError`` naming ``source``."""
    params: dict[str, torch.Tensor] = {}
    for target, layer in lora_layers(model).items():
        path = target.rpartition(".")[0] if getattr(layer, "parameter_name", None) else target
        for side in "AB":
            params[f"{STATE_PREFIX}{path}.lora_{side}.weight"] = getattr(layer, f"lora_{side}")[ADAPTER].weight
    missing, unexpected = sorted(set(params) - set(state)), sorted(set(state) - set(params))
    if missing or unexpected:
        raise ValueError(f"{source}: LoRA weights do not fit the adapters (missing {few_keys(missing) or 'none'}; "
                         f"unexpected {few_keys(unexpected) or 'none'})")
    for key, p in params.items():
        if tuple(state[key].shape) != tuple(p.shape):
            raise ValueError(f"{source}: {key} has shape {tuple(state[key].shape)}, the adapter {tuple(p.shape)}")
    with torch.no_grad():
        for key, p in params.items():
            p.copy_(state[key].to(p.dtype))


def merge_lora(model: nn.Module) -> nn.Module:
    """Fold every adapter into its base weight (``W + alpha/r * B @ A``) and unload peft's wrappers; returns the
    plain model (the same object; base weights keep their ``requires_grad``). A model without adapters is
    returned unchanged."""
    from peft.tuners.lora import ParamWrapper
    from peft.tuners.tuners_utils import BaseTunerLayer

    state = vars(model).pop("_lora_state", None)
    for handle in state.hooks if state else ():
        handle.remove()
    with torch.no_grad():
        while True:
            names = [n for n, m in model.named_modules() if isinstance(m, BaseTunerLayer)]
            outer = [n for n in names if not any(n.startswith(f"{o}.") for o in names)]
            if not outer:
                break
            for name in outer:  # the in_proj wrapper first, then the out_proj adapter it held
                layer = model.get_submodule(name)
                if isinstance(layer, ParamWrapper):
                    base = layer.unload_and_optionally_merge_module(merge=True, safe_merge=False,
                                                                    adapter_names=None)
                else:
                    layer.merge()
                    base = layer.get_base_layer()
                parent, _, child = name.rpartition(".")
                setattr(model.get_submodule(parent), child, base)
    for mod, order in (state.order.items() if state else ()):
        mod._parameters = {k: mod._parameters[k] for k in order}
    return model


__all__ = ["ADAPTER", "LAYERS", "STATE_PREFIX", "LoraSpec", "LoraTargets", "add_lora", "inject_lora",
           "load_lora_state", "lora_layers", "lora_targets", "merge_lora"]
