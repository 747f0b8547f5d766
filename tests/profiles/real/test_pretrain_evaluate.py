"""Real profile: the base-model check and resolution (`vlcomp.profiles.real.pretrain`), pipeline checkpoints as zoo
scorers and the evaluation settings (`vlcomp.profiles.real.evaluate`), the benchmark check (`vlcomp.eval.inputs`)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from vlcomp.eval.inputs import annotation_files, build_manifest
from vlcomp.models.factory import ModelSpec, create_model, save_checkpoint
from vlcomp.profiles.real import pretrain
from vlcomp.profiles.real.evaluate import checkpoint_scorer, checkpoint_spec, evaluation_settings
from vlcomp.profiles.real.pretrain import check_base_spec, resolve_base


@pytest.fixture
def no_model_creation(monkeypatch):
    """Any model creation or weight download fails the test: the checks must come first."""
    import open_clip

    def refuse(*args, **kwargs):
        raise AssertionError(f"a model was created / weights fetched: {args} {kwargs}")

    monkeypatch.setattr(pretrain, "create_model", refuse)
    monkeypatch.setattr(open_clip, "create_model", refuse)
    monkeypatch.setattr(open_clip, "create_model_and_transforms", refuse)
    monkeypatch.setattr(open_clip.pretrained, "download_pretrained", refuse)
    monkeypatch.setattr(open_clip.factory, "download_pretrained", refuse, raising=False)


# ----------------------------------------------------------------------------------------------- check_base_spec


def test_plain_vit_b32_with_openai_weights_names_the_quickgelu_fix(no_model_creation):
    spec = ModelSpec("ViT-B-32", "openai", "open_clip", 77)
    with pytest.raises(ValueError, match="set clip.arch: ViT-B-32-quickgelu"):
        check_base_spec(spec)
    with pytest.raises(ValueError, match="ViT-B-32-quickgelu"):  # resolve_base checks before creating anything
        resolve_base(spec)


def test_quickgelu_arch_with_openai_weights_passes(no_model_creation):
    check_base_spec(ModelSpec("ViT-B-32-quickgelu", "openai", "open_clip", 77))


def test_weights_file_skips_the_tag_check(no_model_creation):
    check_base_spec(ModelSpec("toy-vit-p8", "/somewhere/base.pt", "world", 32))
    check_base_spec(ModelSpec("ViT-B-32", "base.pth", "open_clip", 77))


@pytest.mark.parametrize("weights", [None, ""])
def test_weights_must_be_given(no_model_creation, weights):
    with pytest.raises(ValueError, match="clip.weights: the real profile starts from pretrained weights"):
        check_base_spec(ModelSpec("ViT-B-32-quickgelu", weights, "open_clip", 77))


def test_unknown_architecture(no_model_creation):
    with pytest.raises(ValueError, match="clip.arch='ViT-Z-99': not an open_clip architecture"):
        check_base_spec(ModelSpec("ViT-Z-99", "openai", "open_clip", 77))


def test_unknown_tag_lists_the_tags(no_model_creation):
    with pytest.raises(ValueError) as e:
        check_base_spec(ModelSpec("ViT-B-32-quickgelu", "not-a-tag", "open_clip", 77))
    assert "clip.weights='not-a-tag'" in str(e.value)
    assert "tags:" in str(e.value) and "openai" in str(e.value)


# ----------------------------------------------------------------------------------------------- resolve_base


def toy_state(seed: int) -> dict[str, torch.Tensor]:
    return create_model(ModelSpec("toy-vit-p8"), init_seed=seed).state_dict()


def test_resolve_base_loads_a_state_dict_file(tmp_path):
    sd = toy_state(3)
    path = tmp_path / "base.pt"
    torch.save({"state_dict": sd}, path)
    model = resolve_base(ModelSpec("toy-vit-p8", str(path), "world", 32))
    assert not model.training
    got = model.state_dict()
    assert set(got) == set(sd)
    for k, v in sd.items():
        assert torch.equal(got[k], v), k
    other = toy_state(0)  # sanity: the file's weights, not resolve_base's own init (seed 0)
    assert any(not torch.equal(other[k], v) for k, v in sd.items())


def test_resolve_base_file_with_a_wrong_key_names_the_file(tmp_path):
    sd = dict(toy_state(3))
    sd["not_a_parameter"] = torch.zeros(2)
    path = tmp_path / "wrong.pt"
    torch.save({"state_dict": sd}, path)
    with pytest.raises(ValueError, match=r"wrong\.pt.*not_a_parameter"):
        resolve_base(ModelSpec("toy-vit-p8", str(path), "world", 32))


def test_resolve_base_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"absent\.pt"):
        resolve_base(ModelSpec("toy-vit-p8", str(tmp_path / "absent.pt"), "world", 32))


def test_resolve_base_expands_environment_variables(tmp_path, monkeypatch):
    from vlcomp.doctor import check_real_pipeline

    sd = toy_state(3)
    torch.save({"state_dict": sd}, tmp_path / "base.pt")
    monkeypatch.setenv("VLCOMP_TEST_CKPT", str(tmp_path))
    spec = {"arch": "toy-vit-p8", "weights": "$VLCOMP_TEST_CKPT/base.pt", "tokenizer": "world", "context_length": 32}
    doctor_says = {f.item: f.status for f in check_real_pipeline({"world": {}, "clip": spec})}
    assert doctor_says["clip"] == "ok"
    model = resolve_base(ModelSpec(**spec))
    assert all(torch.equal(model.state_dict()[k], v) for k, v in sd.items())


# ----------------------------------------------------------------------------------------------- checkpoints


@pytest.fixture(scope="module")
def ckpt_dir(tmp_path_factory) -> tuple[Path, torch.nn.Module]:
    d = tmp_path_factory.mktemp("models") / "base"
    d.mkdir()
    model = create_model(ModelSpec("toy-vit-p8"), init_seed=3).eval()
    save_checkpoint(model, d / "model.pt")
    (d / "model.json").write_text(json.dumps({"arch": "toy-vit-p8", "tokenizer": "world", "context_length": 32,
                                              "trained_on": "test"}))
    return d, model


def test_checkpoint_spec(ckpt_dir):
    d, _ = ckpt_dir
    assert checkpoint_spec(d) == {"family": "openclip", "arch": "toy-vit-p8", "weights": str(d / "model.pt"),
                                  "openai_derived": False, "tokenizer": "world", "context_length": 32}


def test_checkpoint_scorer_encodes_like_the_model_itself(ckpt_dir):
    from vlcomp.models.encode import encode_texts
    from vlcomp.text.tokenizer import get_tokenizer

    d, model = ckpt_dir
    scorer = checkpoint_scorer("base", d, "cpu")
    texts = ["a red cube", "two blue spheres left of a green cone"]
    got = scorer.encode_texts(texts)
    with torch.no_grad():
        expected = encode_texts(model, get_tokenizer("world", "toy-vit-p8", 32), texts)
    assert got.shape == expected.shape == (2, expected.shape[1])
    torch.testing.assert_close(got, expected, atol=1e-6, rtol=0)
    # the loaded weights are the saved ones
    sd = model.state_dict()
    assert all(torch.equal(scorer.model.state_dict()[k].cpu(), v) for k, v in sd.items())


@pytest.mark.parametrize("missing", ["arch", "tokenizer", "context_length"])
def test_checkpoint_spec_missing_field_names_the_file(tmp_path, missing):
    meta = {"arch": "toy-vit-p8", "tokenizer": "world", "context_length": 32}
    del meta[missing]
    (tmp_path / "model.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match=rf"model\.json: missing field '{missing}'"):
        checkpoint_spec(tmp_path)


# ----------------------------------------------------------------------------------------------- evaluation_settings


@pytest.mark.parametrize("settings", [{}, {"evaluate": {}}, {"evaluate": {"benchmarks": []}},
                                      {"evaluate": None}])
def test_evaluation_settings_need_benchmarks(settings):
    with pytest.raises(ValueError, match="evaluate.benchmarks"):
        evaluation_settings(settings)


def test_evaluation_settings_expand_inputs_and_default_the_spacy_model(monkeypatch):
    monkeypatch.setenv("VLCOMP_TEST_DATA", "/data/x")
    params = {"real_evaluate": {"device": "cpu"}, "evaluate": {"benchmarks": ["sugarcrepe", "vg_relation"]},
              "real_inputs": {"sugarcrepe_dir": "$VLCOMP_TEST_DATA/sugarcrepe/data",
                               "valse_images": {"swig": "${VLCOMP_TEST_DATA}/swig"}, "order_seeds": [0, 3]},
              "nlp": {"spacy_model": "en_test_model"}}
    benchmarks, inputs, device = evaluation_settings(params)
    assert benchmarks == ["sugarcrepe", "vg_relation"]
    assert device == "cpu"
    assert inputs == {"sugarcrepe_dir": "/data/x/sugarcrepe/data", "valse_images": {"swig": "/data/x/swig"},
                      "order_seeds": [0, 3], "spacy_model": "en_test_model"}
    assert params["real_inputs"]["sugarcrepe_dir"] == "$VLCOMP_TEST_DATA/sugarcrepe/data"  # input not mutated


def test_evaluation_settings_keep_an_explicit_spacy_model():
    params = {"real_evaluate": {"device": "cpu"}, "evaluate": {"benchmarks": ["swap"]},
              "real_inputs": {"spacy_model": "mine"}, "nlp": {"spacy_model": "other"}}
    assert evaluation_settings(params)[1] == {"spacy_model": "mine"}


def test_evaluation_settings_device_auto():
    _, _, device = evaluation_settings({"evaluate": {"benchmarks": ["swap"]}})
    assert device == ("cuda" if torch.cuda.is_available() else "cpu")


# ----------------------------------------------------------------------------------------------- check_benchmarks


def write_png(path: Path, colour=(10, 20, 30)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.full((8, 8, 3), colour, dtype=np.uint8)).save(path, format="PNG")
    return path


@pytest.fixture
def bench(tmp_path) -> dict:
    """SugarCrepe (2 categories, 3 cases over 2 images) and COCO Karpathy test (2 images, 3 captions)."""
    sc, val2017 = tmp_path / "sugarcrepe" / "data", tmp_path / "coco" / "val2017"
    write_png(val2017 / "000000000001.jpg")
    write_png(val2017 / "000000000002.jpg")
    sc.mkdir(parents=True)

    def case(fn, pos, neg):
        return {"filename": fn, "caption": pos, "negative_caption": neg}

    (sc / "replace_obj.json").write_text(json.dumps({"0": case("000000000001.jpg", "a dog", "a cat"),
                                                     "7": case("000000000002.jpg", "a bus", "a car")}))
    (sc / "swap_obj.json").write_text(json.dumps({"3": case("000000000001.jpg", "a dog near a cat",
                                                            "a cat near a dog")}))
    images = tmp_path / "coco" / "images"
    write_png(images / "val2014" / "a.jpg")
    write_png(images / "val2014" / "b.jpg")
    karpathy = tmp_path / "coco" / "coco_karpathy_test.json"
    karpathy.write_text(json.dumps([{"image": "val2014/a.jpg", "caption": ["A dog.", "a DOG running"]},
                                    {"image": "val2014/b.jpg", "caption": ["two cats"]}]))
    return {"sugarcrepe_dir": str(sc), "coco_val2017_images": str(val2017),
            "sugarcrepe_categories": ["replace_obj", "swap_obj"],
            "coco_karpathy_test": str(karpathy), "coco_images": str(images)}


def test_check_benchmarks_counts_items_and_images(bench):
    manifest = build_manifest(["sugarcrepe", "coco_retrieval"], bench, Path("/nonexistent"), root_relative=False)
    sc, coco = manifest["benchmarks"]["sugarcrepe"], manifest["benchmarks"]["coco_retrieval"]
    assert (sc["n_items"], sc["n_images"]) == (3, 2)
    assert (coco["n_items"], coco["n_images"]) == (3, 2)  # retrieval: items are the captions
    assert sc["tables"] == ["sugarcrepe"]
    assert set(coco["tables"]) == {"coco_retrieval_i2t", "coco_retrieval_t2i"}
    sha = manifest["annotation_sha256"]
    sc_dir = Path(bench["sugarcrepe_dir"])
    assert sha == {
        "sugarcrepe_dir/replace_obj.json": hashlib.sha256((sc_dir / "replace_obj.json").read_bytes()).hexdigest(),
        "sugarcrepe_dir/swap_obj.json": hashlib.sha256((sc_dir / "swap_obj.json").read_bytes()).hexdigest(),
        "coco_karpathy_test": hashlib.sha256(Path(bench["coco_karpathy_test"]).read_bytes()).hexdigest()}


def test_check_benchmarks_missing_image_is_found_up_front(bench, monkeypatch):
    from vlcomp.eval import inputs as eval_inputs

    Path(bench["coco_val2017_images"], "000000000002.jpg").unlink()
    hashed = []
    monkeypatch.setattr(eval_inputs, "sha256_file", lambda p: hashed.append(p) or "x")
    with pytest.raises(FileNotFoundError, match="000000000002.jpg") as e:
        build_manifest(["sugarcrepe", "coco_retrieval"], bench, Path("/nonexistent"), root_relative=False)
    assert "1 of 2" in str(e.value)
    assert hashed == []  # nothing hashed (nor written) before the failure


def test_check_benchmarks_bad_record_names_the_file(bench):
    sc = Path(bench["sugarcrepe_dir"])
    (sc / "swap_obj.json").write_text(json.dumps({"3": {"filename": "000000000001.jpg", "caption": "a dog"}}))
    with pytest.raises(ValueError, match=r"swap_obj\.json.*negative_caption"):
        build_manifest(["sugarcrepe"], bench, Path("/nonexistent"), root_relative=False)


def test_check_benchmarks_unknown_name(bench):
    with pytest.raises(ValueError, match="unknown benchmark 'nope'"):
        build_manifest(["nope"], bench, Path("/nonexistent"), root_relative=False)


def test_annotation_files_walks_files_dirs_and_mappings(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "b.json").write_text("{}")
    (d / "a.json").write_text("{}")
    (d / "notes.txt").write_text("x")
    imgs = tmp_path / "imgs"
    imgs.mkdir()
    (imgs / "meta.json").write_text("{}")
    f = tmp_path / "excl.txt"
    f.write_text("near\n")
    inputs = {"some_dir": str(d), "coco_images": str(imgs), "aro_relation_exclusions": str(f),
              "gone": str(tmp_path / "absent.json"), "empty": "", "order_seeds": 5,
              "vlchecklist_files": {"vg": {"annotations": str(d / "a.json"), "images": str(imgs)}}}
    assert annotation_files(inputs) == {
        "some_dir/a.json": str(d / "a.json"), "some_dir/b.json": str(d / "b.json"),
        "some_dir/notes.txt": str(d / "notes.txt"),
        "aro_relation_exclusions": str(f), "vlchecklist_files.vg.annotations": str(d / "a.json")}
