"""Shared by the zoo tests: tiny random-init open_clip models saved in the released on-disk formats, the
expected features built without the zoo, the scoring-contract checks, and tiny HF directories' parts."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from vlcomp.models.factory import ModelSpec, create_model
from vlcomp.models.scorers import ImageTextScorer, OpenClipScorer

TEXTS = ["a red circle to the left of a blue square", "a small green star", "the large hollow heart"]
ARCH = "toy-vit-p8"
WORDS = ("a the red green blue small large hollow circle square star heart to left of photo cat").split()


def toy_state(seed: int) -> dict[str, torch.Tensor]:
    return {k: v.clone() for k, v in create_model(ModelSpec(ARCH), init_seed=seed).state_dict().items()}


def clip_spec(**kw) -> dict:
    return {"family": "openclip", "arch": ARCH, "tokenizer": "world", **kw}


def reference(state: dict[str, torch.Tensor], *, quick_gelu: bool) -> OpenClipScorer:
    """The toy model built directly (no zoo) from a state dict: the expected features."""
    import open_clip

    from vlcomp.models.factory import register_toy_configs
    from vlcomp.text.tokenizer import WorldTokenizer

    register_toy_configs()
    model = open_clip.create_model(ARCH, pretrained=None, force_quick_gelu=quick_gelu, output_dict=True)
    model.load_state_dict(state)
    return OpenClipScorer("ref", model, open_clip.image_transform(48, is_train=False), WorldTokenizer(32))


def activations(model: nn.Module) -> set[str]:
    return {type(m).__name__ for n, m in model.named_modules() if n.endswith("mlp.gelu")}


def check_dual(scorer, images) -> tuple[torch.Tensor, torch.Tensor]:
    """Shapes, unit rows, and ``score_pairs`` = diagonal of ``encode_images @ encode_texts.T``."""
    assert scorer.kind == "dual"
    fi, ft = scorer.encode_images(images), scorer.encode_texts(TEXTS)
    assert fi.shape[0] == len(images) and ft.shape[0] == len(TEXTS) and fi.shape[1] == ft.shape[1]
    assert fi.dtype == ft.dtype == torch.float32
    torch.testing.assert_close(fi.norm(dim=1), torch.ones(len(images)), atol=1e-5, rtol=0)
    torch.testing.assert_close(ft.norm(dim=1), torch.ones(len(TEXTS)), atol=1e-5, rtol=0)
    torch.testing.assert_close(scorer.score_pairs(images, TEXTS), torch.diagonal(fi @ ft.T), atol=1e-5,
                               rtol=0)
    return fi, ft


def check_cross(scorer, images) -> torch.Tensor:
    """Deterministic, and scoring all pairs in one batch equals scoring them one at a time."""
    assert scorer.kind == "cross" and isinstance(scorer, ImageTextScorer)
    ims = [images[0], images[0], images[1], images[2], images[1]]
    txt = [TEXTS[0], TEXTS[1], TEXTS[1], TEXTS[2], TEXTS[0]]
    batched = scorer.score_pairs(ims, txt)
    assert batched.shape == (5,) and batched.dtype == torch.float32
    torch.testing.assert_close(scorer.score_pairs(ims, txt), batched, atol=0, rtol=0)
    one = torch.cat([scorer.score_pairs([i], [t]) for i, t in zip(ims, txt, strict=True)])
    torch.testing.assert_close(one, batched, atol=1e-5, rtol=0)
    with pytest.raises(ValueError, match="2 images but 1 texts"):
        scorer.score_pairs(ims[:2], txt[:1])
    with pytest.raises(TypeError, match="cross encoder: use score_pairs, or dual_view"):
        scorer.encode_texts(txt)
    return batched


def bert_tokenizer(directory, *, blip: bool):
    from transformers import BertTokenizerFast

    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS])}
    tok = BertTokenizerFast(vocab=vocab, do_lower_case=True)
    if blip:  # BLIP's init_tokenizer: bos [DEC], additional special token [ENC]
        tok.add_special_tokens({"bos_token": "[DEC]", "additional_special_tokens": ["[ENC]"]})
    tok.save_pretrained(str(directory))
    return tok


def small(**kw) -> dict:
    return {"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 64,
            **kw}
