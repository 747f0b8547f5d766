"""TsvlcLoss: every term against hand-computed values, parity with a naive per-row loop (forward and backward, both
analogy directions, masked rows, K = 2 and shared owners), equality with CLIP / NegCLIP, masked slots, the
all-masked negatives case, the registry and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from vlcomp.losses import LOSSES, get_loss
from vlcomp.losses.clip import ClipLoss
from vlcomp.losses.negclip import NegClipLoss
from vlcomp.losses.tsvlc import TsvlcLoss
from vlcomp.train.batch import Batch, TextBlock, features

from .helpers import blocks


def _nll(logit: float, row: list[float]) -> float:
    """-log softmax(row)[logit's position], by hand."""
    return -math.log(math.exp(logit) / sum(math.exp(v) for v in row))


def _features(gen: torch.Generator, n: int, d: int = 4) -> torch.Tensor:
    return F.normalize(torch.randn(n, d, generator=gen, dtype=torch.float64), dim=-1)


def make(images: torch.Tensor, captions: torch.Tensor, negatives: torch.Tensor | None = None,
         positives: torch.Tensor | None = None, scale: torch.Tensor | float = 1.0, *,
         neg_owner: list[int] | None = None, neg_mask: list[list[bool]] | None = None,
         pos_mask: list[list[bool]] | None = None, captions_block: bool = True):
    """Features with one image block, ``captions`` [N, D], optional ``negatives`` [R, K, D] (owner ``neg_owner``
    or ``arange(R)``, mask ``neg_mask`` [R, K]) and optional ``positives`` ([N, 1, D] grouped with mask
    ``pos_mask``, or [N, D] plain; any other shape is passed through for the error tests)."""
    n = images.shape[0]
    texts, feats = {}, {}
    if captions_block:
        texts["captions"] = TextBlock(["t"] * captions.shape[0], np.arange(captions.shape[0]))
        feats["captions"] = captions
    if negatives is not None:
        r, k = negatives.shape[0], negatives.shape[1]
        own = np.asarray(neg_owner if neg_owner is not None else np.arange(r))
        texts["negatives"] = TextBlock(["t"] * (r * k), own, k, None if neg_mask is None else np.array(neg_mask))
        feats["negatives"] = negatives
    if positives is not None:
        rows = positives.shape[0]
        if positives.ndim == 2:
            texts["positives"] = TextBlock(["t"] * rows, np.arange(rows))
        else:
            k = positives.shape[1]
            texts["positives"] = TextBlock(["t"] * (rows * k), np.arange(rows), k,
                                           None if pos_mask is None else np.array(pos_mask))
        feats["positives"] = positives
    scale = scale if isinstance(scale, torch.Tensor) else torch.tensor(scale)
    return features(Batch({"images": np.zeros(n, dtype=np.int64)}, texts), {"images": images}, feats, scale)


# --- hand-computed values -----------------------------------------------------------------------------------

IMAGES = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
CAPTIONS = torch.tensor([[0.6, 0.8], [1.0, 0.0]])
NEGATIVES = torch.tensor([[[0.0, 1.0]], [[0.8, 0.6]]])  # [2, 1, 2]: one negative per caption
# scale 2: s I Tᵀ = [[1.2, 2.0], [1.6, 0.0]]; s I_0·neg_0 = 0.0, s I_1·neg_1 = 1.2
# s I negᵀ (all columns) = [[0.0, 1.6], [2.0, 1.2]]
CONTRASTIVE = 0.5 * (0.5 * (_nll(1.2, [1.2, 2.0]) + _nll(0.0, [1.6, 0.0]))  # image -> text, rows
                     + 0.5 * (_nll(1.2, [1.2, 1.6]) + _nll(0.0, [2.0, 0.0])))  # text -> image, columns


def test_contrastive_and_negatives_loss_by_hand() -> None:
    out = TsvlcLoss()(make(IMAGES, CAPTIONS, NEGATIVES, scale=2.0))
    assert set(out) == {"contrastive_loss", "negatives_loss", "negative_acc"}
    assert out["contrastive_loss"].item() == pytest.approx(CONTRASTIVE, rel=1e-6)  # negatives not in L_cont
    # Eq. 3 per row: softmax over {own caption, own negative}
    neg = 0.5 * (_nll(1.2, [1.2, 0.0]) + _nll(0.0, [0.0, 1.2]))
    assert out["negatives_loss"].item() == pytest.approx(neg, rel=1e-6)
    # row 0: 0.0 < 1.2 (a win); row 1: 1.2 > 0.0 (a loss)
    assert out["negative_acc"].item() == pytest.approx(0.5)
    assert not out["negative_acc"].requires_grad


def test_negatives_in_contrastive_by_hand() -> None:
    out = TsvlcLoss(negatives_in_contrastive=True, negatives_loss=False)(make(IMAGES, CAPTIONS, NEGATIVES, scale=2.0))
    assert set(out) == {"contrastive_loss", "negative_acc"}
    i2t = 0.5 * (_nll(1.2, [1.2, 2.0, 0.0, 1.6]) + _nll(0.0, [1.6, 0.0, 2.0, 1.2]))  # rows over [T0, T1, n0, n1]
    t2i = 0.5 * (_nll(1.2, [1.2, 1.6]) + _nll(0.0, [2.0, 0.0]))  # columns: captions only
    assert out["contrastive_loss"].item() == pytest.approx(0.5 * (i2t + t2i), rel=1e-6)


def test_masked_negative_by_hand() -> None:
    f = make(IMAGES, CAPTIONS, NEGATIVES, scale=2.0, neg_mask=[[True], [False]])
    out = TsvlcLoss(negatives_in_contrastive=True)(f)
    i2t = 0.5 * (_nll(1.2, [1.2, 2.0, 0.0]) + _nll(0.0, [1.6, 0.0, 2.0]))  # column n1 gone
    t2i = 0.5 * (_nll(1.2, [1.2, 1.6]) + _nll(0.0, [2.0, 0.0]))
    assert out["contrastive_loss"].item() == pytest.approx(0.5 * (i2t + t2i), rel=1e-6)
    assert out["negatives_loss"].item() == pytest.approx(_nll(1.2, [1.2, 0.0]), rel=1e-6)  # row 1 has none
    assert out["negative_acc"].item() == 1.0


def test_two_negatives_per_row_by_hand() -> None:
    """K = 2, scale 1: row 0 has two negatives, row 1 one (its second slot masked)."""
    negs = torch.tensor([[[0.0, 1.0], [0.8, 0.6]], [[1.0, 0.0], [0.3, 0.3]]])
    f = make(IMAGES, CAPTIONS, negs, scale=1.0, neg_mask=[[True, True], [True, False]])
    # s I Tᵀ = [[0.6, 1.0], [0.8, 0.0]]; row 0's negatives 0.0, 0.8; row 1's negative I_1·[1, 0] = 0.0
    out = TsvlcLoss(negatives_in_contrastive=True)(f)
    neg = 0.5 * (_nll(0.6, [0.6, 0.0, 0.8]) + _nll(0.0, [0.0, 0.0]))
    assert out["negatives_loss"].item() == pytest.approx(neg, rel=1e-6)
    assert _nll(0.0, [0.0, 0.0]) == pytest.approx(math.log(2))
    # 0.0 < 0.6 win, 0.8 > 0.6 loss, 0.0 == 0.0 tie (not a win)
    assert out["negative_acc"].item() == pytest.approx(1 / 3)
    # columns [T0, T1, n00, n01, n10]: I_0 -> [0.6, 1.0, 0.0, 0.8, 1.0]; I_1 -> [0.8, 0.0, 1.0, 0.6, 0.0]
    i2t = 0.5 * (_nll(0.6, [0.6, 1.0, 0.0, 0.8, 1.0]) + _nll(0.0, [0.8, 0.0, 1.0, 0.6, 0.0]))
    t2i = 0.5 * (_nll(0.6, [0.6, 0.8]) + _nll(0.0, [1.0, 0.0]))
    assert out["contrastive_loss"].item() == pytest.approx(0.5 * (i2t + t2i), rel=1e-6)


# three rows, the middle positive masked; valid rows 0 and 2: I = [[1, 0], [0, 1]], T = [[0.6, 0.8], [0.8, 0.6]],
# P = [[1, 0], [0.6, 0.8]]. Scale 2:
#   s I Pᵀ = [[2.0, 1.2], [0.0, 1.6]]      s T Pᵀ = [[1.2, 2.0], [1.6, 1.92]]
#   s P Tᵀ = [[1.2, 1.6], [2.0, 1.92]]     s P Iᵀ = [[2.0, 0.0], [1.2, 1.6]]
A_IMAGES = torch.tensor([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]])
A_CAPTIONS = torch.tensor([[0.6, 0.8], [0.0, 1.0], [0.8, 0.6]])
A_POSITIVES = torch.tensor([[[1.0, 0.0]], [[0.28, 0.96]], [[0.6, 0.8]]])
A_MASK = [[True], [False], [True]]


@pytest.mark.parametrize("direction", ["repo", "paper"])
def test_analogy_loss_by_hand(direction: str) -> None:
    out = TsvlcLoss(analogy_direction=direction)(make(A_IMAGES, A_CAPTIONS, positives=A_POSITIVES, scale=2.0,
                                                      pos_mask=A_MASK))
    assert set(out) == {"contrastive_loss", "analogy_loss"}
    if direction == "repo":
        image_to_pos = 0.5 * (_nll(2.0, [2.0, 1.2]) + _nll(1.6, [0.0, 1.6]))
        text_to_pos = 0.5 * (_nll(1.2, [1.2, 2.0]) + _nll(1.92, [1.6, 1.92]))
        want = 0.5 * (image_to_pos + text_to_pos)
    else:
        eq4 = 0.5 * (_nll(1.2, [1.2, 1.6]) + _nll(1.92, [2.0, 1.92]))  # over the original texts
        eq5 = 0.5 * (_nll(2.0, [2.0, 0.0]) + _nll(1.6, [1.2, 1.6]))  # over the images
        want = 0.5 * (eq4 + eq5)
    assert out["analogy_loss"].item() == pytest.approx(want, rel=1e-6)


def test_total_is_the_reference_sum() -> None:
    f = make(A_IMAGES, A_CAPTIONS, A_CAPTIONS[:, None] * torch.tensor([1.0, -1.0]), A_POSITIVES, scale=2.0)
    out = TsvlcLoss()(f)
    assert set(out) == {"contrastive_loss", "negatives_loss", "analogy_loss", "negative_acc"}
    total = sum(v for k, v in out.items() if k.endswith("_loss"))
    torch.testing.assert_close(total, out["contrastive_loss"] + out["negatives_loss"] + out["analogy_loss"])


# --- parity with a naive loop ---------------------------------------------------------------------------------


def _lse_nll(target: torch.Tensor, row: list[torch.Tensor]) -> torch.Tensor:
    return torch.logsumexp(torch.stack(row), 0) - target


def _naive(images, captions, negs, neg_owner, neg_valid, pos, pos_valid, scale, *, in_contrastive: bool,
           direction: str) -> dict[str, torch.Tensor]:
    """Per-row loops over the catalog's formulas (§3.2). ``negs`` [M, D] flattened with owners and validity."""
    n, m = images.shape[0], negs.shape[0]

    def s(a, b):
        return scale * (a @ b)

    i2t = 0.0
    for i in range(n):
        row = [s(images[i], captions[j]) for j in range(n)]
        if in_contrastive:
            row += [s(images[i], negs[r]) for r in range(m) if neg_valid[r]]
        i2t = i2t + _lse_nll(s(images[i], captions[i]), row)
    t2i = 0.0
    for j in range(n):
        t2i = t2i + _lse_nll(s(images[j], captions[j]), [s(images[i], captions[j]) for i in range(n)])
    out = {"contrastive_loss": 0.5 * (i2t / n + t2i / n)}

    terms = []
    for i in range(n):
        own = [r for r in range(m) if neg_owner[r] == i and neg_valid[r]]
        if own:
            pos_logit = s(images[i], captions[i])
            terms.append(_lse_nll(pos_logit, [pos_logit] + [s(images[i], negs[r]) for r in own]))
    out["negatives_loss"] = sum(terms) / len(terms)
    valid = [r for r in range(m) if neg_valid[r]]
    out["negative_acc"] = torch.tensor(sum(float(s(images[neg_owner[r]], negs[r]) < s(images[neg_owner[r]],
                                                                                        captions[neg_owner[r]]))
                                           for r in valid) / len(valid), dtype=torch.float64)

    rows = [i for i in range(n) if pos_valid[i]]
    if direction == "repo":
        pairs = [(images, pos), (captions, pos)]  # each image / caption over the positives
    else:
        pairs = [(pos, captions), (pos, images)]  # each positive over the texts (Eq. 4), over the images (Eq. 5)
    ce = []
    for a, b in pairs:
        ce.append(sum(_lse_nll(s(a[i], b[i]), [s(a[i], b[j]) for j in rows]) for i in rows) / len(rows))
    out["analogy_loss"] = 0.5 * (ce[0] + ce[1])
    return out


LAYOUTS = {  # name: (K, negatives-block owners, mask [R, K])
    "k1": (1, [0, 1, 2, 3, 4, 5], [[True], [False], [True], [True], [False], [True]]),
    "k2": (2, [0, 1, 2, 3, 4, 5], [[True, False], [True, True], [False, False], [True, True], [False, True],
                                   [True, False]]),
    "shared_owners": (1, [0, 1, 2, 3, 4, 5, 0, 3], [[True], [True], [False], [True], [True], [False], [True],
                                                     [False]]),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("direction", ["repo", "paper"])
@pytest.mark.parametrize("in_contrastive", [False, True])
def test_parity_with_naive_loop(layout: str, direction: str, in_contrastive: bool) -> None:
    k, neg_owner, neg_mask = LAYOUTS[layout]
    gen = torch.Generator().manual_seed(len(layout) + 10 * (direction == "paper") + 100 * in_contrastive)
    n, d, r = 6, 4, len(neg_owner)
    img = _features(gen, n, d).requires_grad_()
    cap = _features(gen, n, d).requires_grad_()
    negs = _features(gen, r * k, d).requires_grad_()
    pos = _features(gen, n, d).requires_grad_()
    scale = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    pos_mask = [[True], [True], [False], [True], [False], [True]]
    f = make(img, cap, negs.reshape(r, k, d), pos[:, None], scale, neg_owner=neg_owner, neg_mask=neg_mask,
             pos_mask=pos_mask)
    got = TsvlcLoss(negatives_in_contrastive=in_contrastive, analogy_direction=direction)(f)
    want = _naive(img, cap, negs, np.repeat(neg_owner, k), np.array(neg_mask).reshape(-1), pos,
                  [m[0] for m in pos_mask], scale, in_contrastive=in_contrastive, direction=direction)
    assert set(got) == set(want)
    for name in want:  # the diagnostic is float32, like NegCLIP's
        torch.testing.assert_close(got[name], want[name], rtol=0, atol=1e-6, check_dtype=False, msg=name)
    for name in ("contrastive_loss", "negatives_loss", "analogy_loss"):
        g = torch.autograd.grad(got[name], (img, cap, negs, pos, scale), allow_unused=True, retain_graph=True)
        w = torch.autograd.grad(want[name], (img, cap, negs, pos, scale), allow_unused=True, retain_graph=True)
        for a, b in zip(g, w, strict=True):
            if a is None or b is None:
                assert (a is None or not a.any()) and (b is None or not b.any()), name
            else:
                torch.testing.assert_close(a, b, rtol=0, atol=1e-6, msg=name)


# --- equality with CLIP and NegCLIP -----------------------------------------------------------------------------


def test_without_negatives_and_positives_equals_clip() -> None:
    gen = torch.Generator().manual_seed(1)
    for n in (1, 3, 6):
        img, cap = _features(gen, n, 8), _features(gen, n, 8)
        f = blocks(img, cap, scale=torch.tensor(11.0, dtype=torch.float64))
        out = TsvlcLoss(negatives_in_contrastive=True)(f)
        assert set(out) == {"contrastive_loss"}
        torch.testing.assert_close(out["contrastive_loss"], ClipLoss()(f)["contrastive_loss"])


@pytest.mark.parametrize("k", [1, 2])
def test_negatives_in_contrastive_equals_negclip(k: int) -> None:
    gen = torch.Generator().manual_seed(2 + k)
    n = 5
    img, cap = _features(gen, n, 8), _features(gen, n, 8)
    negs = _features(gen, n * k, 8).reshape(n, k, 8)
    mask = np.ones((n, k), dtype=bool)
    mask[1, 0] = mask[3, k - 1] = False
    f = blocks(img, cap, negs, torch.tensor(7.0, dtype=torch.float64), mask=mask)
    out = TsvlcLoss(negatives_in_contrastive=True, negatives_loss=False)(f)
    neg = NegClipLoss()(f)
    torch.testing.assert_close(out["contrastive_loss"], neg["contrastive_loss"])
    torch.testing.assert_close(out["negative_acc"], neg["hard_negative_acc"])
    # the default keeps the negatives out of L_cont: plain CLIP
    torch.testing.assert_close(TsvlcLoss()(f)["contrastive_loss"], ClipLoss()(f)["contrastive_loss"])


# --- masks, the all-masked case ---------------------------------------------------------------------------------


def test_masked_negatives_and_positives_do_not_matter() -> None:
    gen = torch.Generator().manual_seed(4)
    n, d, k = 4, 4, 2
    img, cap, pos = _features(gen, n, d), _features(gen, n, d), _features(gen, n, d)[:, None]
    negs = _features(gen, n * k, d).reshape(n, k, d)
    neg_mask = [[True, False], [False, False], [True, True], [False, True]]
    pos_mask = [[False], [True], [True], [True]]
    moved_negs, moved_pos = negs.clone(), pos.clone()
    moved_negs[0, 1] = moved_negs[1, 0] = moved_negs[1, 1] = moved_negs[3, 0] = _features(gen, 1, d)[0]
    moved_pos[0, 0] = _features(gen, 1, d)[0]
    assert not torch.equal(moved_negs, negs) and not torch.equal(moved_pos, pos)
    for direction in ("repo", "paper"):
        for in_contrastive in (False, True):
            loss = TsvlcLoss(negatives_in_contrastive=in_contrastive, analogy_direction=direction)
            a = loss(make(img, cap, negs, pos, 5.0, neg_mask=neg_mask, pos_mask=pos_mask))
            b = loss(make(img, cap, moved_negs, moved_pos, 5.0, neg_mask=neg_mask, pos_mask=pos_mask))
            assert set(a) == set(b) == {"contrastive_loss", "negatives_loss", "analogy_loss", "negative_acc"}
            for name in a:
                torch.testing.assert_close(a[name], b[name], rtol=0, atol=1e-12, msg=name)


def test_all_negatives_masked_gives_a_zero_that_backpropagates() -> None:
    gen = torch.Generator().manual_seed(6)
    n, d = 3, 4
    img = _features(gen, n, d).requires_grad_()
    cap = _features(gen, n, d).requires_grad_()
    negs = _features(gen, n, d)[:, None].requires_grad_()
    pos = _features(gen, n, d)[:, None].requires_grad_()
    scale = torch.tensor(4.0, dtype=torch.float64, requires_grad=True)
    f = make(img, cap, negs, pos, scale, neg_mask=[[False]] * n, pos_mask=[[False]] * n)
    out = TsvlcLoss(negatives_in_contrastive=True)(f)
    assert set(out) == {"contrastive_loss", "negatives_loss", "analogy_loss"}  # no negative_acc, never NaN
    assert out["negatives_loss"].item() == 0.0 and out["negatives_loss"].requires_grad
    assert out["analogy_loss"].item() == 0.0 and out["analogy_loss"].requires_grad
    sum(v for k, v in out.items() if k.endswith("_loss")).backward()
    for t in (img, cap, negs, pos, scale):
        assert t.grad is not None and torch.isfinite(t.grad).all()
    assert not negs.grad.any() and not pos.grad.any()
    # with every negative masked, the contrastive term is CLIP's
    torch.testing.assert_close(out["contrastive_loss"], ClipLoss()(f)["contrastive_loss"])


def test_plain_positives_equal_unmasked_grouped_positives() -> None:
    gen = torch.Generator().manual_seed(8)
    img, cap, pos = _features(gen, 4), _features(gen, 4), _features(gen, 4)
    for direction in ("repo", "paper"):
        loss = TsvlcLoss(analogy_direction=direction)
        torch.testing.assert_close(loss(make(img, cap, positives=pos, scale=3.0))["analogy_loss"],
                                   loss(make(img, cap, positives=pos[:, None], scale=3.0))["analogy_loss"])


# --- registry, options and bad input ---------------------------------------------------------------------------


def test_registry_and_options() -> None:
    assert "tsvlc" in LOSSES
    loss = get_loss("tsvlc", negatives_in_contrastive=True, negatives_loss=False, analogy_direction="paper")
    assert isinstance(loss, TsvlcLoss)
    assert (loss.negatives_in_contrastive, loss.negatives_loss, loss.analogy_direction) == (True, False, "paper")
    default = get_loss("tsvlc")
    assert (default.negatives_in_contrastive, default.negatives_loss, default.analogy_direction) == (False, True,
                                                                                                       "repo")
    with pytest.raises(ValueError, match=r"tsvlc loss: analogy_direction='images'"):
        TsvlcLoss(analogy_direction="images")


def test_missing_captions_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"tsvlc loss: the batch has no 'captions' text block"):
        TsvlcLoss()(make(IMAGES, CAPTIONS, positives=CAPTIONS, captions_block=False))


@pytest.mark.parametrize("shape", [(2, 2, 2), (1, 1, 2), (2, 1, 3), (2, 3)])
def test_misshaped_positives_are_an_error(shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match=r"tsvlc loss: text block 'positives' must be \[2, 1, 2\] or \[2, 2\]"):
        TsvlcLoss()(make(IMAGES, CAPTIONS, positives=torch.zeros(shape)))


def test_misowned_positives_and_misshaped_negatives_are_errors() -> None:
    f = make(IMAGES, CAPTIONS, positives=CAPTIONS)
    f.owner["positives"] = torch.tensor([1, 0])
    with pytest.raises(ValueError, match=r"tsvlc loss: text block 'positives': positive i must belong to image row i"):
        TsvlcLoss()(f)
    with pytest.raises(ValueError, match=r"tsvlc loss: text block 'negatives' must be \[rows, K, 2\]"):
        TsvlcLoss()(make(IMAGES, CAPTIONS, torch.zeros(2, 1, 3)))
