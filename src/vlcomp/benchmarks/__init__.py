"""Benchmarks: one record per benchmark of the five papers (what it reads, how it prepares a task for the
engine, how its per-item tables aggregate into metrics), in one registry keyed by the names used in params.yaml.

The same record serves both profiles: it reads the released file formats (:mod:`vlcomp.formats`), which the toy
profile's twins (:mod:`vlcomp.twins`) are written in. Every module of this package registers its benchmarks in
:data:`BENCHMARKS` on import, and importing the package imports them all: a new benchmark is a new module.
"""

import importlib as _importlib
import pkgutil as _pkgutil

from .registry import BENCHMARKS, Benchmark, aggregate_tables, benchmarks_named, run_benchmarks

for _mod in _pkgutil.iter_modules(__path__):
    if _mod.name != "registry" and not _mod.name.startswith("_"):
        _importlib.import_module(f"{__name__}.{_mod.name}")

__all__ = ["BENCHMARKS", "Benchmark", "aggregate_tables", "benchmarks_named", "run_benchmarks"]
