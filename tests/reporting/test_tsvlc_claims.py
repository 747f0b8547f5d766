"""TSVLC's claims C1-C5 on small hand-made metric tables: each rule computed by hand, held and not held."""

from __future__ import annotations

import pandas as pd
import pytest

from vlcomp.reporting.collect import LONG_COLUMNS, Methods
from vlcomp.reporting.ledger import Evidence
from vlcomp.reporting.papers import PAPERS
from vlcomp.reporting.papers.tsvlc import claims as K

OBJ, ATTR, REL, ZS = K.OBJECT, K.ATTRIBUTE, K.RELATION, K.ZS
LABELS = {"tsvlc_lora": "CLIP+LoRA", "tsvlc_rb": "RB Neg", "tsvlc_llm": "LLM Neg",
          "tsvlc_rbllm": "RB+LLM Negs", "tsvlc_pos": "Pos", "tsvlc_combined": "Combined",
          "tsvlc_noneg": "w/o Neg Loss", "tsvlc_full": "RB+LLM Negs, full FT"}
METHODS = Methods(("clip", *LABELS), LABELS)


def long_table(values: dict[tuple[str, int], tuple[float, float, float, float]]) -> pd.DataFrame:
    """(method, base seed) -> (Object, Attribute, Relation, ZS) as the long table of collect()."""
    rows = []
    for (method, k), vals in values.items():
        base = method == "clip"
        model = f"clip-b{k}" if base else f"{method}-b{k}s0"
        for key, v in zip((OBJ, ATTR, REL, ZS), vals, strict=True):
            rows.append({"model": model, "method": method, "base": f"b{k}", "base_seed": str(k),
                         "seed": "" if base else "0", "key": key, "value": v, "dvc_stage": ""})
    return pd.DataFrame(rows, columns=list(LONG_COLUMNS))


def good() -> dict[tuple[str, int], tuple[float, float, float, float]]:
    """Every claim holds, by construction (hand-checked per claim below)."""
    v: dict[tuple[str, int], tuple[float, float, float, float]] = {}
    for k in range(3):
        c = (0.80 + 0.01 * k, 0.60 + 0.01 * k, 0.55 + 0.01 * k, 0.40)
        v[("clip", k)] = c
        v[("tsvlc_lora", k)] = (c[0], c[1] - 0.01, c[2] - 0.02, 0.40)
        v[("tsvlc_rbllm", k)] = (c[0] + 0.02, c[1] + 0.05, c[2] + 0.10, 0.39)
        v[("tsvlc_combined", k)] = (c[0] + 0.02, c[1] + 0.03, c[2] + 0.05, 0.395)
    v[("tsvlc_rb", 0)] = (0.81, 0.64, 0.62, 0.39)
    v[("tsvlc_llm", 0)] = (0.815, 0.63, 0.61, 0.395)
    v[("tsvlc_pos", 0)] = (0.80, 0.61, 0.53, 0.405)
    v[("tsvlc_noneg", 0)] = (0.80, 0.60, 0.54, 0.39)
    v[("tsvlc_full", 0)] = (0.78, 0.58, 0.52, 0.30)
    return v


def verdicts(values) -> dict[str, object]:
    claims = K.tsvlc_claims(Evidence(long_table(values)), METHODS)
    return {c.id: c for c in claims}


def test_registered_claims_are_these():
    assert PAPERS.get("tsvlc").claims is K.tsvlc_claims


def test_every_claim_holds_on_the_good_table_with_the_hand_computed_values():
    got = verdicts(good())
    assert {cid: c.held for cid, c in got.items()} == dict.fromkeys(("C1", "C2", "C3", "C4", "C5"), True)
    c1 = got["C1"].conditions
    # (i) Relation gain over CLIP on each of 3 chains: +0.10; minus the Attribute gain (+0.05): +0.05
    assert c1[0].values == pytest.approx([0.10] * 3)
    assert c1[0].text == "Relation gain over CLIP: RB+LLM Negs - CLIP > 0"
    assert c1[1].values == pytest.approx([0.05] * 3) and c1[2].values == pytest.approx([0.08] * 3)
    assert c1[0].runs == ["b0s0 - b0", "b1s0 - b1", "b2s0 - b2"]
    # (ii) mean(A, R) on b0: RB+LLM (0.65 + 0.65) / 2 = 0.65 vs RB (0.64 + 0.62) / 2 = 0.63: +0.02, one chain
    rb = next(c for c in c1 if "RB Neg" in c.text and "mean" in c.text)
    assert rb.values == pytest.approx([0.02]) and rb.n == 1
    lora = next(c for c in c1 if "CLIP+LoRA" in c.text)
    assert lora.n == 3  # both ran on every chain: compared on every chain
    # C2 on b0: RB+LLM - LoRA = 0.65 - 0.56 = 0.09; w/o Neg - LoRA = 0.57 - 0.56 = 0.01;
    # 0.09 / 3 - 0.01 = 0.02
    c2 = got["C2"].conditions
    assert c2[0].values == pytest.approx([0.09] * 3)  # LoRA and RB+LLM both ran on every chain
    assert c2[1].values == pytest.approx([0.02]) and c2[1].interval is None and "three methods" in c2[1].note
    # C3: Combined ZS 0.395 - RB+LLM 0.39 = +0.005 >= 0 on 3 chains; SVLC RB+LLM - Combined = 0.035
    assert got["C3"].conditions[0].values == pytest.approx([0.005] * 3)
    assert got["C3"].conditions[1].values == pytest.approx([0.035] * 3)
    # C4: 7 LoRA methods, each ZS - CLIP ZS >= -0.02; the worst RB Neg -0.01
    c4 = got["C4"].conditions
    assert len(c4) == 7 and all(c.bound == pytest.approx(-K.ZS_DROP_MAX) for c in c4)
    assert c4[0].text == "21-task zero-shot mean: CLIP+LoRA - CLIP >= -0.02"
    assert c4[0].values == pytest.approx([0.0] * 3)
    assert got["C3"].conditions[0].text == "21-task zero-shot mean: Combined - RB+LLM Negs >= 0"
    # C5: (0.82 + 0.65 + 0.65) / 3 - (0.78 + 0.58 + 0.52) / 3 = 0.08; ZS 0.39 - 0.30 = 0.09
    assert got["C5"].conditions[0].values == pytest.approx([0.08]) and got["C5"].conditions[1].values == \
        pytest.approx([0.09])
    assert all("no item-level interval" in c.note for cl in got.values() for c in cl.conditions)


def test_c1_not_held_when_relation_gain_is_not_the_largest_on_one_chain():
    v = good()
    c = v[("clip", 2)]
    v[("tsvlc_rbllm", 2)] = (c[0] + 0.02, c[1] + 0.12, c[2] + 0.10, 0.39)  # Attribute gain 0.12 > 0.10
    got = verdicts(v)["C1"]
    assert not got.held
    rel_attr = got.conditions[1]
    assert rel_attr.values == pytest.approx([0.05, 0.05, -0.02])
    assert not rel_attr.held  # the worst chain decides
    assert got.conditions[0].held


def test_c1_not_held_when_a_rival_ties_and_when_one_is_missing():
    v = good()
    v[("tsvlc_rb", 0)] = (0.81, 0.65, 0.65, 0.39)  # the same mean(A, R) as RB+LLM on b0: a tie is no gain
    assert not verdicts(v)["C1"].held
    v = good()
    del v[("tsvlc_pos", 0)]  # not run: no value, so the condition (and the claim) is not held
    got = verdicts(v)["C1"]
    pos = next(c for c in got.conditions if "Pos" in c.text)
    assert pos.values == [] and not pos.held and not got.held


def test_c2_third_of_the_gain_boundary():
    v = good()
    v[("tsvlc_noneg", 0)] = (0.80, 0.62, 0.56, 0.39)  # mean 0.59: gain 0.03 = a third of 0.09: not "less"
    got = verdicts(v)["C2"]
    assert got.conditions[1].values == pytest.approx([0.0], abs=1e-12) and not got.held
    v[("tsvlc_noneg", 0)] = (0.80, 0.615, 0.56, 0.39)  # mean 0.5875: gain 0.0275 < 0.03: held
    assert verdicts(v)["C2"].held
    v = good()
    for k in range(3):  # RB+LLM below LoRA: the first condition stops a negative gain from passing
        c = v[("tsvlc_lora", k)]
        v[("tsvlc_rbllm", k)] = (c[0], c[1] - 0.05, c[2] - 0.05, 0.39)
    v[("tsvlc_noneg", 0)] = (0.80, 0.40, 0.40, 0.39)
    got = verdicts(v)["C2"]
    assert got.conditions[1].held and not got.conditions[0].held and not got.held


def test_c3_and_c4_and_c5_not_held_cases():
    v = good()
    v[("tsvlc_combined", 1)] = (0.83, 0.64, 0.61, 0.385)  # ZS below RB+LLM's 0.39 on b1
    got = verdicts(v)["C3"]
    assert got.conditions[0].values == pytest.approx([0.005, -0.005, 0.005]) and not got.held
    v = good()
    v[("tsvlc_rb", 0)] = (0.81, 0.64, 0.62, 0.379)  # ZS drop 0.021 > 0.02
    c4 = verdicts(v)["C4"]
    rb = next(c for c in c4.conditions if c.text.startswith("21-task zero-shot mean: RB Neg"))
    assert rb.values == pytest.approx([-0.021]) and not rb.held and not c4.held
    v[("tsvlc_rb", 0)] = (0.81, 0.64, 0.62, 0.38)  # a drop of exactly 0.02 is within the bound
    assert verdicts(v)["C4"].held
    v = good()
    v[("tsvlc_full", 0)] = (0.85, 0.70, 0.70, 0.30)  # full FT better on VL-CheckList
    got = verdicts(v)["C5"]
    assert not got.conditions[0].held and got.conditions[1].held and not got.held


def test_lora_methods_come_from_params():
    params = {"methods": {"negclip": {"paper": "aro"},
                          "tsvlc_lora": {"paper": "tsvlc", "tuning": {"lora": {"rank": 4}}},
                          "tsvlc_full": {"paper": "tsvlc", "tuning": {"freeze": ["logit_scale"]}}}}
    assert K.lora_methods(params) == ("tsvlc_lora",)
    got = {c.id: c for c in K.tsvlc_claims(Evidence(long_table(good())), METHODS, K.lora_methods(params))}
    assert len(got["C4"].conditions) == 1


def test_derived_metrics_are_per_model():
    long = K.with_claim_metrics(long_table({("clip", 0): (0.9, 0.6, 0.5, 0.4)}))
    vals = dict(zip(long["key"], long["value"], strict=True))
    assert vals[K.SVLC_MEAN] == pytest.approx(0.55) and vals[K.VLC_MEAN] == pytest.approx(2.0 / 3)
    assert vals[K.REL_MINUS_ATTR] == pytest.approx(-0.1) and vals[K.REL_MINUS_OBJ] == pytest.approx(-0.4)
    assert len(K.with_claim_metrics(long)) == len(long)  # idempotent
