"""A small registry keyed by the short names used in params.yaml and dvc.yaml.

A registry of plugins (losses, generators, paper reports, released model families) names the package its plugins
live in and imports none of them up front: :meth:`Registry.get` imports the module that defines a name when the name
is first asked for. The module of a name is found by one rule, :func:`plugin_modules`: the name itself, else its
prefixes cut at underscores (``tsvlc_analogy`` -> module ``tsvlc_analogy``, then ``tsvlc``). So shared code never
imports a paper's module, a stage imports only the plugins its params name, and a new paper's module is a new file
that no existing stage reads (``scripts/stage_deps.py`` follows the same rule to write each stage's code deps).
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


def plugin_modules(name: str) -> list[str]:
    """Module names (relative to a plugin package) that may define plugin ``name``, most specific first:
    ``tsvlc_analogy`` -> ``["tsvlc_analogy", "tsvlc"]``; ``toy-rn16`` -> ``[]`` (not a module name)."""
    parts = name.split("_")
    out = ["_".join(parts[:i]) for i in range(len(parts), 0, -1)]
    return [m for m in out if m.isidentifier()]


def plugin_module(package: str, name: str) -> str | None:
    """The dotted module of ``package`` that defines plugin ``name`` by :func:`plugin_modules`'s rule (the first
    candidate that exists), or None."""
    for mod in plugin_modules(name):
        full = f"{package}.{mod}"
        try:
            if importlib.util.find_spec(full) is not None:
                return full
        except ModuleNotFoundError:
            return None
    return None


class Registry(Generic[T]):
    """Maps short names (``negclip``, ``vg_relation``, ``toy-rn16``) to objects of one kind.

    ``package``: the dotted package whose modules register plugins of this kind; a name not yet registered is
    looked up by importing its module (:func:`plugin_module`), and :meth:`names` imports every module of the
    package (listing all plugins is for messages and overviews, never on a stage's path)."""

    def __init__(self, kind: str, package: str | None = None) -> None:
        self.kind = kind
        self.package = package
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def deco(obj: T) -> T:
            self.add(name, obj)
            return obj

        return deco

    def add(self, name: str, obj: T) -> None:
        if name in self._items:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._items[name] = obj

    def _load(self, name: str) -> None:
        if name in self._items or self.package is None:
            return
        module = plugin_module(self.package, name)
        if module is not None:
            importlib.import_module(module)

    def _load_all(self) -> None:
        if self.package is None:
            return
        pkg = importlib.import_module(self.package)
        for mod in pkgutil.iter_modules(pkg.__path__):
            if not mod.name.startswith("_"):
                importlib.import_module(f"{self.package}.{mod.name}")

    def get(self, name: str) -> T:
        self._load(name)
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(self.names()) or "(none)"
            raise ValueError(f"unknown {self.kind} {name!r}; known: {known}") from None

    def names(self) -> list[str]:
        self._load_all()
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        if isinstance(name, str):
            self._load(name)
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())
