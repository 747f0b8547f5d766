"""Stage ``pretrain``, toy profile: train the tiny CLIP from scratch on a split of the world (``pretrain``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from torch import nn

from ...config import section
from ...losses import get_loss
from ...models.factory import create_model
from ...seeding import derive_seed, np_rng
from ...text.tokenizer import get_tokenizer
from ...train.data import BatchSampler, rows_from_annotations
from ...train.loop import train
from ...train.recipes import base_loss, model_spec, train_config
from ...world import Split


def base_model(params: Mapping[str, Any], world: str, *, base: str, seed: int,
               on_log: Callable[[int, dict], None] | None = None) -> tuple[nn.Module, list[dict], str]:
    """``(model, history, trained_on)``: base ``base``'s architecture trained with its loss (the CLIP loss, or
    another base model's, e.g. CyCLIP's: :func:`vlcomp.train.recipes.base_loss`) over ``pretrain.split`` with the
    recipe of ``pretrain``, initialised and batched from seeds derived from ``seed`` (the chain's,
    :func:`vlcomp.config.chain_seed`)."""
    spec = model_spec(params, base)
    pcfg = dict(section(params, "pretrain"))
    split_name = pcfg.pop("split")
    cfg = train_config(pcfg, "pretrain")
    split = Split(world, split_name)
    rows = rows_from_annotations(split.captions())
    tokenizer = get_tokenizer(spec.tokenizer, spec.arch, spec.context_length)
    model = create_model(spec, init_seed=derive_seed(seed, "pretrain", "init"))
    history = train(model, tokenizer, split.images, BatchSampler(rows, cfg.batch_size, together=split.twins()),
                    get_loss(base_loss(params, base)), cfg, np_rng(seed, "pretrain", "batches"), on_log=on_log)
    return model, history, split_name
