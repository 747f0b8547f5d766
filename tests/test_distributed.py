"""Data parallelism: 2 gloo processes on the CPU give the one-process loss and gradients (to 1e-5), for CLIP, NegCLIP
and a batch with every block kind (hard and distractor images, masked K-wide negatives and positives)."""

from __future__ import annotations

import os
import socket
import time

import numpy as np
import pytest
import torch
import torch.multiprocessing as mp
import torch.nn.functional as F

from vlcomp.train.batch import PAD, Batch, Features, TextBlock

ARCH = "toy-vit-p8"  # LayerNorm only: BatchNorm towers (toy-rn16) see per-rank batch statistics, as under DDP
WORDS = "a the red blue green small large circle square star cross arrow above below left right of and".split()


def _batch(n: int, kind: str, seed: int = 0) -> tuple[np.ndarray, Batch]:
    """A global batch of n rows. ``clip``: images + captions; ``negclip``: + hard images and one negative per
    row ([I; I'], [T; T'; T-; T'-]); ``every``: every block kind: images, hard images, distractor images,
    captions, negatives [2n, 2] and positives [2n, 2], both with masked slots."""
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, size=(3 * n, 48, 48, 3), dtype=np.uint8)

    def text() -> str:
        return " ".join(rng.choice(WORDS, size=int(rng.integers(3, 9))))

    if kind == "clip":
        return images, Batch({"images": np.arange(n)}, {"captions": TextBlock([text() for _ in range(n)], np.arange(n))})
    rows = 2 * n
    img = {"images": np.arange(n), "hard_images": np.arange(n, 2 * n)}
    texts = {"captions": TextBlock([text() for _ in range(rows)], np.arange(rows))}
    if kind == "negclip":
        texts["negatives"] = TextBlock([text() for _ in range(rows)], np.arange(rows), 1)
        return images, Batch(img, texts)
    img["distractors"] = np.arange(2 * n, 3 * n)
    for name in ("negatives", "positives"):
        mask = rng.random((rows, 2)) < 0.75
        mask[:, 0] = True
        texts[name] = TextBlock([text() if m else PAD for m in mask.reshape(-1)], np.arange(rows), 2, mask)
    return images, Batch(img, texts)


def probe_loss(f: Features) -> dict[str, torch.Tensor]:
    """A loss that reads every block kind, its owners and its masks (a test device, not a method)."""
    img = torch.cat([f.images["images"], f.images["hard_images"]])
    cap = f.texts["captions"]
    neg, _, valid = f.flat("negatives")
    n = img.shape[0]
    logits = (f.logit_scale * img @ torch.cat([cap, neg]).T).masked_fill(
        ~torch.cat([torch.ones(n, dtype=torch.bool), valid]), float("-inf"))
    labels = torch.arange(n)
    t2i = F.cross_entropy(f.logit_scale * cap @ torch.cat([img, f.images["distractors"]]).T, labels)
    pos, owner, pvalid = f.flat("positives")
    pos_term = -(f.image_rows()[owner] * pos).sum(-1)[pvalid].mean()
    return {"probe_loss": F.cross_entropy(logits, labels) + t2i + pos_term}


LOSSES = {"clip": "clip", "negclip": "negclip", "every": probe_loss}


def _step(model, images, batch, kind, r: int = 0, w: int = 1):
    from vlcomp.distributed import average_gradients
    from vlcomp.losses import get_loss
    from vlcomp.models.factory import to_tensor
    from vlcomp.text.tokenizer import get_tokenizer
    from vlcomp.train.loop import encode_batch

    tok = get_tokenizer("world", ARCH, 32)
    loss_fn = LOSSES[kind] if callable(LOSSES[kind]) else get_loss(LOSSES[kind])
    model.train()
    model.zero_grad(set_to_none=True)
    part = batch.shard(r, w)
    terms = loss_fn(encode_batch(model, batch, part, to_tensor(images[part.image_rows()], 48), tok(part.all_texts())))
    loss = sum(v for k, v in terms.items() if k.endswith("_loss"))
    loss.backward()
    average_gradients(model)
    return float(loss.detach()), {k: p.grad.detach().clone() for k, p in model.named_parameters()
                                  if p.grad is not None}


def _timed(model, images, batch, kind, r: int = 0, w: int = 1, repeats: int = 5):
    _step(model, images, batch, kind, r, w)  # warm-up; no optimizer step, so every repeat is the same step
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        loss, grads = _step(model, images, batch, kind, r, w)
        times.append(time.perf_counter() - t0)
    return loss, grads, float(np.median(times))


def _model():
    from vlcomp.models.factory import ModelSpec, create_model

    return create_model(ModelSpec(ARCH), init_seed=0)


def _worker(r: int, w: int, port: int, kind: str, out: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    torch.distributed.init_process_group("gloo", rank=r, world_size=w)
    try:
        images, batch = _batch(8, kind)
        loss, grads, seconds = _timed(_model(), images, batch, kind, r, w)
        if r == 0:
            torch.save({"loss": loss, "grads": grads, "seconds": seconds}, out)
    finally:
        torch.distributed.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("kind", ["negclip", "clip", "every"])
def test_two_gloo_processes_match_one_process(tmp_path, kind):
    out = str(tmp_path / "rank0.pt")
    mp.spawn(_worker, args=(2, _free_port(), kind, out), nprocs=2, join=True)
    got = torch.load(out, weights_only=True)
    images, batch = _batch(8, kind)
    if kind == "every":  # the test means something only if masks cut slots and every block is present
        assert {"images", "hard_images", "distractors"} == set(batch.images)
        assert all(batch.texts[k].mask is not None and not batch.texts[k].mask.all() for k in ("negatives", "positives"))
    loss, grads, one = _timed(_model(), images, batch, kind)
    print(f"\n{kind}, global batch 8: one step {one * 1e3:.1f} ms in 1 process, "
          f"{got['seconds'] * 1e3:.1f} ms with 2 gloo processes (median of 5 after a warm-up)")
    assert got["loss"] == pytest.approx(loss, abs=1e-5)
    assert set(got["grads"]) == set(grads)
    for k, g in grads.items():
        torch.testing.assert_close(got["grads"][k], g, atol=1e-5, rtol=1e-4, msg=lambda m, k=k: f"{k}: {m}")
