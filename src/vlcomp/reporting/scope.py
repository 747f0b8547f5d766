"""What a paper's report reads, in one place: the methods it shows, their runs and the files those runs wrote.

A paper's report shows the methods whose ``methods.<m>.paper`` is that paper, then those of the papers it
cross-evaluates (:attr:`vlcomp.reporting.papers.Paper.cross_papers`: TSVLC's report shows ARO's CLIP-FT and NegCLIP
rows) and the single methods of other papers it shows (``Paper.cross_methods``: Hard Positives shows TSVLC's RB+LLM
and Combined, not its ablations), each over its runs (``variants`` of params), with the base models of their chains
(every default base ``b<k>`` and each other base model a run starts from) and the other base models scored on the
paper's benchmarks. The report stage reads only these, and the pipeline writer
(:mod:`vlcomp.dag`) declares exactly these as the stage's dependencies, so a new paper's runs leave every other
paper's report up to date.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..config import BASE_METHOD, base_model_name


@dataclass(frozen=True)
class Scope:
    paper: str
    methods: tuple[str, ...]  # params order
    variants: tuple[str, ...]  # runs of ``methods``, params order
    bases: tuple[str, ...]  # keys of ``bases``: every default chain's base, then the other base models its runs use
    selections: tuple[str, ...]  # ``models/lr/<s>`` the runs take their learning rate from
    mined: tuple[str, ...]  # ``data/mined/<d>``: what the runs train on, and every dataset the paper's methods mine

    @property
    def models(self) -> tuple[str, ...]:
        """The metrics folders (``metrics/<model>``) of the report: base models (the single ``clip`` of a layout
        without ``bases``), then runs."""
        return (*((base_model_name(b) for b in self.bases) if self.bases else (BASE_METHOD,)), *self.variants)


def _section(params: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    return params.get(name) or {}


def scope(params: Mapping[str, Any], paper: str, cross_papers: Sequence[str] = (), cross_methods: Sequence[str] = (),
          benchmarks: Sequence[str] = ()) -> Scope:
    """The scope of ``paper``'s report: its own methods, every method of the papers in ``cross_papers`` and the
    single methods ``cross_methods`` of other papers whose rows it shows; the base models of their chains, and every
    other base model scored on one of the paper's ``benchmarks`` (``base_models.<family>.benchmarks``: none named
    is every benchmark), whose rows a report shows whether or not a run starts from it (Hard Positives' Table 8)."""
    from .collect import methods_of  # the one rule of which methods are a paper's

    own_methods = methods_of(params, paper).order[1:]
    shown = {m for p in cross_papers for m in methods_of(params, p).order[1:]} | set(own_methods)
    shown |= {m for m in cross_methods if m in _section(params, "methods")}
    methods = tuple(m for m in _section(params, "methods") if m in shown)  # params order
    variants = _section(params, "variants")
    if not _section(params, "methods"):  # a bare metrics tree (no methods to attribute runs to): every run
        methods = tuple(dict.fromkeys(spec.get("method") for spec in variants.values()))
    runs = {v: spec for v, spec in variants.items() if spec.get("method") in methods}
    used = {spec.get("base") for spec in runs.values()}
    families = _section(params, "base_models")

    def scored_here(family: str) -> bool:
        named = (families.get(family) or {}).get("benchmarks")
        return bool(benchmarks) and (named is None or bool(set(named) & set(benchmarks)))
    bases = tuple(b for b, spec in _section(params, "bases").items()
                  if not (family := (spec or {}).get("family")) or b in used or scored_here(family))
    selections = tuple(dict.fromkeys([*(s for spec in runs.values() if (s := spec.get("selection"))),
                                      *(s for s, spec in _section(params, "selections").items()
                                        if (spec or {}).get("method") in methods)]))
    mined = [d for spec in runs.values() for d in (spec.get("mined"), spec.get("mined_positives")) if d]
    # and every dataset the paper's own methods' generators mine (its report describes them all, run or not)
    specs = _section(params, "methods")
    own = {g for m in own_methods for g in ((specs[m] or {}).get("generator"), (specs[m] or {}).get("positives_from"))
           if g}
    mined += [d for d, item in _section(params, "mining").items() if (item or {}).get("generator") in own]
    mined = tuple(dict.fromkeys(mined))
    return Scope(paper, methods, tuple(runs), bases, selections, mined)
