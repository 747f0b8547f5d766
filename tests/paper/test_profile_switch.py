"""`python -m vlcomp.profile`: switching params.yaml between the profile files; the repository's profile files;
`vlcomp.doctor` on the paper profile's fine-tuning inputs and `--profile paper` with a toy params.yaml."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from PIL import Image

from vlcomp import doctor, profile
from vlcomp.config import load_params

REPO = Path(__file__).resolve().parents[2]

TOY = b"# toy\nprofile: toy\nbase:\n  seed: 0\n"
PAPER = b"# paper\nprofile: paper\nbase:\n  seed: 1\n"


@pytest.fixture
def repo(tmp_path) -> Path:
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "toy.yaml").write_bytes(TOY)
    (tmp_path / "profiles" / "paper.yaml").write_bytes(PAPER)
    (tmp_path / "params.yaml").write_bytes(TOY)
    return tmp_path


# ----------------------------------------------------------------------------------------------- profile


def test_profile_file_and_active(repo):
    assert profile.profile_file("paper", repo) == repo / "profiles" / "paper.yaml"
    assert profile.active(repo) == "toy"
    with pytest.raises(ValueError, match="profile 'huge'"):
        profile.profile_file("huge", repo)
    (repo / "profiles" / "paper.yaml").unlink()
    with pytest.raises(FileNotFoundError, match=r"paper\.yaml"):
        profile.profile_file("paper", repo)


def test_active_is_none_without_params_or_when_edited(repo):
    (repo / "params.yaml").write_bytes(TOY + b"# my edit\n")
    assert profile.active(repo) is None
    (repo / "params.yaml").unlink()
    assert profile.active(repo) is None


def test_switch_to_paper_and_back(repo):
    assert profile.switch("paper", repo) is None
    assert (repo / "params.yaml").read_bytes() == PAPER
    assert profile.active(repo) == "paper"
    assert profile.switch("toy", repo) is None
    assert (repo / "params.yaml").read_bytes() == TOY
    assert profile.active(repo) == "toy"
    assert not (repo / "params.yaml.bak").exists()
    assert sorted(p.name for p in repo.iterdir()) == ["params.yaml", "profiles"]  # no temp file left behind


def test_switch_to_the_active_profile_is_a_no_op(repo):
    assert profile.switch("toy", repo) is None
    assert (repo / "params.yaml").read_bytes() == TOY


def test_switch_without_params_yaml_creates_it(repo):
    (repo / "params.yaml").unlink()
    profile.switch("paper", repo)
    assert (repo / "params.yaml").read_bytes() == PAPER


def test_switch_refuses_an_edited_params_yaml(repo):
    edited = TOY.replace(b"seed: 0", b"seed: 7")
    (repo / "params.yaml").write_bytes(edited)
    with pytest.raises(ValueError, match=r"params\.yaml.*--force"):
        profile.switch("paper", repo)
    assert (repo / "params.yaml").read_bytes() == edited
    assert not (repo / "params.yaml.bak").exists()


def test_switch_force_keeps_the_edited_file(repo):
    edited = TOY.replace(b"seed: 0", b"seed: 7")
    (repo / "params.yaml").write_bytes(edited)
    backup = profile.switch("paper", repo, force=True)
    assert backup == repo / "params.yaml.bak"
    assert backup.read_bytes() == edited
    assert (repo / "params.yaml").read_bytes() == PAPER
    assert profile.active(repo) == "paper"


@pytest.mark.parametrize("content,message", [
    (b"profile: toy\nbase: {seed: 1}\n", "says profile: 'toy', expected 'paper'"),
    (b"base: {seed: 1}\n", "says profile: None, expected 'paper'"),
    (b"profile: paper\nbase: [unclosed\n", "not valid YAML"),
    (b"profile: huge\n", "profile='huge'"),
])
def test_switch_refuses_a_broken_profile_file(repo, content, message):
    (repo / "profiles" / "paper.yaml").write_bytes(content)
    with pytest.raises(ValueError, match=message):
        profile.switch("paper", repo)
    assert (repo / "params.yaml").read_bytes() == TOY


def test_main_prints_the_active_profile(repo, capsys):
    assert profile.main(["--root", str(repo)]) == 0
    assert capsys.readouterr().out.strip() == "params.yaml: profile toy"
    (repo / "params.yaml").write_bytes(PAPER + b"# edit\n")
    assert profile.main(["--root", str(repo)]) == 0
    out = capsys.readouterr().out
    assert "params.yaml: profile paper" in out and "edited" in out


def test_main_switches(repo, capsys, monkeypatch):
    monkeypatch.chdir(repo)
    assert profile.main(["paper"]) == 0
    assert (repo / "params.yaml").read_bytes() == PAPER
    assert "now the paper profile" in capsys.readouterr().out
    assert profile.main([]) == 0
    assert capsys.readouterr().out.strip() == "params.yaml: profile paper"


def test_main_edited_params_returns_2_then_force(repo, capsys):
    (repo / "params.yaml").write_bytes(TOY + b"# edit\n")
    assert profile.main(["paper", "--root", str(repo)]) == 2
    assert "error:" in capsys.readouterr().err
    assert profile.main(["paper", "--root", str(repo), "--force"]) == 0
    assert "params.yaml.bak" in capsys.readouterr().out
    assert (repo / "params.yaml.bak").read_bytes() == TOY + b"# edit\n"


def test_main_unknown_profile_is_an_argparse_error(repo, capsys):
    with pytest.raises(SystemExit) as e:
        profile.main(["huge", "--root", str(repo)])
    assert e.value.code == 2
    assert (repo / "params.yaml").read_bytes() == TOY


def test_repository_default_profile_is_toy():
    assert (REPO / "params.yaml").read_bytes() == (REPO / "profiles" / "toy.yaml").read_bytes()
    assert profile.active(REPO) == "toy"


def test_repository_paper_profile_loads_with_the_same_keys():
    toy, paper = load_params(REPO / "params.yaml"), load_params(REPO / "profiles" / "paper.yaml")
    assert paper["profile"] == "paper" and toy.get("profile", "toy") == "toy"
    assert set(paper) == set(toy)


# ----------------------------------------------------------------------------------------------- doctor


def write_png(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.zeros((6, 6, 3), dtype=np.uint8)).save(path, format="PNG")
    return path


@pytest.fixture
def paper_data(tmp_path) -> dict:
    """A paper-profile params dict over a per-caption file, two images and a weights file."""
    d = tmp_path / "data"
    write_png(d / "images" / "a.jpg")
    write_png(d / "images" / "b.jpg")
    (d / "train.json").write_text(json.dumps([{"image": "a.jpg", "caption": "a cat"},
                                              {"image": "b.jpg", "caption": "a dog"},
                                              {"image": "a.jpg", "caption": "the cat"}]))
    torch.save({"state_dict": {"w": torch.zeros(2)}}, d / "base.pt")
    return {"profile": "paper",
            "world": {"image_size": 8, "splits": {"coco_train": {"annotations": str(d / "train.json"),
                                                                 "images": str(d / "images")}}},
            "model": {"arch": "toy-vit-p8", "weights": str(d / "base.pt"), "tokenizer": "world",
                      "context_length": 32},
            "paper_inputs": {"order_seeds": 5}}


def findings(params) -> dict[str, tuple[str, str]]:
    return {f.item: (f.status, f.detail) for f in doctor.check_paper_pipeline(params)}


def test_check_paper_pipeline_all_ok(paper_data):
    got = findings(paper_data)
    assert got["world.splits.coco_train"] == ("ok", "2 images, 3 captions")
    assert got["model"][0] == "ok" and "base.pt" in got["model"][1]
    assert set(got) == {"world.splits.coco_train", "model"}


def test_check_paper_pipeline_missing_image(paper_data):
    Path(paper_data["world"]["splits"]["coco_train"]["images"], "b.jpg").unlink()
    status, detail = findings(paper_data)["world.splits.coco_train"]
    assert status == "missing"
    assert "b.jpg" in detail and "1 of 2" in detail


def test_check_paper_pipeline_malformed_caption_file(paper_data):
    Path(paper_data["world"]["splits"]["coco_train"]["annotations"]).write_text('[{"image": "a.jpg", "capt')
    status, detail = findings(paper_data)["world.splits.coco_train"]
    assert status == "malformed" and "train.json" in detail


def test_check_paper_pipeline_unset_variable_and_bad_split(paper_data, monkeypatch):
    monkeypatch.delenv("VLCOMP_TEST_UNSET", raising=False)
    paper_data["world"]["splits"]["other"] = {"annotations": "$VLCOMP_TEST_UNSET/x.json", "images": "/x"}
    paper_data["world"]["splits"]["bad"] = {"annotations": "x.json", "images": "/x", "typo": 1}
    got = findings(paper_data)
    assert got["world.splits.other"][0] == "missing" and "environment variable not set" in got["world.splits.other"][1]
    assert got["world.splits.bad"][0] == "malformed" and "world.splits.bad.typo" in got["world.splits.bad"][1]


def test_check_paper_pipeline_no_splits(paper_data):
    paper_data["world"] = {"image_size": 8}
    assert findings(paper_data)["world.splits"][0] == "missing"


def test_check_paper_pipeline_plain_vit_b32_with_openai(paper_data):
    paper_data["model"] = {"arch": "ViT-B-32", "weights": "openai", "tokenizer": "open_clip", "context_length": 77}
    status, detail = findings(paper_data)["model"]
    assert status == "malformed" and "ViT-B-32-quickgelu" in detail


def test_check_paper_pipeline_missing_weights_file(paper_data):
    Path(paper_data["model"]["weights"]).unlink()
    status, detail = findings(paper_data)["model"]
    assert status == "missing" and "base.pt" in detail


@pytest.fixture
def doctor_repo(tmp_path, paper_data, monkeypatch) -> Path:
    """cwd = a repo whose params.yaml is the toy profile and whose profiles/paper.yaml is ``paper_data``."""
    root = tmp_path / "repo"
    (root / "profiles").mkdir(parents=True)
    (root / "params.yaml").write_bytes(TOY)
    (root / "profiles" / "toy.yaml").write_bytes(TOY)
    (root / "profiles" / "paper.yaml").write_text(yaml.safe_dump(paper_data))
    monkeypatch.chdir(root)
    return root


def test_doctor_main_profile_paper_reads_the_profile_file(doctor_repo, paper_data, capsys):
    assert doctor.main(["--profile", "paper", "-v"]) == 0
    out = capsys.readouterr().out
    assert "world.splits.coco_train: 2 images, 3 captions" in out
    assert "doctor (paper): 3 fine, 0 problem(s)" in out  # order_seeds, the split, the model


def test_doctor_main_profile_paper_reports_a_missing_image(doctor_repo, paper_data, capsys):
    Path(paper_data["world"]["splits"]["coco_train"]["images"], "a.jpg").unlink()
    assert doctor.main(["--profile", "paper"]) == 1
    out = capsys.readouterr().out
    assert "missing   world.splits.coco_train:" in out and "a.jpg" in out
    assert "1 problem(s)" in out


def test_doctor_main_explicit_params_is_not_replaced(doctor_repo, capsys):
    assert doctor.main(["--profile", "paper", "--params", "params.yaml"]) == 1
    assert "params.yaml has no `paper_inputs`" in capsys.readouterr().out


def test_doctor_main_profile_file_missing(doctor_repo, capsys):
    (doctor_repo / "profiles" / "paper.yaml").unlink()
    assert doctor.main(["--profile", "paper"]) == 1
    assert "profiles/paper.yaml not found" in capsys.readouterr().out
