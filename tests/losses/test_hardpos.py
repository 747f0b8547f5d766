"""The Hard Positives loss (the catalog §3.4 reconstruction): each term L_con (negatives as columns), L_HN and L_HP
against hand-computed values, the weighted total L_con + L_HP + w_HN · L_HN through the methods' weighting, the
"Our HN" layout (no positives: no L_HP), the "0 HN" layout (no negatives: CLIP's L_con + L_HP), and the registry."""

from __future__ import annotations

import pytest
import torch

from vlcomp.losses import LOSSES, get_loss
from vlcomp.losses.hardpos import TERMS, HardPositivesLoss
from vlcomp.losses.tsvlc import TsvlcLoss
from vlcomp.methods import WeightedLoss

from .test_tsvlc import _nll, make

# B = 2, scale τ = 2. Images v, originals t, negatives n (one per row), positives p (one per row):
V = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
T = torch.tensor([[0.6, 0.8], [1.0, 0.0]])
N = torch.tensor([[[0.0, 1.0]], [[0.8, 0.6]]])
P = torch.tensor([[[0.8, 0.6]], [[0.0, 1.0]]])
# τ v tᵀ = [[1.2, 2.0], [1.6, 0.0]]     τ v nᵀ = [[0.0, 1.6], [2.0, 1.2]]
# τ v pᵀ = [[1.6, 0.0], [1.2, 2.0]]     τ t pᵀ = [[1.92, 1.6], [1.6, 0.0]]
L_CON = 0.5 * (0.5 * (_nll(1.2, [1.2, 2.0, 0.0, 1.6]) + _nll(0.0, [1.6, 0.0, 2.0, 1.2]))  # image -> [t; n]
               + 0.5 * (_nll(1.2, [1.2, 1.6]) + _nll(0.0, [2.0, 0.0])))  # text -> image
L_HN = 0.5 * (_nll(1.2, [1.2, 0.0]) + _nll(0.0, [0.0, 1.2]))  # own caption vs own negative
L_HP = 0.5 * (0.5 * (_nll(1.6, [1.6, 0.0]) + _nll(2.0, [1.2, 2.0]))  # image -> the batch's positives
              + 0.5 * (_nll(1.92, [1.92, 1.6]) + _nll(0.0, [1.6, 0.0])))  # original caption -> positives
CLIP_CON = 0.5 * (0.5 * (_nll(1.2, [1.2, 2.0]) + _nll(0.0, [1.6, 0.0]))
                  + 0.5 * (_nll(1.2, [1.2, 1.6]) + _nll(0.0, [2.0, 0.0])))


def test_each_term_by_hand() -> None:
    out = HardPositivesLoss()(make(V, T, N, P, scale=2.0))
    assert {k for k in out if k.endswith("_loss")} == set(TERMS)
    assert out["contrastive_loss"].item() == pytest.approx(L_CON, rel=1e-6)
    assert out["negatives_loss"].item() == pytest.approx(L_HN, rel=1e-6)
    assert out["analogy_loss"].item() == pytest.approx(L_HP, rel=1e-6)


@pytest.mark.parametrize("w_hn", [0.25, 0.5, 0.75, 1.0])
def test_weighted_total_is_l_con_plus_l_hp_plus_w_hn_l_hn(w_hn: float) -> None:
    out = WeightedLoss(HardPositivesLoss(), {"negatives_loss": w_hn})(make(V, T, N, P, scale=2.0))
    total = sum(v for k, v in out.items() if k.endswith("_loss")).item()
    assert total == pytest.approx(L_CON + L_HP + w_hn * L_HN, rel=1e-6)


def test_hn_only_and_zero_hn_layouts() -> None:
    hn = HardPositivesLoss()(make(V, T, N, scale=2.0))  # "Our HN": no positives block
    assert "analogy_loss" not in hn
    assert hn["contrastive_loss"].item() == pytest.approx(L_CON, rel=1e-6)
    assert hn["negatives_loss"].item() == pytest.approx(L_HN, rel=1e-6)
    hp = HardPositivesLoss()(make(V, T, positives=P, scale=2.0))  # "0 HN": no negatives anywhere
    assert {k for k in hp if k.endswith("_loss")} == {"contrastive_loss", "analogy_loss"}
    assert hp["contrastive_loss"].item() == pytest.approx(CLIP_CON, rel=1e-6)
    assert hp["analogy_loss"].item() == pytest.approx(L_HP, rel=1e-6)


def test_is_the_tsvlc_loss_with_its_options_fixed() -> None:
    f = make(V, T, N, P, scale=2.0)
    a = HardPositivesLoss()(f)
    b = TsvlcLoss(negatives_in_contrastive=True, negatives_loss=True, analogy_direction="repo")(f)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    out = HardPositivesLoss(negatives_in_contrastive=False)(f)
    assert out["contrastive_loss"].item() == pytest.approx(CLIP_CON, rel=1e-6)


def test_registry() -> None:
    assert LOSSES.get("hardpos") is HardPositivesLoss
    assert isinstance(get_loss("hardpos"), HardPositivesLoss)
    with pytest.raises(TypeError):
        get_loss("hardpos", analogy_direction="paper")  # fixed by the reconstruction, not an option
