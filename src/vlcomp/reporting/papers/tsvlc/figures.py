"""TSVLC-F3 (Fig. 3, CC3M fine-tuning, detailed) and TSVLC-F4 (Fig. 4, CC3M from scratch, detailed): radars over
the 7 Attribute / Relation subtypes.

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
SERIES_LABEL = {"tsvlc_combined": "RB+LLM Negs+Pos (Combined)",
                "tsvlc_scratch_combined": "Scratch: RB+LLM Negs+Pos (Combined)"}
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


F4_SERIES = ("tsvlc_scratch_clip", "tsvlc_scratch_rbllm", "tsvlc_scratch_combined")
"""Fig. 4's series: CLIP, RB+LLM Negs and RB+LLM Negs+Pos, all trained from scratch (the catalog: the B/32 RB+LLM
from-scratch model appears in no table; here it is ``tsvlc_scratch_rbllm``)."""
F4_NOT_PRINTED = "Fig. 4: no value printed anywhere in the paper"


def _panel(ax, angles: list[float], series: list[tuple[str, list[float]]], colour, title: str) -> None:
    polygons = []
    for m, vals in series:
        if all(math.isnan(v) for v in vals):
            continue
        polygons.append(vals)
        ax.plot(angles + angles[:1], vals + vals[:1], color=colour(m), lw=1.5)
        ax.fill(angles + angles[:1], vals + vals[:1], alpha=0.12, color=colour(m))
    ax.plot(np.linspace(0, 2 * np.pi, 181), [CHANCE] * 181, ls="--", lw=0.8, color="k")
    ax.set_xticks(angles, [label for label, _, _ in SPOKES], fontsize=8)
    ax.set_ylim(0, 1)
    gap, labelled = radar_label_place(polygons or [[0.0] * len(SPOKES)])
    between = np.degrees(angles[gap] + np.pi / len(angles))
    ring_labels = [f"{100 * t:g}%" if t in labelled else "" for t in RADAR_TICKS]
    ax.set_rgrids(RADAR_TICKS, ring_labels, angle=between, fontsize=6, color="#555555")
    if not polygons:
        title += "\n(no value yet)"
    rings = ", ".join(f"{100 * t:g}" for t in RADAR_TICKS)
    ax.set_title(f"{title}\none scale on every spoke: rings at {rings} %, outer circle 100 %", fontsize=9, pad=18)


def _radar(summ: pd.DataFrame, methods: Methods, order: tuple[str, ...], panels: list[tuple[str, bool]]
           ) -> plt.Figure:
    """Polar panels on one shared 0-100 % scale: per panel (title, toy?), the toy chain means of ``order`` or
    the paper's printed values of its methods."""
    angles = np.linspace(0, 2 * np.pi, len(SPOKES), endpoint=False).tolist()
    colours = Methods((BASE_METHOD, *[m for m in order if m != BASE_METHOD]), methods.labels)
    fig, axs = plt.subplots(1, len(panels), figsize=(6 * len(panels), 6), subplot_kw={"polar": True})
    for ax, (title, toy) in zip(np.atleast_1d(axs), panels, strict=True):
        series = [(m, toy_values(summ, m) if toy else paper_values(m)) for m in order]
        _panel(ax, angles, series, lambda m: toy_colour(colours, m), title)
    handles = [Line2D([], [], color=toy_colour(colours, m), label=series_label(methods, m)) for m in order]
    handles.append(Line2D([], [], color="k", ls="--", lw=0.8, label="chance (50 %)"))
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8, frameon=False)
    return fig


def figure3(summ: pd.DataFrame, methods: Methods) -> plt.Figure:
    """TSVLC-F3: two polar panels on one shared 0-100 % scale (toy chain means; the paper's printed
    values)."""
    return _radar(summ, methods, F3_SERIES, [("toy: mean over chains", True),
                                             (f"paper: Table 3 ({NOT_PRINTED})", False)])


def figure4(summ: pd.DataFrame, methods: Methods) -> plt.Figure:
    """TSVLC-F4: the from-scratch runs' 7 subtypes on the same shared scale; one toy panel (the paper prints no
    value of Fig. 4, so no paper panel is drawn)."""
    return _radar(summ, methods, F4_SERIES, [("toy: from scratch on the cc3m twin (chain b0)", True)])
