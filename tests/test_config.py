"""params.yaml handling: load_params errors, build (unknown/missing keys), section, positive, merge_overlay."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from vlcomp.config import build, load_params, merge_overlay, positive, resolve_layers, section


@dataclass(frozen=True)
class _Cfg:
    lr: float
    epochs: int
    grid: tuple[float, ...] = (1.0,)
    name: str = "x"

    def __post_init__(self) -> None:
        if self.epochs < 1:
            raise ValueError(f"train.epochs={self.epochs}: must be >= 1")


# ------------------------------------------------------------------------------------------------ build


def test_build_fills_defaults_and_turns_lists_into_tuples() -> None:
    cfg = build(_Cfg, {"lr": 0.1, "epochs": 2, "grid": [1e-5, 5e-6]}, "train")
    assert cfg == _Cfg(0.1, 2, (1e-5, 5e-6), "x")
    assert isinstance(cfg.grid, tuple)


def test_build_rejects_unknown_keys_by_full_name() -> None:
    with pytest.raises(ValueError, match=r"unknown key\(s\) finetune\.train\.epoch, finetune\.train\.lrr") as e:
        build(_Cfg, {"lr": 0.1, "epochs": 2, "lrr": 1, "epoch": 3}, "finetune.train")
    assert "known: lr, epochs, grid, name" in str(e.value)


def test_build_rejects_missing_required_keys() -> None:
    with pytest.raises(ValueError, match=r"missing key train\.epochs"):
        build(_Cfg, {"lr": 0.1}, "train")
    with pytest.raises(ValueError, match=r"missing key train\.lr"):
        build(_Cfg, None, "train")


def test_build_passes_through_the_dataclass_validation() -> None:
    with pytest.raises(ValueError, match=r"train\.epochs=0"):
        build(_Cfg, {"lr": 0.1, "epochs": 0}, "train")


def test_build_does_not_mutate_its_input() -> None:
    values = {"lr": 0.1, "epochs": 1, "grid": [1.0, 2.0]}
    build(_Cfg, values, "train")
    assert values == {"lr": 0.1, "epochs": 1, "grid": [1.0, 2.0]}


# ---------------------------------------------------------------------------------------------- section


def test_section_walks_dotted_keys_and_names_the_missing_one() -> None:
    params = {"world": {"captions": {"colour_prob": 0.9}, "image_size": 32}}
    assert section(params, "world.captions") == {"colour_prob": 0.9}
    assert section(params, "world.image_size") == 32
    with pytest.raises(ValueError, match=r"missing key 'world\.splits'"):
        section(params, "world.splits.train")
    with pytest.raises(ValueError, match=r"missing key 'world\.image_size\.x'"):
        section(params, "world.image_size.x")


# ------------------------------------------------------------------------------------------ load_params


def test_load_params_reads_a_mapping(tmp_path: Path) -> None:
    p = tmp_path / "params.yaml"
    p.write_text("profile: real\nroot_seed: 3\n")
    assert load_params(p) == {"profile": "real", "root_seed": 3}
    p.write_text("root_seed: 3\n")  # profile defaults to toy
    assert load_params(p)["root_seed"] == 3


@pytest.mark.parametrize("text, old, new", [
    ("base:\n  seed: 0\n", "base.seed", "root_seed"),
    ("generating:\n  g: {split: s}\n", "generating", "mining"),
    ("model:\n  arch: toy-rn16\n", "model", "clip"),
    ("methods:\n  m: {paper: aro, model: {freeze: [image]}}\n", "methods.m.model", "methods.m.tuning"),
    ("bases:\n  vit-b0: {seed: 0, model: vit}\n", "bases.vit-b0.model", "bases.vit-b0.family"),
    ("paper_inputs: {}\n", "paper_inputs", "real_inputs"),
    ("paper_models: {}\n", "paper_models", "released_models"),
    ("paper_evaluate: {}\n", "paper_evaluate", "real_evaluate"),
])
def test_a_renamed_key_is_an_error_naming_its_new_name(tmp_path: Path, text: str, old: str, new: str) -> None:
    p = tmp_path / "params.yaml"
    p.write_text(text)
    with pytest.raises(ValueError, match=rf"params\.yaml: key '{old}' was renamed '{new}'"):
        load_params(p)
    with pytest.raises(ValueError, match=rf"key '{old}' was renamed '{new}'"):
        resolve_layers(yaml.safe_load(text))


def test_the_renamed_profile_is_an_error_naming_its_new_name(tmp_path: Path) -> None:
    p = tmp_path / "params.yaml"
    p.write_text("profile: paper\n")
    with pytest.raises(ValueError, match=r"profile 'paper' was renamed 'real'"):
        load_params(p)


def test_load_params_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nope.yaml: params file not found"):
        load_params(tmp_path / "nope.yaml")


@pytest.mark.parametrize("text", ["a: [1, 2\n", "a: b: c\n", "a:\n\t- 1\n"])
def test_load_params_invalid_yaml_names_the_file(tmp_path: Path, text: str) -> None:
    p = tmp_path / "broken.yaml"
    p.write_text(text)
    with pytest.raises(ValueError, match=r"broken\.yaml: not valid YAML"):
        load_params(p)


@pytest.mark.parametrize("text", ["", "- 1\n- 2\n", "just a string\n"])
def test_load_params_needs_a_top_level_mapping(tmp_path: Path, text: str) -> None:
    p = tmp_path / "params.yaml"
    p.write_text(text)
    with pytest.raises(ValueError, match=r"params\.yaml: expected a mapping"):
        load_params(p)


def test_load_params_bad_profile(tmp_path: Path) -> None:
    p = tmp_path / "params.yaml"
    p.write_text("profile: huge\n")
    with pytest.raises(ValueError, match=r"profile='huge': must be one of toy, real"):
        load_params(p)


def test_the_repository_params_files_load() -> None:
    root = Path(__file__).resolve().parents[1]
    for name in ("params.yaml", "params.smoke.yaml"):
        if (root / name).exists():
            assert isinstance(load_params(root / name), dict)


# --------------------------------------------------------------------------------------------- positive


@pytest.mark.parametrize(("value", "expected"), [(1, 1), (0.5, 0.5), (1e-6, 1e-6)])
def test_positive_accepts_positive_numbers(value, expected) -> None:
    assert positive(value, "lr") == expected


@pytest.mark.parametrize(("value", "expected"), [(3, 3), (3.0, 3)])
def test_positive_integer_accepts_integral_values(value, expected) -> None:
    out = positive(value, "steps", integer=True)
    assert out == expected and type(out) is int


@pytest.mark.parametrize("value", [0, -1, -0.5, float("nan"), True, "1e-3", None, [1]])
def test_positive_rejects_with_the_name(value) -> None:
    with pytest.raises(ValueError, match=r"params: train\.lr=.* must be a positive number"):
        positive(value, "train.lr")


@pytest.mark.parametrize("value", [2.5, 0, float("inf"), False])
def test_positive_integer_rejects(value) -> None:
    with pytest.raises(ValueError, match=r"steps=.* must be a positive integer"):
        positive(value, "steps", integer=True)


# ----------------------------------------------------------------------------------------- merge_overlay


BASE = {
    "profile": "toy",
    "world": {"image_size": 48, "captions": {"colour_prob": 0.9, "size_prob": 0.35}},
    "variants": {"clip": {"lr": 1.0}, "negclip": {"lr": 2.0}},
    "seeds": [0, 1, 2],
}


def test_merge_overlay_is_deep() -> None:
    out = merge_overlay(BASE, {"world": {"captions": {"size_prob": 0.0}, "new": 1}, "seeds": [7]})
    assert out["world"] == {"image_size": 48, "captions": {"colour_prob": 0.9, "size_prob": 0.0}, "new": 1}
    assert out["seeds"] == [7]  # lists are replaced, not concatenated
    assert out["variants"] == BASE["variants"]
    assert out["profile"] == "toy"


def test_merge_overlay_replace_swaps_a_mapping_whole() -> None:
    overlay = {"_replace": ["variants"], "variants": {"negclip": {"lr": 3.0}}}
    out = merge_overlay(BASE, overlay)
    assert out["variants"] == {"negclip": {"lr": 3.0}}
    assert "_replace" not in out


def test_merge_overlay_replace_takes_dotted_paths() -> None:
    overlay = {"_replace": ["world.captions"], "world": {"captions": {"size_prob": 0.1}}}
    out = merge_overlay(BASE, overlay)
    assert out["world"] == {"image_size": 48, "captions": {"size_prob": 0.1}}


def test_merge_overlay_does_not_mutate_its_inputs() -> None:
    base, overlay = copy.deepcopy(BASE), {"world": {"captions": {"size_prob": 0.0}}, "_replace": ["variants"]}
    before = copy.deepcopy(overlay)
    merge_overlay(base, overlay)
    assert base == BASE and overlay == before


def test_merge_overlay_scalar_over_mapping_and_back() -> None:
    assert merge_overlay({"a": {"b": 1}}, {"a": 3}) == {"a": 3}
    assert merge_overlay({"a": 3}, {"a": {"b": 1}}) == {"a": {"b": 1}}
    assert merge_overlay({"a": {"b": 1}}, {}) == {"a": {"b": 1}}
