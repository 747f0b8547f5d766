"""``dvc repro`` with independent stages running side by side.

DVC runs one stage at a time. Its documented way to parallelise is to start several ``dvc repro`` processes on
independent branches of the DAG; the repository lock is released while a stage's command runs, and
``dvc --wait-for-lock`` makes each process wait for it instead of failing. This module does that
scheduling: it reads the DAG from ``dvc dag --dot``, and starts ``dvc --wait-for-lock repro --single-item STAGE``
for each stage once every stage it depends on has finished, at most ``jobs`` at a time. Only the stages
``dvc status`` reports as changed, and those downstream of them, are visited (nothing changed: one ``dvc status``
call). Each stage still goes
through DVC, so unchanged stages are skipped, outputs are cached and ``dvc.lock`` is written as by a plain
``dvc repro``; afterwards ``dvc status`` is clean.

Why it pays on the toy profile: a thread count changes float results in their last bits, so every stage runs
the same fixed number of torch threads wherever it runs (``VLCOMP_THREADS``, default 1: :mod:`vlcomp.determinism`),
under ``make repro`` as under a plain ``dvc repro``. The speed comes from here instead: independent stages side by
side, one per core (measured on the 2-core machine: one CLIP-FT fine-tune runs 1.55x faster on two threads than on
one, but two one-thread fine-tunes side by side still beat that by 1.17-1.32x, README "Speed").
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .determinism import thread_count

_NODE = re.compile(r'^\s*"([^"]+)";\s*$')
_EDGE = re.compile(r'^\s*"([^"]+)"\s*->\s*"([^"]+)";\s*$')


def parse_dot(text: str) -> dict[str, set[str]]:
    """``dvc dag --dot`` -> {stage: the stages it depends on}. DVC draws edges from a dependency to its user."""
    upstream: dict[str, set[str]] = {}
    for line in text.splitlines():
        if m := _EDGE.match(line):
            src, dst = m.groups()
            upstream.setdefault(src, set())
            upstream.setdefault(dst, set()).add(src)
        elif m := _NODE.match(line):
            upstream.setdefault(m.group(1), set())
    if not upstream:
        raise ValueError(f"no stages found in the `dvc dag --dot` output:\n{text[:500]}")
    return upstream


def restrict(upstream: dict[str, set[str]], targets: Iterable[str]) -> dict[str, set[str]]:
    """The sub-DAG of ``targets`` and everything they depend on (what ``dvc repro TARGET`` would consider)."""
    keep: set[str] = set()
    todo = list(targets)
    for t in todo:
        if t not in upstream:
            raise ValueError(f"unknown stage {t!r}; stages: {', '.join(sorted(upstream))}")
    while todo:
        s = todo.pop()
        if s not in keep:
            keep.add(s)
            todo.extend(upstream[s])
    return {s: upstream[s] & keep for s in upstream if s in keep}


def stale(upstream: dict[str, set[str]], changed: Iterable[str]) -> set[str]:
    """The stages a repro must visit: the changed ones and everything downstream of them (a stage whose inputs
    are rebuilt may change even if ``dvc status`` calls it up to date now)."""
    down: dict[str, set[str]] = {s: set() for s in upstream}
    for s, ups in upstream.items():
        for u in ups:
            down[u].add(s)
    out: set[str] = set()
    todo = [c for c in changed if c in upstream]
    while todo:
        s = todo.pop()
        if s not in out:
            out.add(s)
            todo.extend(down[s])
    return out


def dvc_changed(cwd: Path, dvc: str = "dvc", env: dict[str, str] | None = None) -> set[str]:
    """Stages ``dvc status`` reports as changed (one call, about 2 s)."""
    import json

    res = subprocess.run([dvc, "status", "--json"], cwd=cwd, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise RuntimeError(f"`dvc status --json` failed in {cwd}:\n{res.stderr[-2000:]}")
    return set(json.loads(res.stdout or "{}"))


def _descendants(upstream: dict[str, set[str]]) -> dict[str, set[str]]:
    """Every stage's transitive dependants."""
    down: dict[str, set[str]] = {s: set() for s in upstream}
    for s, ups in upstream.items():
        for u in ups:
            down[u].add(s)
    memo: dict[str, set[str]] = {}

    def reach(s: str) -> set[str]:
        if s not in memo:
            out: set[str] = set()
            for d in down[s]:
                out |= {d} | reach(d)
            memo[s] = out
        return memo[s]

    return {s: reach(s) for s in upstream}


def _n_descendants(upstream: dict[str, set[str]]) -> dict[str, int]:
    return {s: len(d) for s, d in _descendants(upstream).items()}


def critical_paths(upstream: dict[str, set[str]], cost: dict[str, float] | None = None,
                   jobs: int = 1) -> dict[str, float]:
    """For every stage, a lower bound on the seconds from its start to the end of the DAG: its own cost plus the
    larger of the longest chain of costs among its dependants and the sum of all its descendants' costs shared
    over ``jobs`` workers (a stage that gates many others - the benchmarks before nine evaluations - must start
    early even when no single chain through it is long). A stage with no known cost counts the median known cost
    (1 when none is known); with no costs and one job this is the chain's length in stages."""
    if jobs < 1:
        raise ValueError(f"jobs={jobs}: must be >= 1")
    known = sorted(v for v in (cost or {}).values() if v > 0)
    fallback = known[len(known) // 2] if known else 1.0
    own = {s: v if (v := (cost or {}).get(s, fallback)) > 0 else fallback for s in upstream}
    below = _descendants(upstream)
    chain: dict[str, float] = {}

    def longest(s: str) -> float:  # own cost + the longest chain among the direct dependants
        if s not in chain:
            chain[s] = own[s] + max((longest(d) for d in below[s] if s in upstream[d]), default=0.0)
        return chain[s]

    if jobs == 1:
        return {s: longest(s) for s in upstream}
    return {s: own[s] + max(longest(s) - own[s], sum(own[d] for d in below[s]) / jobs) for s in upstream}


def last_durations(runs_dir: str | Path) -> dict[str, float]:
    """Seconds each stage took in its last run (``runs/<stage>.json``, written by every stage; a file no stage
    depends on). Only the schedule reads them: which stage starts first, never what a stage computes."""
    import json

    out: dict[str, float] = {}
    for f in sorted(Path(runs_dir).glob("*.json")):
        try:
            rec = json.loads(f.read_text())
            if isinstance(rec, dict) and isinstance(rec.get("stage"), str) and float(rec.get("seconds", 0)) > 0:
                out[rec["stage"]] = float(rec["seconds"])
        except (OSError, ValueError, TypeError):
            continue  # a run record is a hint for the order, never required
    return out


@dataclass
class StageResult:
    stage: str
    returncode: int
    seconds: float
    log: Path | None = None


@dataclass
class Schedule:
    """Run order bookkeeping; ``runner(stage) -> handle`` starts a stage, ``poll(handle)`` returns None while it
    runs, else its return code. Of the ready stages, the one with the largest lower bound on the time left to the
    end of the DAG starts first (list scheduling on :func:`critical_paths` over ``cost``, the last run's stage
    times: the longest chain through it, or the work it gates shared over the jobs), then the one with the most
    dependants; with no costs, the longest chain of stages."""

    upstream: dict[str, set[str]]
    jobs: int
    cost: dict[str, float] = field(default_factory=dict)
    results: list[StageResult] = field(default_factory=list)
    max_running: int = 0

    def __post_init__(self) -> None:
        if self.jobs < 1:
            raise ValueError(f"jobs={self.jobs}: must be >= 1")
        for s, ups in self.upstream.items():
            missing = ups - set(self.upstream)
            if missing:
                raise ValueError(f"stage {s!r} depends on unknown stages {sorted(missing)}")
        left = {s: set(ups) for s, ups in self.upstream.items()}  # Kahn's algorithm: is it a DAG?
        while ready := [s for s, ups in left.items() if not ups]:
            for s in ready:
                del left[s]
            for ups in left.values():
                ups.difference_update(ready)
        if left:
            raise ValueError(f"the stages {sorted(left)} form a dependency cycle")

    def run(self, start: Callable[[str], object], poll: Callable[[object], int | None],
            on_event: Callable[[str, str, StageResult | None], None] | None = None, tick: float = 0.2) -> bool:
        """Run every stage; after a failure start nothing new, let running stages finish, return False."""
        n_down = _n_descendants(self.upstream)
        path = critical_paths(self.upstream, self.cost, self.jobs)
        priority = {s: (round(path[s], 3), n_down[s]) for s in self.upstream}
        done: set[str] = set()
        running: dict[str, tuple[object, float]] = {}
        pending = set(self.upstream)
        failed = False
        while pending or running:
            for s, (handle, t0) in list(running.items()):
                rc = poll(handle)
                if rc is None:
                    continue
                del running[s]
                res = StageResult(s, rc, time.monotonic() - t0, getattr(handle, "log", None))
                self.results.append(res)
                if rc == 0:
                    done.add(s)
                else:
                    failed = True
                if on_event:
                    on_event("done" if rc == 0 else "failed", s, res)
            if not failed:
                ready = sorted((s for s in pending if self.upstream[s] <= done),
                               key=lambda s: (-priority[s][0], -priority[s][1], s))
                for s in ready[: self.jobs - len(running)]:
                    pending.discard(s)
                    running[s] = (start(s), time.monotonic())
                    if on_event:
                        on_event("start", s, None)
                self.max_running = max(self.max_running, len(running))
            elif not running:
                break
            if running:
                time.sleep(tick)
        return not failed


class _Proc:
    def __init__(self, cmd: list[str], log: Path, env: dict[str, str], cwd: Path) -> None:
        self.log = log
        self._f = open(log, "w")  # noqa: SIM115 - closed in poll()
        self.proc = subprocess.Popen(cmd, stdout=self._f, stderr=subprocess.STDOUT, env=env, cwd=cwd)

    def poll(self) -> int | None:
        rc = self.proc.poll()
        if rc is not None and not self._f.closed:
            self._f.close()
        return rc


def dvc_dag(cwd: Path, dvc: str = "dvc", env: dict[str, str] | None = None) -> dict[str, set[str]]:
    out = subprocess.run([dvc, "dag", "--dot"], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout
    return parse_dot(out)


def repro(cwd: str | Path = ".", *, jobs: int = 2, targets: list[str] | None = None, dvc: str = "dvc",
          log_dir: str | Path | None = None,
          env: dict[str, str] | None = None) -> list[StageResult]:
    """Reproduce the pipeline in ``cwd`` with up to ``jobs`` stages at once; raises if a stage fails.

    ``env`` (default ``os.environ``) is the environment of every ``dvc`` process."""
    cwd = Path(cwd)
    changed = dvc_changed(cwd, dvc, env)
    if not changed:
        print("parallel repro: every stage is up to date", flush=True)
        return []
    upstream = dvc_dag(cwd, dvc, env)
    if targets:
        upstream = restrict(upstream, targets)
    todo = stale(upstream, changed)
    if not todo:
        print("parallel repro: every stage is up to date", flush=True)
        return []
    # stages outside the stale set are up to date and stay so: drop them (they count as done for the rest)
    upstream = {s: ups & todo for s, ups in upstream.items() if s in todo}
    log_dir = Path(log_dir) if log_dir else cwd / ".dvc" / "tmp" / "repro-logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ if env is None else env)
    threads = thread_count(env)  # the same in every stage, whatever runs beside it (vlcomp.determinism)
    t_start = time.monotonic()

    def start(stage: str) -> _Proc:
        log = log_dir / (stage.replace("@", "_") + ".log")
        return _Proc([dvc, "--wait-for-lock", "repro", "--single-item", stage], log, env, cwd)

    def on_event(kind: str, stage: str, res: StageResult | None) -> None:
        t = time.monotonic() - t_start
        if kind == "start":
            print(f"[{t:7.1f} s] start  {stage}", flush=True)
        else:
            print(f"[{t:7.1f} s] {kind:6s} {stage} ({res.seconds:.1f} s)", flush=True)

    print(f"parallel repro: {len(upstream)} stages, {jobs} at a time, VLCOMP_THREADS={threads}; logs in {log_dir}",
          flush=True)
    from .tracking import RUNS_DIR

    sched = Schedule(upstream, jobs, cost=last_durations(cwd / RUNS_DIR))
    ok = sched.run(start, lambda h: h.poll(), on_event)
    if not ok:
        bad = [r for r in sched.results if r.returncode != 0]
        for r in bad:
            tail = r.log.read_text().splitlines()[-30:] if r.log and r.log.exists() else []
            print(f"\n--- stage {r.stage} failed (exit {r.returncode}); last lines of {r.log}:", file=sys.stderr)
            print("\n".join(tail), file=sys.stderr)
        raise SystemExit(f"parallel repro: stage(s) {', '.join(r.stage for r in bad)} failed; "
                         "stages that finished are committed to dvc.lock, rerun to continue")
    print(f"parallel repro: done in {time.monotonic() - t_start:.1f} s", flush=True)
    return sched.results
