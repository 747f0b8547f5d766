"""TSVLC's claims ledger: catalog §6's claims C1-C5 as conditions over the whole-chain runs.

Thresholds are fixed here, from the paper's own statements, before any result is seen; they are not tuned. A
condition holds iff it holds on every chain (pair) it is evaluated on
(:data:`vlcomp.reporting.ledger.VERDICT_RULE`): a comparison of two methods pairs each model with the other
method's model of the same chain (:func:`vlcomp.reporting.ledger.pair_chains`), so a comparison with a method
run on chain b0 only is evaluated on b0 only (n = 1, its ledger row says so), and one between two three-chain
methods on all three chains.

Operationalisation (the per-model derived metrics are added by :func:`with_claim_metrics`):

- **C1** RB+LLM Negs gives the largest SVLC gain, Relation in particular. (i) On every chain, RB+LLM's
  Relation gain over CLIP (its chain's base model) is > 0, and larger than its Attribute gain and its Object
  gain (as a per-model difference ``Relation - Attribute``, RB+LLM minus CLIP: the same inequality). (ii)
  RB+LLM's mean of Attribute and Relation beats every other LoRA variant (RB, LLM, Pos, Combined, w/o Neg
  Loss, +LoRA) on every chain pair (b0 only for the single-chain methods).
- **C2** Negatives only inside the contrastive loss give little. On every chain pair: RB+LLM's mean(Attribute,
  Relation) gain over CLIP+LoRA is > 0, and w/o Neg Loss's gain over CLIP+LoRA is below
  :data:`LITTLE_FRACTION` of it, checked as ``LITTLE_FRACTION * (RB+LLM - LoRA) - (w/o Neg - LoRA) > 0`` per
  chain (a three-method combination, :func:`combination`; the first condition keeps a negative RB+LLM gain
  from passing the second).
- **C3** Positives stabilise zero-shot while lowering the SVLC gain: on every chain, Combined's ZS >= RB+LLM's
  ZS, and Combined's mean(Attribute, Relation) < RB+LLM's.
- **C4** LoRA keeps the ZS drop small: on every chain, every LoRA TSVLC method's ZS >= the ZS of the un-fine-tuned
  base it started from (its chain's CLIP; the ViT or CyCLIP base model for Table 1b / 1e's rows; CLIP for the
  LAION rows of Table 1g) - :data:`ZS_DROP_MAX`.
- **C5** Full fine-tuning is worse: on every chain pair (b0), the full fine-tune's VL-CheckList mean of
  (Object, Attribute, Relation) and its ZS are both below RB+LLM's (LoRA).

"Greater than" is the ledger's ``>=`` with the margin :data:`STRICT` (the condition text says ``> 0``); every
bound allows :data:`FLOAT_TOL` of float noise.

Test-set uncertainty: VL-CheckList's Object / Attribute / Relation and the ELEVATER twin's 21-task mean are nested
macros of per-item 0/1 columns (:func:`vlcomp.reporting.items.nested_metric`), and the derived per-model metrics
above are linear combinations of them (:data:`DERIVED`, given to the ledger's :class:`Evidence`). So every
condition comparing two models on them gets a stratified paired bootstrap over items: VL-CheckList items
resampled within each file (subtype), ELEVATER images within each task, the same draws for both models of every
chain pair, the nested macro (with VL-CheckList's 4-decimal file rounding) recomputed per resample
(:func:`vlcomp.reporting.ledger.stratified`, seeded from ``root_seed`` and the condition). Its standard deviation
is the condition's test SE, and the ledger's power rule (:data:`vlcomp.reporting.ledger.POWER_RULE`) reads it
where a margin is tested (C4: 2 points). A ``> 0`` condition tests a sign; its power is judged against the effect
the paper printed for the same comparison (:func:`printed_effect`: Table 1a, else Table 2, the same linear
combination of columns as the condition's metric), so a sign test whose SE exceeds a third of the paper's own
effect is underpowered. Where the paper printed nothing (C5; Pos has no Table 1a row; ``>= 0`` conditions) there is
no power rule (its note says so). C2's three-method combination has no interval.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import pandas as pd

from ....config import base_model_method
from ...collect import Methods, with_difference, with_mean
from ...ledger import FLOAT_TOL, STRICT, Claim, Condition, Evidence, beats
from ...ledger import retext as _retext
from ...tree import BASE_METHOD, Chain
from .printed import T1_COLUMNS, TABLE1, TABLE2, printed_row

OBJECT, ATTRIBUTE = "vlchecklist/object/avg", "vlchecklist/attribute/avg"
RELATION = "vlchecklist/relation/avg"
ZS = "zeroshot/elevater/mean_acc"
SVLC_MEAN = "tsvlc/svlc_mean"  # per model: mean(Attribute, Relation)
VLC_MEAN = "tsvlc/vlchecklist_mean"  # per model: mean(Object, Attribute, Relation)
REL_MINUS_ATTR = "tsvlc/relation_minus_attribute"
REL_MINUS_OBJ = "tsvlc/relation_minus_object"
#: The derived per-model metrics as linear combinations of VL-CheckList's group averages (what
#: :func:`with_claim_metrics` computes), so their per-item definition is VL-CheckList's, recombined.
DERIVED: dict[str, dict[str, float]] = {
    SVLC_MEAN: {ATTRIBUTE: 1 / 2, RELATION: 1 / 2},
    VLC_MEAN: {OBJECT: 1 / 3, ATTRIBUTE: 1 / 3, RELATION: 1 / 3},
    REL_MINUS_ATTR: {RELATION: 1.0, ATTRIBUTE: -1.0},
    REL_MINUS_OBJ: {RELATION: 1.0, OBJECT: -1.0},
}

RBLLM, LORA, NONEG = "tsvlc_rbllm", "tsvlc_lora", "tsvlc_noneg"
COMBINED, FULL = "tsvlc_combined", "tsvlc_full"
#: C1 (ii): the LoRA variants RB+LLM Negs must beat on mean(Attribute, Relation)
C1_RIVALS = ("tsvlc_rb", "tsvlc_llm", "tsvlc_pos", COMBINED, NONEG, LORA)
#: The LoRA TSVLC methods (C4), when params do not say (:func:`lora_methods`)
LORA_METHODS = (LORA, "tsvlc_rb", "tsvlc_llm", RBLLM, "tsvlc_pos", COMBINED, NONEG)

ZS_DROP_MAX = 0.02
"""C4: the largest zero-shot drop that counts as 'small': 2 points (fractions), the paper's bound (Table 1a's
largest LoRA drop is 2.05, RB Neg; the text says 'about 2 points at most')."""
LITTLE_FRACTION = 1 / 3
"""C2: 'little' = less than a third of what the separate negatives loss gains (paper: w/o Neg Loss -0.02 /
-7.88 vs RB+LLM +6.30 / +15.67 on Attribute / Relation over CLIP, i.e. no gain at all)."""
NO_INTERVAL_COMBINATION = "no item-level interval: a combination of three methods"


def with_claim_metrics(long: pd.DataFrame) -> pd.DataFrame:
    """``long`` plus the per-model metrics the claims compare (each only where not there yet): mean(Attribute,
    Relation), mean(Object, Attribute, Relation), Relation - Attribute, Relation - Object."""
    have = set(long["key"])
    if SVLC_MEAN not in have:
        long = with_mean(long, SVLC_MEAN, (ATTRIBUTE, RELATION))
    if VLC_MEAN not in have:
        long = with_mean(long, VLC_MEAN, (OBJECT, ATTRIBUTE, RELATION))
    if REL_MINUS_ATTR not in have:
        long = with_difference(long, REL_MINUS_ATTR, RELATION, ATTRIBUTE)
    if REL_MINUS_OBJ not in have:
        long = with_difference(long, REL_MINUS_OBJ, RELATION, OBJECT)
    return long


def base_model_labels(params: dict) -> dict[str, str]:
    """The other base models' evaluation methods of params (``base_models``) -> their report labels."""
    return {base_model_method(k): f"CLIP, base model {k}" for k in params.get("base_models") or {}}


def reference_methods(params: dict) -> dict[str, str]:
    """Each TSVLC method of params -> the method of the un-fine-tuned model of the base it starts from
    (:func:`vlcomp.config.base_model_method`: ``clip``, or ``clip_vit`` / ``clip_cyclip`` for ``base_model`` runs)."""
    ms = params.get("methods") or {}
    return {m: base_model_method((spec or {}).get("base_model"))
            for m, spec in ms.items() if (spec or {}).get("paper") == "tsvlc"}


def lora_methods(params: dict) -> tuple[str, ...]:
    """The TSVLC methods of params that fine-tune LoRA adapters (``methods.<m>.tuning.lora``)."""
    ms = params.get("methods") or {}
    return tuple(m for m, spec in ms.items() if (spec or {}).get("paper") == "tsvlc"
                 and ((spec or {}).get("tuning") or {}).get("lora"))


_PRINTED_COLUMN = {key: column for _, column, key in T1_COLUMNS}


def printed_effect(better: str, worse: str, key: str) -> float | None:
    """The paper's printed ``better - worse`` on ``key`` (a Table 1 column's key or a :data:`DERIVED` combination
    of them), from Table 1a, else Table 2 (the first table printing both rows); None when neither prints both rows
    or a cell is not printed."""
    terms = DERIVED.get(key, {key: 1.0})
    if any(k not in _PRINTED_COLUMN for k in terms):
        return None
    for artifact, table in (("TSVLC-T1a", TABLE1), ("TSVLC-T2", TABLE2)):
        a, b = printed_row(table, artifact, better), printed_row(table, artifact, worse)
        if a is None or b is None:
            continue
        cells = [(a.cells.get(_PRINTED_COLUMN[k]), b.cells.get(_PRINTED_COLUMN[k]), c) for k, c in terms.items()]
        if any(x is None or y is None or math.isnan(x.value) or math.isnan(y.value) for x, y, _ in cells):
            return None
        return sum(c * (x.value - y.value) for x, y, c in cells)
    return None


def gain(methods: Methods, ev: Evidence, better: str, worse: str, key: str, what: str) -> Condition:
    """``better - worse > 0`` on every chain pair; its power judged against :func:`printed_effect`."""
    effect = printed_effect(better, worse, key)
    return _retext(beats(methods, ev, better, worse, key, STRICT, what, effect=effect), STRICT, "> 0")


def no_worse(methods: Methods, ev: Evidence, better: str, worse: str, key: str, bound: float,
             what: str) -> Condition:
    """``better - worse >= bound`` on every chain pair (up to :data:`FLOAT_TOL`)."""
    margin = bound - FLOAT_TOL
    return _retext(beats(methods, ev, better, worse, key, margin, what), margin, f">= {bound:g}")


def _label(methods: Methods, row) -> str:
    chain = Chain(row["method"], row["base"], row["base_seed"], row["seed"])
    return f"{methods.label(row['method'])} {chain.label}"


def combination(methods: Methods, ev: Evidence, terms: Sequence[tuple[str, float]], key: str, bound: float,
                what: str) -> Condition:
    """``sum(coef * method's key) >= bound`` on every chain: the first term's models, each with the models of
    the other terms' methods on its chain (same base and fine-tuning seed, or the chain's base model). A model
    without a partner for every term is left out (named in the note)."""
    (first, coef0), *rest = terms
    values, runs, unpaired = [], [], []
    for _, a in ev.rows(first, key).iterrows():
        total: float | None = coef0 * float(a["value"])
        names = [_label(methods, a)]
        for method, coef in rest:
            match = [b for _, b in ev.rows(method, key).iterrows()
                     if b["base"] == a["base"] and (b["seed"] == a["seed"] or "" in (a["seed"], b["seed"]))]
            if len(match) != 1:
                total = None
                break
            total += coef * float(match[0]["value"])
            names.append(_label(methods, match[0]))
        if total is None:
            unpaired.append(str(a["model"]))
            continue
        values.append(total)
        runs.append(" / ".join(names))
    note = NO_INTERVAL_COMBINATION + ("; no chain to pair with: " + ", ".join(unpaired) if unpaired else "")
    return Condition(what, values, runs, bound, True, None, note)


def _claims_c1(methods: Methods, ev: Evidence) -> Claim:
    c = Claim("C1", "RB+LLM Negs gives the largest SVLC gain, Relation in particular.",
              "Table 1a: RB+LLM Negs +3.50 / +6.30 / +15.67 (Object / Attribute / Relation) over CLIP, the "
              "best Attribute and Relation of all rows; Table 3: best on 5 of 7 subtypes")
    c.conditions = [gain(methods, ev, RBLLM, BASE_METHOD, RELATION, "Relation gain over CLIP"),
                    gain(methods, ev, RBLLM, BASE_METHOD, REL_MINUS_ATTR,
                         "Relation gain - Attribute gain over CLIP (as Relation - Attribute)"),
                    gain(methods, ev, RBLLM, BASE_METHOD, REL_MINUS_OBJ,
                         "Relation gain - Object gain over CLIP (as Relation - Object)")]
    c.conditions += [gain(methods, ev, RBLLM, rival, SVLC_MEAN, "mean(Attribute, Relation)")
                     for rival in C1_RIVALS]
    return c


def _claims_c2(methods: Methods, ev: Evidence) -> Claim:
    c = Claim("C2", "Negatives only inside the contrastive loss (no separate negatives loss) give little "
              "SVLC gain.",
              "Table 2: w/o Neg Loss -0.02 / -7.88 (Attribute / Relation) over CLIP vs RB+LLM Negs +6.30 / "
              "+15.67; CLIP+LoRA -1.32 / -7.53")
    rbllm, noneg, lora = (methods.label(m) for m in (RBLLM, NONEG, LORA))
    terms = [(RBLLM, LITTLE_FRACTION), (NONEG, -1.0), (LORA, 1.0 - LITTLE_FRACTION)]
    c.conditions = [
        gain(methods, ev, RBLLM, LORA, SVLC_MEAN, "mean(Attribute, Relation) gain of the separate loss"),
        combination(methods, ev, terms, SVLC_MEAN, STRICT,
                    f"mean(Attribute, Relation): {LITTLE_FRACTION:.3g} x ({rbllm} - {lora}) - "
                    f"({noneg} - {lora}) > 0"),
    ]
    return c


def _claims_c3(methods: Methods, ev: Evidence) -> Claim:
    c = Claim("C3", "Positives (the analogy loss) stabilise zero-shot accuracy while lowering the SVLC gain.",
              "Table 1a: Combined ZS 54.77 vs RB+LLM 54.66; Attribute / Relation 71.97 / 68.95 vs 73.90 / "
              "78.72")
    c.conditions = [no_worse(methods, ev, COMBINED, RBLLM, ZS, 0.0, "21-task zero-shot mean"),
                    gain(methods, ev, RBLLM, COMBINED, SVLC_MEAN, "mean(Attribute, Relation)")]
    return c


def _claims_c4(methods: Methods, ev: Evidence, lora: Iterable[str], references: dict[str, str]) -> Claim:
    c = Claim("C4", "With LoRA the zero-shot drop stays within about 2 points of the base it started from (every "
              "LoRA row: CC3M on both architectures and CyCLIP, and LAION).",
              "Table 1a: ZS drops 0.04 (+LoRA, a gain) to 2.05 (RB Neg) points from CLIP's 56.37; 1b: at most "
              "0.63; 1e: none; 1g (LAION): none")
    c.conditions = [no_worse(methods, ev, m, references.get(m, BASE_METHOD), ZS, -ZS_DROP_MAX,
                             "21-task zero-shot mean") for m in lora if m in methods]
    return c


def _claims_c5(methods: Methods, ev: Evidence) -> Claim:
    c = Claim("C5", "Full fine-tuning without LoRA is worse than LoRA (RB+LLM Negs both ways).",
              "Table 1 caption: 'significantly worse in all metrics' (no numbers printed)")
    c.conditions = [gain(methods, ev, RBLLM, FULL, VLC_MEAN, "mean(Object, Attribute, Relation)"),
                    gain(methods, ev, RBLLM, FULL, ZS, "21-task zero-shot mean")]
    return c


def tsvlc_claims(ev: Evidence, methods: Methods, lora: Iterable[str] | None = None,
                 references: dict[str, str] | None = None) -> list[Claim]:
    """C1-C5 on the collected metrics (``ev``; the derived metrics are added here). ``lora``: the LoRA TSVLC
    methods C4 covers (default :data:`LORA_METHODS`; the report passes :func:`lora_methods` of params);
    ``references``: each one's un-fine-tuned base method (default CLIP; the report passes
    :func:`reference_methods`)."""
    ev = Evidence(with_claim_metrics(ev.long), ev.metrics_dir, ev.bootstrap, {**ev.derived, **DERIVED})
    lora = LORA_METHODS if lora is None else tuple(lora)
    return [_claims_c1(methods, ev), _claims_c2(methods, ev), _claims_c3(methods, ev),
            _claims_c4(methods, ev, lora, references or {}), _claims_c5(methods, ev)]
