"""Family ``flava``: FLAVA ITM from a tiny HF directory, equal to ARO's call; HF directory errors."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from vlcomp.profiles.real.zoo import build_scorer

from .helpers import TEXTS, bert_tokenizer, check_cross, check_dual, small


@pytest.fixture(scope="module")
def flava_dir(tmp_path_factory):
    from transformers import FlavaConfig, FlavaForPreTraining

    d = tmp_path_factory.mktemp("flava-full")
    tok = bert_tokenizer(d, blip=False)
    config = FlavaConfig(image_config=small(image_size=32, patch_size=16),
                         text_config=small(vocab_size=len(tok), max_position_embeddings=80, pad_token_id=0),
                         multimodal_config=small(), projection_dim=16, hidden_size=32, init_codebook=False)
    torch.manual_seed(0)
    model = FlavaForPreTraining(config)
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(10.0 if p.dim() > 1 else 1.0)
    model.save_pretrained(str(d))
    return d


def test_flava_cross_scorer(flava_dir, images):
    scorer = build_scorer("flava", {"family": "flava", "path": str(flava_dir), "pair_batch": 4})
    assert scorer.retrieval_mode == "dual_view" and scorer.tokens.max_length == 77
    s = check_cross(scorer, images)
    assert ((s > 0) & (s < 1)).all() and s.std() > 1e-4

    # = ARO's call: FlavaForPreTraining(input_ids_masked=input_ids, bool_masked_pos=0), softmax(itm)[:, 1]
    pix = scorer._pixels(images)
    assert pix.shape == (3, 3, 32, 32)
    enc = scorer.tokens(TEXTS)
    with torch.no_grad():
        out = scorer.model(**enc, input_ids_masked=enc["input_ids"], pixel_values=pix,
                           bool_masked_pos=torch.zeros(3, 4, dtype=torch.long), return_loss=False)
    torch.testing.assert_close(scorer.score_pairs(images, TEXTS), torch.softmax(out.itm_logits, -1)[:, 1],
                               atol=1e-5, rtol=0)

    dual = scorer.dual_view()
    fi, ft = check_dual(dual, images)
    with torch.no_grad():
        ref = scorer.model.flava.get_text_features(**enc).pooler_output[:, 0, :]
    torch.testing.assert_close(ft, nn.functional.normalize(ref, dim=-1), atol=1e-6, rtol=0)


def test_hf_directory_errors(flava_dir, tmp_path):
    from safetensors.torch import load_file, save_file

    with pytest.raises(FileNotFoundError, match="nowhere: directory of model 'flava' not found"):
        build_scorer("flava", {"family": "flava", "path": str(tmp_path / "nowhere")})
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="config.json: not found"):
        build_scorer("flava", {"family": "flava", "path": str(tmp_path / "empty")})
    # a FLAVA directory without the ITM head (e.g. a FlavaModel export): not silently random-initialised
    d = tmp_path / "no_itm"
    d.mkdir()
    for f in flava_dir.iterdir():
        (d / f.name).write_bytes(f.read_bytes())
    weights = load_file(str(d / "model.safetensors"))
    kept = {k: v for k, v in weights.items() if not k.startswith("itm_head.")}
    save_file(kept, str(d / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(ValueError, match=r"no_itm: weights do not fit FlavaForPreTraining \(missing itm_h"):
        build_scorer("flava", {"family": "flava", "path": str(d)})
