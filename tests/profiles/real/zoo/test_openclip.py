"""Family ``openclip``: NegCLIP / CE-CLIP checkpoints in their released formats, QuickGELU resolved through the
zoo, and checkpoint errors naming the file or the spec key."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from vlcomp.models.factory import ModelSpec, create_model
from vlcomp.models.scorers import OpenClipScorer
from vlcomp.profiles.real.zoo import build_scorer

from .helpers import TEXTS, activations, check_dual, clip_spec, reference, toy_state


def test_negclip_checkpoint_ddp_wrapped_quickgelu(tmp_path, images):
    """NegCLIP's ``negclip.pth``: an open_clip training checkpoint, ``module.``-prefixed, OpenAI-derived."""
    state = toy_state(1)
    path = tmp_path / "negclip.pth"
    torch.save({"epoch": 5, "name": "negclip", "state_dict": {f"module.{k}": v for k, v in state.items()},
                "optimizer": {"state": {}, "param_groups": [{"lr": 1e-6, "params": [0, 1]}]}}, path)
    scorer = build_scorer("negclip", clip_spec(weights=str(path), openai_derived=True))
    assert isinstance(scorer, OpenClipScorer) and scorer.name == "negclip"
    assert activations(scorer.model) == {"QuickGELU"}
    assert scorer.spec["weights"] == str(path)
    fi, ft = check_dual(scorer, images)
    ref = reference(state, quick_gelu=True)
    torch.testing.assert_close(fi, ref.encode_images(images), atol=1e-6, rtol=0)
    torch.testing.assert_close(ft, ref.encode_texts(TEXTS), atol=1e-6, rtol=0)
    # the same weights through GELU score differently: the pitfall is not a no-op
    assert not torch.allclose(ft, reference(state, quick_gelu=False).encode_texts(TEXTS), atol=1e-4)


def test_ceclip_safetensors_and_env_path(tmp_path, images, monkeypatch):
    from safetensors.torch import save_file

    state = toy_state(2)
    save_file(state, str(tmp_path / "ce_clip.safetensors"))
    monkeypatch.setenv("VLCOMP_TEST_CKPTS", str(tmp_path))
    spec = clip_spec(weights="$VLCOMP_TEST_CKPTS/ce_clip.safetensors", openai_derived=True)
    scorer = build_scorer("ce-clip", spec)
    check_dual(scorer, images)
    expected = reference(state, quick_gelu=True).encode_texts(TEXTS)
    torch.testing.assert_close(scorer.encode_texts(TEXTS), expected, atol=1e-6, rtol=0)
    monkeypatch.delenv("VLCOMP_TEST_CKPTS")
    with pytest.raises(ValueError, match="'weights'.*environment variable not set"):
        build_scorer("ce-clip", spec)


def test_gelu_checkpoint_when_not_openai_derived(tmp_path):
    torch.save(toy_state(3), tmp_path / "gelu.pt")
    scorer = build_scorer("m", clip_spec(weights=str(tmp_path / "gelu.pt"), openai_derived=False))
    assert activations(scorer.model) == {"GELU"}


def test_quickgelu_through_the_zoo_real_vit_b32():
    """The spec keys reach the QuickGELU rule (vlcomp.models.weights); the real architecture is built."""
    vit = {"family": "openclip", "arch": "ViT-B-32"}
    with pytest.raises(ValueError, match="'quick_gelu'=false.*trained with QuickGELU"):
        build_scorer("m", {**vit, "weights": "openai", "quick_gelu": False})
    with pytest.raises(ValueError, match="'openai_derived'=true contradicts"):
        build_scorer("m", {**vit, "weights": "laion2b_s34b_b79k", "openai_derived": True})
    with pytest.raises(ValueError, match="'openai_derived'=false contradicts 'weights'='openai'.*QuickGELU"):
        build_scorer("m", {**vit, "weights": "openai", "openai_derived": False})
    with pytest.raises(ValueError, match="'weights'='opneai' is neither a file nor an open_clip tag"):
        build_scorer("m", {**vit, "weights": "opneai"})
    scorer = build_scorer("clip", {**vit, "weights": None, "openai_derived": True})
    assert activations(scorer.model) == {"QuickGELU"}
    assert len([n for n, m in scorer.model.named_modules() if n.endswith("mlp.gelu")]) == 24  # both towers
    assert scorer.encode_texts(["a photo of a cat"]).shape == (1, 512)


def test_missing_and_truncated_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.pt: weights of model 'm' not found"):
        build_scorer("m", clip_spec(weights=str(tmp_path / "nope.pt"), openai_derived=True))
    good = tmp_path / "good.pt"
    torch.save({"state_dict": toy_state(0)}, good)
    cut = tmp_path / "cut.pt"
    cut.write_bytes(good.read_bytes()[:4096])
    with pytest.raises(ValueError, match="cut.pt: cannot read"):
        build_scorer("m", clip_spec(weights=str(cut), openai_derived=True))


def test_wrong_keys_and_shapes(tmp_path):
    state = toy_state(0)
    extra = tmp_path / "extra.pt"
    torch.save({**state, "visual.extra_head.weight": torch.zeros(2)}, extra)
    with pytest.raises(ValueError, match=r"extra.pt: .*unexpected visual.extra_head.weight"):
        build_scorer("m", clip_spec(weights=str(extra), openai_derived=True))
    short = tmp_path / "short.pt"
    torch.save({k: v for k, v in state.items() if k != "ln_final.weight"}, short)
    with pytest.raises(ValueError, match=r"short.pt: .*missing ln_final.weight"):
        build_scorer("m", clip_spec(weights=str(short), openai_derived=True))
    other = tmp_path / "rn16.pt"
    torch.save(create_model(ModelSpec("toy-rn16"), init_seed=0).state_dict(), other)
    with pytest.raises(ValueError, match="rn16.pt: weights of model 'm' does not fit the model"):
        build_scorer("m", clip_spec(weights=str(other), openai_derived=True))
    shape = tmp_path / "shape.pt"
    torch.save({**state, "text_projection": torch.zeros(3, 3)}, shape)
    with pytest.raises(ValueError, match="shape.pt: .*size mismatch for text_projection"):
        build_scorer("m", clip_spec(weights=str(shape), openai_derived=True))


def test_a_pickled_module_is_never_unpickled(tmp_path):
    pickled = tmp_path / "module.pt"
    torch.save(nn.Linear(2, 2), pickled)
    with pytest.raises(ValueError, match="module.pt: cannot read.*refusing to unpickle"):
        build_scorer("m", clip_spec(weights=str(pickled), openai_derived=True))
