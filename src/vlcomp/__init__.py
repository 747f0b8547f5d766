"""vlcomp: reproduction workspace for compositional understanding in CLIP-style models.

Library code lives here; the thin DVC entry points live in ``stages/``.
"""

__version__ = "0.1.0"
