"""ARO-D1..D4 / M1-M2 inventory: counts are read from the stage outputs (hand-built fixtures here)."""

import json

import numpy as np
import pytest
import torch

from vlcomp.reporting.papers.aro.artifacts import (
    artifact_inventory,
    vg_attribution_counts,
    vg_relation_counts,
)


def test_vg_relation_counts_exclude_symmetric():
    cases = [{"relation_name": r} for r in ["above", "above", "next to", "pointing at"]]
    assert vg_relation_counts(cases, {"next to", "near"}) == {
        "cases": 4, "relations": 3, "relations_in_macro": 2, "cases_in_macro": 3}


def test_vg_attribution_counts_ordered_pairs_and_min_count():
    cases = [{"attributes": ["red", "blue"]}] * 3 + [{"attributes": ["blue", "red"]}] * 2
    # ordered keys as the ARO macro: red_blue (3), blue_red (2); only red_blue has >= 3
    assert vg_attribution_counts(cases, 3) == {"cases": 5, "pairs": 2, "pairs_in_macro": 1}


def _fixture(tmp_path, knn_rows=2):
    """A benchmarks dir as the stage writes it: a manifest whose inputs point at ARO's files (relative paths)."""
    bench, mined, models = tmp_path / "bench", tmp_path / "mined", tmp_path / "models"
    for d in (bench / "aro", bench / "order" / "coco_order", bench / "order" / "flickr_order", mined):
        d.mkdir(parents=True)
    (bench / "aro" / "excluded.txt").write_text("next to\n")
    (bench / "aro" / "vgr.json").write_text(json.dumps([{"relation_name": "above"}, {"relation_name": "next to"}]))
    (bench / "aro" / "vga.json").write_text(json.dumps([{"attributes": ["red", "blue"]}]))
    for name, n in (("coco_order", 3), ("flickr_order", 1)):
        for s in range(2):
            (bench / "order" / name / f"seed{s}.json").write_text(json.dumps([{"caption_options": list("abcde")}] * n))
    (bench / "manifest.json").write_text(json.dumps({"inputs": {
        "aro_vg_relation": "aro/vgr.json", "aro_vg_attribution": "aro/vga.json",
        "aro_relation_exclusions": "aro/excluded.txt", "aro_vga_min_count": 1,
        "coco_order_options": "order/coco_order", "flickr_order_options": "order/flickr_order"}}))
    (mined / "negatives.json").write_text(json.dumps([[["x", "y"], []], [["z"], ["u", "v", "w"]]]))
    np.save(mined / "hard_images.npy", np.zeros((knn_rows, 3), dtype=np.int64))
    for v in ("negclip-s0", "negclip-s1"):
        d = models / "finetune" / v
        d.mkdir(parents=True)
        torch.save({"state_dict": {"w": torch.zeros(10, 10)}}, d / "model.pt")
        (d / "model.json").write_text(json.dumps({"arch": "toy-rn16", "lr": 5e-4, "n_rows": 3}))
    variants = {"negclip-s0": {"method": "negclip", "seed": 0}, "negclip-s1": {"method": "negclip", "seed": 1}}
    return bench, mined, models, variants


def test_inventory_counts(tmp_path):
    bench, mined, models, variants = _fixture(tmp_path)
    df = artifact_inventory(bench, mined, models, variants, epochs=3).set_index("artifact")
    toy = df["toy (counted from the outputs)"]
    assert toy["ARO-D1"].startswith("2 cases, 2 relations; macro over 1 (1 cases")
    assert toy["ARO-D2"].startswith("1 cases, 1 attribute pairs; 1 with ≥1")
    assert "coco: 3 cases × 2 seeds, 5 options" in toy["ARO-D3"]
    assert "flickr: 1 cases × 2 seeds" in toy["ARO-D3"]
    # 4 captions, 3 with negatives: (2 + 1 + 3) / 3 = 2.00, max 3
    assert toy["ARO-D4"] == "4 captions of 2 images; 3 with ≥1 negative (mean 2.00, max 3); 3 NN images per image"
    assert "2 fine-tune seeds (0, 1) of one base of toy-rn16 (0.00 M params)" in toy["ARO-M1"]
    assert "3 epochs at lr 0.0005" in toy["ARO-M1"]
    assert toy["ARO-M2"] == "no variant of this method in params.yaml"
    assert df.loc["ARO-D1", "paper"].startswith("23,937 cases")


def test_inventory_rejects_mismatched_hard_images(tmp_path):
    bench, mined, models, variants = _fixture(tmp_path, knn_rows=5)
    with pytest.raises(ValueError, match="hard_images.npy"):
        artifact_inventory(bench, mined, models, variants, epochs=3)


def test_inventory_names_whole_chains(tmp_path):
    bench, mined, models, _ = _fixture(tmp_path)
    for k in (0, 1):
        (models / "finetune" / f"negclip-s{k}").rename(models / "finetune" / f"negclip-b{k}s0")
    variants = {f"negclip-b{k}s0": {"method": "negclip", "base": f"b{k}", "seed": 0} for k in (0, 1)}
    df = artifact_inventory(bench, mined, models, variants, 1, {"b0": {"seed": 0}, "b1": {"seed": 1}})
    m1 = df.set_index("artifact").loc["ARO-M1", "toy (counted from the outputs)"]
    assert m1.startswith("2 whole chains (base seeds 0, 1 x fine-tune seed 0) of toy-rn16")
    assert "each from its chain's base model" in m1
