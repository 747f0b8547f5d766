"""TSVLC's LLM-unmasking negatives (paper §3.1.2; reference ``NegativesLLM``; catalog ``tsvlc.md`` §3.4), batched.

A negative of a caption: mask one word of a chosen part of speech, let a masked LM fill it, and put a suggested
word other than the original in its place ("a red circle above a blue square" -> "a red circle below a blue
square"). The masked LM runs behind the stock transformers ``fill-mask`` pipeline (the reference's tool; here
usually :func:`vlcomp.text.mlm.fill_mask_pipeline` over the small caption MLM of :mod:`vlcomp.text.mlm`).

Per caption and per each of its ``k`` slots:

1. *Candidates* (:func:`candidates`): the spaCy tokens whose ``pos_`` is in ``UnmaskConfig.pos`` and that are
   alphabetic words (``Token.is_alpha``: letters only, so no numbers, punctuation, "'s" or hyphen pieces).
   The reference takes spaCy tokens (of the punctuation-stripped caption) that are also whitespace words of
   that caption; ``is_alpha`` on the original caption's parse is the closest equivalent that keeps character
   offsets into the original.
2. *Which word*: one candidate token uniformly (``rng.integers``). This samples the POS in proportion to its
   token count, as the reference code does; the paper says "randomly choose a part-of-speech type, then a
   word of that type" (two-stage, POS types equally likely). The code's behaviour is what is reproduced.
3. *Mask*: exactly that token's character span (spaCy offsets) in the ORIGINAL caption is replaced by the
   tokenizer's mask token. When the masked caption is longer than the model's window
   (``tokenizer.model_max_length``, else ``config.max_position_embeddings``), the text sent to the pipeline
   is the window of tokens centred on the mask (cut at token offsets); the reference instead cuts captions
   over 512 characters to their first 100.
4. *Fill*: the pipeline's ``top_k`` suggestions, minus those equal to the original word (case-insensitive)
   and those that are not words (special tokens, empty strings, punctuation: a suggestion counts as a word
   when its text, stripped of surrounding spaces, is alphanumeric); the distinct survivors are sorted
   alphabetically and one is drawn uniformly (the reference's ``random.choice`` over the survivors in score
   order; same distribution. The sort makes the draw independent of the order of near-equal scores, which
   move in their last bits with a batch's padding). No survivor: no negative for that slot, no draw.
5. *Negative*: the original caption with exactly that token's span replaced by the fill (with its first
   letter upper-cased when the original word started with an upper-case letter: the toy MLM's vocabulary is
   lower-case). Returned with the masked token's POS: ``(negative, pos)``.

A caption's duplicate negatives (two slots giving the same text) are kept once. Captions without a candidate
give ``[]`` and draw nothing.

Deviations from the reference (``tsvlc.md`` §5 items 10-11):

- The reference strips all punctuation and collapses whitespace before parsing and returns the pipeline's
  decoded sequence, so its negative also differs from the positive in punctuation (and spacing, and, with a
  lower-casing tokenizer, case): a shortcut a model could learn. Here only the one word changes.
- POS default: ``("NOUN", "ADP", "ADJ", "VERB")``, the reference README's training command; the reference
  code's ``--llm_neg_types`` default also includes ``PROPN``.
- No synonym filter, as the reference: only the identical word is dropped, so some "negatives" are
  paraphrases ("a cat on a couch" -> "a cat on a sofa"). Faithful, and flagged by the catalog.
- The reference generates one negative per sample, online, in the data loader; here ``k`` per caption,
  offline, with the fill-mask calls batched.

Order of the random draws (what makes the output a pure function of ``(captions, model, rng state)``):
first every mask position, caption by caption and slot by slot; then every fill, in the same order. The
masked texts of all captions are built first, then run through the pipeline, so the output does not depend
on ``batch_size`` and :func:`unmask_negatives` (batched; masked texts sorted by token length so that a batch
holds texts of similar length and pads little) equals :func:`unmask_negatives_one_at_a_time` (one pipeline
call per masked text, as the reference calls it per sample).

Engines of :func:`unmask_negatives`: ``"pipeline"`` (default) calls the pipeline once per batch
(``fill_mask(texts, batch_size=..., top_k=...)``); ``"model"`` (opt-in) does the pipeline's steps itself a batch
at a time (one tokenizer call, one forward, softmax + top-k at the mask, ``decode([id])``), without the
pipeline's per-text Python work, which dominates with a small model. Both give the same output.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

#: The reference README's ``--llm_neg_types`` (its argparse default adds ``PROPN``).
DEFAULT_POS: tuple[str, ...] = ("NOUN", "ADP", "ADJ", "VERB")
#: The reference code's ``--llm_neg_types`` default.
REFERENCE_CODE_POS: tuple[str, ...] = ("VERB", "NOUN", "ADP", "ADJ", "PROPN")
#: A model window larger than this is "no limit" (transformers' default ``model_max_length`` is ~1e30).
_NO_LIMIT = 1_000_000


@dataclasses.dataclass(frozen=True)
class UnmaskConfig:
    """``pos``: the spaCy coarse tags whose words may be masked (a tuple of non-empty str). Default: the
    reference README's training command (``--llm_neg_types NOUN ADP ADJ VERB``); the reference code's argparse
    default also includes ``PROPN`` (:data:`REFERENCE_CODE_POS`). ``top_k``: the pipeline's number of
    suggestions (5, the pipeline's and the reference's default). ``batch_size``: masked texts per pipeline
    call (per forward with ``engine="model"``) in :func:`unmask_negatives`; the output does not depend on it.
    64 was kept after ``perf/bench_fill_mask.py``'s sweep: 16-256 were within 15% (noise) for the pipeline
    engine; the model engine gains 12% from 64 to 128 and little more at 256."""

    pos: tuple[str, ...] = DEFAULT_POS
    top_k: int = 5
    batch_size: int = 64

    def __post_init__(self) -> None:
        if isinstance(self.pos, str) or not isinstance(self.pos, Sequence) or not self.pos:
            raise ValueError(f"UnmaskConfig.pos={self.pos!r}: must be a non-empty tuple of POS tags")
        for p in self.pos:
            if not isinstance(p, str) or not p:
                raise ValueError(f"UnmaskConfig.pos={self.pos!r}: every tag must be a non-empty str, got {p!r}")
        object.__setattr__(self, "pos", tuple(self.pos))
        for name in ("top_k", "batch_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"UnmaskConfig.{name}={v!r}: must be an int >= 1")


def candidates(doc: Doc, pos: Sequence[str]) -> list[Token]:
    """The tokens of ``doc`` that may be masked: ``pos_`` in ``pos`` and alphabetic (``Token.is_alpha``)."""
    wanted = frozenset(pos)
    return [t for t in doc if t.pos_ in wanted and t.is_alpha]


# --------------------------------------------------------------------------- shared steps


@dataclasses.dataclass(frozen=True)
class _Slot:
    caption: int
    start: int  # character span of the masked token in the original caption
    end: int
    word: str
    pos: str


def _check_args(captions: object, docs: object, fill_mask: object, rng: object, k: object, cfg: object,
                where: str) -> tuple[list[str], list, Any]:
    if isinstance(captions, str) or not isinstance(captions, Sequence):
        raise ValueError(f"{where}: captions must be a list of str, got {type(captions).__name__}")
    captions = list(captions)
    for i, c in enumerate(captions):
        if not isinstance(c, str):
            raise ValueError(f"{where}: captions[{i}] is {type(c).__name__}, not str: {c!r}")
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"{where}: rng must be a numpy.random.Generator (e.g. vlcomp.seeding.np_rng(seed, ...)), "
                         f"got {type(rng).__name__}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"{where}: k must be an int >= 1, got {k!r}")
    if not isinstance(cfg, UnmaskConfig):
        raise ValueError(f"{where}: cfg must be an UnmaskConfig, got {type(cfg).__name__}")
    tokenizer = getattr(fill_mask, "tokenizer", None)
    if tokenizer is None or not callable(fill_mask):
        raise ValueError(f"{where}: fill_mask must be a transformers fill-mask pipeline (with a tokenizer), "
                         f"got {type(fill_mask).__name__}")
    mask = getattr(tokenizer, "mask_token", None)
    if not mask or getattr(tokenizer, "mask_token_id", None) is None:
        raise ValueError(f"{where}: the pipeline's tokenizer {type(tokenizer).__name__} has no mask token")
    for i, c in enumerate(captions):
        if mask in c:
            raise ValueError(f"{where}: captions[{i}] contains the mask token {mask!r}: {c!r}")
    if docs is None:
        from .nlp import load_spacy

        docs = list(load_spacy().pipe(captions, batch_size=256))
    else:
        if isinstance(docs, str) or not isinstance(docs, Sequence):
            raise ValueError(f"{where}: docs must be a list of spaCy Docs (or None), got {type(docs).__name__}")
        if len(docs) != len(captions):
            raise ValueError(f"{where}: {len(docs)} docs given for {len(captions)} captions")
        for i, (c, d) in enumerate(zip(captions, docs, strict=True)):
            if getattr(d, "text", None) != c:
                raise ValueError(f"{where}: docs[{i}] is not the parse of captions[{i}] {c!r}")
    return captions, list(docs), tokenizer


def _draw_slots(docs: list, rng: np.random.Generator, k: int, pos: Sequence[str]) -> list[list[_Slot]]:
    """Step 2 for every caption and slot, in caption order: one ``rng.integers`` per slot of a caption that
    has candidates."""
    out: list[list[_Slot]] = []
    for i, doc in enumerate(docs):
        cands = candidates(doc, pos)
        slots = []
        if cands:
            for _ in range(k):
                t = cands[int(rng.integers(len(cands)))]
                slots.append(_Slot(i, t.idx, t.idx + len(t.text), t.text, t.pos_))
        out.append(slots)
    return out


def _window_limit(fill_mask: Any) -> int | None:
    tokenizer = fill_mask.tokenizer
    limit = getattr(tokenizer, "model_max_length", None)
    if isinstance(limit, int) and 0 < limit < _NO_LIMIT:
        return limit
    limit = getattr(getattr(getattr(fill_mask, "model", None), "config", None), "max_position_embeddings", None)
    return limit if isinstance(limit, int) and 0 < limit < _NO_LIMIT else None


def _masked_texts(captions: list[str], slots: list[_Slot], fill_mask: Any) -> tuple[list[str], list[int]]:
    """Step 3: the texts for the pipeline (one per slot) and their lengths in tokens, specials included."""
    tokenizer = fill_mask.tokenizer
    mask = tokenizer.mask_token
    texts = [captions[s.caption][: s.start] + mask + captions[s.caption][s.end:] for s in slots]
    if not texts:
        return [], []
    n_special = tokenizer.num_special_tokens_to_add()
    limit = _window_limit(fill_mask)
    fast = bool(getattr(tokenizer, "is_fast", False))
    enc = tokenizer(texts, add_special_tokens=False, return_offsets_mapping=fast, return_attention_mask=False,
                    return_token_type_ids=False, verbose=False)
    if not fast:
        enc["offset_mapping"] = [None] * len(texts)
    lengths = []
    for j, (ids, offsets) in enumerate(zip(enc["input_ids"], enc["offset_mapping"], strict=True)):
        if limit is not None and len(ids) + n_special > limit:
            width = limit - n_special
            if width < 1:
                raise ValueError(f"the fill-mask model's window ({limit} tokens) has no room for a word")
            if offsets is None:
                raise ValueError(f"a masked caption is longer than the fill-mask model's window ({limit} tokens); "
                                 f"cutting it to a window needs a fast tokenizer (offsets): {texts[j]!r}")
            m = ids.index(tokenizer.mask_token_id)
            lo = min(max(0, m - width // 2), len(ids) - width)
            texts[j] = texts[j][offsets[lo][0]: offsets[lo + width - 1][1]]
            lengths.append(limit)
        else:
            lengths.append(len(ids) + n_special)
    return texts, lengths


def _is_word(text: str, special: frozenset[str]) -> bool:
    return bool(text) and text not in special and text.isalnum()


def _choose(captions: list[str], slots: list[list[_Slot]], fills: list[list[dict]], tokenizer: Any,
            rng: np.random.Generator) -> list[list[tuple[str, str]]]:
    """Steps 4-5 for every caption and slot, in caption order (one ``rng.integers`` per slot with a survivor)."""
    special = frozenset(getattr(tokenizer, "all_special_tokens", ()))
    out: list[list[tuple[str, str]]] = []
    j = 0
    for caption, caption_slots in zip(captions, slots, strict=True):
        negatives: list[tuple[str, str]] = []
        for s in caption_slots:
            suggestions = fills[j]
            j += 1
            original = s.word.lower()
            words = sorted({w for w in (str(d.get("token_str", "")).strip() for d in suggestions)
                            if _is_word(w, special) and w.lower() != original})
            if not words:
                continue
            fill = words[int(rng.integers(len(words)))]
            if s.word[:1].isupper() and fill[:1].islower():
                fill = fill[:1].upper() + fill[1:]
            negative = (caption[: s.start] + fill + caption[s.end:], s.pos)
            if negative not in negatives:
                negatives.append(negative)
        out.append(negatives)
    return out


def _as_rows(result: Any, n: int) -> list[list[dict]]:
    """The pipeline's answer for ``n`` texts as one list of suggestions per text (it unwraps a 1-item list)."""
    if n == 1 and result and isinstance(result[0], dict):
        return [result]
    return list(result)


def _run(captions, docs, fill_mask, rng, k, cfg, where: str,
         call: Callable[[Any, list[str], list[int], UnmaskConfig], list[list[dict]]]) -> list[list[tuple[str, str]]]:
    captions, docs, tokenizer = _check_args(captions, docs, fill_mask, rng, k, cfg, where)
    slots = _draw_slots(docs, rng, k, cfg.pos)
    flat = [s for caption_slots in slots for s in caption_slots]
    texts, lengths = _masked_texts(captions, flat, fill_mask)
    fills = call(fill_mask, texts, lengths, cfg) if texts else []
    if len(fills) != len(texts):
        raise RuntimeError(f"{where}: the pipeline returned {len(fills)} answers for {len(texts)} texts")
    return _choose(captions, slots, fills, tokenizer, rng)


def _batched(fill_mask: Any, texts: list[str], lengths: list[int], cfg: UnmaskConfig) -> list[list[dict]]:
    order = sorted(range(len(texts)), key=lambda j: lengths[j])  # stable: ties keep the caption order
    fills: list[list[dict]] = [[] for _ in texts]
    for b in range(0, len(order), cfg.batch_size):
        idx = order[b: b + cfg.batch_size]
        rows = _as_rows(fill_mask([texts[j] for j in idx], batch_size=cfg.batch_size, top_k=cfg.top_k), len(idx))
        if len(rows) != len(idx):
            raise RuntimeError(f"unmask_negatives: the pipeline returned {len(rows)} answers for {len(idx)} texts")
        for j, row in zip(idx, rows, strict=True):
            fills[j] = row
    return fills


def _encoder_and_head(model: Any) -> tuple[Any, Any] | None:
    """``(encoder, prediction head)`` of a masked LM whose ``forward`` is ``head(encoder(...)[0])`` with a
    position-wise head (BERT, RoBERTa); None for other models (they get the full forward)."""
    from transformers import BertForMaskedLM, RobertaForMaskedLM

    if type(model) is BertForMaskedLM:
        return model.bert, model.cls
    if type(model) is RobertaForMaskedLM:
        return model.roberta, model.lm_head
    return None


def _batched_model(fill_mask: Any, texts: list[str], lengths: list[int], cfg: UnmaskConfig) -> list[list[dict]]:
    """``engine="model"``: the pipeline's own steps, a batch at a time: one tokenizer call (padded as the
    pipeline's collate pads), one forward (for BERT and RoBERTa masked LMs: the encoder, then the prediction
    head on the mask positions only, the rest of its output being unused), softmax at the mask and ``topk`` (as
    ``FillMaskPipeline.postprocess``), ``token_str = tokenizer.decode([id])`` (cached per id)."""
    import torch

    tokenizer, model = fill_mask.tokenizer, fill_mask.model
    mask_id = tokenizer.mask_token_id
    split = _encoder_and_head(model)
    strings: dict[int, str] = {}
    order = sorted(range(len(texts)), key=lambda j: lengths[j])
    fills: list[list[dict]] = [[] for _ in texts]
    for b in range(0, len(order), cfg.batch_size):
        idx = order[b: b + cfg.batch_size]
        enc = tokenizer([texts[j] for j in idx], padding=True, return_tensors="pt")
        rows, cols = (enc["input_ids"] == mask_id).nonzero(as_tuple=True)
        if rows.tolist() != list(range(len(idx))):
            raise RuntimeError("unmask_negatives: a masked text does not hold exactly one mask token")
        with torch.inference_mode():
            if split is not None:  # the encoder on the batch, the position-wise head at the masks only
                logits = split[1](split[0](**enc).last_hidden_state[rows, cols])
            else:
                logits = model(**enc).logits[rows, cols]
        values, ids = logits.softmax(dim=-1).topk(min(cfg.top_k, logits.shape[-1]))
        for j, vs, ps in zip(idx, values.tolist(), ids.tolist(), strict=True):
            for p in ps:
                if p not in strings:
                    strings[p] = tokenizer.decode([p])
            fills[j] = [{"score": v, "token": p, "token_str": strings[p]} for v, p in zip(vs, ps, strict=True)]
    return fills


def _one_at_a_time(fill_mask: Any, texts: list[str], lengths: list[int], cfg: UnmaskConfig) -> list[list[dict]]:
    return [fill_mask(text, top_k=cfg.top_k) for text in texts]


# --------------------------------------------------------------------------- public


def unmask_negatives(
    captions: Sequence[str],
    docs: Sequence[Doc] | None,
    fill_mask: Any,
    rng: np.random.Generator,
    *,
    k: int = 1,
    cfg: UnmaskConfig = UnmaskConfig(),  # noqa: B008 (frozen, so a shared default is safe)
    engine: str = "pipeline",
) -> list[list[tuple[str, str]]]:
    """Up to ``k`` ``(negative caption, POS)`` pairs per caption (module doc), the fill-mask calls batched.

    ``docs``: the spaCy parses of ``captions`` (``Doc.text`` must equal the caption; tagger and
    attribute_ruler needed for ``pos_``), or None to parse them with :func:`vlcomp.text.nlp.load_spacy`.
    ``fill_mask``: a transformers ``fill-mask`` pipeline. All masked texts are built first, sorted by token
    length, and sent in chunks of ``cfg.batch_size``, one pipeline call per chunk
    (``fill_mask(texts, batch_size=cfg.batch_size, top_k=cfg.top_k)``). The result equals
    :func:`unmask_negatives_one_at_a_time` and does not depend on ``cfg.batch_size``.

    ``engine="model"`` (opt-in) skips the pipeline's per-text pre- and post-processing: each chunk is
    tokenised in one call and scored by one forward of ``fill_mask.model`` (BERT / RoBERTa: the prediction
    head on the mask positions only), the top ``cfg.top_k`` taken from the softmax at the mask and named with
    ``tokenizer.decode([id])``, which is what the pipeline computes per text. With a small model the
    pipeline's per-text Python work (a tokenizer call, 2 x top_k decodes, tensor copies: about 1 ms per text
    here) dominates and caps the pipeline engine's gain from batching. ``perf/bench_fill_mask.py`` on the
    25,010 Karpathy-test captions (toy-default MLM, 1 thread): one-at-a-time 264 captions/s, pipeline engine
    933/s (3.5x), model engine 3,366/s (12.7x), all three outputs identical.

    Raises ValueError for a caption that is not a str (or contains the mask token), ``k`` < 1, an ``rng``
    that is not a numpy Generator, docs that do not match the captions, or a pipeline without a mask token.
    """
    engines = {"pipeline": _batched, "model": _batched_model}
    if engine not in engines:
        raise ValueError(f"unmask_negatives: engine must be one of {sorted(engines)}, got {engine!r}")
    if engine == "model" and getattr(fill_mask, "model", None) is None:
        raise ValueError("unmask_negatives: engine='model' needs a pipeline with a .model")
    return _run(captions, docs, fill_mask, rng, k, cfg, "unmask_negatives", engines[engine])


def unmask_negatives_one_at_a_time(
    captions: Sequence[str],
    docs: Sequence[Doc] | None,
    fill_mask: Any,
    rng: np.random.Generator,
    *,
    k: int = 1,
    cfg: UnmaskConfig = UnmaskConfig(),  # noqa: B008
) -> list[list[tuple[str, str]]]:
    """:func:`unmask_negatives` with one pipeline call per masked text (``fill_mask(text, top_k=...)``), as
    the reference calls the pipeline once per sample: the same random draws in the same order, the same
    output. The baseline of ``perf/bench_fill_mask.py``; ``cfg.batch_size`` is not used."""
    return _run(captions, docs, fill_mask, rng, k, cfg, "unmask_negatives_one_at_a_time", _one_at_a_time)
