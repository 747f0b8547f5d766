"""The paper profile end to end through plain `dvc repro`, on fixtures in the published formats.

The workspace's params.yaml is the paper profile (``profiles/common.yaml`` + ``profiles/paper.yaml``) with only
paths and sizes changed: Karpathy caption files in BLIP's two layouts (train: one record per caption, val: one
record per image) over real COCO captions when ``../shared/real_samples`` is present, every released benchmark
format (the engine-test fixtures), a tiny open_clip model saved as a state-dict file standing in for the OpenAI
weights, and one released checkpoint.
Every stage of the DAG runs in its paper branch: index, resolve, NegCLIP mining with spaCy on the captions,
LR selection, fine-tuning, the released-format benchmarks on the pipeline's models and on the released one,
and the paper-profile report.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .formats import merged
from .helpers import write_noise

REPO = Path(__file__).resolve().parents[2]
REAL_COCO = REPO.parent / "shared" / "real_samples" / "coco_karpathy_test.json"
BENCHMARKS = ["vg_relation", "vg_attribution", "coco_order", "flickr_order", "coco_retrieval", "flickr_retrieval",
              "sugarcrepe", "valse", "vlchecklist", "ccneg", "crepe_negate", "replace", "swap"]

FALLBACK = ["a {a} dog sitting on a {b} couch", "a man riding a {a} bike down the {b} street",
            "two {a} cats laying next to a {b} laptop", "a woman holding a {a} umbrella in the {b} rain",
            "a {a} plate of food on a {b} table"]
COLOURS = ["red", "blue", "green", "white", "black", "brown", "small", "large"]


def _captions(n_images: int) -> list[list[str]]:
    if REAL_COCO.exists():
        records = json.loads(REAL_COCO.read_text())[:n_images]
        return [r["caption"] for r in records]
    return [[t.format(a=COLOURS[(i + k) % 8], b=COLOURS[(i + 2 * k + 1) % 8]) for k, t in enumerate(FALLBACK)]
            for i in range(n_images)]


def build_fixture(root: Path) -> dict:
    """Write the fixture data under ``root``; returns the paper-profile params pointing at it."""
    import torch

    from vlcomp.config import profile_params
    from vlcomp.models.factory import ModelSpec, create_model

    images = root / "coco" / "images"
    caps = _captions(24)
    names = [f"train2014/COCO_train2014_{i:012d}.jpg" for i in range(16)] + \
            [f"val2014/COCO_val2014_{i:012d}.jpg" for i in range(16, 24)]
    for i, name in enumerate(names):
        write_noise(images / name, seed=i)
    train = [{"image": names[i], "caption": c, "image_id": f"coco_{i}"} for i in range(16) for c in caps[i]]
    val = [{"image": names[i], "caption": caps[i]} for i in range(16, 24)]
    (root / "coco" / "coco_karpathy_train.json").write_text(json.dumps(train))
    (root / "coco" / "coco_karpathy_val.json").write_text(json.dumps(val))
    base = root / "checkpoints" / "base.pt"
    base.parent.mkdir(parents=True)
    torch.save({"state_dict": create_model(ModelSpec("toy-vit-p8"), init_seed=0).state_dict()}, base)
    inputs = merged(BENCHMARKS, root / "bench").inputs

    params = profile_params("paper", REPO)  # common.yaml + paper.yaml, as `python -m vlcomp.profiles paper` writes it
    params["world"]["splits"]["coco_train"].update(annotations=str(root / "coco" / "coco_karpathy_train.json"),
                                                   images=str(images))
    params["world"]["splits"]["coco_val"].update(annotations=str(root / "coco" / "coco_karpathy_val.json"),
                                                 images=str(images))
    params["model"] = {"arch": "toy-vit-p8", "weights": str(base), "tokenizer": "world", "context_length": 32}
    params["finetune"].update(lr_grid=[1.0e-4, 5.0e-5], sweep_epochs=0.5, epochs=1, batch_size=8, warmup_steps=1,
                              checkpoint_every=2)
    params["paper_inputs"] = inputs
    params["paper_models"] = {"clip": {"family": "openclip", "arch": "toy-vit-p8", "weights": str(base),
                                       "openai_derived": False, "tokenizer": "world"}}
    params["paper_evaluate"] = {"models": ["clip"], "device": "cpu"}
    params["evaluate"]["benchmarks"] = BENCHMARKS
    params["benchmarks"].update(order_seeds=2, shuffle_seeds=1)
    return params


@pytest.mark.slow
@pytest.mark.spacy
def test_paper_profile_dvc_repro(tmp_path):
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        from smoke import prepare, run
    finally:
        sys.path.remove(str(REPO / "scripts"))

    params = build_fixture(tmp_path / "ext")
    assert params["profile"] == "paper"
    work = tmp_path / "ws"
    work.mkdir()
    prepare(work, params)
    run(work)

    metrics = {}
    for name in ("clip-b0", "clip_ft-b0s0", "negclip-b0s0", "released/clip"):
        d = work / "metrics" / name
        prov = json.loads((d / "provenance.json").read_text())
        assert prov["profile"] == "paper"
        metrics[name] = json.loads((d / "metrics.json").read_text())
        for key in ("aro/vg_relation/macro_acc", "aro/vg_attribution/macro_acc"):
            assert 0 <= metrics[name][key] <= 1, (name, key)
        assert all("@" not in k for k in metrics[name])
        assert {p.stem for p in (d / "items").glob("*.parquet")} >= {"vg_relation", "sugarcrepe", "swap"}
    # the pipeline's base model is the resolved weights file, the released `clip` the same file through the zoo:
    # the same model scored by two routes gives the same numbers
    assert metrics["clip-b0"].keys() == metrics["released/clip"].keys()
    for k, v in metrics["clip-b0"].items():
        assert v == pytest.approx(metrics["released/clip"][k], abs=1e-6), k
    assert metrics["negclip-b0s0"] != metrics["clip-b0"]  # fine-tuning changed the model

    world = work / "data" / "world"
    index = json.loads((world / "coco_train" / "index.json").read_text())
    assert len(index["images"]) == 16
    annotations = json.loads((world / "coco_train" / "captions.json").read_text())
    assert [len(a["caption"]) for a in annotations] == [len(c) for c in _captions(16)]
    negatives = json.loads((work / "data" / "mined" / "negclip-b0" / "negatives.json").read_text())
    assert sum(len(n) > 0 for caps in negatives for n in caps) > 0  # spaCy swaps on the real captions
    manifest = json.loads((work / "data" / "benchmarks" / "manifest.json").read_text())
    assert set(manifest["benchmarks"]) == set(BENCHMARKS)
    model_json = json.loads((work / "models" / "base" / "b0" / "model.json").read_text())
    assert model_json["trained_on"] == f"resolved: {params['model']['weights']}"
    assert (work / "reports" / "papers" / "aro" / "index.html").stat().st_size > 0
    assert not (work / "checkpoints").exists() or not any((work / "checkpoints").iterdir())

    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
    out = subprocess.run(["dvc", "repro"], cwd=work, env=env, capture_output=True, text=True, check=True).stdout
    assert "Running stage" not in out
