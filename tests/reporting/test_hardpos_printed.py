"""Hard Positives' printed values (``vlcomp/data/printed/hardpos.csv`` and its view
``vlcomp.reporting.papers.hard_positives.printed``): every cell of the catalog's tables (hard_positives.md §4) by
count and by spot check, the group encoding and unit rule of ``printed_values``, the catalog's derived numbers
(HP-N1..N4, the REPLACE pooling check) recomputed by hand, and the released-checkpoint view unchanged from the file
that held only the released checkpoints' numbers (its 68 rows, kept below as they were)."""

from __future__ import annotations

import io
import json
import math

import pandas as pd
import pytest
import yaml

from vlcomp.reporting import printed_values as PV
from vlcomp.reporting import released_values as R
from vlcomp.reporting.papers.aro import real as A
from vlcomp.reporting.papers.hard_positives import printed as P

OFF = "Printed delta is off by 0.1"


@pytest.fixture(scope="module")
def printed() -> pd.DataFrame:
    return PV.load_printed("hardpos", check_row=P._check_row)


# --------------------------------------------------------------------------- the file, every cell


def test_the_whole_file_loads_with_the_views_check(printed):
    assert len(printed) == 549
    assert printed.groupby("artifact", sort=False).size().to_dict() == {
        "HP-T1": 108, "HP-T2": 9, "HP-T3": 68, "HP-T4": 14, "HP-T5": 13, "HP-T6": 10, "HP-T7": 108, "HP-T8": 124,
        "HP-T9": 18, "HP-T10": 32, "HP-F1": 9, "HP-F3": 36}
    assert not printed.duplicated(list(PV.KEY_COLUMNS)).any()
    assert (printed["std"].isna()).all()


# catalog: rows x columns, and 2 deltas per model row (none for Random Chance / Human Estimate)
@pytest.mark.parametrize(("table", "rows", "columns", "delta_rows"), [
    ("TABLE1", 14, 6, 12), ("TABLE3", 9, 6, 7), ("TABLE7", 14, 6, 12), ("TABLE8", 16, 6, 14), ("TABLE10", 4, 8, 0),
    ("TABLE2", 3, 3, 0), ("TABLE9", 9, 2, 0), ("TABLE4", 14, 1, 0), ("TABLE5", 13, 1, 0), ("TABLE6", 10, 1, 0),
])
def test_every_cell_of_each_table_is_present(printed, table, rows, columns, delta_rows):
    found = getattr(P, table)
    assert len(found) == rows
    assert all(len(r.cells) == columns and all(c.text for c in r.cells.values()) for r in found)
    assert sum(bool(c.delta) for r in found for c in r.cells.values()) == 2 * delta_rows
    assert (printed["artifact"] == found[0].artifact).sum() == rows * columns + 2 * delta_rows


def test_figures_every_score():
    assert [(r.example, r.name) for r in P.FIGURE1] == [("grass", "CLIP"), ("grass", "Hard-Negative Finetuned"),
                                                       ("grass", "Ours")]
    assert sorted({r.example for r in P.FIGURE3}) == ["book", "cow", "hair", "plane"] and len(P.FIGURE3) == 12
    assert all(set(r.cells) == {"s_c", "s_n", "s_p"} for r in (*P.FIGURE1, *P.FIGURE3))
    assert P.figure_frame("grass").to_dict("records") == [
        {"caption": "c: brown grass", "CLIP": "0.236", "Hard-Negative Finetuned": "0.152", "Ours": "0.240"},
        {"caption": "c_n: blue grass", "CLIP": "0.240", "Hard-Negative Finetuned": "0.143", "Ours": "0.231"},
        {"caption": "c_p: chestnut grass", "CLIP": "0.249", "Hard-Negative Finetuned": "0.134", "Ours": "0.241"}]
    cow = P.figure_frame("cow").set_index("caption")
    assert cow.loc["c_p: upright cow"].to_dict() == {"CLIP": "0.217", "DAC-LLM": "0.140", "Ours": "0.246"}
    book = P.printed_row(P.FIGURE3, "CLIP", "book").cells["s_p"]
    assert (book.text, book.value, book.unit) == ("0.24", 0.24, PV.SCORE)  # printed with two decimals, kept
    assert P.printed_row(P.FIGURE3, "Ours", "hair").cells["s_n"].text == "0.257"
    assert P.printed_row(P.FIGURE3, "DAC-LLM", "plane").method is None


T1_ROWS = [  # (group, printed row, toy method): catalog Table 1
    ("(a)", "CLIP ViT-B/32", "clip"), ("(b)", "NegCLIP", "negclip"), ("(b)", "CREPE-Swap", None),
    ("(b)", "CREPE-Replace", None), ("(b)", "SVLC", "tsvlc_rbllm"), ("(b)", "SVLC+Pos", "tsvlc_combined"),
    ("(b)", "DAC-LLM", None), ("(b)", "DAC-SAM", None), ("(c)", "Our HN", "hn_only"), ("(c)", "Our HP+HN", "hp_hn"),
    ("(d)", "Our HP+HN (Swap-only)", "hp_hn_swap"), ("(d)", "Our HP+HN (Replace-only)", "hp_hn_replace"),
    ("", "Random Chance", "chance"), ("", "Human Estimate", "human")]


def test_rows_in_the_papers_order_with_group_letters_and_toy_methods():
    assert [(r.section, r.name, r.method) for r in P.TABLE1] == T1_ROWS
    assert [(r.section, r.name, r.method) for r in P.TABLE7] == T1_ROWS  # (c/d) of the extraction: as Table 1
    assert [(r.section, r.name, r.method) for r in P.TABLE3] == [
        ("(a)", "CLIP ViT-B/32", "clip"), ("(b)", "0 HN", "hp_only"), ("(b)", "0.25 HN", "hp_hn_w25"),
        ("(b)", "0.50 HN", "hp_hn_w50"), ("(b)", "0.75 HN", "hp_hn_w75"), ("(c)", "Our HN", "hn_only"),
        ("(c)", "Our HP+HN", "hp_hn"), ("", "Random Chance", "chance"), ("", "Human Estimate", "human")]
    assert [(r.section, r.method) for r in P.TABLE8] == [
        ("(a)", "clip"), ("(b)", "clip_vit"), *[("(b)", None)] * 4, ("(c)", None), *[("(d)", None)] * 3,
        *[("(e)", None)] * 3, ("(f)", None), ("", "chance"), ("", "human")]
    assert [r.name for r in P.TABLE8][1:6] == ["CLIP ViT-B/16", "CLIP ViT-L/14", "OpenCLIP ViT-H/14",
                                               "OpenCLIP ViT-g/14", "OpenCLIP ViT-G/14"]
    assert [(r.section, r.name, r.method) for r in P.TABLE10] == [
        ("(a)", "CLIP ViT-B/32", "clip"), ("(b)", "CLIP-COCO", "clip_ft"), ("(c)", "Our HN", "hn_only"),
        ("(c)", "Our HP+HN", "hp_hn")]
    assert [(r.name, r.method) for r in P.TABLE2] == [("CLIP ViT-B/32", "clip"), ("DAC-LLM", None),
                                                      ("Ours (HP+HN)", "hp_hn")]
    assert [r.name for r in P.TABLE9] == ["CLIP", "NegCLIP", "CREPE-Swap", "CREPE-Repl.", "SVLC", "SVLC+Pos",
                                          "DAC-LLM", "DAC-SAM", "Ours"]
    assert [(r.name, r.replacement) for r in P.TABLE4][8:] == [
        ("wearing, wears", "in"), ("holding", "grasping"), ("sitting", "seated"), ("hanging", "dangling"),
        ("walking", "strolling"), ("riding on", "traveling on")]


@pytest.mark.parametrize(("table", "name", "column", "text", "delta"), [
    ("TABLE1", "CLIP ViT-B/32", "replace/aug", "46.8", "-14.9"),
    ("TABLE1", "CREPE-Swap", "replace/brittleness", "19.8", ""),
    ("TABLE1", "DAC-LLM", "replace/aug", "48.9", "-38.7"),
    ("TABLE1", "DAC-SAM", "replace/orig", "86.9", ""),
    ("TABLE1", "Our HP+HN (Swap-only)", "swap/aug", "61.9", "-11.2"),
    ("TABLE1", "Our HP+HN (Replace-only)", "swap/brittleness", "26.5", ""),
    ("TABLE1", "Random Chance", "replace/aug", "33.3", ""),
    ("TABLE1", "Human Estimate", "swap/brittleness", "0", ""),
    ("TABLE3", "0 HN", "replace/brittleness", "15.8", ""),
    ("TABLE3", "0.75 HN", "swap/aug", "61.0", "-11.9"),
    ("TABLE7", "SVLC", "replace_att/brittleness", "37.3", ""),
    ("TABLE7", "Our HP+HN", "replace_att/aug", "67.7", "-6.7"),
    ("TABLE7", "DAC-SAM", "replace_rel/aug", "59.6", "-29.5"),
    ("TABLE7", "Human Estimate", "replace_att/orig", "100", ""),
    ("TABLE8", "RoBERTa-CLIP ViT-B/32", "swap/aug", "29.4", "-19.3"),
    ("TABLE8", "XVLM-16M*", "swap/brittleness", "8.1", ""),
    ("TABLE8", "CLIP-RN101", "swap/aug", "52.0", "-9.9"),
    ("TABLE10", "CLIP ViT-B/32", "flickr30k/text", "77.40", ""),
    ("TABLE10", "CLIP-COCO", "coco/image", "50.34", ""),
    ("TABLE10", "Our HP+HN", "vtab/acc5", "67.75", ""),
    ("TABLE10", "Our HN", "imagenet/acc", "50.40", ""),
    ("TABLE2", "DAC-LLM", "s_c", "0.160", ""),
    ("TABLE2", "Ours (HP+HN)", "s_n", "0.220", ""),
    ("TABLE9", "DAC-LLM", "replace", "0.157", ""),
    ("TABLE9", "Ours", "swap", "0.247", ""),
    ("TABLE4", "in", "n", "6173", ""),
    ("TABLE5", "silver", "n", "242", ""),
    ("TABLE6", "huge", "n", "31", ""),
])
def test_spot_checks_against_the_catalog(table, name, column, text, delta):
    cell = P.printed_row(getattr(P, table), name).cells[column]
    assert (cell.text, cell.delta) == (text, delta)


def test_units_values_and_the_printed_view():
    cell = P.printed_row(P.TABLE1, "CLIP ViT-B/32").cells["replace/aug"]
    assert (cell.value, cell.delta_value) == pytest.approx((0.468, -0.149), rel=1e-15)
    assert (cell.unit, cell.shown) == (PV.PERCENT, "46.8 (-14.9)")
    assert P.printed_row(P.TABLE1, "Human Estimate").cells["swap/orig"].value == 1.0
    s_c = P.printed_row(P.TABLE2, "CLIP ViT-B/32").cells["s_c"]
    assert (s_c.value, s_c.unit) == (0.234, PV.SCORE)
    n = P.printed_row(P.TABLE4, "in").cells["n"]
    assert (n.value, n.unit) == (6173, PV.COUNT)
    assert math.isnan(P.printed_row(P.TABLE1, "Random Chance").cells["replace/aug"].delta_value)
    frame = P.printed_frame(P.TABLE1).set_index("model (paper)")
    assert frame.loc["SVLC", "SWAP Aug."] == "61.6 (-10.9)" and frame.loc["SVLC", "method"] == "tsvlc_rbllm"
    assert frame.loc["Random Chance", "group"] == "" and frame.loc["Random Chance", "REPLACE Aug."] == "33.3"
    assert P.printed_frame(P.TABLE5).iloc[6][["model (paper)", "replacement", "Freq."]].tolist() == [
        "white", "ivory", "2742"]


def test_repeated_rows_repeat_table_1(printed):
    for table, names in (("TABLE3", ("CLIP ViT-B/32", "Our HN", "Our HP+HN")), ("TABLE8", ("CLIP ViT-B/32",))):
        for name in (*names, "Random Chance", "Human Estimate"):
            assert P.printed_row(getattr(P, table), name).cells == P.printed_row(P.TABLE1, name).cells, (table, name)


def test_the_catalogs_caveats_are_in_the_notes(printed):
    def note(artifact: str, row: str, metric: str) -> str:
        rows = printed["group"].map(lambda g: PV.hardpos_row(g)["row"])
        hit = printed[(printed["artifact"] == artifact) & (rows == row) & (printed["metric"] == metric)]
        assert len(hit) == 1, (artifact, row, metric)
        return hit["note"].iloc[0]

    for m in ("orig", "aug", "delta", "brittleness"):
        assert "86.9 / 55.9 (-31.0) / 32.5" in note("HP-T1", "DAC-SAM", f"hardpos/replace/{m}")
    assert "brittleness of 22.5" in note("HP-T1", "Our HN", "hardpos/replace/brittleness")
    assert "brittleness of 22.5" in note("HP-T3", "Our HN", "hardpos/replace/brittleness")
    assert "22.5" not in note("HP-T1", "Our HN", "hardpos/replace/orig")
    assert "looks copied" in note("HP-T7", "Human Estimate", "hardpos/replace_rel/orig")
    assert "(d) on Replace-only" in note("HP-T7", "Our HP+HN (Swap-only)", "hardpos/replace_att/aug")
    assert "0.157" in note("HP-T2", "DAC-LLM", "hardpos/replace/mean_s_c")
    assert "0.160" in note("HP-T9", "DAC-LLM", "hardpos/replace/mean_s_c")
    assert "0.231" in note("HP-T2", "Ours (HP+HN)", "hardpos/replace/mean_s_c")
    assert "presumably Our HP+HN" in note("HP-T9", "Ours", "hardpos/swap/mean_s_c")
    assert "24 attributes" in note("HP-T6", "young", "hardpos/replace_att/n")
    assert "VTAB stand-in: the ELEVATER twin" in note("HP-T10", "Our HN", "zeroshot/elevater/mean_acc5")
    assert "clip.tokenize" in note("HP-T8", "RoBERTa-CLIP ViT-B/32", "hardpos/swap/aug")
    assert "TSVLC-T1b" in note("HP-T8", "CLIP ViT-B/16", "hardpos/replace/orig")
    assert "overlap" in note("HP-T10", "CLIP-COCO", "retrieval/coco/t2i/recall_at_1")
    assert "teaser.jpg" in note("HP-F1", "Hard-Negative Finetuned", "hardpos/figure/grass/s_p")
    assert "SVLC = TSVLC's released" in note("HP-T9", "SVLC", "hardpos/swap/mean_s_c")


# --------------------------------------------------------------------------- the derived numbers


def test_printed_deltas_against_the_printed_values():
    """Table 1: off by 0.1 exactly where the catalog says (CLIP and NegCLIP REPLACE, SVLC and Swap-only SWAP); the
    file's "off by 0.1" note is on exactly the deltas that are off, in every table."""
    t1 = P.delta_check(P.TABLE1)
    assert len(t1) == 24
    assert t1[t1["off"]][["model (paper)", "column", "recomputed", "printed"]].values.tolist() == [
        ["CLIP ViT-B/32", "replace", -14.8, -14.9], ["NegCLIP", "replace", -16.5, -16.6],
        ["SVLC", "swap", -10.8, -10.9], ["Our HP+HN (Swap-only)", "swap", -11.1, -11.2]]
    every = pd.concat([P.delta_check(t) for t in (P.TABLE1, P.TABLE3, P.TABLE7, P.TABLE8)], ignore_index=True)
    assert (abs(every["recomputed"] - every["printed"]) < 0.1 + 1e-9).all()  # never more than 0.1
    off = {(r.artifact, r.model, r.column) for r in every[every["off"]].rename(
        columns={"model (paper)": "model"}).itertuples()}
    noted = set()
    for r in PV.load_printed("hardpos").itertuples():
        if OFF in r.note:
            noted.add((r.artifact, PV.hardpos_row(r.group)["row"], r.metric.split("/")[1]))
    assert off == noted and len(off) == 19


def test_hp_n1_n2_n3_n4_as_the_catalog_computes_them():
    df = P.derived_numbers()
    assert list(df.columns) == list(P.DERIVED_COLUMNS)
    got = dict(zip(df["what"], zip(df["computed"], df["rounded"], df["agrees"], strict=True), strict=True))
    expected = {
        # HP-N1: the printed deltas; (14.9 + 10.9) / 2; DAC-LLM REPLACE; (97 + 100) / 2 = 98.5 -> 99
        "CLIP drop on REPLACE (Table 1 delta)": (14.9, "14.9", True),
        "CLIP drop on SWAP (Table 1 delta)": (10.9, "10.9", True),
        "CLIP mean drop over REPLACE and SWAP": (12.9, "12.9", True),
        "largest prior-model drop (DAC-LLM, REPLACE)": (38.7, "38.7", True),
        "human estimate, mean of REPLACE and SWAP": (98.5, "99", True),
        # HP-N2: 170.6 / 7, 87.4 / 7, (25.4 + 20.8 + 22.8 + 21.6 + 25.6) / 5, (21.5 + 19.8) / 2
        "prior models' mean drop on REPLACE": (170.6 / 7, "24.4", True),
        "prior models' mean drop on SWAP": (87.4 / 7, "12.5", True),
        "REPLACE-trained models' mean SWAP brittleness": (23.24, "23.2", True),
        "SWAP-trained models' mean REPLACE brittleness": (20.65, "20.7", True),
        # HP-N3: 0.429 / 14 and (0.003 + 0.008) / 2
        "prior models' mean s(c) reduction (7 models x 2 benchmarks)": (0.429 / 14, "0.031", True),
        "Ours' mean s(c) reduction (2 benchmarks)": (0.0055, "0.006", True),
        # HP-N4: 6.7, and the "24.7" candidates 175.9 / 7, 195.0 / 8, 170.6 / 7: none is 24.7
        "Our HP+HN Attributes drop (Table 7 delta)": (6.7, "6.7", True),
        "candidate: 7 prior models' mean Attributes drop (Table 7)": (175.9 / 7, "25.1", False),
        "candidate: the same with CLIP (8 models, Table 7)": (24.375, "24.4", False),
        "candidate: 7 prior models' mean REPLACE (pooled) drop (Table 1)": (170.6 / 7, "24.4", False),
    }
    assert set(got) == set(expected)
    for what, (computed, rounded, agrees) in expected.items():
        assert got[what][0] == pytest.approx(computed, abs=1e-12), what
        assert got[what][1:] == (rounded, agrees), what
    assert (df.loc[df["what"].str.startswith("candidate"), "printed"] == "24.7").all()


def test_mean_s_c_reductions_only_crepe_swap_lowers_less_than_ours():
    df = P.mean_s_c_reductions().set_index("model (paper)")
    assert df.loc["DAC-LLM"].tolist()[1:] == pytest.approx([0.234 - 0.157, 0.255 - 0.132, 0.1])
    assert df.loc["Ours", "mean"] == pytest.approx(0.0055)
    assert list(df.index[df["mean"] < df.loc["Ours", "mean"]]) == ["CREPE-Swap"]


def test_replace_pooling_check_flags_dac_sam_and_our_hn_brittleness():
    df = P.replace_pooling_check()
    assert len(df) == 12 * 4
    clip = df[df["model (paper)"] == "CLIP ViT-B/32"].set_index("measure")
    assert clip.loc["orig", "pooled"] == pytest.approx((57.6 * 16868 + 68.1 * 10575) / 27443)  # 61.65
    assert round(clip.loc["orig", "pooled"], 2) == 61.65 and clip["agrees"].all()
    flagged = df[~df["agrees"]]
    assert [(r["model (paper)"], r["measure"]) for _, r in flagged.iterrows()] == [
        ("DAC-SAM", "orig"), ("DAC-SAM", "aug"), ("DAC-SAM", "delta"), ("DAC-SAM", "brittleness"),
        ("Our HN", "brittleness")]
    assert [round(x, 1) for x in flagged["pooled"]] == [88.3, 58.2, -30.1, 31.7, 22.5]  # catalog: 88.3/58.2/31.7, 22.5
    assert flagged["equals_attributes"].all()  # Table 1 prints Table 7's Attributes numbers there
    dac_sam_aug = flagged.iloc[1]["pooled"]
    assert dac_sam_aug > P.printed_row(P.TABLE1, "Our HP+HN").cells["replace/aug"].value * 100  # 58.2 > 58.0


def test_frequency_sums_against_the_stated_sizes():
    df = P.frequency_sums()
    got = {(a, t): (w, n) for a, t, w, n in df[["artifact", "type", "words", "instances"]].itertuples(index=False)}
    assert got == {("HP-T4", "spatial"): (8, 10350), ("HP-T4", "action"): (6, 6518), ("HP-T5", "action"): (6, 402),
                   ("HP-T5", "colour"): (7, 8556), ("HP-T6", "size"): (5, 1377), ("HP-T6", "state"): (5, 237),
                   ("HP-T4", "Relations"): (14, 16868), ("HP-T5+T6", "Attributes"): (23, 10572)}
    stated = df.set_index("type")["stated"]
    assert (stated["Relations"], stated["Attributes"]) == (16868, 10575)  # 10,572 listed: AMBIGUOUS (catalog 2.2)


# --------------------------------------------------------------------------- the schema: group encoding, units

HEADER = ",".join(PV.COLUMNS) + "\n"
GOOD = "hardpos,HP-T1,Table 1,negclip,replace,row=NegCLIP; section=b,hardpos/replace/orig,68.6,0.686,,\n"


def test_hardpos_group_encoding():
    assert PV.hardpos_row("row=NegCLIP; section=b") == {"row": "NegCLIP", "section": "b"}
    assert PV.hardpos_row("row=Human Estimate") == {"row": "Human Estimate"}
    assert PV.hardpos_row("row=wearing, wears; replacement=in") == {"row": "wearing, wears", "replacement": "in"}
    for bad in ("", "NegCLIP", "section=b; row=NegCLIP", "row=NegCLIP; section=g", "row=; section=b",
                "row=NegCLIP; section=b; section=c", "row=NegCLIP; arch=ViT", "row=in; replacement=within; section=a"):
        with pytest.raises(ValueError, match="group"):
            PV.hardpos_row(bad)


def test_unit_rule_by_the_keys_last_component():
    assert PV.unit_of("hardpos", "hardpos/replace/orig") == PV.PERCENT
    assert PV.unit_of("hardpos", "hardpos/replace/delta") == PV.PERCENT
    assert PV.unit_of("hardpos", "hardpos/replace/mean_s_c") == PV.SCORE
    assert PV.unit_of("hardpos", "hardpos/figure/cow/s_p") == PV.SCORE
    assert PV.unit_of("hardpos", "hardpos/replace_rel/n") == PV.COUNT
    assert PV.unit_of("aro", "n_samples") == PV.FRACTION and PV.unit_of("tsvlc", "vlchecklist/object/avg") == PV.PERCENT
    assert PV.exact_value("0.160", PV.SCORE) == PV.exact_value("0.16", PV.FRACTION)
    with pytest.raises(ValueError, match="unknown paper"):
        PV.unit_of("negclip", "x")


@pytest.mark.parametrize(("bad", "fragment"), [
    (GOOD.replace("row=NegCLIP; section=b", ""), "is not 'row=..."),
    (GOOD.replace("section=b", "section=x"), "section must be one of"),
    (GOOD.replace("hardpos/replace/orig,68.6,0.686", "hardpos/replace/mean_s_c,0.234,0.00234"), "does not match"),
    (GOOD.replace("hardpos/replace/orig,68.6,0.686", "hardpos/replace/mean_s_c,1.5,1.5"), "outside [-1, 1]"),
    (GOOD.replace("hardpos/replace/orig,68.6,0.686", "hardpos/replace/mean_s_c,23.4%,0.234"), "unparseable text"),
    (GOOD.replace("hardpos/replace/orig,68.6,0.686", "hardpos/replace_rel/n,61.5,61.5"), "is not a count"),
    (GOOD.replace("hardpos/replace/orig,68.6,0.686", "hardpos/replace_rel/n,-3,-3"), "is not a count"),
    (GOOD.replace("hardpos/replace/orig,68.6,0.686", "hardpos/replace_rel/n,6173,61.73"), "does not match"),
])
def test_a_bad_hardpos_row_names_the_file_and_line(bad, fragment):
    with pytest.raises(ValueError, match=r"bad\.csv: line 3\b") as err:
        PV.parse_printed(io.StringIO(HEADER + GOOD + bad), "bad.csv", "hardpos")
    assert fragment in str(err.value)


@pytest.mark.parametrize(("bad", "fragment"), [
    (GOOD.replace("HP-T1", "HP-T11"), "unknown artifact"),
    (GOOD.replace("hardpos/replace/orig,", "hardpos/replace_rel/orig,"), "no column of HP-T1"),
    (GOOD.replace(",replace,row", ",swap,row"), "is not the benchmark"),
    (GOOD.replace(",negclip,", ",dac_llm,"), "no toy method"),
    (GOOD.replace("; section=b", ""), "a group letter missing"),
    (GOOD.replace("NegCLIP; section=b", "NegCLIP; section=b; replacement=x"), "a replacement only in"),
    (GOOD.replace("0.686,,", "0.686,0.01,"), "std must be empty"),
    ("hardpos,HP-T1,Table 1,chance,replace,row=Random Chance; section=a,hardpos/replace/orig,50.0,0.5,,\n",
     "a group letter not printed"),
    ("hardpos,HP-F3,Figure 3,clip,replace,row=CLIP,hardpos/figure/grass/s_c,0.236,0.236,,\n", "no column of HP-F3"),
])
def test_the_views_check(bad, fragment):
    with pytest.raises(ValueError, match=r"bad\.csv: line 3\b") as err:
        PV.parse_printed(io.StringIO(HEADER + GOOD + bad), "bad.csv", "hardpos", P._check_row)
    assert fragment in str(err.value)


def test_dataset_of_every_key_family():
    assert P.dataset_of("hardpos/replace_att/n") == "replace" and P.dataset_of("hardpos/swap/mean_s_c") == "swap"
    assert P.dataset_of("zeroshot/imagenet/acc5") == "zeroshot_aro"
    assert P.dataset_of("zeroshot/elevater/mean_acc5") == "zeroshot_elevater"
    assert P.dataset_of("retrieval/flickr30k/i2t/recall_at_1") == "flickr_retrieval"
    assert P.dataset_of("hardpos/figure/hair/s_c") == "swap" and P.dataset_of("hardpos/figure/cow/s_c") == "replace"
    with pytest.raises(ValueError, match="no benchmark"):
        P.dataset_of("hardpos/figure/dog/s_c")


def test_the_toy_keys_are_the_benchmarks_keys():
    """The REPLACE / SWAP / zero-shot / retrieval keys are the ones the benchmarks write (the raw-score keys are
    the paper's own: no benchmark writes a mean score; the frequencies are the twin's per-word counts to come)."""
    from vlcomp.benchmarks.hardpos import REPLACE_PARTS

    parts = {k.split("/")[1] for k in P._keys("HP-T1") | P._keys("HP-T7")}
    assert parts == {"replace", "swap", *REPLACE_PARTS}
    measures = {k.split("/")[2] for k in P._keys("HP-T1") | P._keys("HP-T7")}
    assert measures == {"orig", "aug", "delta", "brittleness"}


# --------------------------------------------------------------------------- the released view, unchanged

def _old_released() -> pd.DataFrame:
    old = pd.read_csv(io.StringIO(OLD_HARDPOS_CSV), dtype=str, keep_default_na=False)
    return pd.DataFrame({"paper": old["paper"], "artifact": old["artifact"], "model": old["model"],
                         "benchmark": old["dataset"], "metric_key": old["metric"], "value": old["value"].astype(float),
                         "source": old["source"], "note": old["note"]})


def test_the_released_view_of_the_new_file_is_the_old_files_rows():
    values = R.load_released_paper_values()
    hardpos = values[values["paper"] == "hardpos"].reset_index(drop=True)
    assert len(hardpos) == 68
    pd.testing.assert_frame_equal(hardpos, _old_released())  # same rows, order, values, sources and notes
    assert hardpos.groupby("artifact", sort=False).size().to_dict() == {
        "HP-T1": 24, "HP-T3": 8, "HP-T8": 8, "HP-T7": 24, "HP-T10": 4}


def test_the_released_comparison_is_unchanged(tmp_path):
    root = tmp_path / "tree"
    for name, metrics in (("clip", {"hardpos/replace/orig": 0.63}), ("negclip-s0", {"hardpos/swap/aug": 0.5})):
        (root / "metrics" / name).mkdir(parents=True)
        (root / "metrics" / name / "metrics.json").write_text(json.dumps(metrics))
        (root / "metrics" / name / "provenance.json").write_text(json.dumps({"model": name, "profile": "real"}))
    (root / "params.yaml").write_text(yaml.safe_dump({"profile": "real", "variants": {
        "negclip-s0": {"method": "negclip", "seed": 0}}, "released_models": {"clip": {}, "negclip": {}, "tsvlc": {}}}))
    tree = A.load(root / "metrics", root / "params.yaml")
    old = _old_released()
    new = R.released_comparison(tree, "hardpos")
    pd.testing.assert_frame_equal(new, R.released_comparison(tree, "hardpos", values=old))
    assert new["reproduced"].notna().sum() == 4  # CLIP REPLACE Orig in Tables 1, 3, 8; NegCLIP SWAP Aug
    assert R.paper_note_lines(new) == R.paper_note_lines(R.released_comparison(tree, "hardpos", values=old))


def test_a_hardpos_file_on_disk_keeps_only_released_rows(tmp_path):
    path = tmp_path / "hardpos.csv"
    path.write_text(HEADER + GOOD + GOOD.replace("negclip,replace,row=NegCLIP", "hn_only,replace,row=Our HN")
                    .replace("section=b", "section=c")
                    + "hardpos,HP-T9,Table 9,clip,replace,row=CLIP,hardpos/replace/mean_s_c,0.234,0.234,,\n")
    df = R.load_released_paper_values({"hardpos": path})
    hardpos = df[df["paper"] == "hardpos"]
    assert hardpos[["artifact", "model", "metric_key", "value"]].values.tolist() == [
        ["HP-T1", "negclip", "hardpos/replace/orig", 0.686]]


# The 68 rows hardpos.csv held before it held every printed number (git show 9d7bbf7:src/vlcomp/data/printed/
# hardpos.csv): the numbers of the released checkpoints, named by released_models keys, no group.
OLD_HARDPOS_CSV = """\
paper,artifact,source,model,dataset,group,metric,text,value,std,note
hardpos,HP-T1,Table 1,clip,replace,,hardpos/replace/orig,61.6,0.616,,"CLIP ViT-B/32. | REPLACE pools Relations and Attributes over instances (16,868 + 10,575; catalog 2.4, inferred from Table 7)."
hardpos,HP-T1,Table 1,clip,replace,,hardpos/replace/aug,46.8,0.468,,"CLIP ViT-B/32. | REPLACE pools Relations and Attributes over instances (16,868 + 10,575; catalog 2.4, inferred from Table 7)."
hardpos,HP-T1,Table 1,clip,replace,,hardpos/replace/delta,-14.9,-0.149,,"CLIP ViT-B/32. | REPLACE pools Relations and Attributes over instances (16,868 + 10,575; catalog 2.4, inferred from Table 7). | Printed delta is off by 0.1 from the difference of the rounded values (computed before rounding)."
hardpos,HP-T1,Table 1,clip,swap,,hardpos/swap/orig,60.5,0.605,,CLIP ViT-B/32.
hardpos,HP-T1,Table 1,clip,swap,,hardpos/swap/aug,49.6,0.496,,CLIP ViT-B/32.
hardpos,HP-T1,Table 1,clip,swap,,hardpos/swap/delta,-10.9,-0.109,,CLIP ViT-B/32.
hardpos,HP-T1,Table 1,clip,replace,,hardpos/replace/brittleness,23.2,0.232,,"CLIP ViT-B/32. | REPLACE pools Relations and Attributes over instances (16,868 + 10,575; catalog 2.4, inferred from Table 7)."
hardpos,HP-T1,Table 1,clip,swap,,hardpos/swap/brittleness,21.7,0.217,,CLIP ViT-B/32.
hardpos,HP-T1,Table 1,negclip,replace,,hardpos/replace/orig,68.6,0.686,,"REPLACE pools Relations and Attributes over instances (16,868 + 10,575; catalog 2.4, inferred from Table 7)."
hardpos,HP-T1,Table 1,negclip,replace,,hardpos/replace/aug,52.1,0.521,,"REPLACE pools Relations and Attributes over instances (16,868 + 10,575; catalog 2.4, inferred from Table 7)."
hardpos,HP-T1,Table 1,negclip,replace,,hardpos/replace/delta,-16.6,-0.166,,"REPLACE pools Relations and Attributes over instances (16,868 + 10,575; catalog 2.4, inferred from Table 7). | Printed delta is off by 0.1 from the difference of the rounded values (computed before rounding)."
hardpos,HP-T1,Table 1,negclip,swap,,hardpos/swap/orig,70.9,0.709,,
hardpos,HP-T1,Table 1,negclip,swap,,hardpos/swap/aug,56.7,0.567,,
hardpos,HP-T1,Table 1,negclip,swap,,hardpos/swap/delta,-14.2,-0.142,,
hardpos,HP-T1,Table 1,negclip,replace,,hardpos/replace/brittleness,21.5,0.215,,"REPLACE pools Relations and Attributes over instances (16,868 + 10,575; catalog 2.4, inferred from Table 7)."
hardpos,HP-T1,Table 1,negclip,swap,,hardpos/swap/brittleness,26.4,0.264,,
hardpos,HP-T1,Table 1,tsvlc,replace,,hardpos/replace/orig,76.6,0.766,,"SVLC = TSVLC's released RB+LLM-negatives checkpoint (svlc_llm_and_rb_negs, LoRA r=4), presumably the adapter our tsvlc loads. | REPLACE pools Relations and Attributes over instances (16,868 + 10,575; catalog 2.4, inferred from Table 7)."
hardpos,HP-T1,Table 1,tsvlc,replace,,hardpos/replace/aug,44.5,0.445,,"SVLC = TSVLC's released RB+LLM-negatives checkpoint (svlc_llm_and_rb_negs, LoRA r=4), presumably the adapter our tsvlc loads. | REPLACE pools Relations and Attributes over instances (16,868 + 10,575; catalog 2.4, inferred from Table 7)."
hardpos,HP-T1,Table 1,tsvlc,replace,,hardpos/replace/delta,-32.1,-0.321,,"SVLC = TSVLC's released RB+LLM-negatives checkpoint (svlc_llm_and_rb_negs, LoRA r=4), presumably the adapter our tsvlc loads. | REPLACE pools Relations and Attributes over instances (16,868 + 10,575; catalog 2.4, inferred from Table 7)."
hardpos,HP-T1,Table 1,tsvlc,swap,,hardpos/swap/orig,72.4,0.724,,"SVLC = TSVLC's released RB+LLM-negatives checkpoint (svlc_llm_and_rb_negs, LoRA r=4), presumably the adapter our tsvlc loads."
hardpos,HP-T1,Table 1,tsvlc,swap,,hardpos/swap/aug,61.6,0.616,,"SVLC = TSVLC's released RB+LLM-negatives checkpoint (svlc_llm_and_rb_negs, LoRA r=4), presumably the adapter our tsvlc loads."
hardpos,HP-T1,Table 1,tsvlc,swap,,hardpos/swap/delta,-10.9,-0.109,,"SVLC = TSVLC's released RB+LLM-negatives checkpoint (svlc_llm_and_rb_negs, LoRA r=4), presumably the adapter our tsvlc loads. | Printed delta is off by 0.1 from the difference of the rounded values (computed before rounding)."
hardpos,HP-T1,Table 1,tsvlc,replace,,hardpos/replace/brittleness,39.9,0.399,,"SVLC = TSVLC's released RB+LLM-negatives checkpoint (svlc_llm_and_rb_negs, LoRA r=4), presumably the adapter our tsvlc loads. | REPLACE pools Relations and Attributes over instances (16,868 + 10,575; catalog 2.4, inferred from Table 7)."
hardpos,HP-T1,Table 1,tsvlc,swap,,hardpos/swap/brittleness,20.8,0.208,,"SVLC = TSVLC's released RB+LLM-negatives checkpoint (svlc_llm_and_rb_negs, LoRA r=4), presumably the adapter our tsvlc loads."
hardpos,HP-T3,Table 3,clip,replace,,hardpos/replace/orig,61.6,0.616,,"CLIP ViT-B/32 (repeats the HP-T1 row). | REPLACE pools Relations and Attributes over instances (16,868 + 10,575; catalog 2.4, inferred from Table 7)."
hardpos,HP-T3,Table 3,clip,replace,,hardpos/replace/aug,46.8,0.468,,"CLIP ViT-B/32 (repeats the HP-T1 row). | REPLACE pools Relations and Attributes over instances (16,868 + 10,575; catalog 2.4, inferred from Table 7)."
hardpos,HP-T3,Table 3,clip,replace,,hardpos/replace/delta,-14.9,-0.149,,"CLIP ViT-B/32 (repeats the HP-T1 row). | REPLACE pools Relations and Attributes over instances (16,868 + 10,575; catalog 2.4, inferred from Table 7). | Printed delta is off by 0.1 from the difference of the rounded values (computed before rounding)."
hardpos,HP-T3,Table 3,clip,swap,,hardpos/swap/orig,60.5,0.605,,CLIP ViT-B/32 (repeats the HP-T1 row).
hardpos,HP-T3,Table 3,clip,swap,,hardpos/swap/aug,49.6,0.496,,CLIP ViT-B/32 (repeats the HP-T1 row).
hardpos,HP-T3,Table 3,clip,swap,,hardpos/swap/delta,-10.9,-0.109,,CLIP ViT-B/32 (repeats the HP-T1 row).
hardpos,HP-T3,Table 3,clip,replace,,hardpos/replace/brittleness,23.2,0.232,,"CLIP ViT-B/32 (repeats the HP-T1 row). | REPLACE pools Relations and Attributes over instances (16,868 + 10,575; catalog 2.4, inferred from Table 7)."
hardpos,HP-T3,Table 3,clip,swap,,hardpos/swap/brittleness,21.7,0.217,,CLIP ViT-B/32 (repeats the HP-T1 row).
hardpos,HP-T8,Table 8,clip,replace,,hardpos/replace/orig,61.6,0.616,,"CLIP ViT-B/32 (repeats the HP-T1 row). | REPLACE pools Relations and Attributes over instances (16,868 + 10,575; catalog 2.4, inferred from Table 7)."
hardpos,HP-T8,Table 8,clip,replace,,hardpos/replace/aug,46.8,0.468,,"CLIP ViT-B/32 (repeats the HP-T1 row). | REPLACE pools Relations and Attributes over instances (16,868 + 10,575; catalog 2.4, inferred from Table 7)."
hardpos,HP-T8,Table 8,clip,replace,,hardpos/replace/delta,-14.9,-0.149,,"CLIP ViT-B/32 (repeats the HP-T1 row). | REPLACE pools Relations and Attributes over instances (16,868 + 10,575; catalog 2.4, inferred from Table 7). | Printed delta is off by 0.1 from the difference of the rounded values (computed before rounding)."
hardpos,HP-T8,Table 8,clip,swap,,hardpos/swap/orig,60.5,0.605,,CLIP ViT-B/32 (repeats the HP-T1 row).
hardpos,HP-T8,Table 8,clip,swap,,hardpos/swap/aug,49.6,0.496,,CLIP ViT-B/32 (repeats the HP-T1 row).
hardpos,HP-T8,Table 8,clip,swap,,hardpos/swap/delta,-10.9,-0.109,,CLIP ViT-B/32 (repeats the HP-T1 row).
hardpos,HP-T8,Table 8,clip,replace,,hardpos/replace/brittleness,23.2,0.232,,"CLIP ViT-B/32 (repeats the HP-T1 row). | REPLACE pools Relations and Attributes over instances (16,868 + 10,575; catalog 2.4, inferred from Table 7)."
hardpos,HP-T8,Table 8,clip,swap,,hardpos/swap/brittleness,21.7,0.217,,CLIP ViT-B/32 (repeats the HP-T1 row).
hardpos,HP-T7,Table 7 (App. B),clip,replace,,hardpos/replace_rel/orig,57.6,0.576,,CLIP ViT-B/32.
hardpos,HP-T7,Table 7 (App. B),clip,replace,,hardpos/replace_rel/aug,45.3,0.453,,CLIP ViT-B/32.
hardpos,HP-T7,Table 7 (App. B),clip,replace,,hardpos/replace_rel/delta,-12.3,-0.123,,CLIP ViT-B/32.
hardpos,HP-T7,Table 7 (App. B),clip,replace,,hardpos/replace_att/orig,68.1,0.681,,CLIP ViT-B/32.
hardpos,HP-T7,Table 7 (App. B),clip,replace,,hardpos/replace_att/aug,49.0,0.49,,CLIP ViT-B/32.
hardpos,HP-T7,Table 7 (App. B),clip,replace,,hardpos/replace_att/delta,-19.1,-0.191,,CLIP ViT-B/32.
hardpos,HP-T7,Table 7 (App. B),clip,replace,,hardpos/replace_rel/brittleness,21.7,0.217,,CLIP ViT-B/32.
hardpos,HP-T7,Table 7 (App. B),clip,replace,,hardpos/replace_att/brittleness,25.5,0.255,,CLIP ViT-B/32.
hardpos,HP-T7,Table 7 (App. B),negclip,replace,,hardpos/replace_rel/orig,65.6,0.656,,
hardpos,HP-T7,Table 7 (App. B),negclip,replace,,hardpos/replace_rel/aug,48.2,0.482,,
hardpos,HP-T7,Table 7 (App. B),negclip,replace,,hardpos/replace_rel/delta,-17.4,-0.174,,
hardpos,HP-T7,Table 7 (App. B),negclip,replace,,hardpos/replace_att/orig,73.4,0.734,,
hardpos,HP-T7,Table 7 (App. B),negclip,replace,,hardpos/replace_att/aug,58.2,0.582,,
hardpos,HP-T7,Table 7 (App. B),negclip,replace,,hardpos/replace_att/delta,-15.2,-0.152,,
hardpos,HP-T7,Table 7 (App. B),negclip,replace,,hardpos/replace_rel/brittleness,22.3,0.223,,
hardpos,HP-T7,Table 7 (App. B),negclip,replace,,hardpos/replace_att/brittleness,20.3,0.203,,
hardpos,HP-T7,Table 7 (App. B),tsvlc,replace,,hardpos/replace_rel/orig,72.0,0.72,,"SVLC = TSVLC's released RB+LLM-negatives checkpoint (svlc_llm_and_rb_negs, LoRA r=4), presumably the adapter our tsvlc loads."
hardpos,HP-T7,Table 7 (App. B),tsvlc,replace,,hardpos/replace_rel/aug,42.1,0.421,,"SVLC = TSVLC's released RB+LLM-negatives checkpoint (svlc_llm_and_rb_negs, LoRA r=4), presumably the adapter our tsvlc loads."
hardpos,HP-T7,Table 7 (App. B),tsvlc,replace,,hardpos/replace_rel/delta,-29.9,-0.299,,"SVLC = TSVLC's released RB+LLM-negatives checkpoint (svlc_llm_and_rb_negs, LoRA r=4), presumably the adapter our tsvlc loads."
hardpos,HP-T7,Table 7 (App. B),tsvlc,replace,,hardpos/replace_att/orig,83.8,0.838,,"SVLC = TSVLC's released RB+LLM-negatives checkpoint (svlc_llm_and_rb_negs, LoRA r=4), presumably the adapter our tsvlc loads."
hardpos,HP-T7,Table 7 (App. B),tsvlc,replace,,hardpos/replace_att/aug,48.2,0.482,,"SVLC = TSVLC's released RB+LLM-negatives checkpoint (svlc_llm_and_rb_negs, LoRA r=4), presumably the adapter our tsvlc loads."
hardpos,HP-T7,Table 7 (App. B),tsvlc,replace,,hardpos/replace_att/delta,-35.6,-0.356,,"SVLC = TSVLC's released RB+LLM-negatives checkpoint (svlc_llm_and_rb_negs, LoRA r=4), presumably the adapter our tsvlc loads."
hardpos,HP-T7,Table 7 (App. B),tsvlc,replace,,hardpos/replace_rel/brittleness,41.6,0.416,,"SVLC = TSVLC's released RB+LLM-negatives checkpoint (svlc_llm_and_rb_negs, LoRA r=4), presumably the adapter our tsvlc loads."
hardpos,HP-T7,Table 7 (App. B),tsvlc,replace,,hardpos/replace_att/brittleness,37.3,0.373,,"SVLC = TSVLC's released RB+LLM-negatives checkpoint (svlc_llm_and_rb_negs, LoRA r=4), presumably the adapter our tsvlc loads."
hardpos,HP-T10,Table 10 (App. E),clip,coco_retrieval,,retrieval/coco/t2i/recall_at_1,30.46,0.3046,,"CLIP ViT-B/32. Catalog 2.5 inference: CLIP_benchmark defaults (COCO 5k Karpathy test, Flickr30k 1k test), Image R@1 = text-to-image, Text R@1 = image-to-text."
hardpos,HP-T10,Table 10 (App. E),clip,coco_retrieval,,retrieval/coco/i2t/recall_at_1,50.14,0.5014,,"CLIP ViT-B/32. Catalog 2.5 inference: CLIP_benchmark defaults (COCO 5k Karpathy test, Flickr30k 1k test), Image R@1 = text-to-image, Text R@1 = image-to-text."
hardpos,HP-T10,Table 10 (App. E),clip,flickr_retrieval,,retrieval/flickr30k/t2i/recall_at_1,58.82,0.5882,,"CLIP ViT-B/32. Catalog 2.5 inference: CLIP_benchmark defaults (COCO 5k Karpathy test, Flickr30k 1k test), Image R@1 = text-to-image, Text R@1 = image-to-text."
hardpos,HP-T10,Table 10 (App. E),clip,flickr_retrieval,,retrieval/flickr30k/i2t/recall_at_1,77.40,0.774,,"CLIP ViT-B/32. Catalog 2.5 inference: CLIP_benchmark defaults (COCO 5k Karpathy test, Flickr30k 1k test), Image R@1 = text-to-image, Text R@1 = image-to-text."
"""
