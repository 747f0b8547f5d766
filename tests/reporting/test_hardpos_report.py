"""The toy Hard Positives report on a fake workspace (``hardpos_fixture``): three chains of CLIP, CLIP-FT, NegCLIP,
SVLC, SVLC+Pos, Our HN and Our HP+HN, the single-type and w_HN rows on chain b0 only, the ViT base without REPLACE /
SWAP metrics, the twins' files, two of the three generator runs and a blind reader. Every expectation is computed by
hand from the fixture's per-item patterns (``by_hand``), never read back from the code under test."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
import yaml

from reporting import hardpos_fixture as F
from vlcomp.reporting.papers import PAPERS
from vlcomp.reporting.papers.hard_positives import printed as P
from vlcomp.reporting.papers.hard_positives import scores, tables, words
from vlcomp.reporting.papers.hard_positives import toy as R
from vlcomp.reporting.papers.hard_positives.report import REPORT
from vlcomp.reporting.render import show
from vlcomp.reporting.scaffold import Page

NAN = re.compile(r"\bnan\b", re.IGNORECASE)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    return F.build(tmp_path_factory.mktemp("hardpos"))


def _load(root, params_path=None):
    return R.load(str(root / "metrics"), str(root / "world"), str(root / "benchmarks"), str(root / "models"),
                  str(params_path or root / "params.yaml"), str(root / "mined"))


@pytest.fixture(scope="module")
def ctx(workspace):
    return _load(workspace)


def _cell(long: pd.DataFrame, method: str, key: str) -> dict:
    rows = long[(long["method"] == method) & (long["metric_key"] == key)]
    assert len(rows) == 1, (method, key)
    return rows.iloc[0].to_dict()


def _row(table, row: str) -> dict:
    df = table.shown
    return df[df["row"] == row].iloc[0].to_dict()


THREE_CHAIN = ("clip", "negclip", "tsvlc_rbllm", "tsvlc_combined", "hn_only", "hp_hn")


# --------------------------------------------------------------------------- Tables 1, 3, 7


@pytest.mark.parametrize("artifact", ["HP-T1", "HP-T3", "HP-T7"])
def test_every_toy_cell_is_the_chain_mean_and_sd_of_the_fixture(ctx, artifact):
    long = tables.main_table(ctx.long, ctx.summ, ctx.all_methods, artifact)
    toy = long[long["kind"] == tables.TOY]
    assert len(toy) > 0
    for r in toy.to_dict("records"):
        part, measure = r["metric_key"].split("/")[1:]
        ks = F.BASES if r["method"] in THREE_CHAIN else (0,)
        mean, sd = F.chain_stats(r["method"], part, measure, ks)
        assert r["mean"] == pytest.approx(mean), (r["method"], r["metric_key"])
        assert r["n"] == len(ks)
        if len(ks) > 1:
            assert r["spread"] == pytest.approx(sd)
        else:
            assert math.isnan(r["spread"]) and r["runs"] == "1 chain (b0)"
        if measure == "aug":
            assert r["delta_mean"] == pytest.approx(F.chain_stats(r["method"], part, "delta", ks)[0])
        printed = next(x for x in P.rows_of(artifact) if x.method == r["method"])
        assert r["paper_text"] == printed.cells[r["metric_key"].replace("hardpos/", "")].text


def test_t1_reads_like_the_paper_with_reference_and_paper_only_rows(ctx, tmp_path):
    t = R.t1(ctx)
    clip = _row(t, "CLIP")
    # CLIP REPLACE: Orig (a + b) / 20 = 10/20, 12/20, 14/20 on b0, b1, b2 (the k D's turned A); Aug 6/20 .. 10/20
    assert clip["REPLACE Orig. (toy, %)"] == "60.0 ± 10.0" and clip["REPLACE Orig. (paper)"] == "61.6"
    assert clip["REPLACE Aug. (toy, %)"] == "40.0 ± 10.0 (Δ -20.0 ± 0.0)"
    assert clip["REPLACE Aug. (paper)"] == "46.8 (-14.9)" and clip["runs"] == "3 chains (b0, b1, b2)"
    swap_only = _row(t, "Our HP+HN (Swap-only)")
    # b0 only: REPLACE "AAAABBCCDD" twice: Orig 12/20, Aug 8/20, brittleness 8/20; SWAP "AAAAAAABCD"
    assert swap_only["runs"] == "1 chain (b0)" and swap_only["REPLACE Orig. (toy, %)"] == "60.0"
    assert swap_only["REPLACE Aug. (toy, %)"] == "40.0 (Δ -20.0)" and swap_only["SWAP Orig. (toy, %)"] == "80.0"
    dac = _row(t, "DAC-LLM")
    assert dac["kind"] == "paper-only" and dac["REPLACE Orig. (toy, %)"] == "paper-only"
    assert dac["REPLACE Aug. (paper)"] == "48.9 (-38.7)"
    chance = _row(t, "Random Chance")
    assert (chance["REPLACE Orig. (toy, %)"], chance["REPLACE Aug. (toy, %)"], chance["SWAP Brittleness ↓ (toy, %)"]) \
        == ("50.0", "33.3", "33.3")
    human = _row(t, "Human Estimate")
    assert human["REPLACE Orig. (toy, %)"] == "no toy human study" and human["REPLACE Orig. (paper)"] == "97"
    blind = t.shown[t.shown["kind"] == "blind"].iloc[0]
    assert blind["REPLACE Orig. (toy, %)"] == "55.0" and blind["SWAP Aug. (toy, %)"] == "not measured"
    svlc = _row(t, "SVLC [toy: TSVLC RB+LLM Negs]")
    assert svlc["paper row"] == "SVLC" and svlc["REPLACE Brittleness ↓ (toy, %)"] == "45.0 ± 0.0"
    assert "Our HP+HN (Swap-only): 1 run (base seed 0, fine-tune seed 0), no spread" in t.legend
    assert "sample standard deviation" in t.legend and any("#1" in n for n in t.notes)
    html = show(tmp_path, "HP-T1", t)
    assert not NAN.search(html)
    csv = pd.read_csv(tmp_path / "tables" / "HP-T1.csv")
    assert csv["mean"].max() <= 1.0 and set(csv["kind"]) == {"toy", "paper-only", "chance", "human", "blind"}


def test_t3_marks_the_one_chain_rows(ctx):
    t = R.t3(ctx)
    for label in ("0 HN", "0.25 HN", "0.50 HN", "0.75 HN"):
        assert _row(t, label)["runs"] == "1 chain (b0)"
    # 0 HN: "AAABCDDDDD" everywhere: Orig 4/10, Aug 3/10, brittleness 2/10
    zero = _row(t, "0 HN")
    assert zero["SWAP Orig. (toy, %)"] == "40.0" and zero["SWAP Aug. (toy, %)"] == "30.0 (Δ -10.0)"
    assert zero["REPLACE Brittleness ↓ (toy, %)"] == "20.0" and zero["REPLACE Orig. (paper)"] == "58.5"


def test_t7_splits_relations_and_attributes(ctx):
    long = R.t7(ctx).data
    # CLIP Attributes "ADADBCABCD": Orig 5/10 (+k/10), brittleness 4/10; Relations "AABBCCDDDA" alike
    att = _cell(long, "clip", "hardpos/replace_att/brittleness")
    assert att["mean"] == pytest.approx(0.4) and att["paper_text"] == "25.5"
    rel = _cell(long, "tsvlc_rbllm", "hardpos/replace_rel/aug")  # "ABBBCADDAA": Aug 4/10 + k/10
    assert rel["mean"] == pytest.approx(0.5) and rel["delta_mean"] == pytest.approx(-0.3)


# --------------------------------------------------------------------------- Tables 2, 9, raw scores and ties


def test_t2_stand_in_is_chosen_by_the_rule_and_mean_scores_are_the_items(ctx):
    # REPLACE brittleness by hand: NegCLIP (3+1 + 3+1)/20 = 0.40, SVLC (4+1 + 3+1)/20 = 0.45, SVLC+Pos 0.30
    assert R.hn_stand_in(ctx) == "tsvlc_rbllm"
    t = R.t2(ctx)
    stand = t.data[t.data["kind"] == tables.STAND_IN]
    assert set(stand["method"]) == {"tsvlc_rbllm"} and set(stand["paper_row"]) == {"DAC-LLM"}
    for method in ("clip", "tsvlc_rbllm", "hp_hn"):
        for m in ("mean_s_c", "mean_s_n", "mean_s_p"):
            r = _cell(t.data, method, f"hardpos/replace/{m}")
            mean, sd = F.chain_stats(method, "replace", m)
            assert r["mean"] == pytest.approx(mean) and r["spread"] == pytest.approx(sd)
    row = t.shown[t.shown["kind"] == tables.STAND_IN].iloc[0]
    assert row["row"].endswith("[stand-in for DAC-LLM]") and row["mean s(c) ↑ (paper)"] == "0.160"
    # SVLC's mean s(c) on b0: 0.5 * 7/10 + 0.3 * 3/10 - 0.04 = 0.40; +0.02 per chain: 0.42 ± 0.02
    assert row["mean s(c) ↑ (toy, raw)"] == "0.420 ± 0.020"
    assert any("most brittle" in n for n in t.notes)


def test_t9_has_toy_only_hn_and_paper_only_rows(ctx):
    t = R.t9(ctx)
    hn = _row(t, "Our HN")
    assert hn["kind"] == "toy-only" and hn["REPL. (paper)"] == ""
    ours = _cell(t.data, "hp_hn", "hardpos/swap/mean_s_c")
    assert ours["mean"] == pytest.approx(F.chain_stats("hp_hn", "swap", "mean_s_c")[0])
    assert ours["paper_text"] == "0.247"
    assert _row(t, "DAC-LLM")["SWAP (toy, raw)"] == "paper-only"


def _naive(df: pd.DataFrame) -> dict[str, float]:
    s_c = s_n = s_p = 0.0
    ties = 0
    for _, r in df.iterrows():
        s_c += r["s_c"]
        s_n += r["s_n"]
        s_p += r["s_p"]
        ties += int(r["s_c"] == r["s_n"] or r["s_p"] == r["s_n_swapped"])
    n = len(df)
    return {"mean_s_c": s_c / n, "mean_s_n": s_n / n, "mean_s_p": s_p / n, "ties": ties}


@pytest.mark.parametrize("model", ["clip-b1", "negclip-b2s0", "hp_hn_w25-b0s0"])
def test_mean_scores_and_ties_equal_a_naive_loop_over_the_items(workspace, model):
    for table in ("replace", "swap"):
        df = pd.read_parquet(workspace / "metrics" / model / "items" / f"{table}.parquet")
        got = scores.item_metrics(df, table)
        parts = ["swap"] if table == "swap" else ["replace_att", "replace_rel", "replace"]
        for part in parts:
            want = _naive(df if part == "replace" else df[df["part"] == part])
            for k, v in want.items():
                assert got[f"hardpos/{part}/{k}"] == pytest.approx(v), (model, part, k)
    # NegCLIP's SWAP string ends in E: one tie per chain
    if model.startswith("negclip"):
        assert scores.item_metrics(pd.read_parquet(workspace / "metrics" / model / "items" / "swap.parquet"),
                                   "swap")["hardpos/swap/ties"] == 1


def test_scores_and_ties_table(ctx):
    t = R.scores_and_ties(ctx)
    neg = t.shown[t.shown["method"] == "NegCLIP"].iloc[0]
    assert neg["SWAP ties"] == "1.0 ± 0.0" and neg["REPLACE ties"] == "0.0 ± 0.0"
    assert (t.data["model"] == "negclip-b0s0").sum() == 1


def test_positive_gaps_by_hand_and_per_model(ctx, workspace):
    # three items: s(c) - s(c_p) = 0.1, -0.2, 0.0; s(c) - s(c_n) = 0.3, 0.1, -0.1
    df = pd.DataFrame({"s_c": [0.5, 0.3, 0.4], "s_p": [0.4, 0.5, 0.4], "s_n": [0.2, 0.2, 0.5]})
    got = scores.positive_gaps(df)
    assert got["c_minus_p"] == pytest.approx(-0.1 / 3) and got["abs_c_minus_p"] == pytest.approx(0.1)
    assert got["c_minus_n"] == pytest.approx(0.1) and got["p_above_c"] == pytest.approx(1 / 3)  # a tie is not above
    assert all(math.isnan(v) for v in scores.positive_gaps(df.iloc[:0]).values())
    t = R.positive_gaps(ctx)
    for r in t.data.itertuples(index=False):  # each model's row is its own item table's, REPLACE parts pooled
        items = pd.read_parquet(workspace / "metrics" / r.model / "items" / f"{r.benchmark}.parquet")
        assert r.abs_c_minus_p == pytest.approx(float((items["s_c"] - items["s_p"]).abs().mean()))
    neg = t.data[(t.data["method"] == "negclip") & (t.data["benchmark"] == "swap")]
    want = neg["c_minus_p"]
    shown = t.shown.set_index("method").loc["NegCLIP", "SWAP s(c) - s(c_p)"]
    assert shown == f"{want.mean():+.3f} ± {want.std(ddof=1):.3f}"


# --------------------------------------------------------------------------- Table 8, Table 10


def test_t8_base_ladder_marks_not_measured_not_run_and_not_built(ctx, workspace, tmp_path):
    t = R.t8(ctx)
    vit = _row(t, "CLIP, toy ViT base")
    assert vit["runs"] == "1 chain (b0)" and vit["REPLACE Orig. (toy, %)"] == "not measured"
    assert vit["paper row"] == "CLIP ViT-B/16" and vit["REPLACE Orig. (paper)"] == "61.8"
    big = _row(t, "larger toy ResNet base [not built]")
    assert big["kind"] == "not built" and big["REPLACE Orig. (toy, %)"] == "not built"
    assert big["paper row"] == "CLIP-RN50x64"
    cyc = _row(t, "CLIP, toy CyCLIP base")
    assert cyc["kind"] == "toy-only" and cyc["runs"] == "not run"
    assert _row(t, "XVLM-16M*")["kind"] == "paper-only"
    params = yaml.safe_load((workspace / "params.yaml").read_text())
    params["base_models"]["rn_large"] = {"arch": "toy-rn32"}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    other = _load(workspace, tmp_path / "params.yaml")
    assert R.larger_resnet(other) == "clip_rn_large"
    row = _row(R.t8(other), "CLIP, base model rn_large (toy-rn32) [stand-in: a larger ResNet]")
    assert row["kind"] == "stand-in" and row["runs"] == "not run"


def test_t10_standard_tasks_with_the_vtab_stand_in_labelled(ctx):
    t = R.t10(ctx)
    long = t.data
    assert set(long["column"]) >= {"VTAB Acc@1 [toy: ELEVATER twin mean]", "IN-1k Acc@5 [toy: ImageNet twin]"}
    r = _cell(long, "hp_hn", "zeroshot/elevater/mean_acc")  # 0.425 + 0.01 k
    assert r["mean"] == pytest.approx(0.435) and r["spread"] == pytest.approx(0.01) and r["paper_text"] == "33.24"
    ft = _cell(long, "clip_ft", "retrieval/coco/t2i/recall_at_1")
    assert ft["paper_row"] == "CLIP-COCO" and ft["mean"] == pytest.approx(0.41)
    assert _row(t, "Our HN")["IN-1k Acc@5 [toy: ImageNet twin] (toy, %)"] == "53.0 ± 1.0"


# --------------------------------------------------------------------------- Tables 4-6


def test_rule_of_names_the_map_entry():
    hp_map = words.toy_map({"world": {"captions": {"synonyms": "extended"}}})
    assert words.rule_of("large red circle", "big red circle", hp_map, "replace_att") == ("large", "big", words.SYNONYM)
    assert words.rule_of("red circle above blue square", "red circle over blue square", hp_map,
                         "replace_rel") == ("above", "over", words.SYNONYM)
    assert words.rule_of("red circle to the left of blue square", "blue square to the right of red circle", hp_map,
                         "replace_rel") == ("to the left of", "to the right of", words.CONVERSE)
    assert words.rule_of("large red circle", "huge red circle", hp_map, "replace_att")[0] == words.UNEXPLAINED
    base = words.toy_map({})  # the first world's map: no 'over'
    assert words.rule_of("red circle above blue square", "red circle over blue square", base,
                         "replace_rel")[0] == words.UNEXPLAINED


def test_word_tables_count_the_twin_files(ctx):
    for artifact, kinds in (("HP-T4", ("above", "next to", "to the left of", "inside")), ("HP-T5", ("purple",)),
                            ("HP-T6", ("large", "small"))):
        blocks = R.word_tables(ctx, artifact)
        toy = blocks[0][1].data
        for w in kinds:
            assert int(toy.loc[toy["word"] == w, "toy frequency"].iloc[0]) == F.FREQ[w], (artifact, w)
        total = toy[toy["type"] == "total"].iloc[0]
        assert total["toy frequency"] == sum(F.FREQ[w] for w in kinds)
        assert total["word"] == f"{len(kinds)} of {len(toy) - 1} entries met"
        printed = blocks[1][1].data
        assert list(printed["word (paper)"]) == [r.name for r in P.rows_of(artifact)]
        assert len(blocks[2][1].data) == len(words.TABLE_NOT_EXPRESSIBLE[artifact])
    t4 = R.word_tables(ctx, "HP-T4")[0][1].data
    left = t4[t4["word"] == "to the left of"].iloc[0]
    assert left["rule"] == words.CONVERSE and left["HP (toy)"] == "blue square to the right of red circle"
    assert R.word_tables(ctx, "HP-T4")[1][1].data.iloc[0]["frequency (paper)"] == "6173"


# --------------------------------------------------------------------------- Figures


def test_f1_f3_items_follow_the_stated_rule(ctx):
    # by hand on chain b0, Attributes: CLIP "ADADBCABCD", SVLC "ABBBABDCAD", HP+HN "AAAAAABCDD":
    # top pattern (CLIP C/D, SVLC B, HP+HN A) at 1, 3, 5; bottom (CLIP A, SVLC B, HP+HN A) at 2.
    # SWAP: CLIP "DACBADABCD", SVLC "ABBADABCAD", HP+HN "AAAAAABCDD": top at 2, bottom at 1.
    got, tables_by, chosen = R._selection(ctx)
    assert [m for m, _, _ in got] == ["clip", "tsvlc_rbllm", "hp_hn"]
    assert [model for _, _, model in got] == ["clip-b0", "tsvlc_rbllm-b0s0", "hp_hn-b0s0"]
    where = {(c["artifact"], c["position"]): (c["part"], c["index"]) for c in chosen}
    assert where == {("HP-F1", "teaser"): ("replace_att", 1), ("HP-F3", "top-left"): ("replace_att", 3),
                     ("HP-F3", "top-right"): ("swap", 2), ("HP-F3", "bottom-left"): ("replace_att", 2),
                     ("HP-F3", "bottom-right"): ("swap", 1)}
    blocks = R.score_figure(ctx, "HP-F1")
    toy = next(b for t, b in blocks if t.startswith("teaser (toy)")).data
    # item 1: CLIP pattern D (0.30, 0.50, 0.35); SVLC B - 0.04; HP+HN A - 0.005
    assert list(toy["CLIP"]) == pytest.approx([0.30, 0.50, 0.35])
    assert list(toy["SVLC [toy: TSVLC RB+LLM Negs]"]) == pytest.approx([0.46, 0.36, 0.26])
    assert list(toy["Our HP+HN"]) == pytest.approx([0.495, 0.295, 0.445])
    paper = next(b for t, b in blocks if t.startswith("teaser (paper")).data
    assert list(paper["Hard-Negative Finetuned"]) == ["0.152", "0.143", "0.134"]
    assert any(hasattr(b, "figure") for _, b in blocks)


def test_a_slot_without_a_match_says_so():
    a = F.item_table("clip", "swap", 0, {"clip": ("A" * 10,) * 3})
    b = F.item_table("x", "swap", 0, {"x": ("B" * 10,) * 3})
    chosen = scores.select({"swap": [a, b, a]})
    top = [c for c in chosen if c["position"] == "top-right"][0]
    bottom = [c for c in chosen if c["position"] == "bottom-right"][0]
    assert top["index"] is None and bottom["index"] == 0  # CLIP correct everywhere: only the bottom pattern
    assert all(c["index"] is None for c in chosen if c["table"] == "replace")  # no REPLACE tables given


def test_f2_f4_cards_are_twin_items(ctx, tmp_path):
    from vlcomp.reporting.render import save_figure

    f2 = R.f2(ctx)
    fig = f2[0][1]
    assert "Item 0 of each twin file" in fig.legend
    titles = [ax.get_title() for ax in fig.figure.axes if ax.get_title()]
    assert titles == ["REPLACE Attributes (x10)", "REPLACE Relations (x10)", "SWAP (x10)"]
    save_figure(fig.figure, tmp_path / "a", "HP-F2")
    save_figure(R.f2(ctx)[0][1].figure, tmp_path / "b", "HP-F2")
    assert (tmp_path / "a" / "figures" / "HP-F2.png").read_bytes() == (tmp_path / "b" / "figures" /
                                                                       "HP-F2.png").read_bytes()
    samples = R.f4(ctx)[1][1].data
    assert list(samples["part"]) == ["replace_rel"] * 2 + ["replace_att"] + ["swap"] * 3
    assert samples.equals(R.f4(ctx)[1][1].data)  # seeded
    first = R.f4(ctx)[0][1].figure.axes[0].images[0].get_array()
    assert first.shape[:2] == (8, 8)  # a whole REPLACE image of the twin (SWAP crops are 8 x 8 of 16 x 16 too)


# --------------------------------------------------------------------------- in-text numbers, data, methods


def _hand_numbers() -> dict[str, float]:
    def m(method, part, measure):
        return F.chain_stats(method, part, measure)[0]

    prior = ("negclip", "tsvlc_rbllm", "tsvlc_combined")
    drops = {(p, b): -100 * m(p, b, "delta") for p in prior for b in ("replace", "swap")}
    red = [m("clip", b, "mean_s_c") - m(p, b, "mean_s_c") for p in prior for b in ("replace", "swap")]
    att = [-100 * m(p, "replace_att", "delta") for p in prior]
    return {
        "clip_rep": -100 * m("clip", "replace", "delta"), "clip_swap": -100 * m("clip", "swap", "delta"),
        "worst": max(drops.values()),
        "prior_rep": np.mean([drops[(p, "replace")] for p in prior]),
        "prior_swap": np.mean([drops[(p, "swap")] for p in prior]),
        "rep_trained_swap_brit": 100 * np.mean([m(p, "swap", "brittleness") for p in ("tsvlc_rbllm", "tsvlc_combined")]),
        "swap_trained_rep_brit": 100 * m("negclip", "replace", "brittleness"),
        "prior_red": np.mean(red),
        "ours_red": np.mean([m("clip", b, "mean_s_c") - m("hp_hn", b, "mean_s_c") for b in ("replace", "swap")]),
        "ours_att": -100 * m("hp_hn", "replace_att", "delta"), "prior_att": np.mean(att),
        "with_clip_att": np.mean([*att, -100 * m("clip", "replace_att", "delta")]),
    }


def test_n1_n4_on_the_toy_by_hand(ctx):
    t = R.numbers(ctx)
    toy = list(t.data["toy"])
    h = _hand_numbers()
    want = [h["clip_rep"], h["clip_swap"], (h["clip_rep"] + h["clip_swap"]) / 2, h["worst"], math.nan,
            h["prior_rep"], h["prior_swap"], h["rep_trained_swap_brit"], h["swap_trained_rep_brit"], h["prior_red"],
            h["ours_red"], h["ours_att"], h["prior_att"], h["with_clip_att"], h["prior_rep"]]
    assert len(toy) == len(want)
    for got, w in zip(toy, want, strict=True):
        assert (math.isnan(got) and math.isnan(w)) or got == pytest.approx(w)
    # SVLC: REPLACE b = 4 + 3 of 20 -> 35 points, the largest
    assert h["worst"] == pytest.approx(35.0) and "SVLC" in t.data.iloc[3]["toy: over"]
    assert list(t.data["printed"])[:4] == ["14.9", "10.9", "12.9", "38.7"]
    n4 = t.data[t.data["id"] == "HP-N4"]
    assert list(n4["catalog agrees"]) == ["yes", "NO", "NO", "NO"] and set(n4["printed"][1:]) == {"24.7"}
    assert t.shown.iloc[4]["toy"].startswith("no toy human study")
    assert "0 by construction" in R.n5(ctx)


def test_data_and_methods_sections(ctx):
    twins = R.twins(ctx).data.set_index("part")
    assert twins.loc["REPLACE (pooled)", "toy instances"] == 20 and twins.loc["SWAP", "paper instances"] == 28748
    gen = R.generator(ctx)
    data = gen.data.set_index("quantity")
    assert data.loc["share of captions with a SWAP candidate", "hardpos (swap+replace)"] == pytest.approx(0.2)
    assert data.loc["type mix: share of the positives that are SWAP", "hardpos_swap (swap)"] == pytest.approx(12 / 95)
    assert math.isnan(data.loc["captions", "hardpos_replace (replace)"])
    assert "data/mined/hardpos_replace/summary.json" in gen.legend
    assert data.loc["share of captions with a SWAP candidate", "paper"] == pytest.approx(119071 / 591753)
    shown = gen.shown.set_index("quantity")
    assert shown.loc["captions", "hardpos_replace (replace)"] == "not run"
    assert shown.loc["share of captions with a SWAP candidate", "hardpos (swap+replace)"] == "20.0%"
    assert shown.loc["type mix: share of the positives that are SWAP", "paper"] == "not stated"
    blocks = R.methods_section(ctx)
    methods = blocks[0][1].data.set_index("method")
    assert methods.loc["`hp_hn_w25`", "loss_weights"] == "{negatives_loss: 0.25}"
    assert methods.loc["`hp_hn_swap`", "types"] == "swap" and methods.loc["`clip_ft`", "types"] == ""
    assert methods.loc["`hp_only`", "artifact"] == "HP-M5" and methods.loc["`clip_ft`", "artifact"] == "HP-M6"
    assert "L = L_con + L_HP + w_HN · L_HN" in blocks[1][1] and "```text" in blocks[1][1]
    assert "no negatives anywhere" in blocks[2][1] and "0.25 / 0.50 / 0.75 HN 0.25 / 0.5 / 0.75" in blocks[2][1]


# --------------------------------------------------------------------------- the page


def test_page_checklist_and_ledger(ctx, tmp_path):
    list(Page(REPORT, ctx, tmp_path).blocks(PAPERS.get("hard_positives").artifacts))
    check = pd.read_csv(tmp_path / "tables" / "artifact_checklist.csv").set_index("artifact")
    assert list(check.index) == list(PAPERS.get("hard_positives").artifacts)
    for a in ("HP-T1", "HP-T2", "HP-T4", "HP-F1", "HP-F3", "HP-D3", "HP-M1", "HP-N5"):
        assert check.loc[a, "status"] == "rendered", a
    assert check.loc["HP-T8", "status"] == "rendered; reproduced values for 1 of 3 rows"
    assert check.loc["HP-C1", "status"] == "HELD"
    ledger = pd.read_csv(tmp_path / "tables" / "claims_ledger.csv")
    assert set(ledger["claim"]) == {f"C{i}" for i in range(1, 9)}
    hp = ledger[ledger["condition"].str.contains("REPLACE Aug: Our HP\\+HN - Our HN")]
    assert len(hp) == 1 and not math.isnan(hp["test_se"].iloc[0])  # an item-level SE from the item tables
    for f in ("HP-F1", "HP-F2", "HP-F3", "HP-F4"):
        assert (tmp_path / "figures" / f"{f}.png").exists()


def test_an_empty_workspace_reads_not_run_everywhere(tmp_path):
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(F.params()))
    ctx = _load(tmp_path)
    assert "No Hard Positives model is evaluated yet" in R.intro_markdown(ctx)
    t = R.t1(ctx)
    runs = set(t.shown.loc[t.shown["kind"] == "toy", "runs"])
    assert runs == {"not run"}
    assert R.score_figure(ctx, "HP-F1") is None and R.f2(ctx) is None and R.word_tables(ctx, "HP-T4") is None
    assert R.twins(ctx) is None and R.generator(ctx) is not None  # params mine it: every column not run
    claims, _ = R.ledger(ctx)
    assert all(c.verdict == "not held" for c in claims)
    list(Page(REPORT, ctx, tmp_path / "page").blocks(PAPERS.get("hard_positives").artifacts))
    check = pd.read_csv(tmp_path / "page" / "tables" / "artifact_checklist.csv").set_index("artifact")
    assert check.loc["HP-F1", "status"] == "pending: input not produced yet"
    assert check.loc["HP-T1", "status"] == "rendered; no reproduced value yet"


def test_notebook_renders_both_profiles(workspace, tmp_path):
    from pathlib import Path

    from vlcomp.reporting.notebook import render_report

    nb = Path(__file__).resolve().parents[2] / "notebooks" / "hard_positives.py"
    out = tmp_path / "report"
    params = {"profile": "toy", "metrics_dir": str(workspace / "metrics"), "world_dir": str(workspace / "world"),
              "benchmarks_dir": str(workspace / "benchmarks"), "models_dir": str(workspace / "models"),
              "out_dir": str(out), "params_path": str(workspace / "params.yaml"),
              "calibration_csv": str(workspace / "cal.csv"), "mined_root": str(workspace / "mined")}
    html = render_report(nb, out, params).read_text()
    assert "Traceback" not in html and "HP-T1" in html
    assert not NAN.search(re.sub(r"<[^>]+>", " ", html.split("<body", 1)[-1]).replace("data:image", ""))
    assert all((out / "figures" / f"HP-F{i}.png").exists() for i in range(1, 5))
    for name in ("artifact_checklist", "claims_ledger", "HP-T1", "HP-T2", "HP-T3", "HP-T7", "HP-T8", "HP-T9",
                 "HP-T10", "HP-N1_N4", "HP-D1_D2", "HP-D3_D4", "HP-M", "provenance"):
        assert (out / "tables" / f"{name}.csv").exists(), name
    # the real profile: released checkpoints against the printed numbers, no verdicts
    metrics = tmp_path / "real_metrics"
    (metrics / "released" / "clip").mkdir(parents=True)
    (metrics / "released" / "clip" / "metrics.json").write_text('{"hardpos/replace/orig": 0.62}')
    (metrics / "released" / "clip" / "provenance.json").write_text(
        '{"model": "clip", "profile": "real", "source": "released", "dvc_stage": "evaluate_released@clip"}')
    real = F.params() | {"profile": "real", "variants": {}, "released_models": {"clip": {}, "negclip": {},
                                                                                  "tsvlc": {}}}
    (tmp_path / "real.yaml").write_text(yaml.safe_dump(real))
    out2 = tmp_path / "real_report"
    html = render_report(nb, out2, {"profile": "real", "metrics_dir": str(metrics), "out_dir": str(out2),
                                    "models_dir": str(tmp_path / "models"),
                                    "params_path": str(tmp_path / "real.yaml")}).read_text()
    assert "Traceback" not in html and "No Hard Positives method runs in these params" in html
    released = pd.read_csv(out2 / "tables" / "hardpos_released.csv")
    row = released[(released["metric_key"] == "hardpos/replace/orig") & (released["model"] == "clip")
                   & (released["artifact"] == "HP-T1")].iloc[0]
    assert row["reproduced"] == pytest.approx(0.62) and row["paper"] == pytest.approx(0.616)
    status = dict(pd.read_csv(out2 / "tables" / "artifact_checklist.csv")[["artifact", "status"]].values)
    assert status["HP-C1"] == "no verdict on this page" and status["HP-F1"].startswith("toy profile only")
