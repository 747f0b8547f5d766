"""Stage ``train_mlm`` (toy): a tiny BERT masked LM trained from scratch on the world's captions.

It stands for the pretrained masked LM of the papers (TSVLC's fill-mask default, distilroberta-base): a model of the
language that knows which words fit a slot. Its corpus is the captions of ``mlm.splits`` (every caption once, in
split order), its vocabulary their words (:func:`vlcomp.text.mlm.word_tokenizer`), its recipe the rest of
``mlm`` (:class:`vlcomp.text.mlm.MlmConfig`), its seed ``root_seed`` (one model for every chain: it is a property of
the language, not of a chain's CLIP).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ...config import build, section
from ...seeding import derive_seed
from ...text.mlm import MlmConfig, train_mlm
from ...world import Split


def masked_lm(params: dict, world: str | Path, *, on_log: Callable | None = None):
    """``(model, tokenizer, history, about)``: the masked LM trained on ``mlm.splits``' captions."""
    values = dict(section(params, "mlm"))
    splits = values.pop("splits", None)
    if not isinstance(splits, list) or not splits or not all(isinstance(s, str) for s in splits):
        raise ValueError(f"params: mlm.splits={splits!r} must list the world splits whose captions train the masked LM")
    cfg = build(MlmConfig, values, "mlm")
    corpus = [c for name in splits for caps in Split(world, name).captions() for c in caps]
    seed = derive_seed(section(params, "root_seed"), "train_mlm")
    model, tokenizer, history = train_mlm(corpus, cfg, seed=seed)
    if on_log is not None:
        for rec in history:
            on_log(int(rec["step"]), {k: v for k, v in rec.items() if k != "step"})
    about = {"kind": "trained", "splits": splits, "n_captions": len(corpus), "vocab_size": len(tokenizer),
             "stands_for": "distilroberta-base (TSVLC's fill-mask model)"}
    return model, tokenizer, history, about
