"""Data parallelism: 2 gloo processes on the CPU give the one-process loss and gradients (to 1e-5)."""

from __future__ import annotations

import os
import socket
import time

import numpy as np
import pytest
import torch
import torch.multiprocessing as mp

from vlcomp.distributed import shard_batch
from vlcomp.train.data import Batch

ARCH = "toy-vit-p8"  # LayerNorm only: BatchNorm towers (toy-rn16) see per-rank batch statistics, as under DDP
WORDS = "a the red blue green small large circle square star cross arrow above below left right of and".split()


def _batch(n: int, negatives: bool, seed: int = 0) -> tuple[np.ndarray, Batch]:
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, size=(n, 48, 48, 3), dtype=np.uint8)
    m = 2 * n if negatives else n
    texts = [" ".join(rng.choice(WORDS, size=int(rng.integers(3, 9)))) for _ in range(m)]
    return images, Batch(images=np.arange(n), texts=texts)


def _step(model, images, batch, loss_name):
    from vlcomp.distributed import average_gradients, gather_batch
    from vlcomp.losses import get_loss
    from vlcomp.models.encode import clip_forward
    from vlcomp.models.factory import to_tensor
    from vlcomp.text.tokenizer import get_tokenizer

    tok = get_tokenizer("world", ARCH, 32)
    model.train()
    model.zero_grad(set_to_none=True)
    out = clip_forward(model, to_tensor(images[batch.images], 48), tok(batch.texts))
    terms = get_loss(loss_name)(**gather_batch(out))
    loss = sum(v for k, v in terms.items() if k.endswith("_loss"))
    loss.backward()
    average_gradients(model)
    return float(loss.detach()), {k: p.grad.detach().clone() for k, p in model.named_parameters()
                                  if p.grad is not None}


def _timed(model, images, batch, loss_name, repeats: int = 5):
    _step(model, images, batch, loss_name)  # warm-up; no optimizer step, so every repeat is the same step
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        loss, grads = _step(model, images, batch, loss_name)
        times.append(time.perf_counter() - t0)
    return loss, grads, float(np.median(times))


def _model():
    from vlcomp.models.factory import ModelSpec, create_model

    return create_model(ModelSpec(ARCH), init_seed=0)


def _worker(r: int, w: int, port: int, loss_name: str, negatives: bool, out: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    torch.distributed.init_process_group("gloo", rank=r, world_size=w)
    try:
        images, batch = _batch(8, negatives)
        loss, grads, seconds = _timed(_model(), images, shard_batch(batch), loss_name)
        if r == 0:
            torch.save({"loss": loss, "grads": grads, "seconds": seconds}, out)
    finally:
        torch.distributed.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(("loss_name", "negatives"), [("negclip", True), ("clip", False)])
def test_two_gloo_processes_match_one_process(tmp_path, loss_name, negatives):
    out = str(tmp_path / "rank0.pt")
    mp.spawn(_worker, args=(2, _free_port(), loss_name, negatives, out), nprocs=2, join=True)
    got = torch.load(out, weights_only=True)
    images, batch = _batch(8, negatives)
    loss, grads, one = _timed(_model(), images, batch, loss_name)
    print(f"\n{loss_name}, global batch 8: one step {one * 1e3:.1f} ms in 1 process, "
          f"{got['seconds'] * 1e3:.1f} ms with 2 gloo processes (median of 5 after a warm-up)")
    assert got["loss"] == pytest.approx(loss, abs=1e-5)
    assert set(got["grads"]) == set(grads)
    for k, g in grads.items():
        torch.testing.assert_close(got["grads"][k], g, atol=1e-5, rtol=1e-4, msg=lambda m, k=k: f"{k}: {m}")


def test_shard_batch_rows_and_negatives():
    _, batch = _batch(4, negatives=True)
    s0, s1 = shard_batch(batch, 0, 2), shard_batch(batch, 1, 2)
    assert list(s0.images) == [0, 1] and list(s1.images) == [2, 3]
    assert s0.texts == batch.texts[0:2] + batch.texts[4:6]  # own captions, then the negatives of its own rows
    assert s1.texts == batch.texts[2:4] + batch.texts[6:8]
    assert shard_batch(batch, 0, 1) is batch
    with pytest.raises(ValueError, match="cannot be split evenly over 3 processes"):
        shard_batch(batch, 0, 3)
    odd = Batch(images=np.arange(4), texts=["x"] * 5)
    with pytest.raises(ValueError, match="5 texts for 4 images"):
        shard_batch(odd, 0, 2)
