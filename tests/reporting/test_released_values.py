"""The other four papers' printed numbers for the released checkpoints: the view of the packaged CSVs
(vlcomp.reporting.printed_values), its validation, and the comparison with a fixture metrics tree (expected values
computed by hand from the CSVs)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from eval.formats import BUILDERS, build  # tests/ is on sys.path (rootdir conftest, no __init__)
from vlcomp.benchmarks.aro import ORDER_OPTIONS
from vlcomp.benchmarks.hardpos import REPLACE_PARTS
from vlcomp.benchmarks.registry import BENCHMARKS
from vlcomp.benchmarks.retrieval import KS
from vlcomp.formats import ccneg as ccneg_ds
from vlcomp.formats import sugarcrepe as sugarcrepe_ds
from vlcomp.formats import valse as valse_ds
from vlcomp.formats import vlchecklist as vlc_ds
from vlcomp.metrics.aro import VG_RELATION_GROUP_OF
from vlcomp.reporting import comparison as C
from vlcomp.reporting import released_values as R
from vlcomp.reporting import tree as T
from vlcomp.reporting.papers.aro import real as A
from vlcomp.reporting.printed_values import COLUMNS as PRINTED_COLUMNS

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def values() -> pd.DataFrame:
    return R.load_released_paper_values()


# --------------------------------------------------------------------------- the shipped CSVs


def test_shipped_csv_loads_and_covers_the_four_papers(values):
    assert list(values.columns) == list(R.COLUMNS) and len(values) > 300
    assert set(values["paper"]) == set(R.PAPERS)
    assert not values.duplicated(list(R.KEY_COLUMNS)).any()
    for paper, (_title, prefix) in R.PAPERS.items():
        assert values.loc[values["paper"] == paper, "artifact"].str.startswith(prefix).all(), paper
    assert values["value"].between(-1, 1).all()
    negative = values[values["value"] < 0]
    assert len(negative) and negative["metric_key"].str.endswith("/delta").all()


def test_models_and_benchmarks_are_the_real_profiles():
    params = yaml.safe_load((ROOT / "profiles" / "real.yaml").read_text())
    assert R.MODELS == set(params["released_models"])
    assert set(R.KEY_PREFIX) == set(BENCHMARKS)


@pytest.mark.parametrize(("artifact", "model", "key", "printed"), [
    ("CE-T1", "ceclip", "aro/vg_relation/macro_acc", 83.0),
    ("CE-T1", "clip", "valse/avg_instruments", 65.3),
    ("CE-T2", "negclip", "vlchecklist/overall", 73.4),
    ("CE-T3", "ceclip", "sugarcrepe/add/macro_acc", 92.9),
    ("CE-T5", "ceclip", "retrieval/coco/t2i/recall_at_5", 69.4),
    ("CONCLIP-T3", "conclip", "ccneg/acc", 99.70),
    ("CONCLIP-T8", "flava", "ccneg/word/not/k/3/acc", 50.51),
    ("CONCLIP-T5", "clip", "sugarcrepe/swap_att/acc", 63.06),
    ("TSVLC-T1a", "tsvlc", "vlchecklist/relation/avg", 78.72),
    ("HP-T1", "negclip", "hardpos/swap/brittleness", 26.4),
    ("HP-T1", "tsvlc", "hardpos/replace/delta", -32.1),
    ("HP-T7", "clip", "hardpos/replace_att/aug", 49.0),
    ("HP-T10", "clip", "retrieval/flickr30k/i2t/recall_at_1", 77.40),
])
def test_spot_checks_against_the_catalogs(values, artifact, model, key, printed):
    hit = values[(values["artifact"] == artifact) & (values["model"] == model) & (values["metric_key"] == key)]
    assert len(hit) == 1 and hit["value"].iloc[0] == pytest.approx(printed / 100)


# --------------------------------------------------------------------------- keys the aggregates produce


def _per_item_tables() -> dict[str, pd.DataFrame]:
    """A tiny per-item table of every benchmark, covering every category / instrument / file / subset."""
    rels = list(VG_RELATION_GROUP_OF)
    n = len(rels)
    t = {"vg_relation": pd.DataFrame({"relation": rels * 2, "correct": [True] * n + [False] * n,
                                      "excluded": False, "tie": False}),
         "vg_attribution": pd.DataFrame({"pair": "white_paved", "correct": [True, False] * 13, "tie": False})}
    for name in ("coco_order", "flickr_order"):
        t[name] = pd.DataFrame({"seed": [0, 0, 1, 1], "correct": [True, False, True, True], "tie": False,
                                **{f"option_{k}": [f"{k} a", f"{k} b"] * 2 for k in ORDER_OPTIONS}})
    for name in ("coco_retrieval", "flickr_retrieval"):
        for d in ("i2t", "t2i"):
            t[f"{name}_{d}"] = pd.DataFrame({f"hit_{k}": [k > 1, True] for k in KS})
    # with the wrong-image control's decisions, as every run writes them (eval.common.wrong_image_control)
    t["sugarcrepe"] = pd.DataFrame({"category": list(sugarcrepe_ds.CATEGORIES) * 2,
                                    "correct": [True] * 7 + [False] * 7, "wrong_correct": False})
    t["valse"] = pd.DataFrame({"instrument": list(valse_ds.INSTRUMENTS) * 2, "correct": [True] * 11 + [False] * 11,
                               "wrong_correct": False})
    files = [f for ds in vlc_ds.CORPUS.values() for fs in ds.values() for f in fs]
    t["vlchecklist"] = pd.DataFrame({"file": files * 2, "correct": [True] * len(files) + [False] * len(files),
                                     "wrong_correct": False})
    cases = [(w, k) for w in ccneg_ds.NEGATION_WORDS for k in range(1, 6)] * 2
    t["ccneg"] = pd.DataFrame({"index": range(len(cases)), "k": pd.array([k for _, k in cases], dtype="Int64"),
                               "negated_caption": [f"a dog {w} a hat" for w, _ in cases],
                               "correct": np.arange(len(cases)) % 2 == 0, "correct_code_tie_rule": True})
    t["replace"] = pd.DataFrame({"part": list(REPLACE_PARTS) * 2, "orig": True, "aug": [True, False] * 2,
                                 "brittle": False})
    t["swap"] = pd.DataFrame({"part": "swap", "orig": [True, False], "aug": True, "brittle": False})
    t["crepe_negate"] = pd.DataFrame({"complexity": [4, 5, 12, 12], "n_negatives": 5, "rank": [0, 1, 0, 3],
                                      "rank_tie_counts_wrong": [0, 1, 1, 3]})
    for name, sets in (("zeroshot_aro", ("standard",)), ("zeroshot_conclip", ("standard", "negated")),
                       ("zeroshot_elevater", ("standard",))):
        t[name] = pd.DataFrame({"task": ["cifar10", "cifar10", "imagenet"], "label": [0, 1, 2],
                                **{f"correct_{ps}": [True, False, True] for ps in sets}})
    return t


@pytest.fixture(scope="module")
def produced() -> dict[str, set[str]]:
    """Benchmark -> every metric key its aggregate function writes on :func:`_per_item_tables`."""
    tables = _per_item_tables()
    return {b: set(BENCHMARKS.get(b).aggregate(tables)) for b in BENCHMARKS}


def test_every_transcribed_key_is_written_by_its_benchmarks_aggregate(values, produced):
    missing = [(r.artifact, r.model, r.benchmark, r.metric_key) for r in values.itertuples()
               if r.metric_key not in produced[r.benchmark]]
    assert missing == []


def test_synthetic_tables_cover_the_runner_fixtures_keys(produced, tmp_path):
    """The hand-computed metrics of tests/eval/formats.py (the runners' fixtures) are all among the keys
    the synthetic tables produce, so the check above uses the same key families as real runs."""
    for name in BUILDERS:
        expected = set(build(name, tmp_path / name).expected)
        assert expected <= produced[name], (name, expected - produced[name])


# --------------------------------------------------------------------------- validation

HEADER = ",".join(PRINTED_COLUMNS)
GOOD = "ceclip,CE-T1,Table 1,clip,vg_relation,,aro/vg_relation/macro_acc,59.3,0.593,,"


@pytest.mark.parametrize(("lines", "line", "message"), [
    ([HEADER.removesuffix(",note"), GOOD[:-1]], 1, "missing: ['note']"),
    ([HEADER, GOOD.replace("59.3", "abc")], 2, "unparseable text"),
    ([HEADER, GOOD, GOOD.replace("0.593", "0.593e0")], 3, "not a plain decimal"),
    ([HEADER, GOOD.replace("0.593", "0.6")], 2, "does not match text '59.3'"),
    ([HEADER, GOOD.replace(",clip,", ",xvlm,")], 2, "unknown model 'xvlm'"),
    ([HEADER, GOOD, GOOD.replace("Table 1", "Table 1 (again)")], 3, "duplicate of line 2"),
    ([HEADER, GOOD.replace("59.3,0.593", "593,5.93")], 2, "outside"),
    ([HEADER, GOOD.replace("59.3,0.593", "-10,-0.1")], 2, "outside"),
    ([HEADER, GOOD.replace("vg_relation,,aro", "winoground,,aro")], 2, "unknown benchmark"),
    ([HEADER, GOOD.replace("vg_relation,,aro", "valse,,aro")], 2, "not a valse key"),
    ([HEADER, GOOD.replace("vg_relation,,aro", "vg_relation,spatial,aro")], 2, "group and std must be empty"),
    ([HEADER, GOOD.replace("ceclip,CE-T1", "ceclip,HP-T1")], 2, "not a ceclip catalog id"),
    ([HEADER, GOOD.replace("ceclip,", "aro,", 1)], 2, "paper 'aro' in the file of 'ceclip'"),
    ([HEADER, GOOD.replace("Table 1,", ",")], 2, "empty source"),
    ([HEADER, GOOD + "a | "], 2, "empty part"),
    ([HEADER, GOOD + ",extra"], 2, "expected 11 fields"),
    ([HEADER], 1, "no rows"),
])
def test_bad_csv_raises_naming_file_and_line(tmp_path, lines, line, message):
    path = tmp_path / "bad_values.csv"
    path.write_text("\n".join(lines) + "\n")
    where = re.escape(str(path)) + (f": line {line}" if message != "no rows" else "")
    with pytest.raises(ValueError, match=f"{where}.*{re.escape(message)}"):
        R.load_released_paper_values({"ceclip": path})


def test_delta_keys_may_be_negative_and_a_file_replaces_the_packaged_one(tmp_path):
    path = tmp_path / "ok.csv"
    path.write_text(f"{HEADER}\nhardpos,HP-T1,Table 1,clip,replace,row=CLIP ViT-B/32; section=a,hardpos/replace/delta,"
                    "-14.9,-0.149,,a | b\n")
    df = R.load_released_paper_values({"hardpos": path})
    hardpos = df[df["paper"] == "hardpos"]
    assert len(hardpos) == 1 and hardpos["value"].iloc[0] == pytest.approx(-0.149)
    assert set(df["paper"]) == set(R.PAPERS)


def test_tsvlc_rows_are_the_released_checkpoints_vlchecklist_values_of_tsvlc_csv(values):
    """TSVLC's file holds every printed cell; the view keeps the VL-CheckList values (no deltas, no zero-shot) of
    the rows CLIP and the released adapter stand for, Table 3's attribute columns read under the label shift."""
    tsvlc = values[values["paper"] == "tsvlc"]
    assert len(tsvlc) == 22 and set(tsvlc["model"]) == {"clip", "tsvlc"}
    assert tsvlc.groupby("artifact").size().to_dict() == {"TSVLC-T1a": 6, "TSVLC-T1g": 3, "TSVLC-T2": 6,
                                                          "TSVLC-T3": 7}
    assert (tsvlc["benchmark"] == "vlchecklist").all() and not tsvlc["metric_key"].str.endswith("/delta").any()
    t3 = tsvlc[tsvlc["artifact"] == "TSVLC-T3"].set_index("metric_key")["value"]
    # printed A-Size 72.15, A-State 64.05, A-Action 69.82 (catalog Table 3, row Ours RB+LLM Negs)
    assert t3.to_dict() == pytest.approx({"vlchecklist/attribute/color": 0.7925,
                                               "vlchecklist/attribute/material": 0.8425,
                                               "vlchecklist/attribute/action": 0.7215,
                                               "vlchecklist/attribute/size": 0.6405,
                                               "vlchecklist/attribute/state": 0.6982,
                                               "vlchecklist/relation/action": 0.7903,
                                               "vlchecklist/relation/spatial": 0.784})


# --------------------------------------------------------------------------- the comparison

PARAMS = {  # the single-base layout (no params bases): still read, names from params variants
    "profile": "real",
    "variants": {"negclip-s0": {"method": "negclip", "seed": 0}, "negclip-s1": {"method": "negclip", "seed": 1},
                 "clip_ft-s0": {"method": "clip_ft", "seed": 0}},
    "released_models": {"clip": {}, "negclip": {}, "conclip": {}, "tsvlc": {}},  # conclip has no folder
}
PIPELINE_METRICS = {
    "clip": {"hardpos/replace/orig": 0.63, "hardpos/replace/delta": -0.12},
    "negclip-s0": {"sugarcrepe/replace/macro_acc": 0.84},
    "negclip-s1": {"sugarcrepe/replace/macro_acc": 0.88},
    "clip_ft-s0": {"sugarcrepe/replace/macro_acc": 0.5},  # no paper model: never in these tables
}
RELEASED_METRICS = {
    "clip": {"ccneg/acc": 0.65},
    "negclip": {"sugarcrepe/replace/macro_acc": 0.86, "ccneg/acc": 0.6},
    "tsvlc": {"vlchecklist/relation/avg": 0.80},
}


def _write(folder: Path, metrics: dict, name: str) -> None:
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps(metrics))
    (folder / "provenance.json").write_text(json.dumps({"model": name, "profile": "real", "git_commit": "abc"}))


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> pd.DataFrame:
    root = tmp_path_factory.mktemp("tree")
    for name, m in PIPELINE_METRICS.items():
        _write(root / "metrics" / name, m, name)
    for name, m in RELEASED_METRICS.items():
        _write(root / "metrics" / "released" / name, m, name)
    (root / "params.yaml").write_text(yaml.safe_dump(PARAMS))
    return R.released_comparison(A.load(root / "metrics", root / "params.yaml"))


def _rows(df: pd.DataFrame, **where) -> pd.DataFrame:
    mask = pd.Series(True, index=df.index)
    for col, v in where.items():
        mask &= df[col] == v
    return df[mask]


def _row(df: pd.DataFrame, **where) -> pd.Series:
    hit = _rows(df, **where)
    assert len(hit) == 1, (where, len(hit))
    return hit.iloc[0]


def test_columns_and_every_transcribed_row_is_present(table, values):
    assert list(table.columns) == list(R.TABLE_COLUMNS)
    got = set(zip(table["paper_id"], table["artifact"], table["paper_model"], table["metric_key"], strict=True))
    want = set(zip(values["paper"], values["artifact"], values["model"], values["metric_key"], strict=True))
    assert got == want
    assert "clip_ft-s0" not in set(table["model"])


def test_differences_pipeline_seed_mean_and_released(table):
    t3 = dict(artifact="CE-T3", metric_key="sugarcrepe/replace/macro_acc")  # NegCLIP printed 85.0
    s0 = _row(table, **t3, model="negclip-s0")
    assert (s0["source"], s0["paper_model"], s0["seed"]) == (T.PIPELINE, "negclip", "0")
    assert s0["paper"] == pytest.approx(0.85) and s0["difference"] == pytest.approx(-0.01)
    assert s0["paper_ref"] == "CE-T3 (Table 3)" and s0["profile"] == "real" and "git_commit" not in table.columns
    assert _row(table, **t3, model="negclip-s1")["difference"] == pytest.approx(0.03)
    mean = _row(table, **t3, source=C.CHAIN_MEAN)
    assert mean["reproduced"] == pytest.approx(0.86) and mean["difference"] == pytest.approx(0.01)
    assert mean["std_over_chains"] == pytest.approx(math.sqrt(2 * 0.02**2))  # ddof=1
    assert mean["n_chains"] == 2
    rel = _row(table, **t3, model="negclip", source=T.RELEASED)
    assert rel["reproduced"] == pytest.approx(0.86) and rel["difference"] == pytest.approx(0.01)
    assert rel["note"] == ""
    # the pipeline's clip is OpenAI CLIP: compared with the Hard Positives CLIP row, a negative delta included
    hp = dict(artifact="HP-T1", model="clip", source=T.PIPELINE)
    assert _row(table, **hp, metric_key="hardpos/replace/orig")["difference"] == pytest.approx(0.63 - 0.616)
    delta = _row(table, **hp, metric_key="hardpos/replace/delta")
    assert delta["paper"] == pytest.approx(-0.149) and delta["difference"] == pytest.approx(0.029)
    assert "computed before rounding" in delta["paper_note"]
    cn = _row(table, artifact="CONCLIP-T3", model="clip", source=T.RELEASED)
    assert cn["difference"] == pytest.approx(0.65 - 0.657)
    ts = _row(table, artifact="TSVLC-T1a", model="tsvlc", metric_key="vlchecklist/relation/avg")
    assert ts["difference"] == pytest.approx(0.80 - 0.7872) and "RB+LLM" in ts["paper_note"]


def test_missing_model_or_metric_leaves_an_empty_cell_and_a_note(table):
    conclip = _row(table, artifact="CONCLIP-T3", paper_model="conclip")  # expected by params, no folder
    assert conclip["source"] == T.RELEASED and math.isnan(conclip["reproduced"])
    assert math.isnan(conclip["difference"]) and conclip["paper"] == pytest.approx(0.997)
    assert conclip["note"] == T.NOTE_MODEL_MISSING
    flava = _row(table, artifact="CONCLIP-T3", paper_model="flava")  # neither in params nor on disk
    assert (flava["model"], flava["source"], flava["note"]) == ("flava", T.RELEASED, T.NOTE_MODEL_MISSING)
    assert math.isnan(flava["reproduced"])
    no_metric = _row(table, artifact="CONCLIP-T3", model="clip", source=T.PIPELINE)
    assert math.isnan(no_metric["reproduced"]) and no_metric["note"] == T.NOTE_METRIC_MISSING
    assert table["paper"].notna().all()  # the printed value is always there


def test_one_paper_only_and_unknown_paper(table, values, tmp_path):
    tree = A.load(tmp_path / "nothing", tmp_path / "absent.yaml")  # no metrics, no params: never crashes
    tsvlc = R.released_comparison(tree, "tsvlc")
    assert set(tsvlc["paper_id"]) == {"tsvlc"} and len(tsvlc) == (values["paper"] == "tsvlc").sum()
    assert tsvlc["reproduced"].isna().all() and (tsvlc["note"] == T.NOTE_MODEL_MISSING).all()
    with pytest.raises(ValueError, match="unknown paper 'aro'"):
        R.released_comparison(tree, "aro")


def test_released_table_saves_long_csv_shows_wide_view_and_transcription_notes(tmp_path):
    from vlcomp.reporting.render import save_table, table_html

    root = tmp_path / "t"
    _write(root / "metrics" / "released" / "tsvlc", {"vlchecklist/attribute/action": 0.7}, "tsvlc")
    tree = A.load(root / "metrics", root / "params.yaml")
    table = R.released_table(tree, "tsvlc")
    save_table(table, tmp_path / "out", "tsvlc_released")
    long = pd.read_csv(tmp_path / "out" / "tables" / "tsvlc_released.csv")  # the CSV: the long form, numbers
    row = long[(long["artifact"] == "TSVLC-T3") & (long["metric_key"] == "vlchecklist/attribute/action")
               & (long["model"] == "tsvlc")].iloc[0]
    assert row["reproduced"] == pytest.approx(0.7) and row["paper"] == pytest.approx(0.7215)
    assert row["difference"] == pytest.approx(0.7 - 0.7215)
    shown = table.shown  # the page: one row per printed metric, reproduced and paper columns side by side
    wide = shown[(shown["artifact"] == "TSVLC-T3") & (shown["metric_key"] == "vlchecklist/attribute/action")].iloc[0]
    assert wide["tsvlc (released)"] == "0.700" and wide["paper: tsvlc"] == "0.722"
    md = (tmp_path / "out" / "tables" / "tsvlc_released.md").read_text()
    assert "0.722" in md and "AMBIGUOUS label shift" in md and "Transcription note" in md
    assert "AMBIGUOUS label shift" in table_html(table)
    notes = R.paper_note_lines(R.released_comparison(tree, "tsvlc"))
    assert sum("AMBIGUOUS (catalog 2.2): Object presumably" in n for n in notes) == 1  # one line per caveat
    assert any("TSVLC-T3 `tsvlc`: 7 values" in n for n in notes)
