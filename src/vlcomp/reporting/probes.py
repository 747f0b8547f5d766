"""The toy world's mechanism probes (the world issue's P1-P5), as report tables and figures.

Each probe is a script under ``scripts/`` that appends its rows to a CSV under ``calibration/`` (committed); a
paper's report shows the probes its claims rest on (its registry entry lists the files,
:attr:`vlcomp.reporting.papers.Paper.calibration`, so its report stage depends on them). Nothing here trains or
scores a model: the tables are read from the CSVs.

- :func:`perception` (P1, ``scripts/probe_perception.py``, ``calibration/world_perception.csv``): can the image
  tower tell a single object's shape? Supervised from scratch at several object sizes and render sizes, and a
  linear probe on the frozen base's features; the target is small-object accuracy >= :data:`P1_TARGET` within
  :data:`P1_BUDGET` samples.
- :func:`pretraining` (P4, first part; ``scripts/probe_pretraining.py``, ``calibration/world_pretraining.csv``): does
  longer contrastive pretraining of the chain-b0 base, on today's world, teach it to see shapes? Zero-shot and
  linear-probe shape accuracy per pretraining length; the target is zero-shot shape >= :data:`P4_ZS_TARGET`.
- :func:`prior_uptake` (P3, ``scripts/probe_priors.py``, ``calibration/prior_uptake.csv``): can the text tower learn
  the world's co-occurrence priors (a text-only true-vs-negative classifier), and does NegCLIP with the image tower
  frozen raise the wrong-image control towards the blind-text ceiling?
- :func:`batchnorm` (item 11; ``scripts/probe_batchnorm.py``, ``calibration/batchnorm_summary.csv``): how much of the
  chain-to-chain spread comes from the BatchNorm running statistics?

- :func:`base_gate` (item 2; ``scripts/probe_base_gate.py``, ``calibration/world_base_gate.csv``): does a base see
  shapes, retrieve better than the first world's base, and still behave like a bag of words on the VG twins?

P2 (shape-only relations) and the plasticity half of P4 are rows of ``calibration/relation_probe.csv`` with bare
shape nouns, shown by the ARO report's relation-probe table.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .render import Figure, Table  # noqa: E402

P1_TARGET = 0.95  # small-object shape accuracy the world issue asks of a tower that "sees" shapes
P1_BUDGET = 20480  # ... within ~20k samples (the probe's batches of 128: 160 steps)
P1_CONFIG = ("mode", "arch", "image_size", "object_scale", "lr", "seed")
P4_ZS_TARGET = 0.7  # the world issue's gate for a base that sees shapes: zero-shot shape accuracy


def _binomial_se(p: float, n: int) -> float:
    return float(np.sqrt(p * (1 - p) / n))


def _config_label(r: pd.Series) -> str:
    what = "supervised from scratch" if r["mode"] == "scratch" else "linear probe on the frozen base (b0)"
    return (f"{r['arch']}, {int(r['image_size'])} px, objects x{r['object_scale']:g} "
            f"(small {r['small_px']:g} px, large {r['large_px']:g} px): {what}")


def perception_verdicts(df: pd.DataFrame) -> pd.DataFrame:
    """Per configuration: small- and large-object accuracy at the budget (the last evaluation at or below
    :data:`P1_BUDGET` samples) and at the end, and whether the target is met within the budget."""
    rows = []
    for _, g in df.groupby(list(P1_CONFIG), sort=False, dropna=False):
        g = g.sort_values("samples")
        within = g[g["samples"] <= P1_BUDGET]
        at = within.iloc[-1] if len(within) else g.iloc[0]
        last = g.iloc[-1]
        rows.append({"configuration": _config_label(last), "samples at budget": int(at["samples"]),
                     "small acc at budget": at["acc_small"], "large acc at budget": at["acc_large"],
                     "samples (last)": int(last["samples"]), "small acc (last)": last["acc_small"],
                     "large acc (last)": last["acc_large"],
                     "target met": "yes" if (within["acc_small"] >= P1_TARGET).any() else "no"})
    return pd.DataFrame(rows)


def perception(path: str | Path) -> list[tuple[str, Table | Figure]] | None:
    """P1's verdict table, every evaluation row, and the learning curves; None when the probe has not run."""
    path = Path(path)
    if not path.exists():
        return None
    df = pd.read_csv(path)
    n_eval = 800  # scripts/probe_perception.py --n-eval (held-out images per size class)
    se = _binomial_se(0.5, n_eval)
    verdicts = perception_verdicts(df)
    legend = (f"One seed per configuration (seed 0): no spread over runs. Accuracy over {n_eval} held-out images "
              f"per size class (binomial SE at most {se:.3f}); chance {1 / 8:.3f} (8 shapes). Target (world issue, "
              f"P1): small-object accuracy >= {P1_TARGET:g} within ~{P1_BUDGET:,} samples.")
    shown = verdicts.copy()
    for c in [c for c in shown.columns if "acc" in c]:
        shown[c] = shown[c].map(lambda v: f"{v:.3f}")
    table = Table(verdicts, shown, legend=legend)
    cols = ["mode", "arch", "image_size", "object_scale", "small_px", "large_px", "samples", "train_loss",
            "acc_small", "acc_large", "acc_small_bn_reest", "acc_large_bn_reest"]
    rows = Table(df[[c for c in cols if c in df.columns]].reset_index(drop=True), legend=(
        "Every evaluation point. *_bn_reest: the same checkpoint scored with its BatchNorm statistics re-estimated on "
        "2,048 fresh training images instead of its running statistics (the world issue's item 11). A linear probe "
        "has no BatchNorm to re-estimate (its tower is frozen in eval mode)."))
    return [("", perception_summary(df, verdicts)), ("", table), ("Every evaluation point", rows),
            ("", perception_figure(df))]


def perception_summary(df: pd.DataFrame, verdicts: pd.DataFrame) -> str:
    """What P1 found, in numbers from the rows: which configurations meet the target, and the best a linear probe
    on the frozen base reaches on small objects."""
    met = verdicts.loc[verdicts["target met"] == "yes", "configuration"].tolist()
    base = df[df["mode"] == "base-linear"]
    scratch = df[df["mode"] == "scratch"]
    parts = [("**Target met by:** " + "; ".join(met) + ".") if met else "**No configuration meets the target.**"]
    if len(scratch):
        best = scratch.loc[scratch["acc_small"].idxmax()]
        parts.append(f"Best supervised small-object accuracy: {best['acc_small']:.3f} ({_config_label(best)}, "
                     f"{int(best['samples']):,} samples).")
    if len(base):
        b = base.loc[base["acc_small"].idxmax()]
        parts.append(f"A linear probe on the frozen base's features reaches at most {b['acc_small']:.3f} on small "
                     f"and {base['acc_large'].max():.3f} on large objects (chance 0.125): the tower can learn "
                     "shapes, contrastive pretraining did not make it." if len(scratch) and
                     scratch["acc_small"].max() > b["acc_small"] + 0.3 else
                     f"A linear probe on the frozen base's features reaches at most {b['acc_small']:.3f} on small "
                     "objects.")
    return " ".join(parts)


def perception_figure(df: pd.DataFrame) -> Figure:
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    for ax, size in zip(axes, ("small", "large"), strict=True):
        for _, g in df.groupby(list(P1_CONFIG), sort=False, dropna=False):
            g = g.sort_values("samples")
            r = g.iloc[-1]
            label = (f"{'scratch' if r['mode'] == 'scratch' else 'base linear'}, {int(r['image_size'])} px, "
                     f"x{r['object_scale']:g}")
            ax.plot(g["samples"], g[f"acc_{size}"], marker="o", ms=3,
                    ls="-" if r["mode"] == "scratch" else "--", label=label)
        ax.axhline(P1_TARGET, color="k", lw=0.8, ls=":")
        ax.axhline(1 / 8, color="grey", lw=0.8, ls=":")
        ax.axvline(P1_BUDGET, color="grey", lw=0.6)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("training samples")
        ax.set_title(f"{size} objects")
    axes[0].set_ylabel("shape accuracy (held out)")
    axes[1].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return Figure(fig, legend=(f"Shape accuracy against samples seen; dotted lines: the target {P1_TARGET:g} and "
                               "chance 0.125; the vertical line: the ~20k-sample budget. One seed per line."))


def pretraining(path: str | Path) -> list[tuple[str, Table]] | None:
    """P4's rows (one per pretraining length) as a table; None when the probe has not run."""
    path = Path(path)
    if not path.exists():
        return None
    df = pd.read_csv(path)
    if "world" not in df:  # rows before the column: the pipeline's world
        df.insert(1, "world", "world")
    df["world"] = df["world"].fillna("world")
    df = df.sort_values(["world", "base", "epochs"]).reset_index(drop=True)
    cols = ["world", "base", "epochs", "steps", "samples", "final_loss", "zs_small", "zs_large", "lin_small",
            "lin_large"]
    data = df[cols]
    shown = data.copy()
    for c in ("zs_small", "zs_large", "lin_small", "lin_large"):
        shown[c] = shown[c].map(lambda v: f"{v:.3f}")
    parts = []
    for world, g in df.groupby("world", sort=True):
        best = g.loc[g["zs_small"].idxmax()]
        met = (g[["zs_small", "zs_large"]].min(axis=1) >= P4_ZS_TARGET).any()
        parts.append(f"{world}: best zero-shot small-object shape accuracy {best['zs_small']:.3f} after "
                     f"{best['epochs']:g} epochs ({int(best['samples']):,} samples), target {P4_ZS_TARGET:g} "
                     + ("met." if met else "not met."))
    summary = " ".join(parts)
    return [("", summary), ("", Table(data, shown, legend=(
        "One pretraining run per world and length, chain b0's seed and recipe (`pretrain` params) with only "
        "`pretrain.epochs` changed (`world`: the pipeline's; `world_v2`: the candidate world of `docs/world_v2.md`); the 2-epoch row re-runs the pipeline's base recipe (same seed and data; not bitwise the stage's model, "
        "which ran with the stage's thread settings); epochs 0 is the untrained initialisation. zs_*: zero-shot shape accuracy over 8 shapes (the "
        "zero-shot twins' prompt templates), lin_*: a linear probe on the frozen image features (10,240 images); "
        f"both on P1's 800 held-out single-object images per size class at today's sizes. Chance {1 / 8:.3f}. One "
        "seed: no spread.")))]


P3_KEYS = ("vgr_macro", "vgr_wrong_image", "vga_macro", "vga_wrong_image", "vga_colour", "text_pair_acc")


def prior_uptake(path: str | Path) -> list[tuple[str, Table]] | None:
    """P3's rows (one per arm and evaluation point) with the blind-text ceiling beside them; None before it ran."""
    path = Path(path)
    if not path.exists():
        return None
    df = pd.read_csv(path).sort_values(["arm", "steps"]).reset_index(drop=True)
    cols = ["arm", "base", "steps", "samples", *[c for c in P3_KEYS if c in df], "vgr_text_cosine", "vga_text_cosine"]
    data = df[[c for c in cols if c in df]]
    shown = data.copy()
    for c in shown.columns[4:]:
        shown[c] = shown[c].map(lambda v: "" if pd.isna(v) else f"{v:.3f}")
    ceiling = df.iloc[0]
    blind = ", ".join(f"{k.removeprefix('blind_')} {ceiling[k]:.3f}" for k in ("blind_vgr_macro", "blind_vga_macro",
                                                                              "blind_vga_colour") if k in df
                      and not pd.isna(ceiling[k]))
    return [("", Table(data, shown, legend=(
        "One run per arm, chain b0's base and seed (single seed: no spread). `text-only`: the base's text tower "
        "and a linear head trained to rank each coco_train caption above its NegCLIP-mined negative, no image "
        "(`text-only-fresh`: the same from a random text tower); scored on the VG twins' caption pairs, where own and "
        "wrong image are the same by construction. `negclip-*`: NegCLIP's loss on the pipeline's mined batches with "
        "the image tower frozen (weights and BatchNorm statistics) or not, scored with the image and with the VG "
        "twins' wrong-image control. `text_pair_acc`: held-out coco_train pairs. Blind-text ceiling (scene-graph "
        f"counts, no training): {blind or 'not computed'}.")))]


def batchnorm(path: str | Path) -> list[tuple[str, Table]] | None:
    """Item 11's summary: per method and key, the SD over chains with stored and re-estimated BatchNorm statistics,
    and the NegCLIP - CLIP-FT difference per chain; None before the probe ran."""
    path = Path(path)
    if not path.exists():
        return None
    df = pd.read_csv(path)
    wide = df.pivot_table(index=["method", "key"], columns="stats", values=["mean", "std"]).reset_index()
    wide.columns = [" ".join(c).strip() if isinstance(c, tuple) else c for c in wide.columns]
    shown = wide.copy()
    for c in shown.columns[2:]:
        shown[c] = shown[c].map(lambda v: "" if pd.isna(v) else f"{v:.3f}")
    n = int(df["count"].max()) if "count" in df else 0
    return [("", Table(wide, shown, legend=(
        f"Mean and sample SD (ddof=1) over {n} whole chains (base seeds x fine-tuning seed 0) of the pipeline's "
        "checkpoints, scored as the pipeline scores them (`stored`: the BatchNorm running statistics the last "
        "training batches left) and with every BatchNorm layer's statistics re-estimated as the plain average over "
        "2,048 fixed coco_train images (`reestimated`, weights untouched). `negclip-clip_ft`: the per-chain "
        "difference NegCLIP - CLIP-FT, the quantity ARO's claims test.")))]


GATE_VG_MAX = 0.6  # the world issue's gate: VG-R and VG-A at most this for a base (ARO's bag-of-words premise)
GATE_WRONG_IMAGE = 0.05  # ... with the wrong-image control within this of chance


def gate_verdicts(df: pd.DataFrame, reference: str = "b0") -> pd.DataFrame:
    """One row per base: each gate criterion met or not (COCO R@1 against the first world's ``reference`` base)."""
    ref = df[(df["world"] == "world") & (df["base_model"] == reference)]
    ref_r1 = float(ref["coco_i2t_r1"].iloc[0]) if len(ref) else np.nan
    out = df[["world", "base_model"]].copy()
    out["sees shapes (CIFAR10 twin >= 0.7)"] = np.where(df["cifar10_zs"] >= P4_ZS_TARGET, "yes", "no")
    out["R@1 above the first world's base"] = np.where(df["coco_i2t_r1"] > ref_r1, "yes", "no")
    out["VG-R, VG-A <= 0.6"] = np.where((df["vgr"] <= GATE_VG_MAX) & (df["vga"] <= GATE_VG_MAX), "yes", "no")
    wrong = (df[["vgr_wrong_image", "vga_wrong_image"]] - 0.5).abs().max(axis=1)
    out["wrong image at chance (within 0.05)"] = np.where(wrong <= GATE_WRONG_IMAGE, "yes", "no")
    return out


def base_gate(path: str | Path) -> list[tuple[str, Table]] | None:
    """The gate rows and their verdicts; None before the probe ran."""
    path = Path(path)
    if not path.exists():
        return None
    df = pd.read_csv(path).sort_values(["world", "base_model"]).reset_index(drop=True)
    cols = ["world", "base_model", "cifar10_zs", "coco_i2t_r1", "coco_t2i_r1", "vgr", "vgr_wrong_image",
            "vgr_geometric", "vgr_geometric_wrong_image", "vgr_role", "vgr_role_wrong_image", "vgr_role_n_cases", "vga",
            "vga_wrong_image"]
    data = df[[c for c in cols if c in df]]
    shown = data.copy()
    for c in shown.columns[2:]:
        fmt = "{:,.0f}" if c.endswith("n_cases") else "{:.3f}"
        shown[c] = shown[c].map(lambda v, fmt=fmt: "" if pd.isna(v) else fmt.format(v))
    return [("", Table(data, shown, legend=(
        "One checkpoint per row, scored on the benchmarks built from its own world (single seed: no spread). b0: the "
        "pipeline's chain-b0 base (2 epochs); e16 / e32: chain b0's recipe pretrained 16 / 32 epochs "
        "(`scripts/probe_pretraining.py --save`). cifar10_zs: the CIFAR10 twin (10 shapes, chance 0.1)."))),
            ("", Table(gate_verdicts(df), legend="The gate of the world issue (item 2), per base."))]
