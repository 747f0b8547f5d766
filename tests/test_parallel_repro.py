"""The parallel `dvc repro` scheduler: DAG parsing, dependency order, the job limit, stopping on failure."""

import pytest

from vlcomp.parallel_repro import (
    Schedule,
    _n_descendants,
    critical_paths,
    last_durations,
    parse_dot,
    restrict,
    stale,
)

DOT = """strict digraph {
"world";
"pretrain";
"bench";
"ft@a";
"ft@b";
"report";
"world" -> "pretrain";
"world" -> "bench";
"pretrain" -> "ft@a";
"pretrain" -> "ft@b";
"ft@a" -> "report";
"ft@b" -> "report";
"bench" -> "report";
}
"""


def test_parse_dot_edges_point_from_dependency_to_user():
    up = parse_dot(DOT)
    assert up == {"world": set(), "pretrain": {"world"}, "bench": {"world"}, "ft@a": {"pretrain"},
                  "ft@b": {"pretrain"}, "report": {"ft@a", "ft@b", "bench"}}


def test_parse_dot_rejects_empty():
    with pytest.raises(ValueError, match="no stages"):
        parse_dot("strict digraph {\n}\n")


def test_restrict_keeps_ancestors_only():
    up = restrict(parse_dot(DOT), ["ft@a"])
    assert up == {"world": set(), "pretrain": {"world"}, "ft@a": {"pretrain"}}
    with pytest.raises(ValueError, match="unknown stage 'nope'"):
        restrict(parse_dot(DOT), ["nope"])


def test_descendant_counts():
    assert _n_descendants(parse_dot(DOT)) == {"world": 5, "pretrain": 3, "bench": 1, "ft@a": 1, "ft@b": 1,
                                             "report": 0}


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
        return 1 if h["stage"] in self.fail else 0


def test_schedule_respects_dependencies_and_job_limit():
    up = parse_dot(DOT)
    r = FakeRunner({"pretrain": 3, "bench": 1, "ft@a": 2, "ft@b": 2})
    s = Schedule(up, jobs=2)
    assert s.run(r.start, r.poll, tick=0)
    assert r.peak == 2 and s.max_running == 2
    for stage, ups in up.items():  # every stage starts after all its dependencies finished
        for u in ups:
            assert r.finished.index(u) < r.started.index(stage)
    # longest chain first: pretrain (3 stages to the end) before bench (2) once world is done
    assert r.started[:3] == ["world", "pretrain", "bench"]
    assert {x.stage for x in s.results} == set(up)


def test_schedule_one_job_is_sequential():
    r = FakeRunner({})
    assert Schedule(parse_dot(DOT), jobs=1).run(r.start, r.poll, tick=0)
    assert r.peak == 1 and len(r.started) == 6


def test_schedule_stops_starting_after_a_failure_and_lets_running_finish():
    r = FakeRunner({"pretrain": 1, "bench": 3}, fail={"pretrain"})
    s = Schedule(parse_dot(DOT), jobs=2)
    assert not s.run(r.start, r.poll, tick=0)
    assert "bench" in r.finished  # the running stage finished
    assert not {"ft@a", "ft@b", "report"} & set(r.started)
    assert [x.stage for x in s.results if x.returncode] == ["pretrain"]


def test_schedule_rejects_bad_input():
    with pytest.raises(ValueError, match="jobs=0"):
        Schedule({"a": set()}, jobs=0)
    with pytest.raises(ValueError, match="unknown stages"):
        Schedule({"a": {"zz"}}, jobs=1)
    with pytest.raises(ValueError, match=r"\['a', 'b'\] form a dependency cycle"):
        Schedule({"a": {"b"}, "b": {"a"}, "c": set()}, jobs=1)


def test_stale_is_changed_plus_downstream():
    up = parse_dot(DOT)
    assert stale(up, []) == set()
    assert stale(up, ["ft@a"]) == {"ft@a", "report"}
    assert stale(up, ["pretrain", "bench"]) == {"pretrain", "ft@a", "ft@b", "bench", "report"}
    assert stale(up, ["world"]) == set(up)
    assert stale(up, ["not-in-targets"]) == set()


def test_critical_paths_hand_computed():
    up = parse_dot(DOT)
    cost = {"world": 10, "pretrain": 100, "bench": 300, "ft@a": 50, "ft@b": 80, "report": 5}
    # world: 10 + max(pretrain 100 + max(ft@a 50, ft@b 80) + report 5, bench 300 + report 5) = 10 + 305
    assert critical_paths(up, cost) == {"world": 315, "pretrain": 185, "bench": 305, "ft@a": 55, "ft@b": 85,
                                        "report": 5}
    # no costs: chain length in stages; an unknown stage counts the median known cost (here 50 of 10/50/100)
    assert critical_paths(up) == {"world": 4, "pretrain": 3, "bench": 2, "ft@a": 2, "ft@b": 2, "report": 1}
    assert critical_paths(up, {"world": 10, "ft@a": 50, "ft@b": 100})["pretrain"] == 50 + 100 + 50


def test_schedule_starts_the_longest_chain_first():
    up = parse_dot(DOT)
    cost = {"world": 1, "pretrain": 1, "bench": 9, "ft@a": 2, "ft@b": 2, "report": 1}
    r = FakeRunner(cost)
    s = Schedule(up, jobs=1, cost=cost)
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
