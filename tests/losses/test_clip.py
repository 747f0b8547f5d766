"""ClipLoss: a hand-computed 2x2 value, parity with a naive loop (forward and backward), the loss registry."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from vlcomp.losses import LOSSES, get_loss
from vlcomp.losses.clip import ClipLoss


def _nll(logit: float, row: list[float]) -> float:
    """-log softmax(row)[logit's position], by hand."""
    return -math.log(math.exp(logit) / sum(math.exp(v) for v in row))


def _features(gen: torch.Generator, n: int, d: int = 8) -> torch.Tensor:
    return F.normalize(torch.randn(n, d, generator=gen, dtype=torch.float64), dim=-1)


def test_clip_loss_by_hand_2x2() -> None:
    images = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    texts = torch.tensor([[0.6, 0.8], [1.0, 0.0]])
    # logits = 2 * images @ texts.T = [[1.2, 2.0], [1.6, 0.0]]
    i2t = (_nll(1.2, [1.2, 2.0]) + _nll(0.0, [1.6, 0.0])) / 2  # rows
    t2i = (_nll(1.2, [1.2, 1.6]) + _nll(0.0, [2.0, 0.0])) / 2  # columns
    out = ClipLoss()(image_features=images, text_features=texts, logit_scale=torch.tensor(2.0))
    assert set(out) == {"contrastive_loss"}
    assert out["contrastive_loss"].item() == pytest.approx(0.5 * (i2t + t2i), rel=1e-6)


def test_clip_loss_uniform_logits_is_log_n() -> None:
    n = 4
    out = ClipLoss()(image_features=torch.zeros(n, 3), text_features=torch.zeros(n, 3), logit_scale=torch.tensor(10.0))
    assert out["contrastive_loss"].item() == pytest.approx(math.log(n))


def _naive_clip(images: torch.Tensor, texts: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    n = images.shape[0]
    i2t = sum(-(scale * images[j] @ texts[j]) + torch.logsumexp(scale * images[j] @ texts.T, 0) for j in range(n))
    t2i = sum(-(scale * images[k] @ texts[k]) + torch.logsumexp(scale * texts[k] @ images.T, 0) for k in range(n))
    return 0.5 * (i2t / n + t2i / n)


def test_clip_loss_parity_with_naive_loop_forward_and_backward() -> None:
    gen = torch.Generator().manual_seed(0)
    for n in (1, 3, 6):
        img = _features(gen, n).requires_grad_()
        txt = _features(gen, n).requires_grad_()
        scale = torch.tensor(7.5, dtype=torch.float64, requires_grad=True)
        got = ClipLoss()(image_features=img, text_features=txt, logit_scale=scale)["contrastive_loss"]
        want = _naive_clip(img, txt, scale)
        torch.testing.assert_close(got, want)
        g = torch.autograd.grad(got, (img, txt, scale))
        w = torch.autograd.grad(want, (img, txt, scale))
        for a, b in zip(g, w, strict=True):
            torch.testing.assert_close(a, b)


def test_clip_loss_needs_square_batch() -> None:
    with pytest.raises(ValueError, match="as many texts as images, got 4 vs 2"):
        ClipLoss()(image_features=torch.zeros(2, 3), text_features=torch.zeros(4, 3), logit_scale=torch.tensor(1.0))


# ----------------------------------------------------------------------------------------- registry sweep


def test_registry_has_the_paper_losses() -> None:
    assert {"clip", "negclip"} <= set(LOSSES.names())
    with pytest.raises(ValueError, match="unknown loss 'siglip'; known: .*clip"):
        get_loss("siglip")


@pytest.mark.parametrize("name", LOSSES.names())
def test_every_registered_loss_follows_the_contract(name: str) -> None:
    gen = torch.Generator().manual_seed(1)
    img = _features(gen, 4).float().requires_grad_()
    txt = _features(gen, 4).float().requires_grad_()
    out = get_loss(name)(image_features=img, text_features=txt, logit_scale=torch.tensor(10.0), unused_extra=1)
    assert isinstance(out, dict) and out
    loss_terms = [k for k in out if k.endswith("_loss")]
    assert loss_terms, f"{name} returns no term ending in _loss: {sorted(out)}"
    for k, v in out.items():
        assert isinstance(v, torch.Tensor) and v.ndim == 0 and torch.isfinite(v), (k, v)
        if not k.endswith("_loss"):
            assert not v.requires_grad, f"diagnostic {k} must be detached"
    total = sum(out[k] for k in loss_terms)
    total.backward()
    assert img.grad is not None and txt.grad is not None
