"""Data-parallel contrastive training across processes (torchrun / torch.distributed), exact to one process.

A global batch (:class:`vlcomp.train.batch.Batch`: named image blocks and named text blocks, captions,
``[B, K]`` negatives with masks, positives, ...) is cut block by block into ``W`` contiguous row ranges, one per
rank (``Batch.shard``). After the forward pass :func:`gather_blocks` all-gathers every block's features, so every
rank holds the features of the whole global batch **in the one-process order**, with the global batch's owners
and masks, and computes the one-process loss. Hard negatives, hard images, positives and distractor images
therefore stay in the loss on every rank (one reference fork built its negatives per GPU and silently lost them
on several GPUs).

Gradients: the gather is autograd-aware (:class:`_AllGatherWithGrad`: backward all-reduces the full
feature gradient and keeps this rank's rows), so rank ``r``'s parameters receive ``W * dL/dtheta`` through its
own rows plus ``dL/dtheta`` through parameters used outside the features (the logit scale); after
:func:`average_gradients` (all-reduce mean, what DDP does) every parameter holds exactly the one-process
gradient ``dL/dtheta``. ``tests/test_distributed.py`` checks loss and gradients against one process to 1e-5
with 2 gloo processes on the CPU.

Sampling: every rank draws the same global batch from the same seeded generator and takes its shard, so the
ranks never overlap and the run sees the batches a one-process run sees (rather than per-rank generators with
per-rank seeds, whose union is a different stream). Only rank 0 should log or write files (:func:`is_main`).
"""

from __future__ import annotations

import os

import torch
import torch.distributed as dist


def world_size() -> int:
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def rank() -> int:
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def is_main() -> bool:
    return rank() == 0


def init_from_env(backend: str | None = None) -> bool:
    """Join the process group torchrun describes (``WORLD_SIZE``, ``RANK``, ``MASTER_ADDR``/``PORT``); a no-op
    (returns False) when not launched by torchrun. Backend: NCCL with CUDA, else gloo."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1 or (dist.is_available() and dist.is_initialized()):
        return dist.is_available() and dist.is_initialized()
    backend = backend or ("nccl" if torch.cuda.is_available() else "gloo")
    dist.init_process_group(backend=backend)
    if backend == "nccl":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    return True


class _AllGatherWithGrad(torch.autograd.Function):
    """all_gather whose backward sums the gradient over ranks and returns this rank's rows (gloo-safe: uses
    all_reduce, which every backend has, instead of reduce_scatter)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        ctx.n = x.shape[0]
        parts = [torch.empty_like(x) for _ in range(dist.get_world_size())]
        dist.all_gather(parts, x.contiguous())
        return torch.cat(parts, dim=0)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        grad = grad.contiguous().clone()
        dist.all_reduce(grad, op=dist.ReduceOp.SUM)
        r = dist.get_rank()
        return grad[r * ctx.n : (r + 1) * ctx.n]


def all_gather_with_grad(x: torch.Tensor) -> torch.Tensor:
    """``x`` [n, D] from every rank concatenated in rank order, differentiable; identity at world size 1."""
    return x if world_size() == 1 else _AllGatherWithGrad.apply(x)


def gather_blocks(blocks: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Each named block's features ``[n/W, ...]`` from every rank, concatenated in rank order (the global
    batch's rows, since ``Batch.shard`` cuts contiguous ranges); differentiable; identity at world size 1."""
    if world_size() == 1:
        return blocks
    return {k: all_gather_with_grad(v) for k, v in blocks.items()}


def average_gradients(model: torch.nn.Module) -> None:
    """All-reduce mean of every gradient (what DDP does), in one flat buffer."""
    w = world_size()
    if w == 1:
        return
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    if not grads:
        return
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat, op=dist.ReduceOp.SUM)
    flat /= w
    offset = 0
    for g in grads:
        g.copy_(flat[offset : offset + g.numel()].view_as(g))
        offset += g.numel()


def barrier() -> None:
    """Wait for every rank (no-op at world size 1): ranks wait here while rank 0 writes a checkpoint, so no rank
    runs ahead of a checkpoint that is not on disk yet."""
    if world_size() > 1:
        dist.barrier()


def broadcast_module(model: torch.nn.Module, src: int = 0) -> None:
    """Copy rank ``src``'s parameters and buffers to every rank (what DDP does at construction), so ranks that
    built their model differently still start from one set of weights. No-op at world size 1."""
    if world_size() == 1:
        return
    with torch.no_grad():
        for t in model.state_dict().values():
            dist.broadcast(t, src)


def check_same_on_all_ranks(values: dict[str, int], device: torch.device | str = "cpu") -> None:
    """Raise ValueError naming the first entry whose integer differs between ranks (e.g. a digest of the sampler's
    generator state, or the step a rank resumed from). ``device`` must suit the backend (CUDA for NCCL)."""
    if world_size() == 1 or not values:
        return
    t = torch.tensor(list(values.values()), dtype=torch.int64, device=device)
    lo, hi = t.clone(), t.clone()
    dist.all_reduce(lo, op=dist.ReduceOp.MIN)
    dist.all_reduce(hi, op=dist.ReduceOp.MAX)
    for name, a, b in zip(values, lo.tolist(), hi.tolist(), strict=True):
        if a != b:
            raise ValueError(f"{name} differs between ranks (from {a} to {b}, this is rank {rank()} with "
                             f"{values[name]}); every rank must start from the same seed and the same checkpoint")
