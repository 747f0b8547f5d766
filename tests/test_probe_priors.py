"""The prior-uptake probe (scripts/probe_priors.py, the world issue's P3): its pairwise loss against a hand-computed
value, the frozen image tower staying bitwise unchanged (weights and BatchNorm buffers) through NegCLIP steps, the
text-only head and its scorer, the blind-ceiling reader and the CSV merge."""

import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

pytest.importorskip("open_clip")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import probe_priors as probe  # noqa: E402

from vlcomp.losses import get_loss  # noqa: E402
from vlcomp.models.factory import ModelSpec, create_model  # noqa: E402
from vlcomp.text.tokenizer import get_tokenizer  # noqa: E402
from vlcomp.train.data import BatchSampler, Row  # noqa: E402

ARCH = "toy-rn16"


def test_pairwise_loss_equals_the_hand_computed_value():
    s_true, s_neg = torch.tensor([2.0, 0.0, 0.5]), torch.tensor([1.0, 1.0, 0.5])
    # -log sigmoid(d) = log(1 + exp(-d)) for d = 1, -1, 0
    expected = (math.log(1 + math.exp(-1)) + math.log(1 + math.exp(1)) + math.log(2)) / 3
    assert probe.pairwise_logistic_loss(s_true, s_neg).item() == pytest.approx(expected, rel=1e-6)
    assert expected == pytest.approx((0.3132617 + 1.3132617 + 0.6931472) / 3, abs=1e-6)  # 0.7732235
    with pytest.raises(ValueError, match="pairwise loss"):
        probe.pairwise_logistic_loss(s_true, s_neg[:2])


COLOURS = ("red", "blue", "green", "yellow")
SHAPES = ("circle", "square", "triangle", "star")


def _rows(n_images: int = 8) -> list[Row]:
    rows = []
    for i in range(n_images):
        a, b = SHAPES[i % 4], SHAPES[(i + 1) % 4]
        c, d = COLOURS[i % 4], COLOURS[(i + 2) % 4]
        rows.append(Row(i, f"a {c} {a} above a {d} {b}", (f"a {c} {b} above a {d} {a}",)))
        rows.append(Row(i, f"the {d} {b} is below the {c} {a}", (f"the {c} {b} is below the {d} {a}",)))
    return rows


def _negclip_run(frozen: bool, steps: int = 3, eval_every: int = 0):
    torch.manual_seed(0)
    model = create_model(ModelSpec(ARCH), init_seed=0)
    if frozen:
        probe.freeze(model, ("image",))
    tok = get_tokenizer("world", ARCH, 32)
    images = np.random.default_rng(0).integers(0, 256, size=(8, 48, 48, 3), dtype=np.uint8)
    knn = np.asarray([[(i + 1) % 8, (i + 2) % 8] for i in range(8)])
    sampler = BatchSampler(_rows(), 4, negatives=1, hard_images=knn)
    before = {k: v.detach().clone() for k, v in model.state_dict().items()}
    evals = []

    def on_eval(step, window):
        model.eval()  # as the benchmark scorer leaves it: the loop must put the towers back in their modes
        evals.append((step, list(window)))

    probe.train_negclip(model, tok, images, sampler, get_loss("negclip"), steps, 1e-3,
                        np.random.default_rng(1), frozen_image=frozen, warmup=1, on_eval=on_eval,
                        eval_every=eval_every)
    return before, model.state_dict(), evals


def test_frozen_image_tower_is_bitwise_unchanged_weights_and_batchnorm_buffers():
    before, after, evals = _negclip_run(frozen=True, steps=4, eval_every=2)
    visual = [k for k in before if k.startswith("visual.")]
    buffers = [k for k in visual if "running_" in k or "num_batches_tracked" in k]
    assert buffers, "toy-rn16's image tower has BatchNorm buffers"
    for k in visual:
        assert torch.equal(before[k], after[k]), f"{k} moved with the image tower frozen"
    text = [k for k in before if not k.startswith("visual.") and k != "logit_scale"]
    assert any(not torch.equal(before[k], after[k]) for k in text), "the text tower must train"
    assert [s for s, _ in evals] == [2, 4] and all(len(w) == 2 for _, w in evals)  # hard_negative_acc per step


def test_without_freezing_the_image_tower_and_its_batchnorm_statistics_move():
    before, after, _ = _negclip_run(frozen=False, steps=2)
    moved = {k for k in before if k.startswith("visual.") and not torch.equal(before[k], after[k])}
    assert any("running_mean" in k for k in moved) and any(k.endswith(".weight") for k in moved)


def test_set_train_mode_keeps_only_the_frozen_image_tower_in_eval():
    model = create_model(ModelSpec(ARCH), init_seed=0).eval()
    probe.set_train_mode(model, True)
    assert model.training and model.transformer.training
    assert not model.visual.training and not any(m.training for m in model.visual.modules())
    probe.set_train_mode(model, False)
    assert all(m.training for m in model.modules())


def test_text_only_head_starts_tied_and_learns_a_separable_text_prior():
    tok = get_tokenizer("world", ARCH, 32)
    model = probe.text_model(ModelSpec(ARCH), None, init_seed=3, text_buckets=0)
    assert not any(p.requires_grad for p in model.clip.visual.parameters())
    rows = [Row(i, f"a red {s} above a blue {t}", (f"a blue {s} above a red {t}",))
            for i, (s, t) in enumerate((a, b) for a in SHAPES for b in SHAPES if a != b)]
    # the zero-initialised head ties every pair, and a tie is wrong
    assert probe.text_pair_accuracy(model, tok, rows) == 0.0
    cache = probe.TextCache(tok, [r.caption for r in rows] + [n for r in rows for n in r.negatives])
    seen = []
    probe.train_text_only(model, cache, rows, 40, 6, 1e-3, 0.05, 0.0, 2, np.random.default_rng(0),
                          on_eval=lambda step, w: seen.append(step), eval_every=20)
    assert seen == [20, 40]
    assert probe.text_pair_accuracy(model, tok, rows) == 1.0
    # the scorer ignores the image, and its text features are the tower's (unit rows)
    scorer = probe.TextHeadScorer(model, tok)
    texts = [rows[0].caption, rows[0].negatives[0], rows[0].caption]
    s = scorer.score_pairs([None, "anything", 3], texts)
    assert s[0] == s[2] and s[0] > s[1]
    feats = scorer.dual_view().encode_texts(texts)
    assert torch.allclose(feats.norm(dim=1), torch.ones(3), atol=1e-5)


def test_split_rows_holds_out_whole_images():
    rows = _rows(20)
    train, held = probe.split_rows(rows, 20, 0.25, np.random.default_rng(0))
    assert len(train) + len(held) == len(rows) and len({r.image for r in held}) == 5
    assert not {r.image for r in train} & {r.image for r in held}


def test_blind_ceiling_is_empty_without_its_file_and_read_when_present(tmp_path):
    assert all(math.isnan(v) for v in probe.blind_ceiling(tmp_path / "absent").values())
    (tmp_path / "metrics.json").write_text(json.dumps({"aro/vg_relation/macro_acc": 0.73123,
                                                       "aro/vg_attribution/macro_acc": 0.6}))
    got = probe.blind_ceiling(tmp_path)
    assert got["blind_vgr_macro"] == 0.7312 and got["blind_vga_macro"] == 0.6 and math.isnan(got["blind_vga_colour"])


def _row(arm: str, steps: int, schedule: int = 1200, **kw) -> dict:
    return {"probe": "P3", "arm": arm, "base": "b0", "seed": 0, "steps": steps, "samples": steps * 256,
            "schedule_steps": schedule, "vgr_macro": 0.5, **kw}


def test_csv_merge_replaces_one_runs_rows_and_keeps_the_others(tmp_path):
    out = tmp_path / "prior_uptake.csv"
    probe.write_rows(out, [_row("negclip-full", s) for s in (0, 300, 600)])
    probe.write_rows(out, [_row("negclip-frozen-image", s) for s in (0, 300)])
    # another schedule length is another run: kept apart
    probe.write_rows(out, [_row("negclip-full", s, 600, vgr_macro=0.6) for s in (0, 600)])
    probe.write_rows(out, [_row("negclip-full", s, vgr_macro=0.7) for s in (0, 1200)])  # a rerun: replaces its 3 rows
    df = pd.read_csv(out)
    assert list(df.columns) == list(probe.COLUMNS)
    full = df[(df.arm == "negclip-full") & (df.schedule_steps == 1200)]
    assert sorted(full.steps) == [0, 1200] and set(full.vgr_macro) == {0.7}
    assert sorted(df[df.arm == "negclip-frozen-image"].steps) == [0, 300]
    assert sorted(df[df.schedule_steps == 600].steps) == [0, 600]
    assert df.text_pair_acc.isna().all()  # a column no row set stays empty
    with pytest.raises(ValueError, match="one run at a time"):
        probe.write_rows(out, [_row("negclip-full", 0), _row("text-only", 0)])
    # the blind ceiling filled in afterwards, on every P3 row, nothing else touched
    probe.refresh_blind(out, {"blind_vgr_macro": 0.73, "blind_vga_macro": 0.61, "blind_vga_colour": 0.82})
    again = pd.read_csv(out)
    assert len(again) == len(df) and (again.blind_vgr_macro == 0.73).all() and (again.blind_vga_colour == 0.82).all()
    assert again.drop(columns=list(probe.BLIND_COLUMNS)).equals(df.drop(columns=list(probe.BLIND_COLUMNS)))
