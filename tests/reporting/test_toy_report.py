"""The toy report's sections on a synthetic whole-chain metrics tree (three base seeds, one fine-tuning seed): every
table carries a legend generated from the data, every figure its key, the calibration rows the configuration they
ran, and no cell reads "nan"."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
import yaml

from vlcomp.reporting.papers.aro import figures, tables
from vlcomp.reporting.papers.aro import toy as R
from vlcomp.reporting.papers.aro.inconsistencies import INCONSISTENCIES, concerning, notes
from vlcomp.reporting.render import save_figure, show, table_html
from vlcomp.reporting.scaffold import runs_table, verdicts_markdown

matplotlib.use("Agg")

BASES = (0, 1, 2)
PARAMS = {
    "profile": "toy", "root_seed": 0, "base_seeds": list(BASES), "seeds": {"negclip": [0]},
    "bases": {f"b{k}": {"seed": k} for k in BASES},
    "mining": {f"negclip-b{k}": {"generator": "negclip", "base": f"b{k}"} for k in BASES},
    "selections": {f"negclip-b{k}": {"method": "negclip", "base": f"b{k}", "generator": "negclip"} for k in BASES},
    "variants": {f"negclip-b{k}s0": {"method": "negclip", "base": f"b{k}", "seed": 0, "generator": "negclip"}
                 for k in BASES},
    "methods": {"negclip": {"paper": "aro", "label": "NegCLIP", "generator": "negclip"}},
    "benchmarks": {"order_seeds": 2, "shuffle_seeds": 3},
    "world": {"captions": {"and_prob": 0.5}, "colour_prior": 0.5},
}
RELATIONS = ["above"] * 6 + ["below"] * 4

NAN = re.compile(r"\bnan\b", re.IGNORECASE)  # a cell that reads "nan"


def _model(root: Path, name: str, method: str, base: str, seed: int | None, correct: list[bool], extra: dict) -> None:
    folder = root / name
    (folder / "items").mkdir(parents=True)
    vgr = pd.DataFrame({"index": range(10), "relation": RELATIONS, "correct": correct, "excluded": False})
    vgr.to_parquet(folder / "items" / "vg_relation.parquet", index=False)
    macro = float(vgr.groupby("relation")["correct"].mean().mean())
    order = pd.DataFrame({"seed": [0] * 5 + [1] * 5, "record": list(range(5)) * 2, "caption_index": 0,
                          "correct": correct})
    order.to_parquet(folder / "items" / "coco_order.parquet", index=False)
    metrics = {"aro/vg_relation/macro_acc": macro, "aro/coco_order/acc": float(order["correct"].mean()),
               "aro/coco_order/acc_std": 0.01, **extra}
    (folder / "metrics.json").write_text(json.dumps(metrics))
    (folder / "provenance.json").write_text(json.dumps({"model": name, "method": method, "base": base, "seed": seed,
                                                        "profile": "toy", "dvc_stage": f"evaluate@{name}"}))


@pytest.fixture(scope="module")
def ctx(tmp_path_factory) -> R.ReportContext:
    root = tmp_path_factory.mktemp("toy")
    rng = np.random.default_rng(0)
    for k in BASES:
        extra = {"aro/vg_attribution/macro_acc": 0.5 + 0.01 * k, "retrieval/coco/i2t/recall_at_1": 0.1,
                 "retrieval/coco/t2i/recall_at_1": 0.2, "zeroshot/cifar10/acc_web_only": 0.4 + 0.1 * k,
                 "zeroshot/cifar10/acc_coco": 0.3}
        _model(root / "metrics", f"clip-b{k}", "clip", f"b{k}", None, list(rng.random(10) < 0.5), extra)
        _model(root / "metrics", f"negclip-b{k}s0", "negclip", f"b{k}", 0, list(rng.random(10) < 0.8),
               {**extra, "aro/vg_attribution/macro_acc": 0.6 + 0.02 * k})
    (root / "params.yaml").write_text(yaml.safe_dump(PARAMS))
    (root / "world").mkdir()
    (root / "world" / "summary.json").write_text(json.dumps({s: {"n_images": 10, "n_captions": 50}
                                                             for s in ("coco_test", "flickr_test")}))
    models = root / "models"
    for k in BASES:
        (models / "base" / f"b{k}").mkdir(parents=True)
        (models / "base" / f"b{k}" / "history.json").write_text(json.dumps([{"step": s, "contrastive_loss": 1 / (s + 1)}
                                                                            for s in range(3)]))
        (models / "lr" / f"negclip-b{k}").mkdir(parents=True)
        (models / "lr" / f"negclip-b{k}" / "selection.json").write_text(json.dumps(
            {"method": "negclip", "grid": {"0.001": {"mean_recall_at_1": 0.2}, "0.0005": {"mean_recall_at_1": 0.1}},
             "selected_lr": 0.001, "sweep_epochs": 0.25}))
    return R.load(str(root / "metrics"), str(root / "world"), str(root / "bench"), str(models), str(root / "params.yaml"))


def test_intro_and_tables_say_what_the_spread_is_over(ctx, tmp_path):
    runs = runs_table(ctx.long, ctx.methods).data.set_index("key")["which runs"]  # the page's runs table
    assert runs["`clip`"] == "3 base seeds (0, 1, 2)"
    assert runs["`negclip`"] == "3 whole chains (base seeds 0, 1, 2 x fine-tune seed 0)"
    assert "runs table" in R.intro_markdown(ctx)
    t6 = R.t6(ctx)
    assert "CLIP: 3 base seeds (0, 1, 2)" in t6.legend and t6.legend.startswith("± = sample standard deviation")
    assert any("§6 #4" in n for n in t6.notes)  # the paper's own inconsistency about Table 6, beside it
    html = show(tmp_path, "ARO-T6", t6)
    assert not NAN.search(html) and "0.510\u00a0±\u00a00.010" in html  # CLIP VG-A over 3 base seeds: .50, .51, .52
    csv = pd.read_csv(tmp_path / "tables" / "ARO-T6.csv")
    r = csv[(csv["task"] == "VG-Attribution") & (csv["method"] == "clip")].iloc[0]
    assert r["mean"] == pytest.approx(0.51) and r["spread"] == pytest.approx(0.01) and r["n"] == 3
    assert r["paper"] == pytest.approx(0.62) and r["difference"] == pytest.approx(0.51 - 0.62)
    t5 = R.t5(ctx)
    assert any("perturbation sd" in n and "2 Order perturbation seeds" in n for n in t5.notes)
    assert "Accuracy (toy, perturbation sd)" in t5.shown.columns
    for table in (R.x1(ctx), R.x2(ctx), R.wrong_image(ctx), R.t3(ctx), R.t4(ctx), R.lr_selection(ctx),
                  R.provenance_table(ctx), R.forgetting(ctx)):
        assert table.legend, table.data.columns
    web = R.forgetting(ctx).data
    row = web[(web["measure"] == "CIFAR10, classes only the web split shows") & (web["method"] == "clip")].iloc[0]
    assert row["mean"] == pytest.approx(0.5) and row["spread"] == pytest.approx(0.1) and row["n"] == 3


def test_ledger_reports_the_rule_the_spread_and_intervals(ctx, tmp_path):
    claims, table = R.ledger(ctx)
    assert verdicts_markdown(claims).count("HELD") == len(claims) == 5  # one verdict per claim, (e) included
    assert R.ledger(ctx) is R.ledger(ctx)  # built once per context (the "what changed" section shows it too)
    assert "**Verdict rule.**" in table.legend and "every whole chain" in table.legend
    vgr = table.data[table.data["condition"] == "VG-R: NegCLIP - CLIP >= 0.05"].iloc[0]
    assert vgr["n"] == 3 and not np.isnan(vgr["ci_low"]) and vgr["ci_low"] <= vgr["value"] <= vgr["ci_high"]
    assert vgr["per_chain"].startswith("b0s0 - b0: ")
    save = show(tmp_path, "claims_ledger", table)
    assert "item bootstrap interval" in save and not NAN.search(save)
    assert set(pd.read_csv(tmp_path / "tables" / "claims_ledger.csv")["claim_held"]) <= {"held", "not held"}


def test_figures_carry_their_keys_and_legends(ctx, tmp_path):
    f1 = figures.figure1(ctx.summ, ctx.paper_values, ctx.methods)
    labels = [t.get_text() for t in f1.legends[0].get_texts()]
    assert "printed in the paper" in labels and any(lab.startswith("chance") for lab in labels)
    assert "error bar: ± 1 sample std over chains" in labels
    f2 = figures.figure2(ctx.summ, ctx.methods)
    f2.canvas.draw()
    box = f2.legends[0].get_window_extent()
    assert not any(box.overlaps(ax.get_window_extent()) for ax in f2.axes)  # the key never covers bars
    f3 = figures.figure3(ctx.summ, ctx.paper_values, ctx.methods)
    rlabel = f3.axes[0].get_rlabel_position()
    assert any(rlabel == pytest.approx(20.0 + 40.0 * i) for i in range(9))  # halfway between two of nine spokes
    assert any("mean of text" in t.get_text() for t in f3.axes[0].get_xticklabels())
    legend = R.figure(ctx, "ARO-F1").legend
    assert "Bars: means; error bars: ± 1 sample standard deviation" in legend and "CLIP: 3 base seeds" in legend
    assert any("Retrieval axes: the mean of text R@1" in n for n in R.figure(ctx, "ARO-F3").notes)
    assert (tmp_path / "figures" / "ARO-F2.png").exists() is False
    save_figure(R.figure(ctx, "ARO-F2").figure, tmp_path, "ARO-F2")
    assert (tmp_path / "figures" / "ARO-F2.pdf").exists()
    assert "one curve per" in R.figure(ctx, "training_curves").legend.lower()
    for f in (f1, f2, f3):
        matplotlib.pyplot.close(f)


def test_chain_layout_of_stage_outputs(ctx, tmp_path):
    assert R.mined_dir(ctx, tmp_path) == tmp_path / "negclip-b0"
    (tmp_path / "negclip").mkdir()  # only the single-base layout's folder: read it
    assert R.mined_dir(ctx, tmp_path) == tmp_path / "negclip"
    (tmp_path / "negclip-b0").mkdir()
    assert R.mined_dir(ctx, tmp_path) == tmp_path / "negclip-b0"
    lr = R.lr_selection(ctx).data
    assert len(lr) == 6 and set(lr["base"]) == {"b0", "b1", "b2"}
    assert sorted(R._histories(ctx)) == ["base/b0", "base/b1", "base/b2"]


def test_calibration_rows_are_labelled_by_the_configuration_they_ran(tmp_path):
    params = {"world": {"captions": {"and_prob": 0.5}, "colour_prior": 0.5}}
    assert R.configuration({}, "ba6217793130-dirty", params) == (
        "params of ba62177 (uncommitted changes)", "no overlay: that commit's defaults")
    label, vs = R.configuration({"world": {"captions": {"and_prob": 0.2}, "colour_prior": 0.5}}, "4858bb93d0", params)
    assert label == "params of 4858bb9 + world.captions.and_prob=0.2, world.colour_prior=0.5"
    assert vs == "world.captions.and_prob: 0.2 (today 0.5)"
    assert R.configuration({"world": {"colour_prior": 0.5}}, "abc", params)[1] == "overlay = today's values"
    csv = tmp_path / "cal.csv"
    pd.DataFrame([{"config": "default", "model": "clip", "aro/vg_relation/macro_acc": 0.47, "overlay": "{}",
                   "seconds": 420, "git_commit": "ba6217793130-dirty", "aro/vg_relation/wrong_image_macro_acc": np.nan}]
                 ).to_csv(csv, index=False)
    table = R.calibration_table(csv, params)
    assert table.shown.columns[0] == "configuration" and table.shown.iloc[0, 0] == "params of ba62177 (uncommitted changes)"
    assert "VG-R wrong image" in table.shown.columns and "sweep name" == table.shown.columns[-1]
    html = table_html(table)
    assert not NAN.search(html) and "not measured" in html


def test_every_inconsistency_of_the_catalog_is_shown_beside_a_report_artifact():
    from vlcomp.reporting.papers import PAPERS

    artifacts = set(PAPERS.get("aro").artifacts)
    assert [i.number for i in INCONSISTENCIES] == list(range(1, 15))
    assert all(set(i.artifacts) & artifacts for i in INCONSISTENCIES)
    assert [i.number for i in concerning(["ARO-T5"])] == [2, 3, 8, 14]
    assert notes(["ARO-T1"]) == ['*Paper inconsistency (aro_negclip.md §6 #9, Table 1):* Table 1 "shuffle trigrams" '
                                 'example not reproducible with left-aligned trigram chunking.']
    assert tables.PAPER_ONLY == ("blip", "xvlm", "flava")


def test_radar_ring_labels_go_where_no_polygon_reaches():
    # spokes 0..3; polygons reach 0.9 around spokes 0-1, little between spokes 2 and 3
    polygons = [[0.9, 0.8, 0.2, 0.1], [0.7, 0.6, 0.3, float("nan")]]
    gap, labelled = figures.radar_label_place(polygons)
    assert gap == 2 and labelled == [0.5, 0.75]  # the gap 2-3 reaches 0.3: rings from 0.34 up are clear
    assert figures.radar_label_place([[0.8] * 3])[1] == []  # nowhere clear: no ring label


def test_lr_selection_reads_only_the_selections_params_name(ctx, tmp_path):
    """A folder an earlier params left under models/lr (DVC does not delete the outputs of a stage that no longer
    exists) is not shown."""
    stale = ctx.models_dir / "lr" / "negclip-b9"
    stale.mkdir(parents=True, exist_ok=True)
    (stale / "selection.json").write_text(json.dumps({"method": "negclip", "grid": {"0.1": {"mean_recall_at_1": 0.5}},
                                                      "selected_lr": 0.1, "sweep_epochs": 0.25}))
    try:
        table = R.lr_selection(ctx).data
        assert set(table["selection"]) == set(PARAMS["selections"]) and 0.1 not in set(table["lr"])
    finally:
        import shutil

        shutil.rmtree(stale)


# --------------------------------------------------------------------------- claim (e) and what changed


def _kind_long(ctx) -> pd.DataFrame:
    """``ctx.long`` plus the per-kind VG-R keys (geometric, role-asymmetric, wrong image, cases) of every model."""
    rows = []
    for _, g in ctx.long.groupby("model", sort=False):
        head = g.iloc[0].to_dict()
        neg, k = head["method"] == "negclip", int(head["base_seed"])
        values = {"aro/vg_relation/geometric_macro_acc": 0.50 + 0.01 * k,
                  "aro/vg_relation/geometric_wrong_image_macro_acc": 0.50,
                  "aro/vg_relation/role_macro_acc": (0.80 if neg else 0.55) + 0.01 * k,
                  "aro/vg_relation/role_wrong_image_macro_acc": (0.70 if neg else 0.50) + 0.01 * k,
                  "aro/vg_relation/geometric_n_cases": 100.0, "aro/vg_relation/role_n_cases": 20.0}
        rows += [{**head, "key": key, "value": v} for key, v in values.items()]
    return R.with_kind_differences(pd.concat([ctx.long, pd.DataFrame(rows)], ignore_index=True))


def test_relation_kind_table_puts_own_and_wrong_image_per_kind(ctx):
    from vlcomp.reporting.collect import summary

    empty = R.relation_kind_table(ctx)  # metrics written before the per-kind keys: empty toy cells, said so
    assert any("no per-kind VG-R keys" in n for n in empty.notes)
    long = _kind_long(ctx)
    table = R.relation_kind_table(replace(ctx, long=long, summ=summary(long)))
    data = table.data.set_index(["method", "measure"])
    # role-asymmetric, NegCLIP: own 0.80/0.81/0.82, wrong 0.70/0.71/0.72 -> own - wrong 0.10 on every chain
    assert data.loc[("negclip", "role-asymmetric, own image"), "mean"] == pytest.approx(0.81)
    assert data.loc[("negclip", "role-asymmetric, own - wrong"), "mean"] == pytest.approx(0.10)
    assert data.loc[("negclip", "role-asymmetric, own - wrong"), "spread"] == pytest.approx(0.0, abs=1e-12)
    assert data.loc[("clip", "geometric, own image"), "paper"] == pytest.approx(0.570)  # ARO Table 2 by kind
    assert data.loc[("negclip", "role-asymmetric, own image"), "paper"] == pytest.approx(0.863)
    assert np.isnan(data.loc[("clip", "geometric, wrong image"), "paper"])
    assert any("geometric 100, role-asymmetric 20" in n for n in table.notes)
    assert any("Prediction 2" in n for n in table.notes) and not any("no per-kind" in n for n in table.notes)
    assert not NAN.search(table_html(table))


def _snapshot(folder: Path, ctx, claims: pd.DataFrame) -> None:
    """A first-world snapshot: its claims ledger, params (one knob moved, one absent) and summary rows."""
    folder.mkdir(parents=True)
    claims.to_csv(folder / "claims_aro.csv", index=False)
    before = json.loads(json.dumps(PARAMS))
    before["world"]["colour_prior"] = 0.4
    del before["world"]["captions"]
    (folder / "params.yaml").write_text(yaml.safe_dump(before))
    rows = []
    for k in BASES:
        for model, method, seed, role in ((f"clip-b{k}", "clip", "", 0.5), (f"negclip-b{k}s0", "negclip", "0", 0.6)):
            for key, v in (("aro/vg_relation/macro_acc", 0.5), ("aro/vg_relation/geometric_macro_acc", 0.5 + 0.01 * k),
                           ("aro/vg_relation/role_macro_acc", role + 0.02 * k),
                           ("aro/vg_relation/role_n_cases", 509.0)):
                rows.append({"model": model, "method": method, "base": f"b{k}", "base_seed": str(k), "seed": seed,
                             "key": key, "value": v, "source": "items"})
    pd.DataFrame(rows).to_csv(folder / "summary.csv", index=False)


def test_world_change_section_puts_the_first_world_beside_this_run(ctx, tmp_path):
    here = replace(ctx, calibration_csv=tmp_path / "calibration" / "aro_world.csv")
    assert R.world_change_settings(here) is None and R.world_change_claims(here) is None
    assert "scripts/snapshot_first_world.py" in R.first_world_missing(here)
    _, ledger = R.ledger(ctx)
    moved = ledger.data[ledger.data["claim"] != "e"].copy()
    vgr = moved["condition"] == "VG-R: NegCLIP - CLIP >= 0.05"
    moved.loc[vgr, "value"] = -0.25
    _snapshot(tmp_path / "calibration" / "first_world", ctx, moved)

    settings = R.world_change_settings(here).data.set_index("setting")
    assert settings.loc["world.colour_prior", "before"] == "0.4" and settings.loc["world.colour_prior", "after"] == "0.5"
    assert settings.loc["world.captions.and_prob", "before"] == "" and settings.loc["world.captions.and_prob",
                                                                                   "after"] == "0.5"
    assert "world.layout_prior" not in settings.index  # unchanged settings are not listed

    table = R.world_change_claims(here)
    data = table.data.set_index(["claim", "condition"])
    row = data.loc[("a", "VG-R: NegCLIP - CLIP >= 0.05")]
    assert row["first world/value"] == -0.25 and row["this run/value"] == pytest.approx(
        ledger.data.loc[ledger.data["condition"] == "VG-R: NegCLIP - CLIP >= 0.05", "value"].iloc[0])
    assert row["first world/n"] == row["this run/n"] == 3
    # claim (e) of the first world from its summary rows: NegCLIP - CLIP role = 0.1 on every chain, no CLIP-FT
    e = data.loc[("e", "VG-R role-asymmetric: NegCLIP - CLIP >= 0.05")]
    assert e["first world/value"] == pytest.approx(0.1) and e["first world/spread"] == pytest.approx(0.0, abs=1e-12)
    assert e["first world/condition_held"] == "yes" and e["this run/n"] == 0
    vs_ft = [c for c in data.loc["e"].index if c.startswith("VG-R role-asymmetric: NegCLIP - ") and "CLIP >=" not in c]
    assert len(vs_ft) == 1 and data.loc[("e", vs_ft[0]), "first world/n"] == 0  # these params have no CLIP-FT
    assert not any("same value on both sides" in n for n in table.notes)
    shown = table.shown.set_index(["claim", "condition"])
    assert shown.loc[("e", "VG-R role-asymmetric: NegCLIP - CLIP >= 0.05"), "this run: value ± spread (n)"] == "missing"

    (tmp_path / "calibration" / "first_world" / "claims_aro.csv").unlink()
    ledger.data[ledger.data["claim"] != "e"].to_csv(tmp_path / "calibration" / "first_world" / "claims_aro.csv",
                                                    index=False)
    assert any("same value on both sides" in n for n in R.world_change_claims(here).notes)

    base = R.world_change_base(here).data.set_index("key")
    # CLIP's role-asymmetric macro in the first world: 0.50, 0.52, 0.54; this run's metrics lack the key
    assert base.loc["aro/vg_relation/role_macro_acc", "first world/mean"] == pytest.approx(0.52)
    assert base.loc["aro/vg_relation/role_macro_acc", "first world/n"] == 3
    assert np.isnan(base.loc["aro/vg_relation/role_macro_acc", "this run/mean"])
    assert base.loc["aro/vg_relation/macro_acc", "this run/mean"] == pytest.approx(
        ctx.summ.query("method == 'clip' and key == 'aro/vg_relation/macro_acc'")["mean"].iloc[0])
    shown = R.world_change_base(here).shown.set_index("measure")
    assert shown.loc["VG-R role-asymmetric cases", "CLIP, first world"] == "509 (n=3)"
    assert shown.loc["VG-R role-asymmetric", "CLIP, this run"] == "missing"
    assert "docs/world_v2.md" in R.world_change_markdown(here)
    for t in (R.world_change_settings(here), R.world_change_claims(here), R.world_change_base(here)):
        assert t.legend and not NAN.search(table_html(t))


def test_world_change_settings_list_only_the_reports_own_methods_and_generators():
    """Another paper's generator (Hard Positives' ``mine.hardpos``, new in the second world) is no setting of ARO's
    world change: ARO's report stage does not depend on it, so adding a paper leaves the ARO report as it was."""
    from vlcomp.reporting.world_change import own_sections

    params = {"methods": {"clip_ft": {"generator": "negclip"}, "negclip": {"generator": "negclip"},
                          "hp_hn": {"generator": "hardpos"}, "tsvlc_combined": {"generator": "tsvlc_mix",
                                                                                 "positives_from": "tsvlc_rb"}},
              "mine": {"negclip": {}, "hardpos": {}, "tsvlc_mix": {}, "tsvlc_rb": {}}}
    assert own_sections(params, ["clip", "clip_ft", "negclip"]) == ["methods.clip_ft", "methods.negclip",
                                                                      "mine.negclip"]
    assert own_sections(params, ["tsvlc_combined"]) == ["methods.tsvlc_combined", "mine.tsvlc_mix", "mine.tsvlc_rb"]
    assert own_sections(params, ["nope"]) == []
    assert "mine" not in R.settings_sections(params, R.Methods(("clip", "negclip"), {}))
