"""Family ``blip``: BLIP ITM + ITC from a tiny HF directory, equal to transformers' own heads."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from vlcomp.profiles.real.zoo import build_scorer

from .helpers import TEXTS, bert_tokenizer, check_cross, check_dual, small


@pytest.fixture(scope="module")
def blip_dir(tmp_path_factory):
    from transformers import BlipConfig, BlipForImageTextRetrieval

    d = tmp_path_factory.mktemp("blip-itm-base-coco")
    tok = bert_tokenizer(d, blip=True)
    ids = {t: tok.convert_tokens_to_ids(t) for t in ("[PAD]", "[SEP]", "[DEC]")}
    config = BlipConfig(text_config=small(vocab_size=len(tok), max_position_embeddings=40,
                                          pad_token_id=ids["[PAD]"], sep_token_id=ids["[SEP]"],
                                          bos_token_id=ids["[DEC]"]),
                        vision_config=small(image_size=32, patch_size=16), image_text_hidden_size=16)
    torch.manual_seed(0)
    model = BlipForImageTextRetrieval(config)
    with torch.no_grad():  # larger weights than the 0.02-std init, so scores differ visibly between pairs
        for p in model.parameters():
            p.mul_(10.0 if p.dim() > 1 else 1.0)
    model.save_pretrained(str(d))
    return d


def test_blip_cross_scorer(blip_dir, images):
    from PIL import Image as PILImage

    scorer = build_scorer("blip", {"family": "blip", "path": str(blip_dir), "pair_batch": 8})
    assert scorer.retrieval_mode == "rerank" and scorer.k_test == 128
    assert scorer.tokens.max_length == 35
    s = check_cross(scorer, images)
    assert s.std() > 1e-3

    # BLIP's transform_test: 32x32 (the config's size) bicubic, no crop, CLIP mean/std
    x = scorer.preprocess(images[2])
    arr = np.asarray(images[2].resize((32, 32), PILImage.BICUBIC), dtype=np.float32) / 255.0
    mean, std = np.array([0.48145466, 0.4578275, 0.40821073]), np.array([0.26862954, 0.26130258, 0.27577711])
    np.testing.assert_allclose(x.permute(1, 2, 0).numpy(), (arr - mean) / std, atol=1e-5)

    # = transformers' own heads: ITM logit[:, 1] with [ENC] first + ITC cosine with [CLS] first
    model, tok = scorer.model, scorer.tokens
    pix = torch.stack([scorer.preprocess(im) for im in images])
    enc = tok(TEXTS)
    itm_ids = enc["input_ids"].clone()
    itm_ids[:, 0] = scorer.enc_token_id
    with torch.no_grad():
        itm = model(input_ids=itm_ids, pixel_values=pix, attention_mask=enc["attention_mask"]).itm_score[:, 1]
        itc = torch.diagonal(model(input_ids=enc["input_ids"], pixel_values=pix,
                                   attention_mask=enc["attention_mask"], use_itm_head=False).itm_score)
    torch.testing.assert_close(scorer.score_pairs(images, TEXTS), itm + itc, atol=1e-5, rtol=0)

    dual = scorer.dual_view()
    fi, ft = check_dual(dual, images)
    torch.testing.assert_close(torch.diagonal(fi @ ft.T), itc, atol=1e-5, rtol=0)

    cls = build_scorer("blip", {"family": "blip", "path": str(blip_dir), "itm_first_token": "cls"})
    assert cls.enc_token_id is None
    assert not torch.allclose(cls.score_pairs(images, TEXTS), itm + itc, atol=1e-4)


def test_blip_tokenizer_without_enc(blip_dir, tmp_path):
    bert_tokenizer(tmp_path / "tok", blip=False)
    spec = {"family": "blip", "path": str(blip_dir), "tokenizer": str(tmp_path / "tok")}
    with pytest.raises(ValueError, match=r"tok: tokenizer of model 'blip' has no \[ENC\].*'itm_first_token'"):
        build_scorer("blip", spec)
    assert build_scorer("blip", {**spec, "itm_first_token": "cls"}).kind == "cross"
