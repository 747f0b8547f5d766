"""``dvc repro`` with independent stages running side by side, interruptible with Ctrl-C or SIGTERM.

DVC runs one stage at a time. Its documented way to parallelise is to start several ``dvc repro`` processes on
independent branches of the DAG; the repository lock is released while a stage's command runs, and
``dvc --wait-for-lock`` makes each process wait for it instead of failing. This module does that scheduling.

The DAG comes from DVC's own Python API (``Repo(root).index.graph``, whose edges go from a stage to the stages it
depends on), read in the repository's root. Every stage is named by its DVC address everywhere here (targets,
``dvc status``, the ``dvc repro`` command line, the messages): its bare name for a stage of the root ``dvc.yaml``
(``finetune@negclip-b0s0``), ``path/to/dvc.yaml:name`` for a stage of another ``dvc.yaml``
(``pipelines/aro/dvc.yaml:finetune@negclip-b0s0``), so the pipeline may be split over several files. A target is
such an address, a bare name that only one other file defines, or a ``dvc.yaml`` path (all its stages, as in
``dvc repro``); anything else is an error naming it.

The scheduler starts ``dvc --wait-for-lock repro --single-item STAGE`` for each stage once every stage it depends
on has finished, at most ``jobs`` at a time, longest remaining work first (:class:`Schedule`). Only the stages
``dvc status`` reports as changed, and those downstream of them, are visited (nothing changed and no targets: one
``dvc status`` call). Each stage still goes through DVC, so unchanged stages are skipped, outputs are cached and
``dvc.lock`` is written as by a plain ``dvc repro``; afterwards ``dvc status`` is clean. A failed stage stops the
run: nothing new starts, running stages finish, and the scheduler exits with the failed stages' log tails.

Interrupting: each ``dvc`` child runs in a process group of its own, so a Ctrl-C in the terminal reaches the
scheduler only. On SIGINT or SIGTERM the scheduler starts nothing new and forwards that signal to each running
child's whole group (``dvc`` and the stage command under it); a second signal, or 60 s without the group gone,
kills the groups with SIGKILL. Once they have all exited it closes the logs, names the interrupted stages,
restores the previous signal handlers and exits with 128 + the signal number (130, 143: :class:`Interrupted`).
Stages that finished before are committed; an interrupted one is not: under SIGINT, DVC ignores the signal while
the command runs, the command dies, and DVC fails the stage without writing ``dvc.lock``; under SIGTERM or SIGKILL
``dvc`` dies at once, before any commit. The next run reruns the interrupted stage (its outputs no longer match,
or it has no ``dvc.lock`` entry) and everything downstream. What an interrupt leaves in ``.dvc/tmp``: ``lock``
(the repository lock) is an ``fcntl`` lock, released by the kernel when its holder dies, so the file left behind
blocks nobody; ``rwlock`` (DVC's record of which paths each running ``dvc`` reads and writes) keeps the entries of
a ``dvc`` killed by a signal. DVC drops entries of dead processes itself, with a warning, but one whose pid has
been reused would block, so the scheduler removes the entries of the ``dvc`` children it saw die of a signal.

Why it pays on the toy profile: a thread count changes float results in their last bits, so every stage runs
the same fixed number of torch threads wherever it runs (``VLCOMP_THREADS``, default 1: :mod:`vlcomp.determinism`),
under ``make repro`` as under a plain ``dvc repro``. The speed comes from here instead: independent stages side by
side, one per core (measured on the 2-core machine: one CLIP-FT fine-tune runs 1.55x faster on two threads than on
one, but two one-thread fine-tunes side by side still beat that by 1.17-1.32x, docs/performance.md "Threads and scheduling").
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .determinism import thread_count

#: the file a DVC pipeline is written in; a stage of the root one is addressed by its bare name
PROJECT_FILE = "dvc.yaml"
#: seconds the interrupted stages get to exit after the forwarded signal before their groups get SIGKILL
GRACE_SECONDS = 60.0


class Interrupted(SystemExit):
    """The run was stopped by a signal: exit status 128 + its number (130 for SIGINT, 143 for SIGTERM);
    ``stages`` were running and did not finish."""

    def __init__(self, signum: int, stages: list[str]) -> None:
        super().__init__(128 + signum)
        self.signum, self.stages = signum, stages


class TargetError(ValueError):
    """A target that names no stage, or more than one."""


def stage_file(address: str) -> str:
    """The file, relative to the repository root, that defines the stage at ``address``."""
    path, sep, _ = address.partition(f"{PROJECT_FILE}:")
    if sep:
        return path + PROJECT_FILE
    return address if address.endswith(".dvc") else PROJECT_FILE


def stage_name(address: str) -> str:
    """The stage's name inside its file (``finetune@negclip-b0s0`` for ``pipelines/aro/dvc.yaml:finetune@...``)."""
    _, sep, name = address.partition(f"{PROJECT_FILE}:")
    return name if sep else address


def normalise_address(key: str) -> str:
    """A stage address as DVC prints it relative to the repository root, in the form :func:`dvc_dag` uses."""
    while key.startswith("./"):
        key = key[2:]
    return key.removeprefix(f"{PROJECT_FILE}:")


def resolve_targets(upstream: dict[str, set[str]], targets: Iterable[str]) -> list[str]:
    """The addresses ``targets`` stand for: a full address (a bare name is one of the root ``dvc.yaml``, as for
    DVC), else a name only one other ``dvc.yaml`` defines, or a ``dvc.yaml`` path (all its stages). Raises
    :class:`TargetError` naming a target that is unknown or ambiguous."""
    out: list[str] = []
    for t in targets:
        a = normalise_address(t)
        if a in upstream:
            out.append(a)
            continue
        if a.endswith(PROJECT_FILE) and (in_file := sorted(s for s in upstream if stage_file(s) == a)):
            out.extend(in_file)
            continue
        named = sorted(s for s in upstream if stage_name(s) == a)
        if len(named) == 1:
            out.append(named[0])
        elif named:
            raise TargetError(f"stage name {t!r} is ambiguous, give one of: {', '.join(named)}")
        else:
            raise TargetError(f"unknown stage {t!r}; stages: {', '.join(sorted(upstream))}")
    return out


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
    #: the stages that were running when the run was stopped and did not succeed, in the order they ended
    interrupted: list[str] = field(default_factory=list)
    stopped: bool = False

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
            on_event: Callable[[str, str, StageResult | None], None] | None = None, tick: float = 0.2, *,
            stop: Callable[[], bool] | None = None, interrupt: Callable[[object, bool], None] | None = None,
            grace: float = GRACE_SECONDS) -> bool:
        """Run every stage; True when all succeeded. After a failure start nothing new, let the running stages
        finish, return False.

        ``stop()`` is asked before each start and every ``tick`` s; once it is true, nothing new starts,
        ``interrupt(handle, False)`` is called once for each running stage and ``interrupt(handle, True)`` for
        each one still running ``grace`` s later; the run waits for them all, lists those that did not succeed in
        ``interrupted`` (one that still succeeded counts as done), sets ``stopped`` and returns False. Events:
        ``start``, ``done``, ``failed``, ``interrupt`` and ``kill`` (sent), ``interrupted`` (ended)."""
        n_down = _n_descendants(self.upstream)
        path = critical_paths(self.upstream, self.cost, self.jobs)
        priority = {s: (round(path[s], 3), n_down[s]) for s in self.upstream}
        done: set[str] = set()
        running: dict[str, tuple[object, float]] = {}
        pending = set(self.upstream)
        failed = False
        stopped_at: float | None = None
        forced = False

        def signal_running(force: bool) -> None:
            for s, (handle, _) in running.items():
                if interrupt:
                    interrupt(handle, force)
                if on_event:
                    on_event("kill" if force else "interrupt", s, None)

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
                    kind = "done"
                elif stopped_at is not None:
                    self.interrupted.append(s)
                    kind = "interrupted"
                else:
                    failed = True
                    kind = "failed"
                if on_event:
                    on_event(kind, s, res)
            if stopped_at is None and stop is not None and stop():
                stopped_at = time.monotonic()
                signal_running(False)
            if stopped_at is not None:
                if not running:
                    break
                if not forced and time.monotonic() - stopped_at >= grace:
                    forced = True
                    signal_running(True)
            elif not failed:
                ready = sorted((s for s in pending if self.upstream[s] <= done),
                               key=lambda s: (-priority[s][0], -priority[s][1], s))
                for s in ready[: self.jobs - len(running)]:
                    if stop is not None and stop():
                        break  # handled on the next pass, with this pass's starts among the running
                    pending.discard(s)
                    running[s] = (start(s), time.monotonic())
                    if on_event:
                        on_event("start", s, None)
                self.max_running = max(self.max_running, len(running))
            elif not running:
                break
            if running:
                time.sleep(tick)
        self.stopped = stopped_at is not None
        return not failed and not self.stopped


class _Proc:
    """One ``dvc`` child, leader of a process group of its own (a Ctrl-C in the terminal reaches only the
    scheduler, which forwards it to the whole group: ``dvc`` and the stage command under it)."""

    def __init__(self, cmd: list[str], log: Path, env: dict[str, str], cwd: Path) -> None:
        self.log = log
        self.stopping = False  # once signalled, it has ended only when its whole group has
        self.returncode: int | None = None
        self._f = open(log, "w")  # noqa: SIM115 - closed in poll()
        self.proc = subprocess.Popen(cmd, stdout=self._f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     env=env, cwd=cwd, start_new_session=True)

    def signal(self, sig: int) -> None:
        """``sig`` to the whole group, unless it has ended (its id may then be another group's)."""
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, sig)

    def _group_alive(self) -> bool:
        """Whether a member of the group still runs (a zombie does not: it waits for a parent to reap it)."""
        try:
            os.killpg(self.proc.pid, 0)  # a group's id stays taken while any member, zombies included, exists
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        import psutil  # a dependency of DVC

        for p in psutil.process_iter(["status"]):
            with contextlib.suppress(OSError, psutil.Error):
                if p.info["status"] != psutil.STATUS_ZOMBIE and os.getpgid(p.pid) == self.proc.pid:
                    return True
        return False

    def poll(self) -> int | None:
        if self.returncode is not None:
            return self.returncode
        rc = self.proc.poll()
        if rc is None or (self.stopping and self._group_alive()):
            return None
        self._f.close()
        self.returncode = rc
        return rc

    def kill(self) -> None:
        """SIGKILL to the group and wait for ``dvc`` (after an error in the scheduler itself)."""
        self.stopping = True
        self.signal(signal.SIGKILL)
        self.proc.wait()
        deadline = time.monotonic() + 5
        while self.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)


def _log_name(stage: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in stage) + ".log"


def repo_root(cwd: str | Path = ".") -> Path:
    """The root of the DVC repository ``cwd`` is in (DVC's own search: ``cwd`` or a parent with ``.dvc``)."""
    from dvc.repo import Repo

    return Path(Repo.find_root(os.fspath(Path(cwd).resolve())))


def dvc_dag(cwd: str | Path = ".") -> dict[str, set[str]]:
    """{stage address: the addresses of the stages it depends on}, from DVC's index of every ``dvc.yaml`` (and
    ``.dvc`` file) in the repository ``cwd`` is in. ``Repo.index.graph`` has an edge from each stage to each stage
    it depends on; ``Stage.addressing`` is relative to the process's working directory, so it is read from the
    root, where the ``dvc`` children run."""
    from dvc.repo import Repo

    root = repo_root(cwd)
    with contextlib.chdir(root), Repo(os.fspath(root)) as repo:
        graph = repo.index.graph
        upstream = {s.addressing: {d.addressing for d in graph.successors(s)} for s in graph}
    if not upstream:
        raise ValueError(f"no stages in the DVC repository {root}")
    return upstream


def dvc_changed(cwd: Path, dvc: str = "dvc", env: dict[str, str] | None = None) -> set[str]:
    """Stages ``dvc status`` (run in the repository root ``cwd``) reports as changed, as addresses (one call,
    about 2 s). DVC keys them as :func:`dvc_dag` does: the bare name for the root ``dvc.yaml``, else
    ``path/dvc.yaml:name``."""
    res = subprocess.run([dvc, "status", "--json"], cwd=cwd, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise RuntimeError(f"`dvc status --json` failed in {cwd}:\n{res.stderr[-2000:]}")
    return {normalise_address(k) for k in json.loads(res.stdout or "{}")}


def release_rwlock(root: str | Path, pids: Iterable[int]) -> list[str]:
    """Drop the entries of the (dead) processes ``pids`` from DVC's ``.dvc/tmp/rwlock``, under DVC's own guard
    of that file; returns the paths they held. A ``dvc`` killed by a signal never removes its entries; DVC drops
    those of a pid that no longer exists by itself, but a reused pid would block the paths."""
    pids = set(pids)
    if not pids or not (Path(root) / ".dvc" / "tmp" / "rwlock").exists():
        return []
    from dvc.repo import Repo
    from dvc.rwlock import _edit_rwlock  # what `dvc` itself edits the file with

    freed: list[str] = []
    with Repo(os.fspath(root)) as repo, _edit_rwlock(repo.tmp_dir, repo.fs,
                                                     repo.config["core"].get("hardlink_lock", False)) as lock:
        for path, info in list(lock["write"].items()):
            if info["pid"] in pids:
                del lock["write"][path]
                freed.append(path)
        for path, infos in list(lock["read"].items()):
            keep = [i for i in infos if i["pid"] not in pids]
            if len(keep) < len(infos):
                freed.append(path)
                lock["read"][path] = keep
            if not keep:
                del lock["read"][path]
    return sorted(set(freed))


def _install_handlers(handler: Callable[[int, object], None]) -> dict[int, object]:
    """``handler`` for SIGINT and SIGTERM; the previous handlers (none outside the main thread, where Python
    cannot set them: the run is then not interruptible by the scheduler)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}


def _restore_handlers(previous: dict[int, object]) -> None:
    for sig, h in previous.items():
        signal.signal(sig, h if h is not None else signal.SIG_DFL)


def repro(cwd: str | Path = ".", *, jobs: int = 2, targets: list[str] | None = None, dvc: str = "dvc",
          log_dir: str | Path | None = None, env: dict[str, str] | None = None,
          grace: float = GRACE_SECONDS) -> list[StageResult]:
    """Reproduce the pipeline of the DVC repository ``cwd`` is in, up to ``jobs`` stages at once; raises
    SystemExit if a stage fails and :class:`Interrupted` (exit status 130/143) on SIGINT/SIGTERM.

    ``targets``: stage addresses, bare names or ``dvc.yaml`` paths (:func:`resolve_targets`); only they and
    what they depend on are reproduced (default: the whole pipeline). ``env`` (default ``os.environ``) is the
    environment of every ``dvc`` process; ``grace``: seconds interrupted stages get before SIGKILL."""
    root = repo_root(cwd)
    changed = dvc_changed(root, dvc, env)
    if not changed and not targets:
        print("parallel repro: every stage is up to date", flush=True)
        return []
    upstream = dvc_dag(root)
    if targets:
        upstream = restrict(upstream, resolve_targets(upstream, targets))
    todo = stale(upstream, changed)
    if not todo:
        print("parallel repro: every stage is up to date", flush=True)
        return []
    # stages outside the stale set are up to date and stay so: drop them (they count as done for the rest)
    upstream = {s: ups & todo for s, ups in upstream.items() if s in todo}
    log_dir = Path(log_dir) if log_dir else root / ".dvc" / "tmp" / "repro-logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ if env is None else env)
    threads = thread_count(env)  # the same in every stage, whatever runs beside it (vlcomp.determinism)
    from .tracking import RUNS_DIR

    durations = last_durations(root / RUNS_DIR)  # run records name a stage by its name in its dvc.yaml
    cost = {s: durations[k] for s in upstream for k in (stage_name(s), s) if k in durations}
    sched = Schedule(upstream, jobs, cost=cost)
    procs: list[_Proc] = []
    received: list[int] = []
    t_start = time.monotonic()

    def start(stage: str) -> _Proc:
        procs.append(_Proc([dvc, "--wait-for-lock", "repro", "--single-item", stage], log_dir / _log_name(stage),
                           env, root))
        return procs[-1]

    def interrupt(p: _Proc, force: bool) -> None:
        p.stopping = True
        p.signal(signal.SIGKILL if force else received[0])

    def on_signal(signum: int, frame: object) -> None:  # no I/O here: the main loop reports
        received.append(signum)
        if len(received) > 1:  # a second signal: stop waiting
            for p in procs:
                interrupt(p, True)

    def on_event(kind: str, stage: str, res: StageResult | None) -> None:
        t = time.monotonic() - t_start
        if kind == "start":
            print(f"[{t:7.1f} s] start  {stage}", flush=True)
        elif kind == "interrupt":
            print(f"[{t:7.1f} s] signal {stage} ({signal.Signals(received[0]).name} to its dvc process group)",
                  flush=True)
        elif kind == "kill":
            print(f"[{t:7.1f} s] kill   {stage} (SIGKILL to its dvc process group)", flush=True)
        else:
            print(f"[{t:7.1f} s] {kind:6s} {stage} ({res.seconds:.1f} s)", flush=True)

    print(f"parallel repro: {len(upstream)} stages, {jobs} at a time, VLCOMP_THREADS={threads}; logs in {log_dir}",
          flush=True)
    previous = _install_handlers(on_signal)
    try:
        ok = sched.run(start, _Proc.poll, on_event, stop=lambda: bool(received), interrupt=interrupt, grace=grace)
        killed = [p.proc.pid for p in procs if p.returncode is not None and p.returncode < 0]
        try:  # a dvc that died of a signal left its rwlock entries
            if freed := release_rwlock(root, killed):
                print("parallel repro: released the DVC rwlock entries of the killed dvc processes on "
                      f"{', '.join(os.path.relpath(f, root) for f in freed)}", flush=True)
        except Exception as e:  # noqa: BLE001 - DVC drops entries of dead processes itself
            print(f"parallel repro: could not clean .dvc/tmp/rwlock ({e}); DVC drops stale entries itself",
                  file=sys.stderr)
        bad = [r for r in sched.results if r.returncode != 0 and r.stage not in sched.interrupted]
        for r in bad:
            tail = r.log.read_text().splitlines()[-30:] if r.log and r.log.exists() else []
            print(f"\n--- stage {r.stage} failed (exit {r.returncode}); last lines of {r.log}:", file=sys.stderr)
            print("\n".join(tail), file=sys.stderr)
        if received:
            started = {r.stage for r in sched.results}
            print(f"\nparallel repro: interrupted by {signal.Signals(received[0]).name} after "
                  f"{time.monotonic() - t_start:.1f} s; stopped while running (not committed to dvc.lock): "
                  f"{', '.join(sched.interrupted) or 'none'}; {len(set(upstream) - started)} not started. "
                  "Rerun to continue from there.", file=sys.stderr, flush=True)
    finally:
        for p in procs:  # only after an error in the scheduler itself: leave no stage behind
            if p.returncode is None:
                p.kill()
        _restore_handlers(previous)
    if received:
        raise Interrupted(received[0], list(sched.interrupted))
    if not ok:
        raise SystemExit(f"parallel repro: stage(s) {', '.join(r.stage for r in bad)} failed; "
                         "stages that finished are committed to dvc.lock, rerun to continue")
    print(f"parallel repro: done in {time.monotonic() - t_start:.1f} s", flush=True)
    return sched.results
