"""The training forward pass's speed options (vlcomp.models.encode): text length buckets are one trimmed batch up to
float rounding, forward and backward, in the input order; bfloat16 towers really run in bfloat16 with the math
attention backend and hand the loss float32 features close to the float32 ones; channels-last evaluation batches
really reach the image tower in that layout and give the same features up to float rounding."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from vlcomp.models.encode import (
    clip_forward,
    encode_text_buckets,
    encode_text_tokens,
    length_buckets,
    text_lengths,
    tower_precision,
)
from vlcomp.models.factory import ModelSpec, create_model
from vlcomp.models.scorers import toy_scorer
from vlcomp.text.tokenizer import get_tokenizer

WORDS = "a the red blue green small large circle square star cross arrow above below left right of and".split()


def _texts(n: int, seed: int = 0) -> list[str]:
    g = np.random.default_rng(seed)
    return [" ".join(g.choice(WORDS, size=int(g.integers(1, 14)))) for _ in range(n)]


@pytest.fixture(scope="module", params=["toy-rn16", "toy-vit-p8"])
def model_tok(request):
    spec = ModelSpec(request.param, None, "world", 32)
    return create_model(spec, init_seed=3), get_tokenizer("world", spec.arch, 32)


def _cost(lengths: list[int], groups: list[list[int]]) -> int:
    return sum(len(g) * max(lengths[i] for i in g) for g in groups)


def test_text_lengths_by_hand() -> None:
    tokens = torch.tensor([[5, 6, 7, 0, 0], [5, 0, 0, 0, 0], [5, 6, 7, 8, 9], [0, 0, 0, 0, 0]])
    assert text_lengths(tokens).tolist() == [3, 1, 5, 0]


def test_length_buckets_by_hand() -> None:
    lengths = torch.tensor([9, 3, 3, 4, 9, 3])
    # two groups: {3,3,3,4} x 4 + {9,9} x 9 = 34 tokens, against 6 x 9 = 54 in one batch
    assert [g.tolist() for g in length_buckets(lengths, 2)] == [[1, 2, 5, 3], [0, 4]]
    assert [g.tolist() for g in length_buckets(lengths, 1)] == [[1, 2, 5, 3, 0, 4]]
    # more groups than distinct lengths: one group per length
    assert [g.tolist() for g in length_buckets(lengths, 10)] == [[1, 2, 5], [3], [0, 4]]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [2, 3, 4])
def test_length_buckets_are_optimal_against_every_partition(seed: int, k: int) -> None:
    g = np.random.default_rng(seed)
    lengths = [int(v) for v in g.integers(2, 12, size=12)]
    groups = [gr.tolist() for gr in length_buckets(torch.tensor(lengths), k)]
    assert sorted(i for gr in groups for i in gr) == list(range(12)) and len(groups) <= k
    order = sorted(range(12), key=lambda i: (lengths[i], i))
    best = min(_cost(lengths, [order[a:b] for a, b in zip((0, *cuts), (*cuts, 12), strict=True)])
               for j in range(k) for cuts in itertools.combinations(range(1, 12), j))
    assert _cost(lengths, groups) == best


@pytest.mark.parametrize("k", [2, 4])
def test_text_buckets_match_one_batch_forward_and_backward(model_tok, k: int) -> None:
    model, tok = model_tok
    model.train()
    tokens = tok(_texts(40))
    ref = encode_text_tokens(model, tokens, normalize=True)
    g_ref = torch.autograd.grad((ref * torch.linspace(-1, 1, ref.numel()).view_as(ref)).sum(),
                                list(model.transformer.parameters()))
    calls = []
    hook = model.transformer.register_forward_hook(lambda mod, inp, out: calls.append(inp[0].shape[1]))
    try:
        got = encode_text_buckets(model, tokens, k, normalize=True)
    finally:
        hook.remove()
    g_got = torch.autograd.grad((got * torch.linspace(-1, 1, got.numel()).view_as(got)).sum(),
                                list(model.transformer.parameters()))
    assert len(calls) == k and len(set(calls)) == k  # k forward passes of k different lengths: the path ran
    assert max(calls) == int(text_lengths(tokens).max())
    torch.testing.assert_close(got, ref, atol=2e-6, rtol=1e-5)  # same rows, same order
    for a, b in zip(g_got, g_ref, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)


def test_one_bucket_is_the_plain_trimmed_batch_bitwise(model_tok) -> None:
    model, tok = model_tok
    tokens = tok(_texts(10, seed=1))
    with torch.no_grad():
        assert torch.equal(encode_text_buckets(model, tokens, 1), encode_text_tokens(model, tokens))
        x = torch.randn(2, 3, 48, 48, generator=torch.Generator().manual_seed(0))
        a, b = clip_forward(model.eval(), x, tokens[:2]), clip_forward(model, x, tokens[:2], text_buckets=0,
                                                                      precision="fp32")
    assert all(torch.equal(a[key], b[key]) for key in a)


def test_bf16_towers_run_in_bfloat16_with_math_attention(model_tok) -> None:
    model, tok = model_tok
    model.train()
    x = torch.randn(4, 3, 48, 48, generator=torch.Generator().manual_seed(0))
    tokens = tok(_texts(8, seed=2))
    seen = {}

    def record(name):
        def hook(mod, inp, out):
            seen[name] = (out.dtype, torch.backends.cuda.math_sdp_enabled(), torch.backends.cuda.flash_sdp_enabled())
        return hook

    linear = next(m for n, m in model.transformer.named_modules() if "mlp" in n and isinstance(m, torch.nn.Linear))
    conv = next(m for m in model.visual.modules() if isinstance(m, torch.nn.Conv2d))
    hooks = [linear.register_forward_hook(record("text")), conv.register_forward_hook(record("image"))]
    try:
        got = clip_forward(model, x, tokens, precision="bf16")
    finally:
        for h in hooks:
            h.remove()
    assert seen["text"] == (torch.bfloat16, True, False) and seen["image"][0] == torch.bfloat16
    assert torch.backends.cuda.flash_sdp_enabled()  # the math-only choice ends with the context
    assert got["image_features"].dtype == got["text_features"].dtype == torch.float32
    ref = clip_forward(model, x, tokens)
    for key in ("image_features", "text_features"):
        cos = (got[key] * ref[key]).sum(-1).detach()
        assert float(cos.min()) > 0.995, key  # bfloat16 keeps ~3 significant digits
    params = [*model.visual.parameters(), *model.transformer.parameters()]
    loss = lambda out: (out["image_features"] @ out["text_features"].T).logsumexp(1).sum()  # noqa: E731
    g_ref = torch.cat([g.flatten() for g in torch.autograd.grad(loss(ref), params)])
    g_got = torch.cat([g.flatten() for g in torch.autograd.grad(loss(got), params)])
    assert float(torch.nn.functional.cosine_similarity(g_got, g_ref, dim=0)) > 0.95  # the same descent direction


def test_tower_precision_rejects_an_unknown_precision() -> None:
    with pytest.raises(ValueError, match="precision='fp16'"):
        tower_precision("fp16")


@pytest.mark.parametrize("arch", ["toy-rn16", "toy-vit-p8"])
def test_channels_last_scoring_is_off_by_default_and_close_when_on(arch: str) -> None:
    model = create_model(ModelSpec(arch), init_seed=0)
    tok = get_tokenizer("world", arch, 32)
    g = np.random.default_rng(0)
    images = [g.integers(0, 256, size=(int(g.integers(20, 70)), int(g.integers(20, 70)), 3), dtype=np.uint8)
              for _ in range(12)]
    plain, fast = toy_scorer("a", model, tok), toy_scorer("b", model, tok, channels_last=True)
    assert plain.channels_last is False
    layouts = []
    hook = model.visual.register_forward_pre_hook(
        lambda mod, inp: layouts.append(inp[0].is_contiguous(memory_format=torch.channels_last)))
    try:
        a, b = plain.encode_images(images), fast.encode_images(images)
    finally:
        hook.remove()
    assert layouts == [False, True]
    torch.testing.assert_close(b, a, atol=1e-6, rtol=1e-5)  # the same features up to float rounding
