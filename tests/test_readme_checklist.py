"""README.md's "How to add a paper" checklist stays true.

The checklist (between the markers ``<!-- add-a-paper -->`` and ``<!-- /add-a-paper -->``) names, as backticked
paths with ``<paper>`` for the paper's name, the code files a new paper adds. Two facts hold them to the code:

(a) they are exactly the files tests/test_dag_additive.py adds for its stand-in paper ``toypaper`` (``NEW_PAPER``,
    read with :mod:`ast`), the test that proves on a real DVC DAG that adding them leaves every existing stage up
    to date;
(b) every paper of params.yaml's ``papers`` has the checklist's report modules (its ``Paper`` entry and its declared
    page) and notebook; a paper's own generator
    and loss modules (``generators/<paper>.py``, ``losses/<paper>.py``) exist only for papers with generators or
    losses of their own (ARO's NegCLIP generator and loss live in ``negclip.py``), so for those: every generator and
    loss a paper's methods name is registered in the module the registry's name rule finds
    (:func:`vlcomp.registry.plugin_modules`), and a paper's own module, where it exists, is that module for at least
    one of its methods.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

from vlcomp.registry import plugin_modules

REPO = Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- add-a-paper -->", "<!-- /add-a-paper -->"
PLACEHOLDER = "<paper>"
STAND_IN = "toypaper"  # the paper name tests/test_dag_additive.py adds
#: a path: no spaces, a folder separator
_PATH = re.compile(r"[^\s/]+(/[^\s/]+)+")
#: plugin packages whose per-paper module the checklist names -> the call that registers a plugin there
PLUGINS = {"src/vlcomp/generators": ("GENERATORS", "add"), "src/vlcomp/losses": ("LOSSES", "register")}


def checklist(readme: str) -> str:
    """The text between the checklist's markers (exactly one pair, in order)."""
    assert readme.count(BEGIN) == 1 and readme.count(END) == 1, f"README.md needs one {BEGIN} ... {END} block"
    start, end = readme.index(BEGIN), readme.index(END)
    assert start < end, f"{END} comes before {BEGIN}"
    return readme[start + len(BEGIN):end]


def checklist_paths(section: str) -> set[str]:
    """The backticked paths of the checklist that contain the ``<paper>`` placeholder (code spans: the odd pieces
    between backticks)."""
    return {span for span in section.split("`")[1::2] if PLACEHOLDER in span and _PATH.fullmatch(span)}


def new_paper_paths(test_file: Path = REPO / "tests" / "test_dag_additive.py") -> set[str]:
    """The keys of ``NEW_PAPER`` in ``test_file`` with the stand-in paper's name put back to ``<paper>``."""
    tree = ast.parse(test_file.read_text(), filename=str(test_file))
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == "NEW_PAPER" for t in targets):
            assert isinstance(node.value, ast.Dict), "NEW_PAPER is no dict literal"
            return {ast.literal_eval(k).replace(STAND_IN, PLACEHOLDER) for k in node.value.keys}
    raise AssertionError(f"{test_file}: no NEW_PAPER")


def registered_names(module_file: Path, registry: str, method: str) -> set[str]:
    """Names ``module_file`` registers with a literal first argument: ``REGISTRY.method("name", ...)``."""
    out = set()
    for node in ast.walk(ast.parse(module_file.read_text(), filename=str(module_file))):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method
                and isinstance(node.func.value, ast.Name) and node.func.value.id == registry and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            out.add(node.args[0].value)
    return out


def plugin_file(package_dir: Path, name: str) -> Path | None:
    """The module file the registry's name rule finds for plugin ``name`` (most specific existing module)."""
    for mod in plugin_modules(name):
        for path in (package_dir / f"{mod}.py", package_dir / mod / "__init__.py"):
            if path.is_file():
                return path
    return None


def paper_plugins(params: dict, paper: str) -> dict[str, set[str]]:
    """The generators and losses the methods of ``paper`` name (a method's ``generator`` and ``positives_from`` are
    keys of ``mine``, whose ``generator`` names the generator when it differs from the key)."""
    mine = params.get("mine") or {}
    out: dict[str, set[str]] = {"src/vlcomp/generators": set(), "src/vlcomp/losses": set()}
    for spec in (params.get("methods") or {}).values():
        if spec.get("paper") != paper:
            continue
        for key in (spec.get("generator"), spec.get("positives_from")):
            if key:
                out["src/vlcomp/generators"].add((mine.get(key) or {}).get("generator", key))
        if spec.get("loss"):
            out["src/vlcomp/losses"].add(spec["loss"])
    return out


@pytest.fixture(scope="module")
def paths() -> set[str]:
    return checklist_paths(checklist((REPO / "README.md").read_text()))


@pytest.fixture(scope="module")
def params() -> dict:
    return yaml.safe_load((REPO / "params.yaml").read_text())


def test_the_checklist_names_exactly_the_files_the_additive_dag_test_adds(paths: set[str]) -> None:
    expected = new_paper_paths()
    assert expected, "tests/test_dag_additive.py's NEW_PAPER adds no file"
    assert paths == expected, (f"README checklist vs tests/test_dag_additive.py NEW_PAPER: only in the README "
                               f"{sorted(paths - expected)}, only in the test {sorted(expected - paths)}")


def test_the_checklist_parser_sees_a_missing_or_extra_item() -> None:
    section = checklist((REPO / "README.md").read_text())
    full = checklist_paths(section)
    dropped = next(iter(sorted(full)))
    assert checklist_paths(section.replace(f"`{dropped}`", "")) == full - {dropped}
    assert checklist_paths(section + f"\n- `pipelines/{PLACEHOLDER}/dvc.yaml`\n") != new_paper_paths()
    assert checklist_paths("`paper: <paper>` `make repro PAPER=<paper>` `src/x.py`") == set()


def test_every_paper_has_the_checklists_report_module_and_notebook(paths: set[str], params: dict) -> None:
    per_paper = [p for p in paths if not any(p.startswith(pkg + "/") for pkg in PLUGINS)]
    assert any("reporting/papers" in p for p in per_paper) and any(p.startswith("notebooks/") for p in per_paper)
    papers = params.get("papers") or []
    assert papers, "params.yaml lists no paper"
    missing = [p.replace(PLACEHOLDER, paper) for paper in papers for p in per_paper
               if not (REPO / p.replace(PLACEHOLDER, paper)).is_file()]
    assert not missing, f"papers of params.yaml without the checklist's files: {missing}"
    for paper in papers:
        entry = REPO / next(p for p in per_paper if p.endswith("/__init__.py")).replace(PLACEHOLDER, paper)
        assert "PAPERS.add(" in entry.read_text(), f"{entry} registers no Paper"
        page = REPO / next(p for p in per_paper if p.endswith("/report.py")).replace(PLACEHOLDER, paper)
        assert "REPORT = Report(" in page.read_text(), f"{page} declares no REPORT"


def test_every_papers_generators_and_losses_are_where_the_registry_looks(paths: set[str], params: dict) -> None:
    templates = {pkg: p for p in paths for pkg in PLUGINS if p.startswith(pkg + "/")}
    assert set(templates) == set(PLUGINS), f"the checklist names no module under {sorted(set(PLUGINS) - set(templates))}"
    own = 0
    for paper in params.get("papers") or []:
        for pkg, names in paper_plugins(params, paper).items():
            registry, method = PLUGINS[pkg]
            resolved = {}
            for name in sorted(names):
                path = plugin_file(REPO / pkg, name)
                assert path is not None, f"{paper}: {pkg} has no module for {name!r} (plugin_modules rule)"
                assert name in registered_names(path, registry, method), \
                    f"{paper}: {path.relative_to(REPO)} does not register {name!r} ({registry}.{method})"
                resolved[name] = path
            paper_module = REPO / templates[pkg].replace(PLACEHOLDER, paper)
            if paper_module.is_file():  # the paper has plugins of its own: its methods use them
                own += 1
                assert paper_module in resolved.values(), \
                    f"{paper_module.relative_to(REPO)} exists but none of {paper}'s methods uses it ({sorted(names)})"
    assert own, "no paper of params.yaml has a generator or loss module of its own: the check above is vacuous"
