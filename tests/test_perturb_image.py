"""ARO image shuffles: block multiset, identity, zero border, determinism, parity with naive slicing."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as nnf

from vlcomp.perturb_image import (
    IMAGE_PERTURBATIONS,
    apply_block_permutation,
    block_counts,
    draw_permutations,
    shuffle_cols,
    shuffle_patches,
    shuffle_rows,
)

# name -> (function, n, block_size(H, W))
CASES = {
    "rows": (shuffle_rows, 4, lambda h, w, n: (h // n, w)),
    "cols": (shuffle_cols, 4, lambda h, w, n: (h, w // n)),
    "patches": (shuffle_patches, 3, lambda h, w, n: (h // n, w // n)),
}


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _batch(n: int, h: int, w: int, seed: int = 0) -> torch.Tensor:
    # strictly positive so that "zero" can only mean "outside every block"
    return torch.rand(n, 3, h, w, generator=_gen(seed)) + 0.5


def _blocks(img: torch.Tensor, bh: int, bw: int) -> list[torch.Tensor]:
    """Row-major list of the (C, bh, bw) blocks of one image [C, H, W] by explicit slicing."""
    rows, cols = img.shape[1] // bh, img.shape[2] // bw
    return [img[:, r * bh : (r + 1) * bh, c * bw : (c + 1) * bw] for r in range(rows) for c in range(cols)]


def _naive(x: torch.Tensor, block: tuple[int, int], gen: torch.Generator) -> torch.Tensor:
    """Per-image loop: one randperm per image, output block l <- input block perm[l], zeros elsewhere."""
    bh, bw = block
    out = torch.zeros_like(x)
    cols = x.shape[3] // bw
    for i in range(x.shape[0]):
        src = _blocks(x[i], bh, bw)
        perm = torch.randperm(len(src), generator=gen)
        for dst_index, src_index in enumerate(perm.tolist()):
            r, c = divmod(dst_index, cols)
            out[i, :, r * bh : (r + 1) * bh, c * bw : (c + 1) * bw] = src[src_index]
    return out


def _reference_style(x: torch.Tensor, block: tuple[int, int], gen: torch.Generator) -> torch.Tensor:
    """The ARO reference's unfold / per-image randperm / fold, with the generator injected."""
    u = nnf.unfold(x, kernel_size=block, stride=block)
    pu = torch.cat([b_[:, torch.randperm(b_.shape[-1], generator=gen)][None, ...] for b_ in u], dim=0)
    return nnf.fold(pu, x.shape[-2:], kernel_size=block, stride=block)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize(("h", "w"), [(12, 12), (14, 13), (224, 224)])
def test_parity_with_naive_loop_and_reference(name: str, h: int, w: int) -> None:
    fn, n, block_of = CASES[name]
    x = _batch(3, h, w)
    block = block_of(h, w, n)
    got = fn(x, n, gen=_gen(7))
    torch.testing.assert_close(got, _naive(x, block, _gen(7)), rtol=0, atol=0)
    torch.testing.assert_close(got, _reference_style(x, block, _gen(7)), rtol=0, atol=0)


@pytest.mark.parametrize("name", sorted(CASES))
def test_block_multiset_is_preserved(name: str) -> None:
    fn, n, block_of = CASES[name]
    x = _batch(4, 13, 14, seed=1)
    bh, bw = block_of(13, 14, n)
    y = fn(x, n, gen=_gen(3))
    for i in range(x.shape[0]):
        before = sorted(tuple(b.flatten().tolist()) for b in _blocks(x[i], bh, bw))
        after = sorted(tuple(b.flatten().tolist()) for b in _blocks(y[i], bh, bw))
        assert before == after


def test_identity_permutation_reproduces_input_inside_covered_region() -> None:
    x = _batch(2, 14, 13, seed=2)
    block = (14 // 3, 13 // 3)  # (4, 4): covers 12 x 12
    rows, cols = block_counts(14, 13, block)
    identity = torch.arange(rows * cols).expand(2, -1)
    y = apply_block_permutation(x, block, identity)
    torch.testing.assert_close(y[:, :, :12, :12], x[:, :, :12, :12], rtol=0, atol=0)
    assert (y[:, :, 12:, :] == 0).all() and (y[:, :, :, 12:] == 0).all()


def test_clip_224_grid3_has_74px_patches_and_2px_zero_border() -> None:
    x = _batch(2, 224, 224, seed=4)
    assert block_counts(224, 224, (224 // 3, 224 // 3)) == (3, 3) and 224 // 3 == 74
    y = IMAGE_PERTURBATIONS["shuffle_patches_9"](x, gen=_gen(0))
    assert (y[:, :, 222:, :] == 0).all() and (y[:, :, :, 222:] == 0).all()
    assert (y[:, :, :222, :222] > 0).all()  # the covered region holds only (positive) image pixels


def test_non_divisible_rows_and_cols_zero_border() -> None:
    x = _batch(2, 14, 17, seed=5)
    rows = shuffle_rows(x, 4, gen=_gen(0))  # 4 strips of 14 // 4 = 3 px -> rows 12, 13 become zero
    assert (rows[:, :, 12:, :] == 0).all() and (rows[:, :, :12, :] > 0).all()
    cols = shuffle_cols(x, 4, gen=_gen(0))  # 4 strips of 17 // 4 = 4 px -> col 16 becomes zero
    assert (cols[:, :, :, 16:] == 0).all() and (cols[:, :, :, :16] > 0).all()


def test_tiny_images_get_extra_blocks_like_the_reference() -> None:
    """Block size is H // n and unfold takes every whole block: for H < n**2 that is more than n blocks."""
    x = _batch(2, 10, 10, seed=9)
    assert block_counts(10, 10, (10 // 4, 10)) == (5, 1)  # 5 strips of 2 px, nothing left over
    y = shuffle_rows(x, 4, gen=_gen(0))
    assert (y > 0).all()
    torch.testing.assert_close(y, _reference_style(x, (2, 10), _gen(0)), rtol=0, atol=0)


def test_divisible_sizes_keep_every_pixel() -> None:
    x = _batch(2, 224, 224, seed=6)
    for name in ("shuffle_rows_4", "shuffle_cols_4"):
        y = IMAGE_PERTURBATIONS[name](x, gen=_gen(1))
        torch.testing.assert_close(y.sum(dim=(1, 2, 3)), x.sum(dim=(1, 2, 3)))
        assert torch.equal(y.flatten(1).sort(dim=1).values, x.flatten(1).sort(dim=1).values)


def test_determinism_and_independent_permutation_per_image() -> None:
    x = _batch(1, 12, 12).expand(16, -1, -1, -1).contiguous()  # 16 copies of one image
    a = shuffle_patches(x, 3, gen=_gen(11))
    b = shuffle_patches(x, 3, gen=_gen(11))
    c = shuffle_patches(x, 3, gen=_gen(12))
    assert torch.equal(a, b) and not torch.equal(a, c)
    distinct = {tuple(img.flatten().tolist()) for img in a}
    assert len(distinct) > 1  # each image got its own randperm


def test_one_generator_per_image_is_batch_invariant() -> None:
    x = _batch(3, 12, 12, seed=8)
    together = shuffle_rows(x, 4, gen=[_gen(s) for s in (1, 2, 3)])
    alone = torch.cat([shuffle_rows(x[i : i + 1], 4, gen=_gen(s)) for i, s in enumerate((1, 2, 3))])
    assert torch.equal(together, alone)


def test_registry_and_dtype() -> None:
    assert set(IMAGE_PERTURBATIONS) == {"shuffle_rows_4", "shuffle_cols_4", "shuffle_patches_9"}
    x = _batch(2, 16, 16).double()
    for fn in IMAGE_PERTURBATIONS.values():
        y = fn(x, gen=_gen(0))
        assert y.shape == x.shape and y.dtype == torch.float64
    perms = draw_permutations(2, 9, _gen(0))
    assert perms.shape == (2, 9) and torch.equal(perms.sort(dim=1).values, torch.arange(9).expand(2, -1))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: shuffle_rows(torch.zeros(3, 8, 8), 4, gen=_gen(0)), "x"),
        (lambda: shuffle_rows(torch.zeros(1, 3, 8, 8, dtype=torch.uint8), 4, gen=_gen(0)), "x"),
        (lambda: shuffle_rows(torch.zeros(1, 3, 8, 8), 0, gen=_gen(0)), "n"),
        (lambda: shuffle_cols(torch.zeros(1, 3, 8, 8), 9, gen=_gen(0)), "n"),
        (lambda: shuffle_patches(torch.zeros(1, 3, 8, 2), 3, gen=_gen(0)), "grid"),
        (lambda: shuffle_patches(torch.zeros(1, 3, 8, 8), 3, gen=0), "gen"),
        (lambda: shuffle_patches(torch.zeros(2, 3, 8, 8), 3, gen=[_gen(0)]), "gen"),
        (
            lambda: apply_block_permutation(torch.zeros(1, 3, 8, 8), (4, 4), torch.tensor([[0, 0, 1, 2]])),
            "perms",
        ),
        (
            lambda: apply_block_permutation(torch.zeros(1, 3, 8, 8), (4, 4), torch.tensor([[0, 1, 2]])),
            "perms",
        ),
    ],
)
def test_bad_input_raises(call, match: str) -> None:  # noqa: ANN001
    with pytest.raises(ValueError, match=match):
        call()
