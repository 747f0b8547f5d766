"""Fine-tuning methods: ``methods.<name>`` in params.yaml, one entry per method, each naming

- ``generator``: the ``mine@<generator>`` output it trains on (a name of ``vlcomp.generators.GENERATORS``);
- ``loss`` (a name of ``vlcomp.losses.LOSSES``), ``loss_args`` (its constructor's keywords) and ``loss_weights``
  (term name -> weight; a term not listed has weight 1);
- ``batch``: its batch composition (:class:`BatchConfig`: which rows, K negatives, P positives, hard images);
- ``model``: its model modifiers (:class:`ModelModifiers`: frozen towers);
- ``paper`` and ``label``: where the reports put it and what they call it.

``variants.<name>`` is one run of a method: ``{method, seed, generator}`` (``generator`` repeats the method's
so that dvc.yaml can name the stage's mined-data dependency; a mismatch is an error naming both).

The registry of methods is the params section itself, checked here (:func:`method_config`); code that a method
adds lives in its generator and its loss, which have their own registries. Adding a method is a params entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from ..config import build, section

ROW_RULES = ("all", "with_negatives")
TOWERS = ("image", "text")


@dataclass(frozen=True)
class BatchConfig:
    """``methods.<name>.batch``. ``rows``: which captions become training rows (``with_negatives``: only those
    with at least one mined negative, NegCLIP's rule, which CLIP-FT shares so the ablation differs only in loss
    and batch). ``negatives`` K and ``positives`` P per row (0: none); ``hard_images``: bring one of each image's
    hard images with one of its rows."""

    rows: str = "all"
    negatives: int = 0
    positives: int = 0
    hard_images: bool = False

    def __post_init__(self) -> None:
        if self.rows not in ROW_RULES:
            raise ValueError(f"rows={self.rows!r}: must be one of {ROW_RULES}")
        for k in ("negatives", "positives"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{k}={v!r}: must be an int >= 0")

    def needs(self) -> tuple[str, ...]:
        """The generator outputs (names of ``vlcomp.generators.MINED``) this composition reads."""
        out = []
        if self.negatives or self.rows == "with_negatives":
            out.append("negatives")
        if self.positives:
            out.append("positives")
        if self.hard_images:
            out.append("hard_images")
        return tuple(out)


@dataclass(frozen=True)
class ModelModifiers:
    """``methods.<name>.model``: ``freeze``: towers whose weights stay fixed (``image``, ``text``)."""

    freeze: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        bad = [t for t in self.freeze if t not in TOWERS]
        if bad:
            raise ValueError(f"freeze: {bad} are not towers; choose from {TOWERS}")


@dataclass(frozen=True)
class MethodConfig:
    """A fine-tuning method (``methods.<name>`` in params.yaml)."""

    generator: str
    loss: str
    batch: BatchConfig = field(default_factory=BatchConfig)
    loss_args: dict = field(default_factory=dict)
    loss_weights: dict = field(default_factory=dict)
    model: ModelModifiers = field(default_factory=ModelModifiers)
    paper: str = "aro"
    label: str = ""


@dataclass(frozen=True)
class VariantConfig:
    """One fine-tuning run (``variants.<name>``): a method, a training seed and the method's generator."""

    method: str
    seed: int
    generator: str


def method_config(params: dict[str, Any], name: str) -> MethodConfig:
    """``methods.<name>`` checked: known generator and loss, a valid batch, a batch the generator can feed."""
    methods = section(params, "methods")
    if name not in methods:
        raise ValueError(f"params: unknown method {name!r}; known: {', '.join(sorted(methods))}")
    raw = dict(methods[name] or {})
    where = f"methods.{name}"
    batch = build(BatchConfig, raw.pop("batch", None), f"{where}.batch")
    model = build(ModelModifiers, raw.pop("model", None), f"{where}.model")
    cfg = build(MethodConfig, {**raw, "batch": batch, "model": model}, where)
    from ..generators import GENERATORS
    from ..losses import LOSSES

    if cfg.loss not in LOSSES:
        raise ValueError(f"params: {where}.loss={cfg.loss!r} is not a registered loss; known: {LOSSES.names()}")
    if cfg.generator not in GENERATORS:
        raise ValueError(f"params: {where}.generator={cfg.generator!r} is not a registered generator; "
                         f"known: {GENERATORS.names()}")
    missing = [k for k in batch.needs() if k not in GENERATORS.get(cfg.generator).writes]
    if missing:
        raise ValueError(f"params: {where}.batch needs {missing}, which generator {cfg.generator!r} does not write "
                         f"(it writes {list(GENERATORS.get(cfg.generator).writes)})")
    for term, w in cfg.loss_weights.items():
        if not str(term).endswith("_loss") or isinstance(w, bool) or not isinstance(w, int | float):
            raise ValueError(f"params: {where}.loss_weights: {term!r}: {w!r}; expected a *_loss term and a number")
    return cfg


def variant_config(params: dict[str, Any], name: str) -> VariantConfig:
    variants = section(params, "variants")
    if name not in variants:
        raise ValueError(f"params: unknown variant {name!r}; known: {', '.join(sorted(variants))}")
    v = build(VariantConfig, variants[name], f"variants.{name}")
    m = method_config(params, v.method)
    if v.generator != m.generator:
        raise ValueError(f"params: variants.{name}.generator={v.generator!r} but methods.{v.method}.generator="
                         f"{m.generator!r}; they must name the same generator")
    return v


def method_rows(captions: list[list[str]], mined: dict[str, Any], batch: BatchConfig) -> list:
    """The training rows of a split for ``batch``: one per (image, caption), with the caption's mined negatives
    and positives; ``rows: with_negatives`` keeps only captions with at least one negative."""
    from ..train.data import rows_from_annotations

    return rows_from_annotations(captions, mined.get("negatives"), require_negative=batch.rows == "with_negatives",
                                 positives=mined.get("positives"))


def make_sampler(rows: list, method: MethodConfig, batch_size: int, mined: dict[str, Any]):
    from ..train.data import BatchSampler

    b = method.batch
    return BatchSampler(rows, batch_size, negatives=b.negatives, positives=b.positives,
                        hard_images=mined["hard_images"] if b.hard_images else None)


class WeightedLoss(torch.nn.Module):
    """``loss`` with its ``*_loss`` terms scaled by ``weights`` (diagnostics unchanged)."""

    def __init__(self, loss: torch.nn.Module, weights: dict[str, float]) -> None:
        super().__init__()
        self.loss, self.weights = loss, dict(weights)

    def forward(self, features) -> dict[str, torch.Tensor]:
        terms = self.loss(features)
        unknown = sorted(set(self.weights) - set(terms))
        if unknown:
            raise ValueError(f"loss_weights name {unknown}, which {type(self.loss).__name__} does not return "
                             f"(it returns {sorted(terms)})")
        return {k: v * self.weights[k] if k in self.weights else v for k, v in terms.items()}


def make_loss(method: MethodConfig) -> torch.nn.Module:
    from ..losses import get_loss

    loss = get_loss(method.loss, **method.loss_args)
    return WeightedLoss(loss, method.loss_weights) if method.loss_weights else loss


def apply_modifiers(model: torch.nn.Module, method: MethodConfig) -> torch.nn.Module:
    """Freeze the towers ``method.model.freeze`` names (their parameters get no gradient and no optimiser
    state). The image tower is ``model.visual``; the text tower is every other parameter but the logit scale."""
    for name, p in model.named_parameters():
        tower = "image" if name.startswith("visual.") else None if name.startswith("logit_") else "text"
        if tower in method.model.freeze:
            p.requires_grad_(False)
    return model

