"""ClipLoss: a hand-computed 2x2 value, parity with a naive loop (forward and backward), the loss registry."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from vlcomp.losses import LOSSES, get_loss
from vlcomp.losses.clip import ClipLoss

from .helpers import blocks, flat


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
    out = ClipLoss()(flat(images, texts, torch.tensor(2.0)))
    assert set(out) == {"contrastive_loss"}
    assert out["contrastive_loss"].item() == pytest.approx(0.5 * (i2t + t2i), rel=1e-6)


def test_clip_loss_uniform_logits_is_log_n() -> None:
    n = 4
    out = ClipLoss()(flat(torch.zeros(n, 3), torch.zeros(n, 3), torch.tensor(10.0)))
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
        got = ClipLoss()(flat(img, txt, scale))["contrastive_loss"]
        want = _naive_clip(img, txt, scale)
        torch.testing.assert_close(got, want)
        g = torch.autograd.grad(got, (img, txt, scale))
        w = torch.autograd.grad(want, (img, txt, scale))
        for a, b in zip(g, w, strict=True):
            torch.testing.assert_close(a, b)


def test_clip_loss_needs_one_caption_per_image_row() -> None:
    with pytest.raises(ValueError, match=r"clip loss needs one caption per image row, got captions \(1, 3\) for 2"):
        ClipLoss()(blocks(torch.zeros(2, 3), torch.zeros(1, 3)))
    f = blocks(torch.zeros(2, 3), torch.zeros(2, 3))
    f.owner["captions"] = torch.tensor([1, 0])
    with pytest.raises(ValueError, match="caption i must belong to image row i"):
        ClipLoss()(f)
    del f.texts["captions"]
    with pytest.raises(ValueError, match="clip loss: the batch has no 'captions' text block"):
        ClipLoss()(f)


def test_clip_loss_ignores_negatives_and_reads_every_image_block() -> None:
    gen = torch.Generator().manual_seed(4)
    img, txt, neg = _features(gen, 4), _features(gen, 4), _features(gen, 4)[:, None]
    plain = ClipLoss()(blocks(img, txt, scale=5.0))["contrastive_loss"]
    split = ClipLoss()(blocks(img, txt, neg, 5.0, image_blocks={"images": 2, "hard_images": 2}))["contrastive_loss"]
    assert torch.equal(plain, split)


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
    out = get_loss(name)(flat(img, txt, torch.tensor(10.0)))
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
