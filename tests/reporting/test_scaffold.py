"""The report scaffold (vlcomp.reporting.scaffold): a declared page is checked against the paper's artifacts,
rendered in one order (verdicts, headline, checklist, runs first), its tables written once under their names, and
its checklist generated from what each part built."""

from __future__ import annotations

import math
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from vlcomp.reporting.collect import LONG_COLUMNS, Methods  # noqa: E402
from vlcomp.reporting.ledger import Claim  # noqa: E402
from vlcomp.reporting.render import Figure, Table  # noqa: E402
from vlcomp.reporting.scaffold import (  # noqa: E402
    Covered,
    Page,
    Part,
    Report,
    Section,
    anchor,
    checklist_table,
    runs_table,
    verdicts_markdown,
)

ARTIFACTS = ("X-T1", "X-T2", "X-F1", "X-D1", "X-C1")


def _long() -> pd.DataFrame:
    rows = [{"model": f"m-b{b}s0", "method": "m", "base": f"b{b}", "base_seed": str(b), "seed": "0",
             "key": "acc", "value": 0.5 + b / 10, "dvc_stage": f"evaluate@m-b{b}s0"} for b in range(3)]
    return pd.DataFrame(rows).reindex(columns=list(LONG_COLUMNS))


def _table(means: list[float], methods: list[str] | None = None) -> Table:
    data = pd.DataFrame({"method": methods or ["m"] * len(means), "mean": means})
    return Table(data, legend="a legend")


def _figure() -> Figure:
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1], [0, 1])
    return Figure(fig, "a figure legend", ["a note"])


CLAIM = Claim("C1", "the method helps", "Table 1", [])


def _report(**kw) -> Report:
    sections = kw.pop("sections", (
        Section("X-T1 — the headline", (Part("X-T1", lambda ctx: _table([0.5, 0.6]), ("X-T1",)),), "Headline intro."),
        Section("X-T2 — pending", (Part("X-T2", lambda ctx: _table([math.nan, math.nan]), ("X-T2",)),)),
        Section("X-F1 — a figure", (Part("X-F1", lambda ctx: _figure(), ("X-F1",)),
                                    Part("notes", lambda ctx: "Some *Markdown*."),
                                    Part("absent", lambda ctx: None, missing="Run `make it`."))),
        Section("Several tables", (Part("many", lambda ctx: [("", "head"), ("first", _table([0.1])),
                                                             ("second", _table([0.2]))]),), level=3),
    ))
    return Report(paper="x", title="X — report", intro="Intro.", headline=kw.pop("headline", "X-T1"), sections=sections,
                  ledger=lambda ctx: ([CLAIM], Table(pd.DataFrame({"claim": ["C1"]}))),
                  methods=lambda ctx: Methods(("m", "other"), {"m": "Method", "other": "Other"}),
                  deviations=lambda ctx: "- a deviation",
                  provenance=lambda ctx: Table(pd.DataFrame({"model": ["m-b0s0"]})),
                  covered=kw.pop("covered", (Covered("X-D1", "a dataset", "pipeline: build@x"),)))


@pytest.fixture
def page(tmp_path) -> tuple[Page, list]:
    p = Page(_report(), SimpleNamespace(long=_long()), tmp_path)
    return p, list(p.blocks(ARTIFACTS))


def test_page_opens_with_verdicts_headline_checklist_and_runs(page):
    _, blocks = page
    text = [b.text for b in blocks]
    at = {key: next(i for i, t in enumerate(text) if key in t) for key in
          ("# X — report", 'id="at-a-glance"', "**(C1) NOT HELD**", 'id="sec-X-T1"', 'id="artifact_checklist"',
           'id="runs"', "**Contents:**", 'id="claims_ledger"', 'id="sec-X-T2"', 'id="provenance"')}
    assert list(at.values()) == sorted(at.values())  # in this order
    assert sum('id="sec-X-T1"' in t for t in text) == 1  # the headline's section is not repeated in the body


def test_parts_write_their_files_under_their_names(page, tmp_path):
    _, blocks = page
    names = {p.stem for p in (tmp_path / "tables").glob("*.csv")}
    assert names == {"X-T1", "X-T2", "many_0", "many_1", "artifact_checklist", "runs", "claims_ledger", "provenance"}
    assert (tmp_path / "figures" / "X-F1.png").exists() and (tmp_path / "figures" / "X-F1.pdf").exists()
    text = "\n".join(b.text for b in blocks)
    assert "Run `make it`." in text and "Some *Markdown*." in text and "**first**" in text
    assert 'id="X-F1"' in text and "a figure legend" in text and "a note" in text


def test_checklist_is_generated_from_what_the_parts_built(page, tmp_path):
    check = pd.read_csv(tmp_path / "tables" / "artifact_checklist.csv").set_index("artifact")
    assert list(check.index) == list(ARTIFACTS)
    assert check.loc["X-T1", "status"] == "rendered" and check.loc["X-T1", "where"] == "[X-T1](#X-T1)"
    assert check.loc["X-T2", "status"] == "rendered; no reproduced value yet"
    assert check.loc["X-F1", "status"] == "rendered" and check.loc["X-F1", "what"] == "X-F1 — a figure"
    assert check.loc["X-D1", "status"] == "pipeline: build@x" and check.loc["X-D1", "what"] == "a dataset"
    assert check.loc["X-C1", "status"] == "NOT HELD" and check.loc["X-C1", "what"] == "the method helps"
    html = (tmp_path / "tables" / "artifact_checklist.md").read_text()
    assert "[X-T1](#X-T1)" in html


def test_checklist_counts_partial_rows_and_pending_parts():
    report = _report()
    built = {"X-T1": _table([0.5, math.nan, 0.2, math.nan], ["a", "b", "a", "b"]), "X-T2": None,
             "X-F1": _figure()}
    check = checklist_table(report, ARTIFACTS, built, [], ("a", "b")).data.set_index("artifact")["status"]
    assert check["X-T1"] == "rendered; reproduced values for 1 of 2 rows"  # per method: a has one, b none
    only_a = checklist_table(report, ARTIFACTS, built, [], ("a",)).data.set_index("artifact")["status"]
    assert only_a["X-T1"] == "rendered"  # b is not the page's (a row the paper alone prints)
    assert check["X-T2"] == "pending: input not produced yet"
    assert check["X-C1"] == "not in the ledger"


def test_runs_table_lists_every_method_with_its_runs():
    runs = runs_table(_long(), Methods(("m", "other"), {"m": "Method"})).data
    assert runs.to_dict("records") == [
        {"method": "Method", "key": "`m`", "runs": 3, "which runs": "3 whole chains (base seeds 0, 1, 2 x fine-tune "
                                                                    "seed 0)"},
        {"method": "other", "key": "`other`", "runs": 0, "which runs": "not run"}]


def test_a_declaration_that_misses_or_invents_an_artifact_is_refused():
    with pytest.raises(ValueError, match="no part renders or covers: X-D1"):
        _report(covered=()).check(ARTIFACTS)
    with pytest.raises(ValueError, match="not in the paper's entry: X-D1"):
        _report().check(("X-T1", "X-T2", "X-F1"))
    twice = (Section("a", (Part("X-T1", lambda ctx: None, ("X-T1",)), Part("X-T1", lambda ctx: None))),)
    with pytest.raises(ValueError, match="used twice: X-T1"):
        _report(sections=twice).check(("X-T1",))
    with pytest.raises(KeyError, match="no part 'X-T9'"):
        _report(headline="X-T9").check(ARTIFACTS)


def test_a_part_that_builds_something_else_names_itself(tmp_path):
    report = _report()
    bad = Page(report, SimpleNamespace(long=_long()), tmp_path)
    with pytest.raises(TypeError, match="part 'odd'"):
        bad.render(Part("odd", lambda ctx: 42))


def test_helpers():
    assert anchor("ARO-D_M artifacts (x)") == "ARO-D_M-artifacts-x"
    assert verdicts_markdown([Claim("a", "it holds", "Table 6", [])]) == \
        "- **(a) NOT HELD** — it holds *Paper: Table 6.*"


def test_a_second_page_without_ledger_covers_the_first_pages_artifacts(tmp_path):
    """The real profile's page: no verdicts (``no_ledger`` instead), its own runs table, the artifacts it does not
    render covered as the first page's (their section title), a comparison table's cells counted."""
    from vlcomp.reporting.comparison import CHAIN_MEAN
    from vlcomp.reporting.scaffold import TOY_ONLY, rendered_elsewhere

    first = _report()
    long = pd.DataFrame({"source": ["pipeline", "pipeline", CHAIN_MEAN, "released"],
                         "reproduced": [0.5, math.nan, 0.5, 0.7]})  # 2 of 3 cells (the mean row derives)
    sections = (Section("X-T1 — real", (Part("X-T1", lambda ctx: Table(long), ("X-T1",)),)),)
    covered = rendered_elsewhere(first, sections, TOY_ONLY)
    assert [(c.artifact, c.what) for c in covered] == [("X-T2", "X-T2 — pending"), ("X-F1", "X-F1 — a figure"),
                                                       ("X-D1", "a dataset")]
    assert covered[0].status == TOY_ONLY and covered[2].status == f"pipeline: build@x ({TOY_ONLY})"
    assert rendered_elsewhere(first, sections, TOY_ONLY, skip=covered[2:])[-1].artifact == "X-F1"
    runs = Table(pd.DataFrame({"model": ["`a`"], "status": ["evaluated"]}))
    second = Report(paper="x", title="X — real", intro="Intro.", headline="X-T1", sections=sections, ledger=None,
                    no_ledger="No verdicts here.", methods=lambda ctx: Methods(("m",)), runs=lambda ctx: runs,
                    deviations=lambda ctx: "", provenance=lambda ctx: Table(pd.DataFrame({"model": ["a"]})),
                    covered=covered)
    with pytest.raises(ValueError, match="no part renders or covers: X-F1"):
        Report(**{**second.__dict__, "covered": covered[:1]}).check(ARTIFACTS)
    blocks = list(Page(second, None, tmp_path).blocks(ARTIFACTS))
    text = "\n".join(b.text for b in blocks)
    assert "No verdicts here." in text and "claims_ledger" not in text.split("artifact_checklist")[0]
    assert not (tmp_path / "tables" / "claims_ledger.csv").exists()
    assert "Claims ledger: every condition" not in text
    checklist = pd.read_csv(tmp_path / "tables" / "artifact_checklist.csv").set_index("artifact")["status"]
    assert checklist["X-T1"] == "rendered; reproduced values for 2 of 3 rows"
    assert checklist["X-F1"] == TOY_ONLY and checklist["X-C1"] == "no verdict on this page"
    assert pd.read_csv(tmp_path / "tables" / "runs.csv")["status"].tolist() == ["evaluated"]


def test_tree_runs_table_names_every_model_and_its_status(tmp_path):
    from pathlib import Path

    from vlcomp.reporting.scaffold import tree_runs_table
    from vlcomp.reporting.tree import PIPELINE, RELEASED, MetricsTree, ModelResult

    models = [ModelResult("negclip-b0s1", PIPELINE, "negclip", "1", "negclip", Path("m"), True, base="b0",
                          base_seed="0"),
              ModelResult("clip", RELEASED, "clip", "", "clip", Path("r"), False)]
    tree = MetricsTree(models, [], {}, pd.DataFrame(), "real", tmp_path, tmp_path, tmp_path / "params.yaml")
    got = tree_runs_table(tree).data
    assert got.to_dict("records") == [
        {"model": "`negclip-b0s1`", "source": PIPELINE, "method": "negclip", "chain": "b0s1", "status": "evaluated"},
        {"model": "`clip`", "source": RELEASED, "method": "clip", "chain": "",
         "status": "missing: no real-profile metrics"}]
