"""The "What changed and why" section every paper report shows after a change of toy world: the settings that
differ between the first world's ``params.yaml`` (its snapshot, ``calibration/first_world/``,
``scripts/snapshot_first_world.py``) and this run's, and the first world's claims ledger beside this run's. A paper
supplies its fixed text, its snapshot paths and its params sections; the tables and the section's shape are here."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from .ledger import changed_settings, ledger_change
from .render import Table
from .scaffold import Part, Section
from .tree import read_params

WORLD_NAMES = ("first world", "this run")
FIRST_WORLD_MISSING = "No snapshot of the first world at `{path}` (run `python scripts/snapshot_first_world.py`)."
SECTION_TITLE = "What changed and why: the first world beside this run"


def own_sections(params: Mapping, methods: Sequence[str]) -> list[str]:
    """The params sections of a report's own ``methods``: ``methods.<m>`` and ``mine.<g>`` of the generators they
    train on (``generator``, ``positives_from``), so another paper's methods and generators (which the report's
    stage does not depend on) never enter its settings table."""
    ms, mine = params.get("methods") or {}, params.get("mine") or {}
    own = [m for m in methods if m in ms]
    gens = dict.fromkeys(g for m in own for g in ((ms[m] or {}).get("generator"), (ms[m] or {}).get("positives_from"))
                         if g in mine)
    return [*(f"methods.{m}" for m in own), *(f"mine.{g}" for g in gens)]


def missing_text(path: str | Path) -> str:
    return FIRST_WORLD_MISSING.format(path=path)


def settings_change(params_path: Path, params: Mapping, sections: Sequence[str]) -> Table | None:
    """Every setting of ``sections`` that differs between the first world's ``params.yaml`` (``params_path``) and
    this run's ``params``; None without the snapshot."""
    if not params_path.is_file():
        return None
    df = changed_settings(read_params(params_path), params, sections)
    return Table(df, df.rename(columns={"before": WORLD_NAMES[0], "after": WORLD_NAMES[1]}), legend=(
        f"Settings, not measurements: no spread. *{WORLD_NAMES[0]}*: `{params_path}` (the first world's params.yaml); "
        f"*{WORLD_NAMES[1]}*: this run's params. Empty: the file does not set it (the code's default, which "
        "reproduces the first world)."))


def claims_change(claims_path: Path, after: pd.DataFrame, before: pd.DataFrame | None = None,
                  notes: Sequence[str] = ()) -> Table | None:
    """The first world's ledger (``claims_path``, or ``before`` read from it and extended) beside this run's
    (``after``), condition by condition; None without the snapshot."""
    if not claims_path.is_file():
        return None
    before = pd.read_csv(claims_path) if before is None else before
    return ledger_change(before, after, WORLD_NAMES,
                         [f"*{WORLD_NAMES[0]}*: `{claims_path}`; *{WORLD_NAMES[1]}*: the claims ledger above.", *notes])


def world_change_section(why: Callable, settings: Callable, claims: Callable, missing: Callable, intro: str,
                         extra: Sequence[Part] = ()) -> Section:
    """The section: the paper's fixed text (``why``), the settings and claims tables, then ``extra`` parts."""
    return Section(SECTION_TITLE, (Part("world_change_why", why),
                                   Part("world_change_settings", settings, title="Settings that differ",
                                        missing=missing),
                                   Part("world_change_claims", claims, title="Claims, condition by condition",
                                        missing=missing),
                                   *extra), intro)
