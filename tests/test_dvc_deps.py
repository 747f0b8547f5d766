"""Every package module a stage imports is a declared dependency of that stage in dvc.yaml, so editing code
reruns exactly the stages that use it (and no stage runs stale code)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]


def _stages() -> list[tuple[str, str, list[str]]]:
    dvc = yaml.safe_load((REPO / "dvc.yaml").read_text())
    out = []
    for name, st in dvc["stages"].items():
        body = st.get("do", st)
        script = body["cmd"].split()[1]
        out.append((name, script, body.get("deps", [])))
    return out


def _notebook_imports(deps: list[str]) -> str:
    """The import lines of the report notebooks a stage runs (papermill executes them in a kernel)."""
    lines = []
    for d in deps:
        if d.startswith("notebooks/"):
            for nb in sorted((REPO / "notebooks").glob(Path(d).name.replace("${item}", "*"))):
                lines += [ln for ln in nb.read_text().splitlines() if ln.startswith(("import ", "from "))]
    return "\n".join(lines) + "\n"


def _imported_package_files(script: str, extra: str = "") -> set[str]:
    code = (
        "import importlib.util, json, sys\n"
        f"sys.path.insert(0, {str(REPO / 'stages')!r})\n"
        f"spec = importlib.util.spec_from_file_location('stage_under_test', {str(REPO / script)!r})\n"
        "mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)\n"
        + extra +
        "files = [m.__file__ for n, m in list(sys.modules.items()) if (n == 'vlcomp' or n.startswith('vlcomp.') or n == '_common') and getattr(m, '__file__', None)]\n"
        "print(json.dumps(files))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    return {str(Path(f).resolve().relative_to(REPO)) for f in json.loads(res.stdout.strip().splitlines()[-1])}


@pytest.mark.parametrize(("stage", "script", "deps"), _stages(), ids=[s[0] for s in _stages()])
def test_stage_declares_every_imported_module(stage: str, script: str, deps: list[str]) -> None:
    assert script in deps, f"dvc.yaml stage {stage}: its own script {script} is not a dependency"
    missing = []
    for f in sorted(_imported_package_files(script, _notebook_imports(deps))):
        if f == "src/vlcomp/__init__.py":
            continue  # the empty package marker
        if not any(f == d or f.startswith(d.rstrip("/") + "/") for d in deps):
            missing.append(f)
    assert not missing, f"dvc.yaml stage {stage}: imports {missing} but does not list them (or their folder) in deps"
