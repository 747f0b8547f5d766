"""`python -m vlcomp.doctor`: one line per missing or malformed input, exit 1 if any."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from PIL import Image

from vlcomp.doctor import check_real_inputs, main
from vlcomp.formats.sugarcrepe import CATEGORIES


def _vg_case(image: str, x: int = 0, **extra) -> dict:
    return {"image_path": image, "bbox_x": x, "bbox_y": 0, "bbox_w": 4, "bbox_h": 4, "true_caption": "a b",
            "false_caption": "b a", **extra}


@pytest.fixture
def data(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    (root / "aro" / "images").mkdir(parents=True)
    Image.fromarray(np.zeros((8, 8, 3), dtype=np.uint8)).save(root / "aro" / "images" / "a.jpg")
    (root / "aro" / "visual_genome_relation.json").write_text(json.dumps([_vg_case("a.jpg", relation_name="on")]))
    (root / "aro" / "visual_genome_attribution.json").write_text(
        json.dumps([_vg_case("a.jpg", attributes=["red"])]))  # malformed: one attribute
    (root / "sc").mkdir()
    for c in CATEGORIES:
        (root / "sc" / f"{c}.json").write_text(json.dumps(
            {"0": {"filename": "000000000001.jpg", "caption": "a cat", "negative_caption": "a dog"}}))
    (root / "coco.json").write_text(json.dumps([{"image": "x.jpg", "caption": ["a cat"]}]))
    torch.save({"state_dict": {"w": torch.zeros(2)}}, root / "ckpt.pt")
    (root / "broken.pt").write_bytes(b"not a checkpoint")
    return root


def test_real_inputs_findings(data, monkeypatch):
    monkeypatch.setenv("VLCOMP_DATA", str(data))
    monkeypatch.delenv("VLCOMP_UNSET", raising=False)
    findings = {f.item: f for f in check_real_inputs({
        "aro_vg_relation": "$VLCOMP_DATA/aro/visual_genome_relation.json",
        "aro_vg_attribution": "$VLCOMP_DATA/aro/visual_genome_attribution.json",
        "aro_images": "$VLCOMP_DATA/aro/images",
        "sugarcrepe_dir": "$VLCOMP_DATA/sc",
        "coco_karpathy_test": "$VLCOMP_DATA/coco.json",
        "flickr_karpathy_test": "$VLCOMP_UNSET/flickr.json",
        "coco_images": "",
        "checkpoint_negclip": "$VLCOMP_DATA/ckpt.pt",
        "checkpoint_ceclip": "$VLCOMP_DATA/broken.pt",
        "checkpoint_tsvlc": "$VLCOMP_DATA/none.pt",
        "mystery": "$VLCOMP_DATA/coco.json",
    })}
    status = {k: f.status for k, f in findings.items()}
    assert status == {"aro_vg_relation": "ok", "aro_vg_attribution": "malformed", "aro_images": "ok",
                      "sugarcrepe_dir": "ok", "coco_karpathy_test": "ok", "flickr_karpathy_test": "missing",
                      "coco_images": "skipped", "checkpoint_negclip": "ok", "checkpoint_ceclip": "malformed",
                      "checkpoint_tsvlc": "missing", "mystery": "malformed"}
    assert findings["aro_vg_relation"].detail == "1 cases, 1 groups"
    assert "visual_genome_attribution.json: record 0: field 'attributes'" in findings["aro_vg_attribution"].detail
    assert "environment variable not set" in findings["flickr_karpathy_test"].detail
    assert "unknown input name" in findings["mystery"].detail


def test_vg_images_are_checked(data, monkeypatch):
    rel = data / "aro" / "visual_genome_relation.json"
    rel.write_text(json.dumps([_vg_case("a.jpg", relation_name="on"), _vg_case("gone.jpg", relation_name="on")]))
    (f,) = check_real_inputs({"aro_vg_relation": str(rel), "aro_images": str(data / "aro" / "images")})[:1]
    assert f.status == "missing" and "record 1: image" in f.detail and "gone.jpg not found" in f.detail
    rel.write_text(json.dumps([_vg_case("a.jpg", x=6, relation_name="on")]))  # 6 + 4 > 8 px
    (f,) = check_real_inputs({"aro_vg_relation": str(rel), "aro_images": str(data / "aro" / "images")})[:1]
    assert f.status == "malformed" and "lies outside image a.jpg of size 8x8" in f.detail


def test_main_prints_one_line_per_problem_and_exits_1(data, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("VLCOMP_DATA", str(data))
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"profile": "real", "real_inputs": {
        "aro_vg_relation": "$VLCOMP_DATA/aro/visual_genome_relation.json",
        "aro_vg_attribution": "$VLCOMP_DATA/aro/visual_genome_attribution.json",
        "sugarcrepe_dir": "$VLCOMP_DATA/nope"}}))
    assert main(["--params", str(params)]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("malformed aro_vg_attribution:") and lines[1].startswith("missing   sugarcrepe_dir:")
    # a full real-profile params file: its fine-tuning inputs (world.splits, clip) are checked too
    assert any(ln.startswith("missing   world.splits:") for ln in lines)
    assert any(ln.startswith("malformed clip:") and "missing key 'clip'" in ln for ln in lines)
    assert lines[-1] == "doctor (real): 1 fine, 4 problem(s)"
    params.write_text(yaml.safe_dump({"profile": "real"}))
    assert main(["--params", str(params)]) == 1
    assert "no `real_inputs` mapping" in capsys.readouterr().out


def test_repository_params_name_only_known_inputs():
    params = yaml.safe_load((Path(__file__).resolve().parents[1] / "profiles" / "real.yaml").read_text())
    from vlcomp.doctor import MAPPING_KEYS, OPTION_KEYS

    paths = {k: "" for k in params["real_inputs"] if k not in OPTION_KEYS | MAPPING_KEYS}
    findings = check_real_inputs(paths)
    assert {f.status for f in findings} == {"skipped"}


def test_new_inputs_and_models_are_checked(tmp_path, monkeypatch):
    """Settings pass through, folder mappings are checked entry by entry, and each model spec is validated and
    its files looked for (without loading weights)."""
    from vlcomp.doctor import check_released_models

    (tmp_path / "v7w").mkdir()
    findings = check_real_inputs({"order_seeds": 5, "valse_images": {"visual7w": str(tmp_path / "v7w"),
                                                                      "swig": str(tmp_path / "nope")},
                                   "vlchecklist_files": {"vg_color": {"annotations": "", "images": str(tmp_path)}}})
    got = {f.item: f.status for f in findings}
    assert got == {"order_seeds": "ok", "valse_images.visual7w": "ok", "valse_images.swig": "missing",
                   "vlchecklist_files.vg_color.annotations": "skipped", "vlchecklist_files.vg_color.images": "ok"}
    monkeypatch.setenv("VLCOMP_CHECKPOINTS", str(tmp_path))
    (tmp_path / "negclip.pth").write_bytes(b"x")
    params = {"released_models": {
        "negclip": {"family": "openclip", "arch": "ViT-B-32", "weights": "$VLCOMP_CHECKPOINTS/negclip.pth",
                    "openai_derived": True},
        "ceclip": {"family": "openclip", "arch": "ViT-B-32", "weights": "$VLCOMP_CHECKPOINTS/ce.pt",
                   "openai_derived": True},
        "bad": {"family": "nosuch"}},
        "real_evaluate": {"models": ["negclip", "ceclip", "bad", "absent"]}}
    got = {f.item: (f.status, f.detail) for f in check_released_models(params)}
    assert got["released_models.negclip"][0] == "ok"
    assert got["released_models.ceclip"][0] == "missing" and "ce.pt" in got["released_models.ceclip"][1]
    assert got["released_models.bad"][0] == "malformed" and "nosuch" in got["released_models.bad"][1]
    assert got["released_models.absent"][0] == "missing"
