"""A small masked language model trained on a caption corpus: the toy stand-in for ``distilroberta-base``.

TSVLC's LLM-unmasking negatives (paper §3.1.2, reference ``NegativesLLM``; catalog ``tsvlc.md`` §3.4) run
``transformers.pipeline("fill-mask")`` with the library default model, ``distilroberta-base``. Nothing can be
downloaded here, and the toy world has a closed vocabulary of about 130 words, so the unmasker is a tiny BERT
trained from scratch on the captions themselves:

- :func:`word_tokenizer`: a word-level ``tokenizers`` model over the corpus (lower-cased, punctuation split
  off), wrapped as a ``PreTrainedTokenizerFast`` with BERT's special tokens, so the stock fill-mask pipeline
  works with it;
- :func:`train_mlm`: random-init ``BertForMaskedLM``, BERT's masking rule (:func:`mask_tokens`), AdamW;
- :func:`save_mlm` / :func:`load_mlm`: ``save_pretrained`` / ``from_pretrained`` (safetensors), offline;
- :func:`fill_mask_pipeline`: the transformers ``fill-mask`` pipeline on CPU.

Randomness is injected, never global (:mod:`vlcomp.seeding`): masking draws from a ``torch.Generator`` and the
batch order from a numpy ``Generator``, both derived from ``seed``. transformers initialises weights (and
dropout, when ``MlmConfig.dropout`` > 0, draws) from torch's global generator, so those run inside
``torch.random.fork_rng`` with a derived seed: the caller's global state is restored afterwards and the result
depends only on ``seed``. Training twice with the same seed in the same setting (CPU kind, kernel pin, thread
count; :mod:`vlcomp.determinism`) gives bitwise identical weights.

Toy defaults (:class:`MlmConfig`): hidden 64, 2 layers, 2 heads, intermediate 128, max_length 40, 1 epoch,
batch 128, lr 5e-3 (linear warm-up over 5% of the steps, then linear decay to 0), AdamW weight decay 0.01, no
dropout, min_count 1. Measured on the toy world's training captions (``web`` + ``coco_train``: 75,000 captions,
56 distinct words and punctuation pieces, vocabulary 61; CPU pin, one torch thread, Intel Xeon @ 2.80GHz, 2
cores, load ~0.8): 34.6 s for the epoch (586 steps; about 28 s for 60,000 captions), loss 1.19 over the last
50 steps. Picked among runs of 1-2 epochs, batch 64-256, lr 2e-3 to 1e-2 by held-out masked-token loss on 2,000
``coco_val`` captions: this one reached 1.05 (accuracy 0.62) in half the time of 2 epochs at batch 256
(0.94 / 0.64); length-bucketed batches were faster but clearly worse (the toy captions' length goes with their
style). Top fills after training: "a red [MASK] above a blue square" -> circle, diamond, triangle, heart,
square; "the striped arrow is to the [MASK] of the cross" -> right, left, front.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..seeding import derive_seed, np_rng, torch_gen

if TYPE_CHECKING:
    from transformers import BertForMaskedLM, PreTrainedTokenizerFast

#: BERT's special tokens, in vocabulary order: ids 0..4.
PAD, UNK, CLS, SEP, MASK = "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"
SPECIAL_TOKENS: tuple[str, ...] = (PAD, UNK, CLS, SEP, MASK)
#: Label value the loss ignores (transformers' convention).
IGNORE_INDEX = -100


# --------------------------------------------------------------------------- tokenizer


def _backend():  # -> (normalizer, pre-tokenizer) of the word-level tokenizer
    from tokenizers import normalizers, pre_tokenizers

    return normalizers.Lowercase(), pre_tokenizers.Whitespace()


def word_tokenizer(
    corpus: Iterable[str], *, min_count: int = 1, max_length: int | None = None
) -> PreTrainedTokenizerFast:
    """A word-level tokenizer over ``corpus``, wrapped for transformers.

    - Normalisation: lower-case. Pre-tokenisation: ``tokenizers.pre_tokenizers.Whitespace`` (the pattern
      ``\\w+|[^\\w\\s]+``), so punctuation is split off words ("dog." -> "dog", ".").
    - Vocabulary: ``[PAD] [UNK] [CLS] [SEP] [MASK]`` (ids 0..4), then every piece seen at least ``min_count``
      times, by descending count, ties alphabetically: deterministic for a given corpus (any order of it).
      Other pieces map to ``[UNK]``.
    - Post-processing: ``[CLS] A [SEP]`` (pairs ``[CLS] A [SEP] B [SEP]``, segment ids 0/1), as BERT.
    - ``model_max_length``: ``max_length`` if given (:func:`train_mlm` sets the model's window).

    The special tokens are registered as such on the ``PreTrainedTokenizerFast``, so
    ``pipeline("fill-mask", model=..., tokenizer=...)`` finds ``[MASK]`` in its input text.
    """
    from tokenizers import Tokenizer, models, processors
    from transformers import PreTrainedTokenizerFast

    if isinstance(min_count, bool) or not isinstance(min_count, int) or min_count < 1:
        raise ValueError(f"word_tokenizer: min_count must be an int >= 1, got {min_count!r}")
    if max_length is not None and (isinstance(max_length, bool) or not isinstance(max_length, int)
                                   or max_length < 3):
        raise ValueError(f"word_tokenizer: max_length must be None or an int >= 3, got {max_length!r}")
    if isinstance(corpus, str):
        raise ValueError("word_tokenizer: corpus must be an iterable of str, not a single str")
    normalizer, pre_tokenizer = _backend()
    counts: Counter[str] = Counter()
    for i, text in enumerate(corpus):
        if not isinstance(text, str):
            raise ValueError(f"word_tokenizer: corpus[{i}] is {type(text).__name__}, not str: {text!r}")
        counts.update(w for w, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text)))
    words = sorted((w for w, c in counts.items() if c >= min_count and w not in SPECIAL_TOKENS),
                   key=lambda w: (-counts[w], w))
    vocab = {w: i for i, w in enumerate([*SPECIAL_TOKENS, *words])}

    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer
    tok.post_processor = processors.TemplateProcessing(
        single=f"{CLS} $A {SEP}",
        pair=f"{CLS} $A {SEP} $B:1 {SEP}:1",
        special_tokens=[(CLS, vocab[CLS]), (SEP, vocab[SEP])],
    )
    tok.add_special_tokens(list(SPECIAL_TOKENS))  # matched before normalisation: "[MASK]" stays one token
    kwargs: dict[str, Any] = {"model_max_length": max_length} if max_length is not None else {}
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token=UNK, pad_token=PAD, cls_token=CLS, sep_token=SEP, mask_token=MASK,
        padding_side="right", model_input_names=["input_ids", "token_type_ids", "attention_mask"], **kwargs,
    )


# --------------------------------------------------------------------------- config


@dataclasses.dataclass(frozen=True)
class MlmConfig:
    """Architecture and training schedule of the small masked LM (defaults: the toy's; see the module doc).

    ``max_length`` is the model's window in tokens, ``[CLS]`` and ``[SEP]`` included
    (``max_position_embeddings``); longer training captions are cut to it. ``warmup`` is the fraction of the
    optimizer steps with a linear learning-rate warm-up; the rate then decays linearly to 0. ``dropout`` is
    BERT's hidden and attention dropout (0 by default: the toy corpus is large for its 130 words).
    """

    hidden: int = 64
    layers: int = 2
    heads: int = 2
    intermediate: int = 128
    max_length: int = 40
    epochs: int = 1
    batch_size: int = 128
    lr: float = 5e-3
    mask_prob: float = 0.15
    weight_decay: float = 0.01
    warmup: float = 0.05
    dropout: float = 0.0
    min_count: int = 1

    def __post_init__(self) -> None:
        for name in ("hidden", "layers", "heads", "intermediate", "epochs", "batch_size", "min_count"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"MlmConfig.{name}={v!r}: must be an int >= 1")
        if isinstance(self.max_length, bool) or not isinstance(self.max_length, int) or self.max_length < 3:
            raise ValueError(f"MlmConfig.max_length={self.max_length!r}: must be an int >= 3 ([CLS] w [SEP])")
        if self.hidden % self.heads:
            raise ValueError(f"MlmConfig.heads={self.heads}: must divide hidden={self.hidden}")
        checks = {
            "lr": (self.lr, lambda v: v > 0, "> 0"),
            "mask_prob": (self.mask_prob, lambda v: 0 < v <= 1, "in (0, 1]"),
            "weight_decay": (self.weight_decay, lambda v: v >= 0, ">= 0"),
            "warmup": (self.warmup, lambda v: 0 <= v < 1, "in [0, 1)"),
            "dropout": (self.dropout, lambda v: 0 <= v < 1, "in [0, 1)"),
        }
        for name, (v, ok, what) in checks.items():
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or not ok(v):
                raise ValueError(f"MlmConfig.{name}={v!r}: must be a number {what}")


# --------------------------------------------------------------------------- masking


def mask_tokens(
    input_ids: torch.Tensor,
    maskable: torch.Tensor,
    *,
    mask_prob: float,
    mask_id: int,
    random_low: int,
    random_high: int,
    generator: torch.Generator,
) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's masking rule: returns ``(inputs, labels)``.

    Each position where ``maskable`` is True is selected with probability ``mask_prob``; a selected position
    becomes ``mask_id`` with probability 0.8, a random id in ``[random_low, random_high)`` with probability
    0.1 (the non-special words: unlike ``DataCollatorForLanguageModeling``, which draws from the whole vocabulary
    and so can insert ``[PAD]`` or ``[CLS]``), and keeps its id otherwise. ``labels`` holds the original id at
    selected positions and :data:`IGNORE_INDEX` elsewhere. Three draws from ``generator``, always in the same
    order and shapes (selection, 80/10/10 split, random ids), so the result is a function of its inputs.
    """
    if input_ids.shape != maskable.shape:
        raise ValueError(f"mask_tokens: input_ids {tuple(input_ids.shape)} and maskable "
                         f"{tuple(maskable.shape)} differ in shape")
    if not random_low < random_high:
        raise ValueError(f"mask_tokens: empty random-token range [{random_low}, {random_high})")
    selected = (torch.rand(input_ids.shape, generator=generator) < mask_prob) & maskable
    split = torch.rand(input_ids.shape, generator=generator)
    random_ids = torch.randint(random_low, random_high, input_ids.shape, generator=generator,
                               dtype=input_ids.dtype)
    labels = torch.where(selected, input_ids, torch.full_like(input_ids, IGNORE_INDEX))
    inputs = torch.where(selected & (split < 0.8), torch.full_like(input_ids, mask_id), input_ids)
    inputs = torch.where(selected & (split >= 0.8) & (split < 0.9), random_ids, inputs)
    return inputs, labels


# --------------------------------------------------------------------------- training


@contextlib.contextmanager
def _global_seed(seed: int) -> Iterator[None]:
    """torch's global generator seeded for a block (weight init, dropout), the caller's state restored."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


def _bert_config(cfg: MlmConfig, tokenizer: PreTrainedTokenizerFast):  # -> BertConfig
    from transformers import BertConfig

    return BertConfig(
        vocab_size=len(tokenizer), hidden_size=cfg.hidden, num_hidden_layers=cfg.layers,
        num_attention_heads=cfg.heads, intermediate_size=cfg.intermediate,
        max_position_embeddings=cfg.max_length, type_vocab_size=2, hidden_dropout_prob=cfg.dropout,
        attention_probs_dropout_prob=cfg.dropout, pad_token_id=tokenizer.pad_token_id,
    )


def init_mlm(tokenizer: PreTrainedTokenizerFast, cfg: MlmConfig, *, seed: int) -> BertForMaskedLM:
    """The random-init ``BertForMaskedLM`` of ``cfg`` over ``tokenizer``'s vocabulary, its weights drawn from
    ``derive_seed(seed, "mlm", "init")`` (what :func:`train_mlm` starts from)."""
    from transformers import BertForMaskedLM

    with _global_seed(derive_seed(seed, "mlm", "init")):
        return BertForMaskedLM(_bert_config(cfg, tokenizer))


def train_mlm(
    corpus: list[str], cfg: MlmConfig, *, seed: int
) -> tuple[BertForMaskedLM, PreTrainedTokenizerFast, list[dict]]:
    """Train a random-init ``BertForMaskedLM`` on ``corpus``; returns ``(model in eval mode, tokenizer, history)``.

    The tokenizer is :func:`word_tokenizer` over ``corpus`` (``cfg.min_count``, ``model_max_length`` =
    ``cfg.max_length``). Each epoch visits every caption once, in consecutive batches of a permutation drawn
    from ``np_rng(seed, "mlm", "batches")`` (length-bucketed batches were tried: 20% faster, but clearly worse
    held-out loss on the toy captions, whose length goes with their style). A batch is padded to its longest
    caption and masked with :func:`mask_tokens` drawing from ``torch_gen(seed, "mlm", "mask")``; the
    prediction head runs on the selected positions only (the loss is ``BertForMaskedLM``'s). AdamW, weight
    decay on the layers' weight matrices only (not on biases, LayerNorms or embeddings), linear warm-up then
    linear decay. A batch in which nothing got selected (possible only for tiny batches) is skipped, its
    step counted. ``history``: one ``{"step", "epoch", "loss"}`` per optimizer step taken.
    """

    if isinstance(corpus, str) or not isinstance(corpus, list | tuple):
        raise ValueError(f"train_mlm: corpus must be a list of str, got {type(corpus).__name__}")
    if not corpus:
        raise ValueError("train_mlm: corpus is empty")
    if not isinstance(cfg, MlmConfig):
        raise ValueError(f"train_mlm: cfg must be an MlmConfig, got {type(cfg).__name__}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise ValueError(f"train_mlm: seed must be an int, got {seed!r}")
    seed = int(seed)
    tokenizer = word_tokenizer(corpus, min_count=cfg.min_count, max_length=cfg.max_length)
    n_special = len(SPECIAL_TOKENS)
    if len(tokenizer) <= n_special:
        raise ValueError("train_mlm: the corpus has no words")
    encoded = tokenizer(list(corpus), add_special_tokens=True, truncation=True, max_length=cfg.max_length,
                        return_attention_mask=False, return_token_type_ids=False)["input_ids"]
    lengths = np.array([len(x) for x in encoded])
    ids = np.full((len(encoded), int(lengths.max())), tokenizer.pad_token_id, dtype=np.int64)
    for i, x in enumerate(encoded):
        ids[i, : len(x)] = x
    all_ids = torch.from_numpy(ids)

    model = init_mlm(tokenizer, cfg, seed=seed)
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and "embeddings" not in n]
    no_decay = [p for n, p in model.named_parameters() if not (p.ndim >= 2 and "embeddings" not in n)]
    optim = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                               {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr)
    steps_per_epoch = math.ceil(len(corpus) / cfg.batch_size)
    total = steps_per_epoch * cfg.epochs
    warm = int(cfg.warmup * total)

    def lr_at(step: int) -> float:  # step counts from 0
        if step < warm:
            return cfg.lr * (step + 1) / warm
        return cfg.lr * max(0.0, (total - step) / max(1, total - warm))

    batch_rng = np_rng(seed, "mlm", "batches")
    mask_gen = torch_gen(seed, "mlm", "mask")
    special = torch.tensor([tokenizer.pad_token_id, tokenizer.cls_token_id, tokenizer.sep_token_id])
    history: list[dict] = []
    step = 0
    model.train()
    with _global_seed(derive_seed(seed, "mlm", "dropout")):
        for epoch in range(cfg.epochs):
            order = batch_rng.permutation(len(corpus))
            for b in range(steps_per_epoch):
                rows = order[b * cfg.batch_size: (b + 1) * cfg.batch_size]
                width = int(lengths[rows].max())
                batch = all_ids[torch.from_numpy(rows), :width]
                inputs, labels = mask_tokens(
                    batch, ~torch.isin(batch, special), mask_prob=cfg.mask_prob,
                    mask_id=tokenizer.mask_token_id, random_low=n_special, random_high=len(tokenizer),
                    generator=mask_gen,
                )
                selected = labels != IGNORE_INDEX
                if not bool(selected.any()):
                    step += 1
                    continue
                for group in optim.param_groups:
                    group["lr"] = lr_at(step)
                # BertForMaskedLM's loss, with the prediction head run on the selected positions only
                hidden = model.bert(input_ids=inputs, attention_mask=(batch != tokenizer.pad_token_id).long())
                logits = model.cls(hidden.last_hidden_state[selected])
                loss = torch.nn.functional.cross_entropy(logits, labels[selected])
                optim.zero_grad(set_to_none=True)
                loss.backward()
                optim.step()
                history.append({"step": step, "epoch": epoch, "loss": float(loss.detach())})
                step += 1
    model.eval()
    return model, tokenizer, history


# --------------------------------------------------------------------------- persistence and pipeline


def save_mlm(model: BertForMaskedLM, tokenizer: PreTrainedTokenizerFast, out_dir: str | Path) -> Path:
    """Write the model (``config.json``, ``model.safetensors``) and the tokenizer (``tokenizer.json``, ...) to
    ``out_dir``; returns it."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def load_mlm(path: str | Path) -> tuple[Any, Any]:
    """Read a masked LM and its tokenizer offline (``local_files_only``); the model is in eval mode.

    ``path`` is a folder written by :func:`save_mlm` (or any ``save_pretrained`` folder of a masked LM), or a
    model id found in the local Hugging Face cache (``distilroberta-base``, the real profile's model). The
    classes come from the folder's ``config.json`` (``AutoModelForMaskedLM``, ``AutoTokenizer``), so a saved
    BERT loads as ``BertForMaskedLM`` with its ``PreTrainedTokenizerFast``. Nothing is downloaded.

    Raises FileNotFoundError naming ``path`` when it is neither such a folder nor a cached model id.
    """
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    where = Path(path)
    if where.is_dir():
        if not (where / "config.json").exists():
            raise FileNotFoundError(f"{where / 'config.json'}: not found; {where} is not a folder written by "
                                    f"save_mlm")
        source = str(where)
    elif where.is_absolute() or str(path).startswith((".", "~")) or len(where.parts) > 2 or where.exists():
        raise FileNotFoundError(f"{path}: masked-LM folder not found (train it with vlcomp.text.mlm.train_mlm "
                                f"and save_mlm)")
    else:
        source = str(path)  # a model id: only the local Hugging Face cache is read
    try:
        model = AutoModelForMaskedLM.from_pretrained(source, local_files_only=True)
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=True)
    except (OSError, ValueError) as err:
        raise FileNotFoundError(f"{path}: masked LM not found (not a folder written by save_mlm, nor a model in "
                                f"the local Hugging Face cache; nothing is downloaded): {err}") from err
    model.eval()
    return model, tokenizer


def fill_mask_pipeline(model: Any, tokenizer: Any, *, top_k: int = 5):  # -> transformers.FillMaskPipeline
    """The transformers ``fill-mask`` pipeline over ``model`` and ``tokenizer``, on CPU, ``top_k`` suggestions."""
    from transformers import pipeline

    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise ValueError(f"fill_mask_pipeline: top_k must be an int >= 1, got {top_k!r}")
    if getattr(tokenizer, "mask_token_id", None) is None:
        raise ValueError(f"fill_mask_pipeline: tokenizer {type(tokenizer).__name__} has no mask token")
    model.eval()
    return pipeline("fill-mask", model=model, tokenizer=tokenizer, device="cpu", top_k=top_k)
