"""The paper profile's model zoo: every family built offline from tiny random-init models saved in the
released on-disk formats, the scoring contract, QuickGELU resolution, the TSVLC LoRA conversion (checked by
hand) and errors naming the file or the spec key."""

from __future__ import annotations

import argparse

import numpy as np
import pytest
import torch
from PIL import Image
from torch import nn

from vlcomp.models.factory import ModelSpec, create_model
from vlcomp.models.scorers import ImageTextScorer, OpenClipScorer
from vlcomp.models.zoo import (
    ZOO,
    apply_tsvlc_lora,
    build_scorer,
    convert_tsvlc_lora,
    read_state_dict,
    resolve_quick_gelu,
)

TEXTS = ["a red circle to the left of a blue square", "a small green star", "the large hollow heart"]
ARCH = "toy-vit-p8"


@pytest.fixture(scope="module")
def images() -> list[Image.Image]:
    rng = np.random.default_rng(0)
    sizes = ((40, 52), (48, 48), (30, 64))
    return [Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)) for h, w in sizes]


def toy_state(seed: int) -> dict[str, torch.Tensor]:
    return {k: v.clone() for k, v in create_model(ModelSpec(ARCH), init_seed=seed).state_dict().items()}


def clip_spec(**kw) -> dict:
    return {"family": "openclip", "arch": ARCH, "tokenizer": "world", **kw}


def reference(state: dict[str, torch.Tensor], *, quick_gelu: bool) -> OpenClipScorer:
    """The toy model built directly (no zoo) from a state dict: the expected features."""
    import open_clip

    from vlcomp.models.factory import register_toy_configs
    from vlcomp.text.tokenizer import WorldTokenizer

    register_toy_configs()
    model = open_clip.create_model(ARCH, pretrained=None, force_quick_gelu=quick_gelu, output_dict=True)
    model.load_state_dict(state)
    return OpenClipScorer("ref", model, open_clip.image_transform(48, is_train=False), WorldTokenizer(32))


def activations(model: nn.Module) -> set[str]:
    return {type(m).__name__ for n, m in model.named_modules() if n.endswith("mlp.gelu")}


def check_dual(scorer, images) -> tuple[torch.Tensor, torch.Tensor]:
    """Shapes, unit rows, and ``score_pairs`` = diagonal of ``encode_images @ encode_texts.T``."""
    assert scorer.kind == "dual"
    fi, ft = scorer.encode_images(images), scorer.encode_texts(TEXTS)
    assert fi.shape[0] == len(images) and ft.shape[0] == len(TEXTS) and fi.shape[1] == ft.shape[1]
    assert fi.dtype == ft.dtype == torch.float32
    torch.testing.assert_close(fi.norm(dim=1), torch.ones(len(images)), atol=1e-5, rtol=0)
    torch.testing.assert_close(ft.norm(dim=1), torch.ones(len(TEXTS)), atol=1e-5, rtol=0)
    torch.testing.assert_close(scorer.score_pairs(images, TEXTS), torch.diagonal(fi @ ft.T), atol=1e-5,
                               rtol=0)
    return fi, ft


def check_cross(scorer, images) -> torch.Tensor:
    """Deterministic, and scoring all pairs in one batch equals scoring them one at a time."""
    assert scorer.kind == "cross" and isinstance(scorer, ImageTextScorer)
    ims = [images[0], images[0], images[1], images[2], images[1]]
    txt = [TEXTS[0], TEXTS[1], TEXTS[1], TEXTS[2], TEXTS[0]]
    batched = scorer.score_pairs(ims, txt)
    assert batched.shape == (5,) and batched.dtype == torch.float32
    torch.testing.assert_close(scorer.score_pairs(ims, txt), batched, atol=0, rtol=0)
    one = torch.cat([scorer.score_pairs([i], [t]) for i, t in zip(ims, txt, strict=True)])
    torch.testing.assert_close(one, batched, atol=1e-5, rtol=0)
    with pytest.raises(ValueError, match="2 images but 1 texts"):
        scorer.score_pairs(ims[:2], txt[:1])
    with pytest.raises(TypeError, match="cross encoder: use score_pairs, or dual_view"):
        scorer.encode_texts(txt)
    return batched


# --------------------------------------------------------------------------- registry and specs


def test_families_registered():
    assert ZOO.names() == ["blip", "conclip", "flava", "openclip", "tsvlc"]


@pytest.mark.parametrize("spec, key", [
    ({"arch": ARCH, "weights": None}, "family"),
    ({"family": "clipx", "arch": ARCH, "weights": None}, "family"),
    ({"family": "openclip", "weights": None}, "arch"),
    ({"family": "openclip", "arch": ARCH}, "weights"),
    (clip_spec(weights=None, pretrained="openai"), "pretrained"),
    (clip_spec(weights=None, image_batch=True), "image_batch"),
    (clip_spec(weights=None, image_batch=0), "image_batch"),
    (clip_spec(weights=3), "weights"),
    (clip_spec(weights=None, tokenizer="bpe"), "tokenizer"),
    ({"family": "tsvlc", "arch": ARCH, "weights": None, "adapter": "/x.pt", "lora_r": "4"}, "lora_r"),
    ({"family": "blip"}, "path"),
    ({"family": "blip", "path": "/x", "itm_first_token": "sep"}, "itm_first_token"),
    ({"family": "flava", "path": "/x", "k_test": 5}, "k_test"),
])
def test_bad_spec_names_model_and_key(spec, key):
    with pytest.raises(ValueError, match=rf"model 'm'.*'{key}'"):
        build_scorer("m", spec)


def test_spec_not_a_mapping():
    with pytest.raises(ValueError, match="model 'm': spec must be a mapping"):
        build_scorer("m", ["openclip"])


# --------------------------------------------------------------------------- openclip: CLIP, NegCLIP, CE-CLIP


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


def test_quickgelu_resolution_real_vit_b32():
    """ViT-B-32 + openai (or an OpenAI-derived file) resolves to QuickGELU; the real architecture is built."""
    assert resolve_quick_gelu("m", "ViT-B-32", "openai", openai_derived=None) is True
    assert resolve_quick_gelu("m", "ViT-B-32", "laion2b_s34b_b79k", openai_derived=None) is False
    assert resolve_quick_gelu("m", "ViT-B-32", "/ckpt/negclip.pth", openai_derived=True) is True
    assert resolve_quick_gelu("m", "ViT-B-32-quickgelu", None, openai_derived=None) is True
    with pytest.raises(ValueError, match="'openai_derived' is required"):
        resolve_quick_gelu("m", "ViT-B-32", "/ckpt/negclip.pth", openai_derived=None)
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


# --------------------------------------------------------------------------- checkpoint errors


def test_missing_truncated_and_pickled_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.pt: weights of model 'm' not found"):
        build_scorer("m", clip_spec(weights=str(tmp_path / "nope.pt"), openai_derived=True))
    good = tmp_path / "good.pt"
    torch.save({"state_dict": toy_state(0)}, good)
    cut = tmp_path / "cut.pt"
    cut.write_bytes(good.read_bytes()[:4096])
    with pytest.raises(ValueError, match="cut.pt: cannot read"):
        build_scorer("m", clip_spec(weights=str(cut), openai_derived=True))
    pickled = tmp_path / "module.pt"
    torch.save(nn.Linear(2, 2), pickled)  # a whole pickled module: never unpickled
    with pytest.raises(ValueError, match="module.pt: cannot read.*refusing to unpickle"):
        read_state_dict(pickled)
    notensor = tmp_path / "notensor.pt"
    torch.save({"state_dict": {"visual.proj": [1.0, 2.0]}}, notensor)
    with pytest.raises(ValueError, match="notensor.pt:.*'visual.proj' is a list"):
        read_state_dict(notensor)


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


# --------------------------------------------------------------------------- CoN-CLIP


def test_conclip_text_from_checkpoint_image_from_base(tmp_path, images):
    """CoN-CLIP's ``{"model": the whole OpenAI CLIP state dict, "optimizer", "args": Namespace}``, image tower
    frozen."""
    base, tuned = toy_state(0), toy_state(5)
    torch.save({"epoch": 0, "state_dict": base}, tmp_path / "base.pt")
    ckpt = {k: (base[k] if k.startswith("visual.") else tuned[k]) for k in base}
    args = argparse.Namespace(clip_model_name="ViT-B/32", lock_image_encoder="on", learning_rate=1e-6)
    torch.save({"model": ckpt, "optimizer": {"state": {}, "param_groups": []}, "args": args},
               tmp_path / "ckpt_5_conclip_b32.pt")
    spec = {"family": "conclip", "arch": ARCH, "weights": str(tmp_path / "base.pt"), "tokenizer": "world",
            "checkpoint": str(tmp_path / "ckpt_5_conclip_b32.pt")}
    scorer = build_scorer("conclip", spec)
    assert activations(scorer.model) == {"QuickGELU"}
    fi, ft = check_dual(scorer, images)
    ref = reference(ckpt, quick_gelu=True)
    torch.testing.assert_close(fi, ref.encode_images(images), atol=1e-6, rtol=0)
    torch.testing.assert_close(ft, ref.encode_texts(TEXTS), atol=1e-6, rtol=0)

    # a file whose image tower moved: an error with image_tower: base, loaded with image_tower: checkpoint
    torch.save({"model": tuned, "args": args}, tmp_path / "unlocked.pt")
    spec["checkpoint"] = str(tmp_path / "unlocked.pt")
    with pytest.raises(ValueError, match=r"unlocked.pt: .*image tower.*'visual\..*differs.*image_tower: "
                                         r"checkpoint"):
        build_scorer("conclip", spec)
    scorer = build_scorer("conclip", {**spec, "image_tower": "checkpoint"})
    expected = reference(tuned, quick_gelu=True).encode_images(images)
    torch.testing.assert_close(scorer.encode_images(images), expected, atol=1e-6, rtol=0)
    # a text tower short of a key
    short = {k: v for k, v in ckpt.items() if k != "token_embedding.weight"}
    torch.save({"model": short}, tmp_path / "short.pt")
    with pytest.raises(ValueError, match=r"short.pt: CoN-CLIP checkpoint \(text tower\).*missing token_emb"):
        build_scorer("conclip", {**spec, "checkpoint": str(tmp_path / "short.pt")})


# --------------------------------------------------------------------------- TSVLC LoRA


def test_lora_conversion_by_hand():
    """Hand-computed merges with r=4, alpha=1 (scaling 0.25): W' = W + 0.25 * B @ A for Linear, attention
    in_proj / out_proj and the folded patch-embedding Conv2d."""

    class Tiny(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.attn = nn.MultiheadAttention(2, 1)
            self.fc = nn.Linear(2, 2)
            self.conv = nn.Conv2d(1, 1, kernel_size=2, stride=2, bias=False)

    model = Tiny()
    with torch.no_grad():
        model.fc.weight.copy_(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
        model.attn.in_proj_weight.copy_(torch.ones(6, 2))
        model.attn.out_proj.weight.copy_(torch.eye(2))
        model.conv.weight.copy_(torch.ones(1, 1, 2, 2))
    z = torch.zeros
    conv_a, conv_b = z(8, 2), z(2, 8)  # fork Conv2d LoRA: A [r*k, in*k], B [out*k, r*k]
    conv_a[0], conv_a[1] = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])
    conv_b[0, 0], conv_b[1, 1] = 1.0, 1.0
    in_b = z(6, 4)
    in_b[0, 0], in_b[1, 1], in_b[4, 0], in_b[4, 1] = 4.0, 4.0, 1.0, 1.0
    lora = {  # the TSVLC fork's names
        "fc.lora_A": torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 0.0]]),
        "fc.lora_B": torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]),
        "attn.in_proj_weight_lora_A": torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0]]),
        "attn.in_proj_weight_lora_B": in_b,
        "attn.out_proj.lora_A": torch.tensor([[2.0, 0.0], [0.0, 2.0], [0.0, 0.0], [0.0, 0.0]]),
        "attn.out_proj.lora_B": torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]),
        "conv.lora_A": conv_a, "conv.lora_B": conv_b,
    }
    conv = convert_tsvlc_lora(lora, model, r=4)
    assert conv.parameter_targets == {"attn.in_proj_weight"}
    assert conv.module_targets == {"fc", "attn.out_proj"}
    peft_key = "base_model.model.{}.lora_{}.weight".format
    assert sorted(conv.parameters) == [peft_key("attn", "A"), peft_key("attn", "B")]
    assert sorted(conv.modules) == sorted(peft_key(p, s) for p in ("fc", "attn.out_proj") for s in "AB")
    assert list(conv.folded) == ["conv.weight"]

    merged = apply_tsvlc_lora(model, lora, r=4, alpha=1, source="hand")
    assert type(merged) is Tiny and type(merged.attn) is nn.MultiheadAttention  # peft wrappers unloaded
    assert not any("lora" in k for k in merged.state_dict())
    # fc: B @ A = [[1, 0], [2, 0]] -> W + 0.25 * that
    torch.testing.assert_close(merged.fc.weight, torch.tensor([[1.25, 2.0], [3.5, 4.0]]))
    # in_proj: B @ A = rows [4,0],[0,4],0,0,[1,1],0 -> 1 + 0.25 * that
    torch.testing.assert_close(merged.attn.in_proj_weight, torch.tensor(
        [[2.0, 1.0], [1.0, 2.0], [1.0, 1.0], [1.0, 1.0], [1.25, 1.25], [1.0, 1.0]]))
    # out_proj: B @ A = 2 * I -> I + 0.5 I
    torch.testing.assert_close(merged.attn.out_proj.weight, torch.tensor([[1.5, 0.0], [0.0, 1.5]]))
    # conv: B @ A = [[1, 2], [3, 4]] viewed [1, 1, 2, 2] -> 1 + 0.25 * that
    torch.testing.assert_close(merged.conv.weight, torch.tensor([[[[1.25, 1.5], [1.75, 2.0]]]]))


def test_lora_conversion_errors():
    model = nn.Sequential()
    model.add_module("fc", nn.Linear(2, 3))
    a, b = torch.zeros(4, 2), torch.zeros(3, 4)
    with pytest.raises(ValueError, match=r"src: fc.lora_A has no matching fc.lora_B"):
        convert_tsvlc_lora({"fc.lora_A": a}, model, r=4, source="src")
    with pytest.raises(ValueError, match=r"src: fc.lora_A/B have shapes \(4, 2\)/\(3, 4\), expected "
                                         r"\(2, 2\)/\(3, 2\) for lora_r=2"):
        convert_tsvlc_lora({"fc.lora_A": a, "fc.lora_B": b}, model, r=2, source="src")
    with pytest.raises(ValueError, match="src: LoRA key 'head.lora_A': the model has no module 'head'"):
        convert_tsvlc_lora({"head.lora_A": a}, model, r=4, source="src")


def _fork_lora(state: dict[str, torch.Tensor], r: int, gen: torch.Generator) -> dict[str, torch.Tensor]:
    """LoRA factors in the TSVLC fork's layout for every adapted module of the toy ViT (both towers)."""
    out = {}
    for tower in ("visual.transformer", "transformer"):
        prefix = f"{tower}.resblocks."
        n_blocks = len([k for k in state if k.startswith(prefix) and k.endswith("c_fc.weight")])
        for i in range(n_blocks):
            p = f"{tower}.resblocks.{i}"
            d = state[f"{p}.attn.out_proj.weight"].shape[0]
            out[f"{p}.attn.in_proj_weight_lora_A"] = torch.randn(r, d, generator=gen) * 0.1
            out[f"{p}.attn.in_proj_weight_lora_B"] = torch.randn(3 * d, r, generator=gen) * 0.1
            for lin in ("attn.out_proj", "mlp.c_fc", "mlp.c_proj"):
                o, i_ = state[f"{p}.{lin}.weight"].shape
                out[f"{p}.{lin}.lora_A"] = torch.randn(r, i_, generator=gen) * 0.1
                out[f"{p}.{lin}.lora_B"] = torch.randn(o, r, generator=gen) * 0.1
    o, i_, k, _ = state["visual.conv1.weight"].shape
    out["visual.conv1.lora_A"] = torch.randn(r * k, i_ * k, generator=gen) * 0.1
    out["visual.conv1.lora_B"] = torch.randn(o * k, r * k, generator=gen) * 0.1
    return out


def test_tsvlc_released_checkpoint(tmp_path, images):
    """TSVLC's training checkpoint (DDP state dict = frozen base + loralib factors), merged through peft,
    equals the fork's formula applied by hand to every adapted weight."""
    r, base = 4, toy_state(0)
    torch.save({"state_dict": base}, tmp_path / "openai_base.pt")
    lora = _fork_lora(base, r, torch.Generator().manual_seed(0))
    file_state = {**base, "logit_scale": base["logit_scale"] - 1e-4, **lora}  # clamped in place in training
    ddp = {f"module.{k}": v for k, v in file_state.items()}
    optimizer = {"state": {}, "param_groups": []}
    torch.save({"epoch": 5, "name": "tsvlc-rb", "state_dict": ddp, "optimizer": optimizer},
               tmp_path / "epoch_5.pt")
    spec = {"family": "tsvlc", "arch": ARCH, "weights": str(tmp_path / "openai_base.pt"),
            "tokenizer": "world", "adapter": str(tmp_path / "epoch_5.pt"), "lora_r": r}
    scorer = build_scorer("tsvlc", spec)
    assert activations(scorer.model) == {"QuickGELU"}
    assert not any("lora" in k for k in scorer.model.state_dict())
    fi, ft = check_dual(scorer, images)

    expected = dict(base)
    for key in lora:
        if not key.endswith("lora_A"):
            continue
        a, b = lora[key], lora[key[:-1] + "B"]
        w = key.replace("in_proj_weight_lora_A", "in_proj_weight").replace("lora_A", "weight")
        expected[w] = base[w] + 0.25 * (b @ a).view(base[w].shape)
    ref = reference(expected, quick_gelu=True)
    torch.testing.assert_close(fi, ref.encode_images(images), atol=1e-5, rtol=0)
    torch.testing.assert_close(ft, ref.encode_texts(TEXTS), atol=1e-5, rtol=0)
    assert not torch.allclose(ft, reference(base, quick_gelu=True).encode_texts(TEXTS), atol=1e-3)

    moved = {**file_state, "ln_final.weight": base["ln_final.weight"] + 0.5}
    torch.save({"state_dict": moved}, tmp_path / "moved.pt")
    with pytest.raises(ValueError, match=r"moved.pt: TSVLC adapter entry 'ln_final.weight' differs from the"):
        build_scorer("tsvlc", {**spec, "adapter": str(tmp_path / "moved.pt")})
    torch.save({"state_dict": base}, tmp_path / "nolora.pt")
    with pytest.raises(ValueError, match="nolora.pt: TSVLC adapter of model 'tsvlc' has no LoRA entries"):
        build_scorer("tsvlc", {**spec, "adapter": str(tmp_path / "nolora.pt")})
    with pytest.raises(ValueError, match=r"expected .* for lora_r=2"):
        build_scorer("tsvlc", {**spec, "lora_r": 2})
    with pytest.raises(FileNotFoundError, match="missing.pt: TSVLC adapter of model 'tsvlc' not found"):
        build_scorer("tsvlc", {**spec, "adapter": str(tmp_path / "missing.pt")})


# --------------------------------------------------------------------------- BLIP / FLAVA (HF directories)

WORDS = ("a the red green blue small large hollow circle square star heart to left of photo cat").split()


def bert_tokenizer(directory, *, blip: bool):
    from transformers import BertTokenizerFast

    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS])}
    tok = BertTokenizerFast(vocab=vocab, do_lower_case=True)
    if blip:  # BLIP's init_tokenizer: bos [DEC], additional special token [ENC]
        tok.add_special_tokens({"bos_token": "[DEC]", "additional_special_tokens": ["[ENC]"]})
    tok.save_pretrained(str(directory))
    return tok


def small(**kw) -> dict:
    return {"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 64,
            **kw}


@pytest.fixture(scope="module")
def blip_dir(tmp_path_factory):
    from transformers import BlipConfig, BlipForImageTextRetrieval

    d = tmp_path_factory.mktemp("blip-itm-base-coco")
    tok = bert_tokenizer(d, blip=True)
    ids = {t: tok.convert_tokens_to_ids(t) for t in ("[PAD]", "[SEP]", "[DEC]")}
    config = BlipConfig(text_config=small(vocab_size=len(tok), max_position_embeddings=40,
                                          pad_token_id=ids["[PAD]"], sep_token_id=ids["[SEP]"],
                                          bos_token_id=ids["[DEC]"]),
                        vision_config=small(image_size=32, patch_size=16), image_text_hidden_size=16)
    torch.manual_seed(0)
    model = BlipForImageTextRetrieval(config)
    with torch.no_grad():  # larger weights than the 0.02-std init, so scores differ visibly between pairs
        for p in model.parameters():
            p.mul_(10.0 if p.dim() > 1 else 1.0)
    model.save_pretrained(str(d))
    return d


def test_blip_cross_scorer(blip_dir, images):
    from PIL import Image as PILImage

    scorer = build_scorer("blip", {"family": "blip", "path": str(blip_dir), "pair_batch": 8})
    assert scorer.retrieval_mode == "rerank" and scorer.k_test == 128
    assert scorer.tokens.max_length == 35
    s = check_cross(scorer, images)
    assert s.std() > 1e-3

    # BLIP's transform_test: 32x32 (the config's size) bicubic, no crop, CLIP mean/std
    x = scorer.preprocess(images[2])
    arr = np.asarray(images[2].resize((32, 32), PILImage.BICUBIC), dtype=np.float32) / 255.0
    mean, std = np.array([0.48145466, 0.4578275, 0.40821073]), np.array([0.26862954, 0.26130258, 0.27577711])
    np.testing.assert_allclose(x.permute(1, 2, 0).numpy(), (arr - mean) / std, atol=1e-5)

    # = transformers' own heads: ITM logit[:, 1] with [ENC] first + ITC cosine with [CLS] first
    model, tok = scorer.model, scorer.tokens
    pix = torch.stack([scorer.preprocess(im) for im in images])
    enc = tok(TEXTS)
    itm_ids = enc["input_ids"].clone()
    itm_ids[:, 0] = scorer.enc_token_id
    with torch.no_grad():
        itm = model(input_ids=itm_ids, pixel_values=pix, attention_mask=enc["attention_mask"]).itm_score[:, 1]
        itc = torch.diagonal(model(input_ids=enc["input_ids"], pixel_values=pix,
                                   attention_mask=enc["attention_mask"], use_itm_head=False).itm_score)
    torch.testing.assert_close(scorer.score_pairs(images, TEXTS), itm + itc, atol=1e-5, rtol=0)

    dual = scorer.dual_view()
    fi, ft = check_dual(dual, images)
    torch.testing.assert_close(torch.diagonal(fi @ ft.T), itc, atol=1e-5, rtol=0)

    cls = build_scorer("blip", {"family": "blip", "path": str(blip_dir), "itm_first_token": "cls"})
    assert cls.enc_token_id is None
    assert not torch.allclose(cls.score_pairs(images, TEXTS), itm + itc, atol=1e-4)


def test_blip_tokenizer_without_enc(blip_dir, tmp_path):
    bert_tokenizer(tmp_path / "tok", blip=False)
    spec = {"family": "blip", "path": str(blip_dir), "tokenizer": str(tmp_path / "tok")}
    with pytest.raises(ValueError, match=r"tok: tokenizer of model 'blip' has no \[ENC\].*'itm_first_token'"):
        build_scorer("blip", spec)
    assert build_scorer("blip", {**spec, "itm_first_token": "cls"}).kind == "cross"


@pytest.fixture(scope="module")
def flava_dir(tmp_path_factory):
    from transformers import FlavaConfig, FlavaForPreTraining

    d = tmp_path_factory.mktemp("flava-full")
    tok = bert_tokenizer(d, blip=False)
    config = FlavaConfig(image_config=small(image_size=32, patch_size=16),
                         text_config=small(vocab_size=len(tok), max_position_embeddings=80, pad_token_id=0),
                         multimodal_config=small(), projection_dim=16, hidden_size=32, init_codebook=False)
    torch.manual_seed(0)
    model = FlavaForPreTraining(config)
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(10.0 if p.dim() > 1 else 1.0)
    model.save_pretrained(str(d))
    return d


def test_flava_cross_scorer(flava_dir, images):
    scorer = build_scorer("flava", {"family": "flava", "path": str(flava_dir), "pair_batch": 4})
    assert scorer.retrieval_mode == "dual_view" and scorer.tokens.max_length == 77
    s = check_cross(scorer, images)
    assert ((s > 0) & (s < 1)).all() and s.std() > 1e-4

    # = ARO's call: FlavaForPreTraining(input_ids_masked=input_ids, bool_masked_pos=0), softmax(itm)[:, 1]
    pix = scorer._pixels(images)
    assert pix.shape == (3, 3, 32, 32)
    enc = scorer.tokens(TEXTS)
    with torch.no_grad():
        out = scorer.model(**enc, input_ids_masked=enc["input_ids"], pixel_values=pix,
                           bool_masked_pos=torch.zeros(3, 4, dtype=torch.long), return_loss=False)
    torch.testing.assert_close(scorer.score_pairs(images, TEXTS), torch.softmax(out.itm_logits, -1)[:, 1],
                               atol=1e-5, rtol=0)

    dual = scorer.dual_view()
    fi, ft = check_dual(dual, images)
    with torch.no_grad():
        ref = scorer.model.flava.get_text_features(**enc).pooler_output[:, 0, :]
    torch.testing.assert_close(ft, nn.functional.normalize(ref, dim=-1), atol=1e-6, rtol=0)


def test_hf_directory_errors(flava_dir, tmp_path):
    from safetensors.torch import load_file, save_file

    with pytest.raises(FileNotFoundError, match="nowhere: directory of model 'flava' not found"):
        build_scorer("flava", {"family": "flava", "path": str(tmp_path / "nowhere")})
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="config.json: not found"):
        build_scorer("flava", {"family": "flava", "path": str(tmp_path / "empty")})
    # a FLAVA directory without the ITM head (e.g. a FlavaModel export): not silently random-initialised
    d = tmp_path / "no_itm"
    d.mkdir()
    for f in flava_dir.iterdir():
        (d / f.name).write_bytes(f.read_bytes())
    weights = load_file(str(d / "model.safetensors"))
    kept = {k: v for k, v in weights.items() if not k.startswith("itm_head.")}
    save_file(kept, str(d / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(ValueError, match=r"no_itm: weights do not fit FlavaForPreTraining \(missing itm_h"):
        build_scorer("flava", {"family": "flava", "path": str(d)})
