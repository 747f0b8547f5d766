"""The real profile's TSVLC inputs: CC3M's caption TSV as a world split, TSVLC's other base models resolved from
their released weights, the authors' released positives as an analogy source, the per-method recipe (batch,
warm-up, weight decay) and the doctor's checks of the models TSVLC reads."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from vlcomp.config import profile_params
from vlcomp.formats.cc3m import write_caption_tsv
from vlcomp.models.factory import ModelSpec, create_model
from vlcomp.profiles.real.pretrain import base_model
from vlcomp.profiles.real.world import index_world, real_world_configs
from vlcomp.train.recipes import model_spec
from vlcomp.world import Split

REPO = Path(__file__).resolve().parents[3]
CAPTIONS = ["a man walking on the beach", "a red car parked near a blue house", "two dogs playing in the snow"]


def cc3m(root: Path, n: int = 3) -> dict:
    """A CC3M-layout split under ``root``: ``train_with_cap.csv`` and its images."""
    for i in range(n):
        (root / "training").mkdir(parents=True, exist_ok=True)
        arr = np.random.default_rng(i).integers(0, 256, (40, 56, 3), dtype=np.uint8)
        Image.fromarray(arr).save(root / "training" / f"{i}.jpg", format="PNG")
    write_caption_tsv(root / "train_with_cap.csv",
                      [{"image": f"training/{i}.jpg", "caption": [CAPTIONS[i % 3]]} for i in range(n)])
    return {"annotations": str(root / "train_with_cap.csv"), "images": str(root), "format": "caption_tsv"}


def test_a_caption_tsv_split_is_indexed_as_a_karpathy_one(tmp_path):
    summary = index_world({"image_size": 32, "splits": {"cc3m": cc3m(tmp_path / "cc3m")}}, tmp_path / "world")
    assert summary == {"cc3m": {"n_images": 3, "n_captions": 3}}
    split = Split(tmp_path / "world", "cc3m")
    assert split.captions() == [[c] for c in CAPTIONS]
    assert split.images[0].shape == (32, 32, 3)
    index = json.loads((tmp_path / "world" / "cc3m" / "index.json").read_text())
    assert index["annotations_format"] == "caption_tsv" and index["images"][2] == "training/2.jpg"
    with pytest.raises(ValueError, match=r"world.splits.cc3m.*format='tsv': must be one of karpathy, caption_tsv"):
        real_world_configs({"splits": {"cc3m": {**cc3m(tmp_path / "c2"), "format": "tsv"}}})


def test_the_real_profile_configures_every_tsvlc_row():
    p = profile_params("real", REPO)
    rows = [m for m in p["seeds"] if m.startswith("tsvlc")]
    assert len(rows) == 22 and all(p["seeds"][m] == [0] for m in rows)
    assert p["mlm"]["model"] == "distilroberta-base"
    assert p["world"]["splits"]["cc3m"]["format"] == "caption_tsv"
    assert p["mine"]["tsvlc_analogy"]["source"] == "released" and p["mine"]["tsvlc_analogy_laion"]["source"] == "llm"
    assert p["bases"]["vit-b0"]["weights"] == "openai" and p["bases"]["cyclip-b0"]["arch"] == "RN50-quickgelu"
    # CyCLIP from scratch is CyCLIP's architecture; the LoRA rows train at CLIP+LoRA's one rate, 512 pairs a step
    assert p["variants"]["tsvlc_cyclip_scratch-cyclip-b0s0"]["base"] == "cyclip-b0"
    m = p["methods"]["tsvlc_combined"]
    assert (m["epochs"], m["batch_size"], m["warmup_steps"], m["weight_decay"], m["lr_from"]) == (5, 512, 10000, 0.1,
                                                                                                   "tsvlc_lora")
    assert p["methods"]["tsvlc_lora"]["lr_grid"] == [5.0e-06]


def test_a_method_overrides_the_recipe():
    from vlcomp.methods import method_config
    from vlcomp.train.finetune import finetune_config

    p = profile_params("real", REPO)
    cfg = finetune_config(p["finetune"])
    tsvlc = cfg.train_config(5e-6, 5, method_config(p, "tsvlc_combined"))
    assert (tsvlc.batch_size, tsvlc.warmup_steps, tsvlc.weight_decay) == (512, 10000, 0.1)
    negclip = cfg.train_config(1e-5, 5, method_config(p, "negclip"))
    assert (negclip.batch_size, negclip.warmup_steps, negclip.weight_decay) == (256, 50, 0.2)  # finetune's
    assert cfg.train_config(1e-5, 5) == negclip
    for key, bad in (("batch_size", 0), ("warmup_steps", -1), ("weight_decay", -0.1), ("batch_size", 1.5)):
        p2 = profile_params("real", REPO)
        p2["methods"]["tsvlc_rb"][key] = bad
        with pytest.raises(ValueError, match=f"methods.tsvlc_rb.*{key}="):
            method_config(p2, "tsvlc_rb")


def _params_with_base(weights, arch="toy-vit-p8"):
    p = profile_params("real", REPO)
    p["clip"] = {"arch": "toy-vit-p8", "weights": "/nowhere/base.pt", "tokenizer": "world", "context_length": 32}
    p["bases"]["vit-b0"] = {"seed": 0, "family": "vit", "arch": arch, **({"weights": weights} if weights else {})}
    return p


def test_another_base_model_resolves_its_own_weights_never_the_default_ones(tmp_path):
    ref = create_model(ModelSpec("toy-vit-p8"), init_seed=3)
    # CyCLIP's checkpoints: {"epoch", "state_dict": DDP-wrapped}
    path = tmp_path / "cyclip.pt"
    torch.save({"epoch": 64, "state_dict": {f"module.{k}": v for k, v in ref.state_dict().items()}}, path)
    p = _params_with_base(str(path))
    assert model_spec(p, "vit-b0").weights == str(path) and model_spec(p, "b0").weights == "/nowhere/base.pt"
    model, history, about = base_model(p, "unused", base="vit-b0")
    assert history == [] and about == f"resolved: {path}"
    for k, v in ref.state_dict().items():
        assert torch.equal(model.state_dict()[k], v), k
    with pytest.raises(ValueError, match=r"base_models.vit.weights is not set: .*bases.vit-b0, toy-vit-p8"):
        base_model(_params_with_base(None), "unused", base="vit-b0")
    with pytest.raises(FileNotFoundError, match="missing.pt"):
        base_model(_params_with_base(str(tmp_path / "missing.pt")), "unused", base="vit-b0")
    with pytest.raises(ValueError, match=r"base_models.vit.arch='ViT-B-16' with base_models.vit.weights='openai'.*"
                                         r"set base_models.vit.arch: ViT-B-16-quickgelu"):
        base_model(_params_with_base("openai", "ViT-B-16"), "unused", base="vit-b0")


def test_released_positives_are_an_analogy_source(tmp_path):
    from vlcomp.generators.tsvlc import TsvlcAnalogyConfig, run_analogy

    index_world({"image_size": 32, "splits": {"cc3m": cc3m(tmp_path / "cc3m")}}, tmp_path / "world")
    folder = tmp_path / "CC3M_positives"
    folder.mkdir()
    (folder / "0.json").write_text(json.dumps({"positive": "a beach a man walks on", "caption": CAPTIONS[0]}))
    (folder / "2.json").write_text(json.dumps({"positive": "invalid", "caption": CAPTIONS[2]}))
    cfg = TsvlcAnalogyConfig(split="cc3m", source="released", positives=str(folder))
    out = tmp_path / "mined"
    out.mkdir()
    stats = run_analogy(cfg, world=tmp_path / "world", model=None, nlp=None, seed=0, out_dir=out)
    assert json.loads((out / "positives.json").read_text()) == [[["a beach a man walks on"]], [[]], [[]]]
    assert stats["mine/tsvlc_analogy/captions_with_positive"] == 1.0
    with pytest.raises(ValueError, match="positives: source released needs the folder"):
        TsvlcAnalogyConfig(split="cc3m", source="released")


def test_the_doctor_checks_the_models_tsvlc_reads(tmp_path, monkeypatch):
    from vlcomp.doctor import check_real_models_used

    mlm = tmp_path / "mlm"
    mlm.mkdir()
    (mlm / "config.json").write_text("{}")
    weights = tmp_path / "cyclip.pt"
    torch.save(create_model(ModelSpec("toy-vit-p8"), init_seed=0).state_dict(), weights)
    positives = tmp_path / "pos"
    positives.mkdir()
    (positives / "0.json").write_text("{}")
    params = {"clip": {"arch": "toy-vit-p8"}, "mlm": {"model": str(mlm)},
              "mine": {"a": {"source": "llm", "model": str(tmp_path / "no-lm")},
                       "b": {"source": "released", "positives": str(positives)},
                       "c": {"source": "released", "positives": str(tmp_path / "none")}},
              "base_models": {"vit": {"arch": "toy-vit-p8", "weights": str(weights)}, "cyclip": {},
                              "gone": {"weights": str(tmp_path / "gone.pt")}}}
    got = {f.item: f.status for f in check_real_models_used(params)}
    assert got == {"mlm.model": "ok", "mine.a.model": "missing", "mine.b.positives": "ok",
                   "mine.c.positives": "missing", "base_models.vit": "ok", "base_models.cyclip": "missing",
                   "base_models.gone": "missing"}
