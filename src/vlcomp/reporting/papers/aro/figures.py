"""Figures of the ARO report (Figures 1-3), drawn from collected metrics and the paper's printed values."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ....benchmarks.retrieval import metric_key as retrieval_key  # noqa: E402
from ...collect import Methods, value  # noqa: E402
from ...paper_values import lookup  # noqa: E402
from .tables import (  # noqa: E402
    DATASET_LABEL,
    IMAGE_STRATEGY_LABELS,
    PAPER_ONLY,
    TEXT_STRATEGY_LABELS,
    radar_axes,
    radar_paper_value,
    radar_value,
)

TOY_PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c")


def toy_colour(methods: Methods, method: str) -> str:
    """A method's colour: its position in the report's method order (CLIP, CLIP-FT, NegCLIP keep theirs)."""
    return TOY_PALETTE[methods.order.index(method) % len(TOY_PALETTE)]


def figure1(summ: pd.DataFrame, paper: pd.DataFrame, methods: Methods) -> plt.Figure:
    """ARO-F1: per-model accuracy on VG-R, VG-A and the Order tasks; toy models solid (± std over seeds),
    the paper's four VLMs hatched ("paper only"); dashed line = chance."""
    panels = (("VG-Relation", "aro/vg_relation/macro_acc", ("ARO-T6", "vg_relation", "macro_acc"), 0.5),
              ("VG-Attribution", "aro/vg_attribution/macro_acc", ("ARO-X1", "vg_attribution", "macro_acc"), 0.5),
              ("COCO-Order", "aro/coco_order/acc", ("ARO-T5", "coco_order", "acc"), 0.2),
              ("Flickr30k-Order", "aro/flickr30k_order/acc", ("ARO-T5", "flickr30k_order", "acc"), 0.2))
    fig, axes = plt.subplots(1, 4, figsize=(14, 3.4), sharey=True)
    for ax, (title, key, (art, ds, metric), chance) in zip(axes, panels, strict=True):
        labels, heights, errs, colours, hatches = [], [], [], [], []
        for m in methods.order:
            std = value(summ, m, key, "std")
            if (std != std or std == 0) and key.endswith("order/acc"):
                std = value(summ, m, key + "_std")
            labels.append(f"{methods.label(m)}\n(toy)")
            heights.append(value(summ, m, key))
            errs.append(0 if std != std else std)
            colours.append(toy_colour(methods, m))
            hatches.append("")
        for m in ("clip", *PAPER_ONLY):
            v = lookup(paper, art if m != "clip" or art != "ARO-T6" else "ARO-T6", ds, m, metric)
            if v is None and art == "ARO-T6":
                v = lookup(paper, "ARO-T2", ds, m, metric, "overall")
            if v is None:
                continue
            labels.append(f"{methods.label(m)}\n(paper)")
            heights.append(v)
            errs.append(0)
            colours.append("#bbbbbb")
            hatches.append("//")
        bars = ax.bar(range(len(labels)), heights, yerr=errs, color=colours, capsize=3)
        for bar, h in zip(bars, hatches, strict=True):
            bar.set_hatch(h)
        ax.axhline(chance, ls="--", c="k", lw=1)
        ax.set_xticks(range(len(labels)), labels, fontsize=7)
        ax.set_title(title)
        ax.set_ylim(0, 1)
    axes[0].set_ylabel("accuracy")
    fig.tight_layout()
    return fig


def figure2(summ: pd.DataFrame, methods: Methods) -> plt.Figure:
    """ARO-F2: image->text R@1 under caption shuffles (top) and image shuffles (bottom), toy models; error bars
    are std over shuffle seeds (CLIP) or over training seeds (fine-tuned models)."""
    fig, axes = plt.subplots(2, 2, figsize=(13, 6.5), sharey=True)
    for row, labels in enumerate((TEXT_STRATEGY_LABELS, IMAGE_STRATEGY_LABELS)):
        for col, ds in enumerate(("coco", "flickr30k")):
            ax = axes[row, col]
            width = 0.8 / len(methods.order)
            for j, m in enumerate(methods.order):
                ys, es = [], []
                for strategy in labels:
                    key = retrieval_key(ds, strategy, "i2t/recall_at_1")
                    y, e = value(summ, m, key), value(summ, m, key, "std")
                    if e != e or e == 0:
                        e = value(summ, m, key + "_std")
                    ys.append(y)
                    es.append(0 if e != e else e)
                ax.bar(np.arange(len(labels)) + j * width, ys, width, yerr=es, capsize=2, color=toy_colour(methods, m),
                       label=f"{methods.label(m)} (toy)")
            ax.set_xticks(np.arange(len(labels)) + width, list(labels.values()), rotation=25, ha="right", fontsize=7)
            ax.set_title(f"{DATASET_LABEL[ds]}: {'caption' if row == 0 else 'image'} shuffles")
            ax.set_ylabel("Text R@1 (image→text)")
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def figure3(summ: pd.DataFrame, paper: pd.DataFrame, methods: Methods) -> plt.Figure:
    """ARO-F3 (radar): CLIP vs CLIP-FT vs NegCLIP over 4 compositional and 5 downstream tasks; the paper's
    Table 6 values in a second panel for comparison."""
    axes_def = radar_axes()
    angles = np.linspace(0, 2 * np.pi, len(axes_def), endpoint=False).tolist()
    fig, axs = plt.subplots(1, 2, figsize=(12, 5.5), subplot_kw={"polar": True})
    for ax, source in zip(axs, ("toy", "paper"), strict=True):
        for m in methods.order:
            vals = [radar_value(summ, m, k) if source == "toy" else radar_paper_value(paper, m, k) for _, k in axes_def]
            ax.plot(angles + angles[:1], vals + vals[:1], label=methods.label(m), color=toy_colour(methods, m))
            ax.fill(angles + angles[:1], vals + vals[:1], alpha=0.08, color=toy_colour(methods, m))
        ax.set_xticks(angles, [name for name, _ in axes_def], fontsize=7)
        for tick, (name, _) in zip(ax.get_xticklabels(), axes_def, strict=True):
            tick.set_color("tab:blue" if name in ("VG-Relation", "VG-Attribution", "COCO Order", "Flickr30k Order")
                           else "tab:green")
        ax.set_ylim(0, 1)
        ax.set_title(f"{source} (blue: compositional, green: downstream)", fontsize=9)
    axs[0].legend(loc="lower left", bbox_to_anchor=(-0.15, -0.15), fontsize=8)
    fig.tight_layout()
    return fig
