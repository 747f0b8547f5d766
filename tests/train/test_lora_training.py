"""Training with a method's LoRA adapters: only the adapters train (and hold optimiser state), the merged model
differs from the base in the adapted weights alone, and a resumed run equals the uninterrupted one bitwise,
adapters included."""

from __future__ import annotations

import pytest
import torch

from vlcomp.methods import MethodConfig, Tuning, finish_modifiers
from vlcomp.models.factory import ModelSpec, create_model
from vlcomp.models.lora import LoraSpec
from vlcomp.train import checkpoint as ckpt

from .test_resume import Interrupt, _assert_same, _stop_at
from .tiny_run import ARCH, result, run

#: LoRA on the text tower (rank 2, scaling 2), the image tower and the temperature frozen.
METHOD = MethodConfig("negclip", "negclip", paper="aro", tuning=Tuning(
    freeze=("image", "logit_scale"), lora=LoraSpec(towers=("text",), rank=2, alpha=4)))
ADAPTED = ("attn.in_proj_weight", "attn.out_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")


@pytest.fixture(scope="module")
def lora_reference() -> dict:
    """The uninterrupted LoRA run without checkpoints (adapters unmerged)."""
    return result(*run(method=METHOD))


def test_text_lora_changes_only_the_adapted_text_weights(lora_reference):
    base = create_model(ModelSpec(ARCH), init_seed=0).state_dict()
    model, _, _ = run(method=METHOD)
    assert any(".lora_B." in k and v.any() for k, v in lora_reference["state"].items())  # the adapters trained
    merged = finish_modifiers(model, METHOD).state_dict()
    assert list(merged) == list(base)  # a plain open_clip state dict: what model.pt holds
    changed = {k for k in base if not torch.equal(merged[k], base[k])}
    assert changed == {f"transformer.resblocks.{i}.{w}" for i in range(2) for w in ADAPTED}
    assert not any(k.startswith("visual.") for k in changed)  # the image tower bitwise unchanged


def test_resume_with_lora_adapters_is_bitwise(tmp_path, lora_reference):
    with pytest.raises(Interrupt):
        run(method=METHOD, checkpoint_dir=tmp_path, checkpoint_every=3, on_log=_stop_at(8))
    state = torch.load(ckpt.checkpoint_file(tmp_path), weights_only=True)
    assert state["step"] == 6
    adapters = [k for k in state["model"] if ".lora_" in k]
    assert len(adapters) == 2 * 4 * 2  # blocks x adapted layers x (A, B): the resumable state holds them
    # AdamW holds state for the adapters alone (frozen parameters are not in its groups)
    assert sum(len(g["params"]) for g in state["optimizer"]["param_groups"]) == len(adapters)
    assert len(state["optimizer"]["state"]) == len(adapters)
    resumed = run(method=METHOD, checkpoint_dir=tmp_path, checkpoint_every=3, resume=True)
    _assert_same(result(*resumed), lora_reference)


def test_a_method_without_lora_trains_as_before():
    """Modifiers without LoRA leave the loop's computation untouched: bitwise the plain run."""
    plain = result(*run())
    _assert_same(result(*run(method=MethodConfig("negclip", "negclip", paper="aro"))), plain)
