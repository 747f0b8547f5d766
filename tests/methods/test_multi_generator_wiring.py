"""The wiring TSVLC added to the methods core: generators run once for every chain (mine@<generator>), a method
reading its positives from a second generator, a method training at another method's swept rate, one-chain ablation
rows, a method's own benchmark subset, per-method lengths and grids (vlcomp.config.derive_variants, vlcomp.methods)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from vlcomp.config import MLM_DIR, NO_MODEL_DIR, derive_variants, mined_dir, profile_params, resolve_layers
from vlcomp.eval.inputs import evaluation_benchmarks
from vlcomp.generators import GENERATORS, Generator
from vlcomp.methods import method_config, sources, variant_config

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def toy() -> dict:
    return profile_params("toy", REPO)


def test_text_generators_run_once_and_chain_generators_per_chain(toy):
    assert {k: v for k, v in toy["mining"].items() if "base" not in v} == {
        "tsvlc_rb": {"generator": "tsvlc_rb", "split": "cc3m", "input": NO_MODEL_DIR},
        "tsvlc_unmask": {"generator": "tsvlc_unmask", "split": "cc3m", "input": MLM_DIR},
        "tsvlc_mix": {"generator": "tsvlc_mix", "split": "cc3m", "input": MLM_DIR},
        "tsvlc_analogy": {"generator": "tsvlc_analogy", "split": "cc3m", "input": NO_MODEL_DIR},
        # one registered generator, a second corpus: the mined dataset's name, its own split
        "tsvlc_mix_laion": {"generator": "tsvlc_mix_laion", "split": "laion", "input": MLM_DIR},
        "tsvlc_analogy_laion": {"generator": "tsvlc_analogy_laion", "split": "laion", "input": NO_MODEL_DIR},
        # Hard Positives: one generator, three mined datasets (both types, Swap-only, Replace-only)
        "hardpos": {"generator": "hardpos", "split": "coco_train", "input": NO_MODEL_DIR},
        "hardpos_swap": {"generator": "hardpos_swap", "split": "coco_train", "input": NO_MODEL_DIR},
        "hardpos_replace": {"generator": "hardpos_replace", "split": "coco_train", "input": NO_MODEL_DIR}}
    assert sorted(k for k, v in toy["mining"].items() if "base" in v) == ["negclip-b0", "negclip-b1", "negclip-b2"]
    assert toy["mining"]["negclip-b1"]["input"] == "models/base/b1"
    assert toy["parsing"]["cc3m"] == {"mined_by": ["tsvlc_rb", "tsvlc_unmask", "tsvlc_mix", "tsvlc_analogy"]}
    assert toy["parsing"]["laion"] == {"mined_by": ["tsvlc_mix_laion", "tsvlc_analogy_laion"]}
    mine = toy["mine"]
    assert mined_dir(mine, "negclip", "b1") == "negclip-b1" and mined_dir(mine, "tsvlc_mix", "b1") == "tsvlc_mix"
    assert mined_dir(mine, "tsvlc_mix_laion", "b1") == "tsvlc_mix_laion"


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
    assert sorted(toy["selections"]) == ["clip_ft-b0", "hn_only-b0", "hp_hn-b0", "negclip-b0", "tsvlc_full-b0",
                                         "tsvlc_lora-b0", "tsvlc_scratch_clip-b0"]
    for m in ("hp_hn_swap", "hp_hn_replace", "hp_only", "hp_hn_w25", "hp_hn_w50", "hp_hn_w75"):
        assert [(k, v["selection"]) for k, v in toy["variants"].items() if v["method"] == m] == [(f"{m}-b0s0", "hp_hn-b0")]
    for name, v in toy["variants"].items():
        if v["method"].startswith("tsvlc_") and v["method"] != "tsvlc_full":
            scratch = method_config(toy, v["method"]).init == "scratch"
            assert v["selection"] == ("tsvlc_scratch_clip-b0" if scratch else "tsvlc_lora-b0"), name
    one_chain = {"tsvlc_rb", "tsvlc_llm", "tsvlc_pos", "tsvlc_noneg", "tsvlc_full"}
    for m in one_chain:
        assert [k for k, v in toy["variants"].items() if v["method"] == m] == [f"{m}-b0s0"]
    for m in ("tsvlc_lora", "tsvlc_rbllm", "tsvlc_combined", "negclip", "hn_only", "hp_hn"):
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
    assert (m.epochs, m.sweep_epochs, m.lr_grid) == (9, 1, (0.01, 0.003))  # profiles/toy.yaml (second world)
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


def test_headline_rows_score_every_benchmark_on_the_first_chain_and_their_papers_on_the_others(toy):
    from vlcomp.config import chain_benchmarks

    own = ["vlchecklist", "zeroshot_elevater"]
    every = toy["evaluate"]["benchmarks"]
    # RB+LLM and Combined also stand for Hard Positives' SVLC rows: REPLACE and SWAP on every chain
    for m, others in (("tsvlc_lora", own), ("tsvlc_rbllm", [*own, "replace", "swap"]),
                      ("tsvlc_combined", [*own, "replace", "swap"])):
        assert toy["variants"][f"{m}-b0s0"]["benchmarks"] is None
        assert evaluation_benchmarks(toy, variant=f"{m}-b0s0") == every
        for chain in ("b1", "b2"):
            assert toy["variants"][f"{m}-{chain}s0"]["benchmarks"] == others
            assert evaluation_benchmarks(toy, variant=f"{m}-{chain}s0") == [b for b in every if b in others]
    for k in ("negclip-b1s0", "clip_ft-b2s0"):  # ARO's rows: every benchmark on every chain, as before
        assert evaluation_benchmarks(toy, variant=k) == every
    assert evaluation_benchmarks(toy, variant="tsvlc_rb-b0s0") == own  # a plain list: every chain
    # the rule, by hand
    spec = {"first_chain": "all", "other_chains": ["swap"]}
    assert chain_benchmarks(spec, True, "w") is None and chain_benchmarks(spec, False, "w") == ["swap"]
    assert chain_benchmarks(None, False, "w") is None and chain_benchmarks(("a", "b"), False, "w") == ["a", "b"]
    for bad in ({"first_chain": "all"}, {"first_chain": "all", "other_chains": [], "x": 1}, [], "some", [1]):
        with pytest.raises(ValueError, match=r"params: methods.m.benchmarks"):
            chain_benchmarks(bad, False, "methods.m.benchmarks")
    with pytest.raises(ValueError, match=r"methods.tsvlc_rbllm.benchmarks.other_chains=\[\]"):
        resolve_layers(toy, {"methods": {"tsvlc_rbllm": {"benchmarks": {"first_chain": "all", "other_chains": []}}}})
    with pytest.raises(ValueError, match=r"variants has no 'nope-b0s0'"):
        evaluation_benchmarks(toy, variant="nope-b0s0")
    bad = copy.deepcopy(toy)
    bad["variants"]["tsvlc_rbllm-b1s0"]["benchmarks"] = ["vlchecklist", "nope"]
    with pytest.raises(ValueError, match=r"variants.tsvlc_rbllm-b1s0.benchmarks=.* must be a non-empty subset"):
        evaluation_benchmarks(bad, variant="tsvlc_rbllm-b1s0")


def test_generator_reads_is_validated():
    assert {n: GENERATORS.get(n).reads for n in GENERATORS.names()} == {
        "hardpos": "none", "negclip": "base", "tsvlc_analogy": "none", "tsvlc_mix": "mlm", "tsvlc_rb": "none", "tsvlc_unmask": "mlm"}
    with pytest.raises(ValueError, match="reads='clip'"):
        Generator(dict, lambda *a, **k: {}, writes=("negatives",), reads="clip")


# --- TSVLC Table 1(b)-(g): other base models, training from scratch, a mined dataset of a second corpus ---------


def test_other_base_models_are_bases_of_their_own_on_the_chains_their_methods_run(toy):
    from vlcomp.config import chain_seed
    from vlcomp.seeding import derive_seed
    from vlcomp.train.recipes import base_loss, model_spec

    bases = toy["bases"]
    assert list(bases)[:3] == ["b0", "b1", "b2"] and bases["b0"] == {"seed": 0}  # the default chains unchanged
    assert bases["vit-b0"] == {"seed": 0, "family": "vit", "arch": "toy-vit-p8"}  # what pretraining reads only
    assert bases["cyclip-b0"]["loss"] == "cyclip" and "arch" not in bases["cyclip-b0"]
    assert "vit-b1" not in bases  # its methods run on the first chain only
    assert model_spec(toy, "vit-b0").arch == "toy-vit-p8" and model_spec(toy, "cyclip-b0").arch == toy["clip"]["arch"]
    assert model_spec(toy).arch == model_spec(toy, "b0").arch == toy["clip"]["arch"]
    assert base_loss(toy, "cyclip-b0") == "cyclip" and base_loss(toy, "b0") == "clip"
    # the default chain's seed is as before; another base model of the chain draws its own stream
    assert chain_seed(toy, "b0") == derive_seed(0, "base", 0)
    assert chain_seed(toy, "vit-b0") == derive_seed(0, "base", 0, "vit") != chain_seed(toy, "cyclip-b0")
    v = toy["variants"]["tsvlc_vit_rbllm-vit-b0s0"]
    assert (v["base"], v["selection"]) == ("vit-b0", "tsvlc_lora-b0")  # LoRA rate swept once, on the default base
    assert toy["variants"]["tsvlc_cyclip_combined-cyclip-b0s0"]["base"] == "cyclip-b0"
    # a from-scratch CyCLIP row is CyCLIP's architecture (the toy's: the default one), never its pretrained weights
    assert toy["variants"]["tsvlc_cyclip_scratch-cyclip-b0s0"]["base"] == "cyclip-b0"
    assert model_spec(toy, "cyclip-b0").arch == toy["clip"]["arch"]
    # TSVLC's benchmarks and Hard Positives' REPLACE / SWAP (its Table 8 ladder), in evaluate.benchmarks' order
    assert evaluation_benchmarks(toy, "clip", base="vit-b0") == ["vlchecklist", "replace", "swap", "zeroshot_elevater"]
    assert evaluation_benchmarks(toy, "clip", base="b0") == toy["evaluate"]["benchmarks"]


def test_a_base_scored_on_other_benchmarks_keeps_its_pretraining_params(toy):
    """``base_models.<family>.benchmarks`` is read by the base's evaluation alone: changing it leaves ``bases.<b>``
    (the params pretrain@<b> and the fine-tunes of that base depend on) as it was, so no training re-runs."""
    fams = toy["base_models"]
    wider = resolve_layers(toy, {"base_models": {"vit": {"benchmarks": [*fams["vit"]["benchmarks"], "swap"]}}})
    assert wider["bases"] == toy["bases"]
    assert evaluation_benchmarks(wider, "clip", base="vit-b0") == [
        b for b in toy["evaluate"]["benchmarks"] if b in {*fams["vit"]["benchmarks"], "swap"}]
    assert evaluation_benchmarks(wider, "clip", base="cyclip-b0") == evaluation_benchmarks(toy, "clip", base="cyclip-b0")
    with pytest.raises(ValueError, match=r"base_models.vit.benchmarks=\['nope'\] must be a non-empty subset"):
        evaluation_benchmarks(resolve_layers(toy, {"base_models": {"vit": {"benchmarks": ["nope"]}}}), "clip",
                              base="vit-b0")


def test_a_family_no_method_starts_from_is_a_base_of_the_first_chain(toy):
    """Hard Positives' Table 8 scores base models as they are: a ``base_models`` family that no method names is still
    pretrained (on the first chain) and scored; the bases methods start from keep their chains and their order."""
    assert toy["bases"]["rn32-b0"] == {"seed": 0, "family": "rn32", "arch": "toy-rn32"}  # no benchmarks, no stands_for
    assert not any(m.get("base_model") == "rn32" for m in toy["methods"].values())
    assert not any(v["base"].startswith("rn32-") for v in toy["variants"].values())
    p = resolve_layers(toy, {"base_seeds": [2, 0], "base_models": {"big": {"arch": "toy-rn32"}}})
    assert p["bases"]["big-b2"] == {"seed": 2, "family": "big", "arch": "toy-rn32"} and "big-b0" not in p["bases"]
    assert list(p["bases"])[-2:] == ["rn32-b2", "big-b2"]  # after every base a method starts from
    fewer = {f: v for f, v in toy["base_models"].items() if f != "rn32"}
    assert "rn32-b0" not in derive_variants({**toy, "base_models": fewer})["bases"]  # a family removed: its base too

def test_a_per_chain_generator_on_another_base_is_mined_on_that_base(toy):
    p = resolve_layers(toy, {"methods": {"negclip_vit": {**toy["methods"]["negclip"], "base_model": "vit"}},
                             "seeds": {"negclip_vit": {"seeds": [0], "chains": "first"}}})
    assert p["mining"]["negclip-vit-b0"] == {"generator": "negclip", "base": "vit-b0", "split": "coco_train",
                                                "input": "models/base/vit-b0"}
    assert p["variants"]["negclip_vit-vit-b0s0"]["mined"] == "negclip-vit-b0"
    assert p["selections"]["negclip_vit-vit-b0"]["base"] == "vit-b0"


def test_bad_base_models_are_named(toy):
    with pytest.raises(ValueError, match=r"methods.tsvlc_vit_rbllm.base_model='nope' is not a family of base_models"):
        resolve_layers(toy, {"methods": {"tsvlc_vit_rbllm": {"base_model": "nope"}}})
    with pytest.raises(ValueError, match=r"base_models.vit: unknown key\(s\) \['weight'\]"):
        resolve_layers(toy, {"base_models": {"vit": {"weight": "x"}}})
    with pytest.raises(ValueError, match=r"base_models.b3: a name must be alphanumeric and not look like a chain"):
        resolve_layers(toy, {"base_models": {"b3": {}}})


def test_scratch_methods_train_every_weight_at_one_rate(toy):
    for name in ("tsvlc_scratch_clip", "tsvlc_scratch_combined", "tsvlc_vit_scratch_rbllm", "tsvlc_cyclip_scratch"):
        m = method_config(toy, name)
        assert m.init == "scratch" and m.tuning.lora is None and m.tuning.freeze == (), name
    assert method_config(toy, "tsvlc_scratch_clip").lr_grid == (0.001,)
    assert method_config(toy, "tsvlc_cyclip_scratch").loss == "cyclip"
    assert method_config(toy, "tsvlc_cyclip_combined").loss_args == {"cyclic": [0.25, 0.25]}
    bad = copy.deepcopy(toy)
    bad["methods"]["tsvlc_scratch_clip"]["tuning"] = toy["methods"]["tsvlc_lora"]["tuning"]
    with pytest.raises(ValueError, match="init=scratch with tuning.lora"):
        method_config(bad, "tsvlc_scratch_clip")
    bad["methods"]["tsvlc_scratch_clip"]["init"] = "warm"
    with pytest.raises(ValueError, match="init='warm': must be one of base, scratch"):
        method_config(bad, "tsvlc_scratch_clip")


def test_a_mined_dataset_names_its_registered_generator(toy):
    from vlcomp.config import generator_config, registered_generator

    mine = toy["mine"]
    assert registered_generator(mine, "tsvlc_mix_laion") == "tsvlc_mix" and registered_generator(mine, "negclip") == "negclip"
    assert "generator" not in generator_config(mine, "tsvlc_mix_laion")
    assert generator_config(mine, "tsvlc_mix_laion") | {"split": "cc3m"} == mine["tsvlc_mix"]
    m = method_config(toy, "tsvlc_laion_combined")
    assert sources(m) == {"tsvlc_mix_laion": ("negatives",), "tsvlc_analogy_laion": ("positives",)}
    bad = copy.deepcopy(toy)
    bad["mine"]["tsvlc_mix_laion"]["generator"] = "nope"
    with pytest.raises(ValueError, match=r"generator='tsvlc_mix_laion': mine.tsvlc_mix_laion.generator='nope' is not a registered"):
        method_config(bad, "tsvlc_laion_combined")


def test_a_one_rate_grid_selects_its_rate_without_reading_data(toy):
    from vlcomp.train.finetune import finetune_config, lr_grid, select_lr

    cfg = finetune_config(toy["finetune"])
    one = method_config(toy, "tsvlc_scratch_clip")
    assert lr_grid(one, cfg) == (0.001,) and lr_grid(method_config(toy, "negclip"), cfg) == tuple(cfg.lr_grid)
    got = select_lr(None, None, one, cfg, 0, "tsvlc_scratch_clip-b0")  # neither base nor data is touched
    assert got == {"method": "tsvlc_scratch_clip-b0", "grid": {}, "selected_lr": 0.001,
                   "criterion": "the grid's only rate", "sweep_epochs": 0}
    with pytest.raises(ValueError, match="select_lr negclip-b0: a grid of 2 rates needs the fine-tuning data"):
        select_lr(None, None, method_config(toy, "negclip"), cfg, 0, "negclip-b0")
