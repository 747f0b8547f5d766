"""The wiring TSVLC added to the methods core: generators run once for every chain (generate@), a method reading its
positives from a second generator, a method training at another method's swept rate, one-chain ablation rows, a
method's own benchmark subset, per-method lengths and grids (vlcomp.config.derive_variants, vlcomp.methods)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from vlcomp.config import MLM_DIR, NO_MODEL_DIR, mined_dir, profile_params, resolve_layers
from vlcomp.eval.run import evaluation_benchmarks
from vlcomp.generators import GENERATORS, Generator
from vlcomp.methods import method_config, sources, variant_config

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def toy() -> dict:
    return profile_params("toy", REPO)


def test_text_generators_run_once_and_chain_generators_per_chain(toy):
    assert toy["generating"] == {
        "tsvlc_rb": {"generator": "tsvlc_rb", "split": "cc3m", "model": NO_MODEL_DIR},
        "tsvlc_unmask": {"generator": "tsvlc_unmask", "split": "cc3m", "model": MLM_DIR},
        "tsvlc_mix": {"generator": "tsvlc_mix", "split": "cc3m", "model": MLM_DIR},
        "tsvlc_analogy": {"generator": "tsvlc_analogy", "split": "cc3m", "model": NO_MODEL_DIR}}
    assert sorted(toy["mining"]) == ["negclip-b0", "negclip-b1", "negclip-b2"]
    assert toy["parsing"]["cc3m"] == {"mined_by": ["tsvlc_rb", "tsvlc_unmask", "tsvlc_mix", "tsvlc_analogy"]}
    assert mined_dir("negclip", "b1") == "negclip-b1" and mined_dir("tsvlc_mix", "b1") == "tsvlc_mix"


def test_combined_reads_negatives_and_positives_from_two_generators(toy):
    v = toy["variants"]["tsvlc_combined-b2s0"]
    assert (v["generator"], v["mined"], v["mined_positives"]) == ("tsvlc_mix", "tsvlc_mix", "tsvlc_analogy")
    assert variant_config(toy, "tsvlc_combined-b2s0").mined_positives == "tsvlc_analogy"
    m = method_config(toy, "tsvlc_combined")
    assert sources(m) == {"tsvlc_mix": ("negatives",), "tsvlc_analogy": ("positives",)}
    assert sources(method_config(toy, "tsvlc_pos")) == {"tsvlc_analogy": ("positives",)}
    assert sources(method_config(toy, "negclip")) == {"negclip": ("negatives", "hard_images")}
    # a NegCLIP run names its one folder twice (dvc.yaml's dependency list has a fixed shape)
    assert toy["variants"]["negclip-b1s0"]["mined_positives"] == "negclip-b1"
    bad = copy.deepcopy(toy)
    bad["methods"]["tsvlc_combined"]["positives_from"] = "tsvlc_rb"  # writes no positives
    with pytest.raises(ValueError, match=r"needs \['positives'\] from generator 'tsvlc_rb', which does not write"):
        method_config(bad, "tsvlc_combined")
    bad["methods"]["tsvlc_combined"]["positives_from"] = "nope"
    with pytest.raises(ValueError, match="positives_from='nope' is not a registered generator"):
        method_config(bad, "tsvlc_combined")
    stale = copy.deepcopy(toy)
    stale["variants"]["tsvlc_combined-b0s0"]["mined_positives"] = "tsvlc_mix"
    with pytest.raises(ValueError, match="mined_positives='tsvlc_mix', expected 'tsvlc_mix', 'tsvlc_analogy'"):
        variant_config(stale, "tsvlc_combined-b0s0")


def test_lr_from_shares_one_sweep_and_one_chain_rows_run_on_the_first_chain(toy):
    assert sorted(toy["selections"]) == ["clip_ft-b0", "negclip-b0", "tsvlc_full-b0", "tsvlc_lora-b0"]
    for name, v in toy["variants"].items():
        if v["method"].startswith("tsvlc_") and v["method"] != "tsvlc_full":
            assert v["selection"] == "tsvlc_lora-b0", name
    one_chain = {"tsvlc_rb", "tsvlc_llm", "tsvlc_pos", "tsvlc_noneg", "tsvlc_full"}
    for m in one_chain:
        assert [k for k, v in toy["variants"].items() if v["method"] == m] == [f"{m}-b0s0"]
    for m in ("tsvlc_lora", "tsvlc_rbllm", "tsvlc_combined", "negclip"):
        assert [k for k, v in toy["variants"].items() if v["method"] == m] == [f"{m}-b{k}s0" for k in range(3)]


def test_bad_seed_specs_and_lr_from_are_named(toy):
    with pytest.raises(ValueError, match=r"seeds.tsvlc_rb.chains='some' must be one of all, first"):
        resolve_layers(toy, {"seeds": {"tsvlc_rb": {"seeds": [0], "chains": "some"}}})
    with pytest.raises(ValueError, match=r"seeds.tsvlc_rb: unknown key\(s\) \['chain'\]"):
        resolve_layers(toy, {"seeds": {"tsvlc_rb": {"seeds": [0], "chain": "first"}}})
    with pytest.raises(ValueError, match=r"methods.tsvlc_rb.lr_from='nope': no such method"):
        resolve_layers(toy, {"methods": {"tsvlc_rb": {"lr_from": "nope"}}})
    with pytest.raises(ValueError, match=r"lr_from='tsvlc_rb' itself has lr_from"):
        resolve_layers(toy, {"methods": {"tsvlc_llm": {"lr_from": "tsvlc_rb"}}})


def test_method_overrides_length_grid_and_benchmarks(toy):
    m = method_config(toy, "tsvlc_lora")
    assert (m.epochs, m.sweep_epochs, m.lr_grid) == (3, 1, (0.01, 0.003))
    assert method_config(toy, "negclip").epochs is None  # finetune.epochs
    assert evaluation_benchmarks(toy, "tsvlc_rb") == ["vlchecklist", "zeroshot_elevater"]
    assert evaluation_benchmarks(toy, "tsvlc_combined") == toy["evaluate"]["benchmarks"]
    assert evaluation_benchmarks(toy, None) == toy["evaluate"]["benchmarks"]
    bad = copy.deepcopy(toy)
    bad["methods"]["tsvlc_rb"]["benchmarks"] = ["vlchecklist", "nope"]
    with pytest.raises(ValueError, match=r"methods.tsvlc_rb.benchmarks=.* must be a non-empty subset"):
        evaluation_benchmarks(bad, "tsvlc_rb")
    for key, value in (("epochs", 0), ("sweep_epochs", -1), ("lr_grid", [])):
        bad = copy.deepcopy(toy)
        bad["methods"]["tsvlc_rb"][key] = value
        with pytest.raises(ValueError, match=f"methods.tsvlc_rb.{key}="):
            method_config(bad, "tsvlc_rb")


def test_generator_reads_is_validated():
    assert {n: GENERATORS.get(n).reads for n in GENERATORS.names()} == {
        "negclip": "base", "tsvlc_analogy": "none", "tsvlc_mix": "mlm", "tsvlc_rb": "none", "tsvlc_unmask": "mlm"}
    with pytest.raises(ValueError, match="reads='clip'"):
        Generator(dict, lambda *a, **k: {}, writes=("negatives",), reads="clip")
