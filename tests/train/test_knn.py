"""nearest_images: parity with a naive double loop (self excluded, ties to the lower index), k validation."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from vlcomp.generators.knn import nearest_images


def _naive(features: torch.Tensor, k: int) -> list[list[int]]:
    n = features.shape[0]
    out = []
    for i in range(n):
        sims = [(float(features[i] @ features[j]), j) for j in range(n) if j != i]
        sims.sort(key=lambda t: (-t[0], t[1]))  # most similar first, ties to the lower index
        out.append([j for _, j in sims[:k]])
    return out


@pytest.mark.parametrize(("n", "k", "chunk"), [(2, 1, 2048), (10, 3, 2048), (17, 5, 4), (9, 8, 3), (12, 3, 1)])
def test_parity_with_naive_double_loop(n: int, k: int, chunk: int) -> None:
    gen = torch.Generator().manual_seed(n * 31 + k)
    feats = F.normalize(torch.randn(n, 6, generator=gen, dtype=torch.float64), dim=-1)
    got = nearest_images(feats, k, chunk=chunk)
    assert got.shape == (n, k) and got.dtype == torch.long
    assert got.tolist() == _naive(feats, k)
    assert all(i not in row for i, row in enumerate(got.tolist()))


def test_exact_duplicates_are_neighbours_but_self_is_not() -> None:
    feats = F.normalize(torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.6, 0.8]]), dim=-1)
    got = nearest_images(feats, 2, chunk=3)
    assert got.tolist() == [[1, 3], [0, 3], [3, 0], [2, 0]]  # ties (rows 0 and 1 for image 2/3) -> lower index


def test_does_not_modify_the_features(torch_generator: torch.Generator) -> None:
    feats = F.normalize(torch.randn(5, 4, generator=torch_generator), dim=-1)
    before = feats.clone()
    nearest_images(feats, 2)
    assert torch.equal(feats, before)


@pytest.mark.parametrize("k", [0, -1, 5, 6])
def test_k_is_validated(k: int) -> None:
    with pytest.raises(ValueError, match=rf"k_images={k}: must be between 1 and the number of images minus one \(4\)"):
        nearest_images(torch.eye(5), k)
