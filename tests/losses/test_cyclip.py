"""CyCLIP's cyclic terms and the ``cyclip`` loss: hand-computed values, parity with a naive double loop over (j, k),
independence of the logit scale (the reference divides its logit-space terms by s²), the terms inside the ``tsvlc``
loss (Table 1e-f), the registry and bad weights."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from vlcomp.losses import LOSSES, get_loss
from vlcomp.losses.clip import ClipLoss
from vlcomp.losses.cyclip import CYCLIP_WEIGHTS, CyclipLoss, cyclic_terms
from vlcomp.losses.tsvlc import TsvlcLoss

from .test_tsvlc import CAPTIONS, CONTRASTIVE, IMAGES, NEGATIVES, make

# I Iᵀ = [[1, 0], [0, 1]], T Tᵀ = [[1, .6], [.6, 1]]: squared differences mean (0 + .36 + .36 + 0) / 4 = .18, x N = 2
# -> .36, x 0.25 -> .09. I Tᵀ = [[.6, 1], [.8, 0]], minus its transpose [[0, .2], [-.2, 0]]: mean .02, x 2 -> .04,
# x 0.25 -> .01.
INMODAL, CROSSMODAL = 0.09, 0.01


def test_cyclip_loss_by_hand() -> None:
    out = CyclipLoss()(make(IMAGES, CAPTIONS, scale=2.0))
    assert set(out) == {"contrastive_loss", "inmodal_cyclic_loss", "crossmodal_cyclic_loss"}
    assert out["contrastive_loss"].item() == pytest.approx(CONTRASTIVE, rel=1e-6)
    assert out["inmodal_cyclic_loss"].item() == pytest.approx(INMODAL, rel=1e-6)
    assert out["crossmodal_cyclic_loss"].item() == pytest.approx(CROSSMODAL, rel=1e-6)
    assert CYCLIP_WEIGHTS == (0.25, 0.25)


def test_weights_scale_each_term_and_the_contrastive_term_is_clips() -> None:
    f = make(IMAGES, CAPTIONS, scale=2.0)
    out = CyclipLoss(inmodal=1.0, crossmodal=0.0)(f)
    assert out["inmodal_cyclic_loss"].item() == pytest.approx(4 * INMODAL, rel=1e-6)
    assert out["crossmodal_cyclic_loss"].item() == 0.0
    assert torch.equal(out["contrastive_loss"], ClipLoss()(f)["contrastive_loss"])


def _naive(images: torch.Tensor, captions: torch.Tensor) -> tuple[float, float]:
    n = len(images)
    inmodal = crossmodal = 0.0
    for j in range(n):
        for k in range(n):
            inmodal += (float(images[j] @ images[k]) - float(captions[j] @ captions[k])) ** 2
            crossmodal += (float(images[j] @ captions[k]) - float(images[k] @ captions[j])) ** 2
    return 0.25 * inmodal / n**2 * n, 0.25 * crossmodal / n**2 * n


def test_cyclic_terms_match_a_naive_loop_and_ignore_the_logit_scale() -> None:
    gen = torch.Generator().manual_seed(3)
    images = F.normalize(torch.randn(6, 5, generator=gen, dtype=torch.float64), dim=-1)
    captions = F.normalize(torch.randn(6, 5, generator=gen, dtype=torch.float64), dim=-1)
    terms = cyclic_terms(images, captions)
    inmodal, crossmodal = _naive(images, captions)
    assert terms["inmodal_cyclic_loss"].item() == pytest.approx(inmodal, rel=1e-12)
    assert terms["crossmodal_cyclic_loss"].item() == pytest.approx(crossmodal, rel=1e-12)
    for scale in (1.0, 14.3, 100.0):
        out = CyclipLoss()(make(images, captions, scale=scale))
        assert out["inmodal_cyclic_loss"].item() == pytest.approx(inmodal, rel=1e-12)


def test_tsvlc_with_cyclic_adds_the_same_terms() -> None:
    f = make(IMAGES, CAPTIONS, NEGATIVES, scale=2.0)
    plain, cyc = TsvlcLoss()(f), TsvlcLoss(cyclic=[0.25, 0.25])(f)
    assert set(cyc) - set(plain) == {"inmodal_cyclic_loss", "crossmodal_cyclic_loss"}
    for k in plain:
        assert torch.equal(plain[k], cyc[k])
    assert cyc["inmodal_cyclic_loss"].item() == pytest.approx(INMODAL, rel=1e-6)
    assert cyc["crossmodal_cyclic_loss"].item() == pytest.approx(CROSSMODAL, rel=1e-6)


def test_registry_and_bad_weights() -> None:
    assert "cyclip" in LOSSES.names() and isinstance(get_loss("cyclip"), CyclipLoss)
    with pytest.raises(ValueError, match="cyclip loss: cyclic weights"):
        CyclipLoss(inmodal=-1.0)
    with pytest.raises(ValueError, match="tsvlc loss: cyclic weights"):
        TsvlcLoss(cyclic=[0.25])
    with pytest.raises(ValueError, match="tsvlc loss: cyclic weights"):
        TsvlcLoss(cyclic="x")
