"""Bad input stops with an error naming the parameter, file or record, and leaves no partial stage output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from vlcomp.config import load_params
from vlcomp.train.finetune import finetune_config
from vlcomp.train.recipes import method_config, variant_config
from vlcomp.world import Split
from vlcomp.world.captions import CaptionConfig
from vlcomp.world.generate import SplitSpec, generate_split, write_split
from vlcomp.world.scene import WorldConfig

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def params() -> dict:
    return load_params(REPO / "params.yaml")


@pytest.fixture
def tiny_split(tmp_path) -> Path:
    images, scenes, ann, _ = generate_split(SplitSpec("coco_test", 4, "coco"), WorldConfig(), CaptionConfig(), 0)
    write_split(tmp_path / "world" / "coco_test", images, scenes, ann)
    return tmp_path / "world"


def test_unknown_variant_is_named(params):
    with pytest.raises(ValueError, match="unknown variant 'negclip-s9'"):
        variant_config(params, "negclip-s9")


def test_variant_with_unknown_method_is_named(params):
    bad = {**params, "variants": {"x-s0": {"method": "nope", "seed": 0}}}
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        variant_config(bad, "x-s0")


def test_unknown_loss_is_named(params):
    bad = {**params, "methods": {"m": {"loss": "contrastive2"}}}
    with pytest.raises(ValueError, match="methods.m.loss='contrastive2'"):
        method_config(bad, "m")


def test_negative_learning_rate_is_named(params):
    with pytest.raises(ValueError, match=r"finetune.lr_grid: -0.001"):
        finetune_config({**params["finetune"], "lr_grid": [-0.001]})


def test_unknown_params_key_is_named(params):
    with pytest.raises(ValueError, match="finetune.lr_gird"):
        finetune_config({**params["finetune"], "lr_gird": [0.1]})


def test_missing_image_file_is_named(tiny_split):
    (tiny_split / "coco_test" / "images.npy").unlink()
    with pytest.raises(FileNotFoundError, match="images.npy"):
        _ = Split(tiny_split, "coco_test").images


def test_corrupt_image_file_is_named(tiny_split):
    path = tiny_split / "coco_test" / "images.npy"
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(ValueError, match=r"images.npy: corrupt array file"):
        _ = Split(tiny_split, "coco_test").images


def test_wrong_image_array_is_named(tiny_split):
    np.save(tiny_split / "coco_test" / "images.npy", np.zeros((4, 8, 8), dtype=np.float32))
    with pytest.raises(ValueError, match=r"images.npy: dtype float32, expected uint8"):
        _ = Split(tiny_split, "coco_test").images


def test_broken_caption_record_is_named(tiny_split):
    path = tiny_split / "coco_test" / "captions.json"
    records = json.loads(path.read_text())
    del records[2]["caption"]
    path.write_text(json.dumps(records))
    with pytest.raises(ValueError, match=r"captions.json: record 2: missing field 'caption'"):
        Split(tiny_split, "coco_test").captions()


def test_truncated_caption_file_is_named(tiny_split):
    path = tiny_split / "coco_test" / "captions.json"
    path.write_text(path.read_text()[:50])
    with pytest.raises(ValueError, match=r"captions.json: not valid JSON"):
        Split(tiny_split, "coco_test").captions()


def test_stage_exits_cleanly_and_writes_nothing(tmp_path, params):
    """A stage given an unknown variant exits 2 with one line naming it; its output directory never appears."""
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    out = tmp_path / "models" / "finetune" / "nope"
    env = {**os.environ, "VLCOMP_TRACKING": "off"}
    proc = subprocess.run([sys.executable, str(REPO / "stages" / "finetune.py"), "--variant", "nope", "--world", "w",
                           "--base", "b", "--mined", "m", "--lr-dir", "l", "--out", str(out)],
                          cwd=tmp_path, env=env, capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert "unknown variant 'nope'" in proc.stderr
    assert not out.exists()
