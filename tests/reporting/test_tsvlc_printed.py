"""TSVLC's printed values (the view of ``vlcomp/data/printed/tsvlc.csv``): spot checks against the catalog (tsvlc.md
§4.2-4.4), the printed deltas against the printed values, and the catalog's Table-3-vs-Table-1a consistency
arithmetic."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from vlcomp.reporting.papers import PAPERS
from vlcomp.reporting.papers.tsvlc import inconsistencies as I
from vlcomp.reporting.papers.tsvlc import printed as P


def _row(table, artifact: str, model: str) -> P.Row:
    found = [r for r in table if r.artifact == artifact and r.model == model]
    assert len(found) == 1, (artifact, model)
    return found[0]


@pytest.mark.parametrize(("table", "artifact", "model", "column", "text", "delta"), [
    (P.TABLE1, "TSVLC-T1a", "CLIP [57]", "object", "81.58%", ""),
    (P.TABLE1, "TSVLC-T1a", "CLIP + LoRA", "relation", "55.52%", "-7.53%"),
    (P.TABLE1, "TSVLC-T1a", "CLIP + Ours RB Neg", "zs", "54.32%", "-2.05%"),
    (P.TABLE1, "TSVLC-T1a", "CLIP + Ours RB+LLM Negs", "relation", "78.72%", "+15.67%"),
    (P.TABLE1, "TSVLC-T1a", "CLIP + Ours Combined", "attribute", "71.97%", "+4.37%"),
    (P.TABLE1, "TSVLC-T1b", "CLIP + Ours RB+LLM Negs", "attribute", "73.92%", "+6.6%"),
    (P.TABLE1, "TSVLC-T1d", "CLIP + Ours RB+LLM Negs", "relation", "71.93%", "+30.36"),
    (P.TABLE1, "TSVLC-T1f", "CyCLIP + Ours Combined", "zs", "20.44%", "-0.42%"),
    (P.TABLE1, "TSVLC-T1g", "CLIP [57]", "attribute", "67.6%", ""),
    (P.TABLE1, "TSVLC-T1g", "CLIP + Ours Combined", "relation", "66.05%", "+3.00%"),
    (P.TABLE2, "TSVLC-T2", "w/o Neg Loss", "object", "82.27%", "+0.69%"),
    (P.TABLE2, "TSVLC-T2", "w/o Neg Loss", "zs", "55.37%", "-1.00%"),
    (P.TABLE3, "TSVLC-T3", "Ours Pos", "relation/spatial", "39.20%", ""),
    (P.TABLE3, "TSVLC-T3", "Ours RB+LLM Negs", "attribute/material", "84.25%", ""),
    (P.TABLE3, "TSVLC-T3", "Ours Combined", "attribute/size", "73.35%", ""),
    (P.TABLE3, "TSVLC-T3", "Ours LLM Neg", "zs", "55.05%", ""),
])
def test_spot_checks_against_the_catalog(table, artifact, model, column, text, delta):
    cell = _row(table, artifact, model).cells[column]
    assert (cell.text, cell.delta) == (text, delta)


def test_shapes_and_parsing():
    assert [len(P.rows_of(P.TABLE1, f"TSVLC-T1{s}")) for s in "abcdefg"] == [6, 3, 2, 3, 3, 2, 3]
    assert len(P.TABLE2) == 4 and len(P.TABLE3) == 5
    assert all(set(r.cells) == {c for _, c, _ in P.T1_COLUMNS} for r in (*P.TABLE1, *P.TABLE2))
    assert all(set(r.cells) == {c for _, c, _ in P.T3_COLUMNS} for r in P.TABLE3)
    assert P.percent_fraction("80.93%") == pytest.approx(0.8093)
    assert P.percent_fraction("+11.05") == pytest.approx(0.1105) and math.isnan(P.percent_fraction(""))
    with pytest.raises(ValueError, match="not a printed percentage"):
        P.percent_fraction("n/a")
    assert P.Cell("85.09%", "+3.50%").shown == "85.09% (+3.50%)"
    # rows of Table 2 repeat Table 1a
    for method in ("clip", "tsvlc_lora", "tsvlc_rbllm"):
        t2, t1a = P.printed_row(P.TABLE2, "TSVLC-T2", method), P.printed_row(P.TABLE1, "TSVLC-T1a", method)
        assert t2.cells == t1a.cells
    # the toy methods of the printed rows: the report's methods and the base models' evaluations; every row has one
    from vlcomp.config import load_params
    from vlcomp.reporting.collect import methods_of

    params = load_params(Path(__file__).resolve().parents[2] / "params.yaml")
    methods = set(methods_of(params, "tsvlc").order) | {"clip_vit", "clip_cyclip"}
    assert {r.method for r in (*P.TABLE1, *P.TABLE2, *P.TABLE3)} <= methods
    assert set(P.SECTIONS) == {f"TSVLC-T1{s}" for s in "abcdefg"}


def test_printed_deltas_match_the_printed_values_up_to_the_catalog_flags():
    """Each delta = row - the section's first row, to 0.01 (catalog: rounding); (f) ZS is the one real
    error."""
    off = []
    for sec in "abcdefg":
        rows = P.rows_of(P.TABLE1, f"TSVLC-T1{sec}")
        for r in rows[1:]:
            for cid, cell in r.cells.items():
                recomputed = 100 * (cell.value - rows[0].cells[cid].value)
                if abs(recomputed - 100 * cell.delta_value) > 0.011:
                    off.append((sec, r.model, cid, round(recomputed, 2), cell.delta))
    assert off == [("f", "CyCLIP + Ours Combined", "zs", -0.58, "-0.42%")]


def test_table3_against_table1a_as_the_catalog_derives():
    df = P.table3_check().set_index("row (Table 3)")
    assert df.loc["Ours Pos", "T3 Attribute mean of 5"] == pytest.approx(67.366)
    assert df.loc["Ours Pos", "T3 Relation mean of 2"] == pytest.approx(55.085)
    assert df.loc["Ours Pos", "Attribute agrees"] == "not in T1a"
    assert df.loc["Ours RB Neg", "T3 Attribute mean of 5"] == pytest.approx(73.352)
    assert df.loc["Ours RB+LLM Negs", "T3 Relation mean of 2"] == pytest.approx(78.715)
    assert df.loc["Ours Combined", "T3 Relation mean of 2"] == pytest.approx(68.95)
    assert list(df["Attribute agrees"]) == ["not in T1a", "yes", "yes", "yes", "yes"]
    assert list(df["Relation agrees"]) == ["not in T1a", "yes", "yes", "yes", "yes"]  # 78.715 -> 78.72 agrees
    assert list(df["ZS agrees"]) == ["not in T1a", "NO", "NO", "yes", "yes"]  # 54.66 vs 54.32, 55.05 vs 55.60
    assert df.loc["Ours LLM Neg", "T1a ZS"] == pytest.approx(55.60)


def test_every_inconsistency_is_shown_beside_a_rendered_artifact_or_claim():
    rendered = set(PAPERS.get("tsvlc").artifacts) | {f"TSVLC-C{i}" for i in range(1, 6)} | {"TSVLC-F4"}
    assert [i.number for i in I.INCONSISTENCIES] == list(range(1, len(I.INCONSISTENCIES) + 1))
    assert all(set(i.artifacts) & rendered for i in I.INCONSISTENCIES)
    assert [i.number for i in I.concerning(["TSVLC-T2"])] == [6, 14, 18]
    assert I.notes(["TSVLC-T1f"])[1].startswith("*Paper inconsistency (tsvlc.md §5 #3, Sec. 1):*")
