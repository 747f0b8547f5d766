"""The zoo's registry and spec schema: every family registered, every spec mistake names model and key."""

from __future__ import annotations

import pytest

from vlcomp.profiles.real.zoo import ZOO, build_scorer

from .helpers import ARCH, clip_spec


def test_families_registered():
    assert ZOO.names() == ["blip", "conclip", "flava", "openclip", "tsvlc"]


@pytest.mark.parametrize("spec, key", [
    ({"arch": ARCH, "weights": None}, "family"),
    ({"family": "clipx", "arch": ARCH, "weights": None}, "family"),
    ({"family": "openclip", "weights": None}, "arch"),
    ({"family": "openclip", "arch": ARCH}, "weights"),
    (clip_spec(weights=None, pretrained="openai"), "pretrained"),
    (clip_spec(weights=None, image_batch=True), "image_batch"),
    (clip_spec(weights=None, image_batch=0), "image_batch"),
    (clip_spec(weights=3), "weights"),
    (clip_spec(weights=None, tokenizer="bpe"), "tokenizer"),
    ({"family": "tsvlc", "arch": ARCH, "weights": None, "adapter": "/x.pt", "lora_r": "4"}, "lora_r"),
    ({"family": "blip"}, "path"),
    ({"family": "blip", "path": "/x", "itm_first_token": "sep"}, "itm_first_token"),
    ({"family": "flava", "path": "/x", "k_test": 5}, "k_test"),
])
def test_bad_spec_names_model_and_key(spec, key):
    with pytest.raises(ValueError, match=rf"model 'm'.*'{key}'"):
        build_scorer("m", spec)


def test_spec_not_a_mapping():
    with pytest.raises(ValueError, match="model 'm': spec must be a mapping"):
        build_scorer("m", ["openclip"])
