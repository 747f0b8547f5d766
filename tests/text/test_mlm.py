"""The small caption masked LM: tokenizer, BERT masking rule, reproducible training, save/load, fill-mask."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from vlcomp.text.mlm import (
    IGNORE_INDEX,
    SPECIAL_TOKENS,
    MlmConfig,
    fill_mask_pipeline,
    load_mlm,
    mask_tokens,
    save_mlm,
    train_mlm,
    word_tokenizer,
)

COLOURS = ("red", "blue", "green", "yellow")
SHAPES = ("circle", "square", "triangle", "star")
RELATIONS = ("above", "below", "left of", "right of", "near")
#: A tiny model: trains on the 200 toy captions in about a second.
TINY = MlmConfig(hidden=16, layers=1, heads=2, intermediate=32, max_length=12, epochs=3, batch_size=32, lr=1e-2)


def toy_captions(n: int = 200, seed: int = 0) -> list[str]:
    """``n`` captions like "a red circle above a blue square"."""
    rng = np.random.default_rng(seed)
    return [f"a {rng.choice(COLOURS)} {rng.choice(SHAPES)} {rng.choice(RELATIONS)} a {rng.choice(COLOURS)} "
            f"{rng.choice(SHAPES)}" for _ in range(n)]


@pytest.fixture(scope="module")
def trained():
    return train_mlm(toy_captions(), TINY, seed=0)


# --------------------------------------------------------------------------- tokenizer


def test_tokenizer_vocabulary_order_and_specials() -> None:
    tok = word_tokenizer(["b a a", "c b a.", "d"])
    vocab = tok.get_vocab()
    ordered = sorted(vocab, key=vocab.get)
    # specials first, then by descending count (a:3, b:2), ties alphabetically (".", c, d: 1 each)
    assert ordered == [*SPECIAL_TOKENS, "a", "b", ".", "c", "d"]
    assert (tok.pad_token_id, tok.unk_token_id, tok.cls_token_id, tok.sep_token_id, tok.mask_token_id) == (
        0, 1, 2, 3, 4)
    assert tok.mask_token == "[MASK]" and tok.pad_token == "[PAD]"
    # the same corpus in another order gives the same vocabulary
    assert word_tokenizer(["d", "c b a.", "b a a"]).get_vocab() == vocab


def test_tokenizer_round_trip() -> None:
    tok = word_tokenizer(toy_captions() + ["A red circle, above a blue square."])
    text = "A red circle, above a blue square."
    ids = tok(text)["input_ids"]
    assert tok.convert_ids_to_tokens(ids) == ["[CLS]", "a", "red", "circle", ",", "above", "a", "blue",
                                              "square", ".", "[SEP]"]
    assert tok.decode(ids, skip_special_tokens=True) == "a red circle , above a blue square ."
    # unknown words map to [UNK]; the mask token stays one token, also next to punctuation
    assert tok.convert_ids_to_tokens(tok("a purple [MASK].")["input_ids"]) == [
        "[CLS]", "a", "[UNK]", "[MASK]", ".", "[SEP]"]
    pair = tok("a red", "a blue")
    assert pair["input_ids"] == [2, *tok("a red", add_special_tokens=False)["input_ids"], 3,
                                 *tok("a blue", add_special_tokens=False)["input_ids"], 3]
    assert pair["token_type_ids"] == [0, 0, 0, 0, 1, 1, 1]


def test_tokenizer_min_count_and_errors() -> None:
    tok = word_tokenizer(["a a b"], min_count=2)
    assert sorted(tok.get_vocab(), key=tok.get_vocab().get) == [*SPECIAL_TOKENS, "a"]
    with pytest.raises(ValueError, match="min_count"):
        word_tokenizer(["a"], min_count=0)
    with pytest.raises(ValueError, match=r"corpus\[1\]"):
        word_tokenizer(["a", 3])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="single str"):
        word_tokenizer("a b c")
    assert word_tokenizer(["a"], max_length=12).model_max_length == 12


# --------------------------------------------------------------------------- config and masking


@pytest.mark.parametrize(("field", "value"), [("hidden", 0), ("layers", 1.5), ("heads", 3), ("epochs", 0),
                                              ("batch_size", True), ("max_length", 2), ("lr", 0.0),
                                              ("mask_prob", 0.0), ("mask_prob", 1.5), ("weight_decay", -1.0),
                                              ("warmup", 1.0), ("dropout", float("nan")), ("min_count", 0)])
def test_config_validation_names_the_field(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=f"MlmConfig.{field}"):
        MlmConfig(**{field: value})


def test_mask_rule_proportions() -> None:
    n_rows, width, vocab = 2000, 50, 40
    ids = torch.randint(5, vocab, (n_rows, width), generator=torch.Generator().manual_seed(1))
    maskable = torch.ones_like(ids, dtype=torch.bool)
    maskable[:, 0] = False  # e.g. [CLS]
    kwargs = {"mask_prob": 0.15, "mask_id": 4, "random_low": 5, "random_high": vocab}
    inputs, labels = mask_tokens(ids, maskable, generator=torch.Generator().manual_seed(0), **kwargs)
    selected = labels != IGNORE_INDEX
    assert not selected[:, 0].any() and torch.equal(inputs[:, 0], ids[:, 0])
    assert torch.equal(labels[selected], ids[selected])
    assert torch.equal(inputs[~selected], ids[~selected])
    n_sel = int(selected.sum())
    assert abs(n_sel / int(maskable.sum()) - 0.15) < 0.005
    as_mask = float((inputs[selected] == 4).sum()) / n_sel
    changed = float(((inputs[selected] != 4) & (inputs[selected] != ids[selected])).sum()) / n_sel
    kept = float((inputs[selected] == ids[selected]).sum()) / n_sel
    assert abs(as_mask - 0.8) < 0.01
    # a random id equals the original with probability 1/35, which moves a little mass from "changed" to "kept"
    assert abs(changed - 0.1 * (1 - 1 / 35)) < 0.008 and abs(kept - 0.1 * (1 + 1 / 35)) < 0.008
    random_ids = inputs[selected & (inputs != 4) & (inputs != ids)]
    assert random_ids.min() >= 5 and random_ids.max() < vocab  # never a special token
    again = mask_tokens(ids, maskable, generator=torch.Generator().manual_seed(0), **kwargs)
    assert torch.equal(again[0], inputs) and torch.equal(again[1], labels)
    other = mask_tokens(ids, maskable, generator=torch.Generator().manual_seed(1), **kwargs)
    assert not torch.equal(other[1], labels)


# --------------------------------------------------------------------------- training


def test_training_is_bitwise_reproducible_and_leaves_global_rng_alone(trained) -> None:
    torch_state, np_state = torch.get_rng_state(), np.random.get_state()[1].copy()
    model2, tok2, hist2 = train_mlm(toy_captions(), TINY, seed=0)
    assert torch.equal(torch.get_rng_state(), torch_state)
    assert np.array_equal(np.random.get_state()[1], np_state)
    model, tok, hist = trained
    assert hist == hist2
    assert tok.get_vocab() == tok2.get_vocab()
    sd, sd2 = model.state_dict(), model2.state_dict()
    assert sd.keys() == sd2.keys()
    for name in sd:
        assert torch.equal(sd[name], sd2[name]), name
    model3, _, hist3 = train_mlm(toy_captions(), TINY, seed=1)
    assert hist3 != hist
    assert not torch.equal(model3.state_dict()["bert.embeddings.word_embeddings.weight"],
                           sd["bert.embeddings.word_embeddings.weight"])


def test_training_history_and_model(trained) -> None:
    model, tok, hist = trained
    assert not model.training
    assert model.config.max_position_embeddings == TINY.max_length == tok.model_max_length
    assert model.config.vocab_size == len(tok) == len(SPECIAL_TOKENS) + 15  # a, 4 colours, 4 shapes, 6 relation words
    steps_per_epoch = -(-200 // TINY.batch_size)
    assert [h["step"] for h in hist] == list(range(steps_per_epoch * TINY.epochs))
    assert all(set(h) == {"step", "epoch", "loss"} for h in hist)
    assert np.mean([h["loss"] for h in hist[-5:]]) < np.mean([h["loss"] for h in hist[:5]]) - 0.5


def test_fill_mask_learns_the_toy_grammar(trained) -> None:
    model, tok, _ = trained
    fm = fill_mask_pipeline(model, tok, top_k=5)
    out = fm("a red [MASK] above a blue square")
    assert len(out) == 5 and all(set(d) >= {"score", "token", "token_str", "sequence"} for d in out)
    assert out[0]["token_str"] in SHAPES  # after 3 epochs the top fill of a shape slot is a shape


def test_train_mlm_errors() -> None:
    with pytest.raises(ValueError, match="empty"):
        train_mlm([], TINY, seed=0)
    with pytest.raises(ValueError, match="MlmConfig"):
        train_mlm(["a b"], {"hidden": 16}, seed=0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="seed"):
        train_mlm(["a b"], TINY, seed="0")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="top_k"):
        fill_mask_pipeline(None, None, top_k=0)


# --------------------------------------------------------------------------- save / load


def test_save_load_round_trip(trained, tmp_path) -> None:
    model, tok, _ = trained
    out = save_mlm(model, tok, tmp_path / "mlm")
    assert (out / "model.safetensors").exists() and (out / "tokenizer.json").exists()
    model2, tok2 = load_mlm(out)
    assert type(model2) is type(model) and not model2.training
    assert tok2.get_vocab() == tok.get_vocab() and tok2.mask_token == "[MASK]"
    assert tok2.model_max_length == tok.model_max_length
    for name, t in model.state_dict().items():
        assert torch.equal(t, model2.state_dict()[name]), name
    texts = ["a red [MASK] above a blue square", "a [MASK] circle near a green star", "a blue star [MASK] a red"]
    assert fill_mask_pipeline(model2, tok2)(texts) == fill_mask_pipeline(model, tok)(texts)


def test_load_missing_folder_names_it(tmp_path) -> None:
    missing = tmp_path / "no_such_mlm"
    with pytest.raises(FileNotFoundError, match="no_such_mlm"):
        load_mlm(missing)
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="config.json"):
        load_mlm(tmp_path / "empty")
    with pytest.raises(FileNotFoundError, match="no-such-org/no-such-mlm"):  # a model id not in the local cache
        load_mlm("no-such-org/no-such-mlm")


def test_config_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        MlmConfig().hidden = 8  # type: ignore[misc]
