"""NegClipLoss: hand-computed 2x4 value, equality with CLIP at M == N, parity with a naive loop (forward and
backward), the text->image term ignoring negative columns, errors and the hard-negative diagnostic."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from vlcomp.losses.clip import ClipLoss
from vlcomp.losses.negclip import NegClipLoss

from .helpers import blocks, flat


def _nll(logit: float, row: list[float]) -> float:
    return -math.log(math.exp(logit) / sum(math.exp(v) for v in row))


def _features(gen: torch.Generator, n: int, d: int = 8) -> torch.Tensor:
    return F.normalize(torch.randn(n, d, generator=gen, dtype=torch.float64), dim=-1)


IMAGES = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
TEXTS = torch.tensor([[0.6, 0.8], [1.0, 0.0], [0.0, 1.0], [0.8, 0.6]])  # T0, T1 true; T2, T3 negatives of T0, T1
# logits = 2 * IMAGES @ TEXTS.T = [[1.2, 2.0, 0.0, 1.6], [1.6, 0.0, 2.0, 1.2]]


def test_negclip_loss_by_hand_2x4() -> None:
    i2t = (_nll(1.2, [1.2, 2.0, 0.0, 1.6]) + _nll(0.0, [1.6, 0.0, 2.0, 1.2])) / 2  # rows over all 4 texts
    t2i = (_nll(1.2, [1.2, 1.6]) + _nll(0.0, [2.0, 0.0])) / 2  # only the 2 true-caption columns
    out = NegClipLoss()(flat(IMAGES, TEXTS, torch.tensor(2.0)))
    assert out["contrastive_loss"].item() == pytest.approx(0.5 * (i2t + t2i), rel=1e-6)
    # diagnostic: caption 0 beats its negative (1.2 > 0.0), caption 1 does not (0.0 < 1.2)
    assert out["hard_negative_acc"].item() == pytest.approx(0.5)


def test_negclip_with_m_equal_n_is_clip() -> None:
    gen = torch.Generator().manual_seed(3)
    for n in (1, 2, 5):
        img, txt = _features(gen, n), _features(gen, n)
        scale = torch.tensor(12.0, dtype=torch.float64)
        neg = NegClipLoss()(flat(img, txt, scale))
        clip = ClipLoss()(flat(img, txt, scale))
        torch.testing.assert_close(neg["contrastive_loss"], clip["contrastive_loss"])
        assert "hard_negative_acc" not in neg  # no negatives to compare against


def _naive_negclip(images: torch.Tensor, texts: torch.Tensor, scale: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-row loop: returns (L_i2t, L_t2i) as in the catalog's formula (§3.3)."""
    n, m = images.shape[0], texts.shape[0]
    i2t = 0.0
    for j in range(n):
        row = torch.stack([scale * images[j] @ texts[k] for k in range(m)])
        i2t = i2t - row[j] + torch.logsumexp(row, 0)
    t2i = 0.0
    for k in range(n):
        col = torch.stack([scale * images[j] @ texts[k] for j in range(n)])
        t2i = t2i - col[k] + torch.logsumexp(col, 0)
    return i2t / n, t2i / n


@pytest.mark.parametrize(("n", "m"), [(1, 2), (3, 6), (4, 16), (4, 7), (6, 6), (2, 8)])
def test_negclip_parity_with_naive_loop_forward_and_backward(n: int, m: int) -> None:
    gen = torch.Generator().manual_seed(100 * n + m)
    img = _features(gen, n).requires_grad_()
    txt = _features(gen, m).requires_grad_()
    scale = torch.tensor(9.0, dtype=torch.float64, requires_grad=True)
    got = NegClipLoss()(flat(img, txt, scale))["contrastive_loss"]
    i2t, t2i = _naive_negclip(img, txt, scale)
    want = 0.5 * (i2t + t2i)
    torch.testing.assert_close(got, want)
    g = torch.autograd.grad(got, (img, txt, scale))
    w = torch.autograd.grad(want, (img, txt, scale))
    for a, b in zip(g, w, strict=True):
        torch.testing.assert_close(a, b)


def test_text_to_image_term_ignores_negative_columns() -> None:
    gen = torch.Generator().manual_seed(7)
    n, m = 3, 6
    img = _features(gen, n)
    txt = _features(gen, m).requires_grad_()
    scale = torch.tensor(5.0, dtype=torch.float64)
    loss = NegClipLoss()(flat(img, txt, scale))["contrastive_loss"]
    (grad,) = torch.autograd.grad(loss, txt)
    # the negatives' gradient comes from the image->text cross-entropy alone
    i2t = F.cross_entropy(scale * img @ txt.T, torch.arange(n))
    (grad_i2t,) = torch.autograd.grad(i2t, txt)
    torch.testing.assert_close(grad[n:], 0.5 * grad_i2t[n:])
    # recomputing: moving a negative changes the loss exactly by half the change of the i2t term
    moved = txt.detach().clone()
    moved[n + 1] = F.normalize(torch.randn(8, generator=gen, dtype=torch.float64), dim=-1)
    new = NegClipLoss()(flat(img, moved, scale))["contrastive_loss"]
    new_i2t = F.cross_entropy(scale * img @ moved.T, torch.arange(n))
    torch.testing.assert_close(new - loss.detach(), 0.5 * (new_i2t - i2t.detach()))
    t2i_before = F.cross_entropy(scale * txt.detach()[:n] @ img.T, torch.arange(n))
    t2i_after = F.cross_entropy(scale * moved[:n] @ img.T, torch.arange(n))
    torch.testing.assert_close(t2i_before, t2i_after)


def test_negatives_raise_the_loss_over_clip() -> None:
    """Extra columns only add terms to the image->text denominators."""
    gen = torch.Generator().manual_seed(11)
    img, txt = _features(gen, 4), _features(gen, 8)
    scale = torch.tensor(10.0, dtype=torch.float64)
    neg = NegClipLoss()(flat(img, txt, scale))["contrastive_loss"]
    clip = ClipLoss()(flat(img, txt[:4], scale))["contrastive_loss"]
    assert neg > clip


def test_fewer_captions_than_images_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"negclip loss needs one caption per image row, got captions \(2, 4\) for 3"):
        NegClipLoss()(blocks(torch.zeros(3, 4), torch.zeros(2, 4)))


def test_hard_negative_acc_matches_a_loop_and_is_detached() -> None:
    gen = torch.Generator().manual_seed(5)
    n = 6
    img = _features(gen, n).requires_grad_()
    txt = _features(gen, 2 * n)  # the hard-image layout: N = 2B images, M = 4B = 2N texts
    scale = torch.tensor(3.0, dtype=torch.float64)
    out = NegClipLoss()(flat(img, txt, scale))
    want = sum(float(img[i] @ txt[i] > img[i] @ txt[n + i]) for i in range(n)) / n
    assert out["hard_negative_acc"].item() == pytest.approx(want)
    assert not out["hard_negative_acc"].requires_grad
    assert 0 < want < 1  # the check is not vacuous for this seed


def test_hard_negative_acc_compares_each_negative_with_its_owners_caption() -> None:
    out = NegClipLoss()(flat(torch.eye(3), torch.eye(3), torch.tensor(1.0)))
    assert "hard_negative_acc" not in out  # no negatives block
    # two negatives, both owned by image row 2: caption 2 scores 1; negative 0 scores 0 (a win), negative 1 scores 1
    # (a tie, not a win)
    f = blocks(torch.eye(3), torch.eye(3), torch.stack([torch.eye(3)[0], torch.eye(3)[2]])[:, None], 1.0, owner=[2, 2])
    assert NegClipLoss()(f)["hard_negative_acc"].item() == 0.5
    full = NegClipLoss()(flat(torch.eye(3), -torch.eye(3).repeat(2, 1), torch.tensor(1.0)))
    assert full["hard_negative_acc"].item() == 0.0  # each negative equals its caption: ties are not wins


def test_masked_negative_slots_leave_the_loss_and_the_diagnostic() -> None:
    """K = 2 negatives per row with the second slot of row 1 masked: equal to the loss with that column removed."""
    gen = torch.Generator().manual_seed(9)
    img, cap = _features(gen, 2), _features(gen, 2)
    negs = _features(gen, 4).reshape(2, 2, 8)
    mask = np.array([[True, True], [True, False]])
    scale = torch.tensor(4.0, dtype=torch.float64)
    got = NegClipLoss()(blocks(img, cap, negs, scale, owner=[0, 1], mask=mask))
    kept = torch.stack([negs[0, 0], negs[0, 1], negs[1, 0]])[:, None]
    want = NegClipLoss()(blocks(img, cap, kept, scale, owner=[0, 0, 1]))
    torch.testing.assert_close(got["contrastive_loss"], want["contrastive_loss"])
    torch.testing.assert_close(got["hard_negative_acc"], want["hard_negative_acc"])
    # by hand: the i2t row of image 1 over [cap0, cap1, n00, n01, n10] (n11 masked)
    logits = scale * img @ torch.cat([cap, negs[0], negs[1, :1]]).T
    i2t = F.cross_entropy(logits, torch.arange(2))
    t2i = F.cross_entropy((scale * img @ cap.T).T, torch.arange(2))
    torch.testing.assert_close(got["contrastive_loss"], 0.5 * (i2t + t2i))
