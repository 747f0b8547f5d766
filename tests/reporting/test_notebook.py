"""One report template per paper for both profiles: the stage picks notebooks/<paper>.py whatever the profile and
passes parameters the template declares; the template's profile-tagged cells are kept for their profile only."""

from __future__ import annotations

import argparse
import ast
import importlib.util
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

from vlcomp.reporting.notebook import cell_profiles, profile_tag, report_template, select_profile
from vlcomp.reporting.papers import PAPERS
from vlcomp.reporting.tree import REAL_PROFILE, TOY_PROFILE

REPO = Path(__file__).resolve().parents[2]
PROFILES = (TOY_PROFILE, REAL_PROFILE)


def _stage():
    """stages/report.py as a module (its ``_common`` import resolved from stages/)."""
    sys.path.insert(0, str(REPO / "stages"))
    try:
        spec = importlib.util.spec_from_file_location("report_stage", REPO / "stages" / "report.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(REPO / "stages"))
    return mod


def _declared(template: Path) -> dict[str, object]:
    """The names and literal values of a template's ``parameters`` cell."""
    cells = [c for c in jupytext.read(template).cells if "parameters" in c.metadata.get("tags", [])]
    assert len(cells) == 1, f"{template}: expected one parameters cell, found {len(cells)}"
    tree = ast.parse(cells[0].source)
    return {t.id: ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
            for t in node.targets}


@pytest.mark.parametrize("paper", PAPERS.names())
def test_one_template_per_paper_declares_profile_and_tags_both_profiles(paper):
    template = report_template(paper, REPO / "notebooks")
    assert template == REPO / "notebooks" / f"{paper}.py"
    assert sorted(p.name for p in (REPO / "notebooks").glob(f"{paper}*.py")) == [f"{paper}.py"]
    declared = _declared(template)
    assert declared["profile"] in PROFILES
    nb = jupytext.read(template)
    assert set().union(*(cell_profiles(c) for c in nb.cells)) == set(PROFILES)
    for profile in PROFILES:
        kept = select_profile(jupytext.read(template), profile, template).cells
        assert any(c.cell_type == "code" and "parameters" in c.metadata.get("tags", []) for c in kept)
        assert all(not cell_profiles(c) for c in kept)  # the profile tags are gone, other tags kept
        assert len(kept) == sum(1 for c in nb.cells if cell_profiles(c) in (set(), {profile}))


@pytest.mark.parametrize("profile", PROFILES)
def test_stage_uses_the_same_template_and_declared_parameters_for_both_profiles(profile):
    stage = _stage()
    args = argparse.Namespace(paper="aro", metrics="metrics", world="data/world", benchmarks="data/benchmarks",
                              models="models", params="params.yaml", calibration="calibration", mined="data/mined")
    parameters = stage.notebook_parameters(args, profile)
    assert parameters["profile"] == profile
    assert parameters["calibration_csv"] == "calibration/aro_world.csv"
    declared = _declared(report_template("aro", REPO / "notebooks"))
    assert set(parameters) | {"out_dir"} == set(declared)  # papermill is given exactly what the template declares
    assert stage.notebook_parameters(args, TOY_PROFILE).keys() == stage.notebook_parameters(args, REAL_PROFILE).keys()


def test_select_profile_keeps_untagged_cells_and_rejects_an_unknown_profile():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("both"),
        nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell("toy()", metadata={"tags": [profile_tag("toy"), "keep-me"]}),
        nbformat.v4.new_markdown_cell("real", metadata={"tags": [profile_tag("real")]}),
    ])
    kept = select_profile(nb, "toy", "nb.py").cells
    assert [c.source for c in kept] == ["both", "x = 1", "toy()"]
    assert kept[2].metadata["tags"] == ["keep-me"] and "tags" not in kept[0].metadata
    with pytest.raises(ValueError, match=r"nb\.py: no cells tagged 'profile-tsvlc'"):
        select_profile(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
            "real", metadata={"tags": [profile_tag("real")]})]), "tsvlc", "nb.py")


def test_missing_template_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="tsvlc.py: no report template for paper 'tsvlc'"):
        report_template("tsvlc", tmp_path)


def test_deterministic_numbers_cell_ids_and_drops_timings():
    from vlcomp.reporting.notebook import deterministic

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1"), nbformat.v4.new_markdown_cell("x")])
    nb.metadata["papermill"] = {"start_time": "t0", "end_time": "t1", "duration": 2.0,
                                "parameters": {"a": 1, "out_dir": "r/.aro.x1.tmp"}}
    nb.cells[1].source = 'out_dir = "r/.aro.x1.tmp"\n'  # the injected parameters name papermill's temporary folder
    nb.cells[0].metadata.update(execution={"iopub.status.busy": "t"}, papermill={"duration": 1.0, "status": "completed"},
                                tags=["parameters"])
    out = deterministic(nb, {"r/.aro.x1.tmp": "r/aro"})
    assert [c.id for c in out.cells] == ["cell-0", "cell-1"]
    assert out.metadata["papermill"] == {"parameters": {"a": 1, "out_dir": "r/aro"}}
    assert out.cells[1].source == 'out_dir = "r/aro"\n'
    assert out.cells[0].metadata == {"papermill": {"status": "completed"}, "tags": ["parameters"]}
    nbformat.validate(out)
