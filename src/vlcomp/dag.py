"""The code each DVC stage imports, per profile: a static import graph of the stage script (and, for the report
stage, its notebooks), followed through every ``vlcomp`` module, function-level imports included.

Usage: python scripts/stage_deps.py [STAGE ...]     # print the code deps each stage should declare
       python scripts/stage_deps.py --write           # rewrite dvc.yaml's code deps to them (other deps, comments
                                                      # and order kept)

Why static: a stage script chooses its profile's code inside a branch (``if params["profile"] == "real": from
vlcomp.profiles.real... import ...``), which a run of one profile never executes for the other. Reading every
import statement over-approximates what a run imports, which is the safe side for DVC deps (a stage may rerun
for an edit it would survive, never miss one). The profile rule makes the graph exact where it matters: only the
stage scripts import ``vlcomp.profiles.<name>``, so the toy graph skips ``vlcomp.profiles.real`` and the reverse;
shared modules importing a profile package is an error (:func:`profile_imports_outside_profiles`).

``tests/test_stage_deps.py`` holds dvc.yaml to these graphs: every file a stage's graph reaches in a profile is
covered by that stage's deps with ``${profile}`` set to it, no listed source path is unused, and the toy deps
name nothing under ``src/vlcomp/profiles/real`` (and the reverse).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import yaml

from .config import method_paper

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
PACKAGE = "vlcomp"
PROFILES = ("toy", "real")
#: Commands outside the pipeline that may import a profile package (the doctor checks the real profile's inputs
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


#: Files that are not modules but are read by one: ``{module: paths}`` (a stage reaching the module depends on them).
PACKAGE_DATA: dict[str, tuple[str, ...]] = {
    "vlcomp.models.factory": ("src/vlcomp/models/configs",),
    "vlcomp.reporting.printed_values": ("src/vlcomp/data/printed",),
}

#: The plugin registries (:class:`vlcomp.registry.Registry` with a package): a stage imports a plugin module only when
#: its params name the plugin, so the import graph follows the names below, per stage family.
LOSSES, GENERATORS, PAPERS, ZOO = ("vlcomp.losses", "vlcomp.generators", "vlcomp.reporting.papers",
                                   "vlcomp.profiles.real.zoo")


def _method_plugins(params: dict, method: str, seen: set[str] | None = None) -> set[tuple[str, str]]:
    """What :func:`vlcomp.methods.method_config` loads for ``method``: its loss and the generators of its mined data
    (and the same for the method it takes its learning rate from)."""
    from vlcomp.config import registered_generator

    seen = set() if seen is None else seen
    spec = (params.get("methods") or {}).get(method) or {}
    if method in seen:
        return set()
    seen.add(method)
    mine = params.get("mine") or {}
    out = {(LOSSES, spec.get("loss") or "clip")}
    out |= {(GENERATORS, registered_generator(mine, g)) for g in (spec.get("generator"), spec.get("positives_from")) if g}
    if spec.get("lr_from"):
        out |= _method_plugins(params, spec["lr_from"], seen)
    return out


def stage_plugins(family: str, params: dict, items: dict | None = None) -> set[tuple[str, str]]:
    """``{(registry package, plugin name)}`` a stage of ``family`` (a stage group) may load by name at run time, over
    ``items`` (the group's ``foreach`` items; default every item of its params section)."""
    from vlcomp.config import registered_generator

    mine = params.get("mine") or {}
    section = {"pretrain": "bases", "mine": "mining", "select_lr": "selections", "finetune": "variants",
               "evaluate_released": "released_models"}.get(family)
    if items is None:
        items = (params.get(section) or {}) if section else {}
    if family == "pretrain":
        return {(LOSSES, (b or {}).get("loss") or "clip") for b in items.values()}
    if family == "mine":
        return {(GENERATORS, registered_generator(mine, i["generator"])) for i in items.values()}
    if family in ("select_lr", "finetune"):
        return {p for i in items.values() for p in _method_plugins(params, i["method"])}
    if family == "report":
        names = list(items) if isinstance(items, dict) and items else params.get("papers") or []
        return {(PAPERS, name) for name in names}
    if family == "report_index":
        return {(PAPERS, name) for name in params.get("papers") or []}
    if family == "evaluate_released":
        return {(ZOO, (m or {}).get("family")) for m in items.values() if m}
    return set()


def plugin_files(plugins: Iterable[tuple[str, str]]) -> list[Path]:
    """The module files of ``plugins`` by :func:`vlcomp.registry.plugin_modules`'s rule (the first candidate module
    that exists); a name no module defines is skipped (the stage then fails naming it)."""
    from vlcomp.registry import plugin_modules

    out = []
    for package, name in sorted(plugins):
        for cand in plugin_modules(name) if name else []:
            if (f := module_file(f"{package}.{cand}")) is not None:
                out.append(f)
                break
    return out


def import_graph(roots: Iterable[Path], profile: str) -> set[Path]:
    """Files of every ``vlcomp`` module reachable from ``roots`` (scripts or notebooks), and the stage helper
    ``stages/_common.py`` if reached; ``vlcomp.profiles.<other>`` is not entered."""
    skip = tuple(f"{PACKAGE}.profiles.{p}" for p in PROFILES if p != profile)
    seen: set[Path] = set()
    todo: list[tuple[Path, str | None]] = [
        (Path(r).resolve(), module_name(Path(r)) if Path(r).resolve().is_relative_to(SRC) else None) for r in roots]
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
    scripts = {Path(r).resolve() for r in roots if not Path(r).resolve().is_relative_to(SRC)}
    files = {p for p in seen if p.is_relative_to(REPO)} - scripts
    data = {REPO / d for f in files if f.is_relative_to(SRC) for d in PACKAGE_DATA.get(module_name(f), ())}
    return files | data


def module_graph() -> dict[str, set[str]]:
    """``{module: the vlcomp modules it imports}`` over every module of the library, function-level imports
    included; importing ``a.b`` counts as importing the package ``a`` too (Python runs its ``__init__``)."""
    files = {module_name(p): p for p in sorted((SRC / PACKAGE).rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        deps = {part for imp in imported_names(path, name) for part in _with_parents(imp) if part in files}
        graph[name] = deps - {name} - set(_with_parents(name))  # a module's own parent packages run first anyway
    return graph


def import_cycles(graph: dict[str, set[str]] | None = None) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan): each is an import cycle."""
    graph = module_graph() if graph is None else graph
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(cycles)


def rel(path: Path) -> str:
    return str(path.resolve().relative_to(REPO))


def stage_bodies(dvc_file: Path = REPO / "dvc.yaml") -> dict[str, dict]:
    stages = yaml.safe_load(dvc_file.read_text())["stages"]
    return {name: st.get("do", st) for name, st in stages.items()}


def stage_roots(body: dict, params: dict, family: str | None = None) -> list[Path]:
    """The stage script, the plugin modules the stage's params name (:func:`stage_plugins`; ``family``: its dvc.yaml
    stage group) and, for a report stage, the notebooks its deps name (``${item}`` over ``papers``)."""
    roots = [REPO / body["cmd"].split()[1]]
    if family is not None:
        roots += plugin_files(stage_plugins(family, params))
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


def stage_graphs(body: dict, params: dict, family: str | None = None) -> dict[str, set[str]]:
    """``{profile: repository paths}`` of the code a stage of group ``family`` imports in each profile (``params``:
    the profile's resolved params; one set of params serves both profiles' graphs in tests of a single profile)."""
    return {p: {rel(f) for f in import_graph(stage_roots(body, params, family), p)} for p in PROFILES}


def suggested_deps(graphs: dict[str, set[str]]) -> list[str]:
    """The code deps dvc.yaml should list for a stage with these graphs (``{profile: files}``; empty where the
    stage does not exist): every shared module file the stage reaches, one by one (module granularity: a new
    module, or an edit to one the stage does not import, leaves the stage up to date), the package data those
    modules read (:data:`PACKAGE_DATA`), and each profile's own code through ``${profile}``: file by file
    (``src/vlcomp/profiles/${profile}/world.py``) when every profile with the stage reaches the same files, else the
    whole ``src/vlcomp/profiles/${profile}``."""
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
            out.add(f)
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
            graphs[p] = stage_graphs(body, params[p], name)[p] if key is None or params[p].get(key) else set()
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


# --------------------------------------------------------------------------- the per-paper pipeline files

TEMPLATES = "pipelines/stages.yaml"
PIPELINES = "pipelines"
#: The stage groups of the templates, with the params section each fans out over.
TEMPLATE_SECTIONS = {"mine": "mining", "select_lr": "selections", "finetune": "variants", "evaluate": "variants",
                     "report": "papers"}
PER_METHOD = ("select_lr", "finetune", "evaluate")  # in pipelines/<paper>/<method>/dvc.yaml
PER_PAPER = ("mine", "report")  # in pipelines/<paper>/dvc.yaml
#: The report template's dependencies that stand for "what this paper's report reads" (vlcomp.reporting.scope).
REPORT_SCOPED = ("metrics", "models", "calibration", "data/mined")
GENERATED = ("# GENERATED by `python scripts/stage_deps.py --write` from {templates} (stage templates), params.yaml\n"
             "# (profile {profile}) and the code each stage imports: do not edit; edit the templates or the params\n"
             "# layers and rerun that command. {what}\n")


def mined_paper(params: dict, mine_key: str) -> str:
    """The paper that owns the mined dataset ``mine.<mine_key>``: that of the first method (params order) that
    trains on it (``generator`` or ``positives_from``)."""
    for m, spec in (params.get("methods") or {}).items():
        if mine_key in ((spec or {}).get("generator"), (spec or {}).get("positives_from")):
            return method_paper(params, m)
    raise ValueError(f"params: mine.{mine_key} is mined, but no method trains on it (methods.<m>.generator or "
                     "positives_from)")


def layout(params: dict) -> dict[str, dict[str, dict | list]]:
    """``{pipeline file: {stage group: foreach items}}`` of the per-paper files: each paper's mined datasets and
    report in ``pipelines/<paper>/dvc.yaml``, each method's learning-rate sweeps, fine-tunes and evaluations in
    ``pipelines/<paper>/<method>/dvc.yaml``; files and groups in params order."""
    out: dict[str, dict[str, dict | list]] = {}

    def put(path: str, group: str, key: str, item) -> None:
        out.setdefault(path, {}).setdefault(group, {})[key] = item

    for p in params.get("papers") or []:
        out.setdefault(f"{PIPELINES}/{p}/dvc.yaml", {})
    for key, item in (params.get(TEMPLATE_SECTIONS["mine"]) or {}).items():
        put(f"{PIPELINES}/{mined_paper(params, item['generator'])}/dvc.yaml", "mine", key,
            {**item, "params": mining_params(key, item)})
    for group in PER_METHOD:
        for key, item in (params.get(TEMPLATE_SECTIONS[group]) or {}).items():
            m = item["method"]
            put(f"{PIPELINES}/{method_paper(params, m)}/{m}/dvc.yaml", group, key, item)
    for p in params.get("papers") or []:
        out[f"{PIPELINES}/{p}/dvc.yaml"]["report"] = [p]
    return out


def mining_params(key: str, item: dict) -> list[str]:
    """The two params keys a ``mine@<key>`` run reads besides those every run reads (the template's
    ``${item.params[0]}``, ``${item.params[1]}``): for a generator of the base model, the chain's base and the CLIP
    spec the base model is built from; for one that reads no base model, its own ``mine.<generator>`` and
    ``mining.<key>`` again (DVC's ``foreach`` gives every item one shape; a key listed twice is tracked once)."""
    if item.get("base"):
        return [f"bases.{item['base']}", "clip"]
    return [f"mine.{item['generator']}", f"mining.{key}"]


def _item_keys(body_text: str) -> set[str]:
    import re

    return set(re.findall(r"\$\{item\.([A-Za-z0-9_]+)", body_text))


def report_inputs(params: dict, paper: str, root: Path = REPO) -> tuple[list[str], list[str]]:
    """``(data deps, params keys)`` of ``paper``'s report: the metrics, model and mined folders of its scope
    (:func:`vlcomp.reporting.papers.paper_scope`), the blind-text ceilings of params ``blind`` (every report shows
    them: :mod:`vlcomp.reporting.blind`), its own calibration files (``calibration/<paper>_*`` and those
    its registry entry lists, :attr:`vlcomp.reporting.papers.Paper.calibration`), and the params sections of its methods,
    runs and bases only, plus the upstream settings the reports print."""
    from vlcomp.reporting.blind import BLIND_SUBDIR, blind_names
    from vlcomp.reporting.papers import PAPERS, paper_scope

    sc = paper_scope(params, paper)
    data = [f"metrics/{m}" for m in sc.models]
    data += [f"metrics/released/{m}" for m in params.get("released_models") or {}]
    data += [f"metrics/{BLIND_SUBDIR}/{b}" for b in blind_names(params)]  # the blind-text ceilings every report shows
    data += [f"models/base/{b}" for b in sc.bases] + [f"models/lr/{s}" for s in sc.selections]
    data += [f"models/finetune/{v}" for v in sc.variants] + [f"data/mined/{d}" for d in sc.mined]
    calibration = {p.name for p in (root / "calibration").glob(f"{paper}_*")}
    calibration |= {f for f in PAPERS.get(paper).calibration if (root / "calibration" / f).exists()}
    data += [f"calibration/{f}" for f in sorted(calibration)]
    mine_keys = dict.fromkeys(((params.get("mining") or {}).get(d) or {}).get("generator", d) for d in sc.mined)
    keys = ["profile", "root_seed", "base_seeds", "lr_selection"]
    keys += [f"seeds.{m}" for m in sc.methods if m in (params.get("seeds") or {})]
    keys += [f"bases.{b}" for b in sc.bases] + [f"methods.{m}" for m in sc.methods]
    if any(((params.get("bases") or {}).get(b) or {}).get("family") for b in sc.bases):
        keys.append("base_models")  # what the other base models stand for and are scored on (the rows' labels)
    keys += [f"variants.{v}" for v in sc.variants] + [f"selections.{s}" for s in sc.selections]
    keys += [f"mine.{g}" for g in mine_keys if g in (params.get("mine") or {})]
    keys += ["benchmarks.order_seeds", "benchmarks.shuffle_seeds", "evaluate.benchmarks"]
    keys += [f"blind.{b}" for b in blind_names(params)]
    # the settings the reports print (what each twin stands for, the deviations section): upstream of every run,
    # so declaring them reruns nothing that their change would not rerun anyway
    keys += ["clip.arch", "nlp", "world", "pretrain", "finetune", "benchmarks.twins"]
    if params.get("released_models"):
        keys.append("released_models")
    return data, keys


def _group_body(template: dict, group: str, items, params: dict, profile: str, root: Path) -> dict:
    """A template's ``do`` body made concrete for one file: the code deps of its items' import graph, and for a
    report the paper's scoped inputs."""
    import copy

    body = copy.deepcopy(template["do"])
    plugin_items = items if isinstance(items, dict) else {p: p for p in items}
    graph = {rel(f) for f in import_graph([REPO / body["cmd"].split()[1],
                                           *plugin_files(stage_plugins(group, params, plugin_items)),
                                           *_notebooks(body, params, list(plugin_items))], profile)}
    code = [d.replace("${profile}", profile) for d in suggested_deps({profile: graph})]
    deps = []
    for d in body["deps"]:
        if group == "report" and d in REPORT_SCOPED:
            continue
        deps.append("data/benchmarks.sha256" if d == "data/benchmarks" else d)
        if d.startswith("stages/") and d.endswith(".py"):
            deps += code
    if group == "report":
        (paper,) = items
        data, keys = report_inputs(params, paper, root)
        deps += data
        body["params"] = keys
    body["deps"] = deps
    return body


def _notebooks(body: dict, params: dict, keys: list[str]) -> list[Path]:
    out = []
    for d in body.get("deps", []):
        if d.startswith("notebooks/"):
            out += [REPO / d.replace("${item}", k) for k in keys] if "${item}" in d else [REPO / d]
    return [p for p in out if p.is_file()]


def render_pipelines(params: dict, root: Path = REPO) -> dict[str, str]:
    """``{pipeline file: text}`` of every per-paper file (:func:`layout`) for ``params``."""
    templates = yaml.safe_load((root / TEMPLATES).read_text())["stages"]
    profile = params.get("profile", "toy")
    out = {}
    for path, groups in layout(params).items():
        depth = len(Path(path).parent.parts)
        stages = {}
        for group, items in groups.items():
            tmpl = templates[group]
            body = _group_body(tmpl, group, items, params, profile, root)
            if isinstance(items, dict):
                used = _item_keys(yaml.safe_dump(tmpl["do"]))
                items = {k: {f: v[f] for f in v if f in used} for k, v in items.items()}
            stages[group] = {"foreach": items, "do": {"wdir": "/".join([".."] * depth), **body}}
        what = ("One paper's mined datasets and report." if depth == 2 else
                "One method's learning-rate sweeps, fine-tunes and evaluations.")
        text = GENERATED.format(templates=TEMPLATES, profile=profile, what=what)
        text += yaml.safe_dump({"stages": stages}, sort_keys=False, width=120, default_flow_style=False)
        out[path] = text
    return out


def stale_pipelines(wanted: Iterable[str], root: Path = REPO) -> list[Path]:
    """Generated pipeline files under ``pipelines/`` that :func:`layout` no longer lists (a removed method)."""
    have = {p.relative_to(root).as_posix() for p in (root / PIPELINES).rglob("dvc.yaml")}
    return [root / p for p in sorted(have - set(wanted))]


def write_pipelines(params: dict, root: Path = REPO) -> list[str]:
    """Write every per-paper pipeline file; remove the files (and locks) of what params no longer define."""
    from .io import atomic_path

    texts = render_pipelines(params, root)
    changed = []
    for path, text in texts.items():
        target = root / path
        if not target.is_file() or target.read_text() != text:
            with atomic_path(target) as tmp:
                tmp.write_text(text)
                tmp.chmod(0o644)
            changed.append(path)
    for old in stale_pipelines(texts, root):
        for f in (old, old.with_name("dvc.lock")):
            f.unlink(missing_ok=True)
        changed.append(old.relative_to(root).as_posix())
    return changed


def write_all(root: Path = REPO) -> list[str]:
    """Rewrite the root dvc.yaml's code deps and every per-paper pipeline file from params.yaml (its profile) and
    the other profile's params (the root file serves both profiles through ``${profile}``)."""
    from .config import load_params, profile_params

    params = {p: profile_params(p, root) for p in PROFILES}
    active = load_params(root / "params.yaml")
    params[active.get("profile", "toy")] = active
    write(root / "dvc.yaml", suggestions(params))
    return ["dvc.yaml", *write_pipelines(active, root)]
