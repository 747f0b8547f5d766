"""The paper profile's model registry ("zoo"): each evaluated model is built from its ``params.yaml`` spec.

``build_scorer(name, spec)`` returns an :class:`~vlcomp.models.scorers.ImageTextScorer`; ``spec["family"]``
picks one of the families registered in :data:`ZOO` (spec keys; ``*`` = required):

- ``openclip``: any open_clip architecture with a pretrained tag or a local checkpoint - OpenAI CLIP
  (``weights: openai``), the released NegCLIP ``negclip.pth`` and CE-CLIP state dicts. Keys: ``arch*``,
  ``weights*`` (tag, file, or null = random init), ``openai_derived`` (required when ``weights`` is a file),
  ``quick_gelu`` (null = resolved), ``tokenizer`` (``open_clip``), ``context_length`` (null = the model's),
  ``image_batch`` (64), ``text_batch`` (256).
- ``conclip``: OpenAI CLIP + a CoN-CLIP ``ckpt_*.pt``. Keys: ``arch*``, ``weights*`` (the base CLIP),
  ``checkpoint*``, ``image_tower`` (``base`` | ``checkpoint``), tokenizer / batch keys as above.
- ``tsvlc``: OpenAI CLIP + the TSVLC / DAC LoRA applied through peft and merged. Keys: ``arch*``, ``weights*``
  (the base), ``adapter*`` (the released checkpoint), ``lora_r*`` (4), ``lora_alpha`` (1), tokenizer / batch.
- ``blip``: ``BlipForImageTextRetrieval`` from a local HF directory, a cross scorer. Keys: ``path*``,
  ``tokenizer`` (a directory; null = ``path``), ``max_length`` (35), ``itm_first_token`` (``enc`` | ``cls``),
  ``k_test`` (128), ``pair_batch`` (32), ``image_batch`` (32), ``text_batch`` (256).
- ``flava``: ``FlavaForPreTraining`` from a local HF directory, a cross scorer. Keys: ``path*``,
  ``tokenizer``, ``max_length`` (77), ``pair_batch``, ``image_batch``, ``text_batch``.

Path-valued keys expand ``$VAR`` / ``~`` like ``paper_inputs``. A spec that is not a mapping, has an unknown
key, misses a required key or holds a value of the wrong type raises ``ValueError`` naming model and key.

**QuickGELU.** OpenAI CLIP was trained with QuickGELU. open_clip's plain ``ViT-B-32`` config builds
``nn.GELU``: given the ``openai`` tag, open_clip 3.x only *warns*; given a checkpoint by path it says
nothing - the bug behind ARO issues #32 / #35 and sugar-crepe #7 (NegCLIP / CE-CLIP numbers shift by points).
:func:`resolve_quick_gelu` forces QuickGELU for a tag whose open_clip pretrained config says ``quick_gelu``
(``openai``), for ``openai_derived: true`` checkpoints and for every ``conclip`` / ``tsvlc`` model. A file
without ``openai_derived`` is an error (no silent default); so is ``quick_gelu: false`` with OpenAI-derived
weights, and an ``openai_derived`` contradicting the tag.

**Loading.** Checkpoints are read with ``torch.load(weights_only=True)`` or safetensors; nothing is unpickled
freely. ``argparse.Namespace`` is allowed because CoN-CLIP stores its ``args`` that way (a Namespace only
holds attribute values, themselves restricted to weights-only types). A ``state_dict`` / ``model`` wrapper and
a DDP ``module.`` prefix are removed. A missing file is ``FileNotFoundError``; a truncated or unreadable file,
a non-tensor entry, missing or unexpected keys and shape mismatches are ``ValueError``, all naming the file.
HF directories load with ``local_files_only=True`` (``weights_only`` for ``.bin``), and missing or unexpected
weights are errors too (transformers would random-initialise them with a mere warning).

What the released files hold:

- NegCLIP ``negclip.pth`` (vinid/neg_clip, an open_clip 1.3 fork) and CE-CLIP (an open_clip 2.10 fork): the
  open_clip training checkpoint ``{"epoch", "name", "state_dict", "optimizer"}``, open_clip key names,
  possibly ``module.``-prefixed. Both were fine-tuned from ``pretrained=openai``.
- CoN-CLIP ``ckpt_5_*.pt``: ``{"model": state_dict, "optimizer": ..., "args": Namespace}``, the state dict
  being the *whole* OpenAI CLIP (``clip.load`` names = open_clip's names) in float32. The image tower was
  frozen (``--lock-image-encoder=on`` in ``run_finetuning.sh``, although ``helpers.py`` defaults to ``off``),
  so its ``visual.*`` entries should equal the base weights. ``image_tower: base`` (default) loads every
  non-``visual.`` entry from the file and keeps the base image tower, after checking that the file's
  ``visual.*`` entries (if any) match it; a mismatch is an error pointing at ``image_tower: checkpoint``
  (load the whole file, as the reference README does).
- TSVLC / DAC (an open_clip fork with Microsoft's loralib): the open_clip training checkpoint, whose state
  dict holds every base weight plus the LoRA factors (names and conversion: :func:`convert_tsvlc_lora`). The
  base weights were frozen, so the file's non-LoRA entries are checked against ``weights`` (``logit_scale``
  excepted: the training loop clamps it in place to ln 100).
- BLIP / FLAVA: HF-format directories (``config.json``, ``model.safetensors`` or ``pytorch_model.bin``, the
  tokenizer files), e.g. ``Salesforce/blip-itm-base-coco`` and ``facebook/flava-full`` saved locally.

**Scores** (ARO's wrappers ``model_zoo/blip_models.py`` and ``model_zoo/flava.py``):

- BLIP: ``itm_head(text_encoder(ids with [ENC] first, image tokens))[:, 1]`` + the ITC cosine of
  ``vision_proj`` / ``text_proj`` of the [CLS] tokens; text padded / truncated to ``max_length=35``; images
  resized to the config's size (384) bicubic, no crop, CLIP mean/std. ``dual_view()`` = the ITC features;
  retrieval re-ranks the ITC top ``k_test`` (``retrieval_mode = "rerank"``).
- FLAVA: ``softmax(itm_logits)[:, 1]``, text padded to ``max_length=77``; images resized to the config's size
  (224) bicubic + centre crop, CLIP mean/std (``FlavaImageProcessorPil`` built from explicit settings).
  ``dual_view()`` = the unimodal ``get_image_features`` / ``get_text_features`` [CLS] (index 0) embeddings,
  which is what ARO's retrieval tables use (``retrieval_mode = "dual_view"``).

AMBIGUOUS (documented choices):

- BLIP ``itm_first_token``: BLIP's retrieval code (and ARO's wrapper) puts ``[ENC]`` first for the ITM pass;
  transformers' ``BlipForImageTextRetrieval`` feeds the ids unchanged ([CLS]). Default ``enc`` (ARO); ``cls``
  gives the transformers behaviour.
- FLAVA: ARO calls ``FlavaForPreTraining(...)`` with ``input_ids_masked = input_ids`` and an all-zero
  ``bool_masked_pos``; that is exactly ``itm_head(flava(...).multimodal_embeddings)`` (a zero mask leaves the
  patch embeddings unchanged), computed here directly without the unused MLM / MIM heads (a test holds the
  two equal). ARO does not truncate FLAVA text; here it is truncated at ``max_length`` (no ARO caption comes
  near 77 tokens).
- TSVLC's LoRA on the patch-embedding ``Conv2d`` factorises the weight reshaped to ``(out*k, in*k)`` (rank
  ``r*k``), which peft's conv LoRA (rank ``r`` on ``(out, in*k*k)``) cannot represent: that delta is folded
  into the base weight directly (exact). Linear and attention LoRA go through peft, attention as
  ``in_proj_weight`` (``target_parameters``) + ``out_proj`` (a Linear), because peft 0.21.2's
  ``MultiheadAttention`` layer applies its out_proj delta twice (huggingface/peft PR #3774, open).
"""

from __future__ import annotations

import argparse
import logging
import os
import pickle
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import torch
from torch import nn

from ..config import expand_path
from ..registry import Registry
from .factory import OPENAI_MEAN, OPENAI_STD, register_toy_configs
from .scorers import ImageTextScorer, OpenClipScorer

log = logging.getLogger(__name__)

#: Entries of an OpenAI / old open_clip state dict that are not parameters (the OpenAI JIT archive's
#: metadata; a constant causal mask). Dropped before loading.
IGNORED_KEYS = frozenset({"input_resolution", "context_length", "vocab_size", "attn_mask"})
#: Entries a fine-tuning run changes even when every weight is frozen (the logit-scale clamp to ln 100).
UNFROZEN_KEYS = frozenset({"logit_scale", "logit_bias"})
#: Tolerance when checking that a file's frozen entries equal the base weights (fp16 -> fp32 round trips).
FROZEN_RTOL, FROZEN_ATOL = 1e-3, 1e-5
_FILE_SUFFIXES = (".pt", ".pth", ".bin", ".safetensors", ".ckpt")


# --------------------------------------------------------------------------- specs


@dataclass(frozen=True)
class Key:
    """One spec key: accepted types, whether required, default, allowed values."""

    types: tuple[type, ...]
    required: bool = False
    default: Any = None
    nullable: bool = False
    choices: tuple[Any, ...] | None = None
    positive: bool = False
    path: bool = False  # expand $VAR / ~
    tag_or_path: bool = False  # ``weights``: expanded only when it names a file


@dataclass(frozen=True)
class Family:
    """A model family: its spec keys and the builder turning a checked spec into a scorer."""

    keys: Mapping[str, Key]
    build: Callable[[str, dict[str, Any], torch.device], ImageTextScorer]
    summary: str = ""


ZOO: Registry[Family] = Registry("model family")

_STR, _INT, _BOOL, _NUM = (str,), (int,), (bool,), (int, float)


def _batch_keys(image: int, text: int) -> dict[str, Key]:
    return {"image_batch": Key(_INT, default=image, positive=True),
            "text_batch": Key(_INT, default=text, positive=True)}


def _open_clip_keys() -> dict[str, Key]:
    from ..text.tokenizer import TOKENIZERS

    return {"arch": Key(_STR, required=True),
            "weights": Key(_STR, required=True, nullable=True, tag_or_path=True),
            "tokenizer": Key(_STR, default="open_clip", choices=tuple(TOKENIZERS.names())),
            "context_length": Key(_INT, nullable=True, positive=True), **_batch_keys(64, 256)}


def _type_name(types: tuple[type, ...]) -> str:
    return "number" if float in types else " or ".join(t.__name__ for t in types)


def is_file_ref(weights: str) -> bool:
    return "/" in weights or os.sep in weights or weights.endswith(_FILE_SUFFIXES)


def _expand_path(name: str, key: str, value: str) -> str:
    return expand_path(value, f"model {name!r}: key {key!r}")


def check_spec(name: str, spec: Mapping[str, Any]) -> tuple[Family, dict[str, Any]]:
    """The family and the full spec (defaults filled, paths expanded); ``ValueError`` naming model and key."""
    if not isinstance(spec, Mapping):
        raise ValueError(f"model {name!r}: spec must be a mapping, got {type(spec).__name__}")
    known = ", ".join(ZOO.names())
    if "family" not in spec:
        raise ValueError(f"model {name!r}: missing key 'family' (one of {known})")
    fam_name = spec["family"]
    if not isinstance(fam_name, str) or fam_name not in ZOO:
        raise ValueError(f"model {name!r}: key 'family'={fam_name!r} is not a known family (one of {known})")
    family = ZOO.get(fam_name)
    unknown = sorted(set(spec) - set(family.keys) - {"family"})
    if unknown:
        raise ValueError(f"model {name!r}: unknown key(s) {', '.join(map(repr, unknown))} for family "
                         f"{fam_name!r}; allowed: {', '.join(sorted(family.keys))}")
    out: dict[str, Any] = {"family": fam_name}
    for key, k in family.keys.items():
        if key not in spec:
            if k.required:
                raise ValueError(f"model {name!r}: missing key {key!r} (family {fam_name!r})")
            out[key] = k.default
            continue
        value = spec[key]
        if value is None:
            if not k.nullable:
                raise ValueError(f"model {name!r}: key {key!r} must be {_type_name(k.types)}, got null")
            out[key] = None
            continue
        if not isinstance(value, k.types) or (isinstance(value, bool) and bool not in k.types):
            raise ValueError(f"model {name!r}: key {key!r} must be {_type_name(k.types)}, "
                             f"got {type(value).__name__} {value!r}")
        if k.choices is not None and value not in k.choices:
            raise ValueError(f"model {name!r}: key {key!r}={value!r} must be one of "
                             f"{', '.join(map(str, k.choices))}")
        if k.positive and not value > 0:
            raise ValueError(f"model {name!r}: key {key!r}={value!r} must be positive")
        if k.path or (k.tag_or_path and ("$" in value or value.startswith("~") or is_file_ref(value))):
            value = _expand_path(name, key, value)
        out[key] = value
    return family, out


def build_scorer(name: str, spec: Mapping[str, Any], *,
                 device: str | torch.device = "cpu") -> ImageTextScorer:
    """Build the model ``name`` described by its ``params.yaml`` ``spec`` (see the module docstring)."""
    family, checked = check_spec(name, spec)
    scorer = family.build(name, checked, torch.device(device))
    scorer.spec = dict(checked)  # provenance: the resolved spec the scorer was built from
    log.info("model %r: built %s scorer (family %s)", name, scorer.kind, checked["family"])
    return scorer


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


def _few(keys: Sequence[str], n: int = 4) -> str:
    keys = sorted(keys)
    return ", ".join(keys[:n]) + (f", ... ({len(keys)} in all)" if len(keys) > n else "")


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
        parts = [f"{kind} {_few(keys)}" for kind, keys in (("missing", missing), ("unexpected", unexpected))
                 if keys]
        raise ValueError(f"{path}: {what} does not fit the model ({'; '.join(parts)})")


def check_frozen(model: nn.Module, state: Mapping[str, torch.Tensor], path: str | Path, *, what: str,
                 hint: str = "") -> None:
    """Entries of ``state`` that training left frozen must equal the model's (the base weights)."""
    own = model.state_dict()
    unexpected = [k for k in state if k not in own]
    if unexpected:
        raise ValueError(f"{path}: {what} has entries the model does not ({_few(unexpected)})")
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


# --------------------------------------------------------------------------- open_clip families


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


def _open_clip_scorer(name: str, model: nn.Module, preprocess: Callable, spec: Mapping[str, Any],
                      device: torch.device) -> OpenClipScorer:
    from ..text.tokenizer import get_tokenizer

    ctx = spec["context_length"] or int(getattr(model, "context_length", 77))
    tokenizer = get_tokenizer(spec["tokenizer"], spec["arch"], ctx)
    return OpenClipScorer(name, model, preprocess, tokenizer, device=device, image_batch=spec["image_batch"],
                          text_batch=spec["text_batch"])


def _build_openclip(name: str, spec: dict[str, Any], device: torch.device) -> ImageTextScorer:
    qg = resolve_quick_gelu(name, spec["arch"], spec["weights"], openai_derived=spec["openai_derived"],
                            quick_gelu=spec["quick_gelu"])
    model, preprocess = create_open_clip(name, spec["arch"], spec["weights"], quick_gelu=qg)
    return _open_clip_scorer(name, model, preprocess, spec, device)


def _build_conclip(name: str, spec: dict[str, Any], device: torch.device) -> ImageTextScorer:
    qg = resolve_quick_gelu(name, spec["arch"], spec["weights"], openai_derived=True)
    path = spec["checkpoint"]
    state = read_state_dict(path, what=f"CoN-CLIP checkpoint of model {name!r}")
    model, preprocess = create_open_clip(name, spec["arch"], spec["weights"], quick_gelu=qg)
    if spec["image_tower"] == "checkpoint":
        load_into(model, state, path, what="CoN-CLIP checkpoint")
    else:
        visual = {k: v for k, v in state.items() if k.startswith("visual.")}
        check_frozen(model, visual, path, what="CoN-CLIP checkpoint (image tower)",
                     hint=" If the image tower was fine-tuned, set image_tower: checkpoint.")
        text = {k: v for k, v in state.items() if not k.startswith("visual.")}
        load_into(model, text, path, what="CoN-CLIP checkpoint (text tower)",
                  allow_missing=lambda k: k.startswith("visual."))
    return _open_clip_scorer(name, model.eval(), preprocess, spec, device)


# --------------------------------------------------------------------------- TSVLC LoRA -> peft

#: ``<module>.in_proj_weight_lora_A`` (the fork's MultiheadAttention) or ``<module>.lora_A`` (loralib layers).
_LORA_KEY = re.compile(r"^(?P<module>.+)\.(?P<param>(?:in|q|k|v)_proj_weight_lora_[AB]|lora_[AB])$")


def is_lora_key(key: str) -> bool:
    return "lora_" in key.rsplit(".", 1)[-1]


@dataclass
class LoraConversion:
    """A TSVLC LoRA checkpoint in peft's terms. Pass 1 (``target_parameters``): attention ``in_proj_weight``;
    pass 2 (``target_modules``): every Linear, attention ``out_proj`` included; ``folded``: already-scaled
    weight deltas added directly (convolutions). Adapter states use peft's key names (adapter name
    omitted)."""

    parameters: dict[str, torch.Tensor] = field(default_factory=dict)
    parameter_targets: set[str] = field(default_factory=set)
    modules: dict[str, torch.Tensor] = field(default_factory=dict)
    module_targets: set[str] = field(default_factory=set)
    folded: dict[str, torch.Tensor] = field(default_factory=dict)


def convert_tsvlc_lora(lora: Mapping[str, torch.Tensor], model: nn.Module, *, r: int, alpha: float = 1.0,
                       source: str = "adapter") -> LoraConversion:
    """Map the TSVLC fork's loralib names onto peft's (``P`` = a module path of the open_clip model)::

        fork key [shape]                   peft pass: target              peft adapter key (base_model.model.)
        P.attn.in_proj_weight_lora_A [r,d]   1: P.attn.in_proj_weight     P.attn.lora_A.weight
        P.attn.in_proj_weight_lora_B [3d,r]  1  (a parameter)             P.attn.lora_B.weight
        P.attn.out_proj.lora_A [r,d]         2: P.attn.out_proj           P.attn.out_proj.lora_A.weight
        P.attn.out_proj.lora_B [d,r]         2  (a Linear)                P.attn.out_proj.lora_B.weight
        P.mlp.c_fc.lora_A [r,in], _B [out,r] 2: P.mlp.c_fc (any Linear)   P.mlp.c_fc.lora_A.weight, ..._B...
        visual.conv1.lora_A [r*k, in*k]      folded: W += s * (B @ A).view(W.shape)
        visual.conv1.lora_B [out*k, r*k]

    Both sides compute ``W + s * B @ A`` with ``s = alpha / r``: the fork's ``lora_alpha=1`` gives
    ``s = 0.25`` at ``r=4``; peft's ``LoraConfig(r, lora_alpha)`` the same (no rsLoRA). Attention is adapted
    as a parameter (in_proj) plus a Linear (out_proj), not through peft's ``MultiheadAttention`` layer: peft
    0.21.2 applies that layer's out_proj delta twice, in forward and in merge (huggingface/peft PR #3774;
    the hand-computed test catches it). Every A needs its B; shapes are checked against ``r`` and the
    module; any other LoRA-looking key is an error naming it and ``source``.
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
        state[f"base_model.model.{path}.lora_A.weight"] = a
        state[f"base_model.model.{path}.lora_B.weight"] = b
    return out


def _peft_merge(model: nn.Module, state: Mapping[str, torch.Tensor], *, r: int, alpha: float, source: str,
                target_modules: frozenset[str] | set[str] = frozenset(),
                target_parameters: frozenset[str] | set[str] = frozenset()) -> nn.Module:
    """One peft pass: wrap, load the adapter state (every LoRA weight must be filled), merge, unload."""
    import peft

    config = peft.LoraConfig(r=r, lora_alpha=alpha, lora_dropout=0.0, bias="none", use_rslora=False,
                             target_modules=sorted(target_modules),
                             target_parameters=sorted(target_parameters) or None)
    wrapped = peft.get_peft_model(model, config)
    result = peft.set_peft_model_state_dict(wrapped, dict(state))
    missing = [k for k in result.missing_keys if ".lora_" in k]
    if result.unexpected_keys or missing:
        raise ValueError(f"{source}: LoRA weights do not fit peft's adapter (missing {_few(missing)}; "
                         f"unexpected {_few(result.unexpected_keys)})")
    return wrapped.merge_and_unload()


def apply_tsvlc_lora(model: nn.Module, lora: Mapping[str, torch.Tensor], *, r: int, alpha: float = 1.0,
                     source: str = "adapter") -> nn.Module:
    """The model with TSVLC's LoRA merged in (``W + alpha/r * B @ A`` everywhere), through peft (two passes,
    see :func:`convert_tsvlc_lora`). Returns the plain model, peft wrappers unloaded: inference costs nothing
    extra and the text tower keeps open_clip's fast paths."""
    conv = convert_tsvlc_lora(lora, model, r=r, alpha=alpha, source=source)
    with torch.no_grad():
        for key, delta in conv.folded.items():
            p = model.get_parameter(key)
            p.add_(delta.to(p.dtype))
    if conv.parameter_targets:
        model = _peft_merge(model, conv.parameters, r=r, alpha=alpha, source=source,
                            target_parameters=conv.parameter_targets)
    if conv.module_targets:
        model = _peft_merge(model, conv.modules, r=r, alpha=alpha, source=source,
                            target_modules=conv.module_targets)
    return model


def _build_tsvlc(name: str, spec: dict[str, Any], device: torch.device) -> ImageTextScorer:
    qg = resolve_quick_gelu(name, spec["arch"], spec["weights"], openai_derived=True)
    path = spec["adapter"]
    state = read_state_dict(path, what=f"TSVLC adapter of model {name!r}")
    lora = {k: v for k, v in state.items() if is_lora_key(k)}
    if not lora:
        raise ValueError(f"{path}: TSVLC adapter of model {name!r} has no LoRA entries (*lora_A / *lora_B)")
    model, preprocess = create_open_clip(name, spec["arch"], spec["weights"], quick_gelu=qg)
    check_frozen(model, {k: v for k, v in state.items() if not is_lora_key(k)}, path, what="TSVLC adapter")
    model = apply_tsvlc_lora(model, lora, r=spec["lora_r"], alpha=float(spec["lora_alpha"]), source=str(path))
    return _open_clip_scorer(name, model.eval(), preprocess, spec, device)


# --------------------------------------------------------------------------- HF cross encoders


def _hf_dir(name: str, path: str, key: str) -> Path:
    p = Path(path)
    if not p.is_dir():
        raise FileNotFoundError(f"{p}: directory of model {name!r} not found (spec key {key!r})")
    return p


def load_hf_model(cls: type, name: str, path: str, *, allow_missing: tuple[str, ...] = ()) -> nn.Module:
    """``cls.from_pretrained(path)`` offline and weights-only; missing (outside the ``allow_missing``
    prefixes), unexpected or mismatched weights are an error naming the directory."""
    p = _hf_dir(name, path, "path")
    if not (p / "config.json").is_file():
        raise FileNotFoundError(f"{p / 'config.json'}: not found (model {name!r} needs an HF-format "
                                "directory)")
    try:
        model, info = cls.from_pretrained(p, local_files_only=True, output_loading_info=True,
                                          weights_only=True)
    except Exception as e:  # noqa: BLE001 - OSError / ValueError / safetensors errors for a bad directory
        first = str(e).splitlines()[0] if str(e) else ""
        raise ValueError(f"{p}: cannot load {cls.__name__} ({type(e).__name__}: {first})") from None
    bad = {"missing": [k for k in info.get("missing_keys", ()) if not k.startswith(allow_missing)],
           "unexpected": list(info.get("unexpected_keys", ())),
           "mismatched": [str(m[0] if isinstance(m, tuple) else m) for m in info.get("mismatched_keys", ())]}
    if any(bad.values()):
        detail = "; ".join(f"{kind} {_few(keys)}" for kind, keys in bad.items() if keys)
        raise ValueError(f"{p}: weights do not fit {cls.__name__} ({detail})")
    return model.eval()


def load_hf_tokenizer(name: str, path: str, key: str, vocab_size: int):
    """The tokenizer saved in a local directory (no hub); its ids must fit the model's vocabulary."""
    from transformers import AutoTokenizer

    p = _hf_dir(name, path, key)
    try:
        tok = AutoTokenizer.from_pretrained(p, local_files_only=True)
    except Exception as e:  # noqa: BLE001
        raise ValueError(f"{p}: cannot load the tokenizer of model {name!r} "
                         f"({type(e).__name__}: {e})") from None
    if len(tok) > vocab_size:
        raise ValueError(f"{p}: tokenizer of model {name!r} has {len(tok)} ids, the model's vocabulary "
                         f"{vocab_size}")
    return tok


def _unique(items: Sequence) -> tuple[list, torch.Tensor]:
    """Distinct objects (by identity: a repeated PIL image is preprocessed and encoded once) + an index."""
    first: dict[int, int] = {}
    uniq, idx = [], []
    for it in items:
        if id(it) not in first:
            first[id(it)] = len(uniq)
            uniq.append(it)
        idx.append(first[id(it)])
    return uniq, torch.tensor(idx, dtype=torch.long)


def _check_pairs(images: Sequence, texts: Sequence[str]) -> None:
    if len(images) != len(texts):
        raise ValueError(f"score_pairs: {len(images)} images but {len(texts)} texts")


def _rgb(image):
    return image.convert("RGB")


def blip_transform(size: int) -> Callable:
    """BLIP's ``transform_test``: resize to ``size`` x ``size`` bicubic (no crop), CLIP mean/std."""
    from torchvision import transforms as T

    return T.Compose([_rgb, T.Resize((size, size), interpolation=T.InterpolationMode.BICUBIC), T.ToTensor(),
                      T.Normalize(OPENAI_MEAN, OPENAI_STD)])


def flava_image_processor(size: int):
    """FLAVA's eval preprocessing from explicit settings (``facebook/flava-full``'s: resize to ``size`` x
    ``size`` bicubic, centre crop, 1/255, CLIP mean/std), PIL backend like the reference's feature
    extractor."""
    from transformers import FlavaImageProcessorPil
    from transformers.image_utils import PILImageResampling

    square = {"height": size, "width": size}
    return FlavaImageProcessorPil(size=square, crop_size=dict(square), resample=PILImageResampling.BICUBIC,
                                  do_resize=True, do_center_crop=True, do_rescale=True, do_normalize=True,
                                  image_mean=list(OPENAI_MEAN), image_std=list(OPENAI_STD))


class _Tokens:
    """Padded / truncated tokenisation at a fixed length (fixed shapes: no score depends on the batch)."""

    KEEP = ("input_ids", "attention_mask", "token_type_ids")

    def __init__(self, tokenizer, max_length: int, device: torch.device) -> None:
        self.tokenizer, self.max_length, self.device = tokenizer, max_length, device

    def __call__(self, texts: Sequence[str]) -> dict[str, torch.Tensor]:
        enc = self.tokenizer(list(texts), padding="max_length", truncation=True, max_length=self.max_length,
                             return_tensors="pt")
        return {k: v.to(self.device) for k, v in enc.items() if k in self.KEEP}


class _DualView:
    """A dual scorer over a cross encoder's unimodal features (``image_fn`` / ``text_fn`` map chunks to
    L2-normalised CPU float32 rows)."""

    kind: Literal["dual"] = "dual"

    def __init__(self, name: str, image_fn: Callable, text_fn: Callable, image_batch: int,
                 text_batch: int) -> None:
        self.name, self._image_fn, self._text_fn = name, image_fn, text_fn
        self.image_batch, self.text_batch = image_batch, text_batch

    @torch.no_grad()
    def encode_images(self, images: Sequence) -> torch.Tensor:
        b = self.image_batch
        feats = [self._image_fn(images[s : s + b]) for s in range(0, len(images), b)]
        return torch.cat(feats) if feats else torch.zeros(0, 0)

    @torch.no_grad()
    def encode_texts(self, texts: Sequence[str]) -> torch.Tensor:
        b = self.text_batch
        feats = [self._text_fn(texts[s : s + b]) for s in range(0, len(texts), b)]
        return torch.cat(feats) if feats else torch.zeros(0, 0)

    @torch.no_grad()
    def score_pairs(self, images: Sequence, texts: Sequence[str]) -> torch.Tensor:
        _check_pairs(images, texts)
        return (self.encode_images(images) * self.encode_texts(texts)).sum(dim=1)


class _CrossScorer:
    """The contract's unimodal methods for a cross scorer: there are none; its dual view has them."""

    kind: Literal["cross"] = "cross"
    name: str

    def encode_images(self, images: Sequence) -> torch.Tensor:
        raise TypeError(f"scorer {self.name!r} is a cross encoder: use score_pairs, or "
                        "dual_view().encode_images")

    def encode_texts(self, texts: Sequence[str]) -> torch.Tensor:
        raise TypeError(f"scorer {self.name!r} is a cross encoder: use score_pairs, or "
                        "dual_view().encode_texts")

    @torch.no_grad()
    def score_pairs(self, images: Sequence, texts: Sequence[str]) -> torch.Tensor:
        """Pairs in chunks of ``pair_batch``; each chunk preprocesses its distinct images once."""
        _check_pairs(images, texts)
        out = []
        for s in range(0, len(images), self.pair_batch):
            uniq, idx = _unique(images[s : s + self.pair_batch])
            out.append(self._score_chunk(uniq, idx.to(self.device), texts[s : s + self.pair_batch]).cpu())
        return torch.cat(out) if out else torch.zeros(0)

    def _score_chunk(self, images: Sequence, idx: torch.Tensor, texts: Sequence[str]) -> torch.Tensor:
        """Scores of pairs ``(images[idx[i]], texts[i])``."""
        raise NotImplementedError


class BlipScorer(_CrossScorer):
    """BLIP ITM + ITC (ARO's BLIP wrapper) over transformers' ``BlipForImageTextRetrieval``."""

    retrieval_mode = "rerank"

    def __init__(self, name: str, model: nn.Module, tokenizer, *, max_length: int = 35,
                 enc_token_id: int | None, k_test: int = 128, pair_batch: int = 32, image_batch: int = 32,
                 text_batch: int = 256, device: str | torch.device = "cpu") -> None:
        self.name = name
        self.device = torch.device(device)
        self.model = model.eval().to(self.device)
        self.tokens = _Tokens(tokenizer, max_length, self.device)
        self.preprocess = blip_transform(int(model.config.vision_config.image_size))
        self.enc_token_id = enc_token_id
        self.k_test, self.pair_batch = k_test, pair_batch
        self.image_batch, self.text_batch = image_batch, text_batch

    def _image_embeds(self, images: Sequence) -> torch.Tensor:
        x = torch.stack([self.preprocess(im) for im in images]).to(self.device)
        return self.model.vision_model(pixel_values=x).last_hidden_state  # [N, 1 + patches, H]

    def _itc_image(self, embeds: torch.Tensor) -> torch.Tensor:
        return nn.functional.normalize(self.model.vision_proj(embeds[:, 0, :]).float(), dim=-1)

    def _itc_text(self, tok: Mapping[str, torch.Tensor]) -> torch.Tensor:
        h = self.model.text_encoder(input_ids=tok["input_ids"], attention_mask=tok["attention_mask"])
        return nn.functional.normalize(self.model.text_proj(h.last_hidden_state[:, 0, :]).float(), dim=-1)

    def _score_chunk(self, images: Sequence, idx: torch.Tensor, texts: Sequence[str]) -> torch.Tensor:
        embeds = self._image_embeds(images)
        tok = self.tokens(texts)
        itc = (self._itc_image(embeds)[idx] * self._itc_text(tok)).sum(dim=1)
        ids = tok["input_ids"].clone()
        if self.enc_token_id is not None:
            ids[:, 0] = self.enc_token_id
        e = embeds[idx]
        e_mask = torch.ones(e.shape[:-1], dtype=torch.long, device=self.device)
        h = self.model.text_encoder(input_ids=ids, attention_mask=tok["attention_mask"],
                                    encoder_hidden_states=e, encoder_attention_mask=e_mask)
        return self.model.itm_head(h.last_hidden_state[:, 0, :])[:, 1].float() + itc

    def dual_view(self) -> _DualView:
        """ITC: normalised ``vision_proj`` / ``text_proj`` of the [CLS] tokens (retrieval's pre-selection)."""
        return _DualView(f"{self.name}:itc", lambda ims: self._itc_image(self._image_embeds(ims)).cpu(),
                         lambda txt: self._itc_text(self.tokens(txt)).cpu(), self.image_batch,
                         self.text_batch)


class FlavaScorer(_CrossScorer):
    """FLAVA ITM probability (ARO's FLAVA wrapper) over transformers' ``FlavaForPreTraining``."""

    retrieval_mode = "dual_view"

    def __init__(self, name: str, model: nn.Module, tokenizer, *, max_length: int = 77, pair_batch: int = 32,
                 image_batch: int = 32, text_batch: int = 256, device: str | torch.device = "cpu") -> None:
        self.name = name
        self.device = torch.device(device)
        self.model = model.eval().to(self.device)
        self.tokens = _Tokens(tokenizer, max_length, self.device)
        self.processor = flava_image_processor(int(model.config.image_config.image_size))
        self.pair_batch, self.image_batch, self.text_batch = pair_batch, image_batch, text_batch

    def _pixels(self, images: Sequence) -> torch.Tensor:
        x = self.processor(images=[im.convert("RGB") for im in images], return_tensors="pt")["pixel_values"]
        return x.to(self.device)

    def _score_chunk(self, images: Sequence, idx: torch.Tensor, texts: Sequence[str]) -> torch.Tensor:
        mm = self.model.flava(pixel_values=self._pixels(images)[idx], **self.tokens(texts)).multimodal_embeddings
        return torch.softmax(self.model.itm_head(mm).float(), dim=-1)[:, 1]

    def _image_features(self, images: Sequence) -> torch.Tensor:
        f = self.model.flava.get_image_features(pixel_values=self._pixels(images)).pooler_output[:, 0, :]
        return nn.functional.normalize(f.float(), dim=-1).cpu()

    def _text_features(self, texts: Sequence[str]) -> torch.Tensor:
        f = self.model.flava.get_text_features(**self.tokens(texts)).pooler_output[:, 0, :]
        return nn.functional.normalize(f.float(), dim=-1).cpu()

    def dual_view(self) -> _DualView:
        """Unimodal [CLS] features (``get_image_features`` / ``get_text_features``, index 0): ARO's
        retrieval."""
        return _DualView(f"{self.name}:unimodal", self._image_features, self._text_features, self.image_batch,
                         self.text_batch)


def _build_blip(name: str, spec: dict[str, Any], device: torch.device) -> ImageTextScorer:
    from transformers import BlipForImageTextRetrieval

    model = load_hf_model(BlipForImageTextRetrieval, name, spec["path"])
    tok_dir = spec["tokenizer"] or spec["path"]
    tok = load_hf_tokenizer(name, tok_dir, "tokenizer" if spec["tokenizer"] else "path",
                            int(model.config.text_config.vocab_size))
    enc = None
    if spec["itm_first_token"] == "enc":
        if "[ENC]" not in tok.get_vocab():
            raise ValueError(f"{tok_dir}: tokenizer of model {name!r} has no [ENC] token (key "
                             "'itm_first_token'=enc; cls gives transformers' behaviour)")
        enc = int(tok.convert_tokens_to_ids("[ENC]"))
    return BlipScorer(name, model, tok, max_length=spec["max_length"], enc_token_id=enc,
                      k_test=spec["k_test"], pair_batch=spec["pair_batch"], image_batch=spec["image_batch"],
                      text_batch=spec["text_batch"], device=device)


#: FlavaForPreTraining parts the ITM score and the unimodal features never use (pretraining losses).
_FLAVA_UNUSED = ("image_codebook.", "mim_head.", "mlm_head.", "mmm_image_head.", "mmm_text_head.",
                 "global_contrastive_head.")


def _build_flava(name: str, spec: dict[str, Any], device: torch.device) -> ImageTextScorer:
    from transformers import FlavaForPreTraining

    model = load_hf_model(FlavaForPreTraining, name, spec["path"], allow_missing=_FLAVA_UNUSED)
    key = "tokenizer" if spec["tokenizer"] else "path"
    vocab = int(model.config.text_config.vocab_size)
    tok = load_hf_tokenizer(name, spec["tokenizer"] or spec["path"], key, vocab)
    return FlavaScorer(name, model, tok, max_length=spec["max_length"], pair_batch=spec["pair_batch"],
                       image_batch=spec["image_batch"], text_batch=spec["text_batch"], device=device)


# --------------------------------------------------------------------------- registry


def _register() -> None:
    clip = _open_clip_keys()
    path = Key(_STR, required=True, path=True)
    ZOO.add("openclip", Family(
        {**clip, "openai_derived": Key(_BOOL, nullable=True), "quick_gelu": Key(_BOOL, nullable=True)},
        _build_openclip, "open_clip architecture + tag or checkpoint (OpenAI CLIP, NegCLIP, CE-CLIP)"))
    ZOO.add("conclip", Family(
        {**clip, "checkpoint": path,
         "image_tower": Key(_STR, default="base", choices=("base", "checkpoint"))},
        _build_conclip, "OpenAI CLIP + CoN-CLIP {'model': state_dict} checkpoint"))
    ZOO.add("tsvlc", Family(
        {**clip, "adapter": path, "lora_r": Key(_INT, required=True, positive=True),
         "lora_alpha": Key(_NUM, default=1, positive=True)},
        _build_tsvlc, "OpenAI CLIP + TSVLC LoRA through peft, merged"))
    hf = {"path": path, "tokenizer": Key(_STR, nullable=True, path=True),
          "pair_batch": Key(_INT, default=32, positive=True), **_batch_keys(32, 256)}
    ZOO.add("blip", Family(
        {**hf, "max_length": Key(_INT, default=35, positive=True),
         "itm_first_token": Key(_STR, default="enc", choices=("enc", "cls")),
         "k_test": Key(_INT, default=128, positive=True)},
        _build_blip, "BLIP ITM + ITC cross scorer (HF BlipForImageTextRetrieval)"))
    ZOO.add("flava", Family({**hf, "max_length": Key(_INT, default=77, positive=True)}, _build_flava,
                            "FLAVA ITM cross scorer (HF FlavaForPreTraining)"))


_register()

__all__ = ["ZOO", "BlipScorer", "Family", "FlavaScorer", "Key", "LoraConversion", "apply_tsvlc_lora",
           "build_scorer", "check_frozen", "check_spec", "convert_tsvlc_lora", "create_open_clip",
           "flava_image_processor", "load_hf_model", "load_hf_tokenizer", "load_into", "read_checkpoint",
           "read_state_dict", "resolve_quick_gelu"]
