"""Losses, one module per method, sharing one contract.

Contract: ``loss(image_features=[N, D], text_features=[M, D], logit_scale=scalar, **extra) -> dict``.
Features are L2-normalised. The dict maps term names to tensors; the trainer sums the terms whose names
end in ``_loss`` and logs every entry (diagnostics do not end in ``_loss``).
"""

from ..registry import Registry

LOSSES: Registry = Registry("loss")

from . import clip, negclip  # noqa: E402,F401  (registration)


def get_loss(name: str, **kwargs):
    return LOSSES.get(name)(**kwargs)
