"""Losses, one module per method, sharing one contract.

Contract: ``loss(features: vlcomp.train.batch.Features) -> dict``. ``features`` holds the L2-normalised
features of every named block of the global batch (image blocks such as ``images``/``hard_images``/
``distractors``; text blocks such as ``captions`` ``[N, D]``, ``negatives`` ``[rows, K, D]`` with a validity
mask, ``positives``), each text block with its owner image row, and the logit scale. The dict maps term names
to tensors; the trainer sums the terms whose names end in ``_loss`` and logs every entry (diagnostics do not end
in ``_loss``). A loss names the blocks it needs and raises ValueError naming a missing or misshaped one.
"""

from ..registry import Registry

LOSSES: Registry = Registry("loss", package=__name__)
"""Loss ``name`` lives in module ``vlcomp.losses.<name>`` (or a prefix of it cut at underscores), imported when
first asked for (:class:`vlcomp.registry.Registry`)."""


def get_loss(name: str, **kwargs):
    return LOSSES.get(name)(**kwargs)
