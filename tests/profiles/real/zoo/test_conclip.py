"""Family ``conclip``: CoN-CLIP's checkpoint, text tower from the file, image tower from the base."""

from __future__ import annotations

import argparse

import pytest
import torch

from vlcomp.profiles.real.zoo import build_scorer

from .helpers import ARCH, TEXTS, activations, check_dual, reference, toy_state


def test_conclip_text_from_checkpoint_image_from_base(tmp_path, images):
    """CoN-CLIP's ``{"model": the whole OpenAI CLIP state dict, "optimizer", "args": Namespace}``, image tower
    frozen."""
    base, tuned = toy_state(0), toy_state(5)
    torch.save({"epoch": 0, "state_dict": base}, tmp_path / "base.pt")
    ckpt = {k: (base[k] if k.startswith("visual.") else tuned[k]) for k in base}
    args = argparse.Namespace(clip_model_name="ViT-B/32", lock_image_encoder="on", learning_rate=1e-6)
    torch.save({"model": ckpt, "optimizer": {"state": {}, "param_groups": []}, "args": args},
               tmp_path / "ckpt_5_conclip_b32.pt")
    spec = {"family": "conclip", "arch": ARCH, "weights": str(tmp_path / "base.pt"), "tokenizer": "world",
            "checkpoint": str(tmp_path / "ckpt_5_conclip_b32.pt")}
    scorer = build_scorer("conclip", spec)
    assert activations(scorer.model) == {"QuickGELU"}
    fi, ft = check_dual(scorer, images)
    ref = reference(ckpt, quick_gelu=True)
    torch.testing.assert_close(fi, ref.encode_images(images), atol=1e-6, rtol=0)
    torch.testing.assert_close(ft, ref.encode_texts(TEXTS), atol=1e-6, rtol=0)

    # a file whose image tower moved: an error with image_tower: base, loaded with image_tower: checkpoint
    torch.save({"model": tuned, "args": args}, tmp_path / "unlocked.pt")
    spec["checkpoint"] = str(tmp_path / "unlocked.pt")
    with pytest.raises(ValueError, match=r"unlocked.pt: .*image tower.*'visual\..*differs.*image_tower: "
                                         r"checkpoint"):
        build_scorer("conclip", spec)
    scorer = build_scorer("conclip", {**spec, "image_tower": "checkpoint"})
    expected = reference(tuned, quick_gelu=True).encode_images(images)
    torch.testing.assert_close(scorer.encode_images(images), expected, atol=1e-6, rtol=0)
    # a text tower short of a key
    short = {k: v for k, v in ckpt.items() if k != "token_embedding.weight"}
    torch.save({"model": short}, tmp_path / "short.pt")
    with pytest.raises(ValueError, match=r"short.pt: CoN-CLIP checkpoint \(text tower\).*missing token_emb"):
        build_scorer("conclip", {**spec, "checkpoint": str(tmp_path / "short.pt")})
