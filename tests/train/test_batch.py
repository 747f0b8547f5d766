"""Named-block batches: splitting the concatenated features back into blocks and encoding a batch match a naive
per-text / per-image loop; Features.flat; owner checks."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from vlcomp.models.factory import ModelSpec, create_model, to_tensor
from vlcomp.text.tokenizer import get_tokenizer
from vlcomp.train.batch import PAD, Batch, TextBlock, features, split_features
from vlcomp.train.loop import encode_batch

ARCH = "toy-vit-p8"


def _batch() -> Batch:
    mask = np.array([[True, True], [True, False], [True, True]])
    return Batch({"images": np.array([4, 0, 2]), "distractors": np.array([1, 3, 3])},
                 {"captions": TextBlock(["red circle", "blue star", "a square"], np.arange(3)),
                  "negatives": TextBlock(["blue circle", "red circle", "red star", PAD, "a star", "a circle"],
                                         np.array([0, 1, 2]), 2, mask)})


def test_split_features_is_a_per_block_loop() -> None:
    b = _batch()
    img, txt = torch.arange(6 * 2.0).reshape(6, 2), torch.arange(9 * 2.0).reshape(9, 2)
    images, texts = split_features(b, img, txt)
    assert list(images) == ["images", "distractors"] and list(texts) == ["captions", "negatives"]
    row = 0
    for name, idx in b.images.items():
        for i in range(len(idx)):
            assert torch.equal(images[name][i], img[row])
            row += 1
    assert texts["negatives"].shape == (3, 2, 2)
    t = 0
    for name, block in b.texts.items():
        for r in range(block.rows):
            for k in range(block.width or 1):
                got = texts[name][r] if block.width is None else texts[name][r, k]
                assert torch.equal(got, txt[t])
                t += 1


def test_flat_repeats_owners_and_masks() -> None:
    b = _batch()
    images, texts = split_features(b, torch.zeros(6, 2), torch.arange(9 * 2.0).reshape(9, 2))
    f = features(b, images, texts, torch.tensor(1.0))
    neg, owner, valid = f.flat("negatives")
    assert neg.shape == (6, 2) and owner.tolist() == [0, 0, 1, 1, 2, 2]
    assert valid.tolist() == [True, True, True, False, True, True]
    cap, cap_owner, cap_valid = f.flat("captions")
    assert cap.shape == (3, 2) and cap_owner.tolist() == [0, 1, 2] and cap_valid is None
    assert f.image_rows().shape == (6, 2)


def test_encode_batch_matches_encoding_each_image_and_text_alone() -> None:
    torch.manual_seed(0)
    model = create_model(ModelSpec(ARCH), init_seed=0).eval()
    tok = get_tokenizer("world", ARCH, 32)
    pixels = np.random.default_rng(0).integers(0, 256, size=(5, 48, 48, 3), dtype=np.uint8)
    b = _batch()
    with torch.no_grad():
        f = encode_batch(model, b, b, to_tensor(pixels[b.image_rows()], 48), tok(b.all_texts()))
        for name, idx in b.images.items():
            for i, j in enumerate(idx):
                want = model.encode_image(to_tensor(pixels[[j]], 48), normalize=True)[0]
                torch.testing.assert_close(f.images[name][i], want, atol=1e-5, rtol=1e-5)
        for name, block in b.texts.items():
            for r in range(block.rows):
                for k in range(block.width or 1):
                    text = block.texts[r * (block.width or 1) + k]
                    want = model.encode_text(tok([text]), normalize=True)[0]
                    got = f.texts[name][r] if block.width is None else f.texts[name][r, k]
                    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)
    assert f.owner["negatives"].tolist() == [0, 1, 2]
    assert f.mask["negatives"].tolist() == b.texts["negatives"].mask.tolist() and f.mask["captions"] is None


def test_bad_blocks_are_named() -> None:
    with pytest.raises(ValueError, match="text block: 3 texts for 2 rows x 2"):
        TextBlock(["a", "b", "c"], np.arange(2), 2)
    with pytest.raises(ValueError, match="a mask needs a grouped block"):
        TextBlock(["a", "b"], np.arange(2), None, np.ones((2, 1), bool))
    b = Batch({"images": np.arange(2)}, {"captions": TextBlock(["a", "b", "c"], np.array([0, 1, 2]))})
    with pytest.raises(ValueError, match="text block 'captions': owner out of range for 2 image rows"):
        features(b, {"images": torch.zeros(2, 2)}, {"captions": torch.zeros(3, 2)}, torch.tensor(1.0))
