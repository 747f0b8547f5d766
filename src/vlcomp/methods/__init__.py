"""Fine-tuning methods: ``methods.<name>`` in params.yaml, one entry per method, each naming

- ``generator``: the mined dataset it trains on (a key of ``mine``, whose generator, ``mine.<name>.generator`` or the
  name itself, is a name of ``vlcomp.generators.GENERATORS``; stage ``mine@``);
- ``loss`` (a name of ``vlcomp.losses.LOSSES``), ``loss_args`` (its constructor's keywords) and ``loss_weights``
  (term name -> weight; a term not listed has weight 1);
- ``batch``: its batch composition (:class:`BatchConfig`: which rows, K negatives, P positives, hard images);
- ``tuning``: what of the model it trains (:class:`Tuning`: frozen towers, LoRA adapters on either tower);
- ``base_model`` and ``init``: which base it starts from (a family of ``base_models``; default the chain's own base)
  and whether from its weights (``base``) or from a random initialisation of its architecture (``scratch``);
- ``paper`` and ``label``: where the reports put it and what they call it.

``variants.<name>`` is one run of a method: ``{method, base, seed, generator}`` on chain ``base`` (``generator``
repeats the method's so that dvc.yaml can name the stage's mined-data dependency; a mismatch is an error naming
both). params.yaml derives them from ``base_seeds`` and ``seeds`` (:func:`vlcomp.config.derive_variants`).

The registry of methods is the params section itself, checked here (:func:`method_config`); code that a method
adds lives in its generator and its loss, which have their own registries. Adding a method is a params entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from ..config import build, check_renamed, method_paper, section
from ..models.lora import LoraSpec
from ..models.towers import FREEZABLE

ROW_RULES = ("all", "with_negatives")
INITS = ("base", "scratch")
"""``methods.<m>.init``: fine-tune the base model, or train its architecture from a random initialisation (TSVLC's
Table 1c/d/f rows "trained from scratch")."""


@dataclass(frozen=True)
class BatchConfig:
    """``methods.<name>.batch``. ``rows``: which captions become training rows (``with_negatives``: only those
    with at least one mined negative, NegCLIP's rule, which CLIP-FT shares so the ablation differs only in loss
    and batch; ``all``: every caption, a row without a mined negative or positive carrying masked slots, which
    the losses leave out: TSVLC's rule, whose negatives loss covers only the captions that have one).
    ``negatives`` K and ``positives`` P per row (0: none); ``hard_images``: bring one of each image's hard
    images with one of its rows."""

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
class Tuning:
    """``methods.<name>.tuning``: what of the model a method trains. ``freeze``: parts whose weights stay fixed (the ``image`` / ``text`` towers,
    ``logit_scale``); ``lora``: LoRA adapters through peft (:class:`vlcomp.models.lora.LoraSpec`: ``towers``,
    ``rank``, ``alpha``, ``layers``), which freeze the adapted towers' own weights, train only the adapters there
    and are merged into the weights when training ends (TSVLC: ``lora: {towers: [image, text], rank: 4, alpha: 1,
    layers: [attn, mlp, patch_embed]}``, ``freeze: [logit_scale]``). None: no adapter."""

    freeze: tuple[str, ...] = ()
    lora: LoraSpec | None = None

    def __post_init__(self) -> None:
        bad = [t for t in self.freeze if t not in FREEZABLE]
        if bad:
            raise ValueError(f"freeze: {bad} are not towers (or logit_scale); choose from {FREEZABLE}")
        if self.lora is None:
            return
        if not isinstance(self.lora, LoraSpec):
            raise ValueError(f"lora={self.lora!r}: expected a mapping of towers, rank, alpha, layers")
        both = [t for t in self.lora.towers if t in self.freeze]
        if both:
            raise ValueError(f"lora.towers: {both} are also in freeze; a tower is either frozen or adapted")


def tuning_config(values: Any, where: str) -> Tuning:
    """``<where>`` (``methods.<name>.tuning``) checked, its ``lora`` mapping built into a :class:`LoraSpec`; a
    mistake is a ``ValueError`` naming the parameter."""
    if values is not None and not isinstance(values, dict):
        raise ValueError(f"params: {where} must be a mapping (freeze, lora), got {values!r}")
    values = dict(values or {})
    lora = values.pop("lora", None)
    if lora is not None:
        if not isinstance(lora, dict):
            raise ValueError(f"params: {where}.lora must be a mapping (towers, rank, alpha, layers) or null, "
                             f"got {lora!r}")
        lora = build(LoraSpec, lora, f"{where}.lora")
    return build(Tuning, {**values, "lora": lora}, where)


@dataclass(frozen=True)
class MethodConfig:
    """A fine-tuning method (``methods.<name>`` in params.yaml)."""

    generator: str
    loss: str
    batch: BatchConfig = field(default_factory=BatchConfig)
    loss_args: dict = field(default_factory=dict)
    loss_weights: dict = field(default_factory=dict)
    tuning: Tuning = field(default_factory=Tuning)
    paper: str = field(kw_only=True)  # the paper the method belongs to (a key of ``papers``): no default
    label: str = ""
    positives_from: str | None = None  # a second generator whose ``positives`` the batch reads (None: ``generator``)
    lr_from: str | None = None  # train at the rate swept for this other method (None: its own sweep)
    epochs: float | None = None  # overrides finetune.epochs (a corpus of another size needs another length)
    sweep_epochs: float | None = None  # overrides finetune.sweep_epochs
    lr_grid: tuple[float, ...] | None = None  # overrides finetune.lr_grid (LoRA adapters want larger rates)
    # the recipe's other knobs, overriding finetune's for this method (TSVLC's paper recipe: 512 pairs a step, 10,000
    # warm-up steps, weight decay 0.1; NegCLIP's: 256, 50, 0.2)
    batch_size: int | None = None
    warmup_steps: int | None = None
    weight_decay: float | None = None
    # the benchmarks its runs are scored on: None / 'all' = evaluate.benchmarks, a list = that subset on every chain,
    # {first_chain: ..., other_chains: ...} = per chain role (vlcomp.config.chain_benchmarks)
    benchmarks: tuple[str, ...] | str | dict[str, Any] | None = None
    base_model: str | None = None  # a key of base_models: start from that base instead of the chain's default one
    init: str = "base"  # "base": from the base model's weights; "scratch": its architecture, randomly initialised

    def __post_init__(self) -> None:
        if self.init not in INITS:
            raise ValueError(f"init={self.init!r}: must be one of {', '.join(INITS)}")
        if self.init == "scratch" and self.tuning.lora is not None:
            raise ValueError("init=scratch with tuning.lora: a run from scratch trains every weight (no adapters)")
        for k, low in (("batch_size", 1), ("warmup_steps", 0)):
            v = getattr(self, k)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < low):
                raise ValueError(f"{k}={v!r}: must be an int >= {low} or null (the finetune section's)")
        if self.weight_decay is not None and (isinstance(self.weight_decay, bool)
                                              or not isinstance(self.weight_decay, int | float) or self.weight_decay < 0):
            raise ValueError(f"weight_decay={self.weight_decay!r}: must be a number >= 0 or null (the finetune section's)")
        if self.lr_grid is not None and (not self.lr_grid or any(
                isinstance(v, bool) or not isinstance(v, int | float) or not v > 0 for v in self.lr_grid)):
            raise ValueError(f"lr_grid={self.lr_grid!r}: must list positive learning rates (or be null)")
        for k in ("epochs", "sweep_epochs"):
            v = getattr(self, k)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int | float) or not v > 0):
                raise ValueError(f"{k}={v!r}: must be a positive number or null (the finetune section's)")


@dataclass(frozen=True)
class VariantConfig:
    """One fine-tuning run (``variants.<name>``): a method, the chain it starts from (``base``, a key of ``bases``), a
    fine-tuning seed, the method's generator, the folder of ``data/mined`` it reads (``mined``:
    :func:`vlcomp.config.mined_dir`) and the learning-rate sweep it trains at (``selection``, a key of
    ``selections``; params ``lr_selection`` and ``methods.<m>.lr_from``) and the benchmarks its evaluation scores
    (``benchmarks``: :func:`vlcomp.config.chain_benchmarks`, None = every benchmark)."""

    method: str
    base: str
    seed: int
    generator: str
    selection: str
    mined: str
    mined_positives: str
    benchmarks: list[str] | None = None


def method_config(params: dict[str, Any], name: str) -> MethodConfig:
    """``methods.<name>`` checked: known generator and loss, a valid batch, a batch the generator can feed."""
    methods = section(params, "methods")
    if name not in methods:
        raise ValueError(f"params: unknown method {name!r}; known: {', '.join(sorted(methods))}")
    raw = dict(methods[name] or {})
    where = f"methods.{name}"
    check_renamed({"methods": {name: raw}})
    method_paper(params, name)  # required: a clear error naming the method
    batch = build(BatchConfig, raw.pop("batch", None), f"{where}.batch")
    tuning = tuning_config(raw.pop("tuning", None), f"{where}.tuning")
    cfg = build(MethodConfig, {**raw, "batch": batch, "tuning": tuning}, where)
    from ..config import chain_benchmarks, registered_generator
    from ..generators import GENERATORS
    from ..losses import LOSSES

    for first in (True, False):
        chain_benchmarks(cfg.benchmarks, first, f"{where}.benchmarks")

    if cfg.loss not in LOSSES:
        raise ValueError(f"params: {where}.loss={cfg.loss!r} is not a registered loss; known: {LOSSES.names()}")
    mine = params.get("mine") or {}
    for key, name in (("generator", cfg.generator), ("positives_from", cfg.positives_from)):
        if name is None:
            continue
        registered = registered_generator(mine, name)
        if registered not in GENERATORS:
            what = f"{key}={name!r}" + (f": mine.{name}.generator={registered!r}" if registered != name else "")
            raise ValueError(f"params: {where}.{what} is not a registered generator; known: {GENERATORS.names()}")
    for gen, needs in sources(cfg).items():
        writes = GENERATORS.get(registered_generator(mine, gen)).writes
        missing = [k for k in needs if k not in writes]
        if missing:
            raise ValueError(f"params: {where}.batch needs {missing} from generator {gen!r}, which does not write "
                             f"them (it writes {list(writes)})")
    if cfg.base_model is not None and cfg.base_model not in (params.get("base_models") or {}):
        raise ValueError(f"params: {where}.base_model={cfg.base_model!r} is not a key of base_models "
                         f"({', '.join(params.get('base_models') or {}) or 'none'})")
    if cfg.lr_from is not None and cfg.lr_from not in methods:
        raise ValueError(f"params: {where}.lr_from={cfg.lr_from!r} is not a method; known: {', '.join(sorted(methods))}")
    for term, w in cfg.loss_weights.items():
        if not str(term).endswith("_loss") or isinstance(w, bool) or not isinstance(w, int | float):
            raise ValueError(f"params: {where}.loss_weights: {term!r}: {w!r}; expected a *_loss term and a number")
    return cfg


def sources(method: MethodConfig) -> dict[str, tuple[str, ...]]:
    """Which generator each mined output the batch reads comes from: ``positives`` from ``positives_from`` when it is
    set (TSVLC's Combined: the RB+LLM negatives of one generator, the analogy positives of another), every other
    output from ``generator``."""
    needs = method.batch.needs()
    if method.positives_from is None or "positives" not in needs:
        return {method.generator: needs}
    own = tuple(k for k in needs if k != "positives")
    return {method.generator: own, method.positives_from: ("positives",)} if own else {method.positives_from: needs}


def variant_config(params: dict[str, Any], name: str) -> VariantConfig:
    variants = section(params, "variants")
    if name not in variants:
        raise ValueError(f"params: unknown variant {name!r}; known: {', '.join(sorted(variants))}")
    v = build(VariantConfig, variants[name], f"variants.{name}")
    m = method_config(params, v.method)
    if v.generator != m.generator:
        raise ValueError(f"params: variants.{name}.generator={v.generator!r} but methods.{v.method}.generator="
                         f"{m.generator!r}; they must name the same generator")
    if v.base not in (params.get("bases") or {}):
        raise ValueError(f"params: variants.{name}.base={v.base!r} is not a key of bases "
                         f"({', '.join(params.get('bases') or {}) or 'none'})")
    sel = (params.get("selections") or {}).get(v.selection)
    swept = m.lr_from or v.method
    if sel is None or sel.get("method") != swept:
        raise ValueError(f"params: variants.{name}.selection={v.selection!r} is not a selection of method "
                         f"{swept!r} (selections: {', '.join(params.get('selections') or {}) or 'none'})")
    from ..config import mined_dir

    mine = params.get("mine") or {}
    expected = (mined_dir(mine, v.generator, v.base), mined_dir(mine, m.positives_from or v.generator, v.base))
    if (v.mined, v.mined_positives) != expected:
        raise ValueError(f"params: variants.{name}: mined={v.mined!r}, mined_positives={v.mined_positives!r}, expected "
                         f"{expected[0]!r}, {expected[1]!r} (generator {v.generator!r}, positives from "
                         f"{m.positives_from or v.generator!r}, base {v.base!r}); regenerate params.yaml")
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
                        hard_images=mined["hard_images"] if b.hard_images else None,
                        missing="mask" if b.rows == "all" else "error")


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


def apply_modifiers(model: torch.nn.Module, method: MethodConfig, *, seed: int = 0) -> torch.nn.Module:
    """Freeze the parts ``method.tuning.freeze`` names (their parameters get no gradient and no optimiser state;
    :mod:`vlcomp.models.towers`), then add the LoRA adapters of ``method.tuning.lora`` (in place; A initialised
    from ``seed``; :func:`vlcomp.models.lora.add_lora`). Undo LoRA's wrappers with :func:`finish_modifiers`."""
    from ..models.lora import add_lora
    from ..models.towers import freeze

    freeze(model, method.tuning.freeze)
    if method.tuning.lora is not None:
        add_lora(model, method.tuning.lora, seed=seed)
    return model


def finish_modifiers(model: torch.nn.Module, method: MethodConfig) -> torch.nn.Module:
    """The trained model as a plain open_clip model: LoRA adapters merged into the weights
    (:func:`vlcomp.models.lora.merge_lora`); without LoRA, ``model`` untouched."""
    if method.tuning.lora is None:
        return model
    from ..models.lora import merge_lora

    return merge_lora(model)
