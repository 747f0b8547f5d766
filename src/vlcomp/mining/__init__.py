"""Hard-negative (and later hard-positive) generators, keyed by the names used in params.yaml (``mine.*``)."""

from ..registry import Registry

GENERATORS: Registry = Registry("generator")

from . import negclip  # noqa: E402,F401  (registration)
