"""Saved parses (the parse stage): mining from them gives the very negatives mining from a fresh parse gives, on
real COCO captions (skipped when ../shared/real_samples is absent) and on toy captions; stale files are refused."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vlcomp.text.negclip_swaps import mine_negatives
from vlcomp.text.nlp import load_spacy
from vlcomp.text.parsed import parse_captions, read_parses, write_parses

REAL_CAPTIONS = Path(__file__).resolve().parents[2].parent / "shared" / "real_samples" / "coco_karpathy_test.json"
TOY = ["a red circle to the left of a blue square", "two shapes: a moon and a hexagon",
       "a small dotted star above a large striped heart and a cyan diamond",
       "A purple arrow pointing at a white cross."]


@pytest.fixture(scope="module")
def nlp():
    return load_spacy()


def _captions() -> list[str]:
    if not REAL_CAPTIONS.exists():
        return TOY
    records = json.loads(REAL_CAPTIONS.read_text())
    return [c for r in records for c in r["caption"]][:400] + TOY


@pytest.mark.spacy
def test_mining_from_saved_parses_equals_mining_from_a_fresh_parse(nlp, tmp_path):
    captions = _captions()
    write_parses(tmp_path, parse_captions(captions, nlp), nlp, "coco_train")
    docs = read_parses(tmp_path, nlp, captions)
    fresh = mine_negatives(captions, np.random.default_rng(3), nlp, max_negatives=5)
    saved = mine_negatives(captions, np.random.default_rng(3), nlp, docs=docs, max_negatives=5)
    assert saved == fresh and sum(map(len, fresh)) > 0


@pytest.mark.spacy
def test_stale_parses_are_refused_with_the_path(nlp, tmp_path):
    write_parses(tmp_path, parse_captions(TOY, nlp), nlp, "coco_train")
    with pytest.raises(ValueError, match=r"docs.spacy: 4 parsed captions, the split has 3"):
        read_parses(tmp_path, nlp, TOY[:3])
    with pytest.raises(ValueError, match=r"docs.spacy: caption 1 was parsed as 'two shapes"):
        read_parses(tmp_path, nlp, [TOY[0], "something else", *TOY[2:]])
    summary = json.loads((tmp_path / "summary.json").read_text())
    (tmp_path / "summary.json").write_text(json.dumps({**summary, "spacy_pipeline": "en_other-1.0"}))
    with pytest.raises(ValueError, match="parsed with 'en_other-1.0'"):
        read_parses(tmp_path, nlp, TOY)
    with pytest.raises(FileNotFoundError, match="missing/summary.json: parsed captions not found"):
        read_parses(tmp_path / "missing", nlp, TOY)
