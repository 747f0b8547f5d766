"""How a run executes: 2 gloo processes running ``train`` follow the 1-process run (weights and logged losses to
1e-5; only rank 0 logs and writes the checkpoint), a batch that W processes cannot split is refused by name,
and the CUDA-only features (mixed precision, pinned memory, non-blocking copies) stay off on the CPU.

toy-vit-p8 has LayerNorm only; a BatchNorm tower (toy-rn16) would normalise with per-rank batch statistics
and differ from one process, as under DDP without SyncBatchNorm.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time

import pytest
import torch
import torch.multiprocessing as mp

from vlcomp.train import checkpoint as ckpt
from vlcomp.train.loop import TrainConfig, resolve_runtime

from .tiny_run import result, run

# 16 rows, global batch 8 (8 images + 8 hard images, 32 texts; 8 images and 16 texts per rank): 6 steps.
# lr 1e-4: the attention key biases have an exactly-zero gradient (softmax ignores a constant per query), so
# their "gradient" is rounding noise, which differs between 1 and 2 processes, and AdamW moves them by about
# lr * noise / (|noise| + eps) per step. At lr 1e-3 they end ~1.3e-5 apart after 6 steps; every other weight
# agrees to 2e-6 and the losses to 5e-7.
CFG = TrainConfig(lr=1e-4, epochs=3, batch_size=8, warmup_steps=2, log_every=1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(r: int, w: int, port: int, out_dir: str, cfg: TrainConfig = CFG) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    torch.distributed.init_process_group("gloo", rank=r, world_size=w)
    try:
        try:  # refused on every rank before any collective, so no rank is left waiting
            run(TrainConfig(lr=1e-3, epochs=1, batch_size=5))
            refused = ""
        except ValueError as e:
            refused = str(e)
        logged = []
        t0 = time.perf_counter()
        out = run(cfg, on_log=lambda step, rec: logged.append(step), checkpoint_dir=os.path.join(out_dir, "ckpt"),
                  checkpoint_every=2)
        seconds = time.perf_counter() - t0
        torch.save({**result(*out), "logged": logged, "seconds": seconds, "refused": refused},
                   os.path.join(out_dir, f"rank{r}.pt"))
    finally:
        torch.distributed.destroy_process_group()


def test_two_gloo_processes_train_like_one(tmp_path):
    t0 = time.perf_counter()
    mp.spawn(_worker, args=(2, _free_port(), str(tmp_path)), nprocs=2, join=True)
    spawned = time.perf_counter() - t0
    ranks = [torch.load(tmp_path / f"rank{r}.pt", weights_only=True) for r in range(2)]
    run(TrainConfig(lr=1e-3, epochs=0.25, batch_size=4))  # warm-up, as the workers' refused call warms them up
    t0 = time.perf_counter()
    one = result(*run(CFG))
    single = time.perf_counter() - t0
    print(f"\n6 steps, global batch 8 (+8 hard images): {single:.2f} s in 1 process, "
          f"{ranks[0]['seconds']:.2f} s in 2 gloo processes ({spawned:.1f} s with process start-up)")

    for got in ranks:
        assert "batch_size=5 cannot be split evenly over 2 processes" in got["refused"]
        assert got["rng"] == one["rng"]  # every rank drew the 1-process batches
        for k, v in one["state"].items():
            torch.testing.assert_close(got["state"][k], v, atol=1e-5, rtol=0, msg=lambda m, k=k: f"{k}: {m}")
        assert [rec["step"] for rec in got["history"]] == [rec["step"] for rec in one["history"]]
        for a, b in zip(got["history"], one["history"], strict=True):
            assert a.keys() == b.keys()
            for key in ("contrastive_loss", "hard_negative_acc", "logit_scale", "lr"):
                assert a[key] == pytest.approx(b[key], abs=1e-5), (a["step"], key)
    assert ranks[0]["logged"] == [1, 2, 3, 4, 5, 6] and ranks[1]["logged"] == []  # rank 0 alone calls on_log
    for k in one["state"]:  # the averaged gradients are the same on both ranks, so are the weights
        assert torch.equal(ranks[0]["state"][k], ranks[1]["state"][k]), k
    written = torch.load(ckpt.checkpoint_file(tmp_path / "ckpt"), weights_only=True)
    assert written["step"] == 6 and sorted(p.name for p in (tmp_path / "ckpt").iterdir()) == ["checkpoint.pt"]


# ------------------------------------------------------------------------------------------------ devices


def test_the_cpu_runtime_enables_no_cuda_feature():
    rt = resolve_runtime()
    assert rt.device == torch.device("cpu") and (rt.amp, rt.pin_memory) == (False, False)
    assert (rt.world_size, rt.rank, rt.is_main) == (1, 0, True)
    assert resolve_runtime("cpu", amp=False) == rt
    x = torch.zeros(2)
    assert rt.to_device(x) is x  # no copy, no pinning
    assert isinstance(rt.autocast(), contextlib.nullcontext)


@pytest.mark.parametrize(("device", "amp", "message"), [
    ("cpu", True, r"amp=True: mixed precision needs a CUDA device"),
    ("cpu", "yes", r"amp='yes': expected 'auto', True or False"),
    ("gpu0", "auto", r"device='gpu0': not a torch device"),
])
def test_bad_device_options_are_named(device, amp, message):
    with pytest.raises(ValueError, match=message):
        resolve_runtime(device, amp)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message shown without CUDA")
def test_cuda_without_cuda_is_a_clear_error():
    with pytest.raises(ValueError, match=r"device='cuda': CUDA is not available"):
        resolve_runtime("cuda")
    with pytest.raises(ValueError, match="CUDA is not available"):
        run(TrainConfig(lr=1e-3, epochs=0.5, batch_size=4), device="cuda")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_run_with_mixed_precision_and_resume(tmp_path):
    rt = resolve_runtime("cuda")
    assert rt.amp and rt.pin_memory
    model, history, _ = run(checkpoint_dir=tmp_path, checkpoint_every=3, device="cuda")
    assert next(model.parameters()).device.type == "cpu"  # handed back where it came from
    assert all(torch.isfinite(torch.tensor(rec["contrastive_loss"])) for rec in history)
    state = torch.load(ckpt.checkpoint_file(tmp_path), weights_only=True)
    assert state["scaler"] and state["cuda_rng"] is not None and state["run"]["amp"] is True
