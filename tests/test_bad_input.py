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
from vlcomp.methods import method_config, variant_config
from vlcomp.train.finetune import finetune_config
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
    bad = {**params, "variants": {"x-s0": {"method": "nope", "base": "b0", "seed": 0, "generator": "negclip", "selection": "negclip-b0",
                                         "mined": "negclip-b0", "mined_positives": "negclip-b0"}}}
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        variant_config(bad, "x-s0")


def test_unknown_loss_is_named(params):
    bad = {**params, "methods": {"m": {"paper": "aro", "loss": "contrastive2", "generator": "negclip"}}}
    with pytest.raises(ValueError, match="methods.m.loss='contrastive2'"):
        method_config(bad, "m")


def test_unknown_generator_is_named(params):
    bad = {**params, "methods": {"m": {"paper": "aro", "loss": "clip", "generator": "tsvlc_rules"}}}
    with pytest.raises(ValueError, match="methods.m.generator='tsvlc_rules' is not a registered generator"):
        method_config(bad, "m")


def test_batch_the_generator_cannot_feed_is_named(params):
    bad = {**params, "methods": {"m": {"paper": "aro", "loss": "clip", "generator": "negclip", "batch": {"positives": 2}}}}
    with pytest.raises(ValueError, match=r"methods.m.batch needs \['positives'\] from generator 'negclip', which does not write"):
        method_config(bad, "m")


@pytest.mark.parametrize(("batch", "message"), [
    ({"rows": "some"}, r"methods.m.batch.rows='some': must be one of"),
    ({"negatives": -1}, r"methods.m.batch.negatives=-1: must be an int >= 0"),
    ({"negatvies": 1}, r"unknown key\(s\) methods.m.batch.negatvies"),
])
def test_bad_batch_composition_is_named(params, batch, message):
    bad = {**params, "methods": {"m": {"paper": "aro", "loss": "clip", "generator": "negclip", "batch": batch}}}
    with pytest.raises(ValueError, match=message):
        method_config(bad, "m")


def test_bad_model_modifier_and_loss_weight_are_named(params):
    bad = {**params, "methods": {"m": {"paper": "aro", "loss": "clip", "generator": "negclip", "tuning": {"freeze": ["audio"]}}}}
    with pytest.raises(ValueError, match=r"methods.m.tuning.freeze: \['audio'\] are not towers"):
        method_config(bad, "m")
    bad = {**params, "methods": {"m": {"paper": "aro", "loss": "clip", "generator": "negclip", "loss_weights": {"contrastive": 2}}}}
    with pytest.raises(ValueError, match="methods.m.loss_weights: 'contrastive': 2; expected a \\*_loss term"):
        method_config(bad, "m")


def test_variant_generator_must_match_its_methods(params):
    bad = {**params, "variants": {"x-s0": {"method": "negclip", "base": "b0", "seed": 0, "generator": "other", "selection": "negclip-b0",
                                         "mined": "negclip-b0", "mined_positives": "negclip-b0"}}}
    with pytest.raises(ValueError, match="variants.x-s0.generator='other' but methods.negclip.generator='negclip'"):
        variant_config(bad, "x-s0")


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


# --------------------------------------------------------------------------- the evaluate stage


@pytest.fixture(scope="module")
def eval_workspace(tmp_path_factory):
    """A tiny world, its ARO + Karpathy twins and manifest (benchmarks stage), a toy checkpoint, a params file."""
    from vlcomp.models.factory import ModelSpec, create_model, save_checkpoint
    from vlcomp.profiles.toy.benchmarks import build_benchmarks
    from vlcomp.world import world_configs
    from vlcomp.world.generate import generate_world

    root = tmp_path_factory.mktemp("evalws")
    params = load_params(REPO / "params.yaml")
    params["benchmarks"] = {"order_seeds": 1, "shuffle_seeds": 1,
                            "twins": {"aro": {"vga_min_count": 1}, "karpathy": {}}}
    params["evaluate"] = {"batch_size": 64, "benchmarks": ["vg_relation", "vg_attribution", "coco_retrieval"]}
    wcfg, ccfg, specs = world_configs(params)
    style = {s.name: s.style for s in specs}
    generate_world([SplitSpec(n, k, style[n]) for n, k in (("vg_test", 40), ("coco_test", 8), ("flickr_test", 8))],
                   wcfg, ccfg, 0, root / "world")
    (root / "bench").mkdir()
    build_benchmarks(params, root / "world", root / "bench")
    ckpt = root / "ckpt"
    ckpt.mkdir()
    save_checkpoint(create_model(ModelSpec("toy-vit-p8"), init_seed=0), ckpt / "model.pt")
    (ckpt / "model.json").write_text(json.dumps({"arch": "toy-vit-p8", "tokenizer": "world", "context_length": 32}))
    (root / "params.yaml").write_text(yaml.safe_dump(params))
    return root


def _evaluate(ws: Path, bench: Path, out: Path, params: Path | None = None):
    env = {**os.environ, "VLCOMP_TRACKING": "off", "VLCOMP_THREADS": "1"}
    return subprocess.run([sys.executable, str(REPO / "stages" / "evaluate.py"), "--params", str(params or ws / "params.yaml"),
                           "--stage", "evaluate_base@b0", "--model", "clip-b0", "--base", "b0",
                           "--checkpoint", str(ws / "ckpt"),
                           "--benchmarks", str(bench), "--out", str(out)], capture_output=True, text=True, env=env)


@pytest.mark.slow
def test_evaluate_stage_bad_inputs_stop_before_scoring_and_keep_the_old_result(eval_workspace, tmp_path):
    import shutil

    ws = eval_workspace
    out = tmp_path / "metrics" / "clip"
    ok = _evaluate(ws, ws / "bench", out)
    assert ok.returncode == 0, ok.stderr
    before = (out / "metrics.json").read_bytes()
    assert json.loads(before)["aro/vg_relation/macro_acc"] >= 0

    # a twin record that does not match its format: the file and the record are named
    bad = tmp_path / "bench_bad_record"
    shutil.copytree(ws / "bench", bad)
    vgr = bad / "aro" / "visual_genome_relation.json"
    records = json.loads(vgr.read_text())
    del records[3]["true_caption"]
    vgr.write_text(json.dumps(records))
    # a missing image
    bad_image = tmp_path / "bench_missing_image"
    shutil.copytree(ws / "bench", bad_image)
    victim = sorted((bad_image / "karpathy" / "coco_images").iterdir())[2]
    victim.unlink()
    # a manifest pointing at a missing file
    bad_manifest = tmp_path / "bench_missing_file"
    shutil.copytree(ws / "bench", bad_manifest)
    m = json.loads((bad_manifest / "manifest.json").read_text())
    m["inputs"]["aro_vg_attribution"] = "aro/nowhere.json"
    (bad_manifest / "manifest.json").write_text(json.dumps(m))
    # an unknown benchmark name in params
    p = yaml.safe_load((ws / "params.yaml").read_text())
    p["evaluate"]["benchmarks"] = ["vg_relation", "vg_relashun"]
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text(yaml.safe_dump(p))

    cases = [(bad, None, r"visual_genome_relation\.json: record 3: missing field 'true_caption'"),
             (bad_image, None, rf"image .*{victim.name} not found"),
             (bad_manifest, None, r"aro_vg_attribution.*nowhere\.json not found"),
             (ws / "bench", unknown, r"evaluate\.benchmarks: unknown benchmark 'vg_relashun'")]
    import re

    for bench, params, message in cases:
        proc = _evaluate(ws, bench, out, params)
        assert proc.returncode == 2, proc.stderr
        assert re.search(message, proc.stderr), (message, proc.stderr[-500:])
        assert "Traceback" not in proc.stderr
        assert (out / "metrics.json").read_bytes() == before  # nothing partial, nothing lost
        assert sorted(p.name for p in out.parent.iterdir()) == ["clip"]  # no temp folder left behind
