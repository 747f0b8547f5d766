"""The pipeline files' code deps follow each profile's import graph (vlcomp.dag, scripts/stage_deps.py): every module a stage reaches in
a profile is a declared dependency with ``${profile}`` set to it, no declared source path goes unused, only the
stage scripts import a profile package, and DVC itself resolves the toy profile's deps to no real-profile-only code."""

from __future__ import annotations

from pathlib import Path

import pytest

import vlcomp.dag as S
from vlcomp.config import load_params, profile_params

REPO = Path(__file__).resolve().parents[1]

PARAMS = {p: profile_params(p, REPO) for p in S.PROFILES}
STAGES = S.stage_bodies()
SLOT = "src/vlcomp/profiles/${profile}"


def exists_in(stage: str, profile: str) -> bool:
    """A foreach stage over an empty mapping (evaluate_released@ in the toy profile) generates no stage."""
    raw = __import__("yaml").safe_load((REPO / "dvc.yaml").read_text())["stages"][stage]
    if "foreach" not in raw:
        return True
    key = raw["foreach"].strip("${}")
    return bool(PARAMS[profile].get(key))


def code_deps(body: dict, profile: str) -> list[str]:
    return [d.replace("${profile}", profile) for d in body.get("deps", []) if d.startswith(("src/", "stages/"))]


def covered(path: str, deps: list[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in deps)


def test_the_library_has_no_import_cycle() -> None:
    """No module imports (directly or through others) a module that imports it back; a plugin package's
    ``__init__`` never imports its plugins (:class:`vlcomp.registry.Registry` loads them by name)."""
    assert S.import_cycles() == []


def test_import_cycles_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert S.import_cycles(graph) == [["a", "b", "c"]]
    assert S.import_cycles({"a": {"b"}, "b": set()}) == []


def test_shared_code_never_imports_a_profile() -> None:
    assert S.profile_imports_outside_profiles() == []


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_stage_declares_what_each_profile_imports(stage: str) -> None:
    body = STAGES[stage]
    script = body["cmd"].split()[1]
    assert script in body.get("deps", []), f"dvc.yaml stage {stage}: its own script {script} is not a dependency"
    for profile in S.PROFILES:
        if not exists_in(stage, profile):
            continue
        deps = code_deps(body, profile)
        graph = {S.rel(f) for f in S.import_graph(S.stage_roots(body, PARAMS[profile], stage), profile)}
        missing = sorted(f for f in graph if not covered(f, deps))
        assert not missing, f"dvc.yaml stage {stage} ({profile} profile): imports {missing} but does not list them"


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_every_declared_code_path_is_used(stage: str) -> None:
    body = STAGES[stage]
    graphs = {p: {S.rel(f) for f in S.import_graph(S.stage_roots(body, PARAMS[p], stage), p)}
              for p in S.PROFILES if exists_in(stage, p)}
    for dep in body.get("deps", []):
        if not dep.startswith("src/"):
            continue
        if "${profile}" in dep:  # each profile's own code: used in every profile that has the stage
            unused = [p for p, g in graphs.items() if not any(covered(f, [dep.replace("${profile}", p)]) for f in g)]
            assert not unused, f"dvc.yaml stage {stage}: {dep} reaches no module in the {unused} profile"
            continue
        assert "profiles/toy" not in dep and "profiles/real" not in dep, \
            f"dvc.yaml stage {stage}: {dep}: name a profile's code through {SLOT}[/...], so the other profile skips it"
        assert any(covered(f, [dep]) for g in graphs.values() for f in g), \
            f"dvc.yaml stage {stage}: {dep} is listed but no profile's import graph reaches it"


def test_the_suggested_deps_are_the_declared_ones() -> None:
    """dvc.yaml lists exactly what ``python scripts/stage_deps.py`` prints (run it after moving code)."""
    for stage, body in STAGES.items():
        declared = sorted(d for d in body.get("deps", []) if d.startswith("src/") or d == "stages/_common.py")
        graphs = {p: (S.stage_graphs(body, PARAMS[p], stage)[p] if exists_in(stage, p) else set()) for p in S.PROFILES}
        assert declared == sorted(S.suggested_deps(graphs)), stage


def test_dvc_resolves_the_profile_slot_to_the_active_profile() -> None:
    from dvc.repo import Repo

    with Repo(str(REPO)) as repo:
        deps = {str(Path(d.def_path)) for st in repo.index.stages for d in st.deps}
    assert "src/vlcomp/profiles/toy" in deps  # params.yaml is the toy profile
    assert not any(d.startswith("src/vlcomp/profiles/real") for d in deps)


def test_the_pipeline_files_are_the_generated_ones() -> None:
    """Every pipelines/<paper>[/<method>]/dvc.yaml is what ``python scripts/stage_deps.py --write`` writes for
    params.yaml (run it after adding a method or a paper, moving code or switching profile), and no other is left."""
    params = load_params(REPO / "params.yaml")
    texts = S.render_pipelines(params, REPO)
    for path, text in texts.items():
        assert (REPO / path).is_file() and (REPO / path).read_text() == text, f"{path}: stale; run scripts/stage_deps.py --write"
    assert S.stale_pipelines(texts, REPO) == []


def test_layout_puts_each_run_in_its_papers_and_methods_file() -> None:
    params = load_params(REPO / "params.yaml")
    lay = S.layout(params)
    assert lay["pipelines/aro/dvc.yaml"]["report"] == ["aro"]
    assert set(lay["pipelines/aro/dvc.yaml"]["mine"]) == {k for k in params["mining"] if k.startswith("negclip-")}
    assert set(lay["pipelines/aro/negclip/dvc.yaml"]["finetune"]) == {
        v for v, s in params["variants"].items() if s["method"] == "negclip"}
    every = [k for f in lay.values() for g, items in f.items() if g == "finetune" for k in items]
    assert sorted(every) == sorted(params["variants"])  # each run once
    with pytest.raises(ValueError, match="methods.m.paper is not set"):
        S.method_paper({"methods": {"m": {}}}, "m")
    with pytest.raises(ValueError, match="mine.g is mined, but no method trains on it"):
        S.mined_paper({"methods": {}}, "g")


def test_a_report_depends_on_its_own_papers_runs_only() -> None:
    params = load_params(REPO / "params.yaml")
    data, keys = S.report_inputs(params, "aro", REPO)
    aro_runs = [v for v, s in params["variants"].items() if params["methods"][s["method"]]["paper"] == "aro"]
    assert {f"metrics/{v}" for v in aro_runs} <= set(data)
    assert not any("tsvlc" in d for d in data) and not any("tsvlc" in k for k in keys)
    assert "methods" not in keys and "variants" not in keys and "papers" not in keys
    tdata, tkeys = S.report_inputs(params, "tsvlc", REPO)
    assert {f"metrics/{v}" for v in aro_runs} <= set(tdata)  # TSVLC's Table 1a shows ARO's rows
    assert "metrics/clip-vit-b0" in tdata and "metrics/clip-vit-b0" not in data


def test_package_data_is_declared() -> None:
    """Every non-module file of the library is read by a module that :data:`vlcomp.dag.PACKAGE_DATA` names."""
    declared = [REPO / d for ds in S.PACKAGE_DATA.values() for d in ds]
    for f in sorted((REPO / "src" / "vlcomp").rglob("*")):
        if f.is_file() and f.suffix != ".py" and "__pycache__" not in f.parts:
            assert any(f == d or d in f.parents for d in declared), f"{f}: add it to vlcomp.dag.PACKAGE_DATA"


def test_make_repro_paper_targets_each_papers_report() -> None:
    """`make repro PAPER=<p>` passes the scheduler the address of report@<p>, which exists for every paper."""
    import re
    import subprocess

    line = next(ln for ln in (REPO / "Makefile").read_text().splitlines() if "scripts/repro.py" in ln)
    target = re.search(r"\$\(if \$\(PAPER\),(\S+)\)$", line).group(1)
    names = subprocess.run(["dvc", "stage", "list", "--all", "--name-only"], cwd=REPO, capture_output=True, text=True,
                           check=True).stdout.split()
    for paper in load_params(REPO / "params.yaml")["papers"]:
        assert target.replace("$(PAPER)", paper) in names, paper


def test_a_report_depends_on_every_calibration_file_it_reads() -> None:
    """Every ``calibration/`` file a paper's report page names is a dependency of its report stage: its own
    ``<paper>_*`` files by name, the shared probes through its registry entry (``Paper.calibration``)."""
    import re

    from vlcomp.reporting.papers import PAPERS

    for paper in PARAMS["toy"]["papers"]:
        source = (REPO / "src" / "vlcomp" / "reporting" / "papers" / paper / "report.py").read_text()
        read = set(re.findall(r'_beside\(ctx, "([^"]+)"\)', source))
        entry = PAPERS.get(paper)
        undeclared = sorted(f for f in read if not f.startswith(f"{paper}_") and f not in entry.calibration)
        assert not undeclared, f"{paper}: report reads calibration files its entry does not list: {undeclared}"
        data, _ = S.report_inputs(PARAMS["toy"], paper)
        for f in read:
            if (REPO / "calibration" / f).exists():
                assert f"calibration/{f}" in data, (paper, f)
