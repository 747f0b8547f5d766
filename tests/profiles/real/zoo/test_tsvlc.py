"""Family ``tsvlc``: the TSVLC fork's LoRA names mapped onto peft's (checked by hand), applied through the shared
LoRA helpers (vlcomp.models.lora) and merged, and errors naming the file or the key."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from vlcomp.profiles.real.zoo import build_scorer
from vlcomp.profiles.real.zoo.tsvlc import apply_tsvlc_lora, convert_tsvlc_lora

from .helpers import ARCH, TEXTS, activations, check_dual, reference, toy_state


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


def _fork_lora(state: dict[str, torch.Tensor], r: int, gen: torch.Generator,
               towers: tuple[str, ...] = ("visual.transformer", "transformer")) -> dict[str, torch.Tensor]:
    """LoRA factors in the TSVLC fork's layout for every adapted module of the toy ViT (``towers``; the
    patch embedding with the image tower)."""
    out = {}
    for tower in towers:
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
    if "visual.transformer" in towers:
        o, i_, k, _ = state["visual.conv1.weight"].shape
        out["visual.conv1.lora_A"] = torch.randn(r * k, i_ * k, generator=gen) * 0.1
        out["visual.conv1.lora_B"] = torch.randn(o * k, r * k, generator=gen) * 0.1
    return out


def _by_hand(base: dict[str, torch.Tensor], lora: dict[str, torch.Tensor], scale: float) -> dict:
    """The fork's formula applied to every adapted weight: W + scale * (B @ A).view(W.shape)."""
    expected = dict(base)
    for key in lora:
        if not key.endswith("lora_A"):
            continue
        a, b = lora[key], lora[key[:-1] + "B"]
        w = key.replace("in_proj_weight_lora_A", "in_proj_weight").replace("lora_A", "weight")
        expected[w] = base[w] + scale * (b @ a).view(base[w].shape)
    return expected


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

    ref = reference(_by_hand(base, lora, 0.25), quick_gelu=True)
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


def test_text_only_adapter_leaves_the_image_tower_alone(tmp_path, images):
    """TSVLC with ``--freeze_img``: LoRA on the text tower only. peft matches ``target_parameters`` by suffix,
    and ``transformer.resblocks.0.attn.in_proj_weight`` ends the image tower's name too: the adapters must land
    on the text tower alone, alpha 2 (scaling 0.5) honoured."""
    r, base = 4, toy_state(0)
    torch.save({"state_dict": base}, tmp_path / "openai_base.pt")
    lora = _fork_lora(base, r, torch.Generator().manual_seed(1), towers=("transformer",))
    torch.save({"state_dict": {**base, **lora}}, tmp_path / "text_only.pt")
    spec = {"family": "tsvlc", "arch": ARCH, "weights": str(tmp_path / "openai_base.pt"), "tokenizer": "world",
            "adapter": str(tmp_path / "text_only.pt"), "lora_r": r, "lora_alpha": 2}
    scorer = build_scorer("tsvlc", spec)
    merged = scorer.model.state_dict()
    for k, v in base.items():
        if k.startswith("visual."):
            assert torch.equal(merged[k], v), k
    ref = reference(_by_hand(base, lora, 0.5), quick_gelu=True)
    torch.testing.assert_close(scorer.encode_texts(TEXTS), ref.encode_texts(TEXTS), atol=1e-5, rtol=0)
    torch.testing.assert_close(scorer.encode_images(images), ref.encode_images(images), atol=1e-6, rtol=0)
