"""Checkpoint I/O and the QuickGELU rule (vlcomp.models.weights): weights-only reading, unwrapping, exact
loading, the frozen-entries check, errors naming the file."""

from __future__ import annotations

import argparse

import pytest
import torch
from torch import nn

from vlcomp.models.factory import ModelSpec, create_model
from vlcomp.models.weights import (
    IGNORED_KEYS,
    check_frozen,
    create_open_clip,
    is_file_ref,
    load_into,
    read_state_dict,
    resolve_quick_gelu,
)

ARCH = "toy-vit-p8"


def toy_state(seed: int) -> dict[str, torch.Tensor]:
    return {k: v.clone() for k, v in create_model(ModelSpec(ARCH), init_seed=seed).state_dict().items()}


def test_quickgelu_resolution_real_vit_b32():
    """ViT-B-32 + openai (or an OpenAI-derived file) resolves to QuickGELU."""
    assert resolve_quick_gelu("m", "ViT-B-32", "openai", openai_derived=None) is True
    assert resolve_quick_gelu("m", "ViT-B-32", "laion2b_s34b_b79k", openai_derived=None) is False
    assert resolve_quick_gelu("m", "ViT-B-32", "/ckpt/negclip.pth", openai_derived=True) is True
    assert resolve_quick_gelu("m", "ViT-B-32-quickgelu", None, openai_derived=None) is True
    with pytest.raises(ValueError, match="'openai_derived' is required"):
        resolve_quick_gelu("m", "ViT-B-32", "/ckpt/negclip.pth", openai_derived=None)
    with pytest.raises(ValueError, match="'arch'='nope' is not an open_clip architecture"):
        resolve_quick_gelu("m", "nope", None, openai_derived=None)


def test_refs_and_wrappers(tmp_path):
    assert is_file_ref("/ckpt/x") and is_file_ref("negclip.pth") and not is_file_ref("openai")
    state = toy_state(0)
    # CoN-CLIP's layout: {"model": ..., "args": Namespace} read weights-only; OpenAI JIT metadata dropped
    torch.save({"model": {**state, "context_length": torch.tensor(77)}, "args": argparse.Namespace(lr=1e-6)},
               tmp_path / "conclip.pt")
    got = read_state_dict(tmp_path / "conclip.pt")
    assert "context_length" in IGNORED_KEYS and set(got) == set(state)
    torch.save({"state_dict": {f"module.{k}": v for k, v in state.items()}}, tmp_path / "ddp.pt")
    assert set(read_state_dict(tmp_path / "ddp.pt")) == set(state)


def test_unreadable_files_name_the_file(tmp_path):
    pickled = tmp_path / "module.pt"
    torch.save(nn.Linear(2, 2), pickled)  # a whole pickled module: never unpickled
    with pytest.raises(ValueError, match="module.pt: cannot read.*refusing to unpickle"):
        read_state_dict(pickled)
    notensor = tmp_path / "notensor.pt"
    torch.save({"state_dict": {"visual.proj": [1.0, 2.0]}}, notensor)
    with pytest.raises(ValueError, match="notensor.pt:.*'visual.proj' is a list"):
        read_state_dict(notensor)
    with pytest.raises(FileNotFoundError, match="gone.pt: checkpoint not found"):
        read_state_dict(tmp_path / "gone.pt")


def test_load_into_and_check_frozen():
    state = toy_state(1)
    model = create_model(ModelSpec(ARCH), init_seed=0)
    with pytest.raises(ValueError, match=r"f.pt: w does not fit the model \(missing ln_final.bias"):
        load_into(model, {k: v for k, v in state.items() if k != "ln_final.bias"}, "f.pt", what="w")
    load_into(model, {k: v for k, v in state.items() if not k.startswith("visual.")}, "f.pt",
              allow_missing=lambda k: k.startswith("visual."))
    torch.testing.assert_close(model.ln_final.weight, state["ln_final.weight"], atol=0, rtol=0)
    # frozen entries: equal within the fp16 round-trip tolerance, the logit scale exempt
    check_frozen(model, {"ln_final.weight": state["ln_final.weight"].half().float(),
                         "logit_scale": state["logit_scale"] + 1}, "f.pt", what="adapter")
    with pytest.raises(ValueError, match=r"f.pt: adapter entry 'ln_final.weight' differs .*wrong base"):
        check_frozen(model, {"ln_final.weight": state["ln_final.weight"] + 0.1}, "f.pt", what="adapter")
    with pytest.raises(ValueError, match="f.pt: adapter has entries the model does not"):
        check_frozen(model, {"extra": torch.zeros(1)}, "f.pt", what="adapter")


def test_create_open_clip_from_a_file_forces_the_activation(tmp_path):
    torch.save({"state_dict": toy_state(2)}, tmp_path / "w.pt")
    model, preprocess = create_open_clip("m", ARCH, str(tmp_path / "w.pt"), quick_gelu=True)
    assert {type(m).__name__ for n, m in model.named_modules() if n.endswith("mlp.gelu")} == {"QuickGELU"}
    assert not model.training and callable(preprocess)
    with pytest.raises(FileNotFoundError, match="x.pt: weights of model 'm' not found"):
        create_open_clip("m", ARCH, str(tmp_path / "x.pt"), quick_gelu=False)
