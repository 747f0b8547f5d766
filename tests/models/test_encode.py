"""Text encoding cut to the batch's longest caption is exactly open_clip's encode_text (parity tests)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from vlcomp.models.encode import clip_forward, encode_text_tokens, encode_texts
from vlcomp.models.factory import ModelSpec, create_model
from vlcomp.text.tokenizer import get_tokenizer

TEXTS = [
    "a red circle",
    "there is a large blue striped square to the left of a small green hollow triangle with a cross",
    "the arrow is pointing at the star",
    "circle",
    "a red circle",  # duplicate
    "a small yellow dotted diamond above a purple cross on a gray background",
]


@pytest.fixture(scope="module", params=["toy-rn16", "toy-vit-p8"])
def model_tok(request):
    spec = ModelSpec(request.param, None, "world", 32)
    model = create_model(spec, init_seed=3).eval()
    return model, get_tokenizer("world", spec.arch, 32)


def test_trimmed_tokens_match_encode_text(model_tok) -> None:
    model, tok = model_tok
    tokens = tok(TEXTS)
    with torch.no_grad():
        ref = model.encode_text(tokens)
        got = encode_text_tokens(model, tokens)
        short = encode_text_tokens(model, tok(["a red circle", "circle"]))  # cut to 5 positions
    torch.testing.assert_close(got, ref, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(short, ref[[0, 3]], atol=1e-5, rtol=1e-5)


def test_encode_texts_matches_a_one_caption_loop(model_tok) -> None:
    model, tok = model_tok
    got = encode_texts(model, tok, TEXTS, batch_size=2)  # sorted by length, several batches
    with torch.no_grad():
        ref = torch.cat([torch.nn.functional.normalize(model.encode_text(tok([t])), dim=-1) for t in TEXTS])
    torch.testing.assert_close(got, ref, atol=1e-5, rtol=1e-5)
    assert got.shape == (len(TEXTS), ref.shape[1])


def test_clip_forward_matches_model_forward_with_gradients(model_tok) -> None:
    model, tok = model_tok
    model.train()
    x = torch.randn(3, 3, 48, 48, generator=torch.Generator().manual_seed(0))
    tokens = tok(TEXTS[:3])
    torch.manual_seed(0)
    ref = model(x, tokens)
    g_ref = torch.autograd.grad(ref["text_features"].sum() + ref["image_features"].sum(), model.token_embedding.weight)[0]
    torch.manual_seed(0)
    got = clip_forward(model, x, tokens)
    g_got = torch.autograd.grad(got["text_features"].sum() + got["image_features"].sum(), model.token_embedding.weight)[0]
    model.eval()
    for k in ("image_features", "text_features", "logit_scale"):
        torch.testing.assert_close(got[k], ref[k], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(g_got, g_ref, atol=1e-5, rtol=1e-5)


def test_non_causal_or_unknown_text_towers_fall_back_to_encode_text() -> None:
    class Tower(torch.nn.Module):
        calls = 0

        def encode_text(self, tokens, normalize=False):
            Tower.calls += 1
            return tokens.float()

    tokens = torch.tensor(np.array([[2, 5, 9, 0], [2, 9, 0, 0]]))
    out = encode_text_tokens(Tower(), tokens)
    assert Tower.calls == 1 and out.shape == (2, 4)  # nothing cut
