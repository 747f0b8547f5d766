"""The runners on real annotation files (``../shared/real_samples``; skipped when absent): SugarCrepe's
``swap_obj.json`` (non-contiguous ids, raw captions with trailing spaces) and the COCO Karpathy test captions,
with synthetic images standing in for COCO's. Batched and naive must agree on every item."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vlcomp.benchmarks import BENCHMARKS
from vlcomp.eval.engine import EngineOptions

from .helpers import toy_scorer, write_noise
from .test_runners import _has_spacy

pytestmark = pytest.mark.realdata


def _need(real_samples, name):
    path = real_samples / name
    if not path.exists():
        pytest.skip(f"real sample {path} not found")
    return path


def _assert_same(batched, naive):
    for t, df in batched.items():
        for col in df.columns:
            if df[col].dtype.kind == "f":
                np.testing.assert_allclose(df[col], naive[t][col], atol=1e-5, err_msg=f"{t}.{col}")
            else:
                assert df[col].tolist() == naive[t][col].tolist(), f"{t}.{col}"


def test_sugarcrepe_real_swap_obj(tmp_path, real_samples):
    src = _need(real_samples, "sugarcrepe_swap_obj.json")
    data = json.loads(src.read_text())
    d = tmp_path / "data"
    d.mkdir()
    (d / "swap_obj.json").write_text(src.read_text())  # a temp copy under the name the loader expects
    files = sorted({r["filename"] for r in data.values()})
    for i, fn in enumerate(files):
        write_noise(tmp_path / "val2017" / fn, seed=i, size=(24, 20))
    inputs = {"sugarcrepe_dir": str(d), "coco_val2017_images": str(tmp_path / "val2017"),
              "sugarcrepe_categories": ["swap_obj"]}
    bench = BENCHMARKS.get("sugarcrepe")
    batched = bench.run(toy_scorer(), inputs, EngineOptions(image_chunk=64))
    df = batched["sugarcrepe"]
    assert len(df) == 245 and "108" not in set(df["id"]) and df["filename"].nunique() == len(files)
    assert df["caption"].str.endswith(" ").any()  # raw captions kept
    _assert_same(batched, bench.run_naive(toy_scorer(), inputs))
    m = bench.aggregate(batched)
    assert m["sugarcrepe/swap_obj/n"] == 245 and 0 <= m["sugarcrepe/swap_obj/acc"] <= 1


@pytest.mark.parametrize("name", [
    "coco_retrieval",
    pytest.param("coco_order", marks=[pytest.mark.spacy,
                                      pytest.mark.skipif(not _has_spacy(), reason="spaCy pipeline not installed")]),
])
def test_karpathy_real_captions(tmp_path, real_samples, name):
    records = json.loads(_need(real_samples, "coco_karpathy_test.json").read_text())[:12]
    ann = tmp_path / "coco_karpathy_test.json"
    ann.write_text(json.dumps(records))  # a 12-image slice, in a temp dir
    for i, r in enumerate(records):
        write_noise(tmp_path / "images" / r["image"], seed=i, size=(24, 20))
    inputs = {"coco_karpathy_test": str(ann), "coco_images": str(tmp_path / "images"), "order_seeds": 1}
    bench = BENCHMARKS.get(name)
    batched = bench.run(toy_scorer(), inputs)
    _assert_same(batched, bench.run_naive(toy_scorer(), inputs))
    n_captions = sum(len(r["caption"]) for r in records)
    rows = {t: len(df) for t, df in batched.items()}
    assert rows == ({"coco_order": n_captions} if name == "coco_order"
                    else {"coco_retrieval_i2t": 12, "coco_retrieval_t2i": n_captions})
