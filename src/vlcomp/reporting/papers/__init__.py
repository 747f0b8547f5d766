"""Papers as a registry: what each paper's report covers, keyed by the names of ``papers`` in params.yaml.

A :class:`Paper` gives the benchmarks its tables read (names of ``vlcomp.benchmarks``), the catalog artifacts its
report renders (the IDs of the catalog's artifact list, ``../shared/papers/<catalog>``), its claims (a function of
the collected metrics -> claims-ledger entries) and the papers whose rows it also shows. Which methods belong to a
paper is said once, in params (``methods.<m>.paper``). ``papers`` in params lists the papers whose report the
pipeline builds: each has ``report@<paper>`` in ``pipelines/<paper>/dvc.yaml``, and the report index lists them.
Adding a paper is a module (or package, as :mod:`.aro`) here that calls ``PAPERS.add`` and holds the paper's tables,
figures and claims, found by name (:class:`vlcomp.registry.Registry`), its notebook ``notebooks/<paper>.py`` (one
template for both profiles, :mod:`vlcomp.reporting.notebook`), and a ``papers`` entry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ...registry import Registry


@dataclass(frozen=True)
class Paper:
    name: str
    title: str
    catalog: str  # file under ../shared/papers/
    benchmarks: tuple[str, ...]
    artifacts: tuple[str, ...]  # catalog IDs the report renders
    claims: Callable[..., list] | None = None  # (reporting.ledger.Evidence, **context) -> list of reporting.ledger.Claim
    cross_papers: tuple[str, ...] = ()  # papers whose methods' rows this report also shows (vlcomp.reporting.scope)
    cross_methods: tuple[str, ...] = ()  # single methods of other papers whose rows it also shows
    #: files under calibration/ the report reads besides its own ``<paper>_*`` ones (probes of the world and of the
    #: base models); its stage depends on them (vlcomp.dag.report_inputs)
    calibration: tuple[str, ...] = ()


PAPERS: Registry[Paper] = Registry("paper", package=__name__)


def papers_of(params: Mapping[str, Any], only: str | None = None) -> list[Paper]:
    """The papers ``params['papers']`` names, checked: registered, each with at least one method in ``methods``
    (``methods.<m>.paper``: the one place that says which methods belong to which paper; a report shows them in
    params order, :func:`vlcomp.reporting.collect.methods_of`). A benchmark of a paper that ``evaluate.benchmarks``
    lacks (the real profile has no zero-shot files, for one) is no error: its rows show as not evaluated
    (:func:`unevaluated`)."""
    names = params.get("papers") or []
    if not isinstance(names, list) or not names:
        raise ValueError("params: papers must list at least one paper (known: " + ", ".join(PAPERS.names()) + ")")
    if only is not None:  # one paper's report: only its module is loaded
        if only not in names:
            raise ValueError(f"paper {only!r} is not in params' papers ({', '.join(names)})")
        names = [only]
    out = []
    for name in names:
        paper = PAPERS.get(name)
        if not any((spec or {}).get("paper") == name for spec in (params.get("methods") or {}).values()):
            raise ValueError(f"params: papers lists {name!r}, but no method of params has paper: {name} "
                             f"(methods.<m>.paper)")
        out.append(paper)
    return out


def paper_scope(params: Mapping[str, Any], name: str):
    """What paper ``name``'s report reads (:func:`vlcomp.reporting.scope.scope` with its cross-evaluated papers)."""
    from ..scope import scope

    paper = PAPERS.get(name)
    return scope(params, name, paper.cross_papers, paper.cross_methods, paper.benchmarks)


def unevaluated(params: Mapping[str, Any], paper: Paper) -> list[str]:
    """The paper's benchmarks that ``evaluate.benchmarks`` does not score."""
    evaluated = set((params.get("evaluate") or {}).get("benchmarks") or [])
    return [b for b in paper.benchmarks if b not in evaluated]

