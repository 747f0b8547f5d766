"""Papers as a registry: params' papers are checked against the registry, methods and benchmarks; method order
and labels come from params; stage tags name the paper a stage serves."""

from __future__ import annotations

from pathlib import Path

import pytest

from vlcomp.config import load_params, profile_params
from vlcomp.reporting.collect import methods_of
from vlcomp.reporting.papers import PAPERS, papers_of, unevaluated
from vlcomp.tracking import ALL_PAPERS, paper_tag

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def params() -> dict:
    return load_params(REPO / "params.yaml")


def test_both_profiles_report_registered_papers(params):
    for profile in ("toy", "real"):
        got = papers_of(profile_params(profile, REPO))
        assert [p.name for p in got] == ["aro", "tsvlc", "hard_positives"]
    aro = PAPERS.get("aro")
    assert unevaluated(params, aro) == []
    assert unevaluated(profile_params("real", REPO), aro) == ["zeroshot_aro"]  # no zero-shot files
    assert "ARO-T6" in aro.artifacts and aro.claims is not None
    assert not hasattr(aro, "methods")  # which methods a paper has is said once: methods.<m>.paper in params


@pytest.mark.parametrize(("change", "message"), [
    ({"papers": ["nope"]}, "unknown paper 'nope'"),
    ({"papers": []}, "papers must list at least one paper"),
    ({"methods": {"clip_ft": {"paper": "tsvlc"}}}, "papers lists 'aro', but no method of params has paper: aro"),
])
def test_bad_papers_are_named(params, change, message):
    with pytest.raises(ValueError, match=message):
        papers_of({**params, **change})


def test_method_order_and_labels_come_from_params(params):
    m = methods_of(params, "aro")
    assert m.order == ("clip", "clip_ft", "negclip")
    assert [m.label(x) for x in m.order] == ["CLIP", "CLIP-FT", "NegCLIP"]
    swapped = {**params, "methods": {"negclip": {**params["methods"]["negclip"], "label": "NegCLIP*"},
                                     "clip_ft": params["methods"]["clip_ft"]}}
    m = methods_of(swapped, "aro")
    assert m.order == ("clip", "negclip", "clip_ft") and m.label("negclip") == "NegCLIP*"
    assert methods_of(params, "tsvlc").order[:9] == ("clip", "tsvlc_lora", "tsvlc_rb", "tsvlc_llm", "tsvlc_rbllm",
                                                     "tsvlc_pos", "tsvlc_combined", "tsvlc_noneg", "tsvlc_full")
    assert len(methods_of(params, "tsvlc").order) == 1 + sum(s.get("paper") == "tsvlc" for s in params["methods"].values())
    assert methods_of({**params, "methods": {}}, "tsvlc").order == ("clip",)
    assert m.label("blip") == "BLIP" and m.label("unknown") == "unknown"


def test_stage_tags_name_the_paper_served(params):
    assert paper_tag(params) == ALL_PAPERS
    assert paper_tag(params, method="negclip") == "aro"
    assert paper_tag(params, method="clip") == ALL_PAPERS  # the base model serves every paper
    assert paper_tag(params, generator="negclip") == "aro"
    two = {"methods": {"a": {"paper": "aro", "generator": "g"}, "b": {"paper": "tsvlc", "generator": "g"}}}
    assert paper_tag(two, generator="g") == "aro,tsvlc"
