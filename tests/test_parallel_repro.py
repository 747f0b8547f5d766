"""The parallel `dvc repro` scheduler: the DAG and stage addresses read through DVC's API, dependency order, the
job limit, stopping on failure, and stopping on SIGINT/SIGTERM in a real DVC repository."""

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import yaml

from vlcomp.parallel_repro import (
    Schedule,
    TargetError,
    _n_descendants,
    critical_paths,
    dvc_changed,
    dvc_dag,
    last_durations,
    resolve_targets,
    restrict,
    stale,
)

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
DVC = str(BIN / "dvc")

# report depends on ft@a, ft@b and bench; ft@a/b on pretrain; pretrain and bench on world
UP = {"world": set(), "pretrain": {"world"}, "bench": {"world"}, "ft@a": {"pretrain"}, "ft@b": {"pretrain"},
      "report": {"ft@a", "ft@b", "bench"}}


def test_restrict_keeps_ancestors_only():
    up = restrict(UP, ["ft@a"])
    assert up == {"world": set(), "pretrain": {"world"}, "ft@a": {"pretrain"}}
    with pytest.raises(ValueError, match="unknown stage 'nope'"):
        restrict(UP, ["nope"])


def test_descendant_counts():
    assert _n_descendants(UP) == {"world": 5, "pretrain": 3, "bench": 1, "ft@a": 1, "ft@b": 1, "report": 0}


def test_resolve_targets_takes_addresses_unique_names_and_files():
    up = {"world": set(), "report": set(), "pipelines/aro/dvc.yaml:ft@a": {"world"},
          "pipelines/aro/dvc.yaml:report": set(), "pipelines/sugar/dvc.yaml:ft@b": {"world"}, "data.dvc": set()}
    assert resolve_targets(up, ["ft@a", "pipelines/sugar/dvc.yaml:ft@b", "./dvc.yaml:world", "data.dvc"]) == [
        "pipelines/aro/dvc.yaml:ft@a", "pipelines/sugar/dvc.yaml:ft@b", "world", "data.dvc"]
    assert resolve_targets(up, ["pipelines/aro/dvc.yaml"]) == ["pipelines/aro/dvc.yaml:ft@a",
                                                               "pipelines/aro/dvc.yaml:report"]
    assert resolve_targets(up, ["dvc.yaml"]) == ["report", "world"]
    assert resolve_targets(up, ["report", "pipelines/aro/dvc.yaml:report"]) == ["report",
                                                                                "pipelines/aro/dvc.yaml:report"]
    with pytest.raises(TargetError, match="unknown stage 'nope'"):
        resolve_targets(up, ["ft@a", "nope"])
    with pytest.raises(TargetError, match="unknown stage 'pipelines/mmvp/dvc.yaml'"):
        resolve_targets(up, ["pipelines/mmvp/dvc.yaml"])
    up["pipelines/sugar/dvc.yaml:ft@a"] = set()
    with pytest.raises(TargetError, match="'ft@a' is ambiguous.*pipelines/aro/dvc.yaml:ft@a, "
                                          "pipelines/sugar/dvc.yaml:ft@a"):
        resolve_targets(up, ["ft@a"])


class FakeRunner:
    """Stages finish after a fixed number of polls; records the order and the concurrency."""

    def __init__(self, durations, fail=()):
        self.durations, self.fail = durations, set(fail)
        self.started, self.finished, self.live, self.peak = [], [], set(), 0

    def start(self, stage):
        self.started.append(stage)
        self.live.add(stage)
        self.peak = max(self.peak, len(self.live))
        return {"stage": stage, "left": self.durations.get(stage, 1)}

    def poll(self, h):
        h["left"] -= 1
        if h["left"] > 0:
            return None
        self.live.discard(h["stage"])
        self.finished.append(h["stage"])
        return h.get("rc", 1 if h["stage"] in self.fail else 0)


def test_schedule_respects_dependencies_and_job_limit():
    r = FakeRunner({"pretrain": 3, "bench": 1, "ft@a": 2, "ft@b": 2})
    s = Schedule(UP, jobs=2)
    assert s.run(r.start, r.poll, tick=0)
    assert r.peak == 2 and s.max_running == 2
    for stage, ups in UP.items():  # every stage starts after all its dependencies finished
        for u in ups:
            assert r.finished.index(u) < r.started.index(stage)
    # longest chain first: pretrain (3 stages to the end) before bench (2) once world is done
    assert r.started[:3] == ["world", "pretrain", "bench"]
    assert {x.stage for x in s.results} == set(UP)


def test_schedule_one_job_is_sequential():
    r = FakeRunner({})
    assert Schedule(UP, jobs=1).run(r.start, r.poll, tick=0)
    assert r.peak == 1 and len(r.started) == 6


def test_schedule_stops_starting_after_a_failure_and_lets_running_finish():
    r = FakeRunner({"pretrain": 1, "bench": 3}, fail={"pretrain"})
    s = Schedule(UP, jobs=2)
    assert not s.run(r.start, r.poll, tick=0)
    assert "bench" in r.finished  # the running stage finished
    assert not {"ft@a", "ft@b", "report"} & set(r.started)
    assert [x.stage for x in s.results if x.returncode] == ["pretrain"]
    assert not s.stopped and s.interrupted == []


def test_schedule_stop_signals_running_stages_then_kills_after_grace():
    r = FakeRunner({"pretrain": 10**6, "bench": 10**6})
    calls, events = [], []

    def interrupt(h, force):
        calls.append((h["stage"], force))
        if h["stage"] == "pretrain" or force:  # bench ignores the first signal
            h["left"], h["rc"] = 1, -9 if force else -2

    s = Schedule(UP, jobs=2)
    ok = s.run(r.start, r.poll, lambda kind, stage, res: events.append((kind, stage)), tick=0.001,
               stop=lambda: len(r.started) >= 3, interrupt=interrupt, grace=0.05)
    assert not ok and s.stopped
    assert r.started == ["world", "pretrain", "bench"]  # nothing started after the stop
    assert calls == [("pretrain", False), ("bench", False), ("bench", True)]
    assert s.interrupted == ["pretrain", "bench"]
    assert [(x.stage, x.returncode) for x in s.results] == [("world", 0), ("pretrain", -2), ("bench", -9)]
    assert ("interrupted", "pretrain") in events and ("kill", "bench") in events and ("failed", "bench") not in events


def test_schedule_stop_before_anything_runs_starts_nothing():
    r = FakeRunner({})
    s = Schedule(UP, jobs=2)
    assert not s.run(r.start, r.poll, tick=0, stop=lambda: True)
    assert r.started == [] and s.stopped and s.results == []


def test_schedule_rejects_bad_input():
    with pytest.raises(ValueError, match="jobs=0"):
        Schedule({"a": set()}, jobs=0)
    with pytest.raises(ValueError, match="unknown stages"):
        Schedule({"a": {"zz"}}, jobs=1)
    with pytest.raises(ValueError, match=r"\['a', 'b'\] form a dependency cycle"):
        Schedule({"a": {"b"}, "b": {"a"}, "c": set()}, jobs=1)


def test_stale_is_changed_plus_downstream():
    assert stale(UP, []) == set()
    assert stale(UP, ["ft@a"]) == {"ft@a", "report"}
    assert stale(UP, ["pretrain", "bench"]) == {"pretrain", "ft@a", "ft@b", "bench", "report"}
    assert stale(UP, ["world"]) == set(UP)
    assert stale(UP, ["not-in-targets"]) == set()


def test_critical_paths_hand_computed():
    cost = {"world": 10, "pretrain": 100, "bench": 300, "ft@a": 50, "ft@b": 80, "report": 5}
    # world: 10 + max(pretrain 100 + max(ft@a 50, ft@b 80) + report 5, bench 300 + report 5) = 10 + 305
    assert critical_paths(UP, cost) == {"world": 315, "pretrain": 185, "bench": 305, "ft@a": 55, "ft@b": 85,
                                        "report": 5}
    # no costs: chain length in stages; an unknown stage counts the median known cost (here 50 of 10/50/100)
    assert critical_paths(UP) == {"world": 4, "pretrain": 3, "bench": 2, "ft@a": 2, "ft@b": 2, "report": 1}
    assert critical_paths(UP, {"world": 10, "ft@a": 50, "ft@b": 100})["pretrain"] == 50 + 100 + 50


def test_schedule_starts_the_longest_chain_first():
    cost = {"world": 1, "pretrain": 1, "bench": 9, "ft@a": 2, "ft@b": 2, "report": 1}
    r = FakeRunner(cost)
    s = Schedule(UP, jobs=1, cost=cost)
    assert s.run(r.start, r.poll, tick=0)
    # bench heads 10 s to the end, pretrain 4 s: bench first although pretrain has more dependants
    assert r.started[:3] == ["world", "bench", "pretrain"]


def test_last_durations_reads_run_records_and_skips_bad_ones(tmp_path):
    (tmp_path / "a.json").write_text('{"stage": "pretrain@b0", "seconds": 130.5}')
    (tmp_path / "b.json").write_text("not json")
    (tmp_path / "c.json").write_text('{"stage": "x", "seconds": 0}')
    (tmp_path / "d.json").write_text('[1, 2]')
    assert last_durations(tmp_path) == {"pretrain@b0": 130.5}
    assert last_durations(tmp_path / "missing") == {}


# --- a real DVC repository -------------------------------------------------------------------------------------

def _env(**extra):
    """The tests' environment with this venv's `dvc` and `python` first on PATH and vlcomp importable."""
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@vlcomp.invalid", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@vlcomp.invalid", **extra}


def _init_repo(repo: Path, files: dict[str, str]) -> None:
    repo.mkdir(parents=True)
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    for cmd in (["git", "init", "-q"], [DVC, "init", "-q"], [DVC, "config", "core.analytics", "false"],
                [DVC, "config", "core.check_update", "false"]):
        subprocess.run(cmd, cwd=repo, check=True, env=_env(), capture_output=True)


def test_dvc_dag_reads_edges_and_addresses_across_dvc_yaml_files(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    _init_repo(repo, {
        "dvc.yaml": "stages:\n"
                    "  a:\n    cmd: echo a > a.txt\n    outs: [a.txt]\n"
                    "  c:\n    cmd: cat b.txt > c.txt\n    deps: [b.txt]\n    outs: [c.txt]\n"
                    "  same:\n    cmd: echo 1 > s1.txt\n    outs: [s1.txt]\n",
        "sub/dvc.yaml": "stages:\n"
                        "  b:\n    wdir: ..\n    cmd: cat a.txt > b.txt\n    deps: [a.txt]\n    outs: [b.txt]\n"
                        "  same:\n    wdir: ..\n    cmd: echo 2 > s2.txt\n    outs: [s2.txt]\n"})
    monkeypatch.chdir(tmp_path)  # addresses are relative to the repository root, wherever the caller stands
    up = dvc_dag(repo / "sub")
    # c needs b (another dvc.yaml), which needs a: each stage maps to the stages it depends on
    assert up == {"a": set(), "sub/dvc.yaml:b": {"a"}, "c": {"sub/dvc.yaml:b"}, "same": set(),
                  "sub/dvc.yaml:same": set()}
    assert restrict(up, resolve_targets(up, ["c"])) == {"a": set(), "sub/dvc.yaml:b": {"a"},
                                                        "c": {"sub/dvc.yaml:b"}}
    assert resolve_targets(up, ["b", "sub/dvc.yaml:same"]) == ["sub/dvc.yaml:b", "sub/dvc.yaml:same"]
    assert resolve_targets(up, ["same"]) == ["same"]  # a bare name is the root dvc.yaml's first, as in DVC
    # `dvc status --json` names the stages the same way: nothing has run, so every stage is changed
    assert dvc_changed(repo, DVC, _env()) == set(up)


SLOW = """\
import os, signal, sys, time
from pathlib import Path

out, markers = sys.argv[1], Path(os.environ["REPRO_TEST_MARKERS"])
if os.environ.get("REPRO_TEST_STUBBORN"):  # a command that ignores both signals: only SIGKILL stops it
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
name = Path(out).stem
(markers / f"{name}.pids").write_text(f"{os.getpid()} {os.getppid()}")
with open(out, "w") as f:
    f.write("partial\\n")
    f.flush()
    (markers / f"{name}.started").touch()
    deadline = time.time() + float(os.environ.get("REPRO_TEST_SLEEP", "30"))
    while time.time() < deadline:
        time.sleep(0.05)
    f.write("done\\n")
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _lock_stages(repo: Path) -> set[str]:
    out = set()
    for lock in (repo / "dvc.lock", repo / "sub" / "dvc.lock"):
        if lock.exists():
            out |= set((yaml.safe_load(lock.read_text()) or {}).get("stages", {}))
    return out


@pytest.mark.parametrize("sig,stubborn", [(signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGINT, True),
                                         (signal.SIGTERM, True)],
                         ids=["SIGINT", "SIGTERM", "SIGINT-ignored-by-the-command", "SIGTERM-ignored-by-the-command"])
def test_interrupt_stops_every_stage_commits_nothing_and_a_rerun_resumes(tmp_path, sig, stubborn):
    t0 = time.monotonic()
    repo, markers = tmp_path / "repo", tmp_path / "markers"
    markers.mkdir()
    _init_repo(repo, {
        "slow.py": SLOW,
        "join.py": "from pathlib import Path\n"
                   "Path('ab.txt').write_text(Path('a.txt').read_text() + Path('b.txt').read_text())\n",
        # slow_a (root) and sub/dvc.yaml:slow_b run side by side; join needs both
        "dvc.yaml": "stages:\n"
                    "  slow_a:\n    cmd: python slow.py a.txt\n    deps: [slow.py]\n    outs: [a.txt]\n"
                    "  join:\n    cmd: python join.py\n    deps: [join.py, a.txt, b.txt]\n    outs: [ab.txt]\n",
        "sub/dvc.yaml": "stages:\n"
                        "  slow_b:\n    wdir: ..\n    cmd: python slow.py b.txt\n    deps: [slow.py]\n"
                        "    outs: [b.txt]\n"})
    env = _env(REPRO_TEST_MARKERS=str(markers), **({"REPRO_TEST_STUBBORN": "1"} if stubborn else {}))
    log = tmp_path / "first.log"
    with open(log, "w") as f:
        proc = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "repro.py"), "--jobs", "2", "--grace", "2"],
                                cwd=repo, env=env, stdout=f, stderr=subprocess.STDOUT)
    tree: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 60
        while not all((markers / f"{n}.started").exists() for n in ("a", "b")):
            assert proc.poll() is None, f"the scheduler ended early:\n{log.read_text()}"
            assert time.monotonic() < deadline, f"the stages never started:\n{log.read_text()}"
            time.sleep(0.05)
        stage_pids = [int(p) for n in ("a", "b") for p in (markers / f"{n}.pids").read_text().split()]
        tree = psutil.Process(proc.pid).children(recursive=True)  # every dvc and stage command of the run
        assert set(stage_pids) <= {c.pid for c in tree} and all(_alive(c.pid) for c in tree)
        t_sig = time.monotonic()
        proc.send_signal(sig)
        rc = proc.wait(timeout=30)
        waited = time.monotonic() - t_sig
        out = log.read_text()
        print(out)
        assert rc == 128 + sig, out
        assert waited < (15 if not stubborn else 25), out
        if stubborn:
            assert waited >= 2 and "kill   slow_a" in out  # the grace ran out: SIGKILL to the groups
        assert f"interrupted by {signal.Signals(sig).name}" in out and "slow_a" in out and "sub/dvc.yaml:slow_b" in out
        assert not [p for p in stage_pids if _alive(p)], f"stage processes left alive:\n{out}"
        assert not [c.pid for c in tree if _alive(c.pid)], f"processes left alive:\n{out}"
    finally:  # whatever failed, leave nothing of this run behind
        proc.kill()
        proc.wait()
        for p in tree:
            with contextlib.suppress(psutil.Error):
                p.kill()  # psutil checks that the pid is still this process
    # nothing of the interrupted stages is committed: no dvc.lock entry, no cached output
    assert not _lock_stages(repo) & {"slow_a", "slow_b", "join"}
    for name in ("a.txt", "b.txt"):
        assert not (repo / name).exists() or (repo / name).read_text() == "partial\n"
    md5 = hashlib.md5(b"partial\n").hexdigest()
    assert not (repo / ".dvc" / "cache" / "files" / "md5" / md5[:2] / md5[2:]).exists()
    # no rwlock entry survives, even of a dvc killed by SIGTERM/SIGKILL (it cannot clean up after itself)
    rwlock = repo / ".dvc" / "tmp" / "rwlock"
    if rwlock.exists():
        assert not any(json.loads(rwlock.read_text()).values()), rwlock.read_text()

    # the rerun picks up the interrupted stages and what follows them, and leaves the pipeline up to date
    env = {**env, "REPRO_TEST_SLEEP": "0"}
    env.pop("REPRO_TEST_STUBBORN", None)
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "repro.py"), "--jobs", "2"], cwd=repo, env=env,
                         capture_output=True, text=True, timeout=90)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "3 stages" in res.stdout
    logs = "".join(f.read_text() for f in (repo / ".dvc" / "tmp" / "repro-logs").glob("*.log"))
    assert "Running stage 'sub/dvc.yaml:slow_b'" in logs and "Auto removed" not in logs  # no stale rwlock entry
    assert (repo / "ab.txt").read_text() == "partial\ndone\n" * 2
    assert _lock_stages(repo) == {"slow_a", "slow_b", "join"}
    status = subprocess.run([DVC, "status", "--json"], cwd=repo, env=env, capture_output=True, text=True,
                            check=True)
    assert json.loads(status.stdout) == {}
    print(f"{sig.name}{' (ignored)' if stubborn else ''}: exit {rc} {waited:.1f} s after the signal; "
          f"whole test {time.monotonic() - t0:.1f} s")
