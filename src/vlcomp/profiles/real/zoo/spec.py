"""The schema of a ``released_models`` entry: a family's keys (:class:`Key`), the family record (:class:`Family`)
and :func:`check_spec`, which fills defaults, expands paths and names the model and key of every mistake."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import torch

from ....config import expand_path
from ....models.scorers import ImageTextScorer
from ....models.weights import is_file_ref
from ....registry import Registry


@dataclass(frozen=True)
class Key:
    """One spec key: accepted types, whether required, default, allowed values."""

    types: tuple[type, ...]
    required: bool = False
    default: Any = None
    nullable: bool = False
    choices: tuple[Any, ...] | None = None
    positive: bool = False
    path: bool = False  # expand $VAR / ~
    tag_or_path: bool = False  # ``weights``: expanded only when it names a file


@dataclass(frozen=True)
class Family:
    """A model family: its spec keys and the builder turning a checked spec into a scorer."""

    keys: Mapping[str, Key]
    build: Callable[[str, dict[str, Any], torch.device], ImageTextScorer]
    summary: str = ""


#: Every family, by its ``family`` value in ``released_models`` (each family module registers itself).
ZOO: Registry[Family] = Registry("model family", package="vlcomp.profiles.real.zoo")

STR, INT, BOOL, NUM = (str,), (int,), (bool,), (int, float)


def batch_keys(image: int, text: int) -> dict[str, Key]:
    """``image_batch`` / ``text_batch`` with these defaults."""
    return {"image_batch": Key(INT, default=image, positive=True),
            "text_batch": Key(INT, default=text, positive=True)}


def _type_name(types: tuple[type, ...]) -> str:
    return "number" if float in types else " or ".join(t.__name__ for t in types)


def _expand_path(name: str, key: str, value: str) -> str:
    return expand_path(value, f"model {name!r}: key {key!r}")


def check_spec(name: str, spec: Mapping[str, Any]) -> tuple[Family, dict[str, Any]]:
    """The family and the full spec (defaults filled, paths expanded); ``ValueError`` naming model and key."""
    if not isinstance(spec, Mapping):
        raise ValueError(f"model {name!r}: spec must be a mapping, got {type(spec).__name__}")
    if "family" not in spec:
        raise ValueError(f"model {name!r}: missing key 'family' (one of {', '.join(ZOO.names())})")
    fam_name = spec["family"]
    if not isinstance(fam_name, str) or fam_name not in ZOO:
        raise ValueError(f"model {name!r}: key 'family'={fam_name!r} is not a known family "
                         f"(one of {', '.join(ZOO.names())})")
    family = ZOO.get(fam_name)
    unknown = sorted(set(spec) - set(family.keys) - {"family"})
    if unknown:
        raise ValueError(f"model {name!r}: unknown key(s) {', '.join(map(repr, unknown))} for family "
                         f"{fam_name!r}; allowed: {', '.join(sorted(family.keys))}")
    out: dict[str, Any] = {"family": fam_name}
    for key, k in family.keys.items():
        if key not in spec:
            if k.required:
                raise ValueError(f"model {name!r}: missing key {key!r} (family {fam_name!r})")
            out[key] = k.default
            continue
        value = spec[key]
        if value is None:
            if not k.nullable:
                raise ValueError(f"model {name!r}: key {key!r} must be {_type_name(k.types)}, got null")
            out[key] = None
            continue
        if not isinstance(value, k.types) or (isinstance(value, bool) and bool not in k.types):
            raise ValueError(f"model {name!r}: key {key!r} must be {_type_name(k.types)}, "
                             f"got {type(value).__name__} {value!r}")
        if k.choices is not None and value not in k.choices:
            raise ValueError(f"model {name!r}: key {key!r}={value!r} must be one of "
                             f"{', '.join(map(str, k.choices))}")
        if k.positive and not value > 0:
            raise ValueError(f"model {name!r}: key {key!r}={value!r} must be positive")
        if k.path or (k.tag_or_path and ("$" in value or value.startswith("~") or is_file_ref(value))):
            value = _expand_path(name, key, value)
        out[key] = value
    return family, out
