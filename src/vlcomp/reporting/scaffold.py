"""One scaffold for every paper's report page: a paper's report module declares its page as data, and the code here
renders it.

A :class:`Report` is the page: its title and intro, the claims ledger (a function of the report context), the
headline part, the sections in reading order, the catalog artifacts that are no table or figure of the page
(:class:`Covered`), the deviations and the provenance. A :class:`Section` has a heading, an intro (Markdown) and
:class:`Part` s; a part names the file it writes (``tables/<name>.{csv,md,tex}`` or ``figures/<name>.{png,pdf}``),
the catalog artifacts it renders, and a function of the report context that builds it:

- a :class:`vlcomp.reporting.render.Table` (numbers for the CSV, text for reading, the legend and notes under it);
- a :class:`vlcomp.reporting.render.Figure` (a Matplotlib figure, its legend and notes);
- a string: Markdown;
- a list of ``(title, Table | Figure | str)``: several blocks under one name (a figure and a lone table are
  ``<name>``; with several tables the i-th is ``<name>_<i>``);
- None: not available yet (its input was not produced); the page shows the part's ``missing`` text instead
  (nothing when it is empty).

The same scaffold renders both profiles' pages: the toy page over the collected metrics and its claims ledger,
and the real profile's page over a :class:`vlcomp.reporting.tree.MetricsTree` (one run per row, so it states no
verdicts: ``ledger`` None and ``no_ledger`` says why; ``runs`` its runs table, the tree's models; the artifacts
it does not render are covered by the toy page, :func:`rendered_elsewhere`).

:class:`Page` renders a report in one order for every paper: what a reader came for first (**at a glance**: the
claims' verdicts, the artifact checklist, the headline table and the runs every row aggregates over, as tables),
then the contents, the ledger's conditions, the sections, and the closing section (choices, deviations and
provenance). The checklist is generated: every artifact of the paper's registry entry with where the page renders
it and whether it has reproduced values, so it cannot drift from the page.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .collect import Methods, chains, runs_phrase
from .comparison import CHAIN_MEAN
from .ledger import Claim
from .render import Figure, Table, figure_html, save_figure, show
from .tree import PIPELINE, MetricsTree

Built = Any  # Table | Figure | str | list[tuple[str, Table | Figure | str]] | None


@dataclass(frozen=True)
class Part:
    """One table, figure or block of text of a report: ``build(ctx)`` makes it (see the module docstring).

    ``name`` is the file stem it writes and its anchor; ``artifacts`` the catalog IDs it renders; ``title`` a
    bold line above it (several parts in one section); ``missing``: Markdown shown when ``build`` returns None
    (a function of the context, or a string)."""

    name: str
    build: Callable[[Any], Built]
    artifacts: tuple[str, ...] = ()
    title: str = ""
    missing: str | Callable[[Any], str] = ""

    def missing_text(self, ctx: Any) -> str:
        return self.missing(ctx) if callable(self.missing) else self.missing


@dataclass(frozen=True)
class Section:
    """A heading, its intro (Markdown) and its parts; ``level`` 3 nests it under the section before."""

    title: str
    parts: tuple[Part, ...] = ()
    intro: str = ""
    level: int = 2

    @property
    def anchor(self) -> str:
        """The heading's id (each part has its own: its name, :func:`anchor`)."""
        return "sec-" + anchor(self.parts[0].name if self.parts else self.title)


@dataclass(frozen=True)
class Covered:
    """A catalog artifact that is no table or figure of the page (a dataset a stage builds, a schematic not
    redrawn): what it is and where it is covered, as the checklist shows it."""

    artifact: str
    what: str
    status: str


@dataclass(frozen=True)
class Report:
    """A paper's report page, declared (see the module docstring). ``ledger(ctx)`` gives the claims and the
    ledger table (:func:`vlcomp.reporting.ledger.report_ledger`), or is None for a page that judges no claim
    (``no_ledger`` says why); ``methods(ctx)`` the methods whose runs the page shows (the runs table, unless
    ``runs(ctx)`` builds it); ``deviations(ctx)`` Markdown; ``provenance(ctx)`` a Table."""

    paper: str
    title: str
    intro: str
    headline: str  # the name of the part shown at a glance
    sections: tuple[Section, ...]
    ledger: Callable[[Any], tuple[list[Claim], Table]] | None
    methods: Callable[[Any], Methods]
    deviations: Callable[[Any], str]
    provenance: Callable[[Any], Table]
    covered: tuple[Covered, ...] = ()
    status: Callable[[Any], str] = lambda ctx: ""  # Markdown: the profile and what the numbers are
    long: Callable[[Any], pd.DataFrame] = lambda ctx: ctx.long  # the collected metrics (the runs table)
    runs: Callable[[Any], Table] | None = None  # the runs table; default runs_table(long(ctx), methods(ctx))
    no_ledger: str = ""  # Markdown shown instead of the verdicts when ``ledger`` is None

    def runs_of(self, ctx: Any) -> Table:
        return self.runs(ctx) if self.runs is not None else runs_table(self.long(ctx), self.methods(ctx))

    def parts(self) -> list[Part]:
        return [p for s in self.sections for p in s.parts]

    def part(self, name: str) -> Part:
        for p in self.parts():
            if p.name == name:
                return p
        raise KeyError(f"report {self.paper!r} has no part {name!r} (parts: "
                       + ", ".join(p.name for p in self.parts()) + ")")

    def check(self, artifacts: Sequence[str]) -> None:
        """Every artifact of ``artifacts`` (the paper's registry entry) is rendered by a part, covered, or a claim
        id (``<PAPER>-C<k>``) shown by the ledger, and every artifact a part or cover names is one of them; part
        names are unique. Raises ValueError naming the paper."""
        names = [p.name for p in self.parts()]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"report {self.paper!r}: part names used twice: {', '.join(dup)}")
        self.part(self.headline)
        declared = {a for p in self.parts() for a in p.artifacts} | {c.artifact for c in self.covered}
        unknown = sorted(declared - set(artifacts))
        if unknown:
            raise ValueError(f"report {self.paper!r}: artifacts not in the paper's entry: {', '.join(unknown)}")
        left = [a for a in artifacts if a not in declared and not CLAIM_ID.search(a)]
        if left:
            raise ValueError(f"report {self.paper!r}: artifacts no part renders or covers: {', '.join(left)}")


CLAIM_ID = re.compile(r"-C\d+$")

#: What a real-profile page shows instead of verdicts (``Report.no_ledger``), and the status of the artifacts it
#: leaves to the toy page (:func:`rendered_elsewhere`).
NO_VERDICTS_REAL = ("No verdicts on this page: the claims ledger judges the paper's claims in the toy profile, over 3 "
                    "whole chains per method. The real profile runs one chain per row (the paper's one run), so a "
                    "difference has no spread to be judged against: the tables below put each reproduced number "
                    "next to the printed one.")
TOY_ONLY = "toy profile only: the real page does not render it yet"


def rendered_elsewhere(other: Report, sections: Sequence[Section], status: str,
                       skip: Sequence[Covered] = ()) -> tuple[Covered, ...]:
    """The artifacts ``other`` (a paper's full page) renders or covers that ``sections`` and ``skip`` (the second
    page's own :class:`Covered` entries) do not, as :class:`Covered` entries with ``status`` (e.g. "toy profile
    only"): what a second page of the paper (the real profile's) declares for the artifacts it leaves to the
    first. Their "what" is the section that renders them there."""
    mine = {a for s in sections for p in s.parts for a in p.artifacts} | {c.artifact for c in skip}
    out: dict[str, Covered] = {}
    for s in other.sections:
        for p in s.parts:
            for a in p.artifacts:
                if a not in mine:
                    out.setdefault(a, Covered(a, s.title, status))
    for c in other.covered:
        if c.artifact not in mine:
            out.setdefault(c.artifact, Covered(c.artifact, c.what, f"{c.status} ({status})"))
    return tuple(out.values())


def anchor(name: str) -> str:
    """An HTML id from a part name or title: letters, digits, ``-`` and ``_``."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-") or "section"


# --------------------------------------------------------------------------- the shared tables


def runs_table(long: pd.DataFrame, methods: Methods) -> Table:
    """One row per method of the page: its label and key, the number of runs its rows aggregate over and which
    (:func:`vlcomp.reporting.collect.runs_phrase`); a method not evaluated yet reads ``not run``."""
    rows = []
    for m in methods.order:
        found = chains(long, m)
        rows.append({"method": methods.label(m), "key": f"`{m}`", "runs": len(found),
                     "which runs": runs_phrase(found) if found else "not run"})
    return Table(pd.DataFrame(rows, columns=["method", "key", "runs", "which runs"]), legend=(
        "Every method row of the page aggregates over these runs, one evaluated model per whole chain (base seed -> "
        "pretraining -> training data -> LR selection -> fine-tuning). ± is the sample standard deviation over "
        "them everywhere; a row of one run has no spread and says so."))


def tree_runs_table(tree: MetricsTree) -> Table:
    """The runs table of a page over a metrics tree (the real profile's): one row per model it compares, pipeline
    models (their chain) then released checkpoints, and whether this profile has evaluated it."""
    rows = [{"model": f"`{m.name}`", "source": m.source, "method": m.method,
             "chain": m.chain.label if m.source == PIPELINE else "",
             "status": "evaluated" if m.present else f"missing: no {tree.profile}-profile metrics"}
            for m in tree.models]
    return Table(pd.DataFrame(rows, columns=["model", "source", "method", "chain", "status"]), legend=(
        "The models the page compares: the pipeline's, one per whole chain (base seed -> training data -> LR "
        "selection -> fine-tuning; a method with two or more of them also gets a mean row, ± the sample standard "
        "deviation over them), and the released checkpoints, evaluated as they are (one model each, no spread)."))


def _reproduced(built: Built, methods: Collection[str]) -> tuple[int, int] | None:
    """For a built table with reproduced values (a ``mean`` column): how many of its rows have a number, and of
    how many (summed over the tables of a list); where it has a ``method`` column, counted per method of
    ``methods`` (the page's: a row the paper alone prints, such as ARO's BLIP, is no row to reproduce). For a
    long comparison table (:mod:`vlcomp.reporting.comparison`: a ``reproduced`` column), its (row, model) cells
    other than the mean rows. None for anything else (an inventory, a figure, text)."""
    if isinstance(built, list):  # several blocks: their tables' rows together
        counts = [c for c in (_reproduced(item, methods) for _, item in built) if c is not None]
        return (sum(c[0] for c in counts), sum(c[1] for c in counts)) if counts else None
    if isinstance(built, Table) and "reproduced" in built.data.columns:  # a long comparison table
        rows = built.data[built.data["source"] != CHAIN_MEAN]  # (table row, model) cells; mean rows derive
        return int(pd.to_numeric(rows["reproduced"], errors="coerce").notna().sum()), len(rows)
    if not (isinstance(built, Table) and "mean" in built.data.columns):
        return None
    has = pd.to_numeric(built.data["mean"], errors="coerce").notna()
    if "method" in built.data.columns:
        own = built.data["method"].isin(list(methods)).to_numpy()
        per = has[own].groupby(built.data["method"].to_numpy()[own], sort=False).any()
        return int(per.sum()), len(per)
    return int(has.sum()), len(has)


def _status(built: Built, methods: Collection[str]) -> str:
    if built is None:
        return "pending: input not produced yet"
    counts = _reproduced(built, methods)
    if counts is None or counts[0] == counts[1]:
        return "rendered"
    if counts[0] == 0:
        return "rendered; no reproduced value yet"
    return f"rendered; reproduced values for {counts[0]} of {counts[1]} rows"


def checklist_table(report: Report, artifacts: Sequence[str], built: dict[str, Built],
                    claims: Sequence[Claim], methods: Collection[str] = ()) -> Table:
    """Every artifact of the paper's entry, in its order: what it is (the heading of the section that renders
    it), where on the page, and its status: rendered (and, for a table of reproduced values, how many of its rows
    of ``methods``, the page's, have one), pending (its input not produced yet), covered elsewhere, or a claim with
    its verdict."""
    where: dict[str, tuple[Section, Part]] = {}
    for s in report.sections:
        for p in s.parts:
            for a in p.artifacts:
                where.setdefault(a, (s, p))
    covered = {c.artifact: c for c in report.covered}
    verdict = {c.id: c for c in claims}
    rows = []
    for a in artifacts:
        if a in where:
            s, p = where[a]
            rows.append({"artifact": a, "what": s.title, "where": f"[{p.name}](#{anchor(p.name)})",
                         "status": _status(built.get(p.name), methods)})
        elif a in covered:
            rows.append({"artifact": a, "what": covered[a].what, "where": "", "status": covered[a].status})
        elif report.ledger is None:
            rows.append({"artifact": a, "what": "claim", "where": "", "status": "no verdict on this page"})
        else:
            cid = a.rsplit("-C", 1)[-1]
            c = verdict.get(f"C{cid}") or verdict.get(cid)
            rows.append({"artifact": a, "what": "claim" if c is None else c.text, "where": "[claims ledger](#claims_ledger)",
                         "status": "not in the ledger" if c is None else c.verdict.upper()})
    return Table(pd.DataFrame(rows, columns=["artifact", "what", "where", "status"]),
                 legend="A checklist, generated from the page's declaration: no spread.")


def verdicts_markdown(claims: Sequence[Claim]) -> str:
    """One line per claim: its id, verdict, statement and what the paper reported."""
    return "\n".join(f"- **({c.id}) {c.verdict.upper()}** — {c.text} *Paper: {c.paper}.*"
                     for c in claims)


# --------------------------------------------------------------------------- rendering


@dataclass
class Block:
    """One displayed block of the page: Markdown or HTML."""

    kind: str  # "markdown" or "html"
    text: str


def _heading(title: str, level: int, ident: str) -> Block:
    return Block("html", f'<h{level} id="{html.escape(ident)}">{html.escape(title)}</h{level}>')


@dataclass
class Page:
    """A report rendered for one context into ``out_dir``: tables and figures are written as the blocks are
    made (:meth:`blocks`)."""

    report: Report
    ctx: Any
    out_dir: str | Path
    built: dict[str, Built] = field(default_factory=dict)

    def build(self, part: Part) -> Built:
        if part.name not in self.built:
            self.built[part.name] = part.build(self.ctx)
        return self.built[part.name]

    def render(self, part: Part) -> list[Block]:
        """Write ``part``'s files and return its blocks."""
        got = self.build(part)
        out = [Block("html", f'<a id="{anchor(part.name)}"></a>')]
        if part.title:
            out.append(Block("markdown", f"**{part.title}**"))
        if got is None:
            missing = part.missing_text(self.ctx)
            return [*out, Block("markdown", missing)] if missing else out
        items = got if isinstance(got, list) else [("", got)]
        several = sum(isinstance(item, Table) for _, item in items) > 1
        n_tables = 0
        for title, item in items:
            if title:
                out.append(Block("markdown", f"**{title}**"))
            if isinstance(item, Table):
                name = f"{part.name}_{n_tables}" if several else part.name
                n_tables += 1
                out.append(Block("html", show(self.out_dir, name, item)))
            elif isinstance(item, Figure):
                png = save_figure(item.figure, self.out_dir, part.name)
                out.append(Block("html", figure_html(png, item.legend, item.notes)))
            elif isinstance(item, str):
                out.append(Block("markdown", item))
            else:
                raise TypeError(f"report {self.report.paper!r}, part {part.name!r}: built a "
                                f"{type(item).__name__}, not a Table, Figure, str or list of them")
        return out

    def blocks(self, artifacts: Sequence[str]) -> Iterator[Block]:
        """The whole page, in order (``artifacts``: the paper's registry entry's, for the checklist)."""
        r, ctx = self.report, self.ctx
        self.report.check(artifacts)
        claims, ledger = r.ledger(ctx) if r.ledger is not None else ([], None)
        headline = r.part(r.headline)
        head_section = next(s for s in r.sections if headline in s.parts)
        body = [s for s in r.sections if s is not head_section]
        for s in body:  # build every part first: the checklist says what each gave
            for p in s.parts:
                self.build(p)
        self.build(headline)
        yield Block("markdown", f"# {r.title}\n\n{r.intro}")
        if status := r.status(ctx):
            yield Block("markdown", status)
        yield _heading("At a glance", 2, "at-a-glance")
        yield _heading("Claims: verdicts", 3, "verdicts")
        yield Block("markdown", verdicts_markdown(claims) or r.no_ledger or "No claims.")
        yield _heading(head_section.title, 3, head_section.anchor)
        if head_section.intro:
            yield Block("markdown", head_section.intro)
        for p in head_section.parts:
            yield from self.render(p)
        yield _heading("Artifact checklist", 3, "artifact_checklist")
        yield Block("html", show(self.out_dir, "artifact_checklist",
                                 checklist_table(r, artifacts, self.built, claims, r.methods(ctx).order)))
        yield _heading("Runs", 3, "runs")
        yield Block("html", show(self.out_dir, "runs", r.runs_of(ctx)))
        toc = [*([("claims_ledger", "Claims ledger: every condition")] * (ledger is not None)),
               *((s.anchor, s.title) for s in body if s.level == 2),
               ("provenance", "Choices, deviations from the paper, and provenance")]
        yield Block("markdown", "**Contents:** " + " · ".join(f"[{t}](#{a})" for a, t in toc))
        if ledger is not None:
            yield _heading("Claims ledger: every condition", 2, "claims_ledger")
            yield Block("html", show(self.out_dir, "claims_ledger", ledger))
        for s in body:
            yield _heading(s.title, s.level, s.anchor)
            if s.intro:
                yield Block("markdown", s.intro)
            for p in s.parts:
                yield from self.render(p)
        yield _heading("Choices, deviations from the paper, and provenance", 2, "provenance")
        yield Block("markdown", r.deviations(ctx))
        yield Block("html", show(self.out_dir, "provenance", r.provenance(ctx)))


def display_page(report: Report, ctx: Any, out_dir: str | Path, artifacts: Sequence[str]) -> Page:
    """Render ``report`` into the running notebook (what a report template's cell calls) and return the page."""
    from IPython.display import HTML, Markdown, display

    page = Page(report, ctx, out_dir)
    for b in page.blocks(artifacts):
        display(Markdown(b.text) if b.kind == "markdown" else HTML(b.text))
    return page
