"""The code each DVC stage imports, per profile: a static import graph of the stage script (and, for the report
stage, its notebooks), followed through every ``vlcomp`` module, function-level imports included.

Usage: python scripts/stage_deps.py [STAGE ...]     # print the code deps each stage should declare
       python scripts/stage_deps.py --write           # rewrite dvc.yaml's code deps to them (other deps, comments
                                                      # and order kept)

Why static: a stage script chooses its profile's code inside a branch (``if params["profile"] == "paper": from
vlcomp.profiles.paper... import ...``), which a run of one profile never executes for the other. Reading every
import statement over-approximates what a run imports, which is the safe side for DVC deps (a stage may rerun
for an edit it would survive, never miss one). The profile rule makes the graph exact where it matters: only the
stage scripts import ``vlcomp.profiles.<name>``, so the toy graph skips ``vlcomp.profiles.paper`` and the reverse;
shared modules importing a profile package is an error (:func:`profile_imports_outside_profiles`).

``tests/test_stage_deps.py`` holds dvc.yaml to these graphs: every file a stage's graph reaches in a profile is
covered by that stage's deps with ``${profile}`` set to it, no listed source path is unused, and the toy deps
name nothing under ``src/vlcomp/profiles/paper`` (and the reverse).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
PACKAGE = "vlcomp"
PROFILES = ("toy", "paper")
#: Commands outside the pipeline that may import a profile package (the doctor checks the paper profile's inputs
#: with that profile's own readers); no stage imports them.
COMMANDS = ("vlcomp.doctor",)


def module_file(name: str) -> Path | None:
    """``vlcomp.a.b`` -> ``src/vlcomp/a/b.py`` or ``src/vlcomp/a/b/__init__.py``; None when it is no module."""
    base = SRC.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def module_name(path: Path) -> str:
    rel = path.resolve().relative_to(SRC).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def imported_names(path: Path, module: str | None) -> set[str]:
    """Every module an import statement anywhere in ``path`` names (``from a import b`` gives ``a`` and ``a.b``;
    relative imports resolved against ``module``)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if module is None:
                    continue  # a relative import in a script: not ours
                parts = module.split(".")
                parts = parts if is_package else parts[:-1]
                parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
    return out


def _with_parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def import_graph(roots: Iterable[Path], profile: str) -> set[Path]:
    """Files of every ``vlcomp`` module reachable from ``roots`` (scripts or notebooks), and the stage helper
    ``stages/_common.py`` if reached; ``vlcomp.profiles.<other>`` is not entered."""
    skip = tuple(f"{PACKAGE}.profiles.{p}" for p in PROFILES if p != profile)
    seen: set[Path] = set()
    todo: list[tuple[Path, str | None]] = [(Path(r).resolve(), None) for r in roots]
    while todo:
        path, module = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for name in imported_names(path, module):
            if name == "_common":
                todo.append(((REPO / "stages" / "_common.py").resolve(), None))
                continue
            if not name.startswith(PACKAGE):
                continue
            for part in _with_parents(name):
                if any(part == s or part.startswith(s + ".") for s in skip):
                    break
                f = module_file(part)
                if f is not None:
                    todo.append((f.resolve(), part))
                    if f.name == "__init__.py" and "iter_modules(__path__)" in f.read_text():
                        # a registry package that imports every module of itself at run time
                        todo += [(g.resolve(), module_name(g)) for g in sorted(f.parent.glob("*.py"))]
    return {p for p in seen if p.is_relative_to(REPO)} - {Path(r).resolve() for r in roots}


def rel(path: Path) -> str:
    return str(path.resolve().relative_to(REPO))


def stage_bodies(dvc_file: Path = REPO / "dvc.yaml") -> dict[str, dict]:
    stages = yaml.safe_load(dvc_file.read_text())["stages"]
    return {name: st.get("do", st) for name, st in stages.items()}


def stage_roots(body: dict, params: dict) -> list[Path]:
    """The stage script and, for a report stage, the notebooks its deps name (``${item}`` over ``papers``)."""
    roots = [REPO / body["cmd"].split()[1]]
    for d in body.get("deps", []):
        if d.startswith("notebooks/"):
            names = [d.replace("${item}", p) for p in params.get("papers") or []] if "${item}" in d else [d]
            roots += [REPO / n for n in names if (REPO / n).is_file()]
    return roots


def profile_imports_outside_profiles() -> list[str]:
    """``module -> vlcomp.profiles...`` for every module outside ``vlcomp.profiles`` (and :data:`COMMANDS`) that
    imports a profile."""
    bad = []
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        name = module_name(path)
        if name == f"{PACKAGE}.profiles" or name.startswith(f"{PACKAGE}.profiles.") or name in COMMANDS:
            continue
        for imp in sorted(imported_names(path, name)):
            if imp.startswith(f"{PACKAGE}.profiles"):
                bad.append(f"{name} -> {imp}")
    return bad


def stage_graphs(body: dict, params: dict) -> dict[str, set[str]]:
    """``{profile: repository paths}`` of the code a stage imports in each profile."""
    return {p: {rel(f) for f in import_graph(stage_roots(body, params), p)} for p in PROFILES}


def suggested_deps(graphs: dict[str, set[str]]) -> list[str]:
    """The code deps dvc.yaml should list for a stage with these graphs (``{profile: files}``; empty where the
    stage does not exist): the shared files, a package folder as a whole when the stage reaches any of its
    modules (package data such as the toy architectures' configs comes with it), top-level modules one by one,
    and each profile's own code through ``${profile}``: file by file (``src/vlcomp/profiles/${profile}/world.py``)
    when every profile with the stage reaches the same files, else the whole ``src/vlcomp/profiles/${profile}``."""
    root = Path("src", PACKAGE, "profiles")
    out: set[str] = set()
    own: dict[str, set[str]] = {}
    for p, files in graphs.items():
        for f in files:
            parts = Path(f).parts
            if Path(*parts[:3]) == root:
                if len(parts) == 4:
                    out.add(f)  # vlcomp/profiles/__init__.py, run by every profile import
                else:
                    own.setdefault(p, set()).add(str(Path(*parts[4:])))
                continue
            out.add(str(Path(*parts[:3])) if parts[:2] == ("src", PACKAGE) and len(parts) > 3 else f)
    present = [p for p, files in graphs.items() if files]
    for p, rels in own.items():  # a sub-package reached whole is listed as its folder
        for sub in {Path(r).parts[0] for r in rels if len(Path(r).parts) > 1}:
            whole = {str(f.relative_to(SRC / PACKAGE / "profiles" / p)) for f in (SRC / PACKAGE / "profiles" / p / sub).rglob("*.py")}
            if whole <= rels:
                own[p] = (rels - whole) | {sub}
                rels = own[p]
    if not own:
        slots = []
    elif all(own.get(p) == own.get(present[0]) for p in present):
        slots = [f"{root}/${{profile}}/{r}" for r in sorted(own[present[0]])]
    else:
        slots = [f"{root}/${{profile}}"]
    return sorted(out, key=lambda d: (not d.startswith("stages/"), d)) + slots


def is_code_dep(dep: str) -> bool:
    return dep.startswith("src/") or dep == "stages/_common.py"


def suggestions(params: dict[str, dict]) -> dict[str, list[str]]:
    """``{stage: code deps}`` for every stage of dvc.yaml; ``params`` holds each profile's resolved params (a
    foreach stage over a mapping a profile leaves empty exists only in the other)."""
    raw = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    out = {}
    for name, body in stage_bodies().items():
        graphs = {}
        for p in PROFILES:
            key = raw[name]["foreach"].strip("${}") if "foreach" in raw[name] else None
            graphs[p] = stage_graphs(body, params[p])[p] if key is None or params[p].get(key) else set()
        out[name] = suggested_deps(graphs)
    return out


def write(dvc_file: Path, wanted: dict[str, list[str]]) -> None:
    """Replace each stage's code deps in ``dvc_file`` by ``wanted[stage]``, right after the stage script's line."""
    lines = dvc_file.read_text().splitlines(keepends=True)
    out, stage, in_deps = [], None, False
    for line in lines:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if indent == 2 and stripped.endswith(":") and not stripped.startswith("-"):
            stage, in_deps = stripped[:-1], False
        if stripped == "deps:":
            in_deps, deps_indent = True, indent
            out.append(line)
            continue
        if in_deps and stripped.startswith("- "):
            dep = stripped[2:].strip()
            if is_code_dep(dep):
                continue
            out.append(line)
            if dep.startswith("stages/") and dep.endswith(".py"):
                out += [f"{' ' * (deps_indent + 2)}- {d}\n" for d in wanted[stage]]
            continue
        in_deps = in_deps and (not stripped or indent > deps_indent)
        out.append(line)
    dvc_file.write_text("".join(out))


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(SRC))
    from vlcomp.config import profile_params

    params = {p: profile_params(p, REPO) for p in PROFILES}
    wanted = suggestions(params)
    if argv == ["--write"]:
        write(REPO / "dvc.yaml", wanted)
        print("dvc.yaml: code deps rewritten; check with `git diff dvc.yaml` and `dvc status`")
        return 0
    for name, deps in wanted.items():
        if argv and name not in argv:
            continue
        print(f"{name}:", *(f"  - {d}" for d in deps), sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
