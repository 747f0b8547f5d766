"""Figures of the ARO report (Figures 1-3), drawn from the collected metrics (means and spreads over whole chains,
:func:`vlcomp.reporting.collect.summary`) and the paper's printed values. Every figure carries its own key (what a
colour, a hatch, a line and an error bar mean); the line under it (what the spread is over and n) is
:func:`vlcomp.reporting.collect.spread_legend`, written by the report next to the figure."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from ....benchmarks.retrieval import metric_key as retrieval_key  # noqa: E402
from ...collect import Methods, value  # noqa: E402
from ...paper_values import lookup  # noqa: E402
from .tables import (  # noqa: E402
    DATASET_LABEL,
    IMAGE_STRATEGY_LABELS,
    ORDER_CHANCE,
    PAPER_ONLY,
    TEXT_STRATEGY_LABELS,
    radar_axes,
    radar_paper_value,
)

TOY_PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c")
PAPER_COLOUR = "#bbbbbb"
COMPOSITIONAL_COLOUR, DOWNSTREAM_COLOUR = "tab:blue", "tab:green"
#: Figure 1's panels: (title, metric key, where the paper prints it, chance level).
F1_PANELS = (("VG-Relation", "aro/vg_relation/macro_acc", ("ARO-T6", "vg_relation", "macro_acc"), 0.5),
             ("VG-Attribution", "aro/vg_attribution/macro_acc", ("ARO-X1", "vg_attribution", "macro_acc"), 0.5),
             ("COCO-Order", "aro/coco_order/acc", ("ARO-T5", "coco_order", "acc"), ORDER_CHANCE),
             ("Flickr30k-Order", "aro/flickr30k_order/acc", ("ARO-T5", "flickr30k_order", "acc"), ORDER_CHANCE))


def toy_colour(methods: Methods, method: str) -> str:
    """A method's colour: its position in the report's method order (CLIP, CLIP-FT, NegCLIP keep theirs)."""
    return TOY_PALETTE[methods.order.index(method) % len(TOY_PALETTE)]


def _spread(summ: pd.DataFrame, method: str, key: str) -> float:
    """The error bar: the sample std over chains (NaN, no bar drawn, for a single run)."""
    return value(summ, method, key, "std")


def figure1(summ: pd.DataFrame, paper: pd.DataFrame, methods: Methods) -> plt.Figure:
    """ARO-F1: per-model accuracy on VG-R, VG-A and the Order tasks; toy models solid (mean over chains, error bar
    ± 1 sample std over chains), the paper's printed values grey and hatched; dashed line = chance."""
    fig, axes = plt.subplots(1, 4, figsize=(14, 3.6), sharey=True)
    for ax, (title, key, (art, ds, metric), chance) in zip(axes, F1_PANELS, strict=True):
        labels, heights, errs, colours, hatches = [], [], [], [], []
        for m in methods.order:
            labels.append(f"{methods.label(m)}\n(toy)")
            heights.append(value(summ, m, key))
            errs.append(_spread(summ, m, key))
            colours.append(toy_colour(methods, m))
            hatches.append("")
        for m in ("clip", *PAPER_ONLY):
            v = lookup(paper, art, ds, m, metric)
            if v is None and art == "ARO-T6":
                v = lookup(paper, "ARO-T2", ds, m, metric, "overall")
            if v is None:
                continue
            labels.append(f"{methods.label(m)}\n(paper)")
            heights.append(v)
            errs.append(np.nan)
            colours.append(PAPER_COLOUR)
            hatches.append("//")
        bars = ax.bar(range(len(labels)), heights, yerr=errs, color=colours, capsize=3,
                      error_kw={"elinewidth": 1, "ecolor": "k"})
        for bar, h in zip(bars, hatches, strict=True):
            bar.set_hatch(h)
        ax.axhline(chance, ls="--", c="k", lw=1)
        ax.set_xticks(range(len(labels)), labels, fontsize=7)
        ax.set_title(title)
        ax.set_ylim(0, 1)
    axes[0].set_ylabel("accuracy")
    handles = [*(Patch(color=toy_colour(methods, m), label=f"{methods.label(m)} (toy): mean over chains")
                 for m in methods.order),
               Patch(facecolor=PAPER_COLOUR, hatch="//", label="printed in the paper"),
               Line2D([], [], color="k", ls="--", lw=1, label="chance (0.5 VG; 0.2 Order)"),
               Line2D([], [], color="k", marker="|", markersize=10, ls="none",
                      label="error bar: ± 1 sample std over chains")]
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=8, frameon=False)
    return fig


def figure2(summ: pd.DataFrame, methods: Methods) -> plt.Figure:
    """ARO-F2: image->text R@1 under caption shuffles (top) and image shuffles (bottom), toy models; bars are means
    over chains, error bars ± 1 sample std over chains. The key sits under the panels, clear of the bars."""
    fig, axes = plt.subplots(2, 2, figsize=(13, 7), sharey=True)
    for row, labels in enumerate((TEXT_STRATEGY_LABELS, IMAGE_STRATEGY_LABELS)):
        for col, ds in enumerate(("coco", "flickr30k")):
            ax = axes[row, col]
            width = 0.8 / len(methods.order)
            for j, m in enumerate(methods.order):
                keys = [retrieval_key(ds, strategy, "i2t/recall_at_1") for strategy in labels]
                ax.bar(np.arange(len(labels)) + j * width, [value(summ, m, k) for k in keys], width,
                       yerr=[_spread(summ, m, k) for k in keys], capsize=2, color=toy_colour(methods, m),
                       label=f"{methods.label(m)} (toy): mean over chains")
            ax.set_xticks(np.arange(len(labels)) + width * (len(methods.order) - 1) / 2, list(labels.values()),
                          rotation=25, ha="right", fontsize=7)
            ax.set_title(f"{DATASET_LABEL[ds]}: {'caption' if row == 0 else 'image'} shuffles")
            ax.set_ylabel("Text R@1 (image→text)")
    handles, names = axes[0, 0].get_legend_handles_labels()
    handles.append(Line2D([], [], color="k", marker="|", markersize=10, ls="none"))
    names.append("error bar: ± 1 sample std over chains")
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.legend(handles, names, loc="lower center", ncol=len(names), fontsize=8, frameon=False)
    return fig


RADAR_TICKS = (0.25, 0.5, 0.75)
RADAR_CLEARANCE = 0.04  # a ring label sits at least this far outside every polygon


def radar_label_place(values: list[list[float]], ticks: tuple[float, ...] = RADAR_TICKS) -> tuple[int, list[float]]:
    """Where a radar's ring labels go so that no polygon covers them: the gap between two neighbouring spokes whose
    polygons reach least far out (a polygon's edge within a gap lies inside the larger of its two vertices), and the
    rings beyond every polygon there. ``values``: one list per polygon, one value per spoke (NaN: no vertex)."""
    n = len(values[0]) if values else 0
    reach = []
    for i in range(n):
        around = [v[j] for v in values for j in (i, (i + 1) % n) if v[j] == v[j]]
        reach.append(max(around, default=0.0))
    gap = int(np.argmin(reach)) if reach else 0
    return gap, [t for t in ticks if t >= (reach[gap] if reach else 0.0) + RADAR_CLEARANCE]


def figure3(summ: pd.DataFrame, paper: pd.DataFrame, methods: Methods) -> plt.Figure:
    """ARO-F3 (radar): CLIP vs CLIP-FT vs NegCLIP over 4 compositional and 5 downstream tasks (means over chains;
    a retrieval axis is the mean of text and image R@1); the paper's Table 6 values in a second panel. Ring labels
    sit in the gap between two spokes that the polygons leave free (:func:`radar_label_place`); the title names
    every ring."""
    axes_def = radar_axes()
    angles = np.linspace(0, 2 * np.pi, len(axes_def), endpoint=False).tolist()
    names = [name.replace(" retrieval", " retrieval\n(mean of text\nand image R@1)") for name, _ in axes_def]
    fig, axs = plt.subplots(1, 2, figsize=(12, 6), subplot_kw={"polar": True})
    for ax, source in zip(axs, ("toy", "paper"), strict=True):
        polygons = []
        for m in methods.order:
            vals = [value(summ, m, k) if source == "toy" else radar_paper_value(paper, m, k) for _, k in axes_def]
            polygons.append(vals)
            ax.plot(angles + angles[:1], vals + vals[:1], label=methods.label(m), color=toy_colour(methods, m))
            ax.fill(angles + angles[:1], vals + vals[:1], alpha=0.08, color=toy_colour(methods, m))
        ax.set_xticks(angles, names, fontsize=7)
        for tick, (name, _) in zip(ax.get_xticklabels(), axes_def, strict=True):
            compositional = name in ("VG-Relation", "VG-Attribution", "COCO Order", "Flickr30k Order")
            tick.set_color(COMPOSITIONAL_COLOUR if compositional else DOWNSTREAM_COLOUR)
        ax.set_ylim(0, 1)
        gap, labelled = radar_label_place(polygons)
        between = np.degrees(angles[gap] + np.pi / len(angles))  # halfway between spokes gap and gap + 1
        ax.set_rgrids(RADAR_TICKS, [f"{t:g}" if t in labelled else "" for t in RADAR_TICKS], angle=between,
                      fontsize=6, color="#555555")
        what = "mean over chains" if source == "toy" else "Table 6"
        ax.set_title(f"{source}: {what}\n(rings at {', '.join(f'{t:g}' for t in RADAR_TICKS)}; outer circle 1)",
                     fontsize=9, pad=18)
    handles = [Line2D([], [], color=toy_colour(methods, m), label=methods.label(m)) for m in methods.order]
    handles += [Patch(color="none", label="axis labels: blue compositional, green downstream")]
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8, frameon=False)
    return fig
