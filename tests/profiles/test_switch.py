"""`python -m vlcomp.profiles`: params.yaml generated from profiles/common.yaml + a profile overlay (resolution,
derived variants, switching, --check); the repository's layers; `vlcomp.doctor` on the real profile's fine-tuning
inputs and `--profile real` with a toy params.yaml."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from PIL import Image

from vlcomp import doctor
from vlcomp.config import profile_params, read_layer, resolve_layers
from vlcomp.profiles import switch as profile

REPO = Path(__file__).resolve().parents[2]

COMMON = b"""# shared
root_seed: 0
mine:
  g: {split: s}
methods:
  m: {generator: g, loss: clip}
seeds:
  m: [0, 1]
"""
TOY_LAYER = b"# toy\nprofile: toy\nworld: {size: 4}\n"
REAL_LAYER = b"# real\nprofile: real\nroot_seed: 1\nseeds: {m: [0]}\n"


@pytest.fixture
def repo(tmp_path) -> Path:
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "common.yaml").write_bytes(COMMON)
    (tmp_path / "profiles" / "toy.yaml").write_bytes(TOY_LAYER)
    (tmp_path / "profiles" / "real.yaml").write_bytes(REAL_LAYER)
    (tmp_path / "params.yaml").write_text(profile.rendered("toy", tmp_path))
    return tmp_path


def rendered(repo: Path, name: str) -> bytes:
    return profile.rendered(name, repo).encode()


# ----------------------------------------------------------------------------------------------- resolution


def test_resolution_merges_the_layers_and_derives_variants(repo):
    toy = profile_params("toy", repo)
    assert toy["profile"] == "toy" and toy["root_seed"] == 0 and toy["world"] == {"size": 4}
    assert toy["variants"] == {"m-b0s0": {"method": "m", "base": "b0", "seed": 0, "generator": "g", "mined": "g-b0", "mined_positives": "g-b0", "selection": "m-b0", "benchmarks": None},
                               "m-b0s1": {"method": "m", "base": "b0", "seed": 1, "generator": "g", "mined": "g-b0", "mined_positives": "g-b0", "selection": "m-b0", "benchmarks": None}}
    assert toy["bases"] == {"b0": {"seed": 0}} and toy["mining"] == {"g-b0": {"generator": "g", "base": "b0", "split": "s",
                                                                                   "input": "models/base/b0"}}
    assert toy["parsing"] == {"s": {"mined_by": ["g"]}}
    assert toy["selections"] == {"m-b0": {"method": "m", "base": "b0", "generator": "g", "mined": "g-b0",
                                                 "mined_positives": "g-b0"}}
    paper = profile_params("real", repo)
    assert paper["root_seed"] == 1 and "world" not in paper  # the overlay only changes what it names
    assert paper["variants"] == {"m-b0s0": {"method": "m", "base": "b0", "seed": 0, "generator": "g",
                                            "mined": "g-b0", "mined_positives": "g-b0", "selection": "m-b0", "benchmarks": None}}


def test_whole_chain_seeds_derive_one_chain_per_base_seed(repo):
    """base_seeds x seeds: every method's fine-tuning seeds on every chain, each chain with its own base and mined
    data; the LR sweep on the first chain only (lr_selection: first_chain, the default) or on every chain."""
    p = resolve_layers(profile_params("toy", repo), {"base_seeds": [2, 5], "_replace": ["seeds"], "seeds": {"m": [0]}})
    assert p["bases"] == {"b2": {"seed": 2}, "b5": {"seed": 5}}
    assert p["mining"] == {"g-b2": {"generator": "g", "base": "b2", "split": "s", "input": "models/base/b2"},
                           "g-b5": {"generator": "g", "base": "b5", "split": "s", "input": "models/base/b5"}}
    with pytest.raises(ValueError, match=r"mine.g.split=None must name the world split"):
        resolve_layers({**p, "mine": {"g": {}}})
    assert p["selections"] == {"m-b2": {"method": "m", "base": "b2", "generator": "g", "mined": "g-b2",
                                                 "mined_positives": "g-b2"}}
    assert p["variants"] == {
        "m-b2s0": {"method": "m", "base": "b2", "seed": 0, "generator": "g", "mined": "g-b2", "mined_positives": "g-b2",
                   "selection": "m-b2", "benchmarks": None},
        "m-b5s0": {"method": "m", "base": "b5", "seed": 0, "generator": "g", "mined": "g-b5", "mined_positives": "g-b5",
                   "selection": "m-b2", "benchmarks": None}}
    per = resolve_layers(p, {"lr_selection": "per_chain"})
    assert list(per["selections"]) == ["m-b2", "m-b5"]
    assert [v["selection"] for v in per["variants"].values()] == ["m-b2", "m-b5"]
    with pytest.raises(ValueError, match="lr_selection='every'"):
        resolve_layers(p, {"lr_selection": "every"})
    from vlcomp.config import chain_seed
    from vlcomp.seeding import derive_seed

    assert chain_seed(p, "b5") == derive_seed(0, "base", 5) != chain_seed(p, "b2")
    with pytest.raises(ValueError, match="unknown base 'b7'"):
        chain_seed(p, "b7")
    with pytest.raises(ValueError, match=r"base_seeds=\[1, 1\]"):
        resolve_layers(p, {"base_seeds": [1, 1]})
    with pytest.raises(ValueError, match=r"methods\.m\.generator='g' has no mine\.g section"):
        resolve_layers({**p, "mine": {}})


def test_rendering_is_the_resolution_and_starts_with_the_header(repo):
    text = profile.rendered("toy", repo)
    assert text.startswith("# GENERATED by `python -m vlcomp.profiles toy` from profiles/common.yaml + profiles/toy.yaml")
    assert yaml.safe_load(text) == profile_params("toy", repo)
    assert list(yaml.safe_load(text))[:2] == ["profile", "root_seed"]  # profile first, sections in SECTION_ORDER


def test_resolving_a_resolved_file_again_changes_nothing(repo):
    toy = profile_params("toy", repo)
    assert resolve_layers(toy) == toy
    smaller = resolve_layers(toy, {"_replace": ["seeds"], "seeds": {"m": [1]}})  # the smoke overlay's way
    assert smaller["variants"] == {"m-b0s1": {"method": "m", "base": "b0", "seed": 1, "generator": "g", "mined": "g-b0", "mined_positives": "g-b0", "selection": "m-b0", "benchmarks": None}}


@pytest.mark.parametrize("seeds,message", [
    ({"nope": [0]}, r"seeds\.nope: no such method"),
    ({"m": []}, r"seeds\.m=\[\] must be a non-empty list"),
    ({"m": [0, 0]}, r"seeds\.m=\[0, 0\] must be a non-empty list of distinct"),
    ({"m": [-1]}, r"seeds\.m=\[-1\]"),
    ({"m": [True]}, r"seeds\.m=\[True\]"),
    ([0, 1], r"seeds=\[0, 1\] must map each method"),
])
def test_bad_seeds_name_the_parameter(seeds, message):
    with pytest.raises(ValueError, match=message):
        resolve_layers({"methods": {"m": {"generator": "g"}}, "seeds": seeds})


def test_a_seeded_method_needs_a_generator():
    with pytest.raises(ValueError, match=r"methods\.m\.generator must name a generator \(seeds\.m needs it\)"):
        resolve_layers({"methods": {"m": {"loss": "clip"}}, "seeds": {"m": [0]}})


def test_common_layer_must_not_set_the_profile(repo):
    (repo / "profiles" / "common.yaml").write_bytes(COMMON + b"profile: toy\n")
    with pytest.raises(ValueError, match=r"common\.yaml: must not set `profile`"):
        profile_params("toy", repo)


def test_missing_or_broken_layers_name_the_file(repo, tmp_path):
    (repo / "profiles" / "common.yaml").write_bytes(b"base: [unclosed\n")
    with pytest.raises(ValueError, match=r"common\.yaml: not valid YAML"):
        profile_params("toy", repo)
    (repo / "profiles" / "common.yaml").write_bytes(b"- a list\n")
    with pytest.raises(ValueError, match=r"common\.yaml: expected a mapping"):
        profile_params("toy", repo)
    (repo / "profiles" / "common.yaml").unlink()
    with pytest.raises(FileNotFoundError, match=r"common\.yaml: params layer not found"):
        profile_params("toy", repo)
    with pytest.raises(ValueError, match="profile 'huge'"):
        profile_params("huge", repo)
    assert read_layer(_empty(tmp_path)) == {}


def _empty(tmp_path: Path) -> Path:
    (tmp_path / "empty.yaml").write_text("# nothing\n")
    return tmp_path / "empty.yaml"


# ----------------------------------------------------------------------------------------------- switching


def test_active_profile(repo):
    assert profile.active(repo) == "toy"


def test_active_is_none_without_params_or_when_edited_or_stale(repo):
    (repo / "params.yaml").write_bytes(rendered(repo, "toy") + b"# my edit\n")
    assert profile.active(repo) is None
    (repo / "params.yaml").write_bytes(rendered(repo, "toy"))
    (repo / "profiles" / "toy.yaml").write_bytes(TOY_LAYER + b"pretrain: {lr: 1}\n")  # a layer edited, not rerendered
    assert profile.active(repo) is None
    (repo / "params.yaml").unlink()
    assert profile.active(repo) is None


def test_switch_to_real_and_back(repo):
    assert profile.switch("real", repo) is None
    assert (repo / "params.yaml").read_bytes() == rendered(repo, "real")
    assert profile.active(repo) == "real"
    assert profile.switch("toy", repo) is None
    assert (repo / "params.yaml").read_bytes() == rendered(repo, "toy")
    assert profile.active(repo) == "toy"
    assert not (repo / "params.yaml.bak").exists()
    assert sorted(p.name for p in repo.iterdir()) == ["params.yaml", "profiles"]  # no temp file left behind


def test_switch_to_the_active_profile_is_a_no_op(repo):
    before = (repo / "params.yaml").read_bytes()
    assert profile.switch("toy", repo) is None
    assert (repo / "params.yaml").read_bytes() == before


def test_switch_without_params_yaml_creates_it(repo):
    (repo / "params.yaml").unlink()
    profile.switch("real", repo)
    assert (repo / "params.yaml").read_bytes() == rendered(repo, "real")


def test_switch_refuses_an_edited_params_yaml(repo):
    edited = rendered(repo, "toy").replace(b"seed: 0", b"seed: 7")
    (repo / "params.yaml").write_bytes(edited)
    with pytest.raises(ValueError, match=r"params\.yaml.*--force"):
        profile.switch("real", repo)
    assert (repo / "params.yaml").read_bytes() == edited
    assert not (repo / "params.yaml.bak").exists()


def test_switch_force_keeps_the_edited_file(repo):
    edited = rendered(repo, "toy").replace(b"seed: 0", b"seed: 7")
    (repo / "params.yaml").write_bytes(edited)
    backup = profile.switch("real", repo, force=True)
    assert backup == repo / "params.yaml.bak"
    assert backup.read_bytes() == edited
    assert (repo / "params.yaml").read_bytes() == rendered(repo, "real")
    assert profile.active(repo) == "real"


@pytest.mark.parametrize("content,message", [
    (b"profile: toy\nroot_seed: 1\n", "says profile: 'toy', expected 'real'"),
    (b"root_seed: 1\n", "says profile: None, expected 'real'"),
    (b"profile: real\nbase: [unclosed\n", "not valid YAML"),
    (b"profile: huge\n", "profile: 'huge', expected 'real'"),
])
def test_switch_refuses_a_broken_profile_file(repo, content, message):
    before = (repo / "params.yaml").read_bytes()
    (repo / "profiles" / "real.yaml").write_bytes(content)
    with pytest.raises(ValueError, match=message):
        profile.switch("real", repo)
    assert (repo / "params.yaml").read_bytes() == before


def test_main_prints_the_active_profile(repo, capsys):
    assert profile.main(["--root", str(repo)]) == 0
    assert capsys.readouterr().out.strip() == "params.yaml: profile toy"
    (repo / "params.yaml").write_bytes(rendered(repo, "real") + b"# edit\n")
    assert profile.main(["--root", str(repo)]) == 0
    out = capsys.readouterr().out
    assert "params.yaml: profile real" in out and "edited or stale" in out


def test_main_check(repo, capsys):
    assert profile.main(["--check", "--root", str(repo)]) == 0
    assert profile.main(["real", "--check", "--root", str(repo)]) == 1  # it is the toy profile
    (repo / "profiles" / "common.yaml").write_bytes(COMMON.replace(b"seed: 0", b"seed: 3"))
    assert profile.main(["--check", "--root", str(repo)]) == 1  # stale: the shared layer changed
    assert "python -m vlcomp.profiles toy" in capsys.readouterr().out
    assert (repo / "params.yaml").read_bytes() != rendered(repo, "toy")  # --check writes nothing


def test_main_switches(repo, capsys, monkeypatch):
    monkeypatch.chdir(repo)
    assert profile.main(["real"]) == 0
    assert (repo / "params.yaml").read_bytes() == rendered(repo, "real")
    assert "now the real profile" in capsys.readouterr().out
    assert profile.main([]) == 0
    assert capsys.readouterr().out.strip() == "params.yaml: profile real"


def test_main_edited_params_returns_2_then_force(repo, capsys):
    edited = rendered(repo, "toy") + b"# edit\n"
    (repo / "params.yaml").write_bytes(edited)
    assert profile.main(["real", "--root", str(repo)]) == 2
    assert "error:" in capsys.readouterr().err
    assert profile.main(["real", "--root", str(repo), "--force"]) == 0
    assert "params.yaml.bak" in capsys.readouterr().out
    assert (repo / "params.yaml.bak").read_bytes() == edited


def test_main_unknown_profile_is_an_argparse_error(repo, capsys):
    before = (repo / "params.yaml").read_bytes()
    with pytest.raises(SystemExit) as e:
        profile.main(["huge", "--root", str(repo)])
    assert e.value.code == 2
    assert (repo / "params.yaml").read_bytes() == before


# ----------------------------------------------------------------------------------------------- repository


def test_repository_params_yaml_is_the_rendered_toy_profile():
    assert (REPO / "params.yaml").read_text() == profile.rendered("toy", REPO), \
        "params.yaml is stale: run `python -m vlcomp.profiles toy`"
    assert profile.active(REPO) == "toy"


def test_repository_profiles_resolve_with_the_same_sections():
    toy, paper = profile_params("toy", REPO), profile_params("real", REPO)
    assert paper["profile"] == "real" and toy["profile"] == "toy"
    assert set(paper) == set(toy)
    # written once, in profiles/common.yaml; a profile may set only a method's budget and recipe: its length, LR grid,
    # batch, warm-up and weight decay (its corpus and hardware differ) and the benchmarks its rows are scored on
    schedule = ("epochs", "sweep_epochs", "lr_grid", "batch_size", "warmup_steps", "weight_decay", "benchmarks")

    def what(methods):
        return {m: {k: v for k, v in spec.items() if k not in schedule} for m, spec in methods.items()}

    assert what(toy["methods"]) == what(paper["methods"])
    # the real profile trains every method the toy does (one run each, the paper's), from one released base per
    # kind: one chain, b0 (released weights have no base seed)
    assert {v["method"] for v in paper["variants"].values()} == {v["method"] for v in toy["variants"].values()}
    assert list(paper["bases"]) == ["b0", "vit-b0", "cyclip-b0"]


def test_repository_overlays_hold_only_differences():
    """A profile layer never restates a value the shared layer already holds (it would hide a later edit there)."""
    common = read_layer(REPO / "profiles" / "common.yaml")

    def restated(a, b, path=""):
        if isinstance(a, dict) and isinstance(b, dict):
            return [p for k in a.keys() & b.keys() for p in restated(a[k], b[k], f"{path}.{k}".lstrip("."))]
        return [path] if a == b else []

    for name in ("toy", "real"):
        assert restated(common, read_layer(REPO / "profiles" / f"{name}.yaml")) == [], name


def test_smoke_overlay_resolves():
    smoke = profile_params("toy", REPO, read_layer(REPO / "params.smoke.yaml"))
    assert sorted(smoke["variants"]) == ["clip_ft-b0s0", "clip_ft-b1s0", "negclip-b0s0", "negclip-b1s0",
                                         "tsvlc_combined-b0s0", "tsvlc_vit_scratch_combined-vit-b0s0"]
    assert list(smoke["bases"]) == ["b0", "b1", "vit-b0", "rn32-b0"]  # rn32: a base no method starts from


# ----------------------------------------------------------------------------------------------- doctor


def write_png(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.zeros((6, 6, 3), dtype=np.uint8)).save(path, format="PNG")
    return path


@pytest.fixture
def real_data(tmp_path) -> dict:
    """A real-profile params dict over a per-caption file, two images and a weights file."""
    d = tmp_path / "data"
    write_png(d / "images" / "a.jpg")
    write_png(d / "images" / "b.jpg")
    (d / "train.json").write_text(json.dumps([{"image": "a.jpg", "caption": "a cat"},
                                              {"image": "b.jpg", "caption": "a dog"},
                                              {"image": "a.jpg", "caption": "the cat"}]))
    torch.save({"state_dict": {"w": torch.zeros(2)}}, d / "base.pt")
    return {"profile": "real",
            "world": {"image_size": 8, "splits": {"coco_train": {"annotations": str(d / "train.json"),
                                                                 "images": str(d / "images")}}},
            "clip": {"arch": "toy-vit-p8", "weights": str(d / "base.pt"), "tokenizer": "world",
                      "context_length": 32},
            "real_inputs": {"order_seeds": 5}}


def findings(params) -> dict[str, tuple[str, str]]:
    return {f.item: (f.status, f.detail) for f in doctor.check_real_pipeline(params)}


def test_check_paper_pipeline_all_ok(real_data):
    got = findings(real_data)
    assert got["world.splits.coco_train"] == ("ok", "2 images, 3 captions")
    assert got["clip"][0] == "ok" and "base.pt" in got["clip"][1]
    assert set(got) == {"world.splits.coco_train", "clip"}


def test_check_paper_pipeline_missing_image(real_data):
    Path(real_data["world"]["splits"]["coco_train"]["images"], "b.jpg").unlink()
    status, detail = findings(real_data)["world.splits.coco_train"]
    assert status == "missing"
    assert "b.jpg" in detail and "1 of 2" in detail


def test_check_paper_pipeline_malformed_caption_file(real_data):
    Path(real_data["world"]["splits"]["coco_train"]["annotations"]).write_text('[{"image": "a.jpg", "capt')
    status, detail = findings(real_data)["world.splits.coco_train"]
    assert status == "malformed" and "train.json" in detail


def test_check_paper_pipeline_unset_variable_and_bad_split(real_data, monkeypatch):
    monkeypatch.delenv("VLCOMP_TEST_UNSET", raising=False)
    real_data["world"]["splits"]["other"] = {"annotations": "$VLCOMP_TEST_UNSET/x.json", "images": "/x"}
    real_data["world"]["splits"]["bad"] = {"annotations": "x.json", "images": "/x", "typo": 1}
    got = findings(real_data)
    assert got["world.splits.other"][0] == "missing" and "environment variable not set" in got["world.splits.other"][1]
    assert got["world.splits.bad"][0] == "malformed" and "world.splits.bad.typo" in got["world.splits.bad"][1]


def test_check_paper_pipeline_no_splits(real_data):
    real_data["world"] = {"image_size": 8}
    assert findings(real_data)["world.splits"][0] == "missing"


def test_check_paper_pipeline_plain_vit_b32_with_openai(real_data):
    real_data["clip"] = {"arch": "ViT-B-32", "weights": "openai", "tokenizer": "open_clip", "context_length": 77}
    status, detail = findings(real_data)["clip"]
    assert status == "malformed" and "ViT-B-32-quickgelu" in detail


def test_check_paper_pipeline_missing_weights_file(real_data):
    Path(real_data["clip"]["weights"]).unlink()
    status, detail = findings(real_data)["clip"]
    assert status == "missing" and "base.pt" in detail


@pytest.fixture
def doctor_repo(tmp_path, real_data, monkeypatch) -> Path:
    """cwd = a repo whose params.yaml is the toy profile and whose real profile resolves to ``real_data``."""
    root = tmp_path / "repo"
    (root / "profiles").mkdir(parents=True)
    (root / "profiles" / "common.yaml").write_text("{}\n")
    (root / "profiles" / "toy.yaml").write_bytes(TOY_LAYER)
    (root / "profiles" / "real.yaml").write_text(yaml.safe_dump(real_data))
    (root / "params.yaml").write_text(profile.rendered("toy", root))
    monkeypatch.chdir(root)
    return root


def test_doctor_main_profile_real_reads_the_profile_file(doctor_repo, real_data, capsys):
    assert doctor.main(["--profile", "real", "-v"]) == 0
    out = capsys.readouterr().out
    assert "world.splits.coco_train: 2 images, 3 captions" in out
    assert "doctor (real): 3 fine, 0 problem(s)" in out  # order_seeds, the split, the CLIP spec


def test_doctor_main_profile_real_reports_a_missing_image(doctor_repo, real_data, capsys):
    Path(real_data["world"]["splits"]["coco_train"]["images"], "a.jpg").unlink()
    assert doctor.main(["--profile", "real"]) == 1
    out = capsys.readouterr().out
    assert "missing   world.splits.coco_train:" in out and "a.jpg" in out
    assert "1 problem(s)" in out


def test_doctor_main_explicit_params_is_not_replaced(doctor_repo, capsys):
    assert doctor.main(["--profile", "real", "--params", "params.yaml"]) == 1
    assert "params.yaml has no `real_inputs`" in capsys.readouterr().out


def test_doctor_main_profile_file_missing(doctor_repo, capsys):
    (doctor_repo / "profiles" / "real.yaml").unlink()
    assert doctor.main(["--profile", "real"]) == 1
    assert "real.yaml: params layer not found" in capsys.readouterr().out
