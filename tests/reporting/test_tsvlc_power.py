"""TSVLC's conditions get test SEs from VL-CheckList's and the ELEVATER twin's per-item tables (the stratified
bootstrap of vlcomp.reporting.items), so the ledger's power rule applies to them: a C4 zero-shot drop just past its
2-point margin on a small test set is underpowered, the same drop on a large one is not held; the sign tests of C1
carry their SE and say why no power rule applies."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from vlcomp.benchmarks.vlchecklist import aggregate_vlchecklist
from vlcomp.benchmarks.zeroshot import aggregate_suite
from vlcomp.reporting.collect import LONG_COLUMNS, Methods
from vlcomp.reporting.items import (
    VLC_WHAT,
    Bootstrap,
    nested_metric,
    read_stratified_scores,
    stratified_interval,
)
from vlcomp.reporting.ledger import (
    NOT_HELD,
    NOTE_EFFECT,
    NOTE_SIGN,
    POWER_FRACTION,
    UNDERPOWERED,
    Condition,
    Evidence,
    ledger_table,
    rule_markdown,
)
from vlcomp.reporting.papers.tsvlc import claims as K
from vlcomp.seeding import derive_seed

LABELS = {"tsvlc_lora": "CLIP+LoRA", "tsvlc_rbllm": "RB+LLM Negs"}
METHODS = Methods(("clip", *LABELS), LABELS)
MODELS = {"clip": "clip-b0", "tsvlc_lora": "tsvlc_lora-b0s0", "tsvlc_rbllm": "tsvlc_rbllm-b0s0"}
SPEC = Bootstrap(seed=3, n_resamples=400)
VLC_FILES = {"Relation_action_vg": "action_r", "Relation_spatial_vg": "spatial", "Attribute_action_vg": "action_a",
             **{f"Attribute_{c}_vg": c for c in ("color", "material", "size", "state")}}


def _elevater(correct: dict[str, np.ndarray]) -> pd.DataFrame:
    rows = [{"task": t, "file": f"{i:04d}.png", "label": 0, "pred_standard": 0, "correct_standard": bool(c)}
            for t, cs in correct.items() for i, c in enumerate(cs)]
    return pd.DataFrame(rows)


def _vlchecklist(correct: dict[str, np.ndarray]) -> pd.DataFrame:
    rows = [{"file": f, "index": i, "category": VLC_FILES[f], "dataset": "vg", "correct": bool(c)}
            for f, cs in correct.items() for i, c in enumerate(cs)]
    return pd.DataFrame(rows)


def _tree(tmp_path, zs: dict[str, dict[str, np.ndarray]], vlc: dict[str, dict[str, np.ndarray]] | None = None):
    """metrics/<model>/items/{zeroshot_elevater, vlchecklist}.parquet for chain b0 and the long table of their
    values by the benchmarks' own aggregation."""
    rows = []
    for method, model in MODELS.items():
        if method not in zs:
            continue
        (tmp_path / model / "items").mkdir(parents=True)
        tables = {"zeroshot_elevater": _elevater(zs[method])}
        values = dict(aggregate_suite(tables, "zeroshot_elevater"))
        if vlc is not None:
            tables["vlchecklist"] = _vlchecklist(vlc[method])
            values |= aggregate_vlchecklist(tables)
        for name, df in tables.items():
            df.to_parquet(tmp_path / model / "items" / f"{name}.parquet", index=False)
        base = method == "clip"
        rows += [{"model": model, "method": method, "base": "b0", "base_seed": "0", "seed": "" if base else "0",
                  "key": k, "value": v, "dvc_stage": ""} for k, v in values.items()
                 if k in (K.ZS, K.OBJECT, K.ATTRIBUTE, K.RELATION)]
    return pd.DataFrame(rows, columns=list(LONG_COLUMNS))


def _zs_drop(n: int, flips: int) -> dict[str, dict[str, np.ndarray]]:
    """Two tasks of ``n`` images; CLIP+LoRA loses ``flips`` of CLIP's right answers in the first: a drop of
    ``flips / n / 2`` in the mean over tasks."""
    rng = np.random.default_rng(n)
    clip = {t: rng.random(n) < 0.6 for t in ("task01", "task02")}
    lora = {t: v.copy() for t, v in clip.items()}
    lora["task01"][np.flatnonzero(clip["task01"])[:flips]] = False
    return {"clip": clip, "tsvlc_lora": lora}


def _c4(tmp_path, n: int, flips: int):
    ev = Evidence(_tree(tmp_path, _zs_drop(n, flips)), tmp_path, SPEC)
    (claim,) = [c for c in K.tsvlc_claims(ev, METHODS, lora=("tsvlc_lora",)) if c.id == "C4"]
    return claim


def test_a_c4_drop_past_its_margin_on_a_small_test_set_is_underpowered(tmp_path):
    # 50 images per task, 3 of CLIP's right answers lost in one task: ZS -0.03, past the bound -0.02 (margin 0.02)
    claim = _c4(tmp_path, 50, 3)
    (cond,) = claim.conditions
    assert cond.values == pytest.approx([-0.03]) and not cond.held and cond.margin == pytest.approx(0.02)
    # SE by hand: the per-image difference in task01 is -1 on 3 of 50 images, 0 elsewhere, and task01 weighs 1/2:
    # sqrt(0.06 * 0.94 / 50) / 2 = 0.0168, far above a third of the margin (0.0067)
    assert cond.se == pytest.approx(math.sqrt(0.06 * 0.94 / 50) / 2, rel=0.15)
    assert cond.se > POWER_FRACTION * cond.margin and cond.verdict == UNDERPOWERED
    assert claim.verdict == UNDERPOWERED
    row = ledger_table([claim]).iloc[0]
    assert row["condition_held"] == "underpowered" and row["test_se"] == cond.se and row["margin"] == cond.margin


def test_the_same_drop_on_a_large_test_set_is_not_held(tmp_path):
    claim = _c4(tmp_path, 2000, 120)  # the same -0.03, 40x the images: SE 0.0027 < 0.0067
    (cond,) = claim.conditions
    assert cond.values == pytest.approx([-0.03]) and cond.se < POWER_FRACTION * cond.margin
    assert cond.verdict == NOT_HELD and claim.verdict == NOT_HELD


def test_vlchecklist_conditions_carry_the_stratified_se(tmp_path):
    rng = np.random.default_rng(0)
    vlc = {m: {f: rng.random(40) < p for f in VLC_FILES} for m, p in (("clip", 0.5), ("tsvlc_rbllm", 0.55),
                                                                         ("tsvlc_lora", 0.5))}
    zs = {m: {"task01": rng.random(20) < 0.5} for m in MODELS}
    ev = Evidence(_tree(tmp_path, zs, vlc), tmp_path, SPEC)
    got = {c.id: c for c in K.tsvlc_claims(ev, METHODS, lora=("tsvlc_lora",))}
    relation = got["C1"].conditions[0]
    assert relation.text == "Relation gain over CLIP: RB+LLM Negs - CLIP > 0"
    # the interval and SE: the stratified bootstrap of RB+LLM - CLIP on Relation, seeded by the condition's text
    metric = nested_metric(K.RELATION)
    terms = [(read_stratified_scores(tmp_path / "tsvlc_rbllm-b0s0", metric), 1.0),
             (read_stratified_scores(tmp_path / "clip-b0", metric), -1.0)]
    rng = np.random.default_rng(derive_seed(3, "ledger", f"Relation gain over CLIP: RB+LLM Negs - CLIP >= {K.STRICT}"))
    low, high, se = stratified_interval(terms, rng, SPEC)
    assert relation.interval == (low, high) and relation.se == se and se > 0
    # a sign test: its power is judged against the paper's printed effect (Table 1a: 78.72 % - 63.05 %)
    assert relation.margin == pytest.approx(0.7872 - 0.6305) and relation.resampling == VLC_WHAT
    assert NOTE_EFFECT.format(effect=0.7872 - 0.6305) in relation.note and NOTE_SIGN not in relation.note
    # the derived per-model metrics (mean(Attribute, Relation), Relation - Attribute) are VL-CheckList recombined
    derived = [c for cl in got.values() for c in cl.conditions if c.values and "0.333 x" not in c.text
               and ("mean(Attribute, Relation)" in c.text or "Relation - Attribute" in c.text)]
    assert len(derived) == 3  # C1 Relation - Attribute, C1 and C2 vs CLIP+LoRA (the other rivals did not run)
    assert all(not math.isnan(c.se) and "no item-level interval" not in c.note for c in derived)
    # the ZS conditions: the ELEVATER twin's tasks; C2's three-method combination has none
    assert all(not math.isnan(c.se) for c in got["C4"].conditions)
    assert math.isnan(got["C2"].conditions[1].se)
    legend = rule_markdown(ev, list(got.values()), METHODS)
    assert "**Stratified bootstrap**" in legend and "items resampled within each file" in legend
    assert "images resampled within each task" in legend and "400 resampled values" in legend


def test_printed_effects_by_hand():
    """The paper's printed differences the sign tests are powered against (Table 1a; Table 2 for w/o Neg Loss)."""
    assert K.printed_effect(K.RBLLM, "clip", K.RELATION) == pytest.approx(0.7872 - 0.6305)
    assert K.printed_effect(K.RBLLM, "clip", K.REL_MINUS_ATTR) == pytest.approx((0.7872 - 0.7390) - (0.6305 - 0.6760))
    assert K.printed_effect(K.RBLLM, K.LORA, K.SVLC_MEAN) == pytest.approx(((0.7390 + 0.7872) - (0.6628 + 0.5552)) / 2)
    assert K.printed_effect(K.RBLLM, K.NONEG, K.SVLC_MEAN) == pytest.approx(((0.7390 + 0.7872) - (0.6758 + 0.5517)) / 2)
    assert K.printed_effect(K.COMBINED, K.RBLLM, K.ZS) == pytest.approx(0.5477 - 0.5466)
    assert K.printed_effect(K.RBLLM, K.FULL, K.VLC_MEAN) is None  # C5: no numbers printed
    assert K.printed_effect(K.RBLLM, "tsvlc_pos", K.SVLC_MEAN) is None  # Pos has no Table 1a row


def test_a_sign_test_is_underpowered_against_the_printed_effect():
    """A failing sign test whose SE exceeds a third of the paper's printed effect is underpowered; with a smaller
    SE, or with no printed effect (no margin), it is not held."""
    def cond(se, margin):
        return Condition("x > 0", [-0.01], ["b0s0 - b0"], K.STRICT, True, None, "", se, margin)

    assert cond(0.03, 0.06).verdict == UNDERPOWERED  # 0.03 > 0.06 / 3
    assert cond(0.01, 0.06).verdict == NOT_HELD
    assert cond(0.03, None).verdict == NOT_HELD
