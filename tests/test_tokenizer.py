"""WorldTokenizer: open_clip's token layout, normalisation, unknown words, vocabulary size."""

from __future__ import annotations

import json
from importlib import resources

import pytest
import torch

from vlcomp.text.tokenizer import TOKENIZERS, WorldTokenizer, get_tokenizer
from vlcomp.world.concepts import world_words

TOK = WorldTokenizer(context_length=12)


def _ids(text: str, tok: WorldTokenizer = TOK) -> list[int]:
    return tok(text)[0].tolist()


def test_layout_start_ids_end_then_zero_padding() -> None:
    out = TOK(["a red circle", "the square"])
    assert out.dtype == torch.long and out.shape == (2, 12)
    ids = TOK.ids
    assert out[0].tolist() == [2, ids["a"], ids["red"], ids["circle"], TOK.EOT] + [0] * 7
    assert out[1].tolist() == [2, ids["the"], ids["square"], TOK.EOT] + [0] * 8


def test_end_token_is_the_largest_id() -> None:
    assert TOK.SOT == 2 and TOK.UNK == 1 and TOK.PAD == 0
    assert TOK.EOT == TOK.vocab_size - 1
    assert TOK.EOT > max(TOK.ids.values())
    assert sorted(TOK.ids.values()) == list(range(3, TOK.EOT))
    out = TOK(["a red circle above a blue square", ""])
    assert (out.argmax(dim=1) == (out != 0).sum(dim=1) - 1).all()  # argmax pooling lands on the EOT


def test_empty_text_is_start_and_end() -> None:
    assert _ids("") == [2, TOK.EOT] + [0] * 10
    assert _ids(" ,. ") == [2, TOK.EOT] + [0] * 10


def test_truncation_keeps_the_end_token_last() -> None:
    long = " ".join(["circle"] * 40)
    row = _ids(long)
    assert len(row) == 12
    assert row[0] == 2 and row[-1] == TOK.EOT
    assert row[1:-1] == [TOK.ids["circle"]] * 10
    exact = " ".join(["circle"] * 10)  # 10 words + SOT + EOT fills the context exactly
    assert _ids(exact) == row
    assert _ids(" ".join(["circle"] * 9))[-1] == 0


def test_case_and_punctuation_insensitive() -> None:
    assert _ids("A Red CIRCLE, above the square.") == _ids("a red circle above the square")
    assert _ids("red-circle") == _ids("red circle")
    assert _ids("  a\tred\ncircle  ") == _ids("a red circle")


def test_unknown_words_map_to_unk() -> None:
    row = _ids("a purple elephant")
    assert row[:5] == [2, TOK.ids["a"], TOK.ids["purple"], TOK.UNK, TOK.EOT]
    assert _ids("circle's")[1:4] == [TOK.ids["circle"], TOK.UNK, TOK.EOT]


def test_single_string_is_one_row() -> None:
    assert TOK("a circle").shape == (1, 12)
    assert torch.equal(TOK("a circle"), TOK(["a circle"]))


def test_every_world_word_has_its_own_id() -> None:
    ids = TOK(world_words())[:, 1]
    assert len(set(ids.tolist())) == len(world_words())
    assert TOK.UNK not in ids.tolist()


CONFIGS = sorted(p.name for p in resources.files("vlcomp.models").joinpath("configs").iterdir()
                 if p.name.endswith(".json"))


def test_the_toy_configs_are_swept() -> None:
    assert {"toy-rn16.json", "toy-rn32.json", "toy-vit-p8.json"} <= set(CONFIGS)


@pytest.mark.parametrize("name", CONFIGS)
def test_vocab_fits_the_model_configs(name: str) -> None:
    cfg = json.loads(resources.files("vlcomp.models").joinpath("configs", name).read_text())
    text = cfg["text_cfg"]
    assert TOK.vocab_size <= text["vocab_size"] == 128
    tok = WorldTokenizer(text["context_length"])
    assert int(tok(world_words()).max()) < text["vocab_size"]


def test_context_length_is_validated() -> None:
    with pytest.raises(ValueError, match=r"clip\.context_length=2"):
        WorldTokenizer(2)
    assert WorldTokenizer(3)("a b c").tolist() == [[2, TOK.ids["a"], TOK.EOT]]


def test_registry_builds_the_world_tokenizer() -> None:
    assert {"world", "open_clip"} <= set(TOKENIZERS.names())
    tok = get_tokenizer("world", "toy-rn16", 16)
    assert isinstance(tok, WorldTokenizer) and tok.context_length == 16
    with pytest.raises(ValueError, match="unknown tokenizer 'bpe'"):
        get_tokenizer("bpe", "toy-rn16", 16)
