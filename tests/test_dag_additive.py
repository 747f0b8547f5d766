"""Adding a paper is additive on a real DVC DAG: its generator, loss, method, report module and notebook leave every
existing stage up to date in `dvc status`; only the new paper's stages and the report index are stale.

The DAG is the smoke workspace's (scripts/smoke.py's copy of the pipeline); no stage runs. Every stage's outputs are
stand-in files, recorded with `dvc commit` so that DVC knows each stage as up to date, then the new paper's files are
added and the pipeline files regenerated exactly as a researcher would (``python scripts/stage_deps.py --write``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

NEW_PAPER = {
    "src/vlcomp/generators/toypaper.py": '''
        """A new paper's generator (test stand-in)."""
        from dataclasses import dataclass

        from . import GENERATORS, Generator


        @dataclass(frozen=True)
        class ToyPaperConfig:
            k: int = 1
            split: str = "coco_train"


        def run(cfg, **kwargs):
            return {}


        GENERATORS.add("toypaper", Generator(ToyPaperConfig, run, writes=("negatives",), reads="none"))
        ''',
    "src/vlcomp/losses/toypaper.py": '''
        """A new paper's loss (test stand-in)."""
        from torch import nn

        from . import LOSSES


        @LOSSES.register("toypaper")
        class ToyPaperLoss(nn.Module):
            def forward(self, f):
                return {}
        ''',
    "src/vlcomp/reporting/papers/toypaper/__init__.py": '''
        """A new paper's report module (test stand-in)."""
        from .. import PAPERS, Paper

        PAPERS.add("toypaper", Paper(name="toypaper", title="Toy paper", catalog="toypaper.md",
                                     benchmarks=("vg_relation",), artifacts=()))
        ''',
    "src/vlcomp/reporting/papers/toypaper/report.py": '''
        """A new paper's report page (test stand-in)."""
        from ...render import Table
        from ...scaffold import Part, Report, Section

        REPORT = Report(paper="toypaper", title="Toy paper", intro="", headline="T1",
                        sections=(Section("T1", (Part("T1", lambda ctx: None),)),),
                        ledger=lambda ctx: ([], None), methods=lambda ctx: ctx.methods,
                        deviations=lambda ctx: "", provenance=lambda ctx: Table(None))
        ''',
    "notebooks/toypaper.py": '''
        # %%
        from vlcomp.reporting.papers.toypaper.report import REPORT  # noqa: F401
        ''',
}

#: the new paper's params: a method on the default chains trained on its generator's data with its loss
OVERLAY = {"papers": ["aro", "tsvlc", "toypaper"],
           "mine": {"toypaper": {"k": 1, "split": "coco_train"}},
           "methods": {"toypaper_m": {"paper": "toypaper", "label": "Toy", "generator": "toypaper", "loss": "toypaper",
                                      "batch": {"rows": "with_negatives", "negatives": 1}}},
           "seeds": {"toypaper_m": [0]}}

REGENERATE = """
import sys, yaml
from pathlib import Path
from vlcomp.config import profile_params, read_layer
from vlcomp.dag import write_all
overlay = yaml.safe_load(sys.argv[1])
params = profile_params("toy", ".", read_layer("params.smoke.yaml"), *([overlay] if overlay else []))
Path("params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
write_all(Path("."))
"""


def _run(cmd: list[str], cwd: Path, env: dict) -> str:
    res = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    assert res.returncode == 0, f"{' '.join(cmd)} failed:\n{res.stdout[-2000:]}\n{res.stderr[-3000:]}"
    return res.stdout


def _stale(work: Path, env: dict) -> set[str]:
    return set(json.loads(_run(["dvc", "status", "--json"], work, env) or "{}"))


@pytest.mark.slow
def test_a_new_paper_leaves_every_existing_stage_up_to_date(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "scripts"))
    from smoke import commit_all, prepare, stand_in_outputs

    work = tmp_path / "ws"
    work.mkdir()
    prepare(work)
    env = {**os.environ, "PYTHONPATH": str(work / "src"),
           "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
    _run([sys.executable, "-c", REGENERATE, ""], work, env)  # as `scripts/stage_deps.py --write` in the workspace
    stand_in_outputs(work, env)
    commit_all(work, env)
    before = _run(["dvc", "stage", "list", "--all", "--name-only"], work, env).split()
    assert _stale(work, env) == set(), "the committed workspace is not up to date"

    for rel, text in NEW_PAPER.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(textwrap.dedent(text).lstrip())
    _run([sys.executable, "-c", REGENERATE, json.dumps(OVERLAY)], work, env)

    stale = _stale(work, env)
    after = _run(["dvc", "stage", "list", "--all", "--name-only"], work, env).split()
    new = set(after) - set(before)
    assert {"pipelines/toypaper/dvc.yaml:report@toypaper", "pipelines/toypaper/dvc.yaml:mine@toypaper",
            "pipelines/toypaper/toypaper_m/dvc.yaml:finetune@toypaper_m-b0s0",
            "pipelines/toypaper/toypaper_m/dvc.yaml:evaluate@toypaper_m-b1s0"} <= new
    assert not any("toypaper" not in s for s in new)
    assert stale == new | {"report_index"}, sorted(stale - new)
