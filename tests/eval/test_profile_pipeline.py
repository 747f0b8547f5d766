"""The real profile end to end through plain `dvc repro`, on fixtures in the published formats.

The workspace's params.yaml is the real profile (``profiles/common.yaml`` + ``profiles/real.yaml``) with only
paths and sizes changed: Karpathy caption files in BLIP's two layouts (train: one record per caption, val: one
record per image) over real COCO captions when ``../shared/real_samples`` is present, every released benchmark
format (the engine-test fixtures), a tiny open_clip model saved as a state-dict file standing in for the OpenAI
weights, and one released checkpoint.
Every stage of the DAG runs in its paper branch: index, resolve, NegCLIP mining with spaCy on the captions,
LR selection, fine-tuning, the released-format benchmarks on the pipeline's models and on the released one,
and the real-profile report.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
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


def build_fixture(root: Path, word_tokenizer) -> dict:
    """Write the fixture data under ``root``; returns the real-profile params pointing at it."""
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

    params = profile_params("real", REPO)  # common.yaml + real.yaml, as `python -m vlcomp.profiles real` writes it
    params["world"]["splits"]["coco_train"].update(annotations=str(root / "coco" / "coco_karpathy_train.json"),
                                                   images=str(images))
    params["world"]["splits"]["coco_val"].update(annotations=str(root / "coco" / "coco_karpathy_val.json"),
                                                 images=str(images))
    params["clip"] = {"arch": "toy-vit-p8", "weights": str(base), "tokenizer": "world", "context_length": 32}
    params["finetune"].update(lr_grid=[1.0e-4, 5.0e-5], sweep_epochs=0.5, epochs=1, batch_size=8, warmup_steps=1,
                              checkpoint_every=2)
    params["real_inputs"] = inputs
    params["released_models"] = {"clip": {"family": "openclip", "arch": "toy-vit-p8", "weights": str(base),
                                       "openai_derived": False, "tokenizer": "world"}}
    params["real_evaluate"] = {"models": ["clip"], "device": "cpu"}
    params["evaluate"]["benchmarks"] = BENCHMARKS
    params["benchmarks"].update(order_seeds=2, shuffle_seeds=1)
    params.update(tsvlc_fixture(root, params, word_tokenizer))
    params.update(hardpos_fixture(root, params))
    from vlcomp.config import derive_variants

    return derive_variants(params)  # bases, mining, selections, variants of the fixture's seeds


#: TSVLC's rows on the fixtures: CC3M with the masked LM's negatives and the released positives, and a LoRA row from
#: another base model resolved from a CyCLIP-format checkpoint (LAION's generators, the causal LM's positives
#: among them, run too: every `mine` entry is generated; its rows train as the CC3M ones, so none runs here)
TSVLC_ROWS = ["tsvlc_combined", "tsvlc_cyclip_lora"]


def tsvlc_fixture(root: Path, params: dict, word_tokenizer) -> dict:
    """TSVLC's inputs in the authors' layouts (CC3M and LAION as two-column TSVs with their images, released
    positives as one JSON per image), a tiny masked LM and a tiny causal LM saved as folders (standing for
    distilroberta-base and BLOOM-560m), a CyCLIP-format checkpoint (``state_dict`` of a DDP model); the params
    sections of the real profile that name them, at fixture size."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from vlcomp.formats.cc3m import write_caption_tsv
    from vlcomp.models.factory import ModelSpec, create_model
    from vlcomp.text.analogy import build_prompt
    from vlcomp.text.mlm import MlmConfig, save_mlm, train_mlm

    caps = [c[0] for c in _captions(40)[16:40]]
    splits = {}
    for name, lo, hi in (("cc3m", 0, 14), ("laion", 14, 24)):
        d = root / name
        files = [f"training/{i}.jpg" for i in range(hi - lo)]
        for i, f in enumerate(files):
            write_noise(d / f, seed=100 + lo + i)
        write_caption_tsv(d / f"{name}_with_cap.csv", [{"image": f, "caption": [caps[lo + i]]}
                                                      for i, f in enumerate(files)])
        splits[name] = {"annotations": str(d / f"{name}_with_cap.csv"), "images": str(d), "format": "caption_tsv"}
    positives = root / "cc3m" / "CC3M_positives"
    positives.mkdir()
    for i in range(0, 14, 2):  # every other image has a released positive (the rest: none, masked)
        (positives / f"{i}.json").write_text(json.dumps({"positive": f"{caps[i]} indeed", "caption": caps[i]}))
    model, tok, _ = train_mlm(caps, MlmConfig(hidden=16, layers=1, heads=2, intermediate=32, epochs=1, batch_size=8),
                              seed=0)
    save_mlm(model, tok, root / "mlm")
    tok = word_tokenizer([build_prompt(c) for c in caps])
    torch.manual_seed(0)
    lm = GPT2LMHeadModel(GPT2Config(n_layer=1, n_head=2, n_embd=16, vocab_size=len(tok), n_positions=256,
                                    bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id,
                                    pad_token_id=tok.pad_token_id))
    lm.save_pretrained(root / "lm")
    tok.save_pretrained(root / "lm")
    cyclip = root / "checkpoints" / "cyclip_rn50.pt"
    state = create_model(ModelSpec("toy-vit-p8"), init_seed=7).state_dict()
    torch.save({"epoch": 64, "name": "cyclip", "state_dict": {f"module.{k}": v for k, v in state.items()}}, cyclip)
    # the ViT family: no method of this fixture starts from it, and it is still resolved and scored (a base model of
    # its own, as Hard Positives' Table 8 reads it)
    vit = root / "checkpoints" / "vit.pt"
    torch.save(create_model(ModelSpec("toy-vit-p8"), init_seed=8).state_dict(), vit)

    mine = params["mine"]
    mine["tsvlc_analogy"]["positives"] = str(positives)
    mine["tsvlc_analogy_laion"]["model"] = str(root / "lm")
    mine["tsvlc_analogy_laion"]["max_new_tokens"] = 8
    methods = params["methods"]
    small = {"epochs": 1, "batch_size": 8, "warmup_steps": 1, "benchmarks": ["vlchecklist"]}
    for m in ["tsvlc_lora", *TSVLC_ROWS]:
        methods[m].update(small)
    methods["tsvlc_lora"]["lr_grid"] = [1.0e-3]
    return {"world": {**params["world"], "splits": {**params["world"]["splits"], **splits}},
            "mlm": {"model": str(root / "mlm")}, "mine": mine, "methods": methods,
            "base_models": {"vit": {"arch": "toy-vit-p8", "weights": str(vit), "benchmarks": ["vlchecklist"]},
                            "cyclip": {**params["base_models"]["cyclip"], "arch": "toy-vit-p8", "weights": str(cyclip)}},
            "seeds": {"clip_ft": [0], "negclip": [0], **{m: [0] for m in TSVLC_ROWS}}}


#: Hard Positives' row on the fixtures: COCO 2017 train from COCO's own captions file, the released positives aligned
#: by annotation order, the rules negatives; HP+HN trained once and scored on REPLACE / SWAP
HARDPOS_ROWS = ["hp_hn"]


def hardpos_fixture(root: Path, params: dict) -> dict:
    """Hard Positives' inputs in the authors' layouts: a ``captions_train2017.json`` (images + annotations, the
    annotations not grouped by image, as COCO's file) with its images, and the released ``replace_hp.jsonl`` /
    ``swap_hp.jsonl`` (one JSON string per annotation, ``None`` where a caption has no "and"); the params sections of
    the real profile that name them, at fixture size."""
    caps = [c for cs in _captions(30)[24:30] for c in cs[:2]]  # 6 images x 2 captions
    d = root / "coco2017"
    files = [f"{i:012d}.jpg" for i in range(6)]
    for i, f in enumerate(files):
        write_noise(d / "train2017" / f, seed=200 + i)
    order = [(i % 6, i // 6) for i in range(12)]  # image 0 cap 0, image 1 cap 0, ...: not grouped by image
    anns = [{"id": 1000 + k, "image_id": 10 + img, "caption": caps[2 * img + c]} for k, (img, c) in enumerate(order)]
    ann_file = d / "annotations" / "captions_train2017.json"
    ann_file.parent.mkdir(parents=True)
    ann_file.write_text(json.dumps({"images": [{"id": 10 + i, "file_name": f} for i, f in enumerate(files)],
                                    "annotations": anns}))
    hp = d / "hard_positives_ft"
    hp.mkdir()
    (hp / "replace_hp.jsonl").write_text("".join(json.dumps(a["caption"].replace("a ", "one ", 1)) + "\n"
                                                 for a in anns))
    (hp / "swap_hp.jsonl").write_text("".join(
        (json.dumps(" and ".join(reversed(a["caption"].split(" and ", 1)))) if " and " in a["caption"] else "None")
        + "\n" for a in anns))
    splits = {**params["world"]["splits"]}
    splits["coco2017_train"] = {**splits["coco2017_train"], "annotations": str(ann_file), "images": str(d / "train2017")}
    mine = params["mine"]
    for name in ("hardpos", "hardpos_swap", "hardpos_replace"):
        mine[name].update(replace_file=str(hp / "replace_hp.jsonl"), swap_file=str(hp / "swap_hp.jsonl"))
    methods = params["methods"]
    for m in HARDPOS_ROWS:
        methods[m].update(epochs=1, batch_size=8, warmup_steps=1, lr_grid=[1.0e-3], benchmarks=["replace", "swap"])
    return {"world": {**params["world"], "splits": splits}, "mine": mine, "methods": methods,
            "seeds": {**params["seeds"], **{m: [0] for m in HARDPOS_ROWS}}}


@pytest.mark.slow
@pytest.mark.pipeline
@pytest.mark.spacy
def test_real_profile_dvc_repro(tmp_path, word_tokenizer):
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        from smoke import prepare, run
    finally:
        sys.path.remove(str(REPO / "scripts"))

    params = build_fixture(tmp_path / "ext", word_tokenizer)
    assert params["profile"] == "real"
    work = tmp_path / "ws"
    work.mkdir()
    prepare(work, params)
    run(work)

    metrics = {}
    for name in ("clip-b0", "clip_ft-b0s0", "negclip-b0s0", "released/clip"):
        d = work / "metrics" / name
        prov = json.loads((d / "provenance.json").read_text())
        assert prov["profile"] == "real"
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
    assert model_json["trained_on"] == f"resolved: {params['clip']['weights']}"
    assert (work / "reports" / "papers" / "aro" / "index.html").stat().st_size > 0

    # TSVLC in the real profile: CC3M / LAION from the authors' TSVs, the generators on them, the rows trained and
    # scored (VL-CheckList), CyCLIP's base resolved from its checkpoint, the TSVLC report rendered
    cc3m = json.loads((world / "cc3m" / "index.json").read_text())
    assert cc3m["annotations_format"] == "caption_tsv" and len(cc3m["images"]) == 14
    mined = work / "data" / "mined"
    assert sum(len(p) > 0 for caps in json.loads((mined / "tsvlc_analogy" / "positives.json").read_text())
               for p in caps) == 7  # the released ones
    assert len(json.loads((mined / "tsvlc_analogy_laion" / "positives.json").read_text())) == 10  # the causal LM's
    negs = json.loads((mined / "tsvlc_mix" / "negative_types.json").read_text())
    kinds = {t.split("/")[0] for caps in negs for c in caps for t in c}
    assert kinds == {"rb", "unmask"}  # the paper's word lists and the masked LM
    # (the VL-CheckList fixture has one Attribute and one Relation file: subtype keys, no group averages)
    for name in ("tsvlc_combined-b0s0", "tsvlc_cyclip_lora-cyclip-b0s0", "clip-cyclip-b0", "clip-vit-b0"):
        got = json.loads((work / "metrics" / name / "metrics.json").read_text())
        assert 0 <= got["vlchecklist/relation/spatial"] <= 1 and "aro/vg_relation/macro_acc" not in got, name
    cyclip_json = json.loads((work / "models" / "base" / "cyclip-b0" / "model.json").read_text())
    assert cyclip_json["trained_on"].startswith("resolved: ") and cyclip_json["trained_on"].endswith("cyclip_rn50.pt")
    report = work / "reports" / "papers" / "tsvlc"
    assert "Traceback" not in (report / "index.html").read_text()
    runs = pd.read_csv(report / "tables" / "runs.csv").set_index("key")  # the page's runs table
    assert runs.loc["`tsvlc_combined`", "runs"] == runs.loc["`tsvlc_cyclip_lora`", "runs"] == 1
    assert runs.loc["`tsvlc_rb`", "which runs"] == "not run"
    t3 = pd.read_csv(report / "tables" / "TSVLC-T3.csv").set_index(["method", "metric_key"])
    row = t3.loc[("tsvlc_combined", "vlchecklist/relation/spatial")]  # reproduced (n = 1) beside the printed cell
    assert 0 <= row["mean"] <= 1 and row["n"] == 1 and row["paper"] == pytest.approx(0.6320)
    assert "(reproduced, %)" in (report / "index.html").read_text()
    assert not (work / "checkpoints").exists() or not any((work / "checkpoints").iterdir())

    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
    out = subprocess.run(["dvc", "repro"], cwd=work, env=env, capture_output=True, text=True, check=True).stdout
    assert "Running stage" not in out
