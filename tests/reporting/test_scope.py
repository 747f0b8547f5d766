"""What each paper's report reads (vlcomp.reporting.scope), on the toy profile's params: its own methods, the rows
of other papers it shows, and the base models scored on its benchmarks, no more (its stage depends on exactly
these, so another paper's rows never re-run it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vlcomp.config import profile_params
from vlcomp.reporting.papers import paper_scope
from vlcomp.reporting.scope import scope

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def toy() -> dict:
    return profile_params("toy", REPO)


def test_hard_positives_shows_two_tsvlc_rows_and_the_base_ladder(toy):
    sc = paper_scope(toy, "hard_positives")
    assert {"hn_only", "hp_hn", "hp_only", "clip_ft", "negclip", "tsvlc_rbllm", "tsvlc_combined"} <= set(sc.methods)
    assert not {"tsvlc_noneg", "tsvlc_full", "tsvlc_lora", "tsvlc_vit_rbllm"} & set(sc.methods)
    assert "tsvlc_noneg-b0s0" not in sc.variants and "tsvlc_rbllm-b2s0" in sc.variants
    # no Hard Positives run starts from the ViT, CyCLIP or larger ResNet base: they are in scope because they are
    # scored on REPLACE
    assert sc.bases == ("b0", "b1", "b2", "vit-b0", "cyclip-b0", "rn32-b0")
    assert "clip-vit-b0" in sc.models


def test_a_base_scored_on_none_of_a_papers_benchmarks_stays_out(toy):
    aro = paper_scope(toy, "aro")
    assert aro.bases == ("b0", "b1", "b2") and set(aro.methods) == {"clip_ft", "negclip"}
    assert paper_scope(toy, "tsvlc").bases == ("b0", "b1", "b2", "vit-b0", "cyclip-b0")  # its runs start there
    assert toy["base_models"]["rn32"]["benchmarks"] == ["replace", "swap"]  # Hard Positives' only: out of these two
    # the rule by hand: a family scored on every benchmark (benchmarks unset) is in every paper's scope that names
    # benchmarks, in none that names none
    every = {**toy, "base_models": {**toy["base_models"], "vit": {"arch": "toy-vit-p8"}}}
    assert "vit-b0" in scope(every, "aro", benchmarks=("vg_relation",)).bases
    assert "vit-b0" not in scope(every, "aro").bases
    only = {**toy, "base_models": {**toy["base_models"], "vit": {"arch": "toy-vit-p8", "benchmarks": ["swap"]}}}
    assert "vit-b0" not in scope(only, "aro", benchmarks=("vg_relation",)).bases
    assert "vit-b0" in scope(only, "aro", benchmarks=("swap",)).bases
    # a cross method that params lack is no error and no row
    assert "nope" not in scope(toy, "aro", cross_methods=("nope",)).methods
