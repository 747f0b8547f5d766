"""The toy TSVLC report on a fake workspace: three chains of CLIP, CLIP+LoRA, RB+LLM Negs and Combined, the
other TSVLC rows on chain b0 only (Pos not evaluated yet), two ARO methods as cross-evaluation rows, a small
cc3m split with generator outputs (unmasking not run yet) and per-item VL-CheckList tables. Every expectation
is computed by hand from the values set here."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from vlcomp.reporting.papers import PAPERS
from vlcomp.reporting.papers.tsvlc import figures, tables
from vlcomp.reporting.papers.tsvlc import toy as R
from vlcomp.reporting.papers.tsvlc.report import REPORT
from vlcomp.reporting.render import figure_html, save_figure, show
from vlcomp.reporting.scaffold import Page, runs_table, verdicts_markdown

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "tsvlc.py"
BASES = (0, 1, 2)
THREE = ("tsvlc_lora", "tsvlc_rbllm", "tsvlc_combined")
FIRST = ("tsvlc_rb", "tsvlc_llm", "tsvlc_pos", "tsvlc_noneg", "tsvlc_full")
LABELS = {"tsvlc_lora": "CLIP+LoRA", "tsvlc_rb": "RB Neg", "tsvlc_llm": "LLM Neg",
          "tsvlc_rbllm": "RB+LLM Negs", "tsvlc_pos": "Pos", "tsvlc_combined": "Combined",
          "tsvlc_noneg": "w/o Neg Loss", "tsvlc_full": "RB+LLM Negs, full FT"}
LORA = {"towers": ["image", "text"], "rank": 4, "alpha": 1, "layers": ["attn", "mlp"]}
#: Table 1(b)-(d) rows on chain b0 (ViT base model `vit`, from scratch); (e)-(g) not run here
SECTION = {"tsvlc_vit_rbllm": ("ViT: RB+LLM Negs", "vit-b0", True), "tsvlc_scratch_clip": ("Scratch: CLIP", "b0", False),
           "tsvlc_scratch_rbllm": ("Scratch: RB+LLM Negs", "b0", False),
           "tsvlc_scratch_combined": ("Scratch: Combined", "b0", False)}


def _params() -> dict:
    methods = {"clip_ft": {"paper": "aro", "label": "CLIP-FT"},
               "negclip": {"paper": "aro", "label": "NegCLIP"}}
    methods |= {m: {"paper": "tsvlc", "label": lab, "tuning": {"lora": LORA} if m != "tsvlc_full" else {}}
                for m, lab in LABELS.items()}
    methods |= {m: {"paper": "tsvlc", "label": lab, "tuning": {"lora": LORA} if lora else {}, "init":
                    "base" if lora else "scratch", **({"base_model": "vit"} if base == "vit-b0" else {})}
                for m, (lab, base, lora) in SECTION.items()}
    variants = {}
    for m in ("clip_ft", "negclip", *THREE):
        variants |= {f"{m}-b{k}s0": {"method": m, "base": f"b{k}", "seed": 0} for k in BASES}
    variants |= {f"{m}-b0s0": {"method": m, "base": "b0", "seed": 0} for m in FIRST}
    variants |= {f"{m}-{base}s0": {"method": m, "base": base, "seed": 0} for m, (_, base, _) in SECTION.items()}
    seeds = {m: [0] for m in ("clip_ft", "negclip", *THREE)}
    seeds |= {m: {"seeds": [0], "chains": "first"} for m in (*FIRST, *SECTION)}
    bases = {f"b{k}": {"seed": k} for k in BASES} | {"vit-b0": {"seed": 0, "family": "vit", "arch": "toy-vit-p8"}}
    return {"profile": "toy", "root_seed": 0, "base_seeds": list(BASES), "bases": bases,
            "base_models": {"vit": {"arch": "toy-vit-p8"}, "cyclip": {"loss": "cyclip"}},
            "methods": methods, "variants": variants, "seeds": seeds,
            "mine": {"tsvlc_rb": {"split": "cc3m", "candidates": 3}, "tsvlc_unmask": {"split": "cc3m"},
                     "tsvlc_mix": {"split": "cc3m"}, "tsvlc_analogy": {"split": "cc3m"}},
            "benchmarks": {"twins": {"vlchecklist": {"items_per_file": 4}}}}


ATTR_OFFSETS = {"color": 0.02, "material": -0.02, "size": 0.01, "state": -0.01, "action": 0.0}
OBJ = ("large", "medium", "small", "center", "mid", "margin")


def headline(method: str, k: int) -> tuple[float, float, float, float] | None:
    """(Object, Attribute, Relation, ZS) of each fake model, from CLIP's of its chain."""
    c = (0.80 + 0.01 * k, 0.60 + 0.01 * k, 0.55 + 0.01 * k, 0.40)
    table = {"clip": c, "tsvlc_lora": (c[0], c[1] - 0.01, c[2] - 0.02, 0.40),
             "tsvlc_rbllm": (c[0] + 0.02, c[1] + 0.05, c[2] + 0.10 + 0.01 * k, 0.39),
             "tsvlc_combined": (c[0] + 0.02, c[1] + 0.03, c[2] + 0.05, 0.395),
             "tsvlc_rb": (0.81, 0.64, 0.62, 0.39), "tsvlc_llm": (0.815, 0.63, 0.61, 0.395),
             "tsvlc_noneg": (0.80, 0.60, 0.54, 0.39), "tsvlc_full": (0.78, 0.58, 0.52, 0.30),
             "clip_ft": (0.79, 0.59, 0.54, 0.35), "negclip": (0.82, 0.62, 0.58, 0.36),
             "clip_vit": (0.70, 0.55, 0.50, 0.30), "tsvlc_vit_rbllm": (0.72, 0.60, 0.58, 0.29),
             "tsvlc_scratch_clip": (0.60, 0.52, 0.45, 0.10), "tsvlc_scratch_rbllm": (0.62, 0.56, 0.55, 0.09),
             "tsvlc_scratch_combined": (0.61, 0.55, 0.52, 0.11)}
    return table.get(method)


def metrics_of(method: str, k: int) -> dict[str, float]:
    o, a, r, zs = headline(method, k)
    m = {"vlchecklist/object/avg": o, "vlchecklist/attribute/avg": a, "vlchecklist/relation/avg": r,
         "vlchecklist/relation/action": r + 0.03, "vlchecklist/relation/spatial": r - 0.03,
         "zeroshot/elevater/mean_acc": zs}
    m |= {f"vlchecklist/attribute/{s}": a + d for s, d in ATTR_OFFSETS.items()}
    m |= {f"vlchecklist/object/{s}": o for s in OBJ}
    m |= {f"vlchecklist/file/Attribute_{s}_vg/acc": a + d for s, d in ATTR_OFFSETS.items()}
    m |= {"vlchecklist/file/Relation_action_vg/acc": r + 0.03,
          "vlchecklist/file/Relation_spatial_vg/acc": r - 0.03}
    m |= {f"vlchecklist/wrong_image/{g}/avg": 0.5 for g in ("object", "attribute", "relation")}
    m |= {f"zeroshot/elevater/task{i:02d}/acc": zs for i in range(1, 22)}
    return m


def _items(method: str, k: int) -> pd.DataFrame:
    """Four items per attribute/relation file; RB+LLM gets item 0 right where LoRA gets it wrong, LoRA item
    3."""
    rows = []
    for f in [f"Attribute_{s}_vg" for s in ATTR_OFFSETS] + ["Relation_action_vg", "Relation_spatial_vg"]:
        for i in range(4):
            good = {"tsvlc_rbllm": i != 3, "tsvlc_lora": i not in (0, 1)}.get(method, True)
            margin = (0.1 + 0.01 * i) * (1 if good else -1)
            rows.append({"file": f, "index": i, "image": f"img{i}.png", "pos": f"a red circle {f} {i}",
                         "neg": f"a blue circle {f} {i}", "score_pos": 0.5 + margin, "score_neg": 0.5,
                         "correct": good})
    return pd.DataFrame(rows)


def _write_model(root: Path, name: str, method: str, k: int, seed: int | None, base: str | None = None) -> None:
    folder = root / name
    (folder / "items").mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps(metrics_of(method, k)))
    (folder / "provenance.json").write_text(json.dumps({"model": name, "method": method, "base": base or f"b{k}",
                                                        "seed": seed, "profile": "toy",
                                                        "dvc_stage": f"evaluate@{name}"}))
    _items(method, k).to_parquet(folder / "items" / "vlchecklist.parquet", index=False)


CAPTIONS = [["a red circle above a blue square", "the big circle"],
            ["a green wooden triangle", "a small heart"],
            ["a circle to the left of a square", "two shapes"]]


def _write_mined(root: Path) -> None:
    (root / "world" / "cc3m").mkdir(parents=True)
    (root / "world" / "cc3m" / "captions.json").write_text(json.dumps(
        [{"image": f"cc3m/{i:06d}", "caption": caps} for i, caps in enumerate(CAPTIONS)]))
    negs = [[["a blue circle above a blue square", "a red circle below a blue square"], []],
            [["a green metal triangle"], ["a large heart"]], [["a circle to the right of a square"], []]]
    types = [[["rb/color", "rb/action"], []], [["rb/material"], ["rb/size"]], [["rb/action"], []]]
    for g in ("tsvlc_rb", "tsvlc_mix"):
        d = root / "mined" / g
        d.mkdir(parents=True)
        (d / "negatives.json").write_text(json.dumps(negs))
        (d / "negative_types.json").write_text(json.dumps(types))
        summary = {"n_captions": 6.0, "captions_with_negative": 4.0, "mean_negatives": 5 / 6,
                   "share/rb_color": 0.2, "share/rb_action": 0.4, "share/rb_material": 0.2,
                   "share/rb_size": 0.2}
        (d / "summary.json").write_text(json.dumps({f"mine/{g}/{k}": v for k, v in summary.items()}))
    d = root / "mined" / "tsvlc_analogy"
    d.mkdir(parents=True)
    (d / "positives.json").write_text(json.dumps([[["a blue square below a red circle"], []], [[], []],
                                                  [["a square to the right of a circle"], []]]))
    (d / "summary.json").write_text(json.dumps({"mine/tsvlc_analogy/share_with_positive": 2 / 6}))


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tsvlc")
    metrics = root / "metrics"
    for k in BASES:
        _write_model(metrics, f"clip-b{k}", "clip", k, None)
        for m in ("clip_ft", "negclip", *THREE):
            _write_model(metrics, f"{m}-b{k}s0", m, k, 0)
    for m in FIRST:
        if m != "tsvlc_pos":  # Pos not evaluated yet
            _write_model(metrics, f"{m}-b0s0", m, 0, 0)
    _write_model(metrics, "clip-vit-b0", "clip_vit", 0, None, "vit-b0")
    for m, (_, base, _) in SECTION.items():
        _write_model(metrics, f"{m}-{base}s0", m, 0, 0, base)
    (root / "params.yaml").write_text(yaml.safe_dump(_params()))
    _write_mined(root)
    return root


@pytest.fixture(scope="module")
def ctx(workspace) -> R.ReportContext:
    return R.load(str(workspace / "metrics"), str(workspace / "world"), str(workspace / "models"),
                  str(workspace / "params.yaml"), str(workspace / "mined"))


NAN = re.compile(r"\bnan\b", re.IGNORECASE)


def _shown_row(table, row: str) -> dict:
    df = table.shown
    return df[df["row"] == row].iloc[0].to_dict()


def test_t1a_cells_deltas_single_chain_rows_and_not_run(ctx, tmp_path):
    t = R.t1a(ctx)
    data = t.data
    rel = data[(data["method"] == "tsvlc_rbllm") & (data["column"] == "Relation")].iloc[0]
    # RB+LLM Relation over chains: 0.65, 0.67, 0.69 (CLIP 0.55/0.56/0.57 + 0.10 + 0.01k): mean 0.67, sd 0.02
    assert rel["mean"] == pytest.approx(0.67) and rel["spread"] == pytest.approx(0.02) and rel["n"] == 3
    assert rel["delta_mean"] == pytest.approx(0.11) and rel["delta_spread"] == pytest.approx(0.01)
    assert rel["paper"] == pytest.approx(0.7872) and rel["paper_delta_text"] == "+15.67%"
    assert rel["difference"] == pytest.approx(0.67 - 0.7872) and rel["runs"] == "3 chains (b0, b1, b2)"
    row = _shown_row(t, "RB+LLM Negs")
    assert row["Relation (toy, %)"] == "67.0 ± 2.0 (Δ +11.0 ± 1.0)"
    assert row["Relation (paper)"] == "78.72% (+15.67%)" and row["paper row"] == "CLIP + Ours RB+LLM Negs"
    rb = _shown_row(t, "RB Neg")  # chain b0 only: no spread, marked
    assert rb["runs"] == "1 chain (b0)" and rb["Object (toy, %)"] == "81.0 (Δ +1.0)"
    clip = _shown_row(t, "CLIP")
    assert clip["runs"] == "3 chains (b0, b1, b2)" and clip["Object (toy, %)"] == "81.0 ± 1.0"
    assert clip["21 ZS Tasks Avg (paper)"] == "56.37%"
    cross = _shown_row(t, "NegCLIP")
    assert "cross-evaluation" in cross["note"] and cross["Object (paper)"] == ""
    assert "1 chain (b0)" in t.legend and "sample standard deviation" in t.legend
    assert any("§5 #5" in n for n in t.notes)  # the ZS disagreement between Tables 1a and 3, beside T1a
    html = show(tmp_path, "TSVLC-T1a", t)
    assert not NAN.search(html)
    csv = pd.read_csv(tmp_path / "tables" / "TSVLC-T1a.csv")
    assert set(csv["method"]) >= {"clip", "tsvlc_rbllm", "negclip"} and csv["mean"].max() <= 1.0


def test_t2_and_t3_mark_missing_models_not_run(ctx):
    t2 = R.t2(ctx)
    noneg = _shown_row(t2, "w/o Neg Loss")
    assert noneg["runs"] == "1 chain (b0)" and noneg["Attribute (toy, %)"] == "60.0 (Δ +0.0)"
    assert noneg["Attribute (paper)"] == "67.58% (-0.02%)"
    t3 = R.t3(ctx)
    pos = _shown_row(t3, "Pos")
    assert pos["runs"] == "not run" and pos["A-Color (toy, %)"] == "not run"
    assert pos["R-Spatial (paper)"] == "39.20%"
    comb = _shown_row(t3, "Combined")
    # Combined A-Color: Attribute (0.63, 0.64, 0.65) + 0.02; R-Spatial: Relation (0.60, 0.61, 0.62) - 0.03
    assert comb["A-Color (toy, %)"] == "66.0 ± 1.0" and comb["R-Spatial (toy, %)"] == "58.0 ± 1.0"
    lora = _shown_row(t3, "CLIP+LoRA")
    assert lora["A-Color (paper)"] == "" and "reference row" in lora["note"]


def test_missing_method_in_params_reads_not_run(ctx):
    from vlcomp.reporting.collect import Methods

    short = Methods(("clip", "tsvlc_lora"), {"tsvlc_lora": "CLIP+LoRA"})
    long = tables.table_t2(ctx.long, ctx.summ, short)
    noneg = long[long["method"] == "tsvlc_noneg"]
    assert set(noneg["runs"]) == {tables.NO_METHOD} and noneg["mean"].isna().all()


def test_t3_consistency_tables(ctx):
    printed, toy = R.t3_check(ctx)
    assert list(printed.data["ZS agrees"]) == ["not in T1a", "NO", "NO", "yes", "yes"]
    check = toy.data.set_index("group")
    assert check.loc["Attribute", "max |avg - mean of subtypes|"] == pytest.approx(0.0, abs=1e-12)
    # 3 chains x (CLIP, 2 ARO, 3 TSVLC) + 4 on b0 + the ViT base model and 4 Table 1(b)-(d) rows
    assert check.loc["Relation", "models checked"] == 3 * 6 + 4 + 5
    assert not (printed.data["T3 Attribute mean of 5"].isna().any())


def test_radar_is_byte_stable_and_says_what_it_shows(ctx, tmp_path):
    f3 = R.figure(ctx, "TSVLC-F3")
    save_figure(f3.figure, tmp_path / "a", "TSVLC-F3")
    save_figure(R.figure(ctx, "TSVLC-F3").figure, tmp_path / "b", "TSVLC-F3")
    html = figure_html(tmp_path / "a" / "figures" / "TSVLC-F3.png", f3.legend, f3.notes)
    for ext in ("png", "pdf"):
        a = (tmp_path / "a" / "figures" / f"TSVLC-F3.{ext}").read_bytes()
        assert a == (tmp_path / "b" / "figures" / f"TSVLC-F3.{ext}").read_bytes()
    assert "One radial scale on every spoke, starting at 0" in html
    assert "CLIP and CLIP+LoRA: not printed" in html
    fig = figures.figure3(ctx.summ, ctx.all_methods)
    toy_ax, paper_ax = fig.axes[:2]
    assert toy_ax.get_ylim() == paper_ax.get_ylim() == (0.0, 1.0)  # one shared scale from 0
    assert [t.get_text() for t in toy_ax.get_xticklabels()] == ["A-Color", "A-Material", "A-Size", "A-State",
                                                               "A-Action", "R-Action", "R-Spatial"]
    assert len(toy_ax.lines) == 4 + 1 and len(paper_ax.lines) == 2 + 1  # series + the chance ring
    assert figures.paper_values("tsvlc_rbllm")[1] == pytest.approx(0.8425)
    assert all(np.isnan(figures.paper_values("clip")))
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_s1_per_file_and_zero_shot_tasks(ctx):
    s1 = R.s1(ctx)
    row = s1.shown[s1.shown["file"] == "Relation_spatial_vg"].iloc[0]
    assert row["source"] == "vg" and row["CLIP (toy, %)"] == "53.0 ± 1.0"
    assert "1 source dataset (vg)" in s1.notes[0]
    zs = R.zeroshot_tasks(ctx)
    assert len(zs.data) == 21 and zs.data.iloc[0]["CLIP (toy, %)"] == "40.0 ± 0.0"


def test_s2_s3_examples_are_deterministic_and_missing_generators_say_so(ctx):
    a = R.negative_examples(ctx, "tsvlc_rb")
    b = R.negative_examples(ctx, "tsvlc_rb")
    assert a.data.equals(b.data) and len(a.data) == 4  # every caption with a negative (4 of 6)
    assert set(a.data["type"]) <= {"rb/color", "rb/action", "rb/material", "rb/size"}
    assert R.negative_examples(ctx, "tsvlc_unmask") is None and "mine@tsvlc_unmask" in R.missing_mined(
        ctx, "tsvlc_unmask")
    summary = R.generator_summary(ctx).data.set_index("generator")
    assert summary.loc["tsvlc_unmask", "status"] == "not run"
    assert summary.loc["tsvlc_rb", "share with a negative"] == pytest.approx(4 / 6)
    assert summary.loc["tsvlc_rb", "type share: rb_action"] == pytest.approx(0.4)
    pos = R.positives(ctx)
    assert len(pos.data) == 2 and "not LLM output" in pos.data["source"].iloc[0] and "33.3%" in pos.legend
    assert "is semantic similar to" in R.prompt_markdown()
    lists = R.word_lists().data.set_index("type")
    assert lists.loc["color", "paper: n"] == 34 and lists.loc["material", "paper: n"] == 71


def test_s4_successes_and_failures(ctx):
    head, parts = R.s4(ctx)
    assert "Chain b0s0" in head and "`tsvlc_rbllm-b0s0`" in head
    counts = parts[0][1].data.set_index("file")
    # per file: RB+LLM right on 0, 1, 2; LoRA right on 2, 3 -> both 1 (item 2), only RB+LLM 2, only LoRA 1
    assert counts.loc["all files", "only RB+LLM Negs right"] == 2 * 7
    assert counts.loc["Attribute_color_vg", "both right"] == 1
    successes, failures = parts[1][1].data, parts[2][1].data
    # one per file in turn, the largest RB+LLM margin first (item 1), then the next round (item 0); n = 8
    assert list(successes["index"]) == [1] * 7 + [0]
    assert successes["file"].iloc[7] == successes["file"].iloc[0]
    assert list(successes.columns[-2:]) == ["RB+LLM Negs margin", "CLIP+LoRA margin"]
    assert (successes["RB+LLM Negs margin"] > 0).all() and (successes["CLIP+LoRA margin"] < 0).all()
    assert len(failures) == 7 and set(failures["index"]) == {3}


def test_ledger_and_checklist(ctx, tmp_path):
    claims, table = R.ledger(ctx)
    verdicts = verdicts_markdown(claims)
    # Pos is not evaluated: C1 (ii) and C4 miss a condition and are not held; C2, C3, C5 hold on these values
    assert "**(C1) NOT HELD**" in verdicts and "**(C4) NOT HELD**" in verdicts
    assert "**(C2) HELD**" in verdicts and "**(C3) HELD**" in verdicts and "**(C5) HELD**" in verdicts
    data = table.data
    assert set(data["claim"]) == {"C1", "C2", "C3", "C4", "C5"}
    assert (data.loc[data["note"].str.contains("missing"), "n"] == 0).all()
    assert "**Verdict rule.**" in table.legend
    show(tmp_path, "claims_ledger", table)
    assert set(pd.read_csv(tmp_path / "tables" / "claims_ledger.csv")["claim_held"]) == {"held", "not held"}
    list(Page(REPORT, ctx, tmp_path / "page").blocks(PAPERS.get("tsvlc").artifacts))
    check = pd.read_csv(tmp_path / "page" / "tables" / "artifact_checklist.csv").set_index("artifact")
    assert list(check.index) == list(PAPERS.get("tsvlc").artifacts)  # every catalog ID, in the entry's order
    assert check.loc["TSVLC-T1a", "status"] == "rendered" and check.loc["TSVLC-F4", "status"] == "rendered"
    assert check.loc["TSVLC-T1c", "status"] == "rendered"
    assert check.loc["TSVLC-T1e", "status"] == "rendered; no reproduced value yet"
    assert check.loc["TSVLC-C1", "status"] == "NOT HELD" and check.loc["TSVLC-C2", "status"] == "HELD"
    assert check.loc["TSVLC-D1", "status"] == "pipeline: mine@tsvlc_rb (examples in S2)"


def test_table1_sections_delta_against_their_own_baseline_on_the_same_chain(ctx, tmp_path):
    b = R.t1_section(ctx, "TSVLC-T1b")
    rel = b.data[(b.data["method"] == "tsvlc_vit_rbllm") & (b.data["column"] == "Relation")].iloc[0]
    # against the ViT base model's evaluation (clip-vit-b0: 0.50), not CLIP's default base (0.55)
    assert rel["mean"] == pytest.approx(0.58) and rel["delta_mean"] == pytest.approx(0.08) and rel["n"] == 1
    assert rel["runs"] == "1 chain (b0)" and rel["paper_delta_text"] == "+15.6%"
    assert _shown_row(b, "CLIP, base model vit")["Relation (toy, %)"] == "50.0"
    assert _shown_row(b, "ViT: RB+LLM Negs")["Relation (toy, %)"] == "58.0 (Δ +8.0)"
    assert _shown_row(b, "tsvlc_vit_combined")["runs"] == "not run (no such method in params)"
    c = R.t1_section(ctx, "TSVLC-T1c")  # from scratch: against the from-scratch CLIP, not the pretrained base
    comb = _shown_row(c, "Scratch: Combined")
    assert comb["Relation (toy, %)"] == "52.0 (Δ +7.0)" and comb["Relation (paper)"] == "58.13% (+12.93%)"
    assert _shown_row(c, "Scratch: CLIP")["21 ZS Tasks Avg (toy, %)"] == "10.0"
    assert "section's first row" in c.notes[0]
    g = R.t1_section(ctx, "TSVLC-T1g")
    assert _shown_row(g, "CLIP")["runs"] == "3 chains (b0, b1, b2)"
    html = show(tmp_path, "TSVLC-T1c", c)
    assert not NAN.search(html) and (tmp_path / "tables" / "TSVLC-T1c.csv").exists()
    # the default CLIP rows aggregate the default bases only
    t1a = R.t1a(ctx)
    assert _shown_row(t1a, "CLIP")["runs"] == "3 chains (b0, b1, b2)"


def test_fig4_radar_draws_the_scratch_runs(ctx, tmp_path):
    f4 = R.figure(ctx, "TSVLC-F4")
    text = " ".join([f4.legend, *f4.notes])
    assert "Fig. 4: no value printed anywhere in the paper" in text and "Scratch: CLIP" in text
    save_figure(f4.figure, tmp_path, "TSVLC-F4")
    first = (tmp_path / "figures" / "TSVLC-F4.png").read_bytes()
    save_figure(R.figure(ctx, "TSVLC-F4").figure, tmp_path, "TSVLC-F4")
    assert (tmp_path / "figures" / "TSVLC-F4.png").read_bytes() == first
    assert figures.toy_values(ctx.summ, "tsvlc_scratch_rbllm")[-1] == pytest.approx(0.55 - 0.03)


def test_c4_compares_each_lora_row_with_its_own_base(ctx):
    from vlcomp.reporting.papers.tsvlc.claims import reference_methods

    refs = reference_methods(ctx.params)
    assert refs["tsvlc_vit_rbllm"] == "clip_vit" and refs["tsvlc_rbllm"] == "clip"
    _, table = R.ledger(ctx)
    c4 = table.data[table.data["claim"] == "C4"]
    vit = c4[c4["condition"].str.contains("CLIP, base model vit")]
    assert len(vit) == 1 and vit["n"].iloc[0] == 1  # ViT: RB+LLM 0.29 vs its base's 0.30: within 2 points


def test_an_empty_workspace_reads_not_run_everywhere(tmp_path):
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(_params()))
    ctx = R.load(str(tmp_path / "metrics"), str(tmp_path / "world"), str(tmp_path / "models"),
                 str(tmp_path / "params.yaml"), str(tmp_path / "mined"))
    assert "No TSVLC model is evaluated yet" in R.intro_markdown(ctx)
    t = R.t1a(ctx)
    assert set(t.shown["runs"]) == {"not run"} and t.legend == "No reproduced values: no spread."
    assert R.s1(ctx) is None and R.s4(ctx) is None and R.positives(ctx) is None
    assert "no toy value yet" in R.figure(ctx, "TSVLC-F3").legend
    claims, _ = R.ledger(ctx)
    assert verdicts_markdown(claims).count("NOT HELD") == 5
    runs = runs_table(ctx.long, ctx.all_methods).data
    assert set(runs["which runs"]) == {"not run"} and set(runs["runs"]) == {0}


def test_notebook_renders_on_the_fake_workspace(workspace, tmp_path):
    from vlcomp.reporting.notebook import render_report

    out = tmp_path / "report"
    params = {"profile": "toy", "metrics_dir": str(workspace / "metrics"),
              "world_dir": str(workspace / "world"), "benchmarks_dir": str(workspace / "bench"),
              "models_dir": str(workspace / "models"),
              "out_dir": str(out), "params_path": str(workspace / "params.yaml"),
              "calibration_csv": str(workspace / "cal.csv"), "mined_root": str(workspace / "mined")}
    html = render_report(NOTEBOOK, out, params).read_text()
    assert "Traceback" not in html and "TSVLC-T1a" in html and not NAN.search(
        re.sub(r"<[^>]+>", " ", html.split("<body", 1)[-1]).replace("data:image", ""))
    for name in ("artifact_checklist", "claims_ledger", "TSVLC-T1a", "TSVLC-T1b", "TSVLC-T1g", "TSVLC-T2", "TSVLC-T3",
                 "TSVLC-T3_vs_T1a", "TSVLC-S1", "TSVLC-S2_word_lists", "TSVLC-S2_tsvlc_rb", "TSVLC-S3",
                 "TSVLC-S4_1", "provenance"):
        assert (out / "tables" / f"{name}.csv").exists(), name
    assert (out / "figures" / "TSVLC-F3.png").exists() and (out / "figures" / "TSVLC-F4.png").exists()
    assert "No output of <code>mine@tsvlc_unmask</code>" in html
    first = (out / "index.html").read_bytes()
    render_report(NOTEBOOK, out, params)
    assert (out / "index.html").read_bytes() == first  # a pure function of its inputs
    from chromium import CHROMIUM, check_report_page  # tests/ is on sys.path (rootdir conftest)

    if CHROMIUM is not None:  # .ci/run installs it
        check_report_page(out / "index.html", tmp_path / "layout", ("at-a-glance", "verdicts"))


def test_notebook_real_profile_says_not_run(tmp_path):
    from vlcomp.reporting.notebook import render_report

    metrics = tmp_path / "metrics"
    (metrics / "released" / "tsvlc").mkdir(parents=True)
    (metrics / "released" / "tsvlc" / "metrics.json").write_text(json.dumps({"vlchecklist/object/avg": 0.84}))
    (metrics / "released" / "tsvlc" / "provenance.json").write_text(json.dumps(
        {"model": "tsvlc", "profile": "real", "source": "released", "dvc_stage": "evaluate_released@tsvlc"}))
    params = _params() | {"profile": "real", "variants": {}, "released_models": {"tsvlc": {}, "clip": {}}}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    out = tmp_path / "report"
    html = render_report(NOTEBOOK, out, {"profile": "real", "metrics_dir": str(metrics), "out_dir": str(out),
                                         "models_dir": str(tmp_path / "models"),
                                         "params_path": str(tmp_path / "params.yaml")}).read_text()
    assert "Traceback" not in html and "No TSVLC method runs in these params" in html
    runs = pd.read_csv(out / "tables" / "runs.csv")  # every method the page shows: none has run
    tsvlc = [m for m, spec in params["methods"].items() if spec.get("paper") == "tsvlc"]
    assert len(tsvlc) == 8 + len(SECTION) and {f"`{m}`" for m in tsvlc} <= set(runs["key"])
    assert set(runs["which runs"]) == {"not run"}
    released = pd.read_csv(out / "tables" / "tsvlc_released.csv")
    row = released[(released["metric_key"] == "vlchecklist/object/avg") & (released["model"] == "tsvlc")
                   & (released["artifact"] == "TSVLC-T1a")].iloc[0]
    assert row["reproduced"] == pytest.approx(0.84) and row["paper"] == pytest.approx(0.8509)
    assert "What each toy" not in html and "No verdicts on this page" in html
    checklist = pd.read_csv(out / "tables" / "artifact_checklist.csv")
    status = dict(zip(checklist["artifact"], checklist["status"], strict=True))
    assert status["TSVLC-C1"] == "no verdict on this page" and status["TSVLC-S4"].startswith("toy profile only")
    assert status["TSVLC-T1a"] == "rendered; no reproduced value yet"
    for name in ("TSVLC-T1_T2_printed", "TSVLC-T3_printed", "TSVLC-T3_vs_T1a", "provenance"):
        assert (out / "tables" / f"{name}.csv").exists(), name
    printed = (out / "tables" / "TSVLC-T1_T2_printed.md").read_text()
    assert "Printed values only, as printed." in printed


def test_world_change_section_puts_the_first_world_beside_this_run(ctx, tmp_path):
    here = replace(ctx, first_world=tmp_path / "first_world")
    assert R.world_change_settings(here) is None and R.world_change_claims(here) is None
    assert str(tmp_path / "first_world") in R.first_world_missing(here)
    (tmp_path / "first_world").mkdir()
    before = _params()
    before["methods"]["tsvlc_lora"]["epochs"] = 3  # this run's params do not set it
    before["benchmarks"]["twins"]["vlchecklist"]["items_per_file"] = 2
    (tmp_path / "first_world" / "params.yaml").write_text(yaml.safe_dump(before))
    settings = R.world_change_settings(here).data.set_index("setting")
    assert list(settings.index) == ["methods.tsvlc_lora.epochs", "benchmarks.twins.vlchecklist.items_per_file"]
    assert settings.loc["methods.tsvlc_lora.epochs", "before"] == "3"
    assert settings.loc["methods.tsvlc_lora.epochs", "after"] == ""
    assert settings.loc["benchmarks.twins.vlchecklist.items_per_file", "after"] == "4"

    _, ledger = R.ledger(ctx)
    ledger.data.to_csv(tmp_path / "first_world" / "claims_tsvlc.csv", index=False)
    same = R.world_change_claims(here)
    assert len(same.data) == len(ledger.data) and any("same value on both sides" in n for n in same.notes)
    moved = ledger.data.copy()
    moved.loc[0, ["value", "condition_held", "claim_held"]] = [-0.5, "no", "not held"]
    gone = moved.iloc[[0]].assign(condition="a condition this run no longer has")
    pd.concat([moved, gone]).to_csv(tmp_path / "first_world" / "claims_tsvlc.csv", index=False)
    table = R.world_change_claims(here)
    last = table.data.iloc[-1]  # the first world's alone: after this run's, with n = 0 and no verdict on this side
    assert last["condition"] == "a condition this run no longer has" and len(table.data) == len(ledger.data) + 1
    assert last["this run/n"] == 0 and last["this run/condition_held"] == "" and last["first world/n"] > 0
    assert table.shown.iloc[-1]["this run: value ± spread (n)"] == "missing"
    row = table.data.iloc[0]
    assert (row["claim"], row["condition"]) == tuple(ledger.data.iloc[0][["claim", "condition"]])
    assert row["first world/value"] == -0.5 and row["this run/value"] == pytest.approx(ledger.data.iloc[0]["value"])
    assert row["first world/claim_held"] == "not held"
    assert not any("same value on both sides" in n for n in table.notes)
    assert "first world: value ± spread (n)" in table.shown.columns
    assert "docs/world_v2.md" in R.world_change_markdown(here)
    for t in (R.world_change_settings(here), table):
        assert t.legend and not NAN.search(show(tmp_path, "x", t))
