"""The real-profile ARO report: reproduced values from a fixture metrics tree next to the paper's printed ones."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
import yaml

from vlcomp.reporting import comparison as C
from vlcomp.reporting import tree as T
from vlcomp.reporting.paper_values import load_paper_values
from vlcomp.reporting.papers.aro import real as A
from vlcomp.reporting.scaffold import tree_runs_table

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "aro.py"

PARAMS = {
    "profile": "real",
    "methods": {"clip_ft": {"paper": "aro", "loss": "clip"}, "negclip": {"paper": "aro", "loss": "negclip"}},
    "base_seeds": [0],
    "bases": {"b0": {"seed": 0}},
    "variants": {"clip_ft-b0s0": {"method": "clip_ft", "base": "b0", "seed": 0},
                 "clip_ft-b0s1": {"method": "clip_ft", "base": "b0", "seed": 1},
                 "negclip-b0s0": {"method": "negclip", "base": "b0", "seed": 0},
                 "negclip-b0s1": {"method": "negclip", "base": "b0", "seed": 1}},
    "released_models": {"clip": {}, "negclip": {}, "ceclip": {}, "conclip": {}, "blip": {}, "flava": {}},
}

# hand-chosen reproduced values; every expectation below is computed by hand from these and the paper CSV
METRICS = {
    "clip-b0": {"aro/vg_relation/macro_acc": 0.60, "aro/vg_relation/spatial_macro_acc": 0.55,
             "aro/vg_relation/verbs_macro_acc": 0.62, "aro/vg_relation/rel/above/acc": 0.50,
             "aro/vg_relation/rel/in_front_of/acc": 0.45, "aro/vg_relation/rel/made_up_rel/acc": 0.9,
             "aro/vg_attribution/macro_acc": 0.63, "aro/coco_order/acc": 0.47, "aro/coco_order/acc_std": 0.002,
             "aro/coco_order/n_seeds": 5, "retrieval/coco/i2t/recall_at_1": 0.52,
             "retrieval/coco/t2i/recall_at_1": 0.31},
    "clip_ft-b0s0": {"aro/vg_attribution/macro_acc": 0.66, "aro/coco_order/acc": 0.40},
    "negclip-b0s0": {"aro/vg_relation/macro_acc": 0.78, "aro/vg_attribution/macro_acc": 0.75,
                   "aro/coco_order/acc": 0.84},
    "negclip-b0s1": {"aro/vg_relation/macro_acc": 0.82, "aro/vg_attribution/macro_acc": 0.65},  # no coco_order
}
RELEASED = {
    "negclip": {"aro/coco_order/acc": 0.85, "aro/coco_order/acc_std": 0.001, "aro/vg_attribution/macro_acc": 0.72,
                "sugarcrepe/replace/micro_acc": 0.85, "sugarcrepe/replace/macro_acc": 0.84,
                "sugarcrepe/replace_obj/acc": 0.9, "ccneg/acc": 0.3, "hardpos/swap/orig": 0.5},
    "blip": {"aro/coco_order/acc": 0.33, "aro/coco_order/acc_std": 0.004, "aro/vg_relation/macro_acc": 0.61},
    "ceclip": {"aro/vg_attribution/macro_acc": 0.76, "valse/avg_instruments": 0.7, "ccneg/acc": 0.4},
    "conclip": {"ccneg/acc": 0.99, "ccneg/word/no/k/1/acc": 0.95},  # compared with CoN-CLIP's printed numbers
}


def _write(folder: Path, metrics: object, provenance: dict | None) -> None:
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps(metrics))
    if provenance is not None:
        (folder / "provenance.json").write_text(json.dumps(provenance))


def _prov(name: str, method: str, seed: int | None, profile: str = "real") -> dict:
    """A pipeline model's provenance.json: deterministic fields only (no commit, no run id)."""
    return {"model": name, "method": method, "base": "b0", "seed": seed, "profile": profile,
            "dvc_stage": f"evaluate@{name}"}


@pytest.fixture
def tree_files(tmp_path: Path) -> tuple[Path, Path]:
    """metrics/ with real-profile pipeline models, a toy leftover (clip_ft-b0s1) and four released checkpoints."""
    metrics = tmp_path / "metrics"
    for name, m in METRICS.items():
        spec = PARAMS["variants"].get(name, {"method": "clip", "seed": None})
        _write(metrics / name, m, _prov(name, spec["method"], spec["seed"]))
    _write(metrics / "clip_ft-b0s1", {"aro/coco_order/acc": 0.99}, _prov("clip_ft-b0s1", "clip_ft", 1, profile="toy"))
    for name, m in RELEASED.items():
        _write(metrics / "released" / name, m, {"model": name, "profile": "real", "source": "released",
                                                 "dvc_stage": f"evaluate_released@{name}"})
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump(PARAMS, sort_keys=False))
    return metrics, params


@pytest.fixture
def tree(tree_files: tuple[Path, Path]) -> T.MetricsTree:
    return A.load(*tree_files)


def _row(df: pd.DataFrame, **where) -> pd.Series:
    mask = pd.Series(True, index=df.index)
    for col, v in where.items():
        mask &= df[col] == v
    assert mask.sum() == 1, (where, mask.sum())
    return df[mask].iloc[0]


# --------------------------------------------------------------------------- loading


def test_variant_maps_to_its_method_and_released_to_its_name(tree):
    paper = load_paper_values("aro")
    assert T.variant_method("negclip-b0s0", None, PARAMS) == "negclip"
    assert T.variant_method("clip_ft-b0s1", None, PARAMS) == "clip_ft"
    assert T.variant_method("x", {"method": "negclip"}, {}) == "negclip"  # provenance wins
    assert T.variant_method("clip", None, PARAMS) == "clip"  # the single-base layout's base model
    assert T.chain_of("clip-b0", None, PARAMS) == T.Chain("clip", "b0", "0", "")  # a base model, from params bases
    assert T.chain_of("negclip-b0s1", None, PARAMS).label == "b0s1"
    assert T.paper_model_of(T.PIPELINE, "negclip", "negclip-b0s0", paper) == "negclip"
    assert T.paper_model_of(T.RELEASED, "ceclip", "ceclip", paper) == ""  # not in the ARO paper's CSV
    got = {(m.name, m.source): (m.method, m.paper_model, m.seed) for m in tree.models}
    assert got[("negclip-b0s1", T.PIPELINE)] == ("negclip", "negclip", "1")
    assert got[("clip_ft-b0s0", T.PIPELINE)] == ("clip_ft", "clip_ft", "0")
    assert got[("clip-b0", T.PIPELINE)] == ("clip", "clip", "")
    assert got[("blip", T.RELEASED)] == ("blip", "blip", "")
    assert got[("ceclip", T.RELEASED)] == ("ceclip", "", "")


def test_toy_folder_is_ignored_and_expected_models_are_missing(tree):
    assert [m.name for m in tree.present(T.PIPELINE)] == ["clip-b0", "clip_ft-b0s0", "negclip-b0s0", "negclip-b0s1"]
    assert [m.name for m in tree.missing(T.PIPELINE)] == ["clip_ft-b0s1"]  # its folder is a toy leftover
    assert [m.name for m in tree.present(T.RELEASED)] == ["negclip", "ceclip", "conclip", "blip"]  # params order
    assert [m.name for m in tree.missing(T.RELEASED)] == ["clip", "flava"]
    assert [(d.name, why) for d, why in tree.ignored] == [("clip_ft-b0s1", "profile 'toy', not 'real'")]
    runs = tree_runs_table(tree).data  # the page's runs table says which models are evaluated
    assert list(runs.loc[runs["status"] != "evaluated", "model"]) == ["`clip_ft-b0s1`", "`clip`", "`flava`"]
    assert _row(runs, model="`negclip-b0s1`")["chain"] == "b0s1"
    intro = A.intro_markdown(tree)
    assert "4 of 5 pipeline models and 4 of 6 released checkpoints" in intro
    assert "1 folder with a metrics.json ignored" in intro and "(#ignored_folders)" in intro
    # the toy leftover's 0.99 appears nowhere
    assert 0.99 not in set(A.order_table(tree)["reproduced"].dropna())


def test_aro_intro_lists_aro_models_only(tmp_path):
    params = {**PARAMS, "methods": {**PARAMS["methods"], "tsvlc_combined": {"paper": "tsvlc", "loss": "tsvlc"}},
              "variants": {**PARAMS["variants"],
                           "tsvlc_combined-b0s0": {"method": "tsvlc_combined", "base": "b0", "seed": 0}}}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    _write(tmp_path / "metrics" / "negclip-b0s0", METRICS["negclip-b0s0"], _prov("negclip-b0s0", "negclip", 0))
    tree = A.load(tmp_path / "metrics", tmp_path / "params.yaml")
    # ARO's report reads ARO's models only (vlcomp.reporting.scope): TSVLC's run is not in its tree
    assert "tsvlc_combined-b0s0" not in [m.name for m in tree.models]
    runs = tree_runs_table(tree).data  # ARO's runs table lists ARO's (TSVLC's rows are in TSVLC's report)
    assert list(runs.loc[runs["source"] == T.PIPELINE, "model"]) == [
        "`clip-b0`", "`clip_ft-b0s0`", "`clip_ft-b0s1`", "`negclip-b0s0`", "`negclip-b0s1`"]
    assert list(runs.loc[runs["status"] == "evaluated", "model"]) == ["`negclip-b0s0`"]
    intro = A.intro_markdown(tree)
    assert "tsvlc" not in intro and "`negclip` (loss=negclip, paper=aro)" in intro


def test_no_paper_folder_says_so_and_still_builds_every_table(tmp_path):
    metrics = tmp_path / "metrics"
    _write(metrics / "clip", {"aro/coco_order/acc": 0.5}, _prov("clip", "clip", "", profile="toy"))
    _write(metrics / "negclip-b0s0", {"aro/coco_order/acc": 0.5}, None)  # no provenance: not paper either
    tree = A.load(metrics, tmp_path / "absent.yaml")
    assert tree.present() == []
    assert "No real-profile metrics found" in A.intro_markdown(tree)
    assert {why for _, why in tree.ignored} == {"profile 'toy', not 'real'", "no provenance.json"}
    t6 = A.t6(tree)
    assert t6["reproduced"].isna().all()
    assert T.released_wide(tree).empty and C.formatted(T.released_wide(tree)).empty
    for table in (A.t2(tree), A.x1(tree), A.order_table(tree), T.provenance_table(tree)):
        assert len(C.formatted(table)) == len(table)


@pytest.mark.parametrize("content", ["[0.5, 0.6]", '{"aro/coco_order/acc": "0.5"}', '{"a": true}', "{not json"])
def test_malformed_metrics_raise_naming_the_file(tmp_path, content):
    path = tmp_path / "metrics" / "negclip-b0s0" / "metrics.json"
    _write(path.parent, {}, _prov("negclip-b0s0", "negclip", "0"))
    path.write_text(content)
    with pytest.raises(ValueError, match="negclip-b0s0/metrics.json"):
        A.load(tmp_path / "metrics", tmp_path / "params.yaml")


# --------------------------------------------------------------------------- tables


def test_x1_difference_and_seed_mean(tree):
    x1 = A.x1(tree)
    r = _row(x1, model="negclip-b0s0")
    assert r["paper"] == pytest.approx(0.71) and r["difference"] == pytest.approx(0.75 - 0.71)
    assert r["paper_ref"] == "ARO-X1 (text §4)" and r["dvc_stage"] == "evaluate@negclip-b0s0"
    assert "git_commit" not in x1.columns and "mlflow_run_id" not in x1.columns
    mean = _row(x1, source=C.CHAIN_MEAN, method="negclip")
    assert mean["reproduced"] == pytest.approx(0.70)  # (0.75 + 0.65) / 2
    assert mean["std_over_chains"] == pytest.approx(math.sqrt(2 * 0.05**2))  # ddof=1
    assert mean["n_chains"] == 2 and mean["difference"] == pytest.approx(-0.01)
    assert _row(x1, model="blip")["paper"] == pytest.approx(0.88)  # released -> its name's paper row
    assert math.isnan(_row(x1, model="blip")["reproduced"])
    assert T.NOTE_METRIC_MISSING in _row(x1, model="blip")["note"]
    ceclip = _row(x1, model="ceclip")
    assert ceclip["reproduced"] == pytest.approx(0.76) and math.isnan(ceclip["paper"])
    assert C.NOTE_NO_PAPER in ceclip["note"]
    assert T.NOTE_MODEL_MISSING in _row(x1, model="flava")["note"]
    assert not (x1["source"] == C.CHAIN_MEAN).any() or set(x1.loc[x1["source"] == C.CHAIN_MEAN, "method"]) == {"negclip"}


def test_t6_rows_zero_shot_and_missing_metric(tree):
    t6 = A.t6(tree)
    vgr = _row(t6, task="VG-Relation", source=C.CHAIN_MEAN)
    assert vgr["reproduced"] == pytest.approx(0.80) and vgr["paper"] == pytest.approx(0.81)
    assert vgr["difference"] == pytest.approx(-0.01)
    coco = _row(t6, task="COCO-PRC", model="clip_ft-b0s0")
    assert coco["paper"] == pytest.approx(0.36) and coco["difference"] == pytest.approx(0.04)
    assert _row(t6, task="COCO Text R@1", model="clip-b0", source=T.PIPELINE)["difference"] == pytest.approx(0.52 - 0.50)
    assert _row(t6, task="COCO Image R@1", model="clip-b0", source=T.PIPELINE)["metric_key"] == "retrieval/coco/t2i/recall_at_1"
    assert T.NOTE_METRIC_MISSING in _row(t6, task="COCO-PRC", model="negclip-b0s1")["note"]
    cifar = t6[t6["task"] == "CIFAR10"]
    assert cifar["reproduced"].isna().all() and (cifar["metric_key"] == "zeroshot/cifar10/acc").all()
    # zeroshot_aro was not run: a model present lacks the metric, a model absent was not evaluated
    assert (cifar["note"].str.contains(T.NOTE_METRIC_MISSING, regex=False)
            | cifar["note"].str.contains(T.NOTE_MODEL_MISSING, regex=False)).all()
    assert _row(cifar, model="clip-b0", source=T.PIPELINE)["paper"] == pytest.approx(0.95)
    wide = C.wide_view(t6, ("group", "task"))
    assert list(wide["task"]) == ["VG-Relation", "VG-Attribution", "Flickr30k-PRC", "COCO-PRC", "CIFAR10",
                                  "CIFAR100", "ImageNet", "Flickr30k Image R@1", "Flickr30k Text R@1",
                                  "COCO Image R@1", "COCO Text R@1"]
    assert _row(wide, task="VG-Relation")["paper: negclip"] == pytest.approx(0.81)


def test_t2_macro_rows_and_relation_keys(tree):
    t2 = A.t2(tree)
    assert _row(t2, relation="macro (spatial)", model="clip-b0", source=T.PIPELINE)["difference"] == pytest.approx(0.55 - 0.56)
    assert _row(t2, relation="macro (overall)", model="blip")["difference"] == pytest.approx(0.61 - 0.59)
    front = _row(t2, relation="in front of", model="clip-b0", source=T.PIPELINE)
    assert front["metric_key"] == "aro/vg_relation/rel/in_front_of/acc"
    assert front["reproduced"] == pytest.approx(0.45) and front["difference"] == pytest.approx(0.45 - 0.54)
    assert front["paper_n_samples"] == 588 and front["section"] == "spatial"
    assert _row(t2, relation="above", model="clip-b0", source=T.PIPELINE)["difference"] == pytest.approx(0.02)
    extra = _row(t2, relation="made_up_rel", model="clip-b0", source=T.PIPELINE)  # in the metrics, not in the paper
    assert extra["reproduced"] == pytest.approx(0.9) and math.isnan(extra["paper"]) and extra["section"] == "other"
    assert "flava" not in set(t2.loc[~t2["relation"].str.startswith("macro"), "model"])  # missing: macro rows only
    assert "flava" in set(t2["model"])
    wide = C.wide_view(t2, ("section", "relation", "paper_n_samples"))
    assert (wide["relation"] == "macro (overall)").sum() == 1  # an empty sample count still keys one row


def test_order_table_prefers_table5_with_std(tree):
    order = A.order_table(tree)
    blip = _row(order, dataset="coco_order", model="blip")
    assert blip["paper"] == pytest.approx(0.321) and blip["paper_std"] == pytest.approx(0.001)
    assert blip["paper_ref"] == "ARO-T5 (Table 5)" and blip["difference"] == pytest.approx(0.009)
    assert blip["std_over_order_seeds"] == pytest.approx(0.004)
    neg = _row(order, dataset="coco_order", model="negclip", source=T.RELEASED)
    assert neg["paper_ref"] == "ARO-T6 (Table 6)" and neg["difference"] == pytest.approx(-0.01)
    clip = _row(order, dataset="coco_order", model="clip-b0", source=T.PIPELINE)
    assert clip["paper"] == pytest.approx(0.460) and clip["n_order_seeds"] == 5
    # negclip has coco_order on one seed only: no mean row
    assert not ((order["source"] == C.CHAIN_MEAN) & (order["dataset"] == "coco_order")).any()


def test_released_wide_lists_headline_metrics_and_no_paper_values(tree):
    wide = T.released_wide(tree)
    assert list(wide["model"]) == ["clip", "negclip", "ceclip", "conclip", "blip", "flava"]
    keys = [c for c in wide.columns if "/" in c]
    assert keys == ["aro/vg_relation/macro_acc", "aro/vg_attribution/macro_acc", "aro/coco_order/acc",
                    "sugarcrepe/replace/macro_acc", "sugarcrepe/replace/micro_acc", "valse/avg_instruments",
                    "ccneg/acc", "hardpos/swap/orig"]
    assert not any("paper" in c for c in wide.columns)
    assert _row(wide, model="ceclip")["valse/avg_instruments"] == pytest.approx(0.7)
    assert _row(wide, model="flava")["note"] == T.NOTE_MODEL_MISSING
    assert "valse (1 cells)" in _row(wide, model="negclip")["note"]


def test_provenance_table(tree):
    prov = T.provenance_table(tree)
    r = _row(prov, model="negclip-b0s1")
    assert (r["dvc_stage"], r["run_record"], r["profile"], r["status"], r["base"], r["base_seed"], r["seed"]) == (
        "evaluate@negclip-b0s1", "runs/evaluate@negclip-b0s1.json", "real", "present", "b0", "0", "1")
    assert r["mlflow_runs"] == "experiment evaluate: tags.dvc_stage = 'evaluate@negclip-b0s1'"
    assert _row(prov, model="clip", source=T.RELEASED)["status"] == "missing"
    assert _row(prov, model="clip", source=T.RELEASED)["run_record"] == ""  # no stage wrote it
    assert "git_commit" not in prov.columns and "mlflow_run_id" not in prov.columns


def test_comparison_table_formats_and_saves(tree, tmp_path):
    from vlcomp.reporting.render import save_table

    x1 = A.x1(tree)
    save_table(C.table(x1), tmp_path / "out", "ARO-X1")
    md = (tmp_path / "out" / "tables" / "ARO-X1.md").read_text()
    line = next(ln for ln in md.splitlines() if "| negclip-b0s0 " in ln)
    assert "| 0.750 " in line and "| +0.040 " in line and "nan" not in md
    csv = pd.read_csv(tmp_path / "out" / "tables" / "ARO-X1.csv", keep_default_na=True)
    assert len(csv) == len(x1)
    assert csv.loc[csv["model"] == "negclip-b0s0", "difference"].iloc[0] == pytest.approx(0.04)
    notes = C.note_lines(x1)
    assert any(T.NOTE_MODEL_MISSING in n and "`flava` (1 row)" in n for n in notes)
    assert all(n in md for n in notes)  # every row note is written under the table
    wide = C.table(A.t6(tree), index=("group", "task"))  # the page shows the wide view, the CSV keeps the long form
    assert list(wide.shown["task"])[:2] == ["VG-Relation", "VG-Attribution"] and len(wide.data) > len(wide.shown)
    assert wide.shown.loc[wide.shown["task"] == "VG-Relation", "paper: negclip"].iloc[0] == "0.810"
    assert C.LONG_FORM in wide.notes


# --------------------------------------------------------------------------- the notebook


def test_notebook_renders_on_a_fixture_tree(tree_files, tmp_path):
    from vlcomp.reporting.notebook import render_report

    metrics, params = tree_files
    out = tmp_path / "report"
    html = render_report(NOTEBOOK, out, {"profile": "real", "metrics_dir": str(metrics),
                                         "models_dir": str(tmp_path / "models"), "out_dir": str(out),
                                         "params_path": str(params)})
    text = html.read_text()
    assert html.name == "index.html" and "Traceback" not in text
    # a pure function of its inputs: a second render gives the same bytes (cell ids numbered, no timestamps)
    first = {f: (out / f).read_bytes() for f in ("index.html", "executed.ipynb")}
    render_report(NOTEBOOK, out, {"profile": "real", "metrics_dir": str(metrics),
                                  "models_dir": str(tmp_path / "models"), "out_dir": str(out),
                                  "params_path": str(params)})
    assert {f: (out / f).read_bytes() for f in first} == first
    executed = json.loads(first["executed.ipynb"])
    assert [c["id"] for c in executed["cells"]] == [f"cell-{i}" for i in range(len(executed["cells"]))]
    assert "start_time" not in executed["metadata"]["papermill"]
    for name in ("ARO-T6", "ARO-T2", "ARO-X1", "ARO-order", "released_all_benchmarks", "pipeline_all_benchmarks",
                 "provenance", "ignored_folders", "runs", "artifact_checklist",
                 *(f"{paper}_released" for paper in ("ceclip", "conclip", "tsvlc", "hardpos"))):
        for ext in ("csv", "md", "tex"):
            assert (out / "tables" / f"{name}.{ext}").exists(), (name, ext)
    x1 = pd.read_csv(out / "tables" / "ARO-X1.csv")
    mean = x1[x1["source"] == C.CHAIN_MEAN].iloc[0]
    assert mean["reproduced"] == pytest.approx(0.70) and mean["difference"] == pytest.approx(-0.01)
    assert "0.700" in text and "-0.010" in text  # the NegCLIP seed mean and its difference to the paper's 0.71
    assert T.NOTE_METRIC_MISSING in text and "CE-CLIP, CoN-CLIP, TSVLC and Hard-Positives papers" in text
    assert "paper values live" not in text  # the old note
    for heading in ("CE-CLIP", "CoN-CLIP", "TSVLC", "Hard Positives"):
        assert f"{heading} — released checkpoints next to the paper" in text, heading
    # the released CoN-CLIP next to its printed 99.70 (Table 3) and 96.99 ("no", K=1, Table 7)
    conclip = pd.read_csv(out / "tables" / "conclip_released.csv")
    t3 = conclip[(conclip["artifact"] == "CONCLIP-T3") & (conclip["model"] == "conclip")].iloc[0]
    assert t3["reproduced"] == pytest.approx(0.99) and t3["paper"] == pytest.approx(0.997)
    assert t3["difference"] == pytest.approx(-0.007) and pd.isna(t3["note"])  # empty cell: nothing to note
    no_k1 = conclip[(conclip["artifact"] == "CONCLIP-T7") & (conclip["metric_key"] == "ccneg/word/no/k/1/acc")
                    & (conclip["model"] == "conclip")].iloc[0]
    assert no_k1["difference"] == pytest.approx(0.95 - 0.9699)
    flava = conclip[(conclip["artifact"] == "CONCLIP-T3") & (conclip["model"] == "flava")].iloc[0]
    assert flava["paper"] == pytest.approx(0.5893) and math.isnan(flava["reproduced"])  # flava missing
    wide = (out / "tables" / "conclip_released.md").read_text()  # the page's wide view: one row per printed metric
    assert "conclip (released)" in wide and "paper: flava" in wide
    # the transcription notes are shown
    assert "AMBIGUOUS label shift" in text and "Transcription note" in text
    assert "metrics/clip_ft-b0s1</td>" in text and "profile 'toy', not 'real'" in text  # the ignored toy leftover
    assert "What each toy twin stands for" not in text  # the toy sections are not part of this profile's run
    # the scaffold's page: no verdicts in this profile (one run per row), the checklist generated
    assert "No verdicts on this page" in text and "Claims ledger: every condition" not in text
    checklist = pd.read_csv(out / "tables" / "artifact_checklist.csv")
    status = dict(zip(checklist["artifact"], checklist["status"], strict=True))
    assert status["ARO-X1"].startswith("rendered; reproduced values for") and status["ARO-F3"].startswith("toy profile only")
    from chromium import CHROMIUM, check_report_page  # tests/ is on sys.path (rootdir conftest)

    if CHROMIUM is not None:  # .ci/run installs it
        check_report_page(out / "index.html", tmp_path / "layout", ("at-a-glance", "verdicts"))


def test_chain_means_cover_the_base_model_and_say_over_what(tmp_path):
    params = {"profile": "real", "bases": {"b0": {"seed": 0}, "b1": {"seed": 1}},
              "variants": {f"negclip-b{k}s0": {"method": "negclip", "base": f"b{k}", "seed": 0} for k in (0, 1)}}
    key = "aro/vg_attribution/macro_acc"
    for name, method, base, seed, v in (("clip-b0", "clip", "b0", None, 0.60), ("clip-b1", "clip", "b1", None, 0.62),
                                        ("negclip-b0s0", "negclip", "b0", 0, 0.78),
                                        ("negclip-b1s0", "negclip", "b1", 0, 0.80)):
        _write(tmp_path / "metrics" / name, {key: v}, {"model": name, "method": method, "base": base, "seed": seed,
                                                        "profile": "real", "dvc_stage": f"evaluate@{name}"})
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    x1 = A.x1(A.load(tmp_path / "metrics", tmp_path / "params.yaml"))
    clip = _row(x1, source=C.CHAIN_MEAN, method="clip")
    assert clip["reproduced"] == pytest.approx(0.61) and clip["n_chains"] == 2
    assert clip["std_over_chains"] == pytest.approx(math.sqrt(2 * 0.01**2))  # ddof=1
    assert clip["seed"] == "b0,b1" and clip["note"] == "mean over 2 base seeds (0, 1)"
    assert clip["difference"] == pytest.approx(0.61 - 0.62)  # ARO-X1 prints CLIP 0.62
    neg = _row(x1, source=C.CHAIN_MEAN, method="negclip")
    assert neg["note"] == "mean over 2 whole chains (base seeds 0, 1 x fine-tune seed 0)"
    assert _row(x1, model="negclip-b1s0")["n_chains"] == 1
    legend = C.chain_legend(x1)
    assert "clip: 2 base seeds (0, 1); negclip: 2 whole chains" in legend and "std_over_chains" in legend
    from vlcomp.reporting.render import save_table

    save_table(C.table(x1, notes=["*Paper inconsistency*: a note."]), tmp_path / "out", "ARO-X1")
    md = (tmp_path / "out" / "tables" / "ARO-X1.md").read_text()
    assert legend in md and "*Paper inconsistency*: a note." in md
    wide = pd.read_csv(tmp_path / "out" / "tables" / "ARO-X1.csv")
    assert wide["reproduced"].dtype == float and wide["std_over_chains"].dtype == float
