"""dvc.yaml's code deps follow each profile's import graph (scripts/stage_deps.py): every module a stage reaches in
a profile is a declared dependency with ``${profile}`` set to it, no declared source path goes unused, only the
stage scripts import a profile package, and DVC itself resolves the toy profile's deps to no paper-only code."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

import stage_deps as S  # noqa: E402

from vlcomp.config import profile_params  # noqa: E402

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
        graph = {S.rel(f) for f in S.import_graph(S.stage_roots(body, PARAMS[profile]), profile)}
        missing = sorted(f for f in graph if not covered(f, deps))
        assert not missing, f"dvc.yaml stage {stage} ({profile} profile): imports {missing} but does not list them"


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_every_declared_code_path_is_used(stage: str) -> None:
    body = STAGES[stage]
    graphs = {p: {S.rel(f) for f in S.import_graph(S.stage_roots(body, PARAMS[p]), p)}
              for p in S.PROFILES if exists_in(stage, p)}
    for dep in body.get("deps", []):
        if not dep.startswith("src/"):
            continue
        if "${profile}" in dep:  # each profile's own code: used in every profile that has the stage
            unused = [p for p, g in graphs.items() if not any(covered(f, [dep.replace("${profile}", p)]) for f in g)]
            assert not unused, f"dvc.yaml stage {stage}: {dep} reaches no module in the {unused} profile"
            continue
        assert "profiles/toy" not in dep and "profiles/paper" not in dep, \
            f"dvc.yaml stage {stage}: {dep}: name a profile's code through {SLOT}[/...], so the other profile skips it"
        assert any(covered(f, [dep]) for g in graphs.values() for f in g), \
            f"dvc.yaml stage {stage}: {dep} is listed but no profile's import graph reaches it"


def test_the_suggested_deps_are_the_declared_ones() -> None:
    """dvc.yaml lists exactly what ``python scripts/stage_deps.py`` prints (run it after moving code)."""
    for stage, body in STAGES.items():
        declared = sorted(d for d in body.get("deps", []) if d.startswith("src/") or d == "stages/_common.py")
        graphs = {p: (S.stage_graphs(body, PARAMS[p])[p] if exists_in(stage, p) else set()) for p in S.PROFILES}
        assert declared == sorted(S.suggested_deps(graphs)), stage


def test_dvc_resolves_the_profile_slot_to_the_active_profile() -> None:
    from dvc.repo import Repo

    with Repo(str(REPO)) as repo:
        deps = {str(Path(d.def_path)) for st in repo.index.stages for d in st.deps}
    assert "src/vlcomp/profiles/toy" in deps  # params.yaml is the toy profile
    assert not any(d.startswith("src/vlcomp/profiles/paper") for d in deps)
