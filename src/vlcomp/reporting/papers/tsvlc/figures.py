"""TSVLC-F3 (Fig. 3, CC3M fine-tuning, detailed): a radar over the 7 Attribute / Relation subtypes.

Unlike the reference code (``radar_with_zs.py``: a radial scale per spoke), every spoke shares ONE radial
scale starting at 0 (accuracy, 0-100 %), so a polygon's shape can be read across spokes; a dashed ring marks
chance (50 %, a two-way choice). Left panel: the toy's chain means of CLIP, CLIP+LoRA, RB+LLM Negs and RB+LLM
Negs+Pos (Combined); right panel: the values the paper prints, Table 3's RB+LLM Negs and Combined rows (CLIP's
and CLIP+LoRA's per-subtype values are not printed anywhere, catalog §4.5). The figure is saved by
:func:`vlcomp.reporting.render.save_figure` (PNG and PDF without timestamps: byte-stable).
"""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from ...collect import Methods, value  # noqa: E402
from ...tree import BASE_METHOD  # noqa: E402
from ..aro.figures import RADAR_TICKS, radar_label_place, toy_colour  # noqa: E402
from . import printed as P  # noqa: E402

SPOKES = P.T3_COLUMNS[:7]  # (label, printed id, toy key) of A-Color .. R-Spatial
#: Fig. 3's series: CLIP, CLIP+LoRA, RB+LLM Negs, RB+LLM Negs+Pos
F3_SERIES = (BASE_METHOD, "tsvlc_lora", "tsvlc_rbllm", "tsvlc_combined")
SERIES_LABEL = {"tsvlc_combined": "RB+LLM Negs+Pos (Combined)"}
CHANCE = 0.5
NOT_PRINTED = "CLIP and CLIP+LoRA: not printed in the paper"


def series_label(methods: Methods, method: str) -> str:
    return SERIES_LABEL.get(method, methods.label(method))


def toy_values(summ: pd.DataFrame, method: str) -> list[float]:
    """A series' vertices: the mean over chains of each spoke's metric (NaN: no value)."""
    return [value(summ, method, key) for _, _, key in SPOKES]


def paper_values(method: str) -> list[float]:
    """Table 3's printed values of the method's row (NaN for every spoke when the paper prints none)."""
    row = P.printed_row(P.TABLE3, "TSVLC-T3", method)
    return [row.cells[cid].value if row else math.nan for _, cid, _ in SPOKES]


def figure3(summ: pd.DataFrame, methods: Methods) -> plt.Figure:
    """TSVLC-F3: two polar panels on one shared 0-100 % scale (toy chain means; the paper's printed
    values)."""
    angles = np.linspace(0, 2 * np.pi, len(SPOKES), endpoint=False).tolist()
    colours = Methods((BASE_METHOD, *[m for m in F3_SERIES if m != BASE_METHOD]), methods.labels)
    fig, axs = plt.subplots(1, 2, figsize=(12, 6), subplot_kw={"polar": True})
    for ax, source in zip(axs, ("toy", "paper"), strict=True):
        polygons = []
        for m in F3_SERIES:
            vals = toy_values(summ, m) if source == "toy" else paper_values(m)
            if all(math.isnan(v) for v in vals):
                continue
            polygons.append(vals)
            ax.plot(angles + angles[:1], vals + vals[:1], color=toy_colour(colours, m), lw=1.5)
            ax.fill(angles + angles[:1], vals + vals[:1], alpha=0.12, color=toy_colour(colours, m))
        ax.plot(np.linspace(0, 2 * np.pi, 181), [CHANCE] * 181, ls="--", lw=0.8, color="k")
        ax.set_xticks(angles, [label for label, _, _ in SPOKES], fontsize=8)
        ax.set_ylim(0, 1)
        gap, labelled = radar_label_place(polygons or [[0.0] * len(SPOKES)])
        between = np.degrees(angles[gap] + np.pi / len(angles))
        ring_labels = [f"{100 * t:g}%" if t in labelled else "" for t in RADAR_TICKS]
        ax.set_rgrids(RADAR_TICKS, ring_labels, angle=between, fontsize=6, color="#555555")
        what = "toy: mean over chains" if source == "toy" else f"paper: Table 3 ({NOT_PRINTED})"
        if not polygons:
            what += "\n(no value yet)"
        rings = ", ".join(f"{100 * t:g}" for t in RADAR_TICKS)
        ax.set_title(f"{what}\none scale on every spoke: rings at {rings} %, outer circle 100 %", fontsize=9,
                     pad=18)
    handles = [Line2D([], [], color=toy_colour(colours, m), label=series_label(methods, m))
               for m in F3_SERIES]
    handles.append(Line2D([], [], color="k", ls="--", lw=0.8, label="chance (50 %)"))
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8, frameon=False)
    return fig
