"""ARO image-side shuffles (paper §3.1, Table 4) on a *preprocessed* image batch ``x [N, C, H, W]``.

Each image is cut into equal blocks -- ``n`` horizontal strips of height ``H // n`` (rows), ``n`` vertical
strips of width ``W // n`` (columns), or a ``grid x grid`` array of ``(H // grid, W // grid)`` patches --
and the blocks are permuted with an independent ``torch.randperm`` per image, drawn from an injected
``torch.Generator``.

Implemented like the reference (``dataset_zoo/perturbations.py``) with ``unfold``/``fold`` and block size
``H // n``: when ``H`` (or ``W``) is not divisible by ``n``, the pixels outside the whole blocks are not
part of any block and come back as **zeros** (e.g. CLIP's 224 px with a 3x3 grid gives 74-px patches and a
2-px zero border at the bottom and right; ARO catalog §5 item 10). Block ``l`` of the output is input
block ``perm[l]``, blocks numbered row-major.

Like the reference, ``unfold`` takes every whole block, i.e. ``H // (H // n)`` per axis. That is exactly
``n`` whenever ``H >= n**2`` (every real setting: 224/384 px, and any image >= 16 px for ``n <= 4``); for
smaller images it is more than ``n`` (10 px, ``n = 4``: five 2-px strips), as in the reference.

Randomness: permutations are drawn image by image, in batch order, from ``gen``; so the result for an
image depends on its position in the batch. Pass one generator per image (a sequence of length ``N``) to
make results independent of batching.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

import torch
import torch.nn.functional as nnf

Generators = torch.Generator | Sequence[torch.Generator]


def _check_batch(x: torch.Tensor) -> None:
    if not isinstance(x, torch.Tensor) or x.ndim != 4:
        shape = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
        raise ValueError(f"x must be a 4-D tensor [N, C, H, W], got {shape}")
    if not x.is_floating_point():
        raise ValueError(
            f"x must be a floating-point tensor (a preprocessed image batch), got dtype {x.dtype}"
        )


def block_counts(height: int, width: int, block_size: tuple[int, int]) -> tuple[int, int]:
    """Number of blocks ``(rows, cols)`` that fit in ``height x width`` (the rest is the zero border)."""
    bh, bw = block_size
    if bh < 1 or bw < 1 or bh > height or bw > width:
        raise ValueError(f"block_size {block_size} must be within [1, 1] .. [{height}, {width}]")
    return height // bh, width // bw


def apply_block_permutation(
    x: torch.Tensor, block_size: tuple[int, int], perms: torch.Tensor
) -> torch.Tensor:
    """Permute non-overlapping ``block_size`` blocks of every image: output block ``l`` = input ``perms[n, l]``.

    Args:
        x: ``[N, C, H, W]`` float tensor.
        block_size: ``(block_h, block_w)``; blocks tile the top-left ``(H // bh * bh, W // bw * bw)`` region
            row-major and everything outside it becomes 0.
        perms: int64 ``[N, L]``, each row a permutation of ``range(L)`` with ``L`` = number of blocks.

    Returns:
        ``[N, C, H, W]`` tensor (same dtype and device as ``x``).
    """
    _check_batch(x)
    perms = torch.as_tensor(perms)
    n, _, height, width = x.shape
    rows, cols = block_counts(height, width, block_size)
    n_blocks = rows * cols
    if perms.shape != (n, n_blocks):
        raise ValueError(f"perms must have shape [{n}, {n_blocks}], got {tuple(perms.shape)}")
    perms = perms.to(device=x.device, dtype=torch.long)
    expected = torch.arange(n_blocks, device=x.device).expand(n, -1)
    if not torch.equal(perms.sort(dim=1).values, expected):
        raise ValueError("perms rows must each be a permutation of range(L)")
    u = nnf.unfold(x, kernel_size=block_size, stride=block_size)  # [N, C*bh*bw, L]
    pu = u.gather(2, perms[:, None, :].expand(-1, u.shape[1], -1))  # [N, C*bh*bw, L]
    return nnf.fold(
        pu, output_size=(height, width), kernel_size=block_size, stride=block_size
    )  # [N, C, H, W]


def draw_permutations(n_images: int, n_blocks: int, gen: Generators) -> torch.Tensor:
    """``[n_images, n_blocks]`` int64: one ``torch.randperm(n_blocks)`` per image, in order, from ``gen``.

    ``gen`` is a single generator (consumed image by image) or a sequence of ``n_images`` generators.
    """
    if isinstance(gen, torch.Generator):
        gens = [gen] * n_images
    elif isinstance(gen, Sequence) and all(isinstance(g, torch.Generator) for g in gen):
        if len(gen) != n_images:
            raise ValueError(f"gen has {len(gen)} generators but the batch has {n_images} images")
        gens = list(gen)
    else:
        raise ValueError(f"gen must be a torch.Generator or a sequence of them, got {type(gen).__name__}")
    if n_images == 0:
        return torch.empty(0, n_blocks, dtype=torch.long)
    return torch.stack([torch.randperm(n_blocks, generator=g, device=g.device).cpu() for g in gens])


def _shuffle(x: torch.Tensor, block_size: tuple[int, int], gen: Generators) -> torch.Tensor:
    rows, cols = block_counts(x.shape[2], x.shape[3], block_size)
    perms = draw_permutations(x.shape[0], rows * cols, gen)  # [N, L]
    return apply_block_permutation(x, block_size, perms)


def _check_n(n: int, size: int, name: str, dim: str) -> None:
    if int(n) != n or not 1 <= n <= size:
        raise ValueError(f"{name} must be an int in [1, {dim}={size}], got {n}")


def shuffle_rows(x: torch.Tensor, n: int = 4, *, gen: Generators) -> torch.Tensor:
    """Cut each image ``[C, H, W]`` into ``n`` horizontal strips of height ``H // n`` and permute them.

    ``x``: ``[N, C, H, W]`` float. Rows below the last whole strip become zeros. Returns ``[N, C, H, W]``.
    """
    _check_batch(x)
    _check_n(n, x.shape[2], "n", "H")
    return _shuffle(x, (x.shape[2] // n, x.shape[3]), gen)


def shuffle_cols(x: torch.Tensor, n: int = 4, *, gen: Generators) -> torch.Tensor:
    """Cut each image into ``n`` vertical strips of width ``W // n`` and permute them.

    ``x``: ``[N, C, H, W]`` float. Columns right of the last whole strip become zeros. Returns ``[N, C, H, W]``.
    """
    _check_batch(x)
    _check_n(n, x.shape[3], "n", "W")
    return _shuffle(x, (x.shape[2], x.shape[3] // n), gen)


def shuffle_patches(x: torch.Tensor, grid: int = 3, *, gen: Generators) -> torch.Tensor:
    """Cut each image into ``grid x grid`` patches of ``(H // grid, W // grid)`` and permute them.

    ``x``: ``[N, C, H, W]`` float. Pixels outside the covered region become zeros (224 px, grid 3: a 2-px
    border). Returns ``[N, C, H, W]``.
    """
    _check_batch(x)
    _check_n(grid, min(x.shape[2], x.shape[3]), "grid", "min(H, W)")
    return _shuffle(x, (x.shape[2] // grid, x.shape[3] // grid), gen)


# The ARO image perturbations by their reference names; call as ``fn(x, gen=gen)``.
IMAGE_PERTURBATIONS: dict[str, Callable[..., torch.Tensor]] = {
    "shuffle_rows_4": partial(shuffle_rows, n=4),
    "shuffle_cols_4": partial(shuffle_cols, n=4),
    "shuffle_patches_9": partial(shuffle_patches, grid=3),
}
