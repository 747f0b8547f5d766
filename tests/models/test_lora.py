"""LoRA through peft (vlcomp.models.lora): hand-computed forwards (W + alpha/r * B @ A) on a Linear and on
attention, backward parity against the naive formula, merged == unmerged, what trains, seeded initialisation,
and specs whose mistakes name the parameter."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.func import functional_call

from vlcomp.methods import apply_modifiers, method_config
from vlcomp.models.factory import ModelSpec, create_model
from vlcomp.models.lora import (
    STATE_PREFIX,
    LoraSpec,
    LoraTargets,
    add_lora,
    inject_lora,
    load_lora_state,
    lora_layers,
    lora_targets,
    merge_lora,
)

ARCH = "toy-vit-p8"


class Tiny(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.attn = nn.MultiheadAttention(4, 2)


def tiny() -> Tiny:
    torch.manual_seed(0)
    return Tiny()


def lora_params(model: nn.Module) -> dict[str, nn.Parameter]:
    return {n: p for n, p in model.named_parameters() if ".lora_" in n}


def test_linear_forward_by_hand():
    """r=2, alpha=1 (scaling 0.5): y = x (W + 0.5 B A)^T + b."""
    model = tiny()
    with torch.no_grad():
        model.fc.weight.copy_(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
        model.fc.bias.copy_(torch.tensor([0.5, -0.5]))
    inject_lora(model, LoraTargets(modules=frozenset({"fc"})), r=2, alpha=1)
    a = torch.tensor([[1.0, 0.0], [1.0, 1.0]])  # [r, in]
    b = torch.tensor([[2.0, 0.0], [0.0, 2.0]])  # [out, r]: B @ A = [[2, 0], [2, 2]]
    load_lora_state(model, {f"{STATE_PREFIX}fc.lora_A.weight": a, f"{STATE_PREFIX}fc.lora_B.weight": b})
    x = torch.tensor([[1.0, 1.0], [2.0, -1.0]])
    # W' = [[2, 2], [4, 5]] -> x W'^T + b
    expected = torch.tensor([[4.5, 8.5], [2.5, 2.5]])
    torch.testing.assert_close(model.fc(x), expected, atol=0, rtol=0)
    merge_lora(model)
    assert type(model.fc) is nn.Linear
    torch.testing.assert_close(model.fc.weight, torch.tensor([[2.0, 2.0], [4.0, 5.0]]), atol=0, rtol=0)
    torch.testing.assert_close(model.fc(x), expected, atol=0, rtol=0)


def test_attention_forward_and_backward_equal_the_naive_formula():
    """Both attention deltas enter the forward once (peft's own MultiheadAttention layer adds out_proj's twice),
    and the gradients of A and B are those of ``W + alpha/r * B @ A`` written out."""
    model = tiny()
    ref = {k: v.clone() for k, v in model.attn.state_dict().items()}
    inject_lora(model, LoraTargets(modules=frozenset({"attn.out_proj"}),
                                   parameters=frozenset({"attn.in_proj_weight"})), r=2, alpha=3)
    gen = torch.Generator().manual_seed(1)
    factors = {"attn": (torch.randn(2, 4, generator=gen) * 0.3, torch.randn(12, 2, generator=gen) * 0.3),
               "attn.out_proj": (torch.randn(2, 4, generator=gen) * 0.3, torch.randn(4, 2, generator=gen) * 0.3)}
    load_lora_state(model, {f"{STATE_PREFIX}{p}.lora_{s}.weight": ab[i] for p, ab in factors.items()
                            for i, s in enumerate("AB")})
    x = torch.randn(5, 3, 4, generator=gen)  # [L, N, E]
    out = model.attn(x, x, x, need_weights=False)[0]
    out.square().sum().backward()

    # the naive formula on a plain attention module
    naive = {k: (ab[0].clone().requires_grad_(), ab[1].clone().requires_grad_()) for k, ab in factors.items()}
    (a_in, b_in), (a_out, b_out) = naive["attn"], naive["attn.out_proj"]
    plain = nn.MultiheadAttention(4, 2)
    weights = {**ref, "in_proj_weight": ref["in_proj_weight"] + 1.5 * b_in @ a_in,
               "out_proj.weight": ref["out_proj.weight"] + 1.5 * b_out @ a_out}
    want = functional_call(plain, weights, (x, x, x), {"need_weights": False})[0]
    want.square().sum().backward()
    torch.testing.assert_close(out, want, atol=1e-6, rtol=1e-6)
    layers = lora_layers(model)
    for path, target in (("attn", "attn.in_proj_weight"), ("attn.out_proj", "attn.out_proj")):
        layer = layers[target]
        for i, side in enumerate((layer.lora_A, layer.lora_B)):
            torch.testing.assert_close(side["default"].weight.grad, naive[path][i].grad, atol=1e-5, rtol=1e-5)
    # the forward never wrote the base weights (the deltas are parametrisations, removed after it)
    base = model.attn.base_layer
    assert torch.equal(base.in_proj_weight, ref["in_proj_weight"])
    assert torch.equal(base.out_proj.base_layer.weight, ref["out_proj.weight"])

    with torch.no_grad():
        merge_lora(model)
    assert type(model.attn) is nn.MultiheadAttention
    assert type(model.attn.out_proj) is nn.modules.linear.NonDynamicallyQuantizableLinear
    assert list(model.attn.state_dict()) == list(ref)  # the plain module's keys, in their order
    torch.testing.assert_close(model.attn.in_proj_weight, weights["in_proj_weight"], atol=1e-6, rtol=0)
    torch.testing.assert_close(model.attn.out_proj.weight, weights["out_proj.weight"], atol=1e-6, rtol=0)
    with torch.no_grad():
        torch.testing.assert_close(model.attn(x, x, x, need_weights=False)[0], want, atol=1e-6, rtol=1e-6)


def _random_b(model: nn.Module, seed: int) -> None:
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for n, p in lora_params(model).items():
            if ".lora_B." in n:
                p.copy_(torch.randn(p.shape, generator=gen) * 0.2)


def test_merged_equals_unmerged_on_both_towers():
    model = create_model(ModelSpec(ARCH), init_seed=0)
    fresh = list(model.state_dict())
    add_lora(model, LoraSpec(layers=("attn", "mlp", "patch_embed")), seed=0)
    targets = set(lora_layers(model))
    assert "visual.conv1" in targets and "transformer.resblocks.1.attn.in_proj_weight" in targets
    assert len(targets) == 1 + 2 * 2 * 4  # patch embedding + 2 towers x 2 blocks x (in_proj, out_proj, c_fc, c_proj)
    _assert_merge_exact(model, ARCH, fresh, seed=0, n=3, atol=1e-6)


def _assert_merge_exact(model: nn.Module, arch: str, fresh: list[str], *, seed: int, n: int, atol: float) -> None:
    """With random B (``seed``), the adapted model's features differ from the plain model's, and merging keeps
    them (to ``atol``) while restoring the plain model's state-dict keys (``fresh``)."""
    _random_b(model, seed)
    model.eval()
    gen = torch.Generator().manual_seed(seed)
    images, tokens = torch.rand(n, 3, 48, 48, generator=gen), torch.randint(1, 100, (n, 32), generator=gen)
    with torch.no_grad():
        before = model(images, tokens)
        merge_lora(model)
        after = model(images, tokens)
    assert list(model.state_dict()) == fresh and not lora_layers(model)
    for key in ("image_features", "text_features"):
        assert not torch.allclose(before[key], create_model(ModelSpec(arch), init_seed=0).eval()(images, tokens)[key])
        torch.testing.assert_close(after[key], before[key], atol=atol, rtol=0)


def test_only_adapters_train_in_the_adapted_tower():
    model = create_model(ModelSpec(ARCH), init_seed=0)
    add_lora(model, LoraSpec(towers=("text",)), seed=0)
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    text_lora = {n for n in lora_params(model) if not n.startswith("visual.")}
    assert text_lora and set(lora_params(model)) == text_lora
    visual = {n for n, _ in model.named_parameters() if n.startswith("visual.")}
    assert trainable == text_lora | visual | {"logit_scale"}  # the other tower and the temperature untouched
    # TSVLC's setting: both towers, the logit scale frozen: only adapters train, and only they get AdamW state
    params = {"methods": {"tsvlc": {"paper": "tsvlc", "generator": "negclip", "loss": "clip", "tuning": {
        "freeze": ["logit_scale"], "lora": {"towers": ["image", "text"], "rank": 4, "alpha": 1,
                                             "layers": ["attn", "mlp", "patch_embed"]}}}}}
    model = apply_modifiers(create_model(ModelSpec(ARCH), init_seed=0), method_config(params, "tsvlc"))
    assert {n for n, p in model.named_parameters() if p.requires_grad} == set(lora_params(model))
    from vlcomp.train.loop import _param_groups

    assert sum(len(g["params"]) for g in _param_groups(model, 0.1)) == len(lora_params(model))


def test_initialisation_is_seeded_and_leaves_the_global_generator_alone():
    state = torch.get_rng_state()
    a = add_lora(create_model(ModelSpec(ARCH), init_seed=0), LoraSpec(), seed=3)
    assert torch.equal(torch.get_rng_state(), state)
    b = add_lora(create_model(ModelSpec(ARCH), init_seed=0), LoraSpec(), seed=3)
    c = add_lora(create_model(ModelSpec(ARCH), init_seed=0), LoraSpec(), seed=4)
    pa, pb, pc = lora_params(a), lora_params(b), lora_params(c)
    assert all(torch.equal(pa[k], pb[k]) for k in pa)
    assert not all(torch.equal(pa[k], pc[k]) for k in pa)
    assert all(not p.any() for n, p in pa.items() if ".lora_B." in n)  # B = 0: step 0 is the base model
    with pytest.raises(ValueError, match="already carries LoRA adapters"):
        add_lora(a, LoraSpec())


def test_merge_without_adapters_is_a_no_op():
    model = create_model(ModelSpec(ARCH), init_seed=0)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    assert merge_lora(model) is model
    assert all(torch.equal(v, state[k]) for k, v in model.state_dict().items())


def _method(model: object) -> dict:
    return {"methods": {"m": {"paper": "aro", "generator": "negclip", "loss": "clip", "tuning": model}}}


@pytest.mark.parametrize("model, message", [
    ({"lora": {"towers": ["vision"]}}, r"methods\.m\.tuning\.lora\.towers=\('vision',\): must be a non-empty list"),
    ({"lora": {"towers": "text"}}, r"methods\.m\.tuning\.lora\.towers='text'"),
    ({"lora": {"towers": []}}, r"methods\.m\.tuning\.lora\.towers=\(\)"),
    ({"lora": {"rank": 0}}, r"methods\.m\.tuning\.lora\.rank=0: must be a positive integer"),
    ({"lora": {"rank": "4"}}, r"methods\.m\.tuning\.lora\.rank='4'"),
    ({"lora": {"rank": True}}, r"methods\.m\.tuning\.lora\.rank=True"),
    ({"lora": {"alpha": -1}}, r"methods\.m\.tuning\.lora\.alpha=-1: must be a positive number"),
    ({"lora": {"layers": ["ffn"]}}, r"methods\.m\.tuning\.lora\.layers=\('ffn',\)"),
    ({"lora": {"layers": ["attn", "attn"]}}, r"methods\.m\.tuning\.lora\.layers=.*distinct"),
    ({"lora": {"dropout": 0.1}}, r"unknown key\(s\) methods\.m\.tuning\.lora\.dropout"),
    ({"lora": 4}, r"methods\.m\.tuning\.lora must be a mapping"),
    ({"lora": {"towers": ["text"]}, "freeze": ["text"]}, r"methods\.m\.tuning\.lora\.towers: \['text'\] are also"),
    ({"freeze": ["temperature"]}, r"methods\.m\.tuning\.freeze: \['temperature'\] are not towers"),
    ([], r"methods\.m\.tuning must be a mapping"),
])
def test_bad_specs_name_the_parameter(model, message):
    with pytest.raises(ValueError, match=message):
        method_config(_method(model), "m")


def test_a_spec_that_matches_nothing_names_the_layers():
    cfg = method_config(_method({"lora": {"towers": ["image"], "layers": ["attn", "mlp"]}}), "m")
    assert cfg.tuning.lora == LoraSpec(towers=("image",), layers=("attn", "mlp"))
    with pytest.raises(ValueError, match=r"lora\.layers=\['attn', 'mlp'\]: no such layer in the image tower"):
        lora_targets(create_model(ModelSpec("toy-rn16"), init_seed=0), cfg.tuning.lora)
    assert method_config(_method({"lora": None}), "m").tuning.lora is None


def test_resnet_tower_conv_and_attnpool_layers_merge_exactly():
    """The ResNet image tower (toy-rn16, standing in for CyCLIP's R50): every stem, bottleneck and downsample conv
    and the attention pool's four projections carry adapters; merged equals unmerged (BatchNorm in eval mode)."""
    arch = "toy-rn16"
    model = create_model(ModelSpec(arch), init_seed=0)
    fresh = list(model.state_dict())
    targets = lora_targets(model, LoraSpec(towers=("image",), layers=("conv", "attnpool")))
    convs = [n for n, m in model.named_modules() if isinstance(m, nn.Conv2d)]
    assert targets.modules == frozenset(convs) | {f"visual.attnpool.{p}_proj" for p in "qkvc"}
    assert len(convs) == 3 + 4 * 4  # stem + 4 stages x (3 bottleneck convs + downsample)
    with pytest.raises(ValueError, match="no such layer in the image tower"):
        lora_targets(model, LoraSpec(towers=("image",), layers=("patch_embed",)))  # a ResNet has no patch embedding
    add_lora(model, LoraSpec(towers=("image", "text"), layers=("conv", "attnpool", "attn", "mlp")), seed=0)
    _assert_merge_exact(model, arch, fresh, seed=1, n=2, atol=1e-5)
