"""Methods as params entries: rows, loss weights, frozen towers; generators' declared outputs read by name."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from vlcomp.generators import GENERATORS, MINED, Generator, check_written, read_mined
from vlcomp.io import write_json, write_npy
from vlcomp.methods import BatchConfig, WeightedLoss, apply_modifiers, make_loss, method_config, method_rows
from vlcomp.models.factory import ModelSpec, create_model
from vlcomp.train.batch import Batch, TextBlock, features
from vlcomp.train.data import Row

PARAMS = {"methods": {
    "plain": {"paper": "aro", "generator": "negclip", "loss": "clip"},
    "neg": {"paper": "aro", "generator": "negclip", "loss": "negclip", "batch": {"rows": "with_negatives", "negatives": 1},
            "loss_weights": {"contrastive_loss": 0.5}},
    "frozen": {"paper": "aro", "generator": "negclip", "loss": "clip", "tuning": {"freeze": ["image"]}},
}}


def test_rows_follow_the_batch_rule():
    caps = [["a0", "a1"], ["b0"]]
    mined = {"negatives": [[["na0"], []], [["nb0", "nb1"]]], "positives": [[["pa0"], ["pa1"]], [[]]]}
    assert method_rows(caps, {}, BatchConfig()) == [Row(0, "a0"), Row(0, "a1"), Row(1, "b0")]
    assert method_rows(caps, mined, BatchConfig(rows="with_negatives")) == [
        Row(0, "a0", ("na0",), ("pa0",)), Row(1, "b0", ("nb0", "nb1"), ())]
    assert BatchConfig(rows="with_negatives").needs() == ("negatives",)
    assert BatchConfig(positives=2, hard_images=True).needs() == ("positives", "hard_images")


def test_loss_weights_scale_only_the_named_loss_terms():
    gen = torch.Generator().manual_seed(0)
    img = torch.nn.functional.normalize(torch.randn(4, 8, generator=gen), dim=-1)
    txt = torch.nn.functional.normalize(torch.randn(8, 8, generator=gen), dim=-1)
    batch = Batch({"images": np.arange(4)}, {"captions": TextBlock(["t"] * 4, np.arange(4)),
                                              "negatives": TextBlock(["t"] * 4, np.arange(4), 1)})
    f = features(batch, {"images": img}, {"captions": txt[:4], "negatives": txt[4:, None]}, torch.tensor(10.0))
    plain = make_loss(method_config({"methods": {"m": {"paper": "aro", "generator": "negclip", "loss": "negclip"}}}, "m"))(f)
    weighted = make_loss(method_config(PARAMS, "neg"))(f)
    assert isinstance(make_loss(method_config(PARAMS, "neg")), WeightedLoss)
    assert weighted["contrastive_loss"].item() == pytest.approx(0.5 * plain["contrastive_loss"].item())
    assert weighted["hard_negative_acc"].item() == plain["hard_negative_acc"].item()  # diagnostics unscaled
    with pytest.raises(ValueError, match=r"loss_weights name \['other_loss'\], which ClipLoss does not return"):
        WeightedLoss(make_loss(method_config(PARAMS, "plain")), {"other_loss": 2.0})(f)


def test_a_frozen_tower_gets_no_gradient():
    model = apply_modifiers(create_model(ModelSpec("toy-vit-p8"), init_seed=0), method_config(PARAMS, "frozen"))
    frozen = {n for n, p in model.named_parameters() if not p.requires_grad}
    assert frozen == {n for n, _ in model.named_parameters() if n.startswith("visual.")}
    assert model.logit_scale.requires_grad
    from vlcomp.train.loop import _param_groups

    assert sum(len(g["params"]) for g in _param_groups(model, 0.1)) == sum(
        1 for _, p in model.named_parameters() if p.requires_grad)


def _mined(tmp_path, n=3):
    write_json(tmp_path / "negatives.json", [[["n"]] for _ in range(n)])
    write_npy(tmp_path / "hard_images.npy", np.array([[1], [2], [0]][:n], dtype=np.int64))
    return tmp_path


def test_read_mined_by_name_and_errors_name_the_file(tmp_path):
    d = _mined(tmp_path)
    got = read_mined(d, ["negatives", "hard_images"], n_images=3, captions=[["c"]] * 3)
    assert got["negatives"][0] == [["n"]] and got["hard_images"].tolist() == [[1], [2], [0]]
    with pytest.raises(FileNotFoundError, match="needs 'positives', which generator 'negclip' did not write"):
        read_mined(d, ["positives"], n_images=3, generator="negclip")
    with pytest.raises(ValueError, match=r"negatives.json: expected one entry per image \(4\)"):
        read_mined(d, ["negatives"], n_images=4)
    with pytest.raises(ValueError, match=r"image 0: expected one list per caption \(2\)"):
        read_mined(d, ["negatives"], n_images=3, captions=[["c", "d"]] * 3)
    write_npy(d / "hard_images.npy", np.array([[1], [2], [7]], dtype=np.int64))
    with pytest.raises(ValueError, match=r"hard_images.npy: image indices must lie in \[0, 3\)"):
        read_mined(d, ["hard_images"], n_images=3)


def test_generators_declare_known_outputs_and_the_stage_checks_them(tmp_path):
    assert set(GENERATORS.get("negclip").writes) == {"negatives", "hard_images"}
    for name in GENERATORS.names():
        assert set(GENERATORS.get(name).writes) <= set(MINED)
    with pytest.raises(ValueError, match="unknown outputs"):
        Generator(object, lambda *a, **k: {}, writes=("captions",))
    d = _mined(tmp_path)
    check_written("negclip", GENERATORS.get("negclip"), d)
    (d / "hard_images.npy").unlink()
    write_json(d / "positives.json", [])
    with pytest.raises(ValueError, match="wrote no hard_images; also undeclared positives"):
        check_written("negclip", GENERATORS.get("negclip"), d)


def test_a_method_without_a_paper_is_an_error_naming_it():
    from vlcomp.reporting.collect import methods_of

    bare = {"methods": {"m": {"generator": "negclip", "loss": "clip"}}}
    with pytest.raises(ValueError, match=r"methods\.m\.paper is not set"):
        method_config(bare, "m")
    with pytest.raises(ValueError, match=r"methods\.m\.paper is not set"):
        methods_of(bare, "aro")
    assert methods_of(PARAMS, "aro").order[1:] == ("plain", "neg", "frozen")
