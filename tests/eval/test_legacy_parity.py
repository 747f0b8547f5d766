"""The switch of the toy profile to the one engine: per-item decisions of the old toy path (its own twins and
scorers, ``vlcomp.eval.legacy``) and of the new path (twins in the released formats + PNG files, the benchmark
records, the engine) agree on every ARO benchmark, case by case, wherever the decision is clear of float noise."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vlcomp.benchmarks import run_benchmarks
from vlcomp.benchmarks.materialise import materialise
from vlcomp.config import load_params
from vlcomp.eval.inputs import resolve
from vlcomp.eval.legacy.build import BenchmarksConfig as LegacyConfig
from vlcomp.eval.legacy.build import build_all
from vlcomp.eval.legacy.evaluation import aggregate_items, evaluate_model
from vlcomp.eval.legacy.toy_suite import EvalContext
from vlcomp.models.factory import ModelSpec, create_model
from vlcomp.models.scorers import toy_scorer
from vlcomp.text.perturb import TextShuffler
from vlcomp.text.tokenizer import WorldTokenizer
from vlcomp.twins import TwinContext, build_twin
from vlcomp.world import world_configs
from vlcomp.world.generate import SplitSpec, generate_world

from .helpers import near_tie_rows

pytestmark = [pytest.mark.slow, pytest.mark.spacy]
REPO = Path(__file__).resolve().parents[2]
ATOL = 1e-5
NAMES = ["vg_relation", "vg_attribution", "coco_order", "flickr_order", "coco_retrieval", "flickr_retrieval",
         "zeroshot_aro"]


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    params = load_params(REPO / "params.yaml")
    wcfg, ccfg, specs = world_configs(params)
    style = {s.name: s.style for s in specs}
    root = tmp_path_factory.mktemp("parity")
    world = root / "world"
    sizes = {"vg_test": 160, "coco_test": 30, "flickr_test": 30}
    generate_world([SplitSpec(n, k, style[n]) for n, k in sizes.items()], wcfg, ccfg, seed=0, out_dir=world)
    shuffler = TextShuffler(spacy_model=params["nlp"]["spacy_model"])
    model = create_model(ModelSpec("toy-rn16"), init_seed=0)
    tok = WorldTokenizer(32)

    old_dir = root / "old"
    build_all(world, old_dir, LegacyConfig(order_seeds=2, shuffle_seeds=2, zeroshot_images_per_class=2, vga_min_count=2),
              wcfg, shuffler, seed=0)
    old = evaluate_model(EvalContext(model, tok, old_dir, world, 0))
    old_metrics = aggregate_items(old, {"vga_min_count": 2})

    new_dir = root / "new"
    ctx = TwinContext(world, new_dir, wcfg, 0, {"aro": {"vga_min_count": 2}, "zeroshot_aro": {"images_per_class": 2}})
    inputs = {}
    for twin in ("aro", "karpathy", "zeroshot_aro"):
        inputs |= build_twin(twin, ctx).inputs
    inputs |= materialise(NAMES, resolve(inputs, new_dir), new_dir, order_seeds=2, shuffle_seeds=2, seed=0,
                          shuffler=shuffler)
    resolved = resolve(inputs, new_dir) | {"seed": 0}
    new = run_benchmarks(toy_scorer("toy", model, tok), NAMES, resolved)
    from vlcomp.benchmarks import aggregate_tables

    return old, new, old_metrics, aggregate_tables(new, NAMES, resolved)


def _same(old_col, new_col, near) -> None:
    a, b = np.asarray(old_col)[~near], np.asarray(new_col)[~near]
    assert a.tolist() == b.tolist()


@pytest.mark.parametrize("name", ["vg_relation", "vg_attribution"])
def test_vg_decisions(both, name):
    old, new, *_ = both
    o, n = old[name], new[name]
    assert len(o) == len(n) > 0
    for col in ("score_false", "score_true", "wrong_score_false", "wrong_score_true", "text_cosine"):
        np.testing.assert_allclose(o[col].to_numpy(), n[col].to_numpy(), atol=ATOL, err_msg=col)
    near = near_tie_rows(o, ATOL) | near_tie_rows(n, ATOL)
    _same(o["correct"], n["correct"], near)
    wrong_near = np.abs(o["wrong_score_false"] - o["wrong_score_true"]).to_numpy() <= 2 * ATOL
    _same(o["wrong_correct"], n["wrong_correct"], wrong_near)
    assert o["wrong_image"].tolist() == n["wrong_image"].tolist()
    assert near.mean() < 0.05


@pytest.mark.parametrize("name", ["coco_order", "flickr_order"])
def test_order_decisions(both, name):
    old, new, *_ = both
    o, n = old[name], new[name]
    assert len(o) == len(n) > 0
    kinds = ["original", "shuffle_nouns_and_adj", "shuffle_allbut_nouns_and_adj", "shuffle_within_trigrams",
             "shuffle_trigrams"]
    for j, k in enumerate(kinds):
        np.testing.assert_allclose(o[f"score_{j}"].to_numpy(), n[f"score_{k}"].to_numpy(), atol=ATOL)
    near = near_tie_rows(n, ATOL)
    identical = np.zeros(len(n), bool)  # options equal to the original tie by definition in the new engine
    for k in kinds[1:]:
        identical |= (n[f"option_{k}"] == n["option_original"]).to_numpy()
    _same(o["correct"], n["correct"], near & ~identical)


@pytest.mark.parametrize("short", ["coco", "flickr"])
def test_retrieval_hits(both, short):
    old, new, *_ = both
    for d in ("i2t", "t2i"):
        o = old[f"{short}_retrieval_{d}"]
        clean = new[f"{short}_retrieval_{d}"]
        sh = new[f"{short}_retrieval_shuffle_{d}"]
        ref = o[o["strategy"] == "none"]
        assert ref["hit_1"].tolist() == clean["hit_1"].tolist() and ref["hit_5"].tolist() == clean["hit_5"].tolist()
        for (strategy, seed), sub in o[o["strategy"] != "none"].groupby(["strategy", "seed"]):
            got = sh[(sh["strategy"] == strategy) & (sh["seed"] == seed)]
            assert len(got) == len(sub) > 0, (strategy, seed)
            assert sub["hit_1"].tolist() == got["hit_1"].tolist(), (d, strategy, seed)
            assert sub["hit_5"].tolist() == got["hit_5"].tolist(), (d, strategy, seed)


def test_zeroshot_predictions(both):
    old, new, *_ = both
    o, n = old["zeroshot"], new["zeroshot_aro"]
    assert o["task"].tolist() == n["task"].tolist() and o["label"].tolist() == n["label"].tolist()
    assert o["pred"].tolist() == n["pred_standard"].tolist()


def test_shared_metrics_equal(both):
    """Every metric both paths compute (ARO macro and micro accuracies, controls, Order, zero-shot) is equal."""
    *_, old_m, new_m = both
    renamed = {k.replace("/none/", "/"): v for k, v in old_m.items()}
    renamed |= {k.replace("retrieval/coco/", "retrieval/coco/shuffle/").replace(
        "retrieval/flickr30k/", "retrieval/flickr30k/shuffle/"): v for k, v in old_m.items()
        if k.startswith("retrieval/") and "/none/" not in k}
    shared = sorted(set(renamed) & set(new_m))
    assert len(shared) > 40
    for k in shared:
        tol = 1e-6 if k.endswith("text_swap_cosine") else 1e-12  # a mean of float32 cosines, in float64 now
        assert new_m[k] == pytest.approx(renamed[k], abs=tol), k
